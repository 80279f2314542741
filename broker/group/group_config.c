/*
 * Group configs (KIP-848): the per-group settings DescribeConfigs, IncrementalAlterConfigs and
 * AlterConfigs reach through GROUP resources (type 32), as Apache Kafka 4.0 keeps them
 * (group-coordinator's GroupConfig.java and GroupConfigManager.java; core's ConfigHelper.scala
 * for DescribeConfigs; the KRaft controller's ConfigurationControlManager and
 * ControllerConfigurationValidator for the alters).
 *
 * The set is Kafka 4.0's, the release whose API ranges the kafka profile serves (4.1 added
 * share.isolation.level and the streams.* configs with the streams group protocol, which
 * mskmock does not serve). Any group id has them, whether or not the group exists: its
 * overrides, else the broker's defaults. Overrides are stored by group id and outlive the
 * group (Kafka 4.0 keeps them across DeleteGroups); a reset of the admin API clears them.
 *
 * consumer.* take their defaults and bounds from mskmock's group.consumer.* keys (Kafka's
 * broker keys of the same names). share.* keep Kafka's broker defaults as constants: mskmock
 * serves no share groups (KIP-932), so nothing reads them but DescribeConfigs.
 *
 * Nothing here reads them yet: a KIP-848 coordinator would, through grp_consumer_settings_of.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"

enum { T_INT = 3, T_STRING = 2 }; /* DescribeConfigs' config_type ids */

typedef struct gcfg_def {
    const char *name;
    int8_t type;
    int32_t at_least; /* the ConfigDef range of an INT */
    const char *doc;
} gcfg_def;

/* In GroupConfig's definition order: the order Kafka parses and so reports a bad value in. */
static const gcfg_def defs[] = {
    {"consumer.session.timeout.ms", T_INT, 1, "The timeout to detect client failures when using the consumer group protocol."},
    {"consumer.heartbeat.interval.ms", T_INT, 1, "The heartbeat interval given to the members of a consumer group."},
    {"share.session.timeout.ms", T_INT, 1, "The timeout to detect client failures when using the share group protocol."},
    {"share.heartbeat.interval.ms", T_INT, 1, "The heartbeat interval given to the members of a share group."},
    {"share.record.lock.duration.ms", T_INT, 1000, "The record acquisition lock duration in milliseconds for share groups."},
    {"share.auto.offset.reset", T_STRING, 0, "The strategy to initialize the share-partition start offset."},
};
#define NDEFS (sizeof defs / sizeof defs[0])
enum { C_SESSION, C_HEARTBEAT, S_SESSION, S_HEARTBEAT, S_LOCK, S_RESET };

