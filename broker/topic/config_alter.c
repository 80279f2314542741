/*
 * AlterConfigs and IncrementalAlterConfigs on topics (config_alter.h): every op is computed and
 * checked against the topic-config policy before any is applied, so a refused request changes
 * nothing; and the answer for broker resources, which never change at run time (under the
 * serverless policy, MSK Serverless's CLUSTER_AUTHORIZATION_FAILED).
 */
#include "config_alter.h"

#include <stdlib.h>
#include <string.h>

#include "kp_mem.h"
#include "log.h"
#include "topic.h"
#include "topic_config.h"

/* List values (cleanup.policy) for APPEND / SUBTRACT. */
static char *list_edit(const char *cur, kp_str item, bool add) {
    size_t cap = strlen(cur) + (size_t)item.len + 2;
    char *out = xcalloc(1, cap);
    bool present = false;
    for (const char *p = cur; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool same = len == (size_t)item.len && memcmp(p, item.p, len) == 0;
        present |= same;
        if (len && !(same && !add)) {
            if (*out) strcat(out, ",");
            strncat(out, p, len);
        }
        p = comma ? comma + 1 : p + len;
    }
    if (add && !present) {
        if (*out) strcat(out, ",");
        strncat(out, item.p, (size_t)item.len);
    }
    return out;
}

int16_t alter_topic_configs(srv *s, req *r, kp_str name, const alter_op *ops, int32_t n, bool replace_all,
                            bool validate_only, kp_str *msg) {
    topic *t = name.len > 0 ? topic_find(s, name.p, (size_t)name.len) : NULL;
    if (!t) {
        *msg = req_strf(r, "Topic '%.*s' does not exist.", name.len > 0 ? name.len : 0, name.p);
        req_log_refusal(r, KERR_UNKNOWN_TOPIC_OR_PARTITION, "%.*s", msg->len, msg->p);
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    /* the values each op would set, computed and checked before anything changes */
    char **vals = xcalloc((size_t)n + 1, sizeof(char *));
    int16_t code = 0;
    char why[768];
    for (int32_t i = 0; i < n && !code; i++) {
        char *key = kp_str_dup(ops[i].key);
        if (!key) {
            code = KERR_INVALID_REQUEST;
            snprintf(why, sizeof why, "Null config name");
            break;
        }
        switch (ops[i].op) {
        case ALTER_SET:
            vals[i] = kp_str_dup(ops[i].value);
            if (!vals[i]) {
                code = KERR_INVALID_REQUEST;
                snprintf(why, sizeof why, "Null value not supported for : %s", key);
            }
            break;
        case ALTER_DELETE: break;
        case ALTER_APPEND:
        case ALTER_SUBTRACT: {
            bool d;
            if (tcfg_type(key) != 7) {
                code = KERR_INVALID_CONFIG;
                snprintf(why, sizeof why, "Config value append is not allowed for config key: %s", key);
                break;
            }
            const char *cur = topic_config_value(s, t, key, &d);
            vals[i] = list_edit(cur ? cur : "", ops[i].value.len >= 0 ? ops[i].value : kp_str_c(""),
                                ops[i].op == ALTER_APPEND);
            break;
        }
        default:
            code = KERR_INVALID_REQUEST;
            snprintf(why, sizeof why, "Unknown config operation %d for %s", ops[i].op, key);
        }
        if (!code) code = tcfg_check(s, key, vals[i], false, why, sizeof why);
        free(key);
    }
    if (!code && !validate_only) {
        if (replace_all)
            while (t->noverrides) {
                char *key = xstrdup(t->overrides[0].key);
                if (topic_set_config(s, t, key, NULL) != 0) code = KERR_KAFKA_STORAGE_ERROR;
                free(key);
                if (code) break;
            }
        for (int32_t i = 0; i < n && !code; i++) {
            char *key = kp_str_dup(ops[i].key);
            if (topic_set_config(s, t, key, vals[i]) != 0) {
                code = KERR_KAFKA_STORAGE_ERROR;
                snprintf(why, sizeof why, "storing config %s failed: %s", key, stor_errmsg(s->st));
            } else {
                log_info("topic %s: %s %s%s", t->name, key, vals[i] ? "= " : "reset to default", vals[i] ? vals[i] : "");
            }
            free(key);
        }
    }
    for (int32_t i = 0; i < n; i++) free(vals[i]);
    free(vals);
    if (code) {
        *msg = req_strf(r, "%s", why);
        req_log_refusal(r, code, "topic '%s': %s", t->name, why);
    }
    return code;
}

int16_t alter_broker_configs(srv *s, req *r, kp_str name, kp_str *msg) {
    if (s->cfg->topic_config_policy == TOPIC_POLICY_SERVERLESS) {
        *msg = kp_str_c("Cluster authorization failed.");
        req_log_refusal(r, KERR_CLUSTER_AUTHORIZATION_FAILED,
                        "broker %.*s: MSK Serverless does not let clients change broker configurations",
                        name.len > 0 ? name.len : 0, name.p);
        return KERR_CLUSTER_AUTHORIZATION_FAILED;
    }
    *msg = kp_str_c("mskmock broker configs are set at start-up (properties file, MSKMOCK_* variables)");
    req_log_refusal(r, KERR_INVALID_REQUEST, "broker %.*s: broker configs cannot change at run time",
                    name.len > 0 ? name.len : 0, name.p);
    return KERR_INVALID_REQUEST;
}
