/*
 * authzbench: decisions per second of the IAM policy evaluator (broker/iam/iam_policy.c) on
 * a policy file, over a mix of requests: allowed and denied topics, groups, the cluster, and
 * an explicit Deny. Single thread, as on the broker's loop.
 *
 *   authzbench [POLICY.json] [--seconds S]      default bench/authz/policy.json, 2 s
 *
 * Prints one line per request kind, then one JSON line starting with '{'.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iam/iam_policy.h"

#define ARN "arn:aws:kafka:us-east-1:123456789012:"
#define SUFFIX "mskmock/0b5e2f4c-8d7a-4e61-9c3b-2a1f0e9d8c7b-s1"

typedef struct probe {
    const char *what;
    iam_action action;
    const char *arn;
} probe;

static const probe probes[] = {
    {"produce, allowed (last statement)", IAM_WRITE_DATA, ARN "topic/" SUFFIX "/bench-p8-12345"},
    {"fetch, allowed (team statement)", IAM_READ_DATA, ARN "topic/" SUFFIX "/orders-eu"},
    {"produce, no statement", IAM_WRITE_DATA, ARN "topic/" SUFFIX "/unlisted-topic"},
    {"produce, explicit deny", IAM_WRITE_DATA, ARN "topic/" SUFFIX "/secret-keys"},
    {"join group", IAM_ALTER_GROUP, ARN "group/" SUFFIX "/mskbench-42"},
    {"idempotent producer", IAM_WRITE_DATA_IDEMPOTENTLY, ARN "cluster/" SUFFIX},
};
#define NPROBES (sizeof probes / sizeof probes[0])

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    const char *file = "bench/authz/policy.json";
    double seconds = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else file = argv[i];
    }
    json_error_t je;
    json_t *doc = json_load_file(file, 0, &je);
    if (!doc) {
        fprintf(stderr, "authzbench: %s: line %d: %s\n", file, je.line, je.text);
        return 2;
    }
    iam_policy *p = iam_policy_new();
    char err[512];
    if (!p || iam_policy_add(p, doc, file, err, sizeof err) != 0) {
        fprintf(stderr, "authzbench: %s\n", err);
        return 2;
    }
    json_decref(doc);
    printf("policy %s: %zu statements\n", file, iam_policy_statement_count(p));
    double total_rate = 0;
    unsigned sink = 0;
    for (size_t k = 0; k < NPROBES; k++) {
        uint64_t n = 0;
        double t0 = now_s(), t;
        do {
            for (int i = 0; i < 1000; i++) sink += (unsigned)iam_policy_eval(p, probes[k].action, probes[k].arn).effect;
            n += 1000;
        } while ((t = now_s()) - t0 < seconds / NPROBES);
        double rate = (double)n / (t - t0);
        total_rate += rate;
        iam_decision d = iam_policy_eval(p, probes[k].action, probes[k].arn);
        printf("  %-36s %10.0f decisions/s  (%s%s%s)\n", probes[k].what, rate,
               d.effect == IAM_ALLOW ? "allow" : d.effect == IAM_EXPLICIT_DENY ? "deny" : "implicit deny",
               d.by ? " by " : "", d.by ? d.by : "");
    }
    printf("{\"statements\":%zu,\"mean_decisions_per_s\":%.0f,\"sink\":%u}\n", iam_policy_statement_count(p),
           total_rate / NPROBES, sink & 1);
    iam_policy_free(p);
    return 0;
}
