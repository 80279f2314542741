/*
 * IAM policy documents (JSON) as the identities file carries them: parsed by iam_policy_add,
 * and when accepted evaluated for every action on ARNs built from the input's own strings, so
 * the wildcard matcher meets patterns and texts of every shape.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "iam/iam_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
    if (!doc) return 0;
    iam_policy *p = iam_policy_new();
    char err[512];
    if (iam_policy_add(p, doc, "fuzz", err, sizeof err) == 0) {
        static const char *const arns[] = {
            "arn:aws:kafka:us-east-1:123456789012:cluster/mskmock/0b5e2f4c-8d7a-4e61-9c3b-2a1f0e9d8c7b-s1",
            "arn:aws:kafka:us-east-1:123456789012:topic/mskmock/0b5e2f4c-8d7a-4e61-9c3b-2a1f0e9d8c7b-s1/orders",
            "arn:aws:kafka:us-east-1:123456789012:group/mskmock/0b5e2f4c-8d7a-4e61-9c3b-2a1f0e9d8c7b-s1/g-1",
            "arn:aws:kafka:us-east-1:123456789012:topic/mskmock/0b5e2f4c-8d7a-4e61-9c3b-2a1f0e9d8c7b-s1/",
        };
        for (int a = 0; a < IAM_ACTION_COUNT; a++)
            for (size_t i = 0; i < sizeof arns / sizeof *arns; i++) {
                iam_policy_eval(p, (iam_action)a, arns[i]);
                iam_policy_eval_any(p, (iam_action)a, arns[3]);
            }
    }
    iam_policy_free(p);
    json_decref(doc);
    /* the matcher alone: the input split at its first NUL into pattern and text */
    const uint8_t *nul = memchr(data, 0, size);
    if (nul && size < 4096) {
        char *pat = strndup((const char *)data, (size_t)(nul - data));
        char *txt = strndup((const char *)nul + 1, size - (size_t)(nul - data) - 1);
        if (pat && txt) {
            iam_glob(pat, txt, false);
            iam_glob(pat, txt, true);
        }
        free(pat);
        free(txt);
    }
    return 0;
}