/* Kafka's broker defaults for share groups (GroupCoordinatorConfig, ShareGroupConfig): value, min, max. */
static const int64_t share_bounds[3][3] = {
    [0] = {45000, 45000, 60000}, /* group.share.session.timeout.ms, .min, .max */
    [1] = {5000, 5000, 15000},   /* group.share.heartbeat.interval.ms */
    [2] = {30000, 15000, 60000}, /* group.share.record.lock.duration.ms */
};
static const char *const share_bound_keys[3][2] = {
    {"group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
    {"group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
    {"group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
};

typedef struct gcfg_override {
    char *key, *value;
} gcfg_override;

/* One group id's overrides (srv.group_configs, a list: few groups ever get any). */
struct grp_config_set {
    char *group_id;
    gcfg_override *ov;
    int n;
    struct grp_config_set *next;
};

static int def_index(const char *key) {
    for (size_t i = 0; i < NDEFS; i++)
        if (strcmp(defs[i].name, key) == 0) return (int)i;
    return -1;
}

const char *grp_config_name(size_t i) { return i < NDEFS ? defs[i].name : NULL; }

int8_t grp_config_type(const char *key) {
    int i = def_index(key);
    return i < 0 ? 0 : defs[i].type;
}

const char *grp_config_doc(const char *key) {
    int i = def_index(key);
    return i < 0 ? NULL : defs[i].doc;
}

static struct grp_config_set *find_set(const srv *s, const char *id, size_t len) {
    for (struct grp_config_set *g = s->group_configs; g; g = g->next)
        if (strlen(g->group_id) == len && memcmp(g->group_id, id, len) == 0) return g;
    return NULL;
}

static const char *override_of(const struct grp_config_set *g, const char *key) {
    for (int i = 0; g && i < g->n; i++)
        if (strcmp(g->ov[i].key, key) == 0) return g->ov[i].value;
    return NULL;
}

/* The broker's default of config i, as text. */
static const char *default_of(const srv *s, int i, char *buf, size_t n) {
    int64_t v;
    switch (i) {
    case C_SESSION: v = s->cfg->group_consumer_session_timeout_ms; break;
    case C_HEARTBEAT: v = s->cfg->group_consumer_heartbeat_interval_ms; break;
    case S_SESSION: v = share_bounds[0][0]; break;
    case S_HEARTBEAT: v = share_bounds[1][0]; break;
    case S_LOCK: v = share_bounds[2][0]; break;
    default: return "latest"; /* share.auto.offset.reset */
    }
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

const char *grp_config_value(const srv *s, const char *group_id, size_t len, const char *key, bool *is_default,
                             char *buf, size_t n) {
    int i = def_index(key);
    if (i < 0) return NULL;
    const char *v = override_of(find_set(s, group_id, len), key);
    *is_default = v == NULL;
    return v ? v : default_of(s, i, buf, n);
}

grp_consumer_settings grp_consumer_settings_of(const srv *s, const char *group_id, size_t len) {
    const struct grp_config_set *g = find_set(s, group_id, len);
    const char *session = override_of(g, defs[C_SESSION].name), *hb = override_of(g, defs[C_HEARTBEAT].name);
    /* overrides were validated as ints within the broker's bounds when they were set */
    return (grp_consumer_settings){
        session ? (int32_t)strtol(session, NULL, 10) : (int32_t)s->cfg->group_consumer_session_timeout_ms,
        hb ? (int32_t)strtol(hb, NULL, 10) : (int32_t)s->cfg->group_consumer_heartbeat_interval_ms};
}

void grp_config_overrides(const srv *s, const char *group_id, void (*fn)(void *ctx, const char *key, const char *value),
                          void *ctx) {
    const struct grp_config_set *g = find_set(s, group_id, strlen(group_id));
    for (int i = 0; g && i < g->n; i++) fn(ctx, g->ov[i].key, g->ov[i].value);
}

/* ---- in memory ---- */

static void set_override(srv *s, const char *group_id, const char *key, const char *value) {
    struct grp_config_set *g = find_set(s, group_id, strlen(group_id));
    if (!g) {
        if (!value) return;
        g = xcalloc(1, sizeof *g);
        g->group_id = xstrdup(group_id);
        g->next = s->group_configs;
        s->group_configs = g;
    }
    for (int i = 0; i < g->n; i++) {
        if (strcmp(g->ov[i].key, key) != 0) continue;
        free(g->ov[i].value);
        if (value) {
            g->ov[i].value = xstrdup(value);
        } else {
            free(g->ov[i].key);
            g->ov[i] = g->ov[--g->n];
        }
        return;
    }
    if (!value) return;
    gcfg_override *o = xrealloc(g->ov, sizeof *o * (size_t)(g->n + 1));
    g->ov = o;
    g->ov[g->n++] = (gcfg_override){xstrdup(key), xstrdup(value)};
}

static void free_set(struct grp_config_set *g) {
    for (int i = 0; i < g->n; i++) {
        free(g->ov[i].key);
        free(g->ov[i].value);
    }
    free(g->ov);
    free(g->group_id);
    free(g);
}

void grp_configs_free(srv *s) {
    while (s->group_configs) {
        struct grp_config_set *g = s->group_configs;
        s->group_configs = g->next;
        free_set(g);
    }
}

static void load_one(void *ctx, const char *group_id, const char *key, const char *value) {
    set_override(ctx, group_id, key, value);
}

int grp_configs_load(srv *s) { return stor_group_configs_load(s->st, load_one, s); }

int grp_configs_clear(srv *s) {
    if (stor_group_configs_clear(s->st) != 0) return -1;
    grp_configs_free(s);
    return 0;
}

/* ---- validation: GroupConfig.validate on the group's configs as they would be ---- */

/* Java's Integer.parseInt on the trimmed text (ConfigDef.parseType). */
static bool parse_int(const char *v, int64_t *out) {
    while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') v++;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') end++;
    if (errno || end == v || *end || x < INT32_MIN || x > INT32_MAX) return false;
    *out = x;
    return true;
}

/* vals[i]: config i's value as it would be (NULL: the default). 0, or INVALID_CONFIG with Kafka's message. */
static int16_t validate(const srv *s, const char *const vals[NDEFS], char *why, size_t n) {
    int64_t num[NDEFS] = {0};
    char buf[32];
    for (size_t i = 0; i < NDEFS; i++) {
        const char *v = vals[i] ? vals[i] : default_of(s, (int)i, buf, sizeof buf);
        if (defs[i].type == T_STRING) {
            if (strcmp(v, "latest") != 0 && strcmp(v, "earliest") != 0) {
                snprintf(why, n, "Invalid value %s for configuration %s: String must be one of: latest, earliest", v,
                         defs[i].name);
                return KERR_INVALID_CONFIG;
            }
        } else if (!parse_int(v, &num[i])) {
            snprintf(why, n, "Invalid value %s for configuration %s: Not a number of type INT", v, defs[i].name);
            return KERR_INVALID_CONFIG;
        } else if (num[i] < defs[i].at_least) {
            snprintf(why, n, "Invalid value %s for configuration %s: Value must be at least %d", v, defs[i].name,
                     defs[i].at_least);
            return KERR_INVALID_CONFIG;
        }
    }
    const config *c = s->cfg;
    const struct {
        int i;
        int64_t min, max;
        const char *min_key, *max_key;
    } bounds[] = {
        {C_HEARTBEAT, c->group_consumer_min_heartbeat_interval_ms, c->group_consumer_max_heartbeat_interval_ms,
         "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
        {C_SESSION, c->group_consumer_min_session_timeout_ms, c->group_consumer_max_session_timeout_ms,
         "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
        {S_HEARTBEAT, share_bounds[1][1], share_bounds[1][2], share_bound_keys[1][0], share_bound_keys[1][1]},
        {S_SESSION, share_bounds[0][1], share_bounds[0][2], share_bound_keys[0][0], share_bound_keys[0][1]},
        {S_LOCK, share_bounds[2][1], share_bounds[2][2], share_bound_keys[2][0], share_bound_keys[2][1]},
    };
    for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
        int i = bounds[k].i;
        if (num[i] < bounds[k].min) {
            snprintf(why, n, "%s must be greater than or equal to %s", defs[i].name, bounds[k].min_key);
            return KERR_INVALID_CONFIG;
        }
        if (num[i] > bounds[k].max) {
            snprintf(why, n, "%s must be less than or equal to %s", defs[i].name, bounds[k].max_key);
            return KERR_INVALID_CONFIG;
        }
    }
    if (num[C_SESSION] <= num[C_HEARTBEAT]) {
        snprintf(why, n, "%s must be greater than %s", defs[C_SESSION].name, defs[C_HEARTBEAT].name);
        return KERR_INVALID_CONFIG;
    }
    if (num[S_SESSION] <= num[S_HEARTBEAT]) {
        snprintf(why, n, "%s must be greater than %s", defs[S_SESSION].name, defs[S_HEARTBEAT].name);
        return KERR_INVALID_CONFIG;
    }
    return 0;
}

/* ---- alter ---- */

/*
 * The group's values after ops, into vals (strings owned by the request): 0, or the error of
 * the first op Kafka would refuse before validating (a name twice, a null name or SET value,
 * an unknown name, APPEND/SUBTRACT on a config that is not a LIST, which none is).
 */
static int16_t apply_ops(srv *s, req *r, const struct grp_config_set *g, const grp_config_op *ops, int32_t n,
                         bool replace, const char *vals[NDEFS], char *why, size_t len) {
    for (size_t i = 0; i < NDEFS; i++) vals[i] = replace ? NULL : override_of(g, defs[i].name);
    for (int32_t k = 0; k < n; k++) {
        if (ops[k].key.len < 0) {
            snprintf(why, len, "Null config name");
            return KERR_INVALID_REQUEST;
        }
        for (int32_t j = 0; j < k; j++)
            if (ops[j].key.len == ops[k].key.len && memcmp(ops[j].key.p, ops[k].key.p, (size_t)ops[k].key.len) == 0) {
                snprintf(why, len, "Error due to duplicate config keys");
                return KERR_INVALID_REQUEST;
            }
    }
    if (replace) { /* AlterConfigs: every null value named at once, before any name is looked at */
        char nulls[256] = "";
        size_t used = 0;
        for (int32_t k = 0; k < n && used < sizeof nulls; k++)
            if (ops[k].value.len < 0)
                used += (size_t)snprintf(nulls + used, sizeof nulls - used, "%s%.*s", used ? "," : "", ops[k].key.len,
                                         ops[k].key.p);
        if (used) {
            snprintf(why, len, "Null value not supported for group configs: %s", nulls);
            return KERR_INVALID_CONFIG;
        }
    }
    for (int32_t k = 0; k < n; k++) {
        const char *key = req_strf(r, "%.*s", ops[k].key.len, ops[k].key.p).p;
        const char *value = ops[k].value.len < 0 ? NULL : req_strf(r, "%.*s", ops[k].value.len, ops[k].value.p).p;
        int i = def_index(key);
        if (!replace && (ops[k].op == GRP_CONFIG_APPEND || ops[k].op == GRP_CONFIG_SUBTRACT)) {
            snprintf(why, len, "Can't %s to key %s because its type is not LIST.",
                     ops[k].op == GRP_CONFIG_APPEND ? "APPEND" : "SUBTRACT", key);
            return KERR_INVALID_CONFIG;
        }
        if (!replace && ops[k].op != GRP_CONFIG_SET && ops[k].op != GRP_CONFIG_DELETE) {
            snprintf(why, len, "Unknown config operation %d for %s", ops[k].op, key);
            return KERR_INVALID_REQUEST;
        }
        if (!replace && ops[k].op == GRP_CONFIG_SET && !value) {
            snprintf(why, len, "Null value not supported for : %s", key);
            return KERR_INVALID_REQUEST;
        }
        if (i < 0) {
            /* deleting a name Kafka does not know leaves nothing behind to refuse */
            if (!replace && ops[k].op == GRP_CONFIG_DELETE) continue;
            snprintf(why, len, "Unknown group config name: %s", key);
            return KERR_INVALID_CONFIG;
        }
        vals[i] = !replace && ops[k].op == GRP_CONFIG_DELETE ? NULL : value;
    }
    (void)s;
    return 0;
}

int16_t grp_config_alter(srv *s, req *r, kp_str group_id, const grp_config_op *ops, int32_t n, bool replace,
                         bool validate_only, kp_str *msg) {
    char why[512];
    int16_t code = 0;
    const char *vals[NDEFS];
    if (group_id.len <= 0) {
        snprintf(why, sizeof why, "Default group resources are not allowed.");
        code = KERR_INVALID_REQUEST;
    } else {
        const struct grp_config_set *g = find_set(s, group_id.p, (size_t)group_id.len);
        code = apply_ops(s, r, g, ops, n, replace, vals, why, sizeof why);
        if (!code) code = validate(s, vals, why, sizeof why);
    }
    if (code) {
        *msg = req_strf(r, "%s", why);
        req_log_refusal(r, code, "group '%.*s' configs: %s", group_id.len > 0 ? group_id.len : 0, group_id.p, why);
        return code;
    }
    if (validate_only) return 0;
    char *id = kp_str_dup(group_id);
    for (size_t i = 0; i < NDEFS && !code; i++) {
        const char *now = override_of(find_set(s, id, strlen(id)), defs[i].name);
        if ((now == NULL) == (vals[i] == NULL) && (!now || strcmp(now, vals[i]) == 0)) continue;
        char *want = vals[i] ? xstrdup(vals[i]) : NULL; /* vals may point into the override set_override frees */
        if (stor_group_config_set(s->st, id, defs[i].name, want) != 0) {
            snprintf(why, sizeof why, "storing %s failed: %s", defs[i].name, stor_errmsg(s->st));
            code = KERR_KAFKA_STORAGE_ERROR;
        } else {
            set_override(s, id, defs[i].name, want);
            log_info("group %s: %s %s%s", id, defs[i].name, want ? "= " : "reset to default", want ? want : "");
        }
        free(want);
    }
    if (code) {
        *msg = req_strf(r, "%s", why);
        req_log_refusal(r, code, "group '%s' configs: %s", id, why);
    }
    free(id);
    return code;
}
