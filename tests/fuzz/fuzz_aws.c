/*
 * The AWS APIs' routes after verification (broker/aws/: kafka_api.c's paths, query strings and
 * ARNs, sts.c's form bodies and query strings, the errors of both protocols with their escaping),
 * on a broker state with no storage: the configured cluster of the profile the first byte picks,
 * two synthetic brokers, in a fleet whose cluster start hook gives a created cluster a state of the
 * same kind (so CreateClusterV2's request checks run whole, and its storage step then fails and
 * takes the cluster down again). Every request gets an answer with a status between 200 and 599
 * and, for a refusal, a body and a log detail; nothing crashes. SigV4 itself is fuzz_sasl's and
 * the unit tests'.
 *
 * Input: byte 0: profile (bits 0-1), service (bit 2: STS), caller with policies (bit 3); then
 * "METHOD TARGET\n", header lines "name: value\n" up to an empty line, then the body.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "aws/aws_call.h"
#include "config.h"
#include "fleet.h"
#include "iam/iam_policy.h"
#include "iam/iam_store.h"

#define CHECK(c) \
    do {         \
        if (!(c)) abort(); \
    } while (0)

static iam_policy *policy(void) {
    static iam_policy *p;
    if (p) return p;
    p = iam_policy_new();
    json_t *doc = json_loads("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": [\"kafka:List*\", \"kafka:Describe*\"],"
                             " \"Resource\": \"*\"}, {\"Effect\": \"Deny\", \"Action\": \"sts:AssumeRole\", \"Resource\": \"*\"}]}",
                             0, NULL);
    char err[256];
    CHECK(doc && iam_policy_add(p, doc, "fuzz.json", err, sizeof err) == 0);
    json_decref(doc);
    return p;
}

static srv created;

static int start_cluster(fleet *f, cluster *c, char *err, size_t n) {
    (void)f, (void)err, (void)n;
    created = (srv){.cfg = f->list[0]->s->cfg, .nnodes = 1, .fleet = f};
    c->s = &created;
    return 0;
}

static void stop_cluster(fleet *f, cluster *c) {
    (void)f;
    c->s = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || size > 65536) return 0;
    static config cfg;
    static srv s;
    cfg_defaults(&cfg, (cfg_profile)(data[0] % 3));
    memset(&s, 0, sizeof s);
    s.cfg = &cfg;
    s.nnodes = 2;
    for (int i = 0; i < 2; i++) {
        s.nodes[i].id = i + 1;
        s.nodes[i].ports[LSN_PLAINTEXT] = 9092 + i;
        s.nodes[i].ports[LSN_IAM] = 9098 + i;
    }
    fleet f = {.start = start_cluster, .stop = stop_cluster};
    cluster *primary = calloc(1, sizeof *primary);
    snprintf(primary->arn, sizeof primary->arn, "arn:aws:kafka:us-east-1:123456789012:cluster/mskmock/%s",
             "00000000-0000-4000-8000-000000000000-s1");
    snprintf(primary->name, sizeof primary->name, "mskmock");
    primary->serverless = cfg.profile == PROFILE_SERVERLESS;
    primary->brokers = 2, primary->iam = primary->unauthenticated = primary->primary = true;
    primary->s = &s;
    fleet_add(&f, primary);
    s.fleet = &f;

    /* the request: its text split into lines, NUL-terminated in a copy */
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *line = text, *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    char *sp = strchr(line, ' ');
    const char *method = "GET", *target = line;
    if (sp) *sp = '\0', method = line, target = sp + 1;
    char path[2048], query[2048];
    const char *q = strchr(target, '?');
    size_t pl = q ? (size_t)(q - target) : strlen(target);
    if (pl >= sizeof path) pl = sizeof path - 1;
    memcpy(path, target, pl);
    path[pl] = '\0';
    snprintf(query, sizeof query, "%s", q ? q + 1 : "");
    http_header hs[HTTP_MAX_HEADERS];
    size_t nh = 0;
    char *p = nl ? nl + 1 : text + strlen(text);
    while (*p && *p != '\n' && nh < HTTP_MAX_HEADERS) {
        char *e = strchr(p, '\n');
        if (e) *e = '\0';
        char *colon = strchr(p, ':');
        if (colon) {
            *colon = '\0';
            hs[nh++] = (http_header){p, colon + 1};
        }
        p = e ? e + 1 : p + strlen(p);
    }
    if (*p == '\n') p++;
    const char *body = p;

    http_req rq = {.method = method, .path = path, .raw_path = path, .query = q ? query : NULL, .body = body,
                   .body_len = strlen(body), .headers = hs, .n_headers = nh, .peer = "127.0.0.1:1"};
    http_resp rs = {.status = 200};
    iam_cred cred = {.access_key_id = "AKIDFUZZ", .secret_access_key = "x", .expiry_ms = -1, .superseded_ms = -1,
                     .principal = "arn:aws:iam::123456789012:user/fuzz",
                     .policy = (data[0] & 8) ? policy() : NULL};
    aws_call c = {.s = &s, .rq = &rq, .rs = &rs, .cred = &cred, .principal = cred.principal,
                  .account = "123456789012", .region = "us-east-1", .request_id = "00000000-0000-4000-8000-000000000000",
                  .started_ms = 1800000000000LL};
    if (data[0] & 4)
        sts_route(&c);
    else
        kafka_api_route(&c);
    CHECK(rs.status >= 200 && rs.status < 600);
    CHECK(rs.body ? rs.len == strlen(rs.body) : rs.len == 0);
    if (rs.status >= 400) CHECK(rs.body && rs.detail[0]);
    CHECK(memchr(rs.detail, '\0', sizeof rs.detail));
    CHECK(f.n == 1); /* nothing of a refused (or unstored) cluster is left */
    free(rs.body);
    free(text);
    fleet_free(&f);
    cfg_free(&cfg);
    return 0;
}
