/*
 * topics.create: topics a deployment wants to exist from its first start, the way compose files
 * for Kafka images say it (bitnami's and wurstmeister's KAFKA_CREATE_TOPICS, "name:partitions:
 * replicas[:cleanup policy]"), so that a shell user or a compose service needs no admin client
 * before producing. Applied at every start: a topic that exists is left as it is (its partitions
 * or configs are not changed behind a client's back), a missing one is created through the same
 * checks as CreateTopics, so the serverless profile refuses there what MSK Serverless refuses.
 *
 * Grammar, entries separated by commas, fields by colons:
 *   name[:partitions[:replication factor][:compact|delete][:key=value]...]
 * An empty or absent partitions field takes num.partitions; a third field that is a number is
 * the replication factor (the KAFKA_CREATE_TOPICS form); compact or delete sets cleanup.policy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp_errors.h"
#include "kp_mem.h"
#include "log.h"
#include "topic.h"

#define MAX_FIELDS 32

/* A whole number, or -1 for an empty field; false when it is neither. */
static bool number(const char *f, int64_t max, int64_t *out) {
    if (!*f) {
        *out = -1;
        return true;
    }
    char *end;
    long long v = strtoll(f, &end, 10);
    if (*end || v < 1 || v > max) return false;
    *out = v;
    return true;
}

/* One entry, fields split in place; 0, or -1 with why. */
static int create_entry(srv *s, char *entry, char *why, size_t n) {
    char *fields[MAX_FIELDS];
    int nf = 0;
    for (char *f = entry, *colon; f && nf < MAX_FIELDS; f = colon ? colon + 1 : NULL) {
        colon = strchr(f, ':');
        if (colon) *colon = 0;
        fields[nf++] = f;
    }
    const char *name = fields[0];
    int64_t parts = -1, rf = -1;
    if (nf > 1 && !number(fields[1], INT32_MAX, &parts)) {
        snprintf(why, n, "partitions '%s' is not a positive number", fields[1]);
        return -1;
    }
    topic_override ov[MAX_FIELDS];
    int nov = 0;
    for (int i = 2; i < nf; i++) {
        char *f = fields[i], *eq = strchr(f, '=');
        if (i == 2 && *f >= '0' && *f <= '9') {
            if (!number(f, INT16_MAX, &rf)) {
                snprintf(why, n, "replication factor '%s' is not a positive number", f);
                return -1;
            }
        } else if (!strcmp(f, "compact") || !strcmp(f, "delete")) {
            ov[nov++] = (topic_override){"cleanup.policy", f};
        } else if (eq && eq != f) {
            *eq = 0;
            ov[nov++] = (topic_override){f, eq + 1};
        } else {
            snprintf(why, n, "field '%s' is none of a replication factor, compact, delete or key=value", f);
            return -1;
        }
    }
    if (topic_find(s, name, strlen(name))) {
        log_info("topics.create: topic %s exists; left as it is", name);
        return 0;
    }
    int16_t code;
    char reason[512];
    if (!topic_create_checked(s, name, (int32_t)parts, (int16_t)rf, ov, nov, "topics.create", &code, reason,
                              sizeof reason)) {
        snprintf(why, n, "%s(%d): %s", kp_err_name(code), code, reason);
        return -1;
    }
    return 0;
}

int topic_create_configured(srv *s, char *err, size_t errlen) {
    const char *list = s->cfg->topics_create;
    if (!list || !*list) return 0;
    char *copy = xstrdup(list);
    int rc = 0;
    for (char *e = copy, *comma; e && rc == 0; e = comma ? comma + 1 : NULL) {
        comma = strchr(e, ',');
        if (comma) *comma = 0;
        while (*e == ' ') e++;
        for (char *end = e + strlen(e); end > e && end[-1] == ' ';) *--end = 0;
        if (!*e) continue;
        char entry[1024], why[768];
        snprintf(entry, sizeof entry, "%s", e);
        if (create_entry(s, e, why, sizeof why) != 0) {
            snprintf(err, errlen, "topics.create: entry '%s': %s", entry, why);
            rc = -1;
        }
    }
    free(copy);
    return rc;
}
