/*
 * admin: the server, the route table, the bearer token and health/readiness; see admin.h. The
 * routes themselves live in admin_clusters.c, admin_state.c, admin_iam.c, admin_brokers.c,
 * admin_listeners.c, fault.c and prometheus.c. A cluster's route serves the configured cluster at
 * its path and any cluster under /v1/clusters/{cluster}/ (route_flags).
 */
#include "admin.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_route.h"
#include "clock.h"
#include "fault.h"
#include "fleet.h"
#include "kp_mem.h"
#include "log.h"
#include "metrics.h"
#include "prometheus.h"

#define ADMIN_MAX_BODY (256 * 1024)
#define ADMIN_MAX_CLIENTS 64
#define ADMIN_TIMEOUT_MS 10000

typedef struct admin {
    http_server *http;
    srv *s;
} admin;

static void get_health(admin_call *c) {
    c->rs->quiet = true;
    admin_ok(c, json_pack("{s:s, s:I}", "status", "up", "uptime_ms",
                          (json_int_t)((clk_mono_us() - c->s->started_us) / 1000)));
}

/* Every listener bound and storage open is true once srv_init returned; not while stopping. */
static void get_ready(admin_call *c) {
    c->rs->quiet = true;
    if (c->s->stopping) {
        http_error(c->rs, 503, "Stopping", "the broker is shutting down");
        return;
    }
    admin_ok(c, json_pack("{s:s}", "status", "ready"));
}

/*
 * A route acts on one cluster unless it is the process's (PROCESS): at its path on the configured
 * cluster, and under /v1/clusters/{cluster}/ (its pattern without the leading /v1) on the cluster
 * that names, by its name or ARN: one table, the same handler given that cluster's srv.
 */
enum route_flags {
    OPEN = 1,    /* served without admin.token */
    PROCESS = 2, /* the process's, not a cluster's: only at its own path */
};

typedef struct route {
    const char *method;
    const char *pattern; /* segments; "{}" matches one and is passed in admin_call.args */
    admin_fn fn;
    unsigned flags;      /* route_flags */
} route;

static const route routes[] = {
    {"GET", "/v1/health", get_health, OPEN | PROCESS},
    {"GET", "/v1/ready", get_ready, OPEN | PROCESS},
    {"GET", "/v1/clusters", admin_get_clusters, PROCESS},
    {"GET", "/v1", admin_get_cluster, 0},
    {"GET", "/metrics", metrics_get, 0},
    {"GET", "/v1/topics", admin_get_topics, 0},
    {"GET", "/v1/topics/{}", admin_get_topic, 0},
    {"POST", "/v1/topics", admin_post_topic, 0},
    {"DELETE", "/v1/topics/{}", admin_delete_topic, 0},
    {"GET", "/v1/groups", admin_get_groups, 0},
    {"GET", "/v1/groups/{}", admin_get_group, 0},
    {"GET", "/v1/connections", admin_get_connections, 0},
    {"POST", "/v1/reset", admin_post_reset, 0},
    {"POST", "/v1/compaction", admin_post_compaction, 0},
    {"GET", "/v1/iam", admin_get_iam, PROCESS},
    {"POST", "/v1/iam/roles/{}/rotate", admin_post_iam_rotate, PROCESS},
    {"POST", "/v1/iam/credentials/{}/expire", admin_post_iam_expire, PROCESS},
    {"POST", "/v1/iam/sessions/close", admin_post_iam_close_sessions, 0},
    {"POST", "/v1/iam/reload", admin_post_iam_reload, PROCESS},
    {"GET", "/v1/brokers", admin_get_brokers, 0},
    {"POST", "/v1/brokers/{}/down", admin_post_broker_down, 0},
    {"POST", "/v1/brokers/{}/up", admin_post_broker_up, 0},
    {"POST", "/v1/topics/{}/partitions/{}/leader", admin_post_partition_leader, 0},
    {"GET", "/v1/listeners", admin_get_listeners, 0},
    {"PUT", "/v1/listeners/{}/advertised", admin_put_listener_advertised, 0},
    {"DELETE", "/v1/listeners/{}/advertised", admin_delete_listener_advertised, 0},
    {"GET", "/v1/faults", fault_get_all, 0},
    {"POST", "/v1/faults", fault_post, 0},
    {"DELETE", "/v1/faults", fault_delete_all, 0},
    {"GET", "/v1/faults/{}", fault_get_one, 0},
    {"DELETE", "/v1/faults/{}", fault_delete_one, 0},
};

/* path against pattern, segment by segment; the {} segments land in args. */
static bool match(const char *pattern, const char *path, char args[][256]) {
    int na = 0;
    while (*pattern && *path) {
        if (*pattern != '/' || *path != '/') return false;
        pattern++, path++;
        const char *pe = strchr(pattern, '/'), *qe = strchr(path, '/');
        size_t pl = pe ? (size_t)(pe - pattern) : strlen(pattern), ql = qe ? (size_t)(qe - path) : strlen(path);
        if (pl == 2 && !memcmp(pattern, "{}", 2)) {
            if (!ql || ql >= 256 || na == ADMIN_MAX_ARGS) return false;
            memcpy(args[na], path, ql);
            args[na++][ql] = '\0';
        } else if (pl != ql || memcmp(pattern, path, pl) != 0) {
            return false;
        }
        pattern += pl, path += ql;
    }
    return !*pattern && (!*path || !strcmp(path, "/"));
}

static bool token_ok(const srv *s, const http_req *rq) {
    const char *want = s->cfg->admin_token;
    if (!want || !*want) return true;
    const char *got = rq->authorization;
    if (!got || strncasecmp(got, "Bearer ", 7) != 0) return false;
    got += 7;
    size_t wl = strlen(want), gl = strlen(got);
    return wl == gl && CRYPTO_memcmp(want, got, wl) == 0;
}

#define CLUSTERS "/v1/clusters/"

/* A cluster's route under /v1/clusters/{cluster}: its pattern without the leading /v1 (/metrics as it is). */
static const char *in_cluster(const char *pattern) {
    return !strncmp(pattern, "/v1", 3) && (pattern[3] == '/' || !pattern[3]) ? pattern + 3 : pattern;
}

static void serve(void *ctx, const http_req *rq, http_resp *rs) {
    admin *a = ctx;
    fleet *f = a->s->fleet;
    admin_call c = {.s = a->s, .cluster = f && f->n ? f->list[0] : NULL, .rq = rq, .rs = rs};
    const char *path = rq->path;
    bool scoped = !strncmp(path, CLUSTERS, strlen(CLUSTERS)) && path[strlen(CLUSTERS)];
    if (scoped) {
        /* asked before the name is looked up: without the token, which clusters exist is not told */
        if (!token_ok(a->s, rq)) {
            http_error(rs, 401, "Unauthorized", "admin.token is set: send Authorization: Bearer <token>");
            return;
        }
        if (!(c.cluster = admin_cluster_at(&c, path + strlen(CLUSTERS), &path))) return;
        c.s = c.cluster->s;
    }
    const route *found = NULL;
    char allow[64] = "";
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        char args[ADMIN_MAX_ARGS][256];
        if (scoped && (routes[i].flags & PROCESS)) continue;
        if (!match(scoped ? in_cluster(routes[i].pattern) : routes[i].pattern, path, args)) continue;
        if (strcmp(routes[i].method, rq->method) != 0) {
            size_t l = strlen(allow);
            snprintf(allow + l, sizeof allow - l, "%s%s", l ? ", " : "", routes[i].method);
            continue;
        }
        found = &routes[i];
        memcpy(c.args, args, sizeof args);
        break;
    }
    if (!found && *allow) {
        snprintf(rs->allow, sizeof rs->allow, "%s", allow);
        http_error(rs, 405, "MethodNotAllowed", "%s %s: this path takes %s", rq->method, rq->path, allow);
        return;
    }
    if (!found) {
        http_error(rs, 404, "NotFound", "no route %s %s (docs/admin-api.md lists them)", rq->method, rq->path);
        return;
    }
    if (!(found->flags & OPEN) && !token_ok(a->s, rq)) {
        http_error(rs, 401, "Unauthorized", "admin.token is set: send Authorization: Bearer <token>");
        return;
    }
    if (rq->body_len) {
        json_error_t je;
        c.body = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
        if (!c.body) {
            http_error(rs, 400, "MalformedJSON", "the body is not JSON: %s (line %d, column %d)", je.text, je.line,
                       je.column);
            return;
        }
        if (!json_is_object(c.body)) {
            json_decref(c.body);
            http_error(rs, 400, "MalformedJSON", "the body must be a JSON object");
            return;
        }
    } else {
        c.body = json_object();
    }
    found->fn(&c);
    json_decref(c.body);
}

/* ---- helpers for the routes ---- */

void admin_ok(admin_call *c, json_t *j) { http_json(c->rs, 200, j); }

bool admin_known_fields(admin_call *c, const char *const *known) {
    const char *key;
    json_t *v;
    json_object_foreach(c->body, key, v) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++) ok = !strcmp(*k, key);
        if (ok) continue;
        char list[512];
        size_t l = 0;
        list[0] = '\0';
        for (const char *const *k = known; *k && l < sizeof list; k++)
            l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", k == known ? "" : ", ", *k);
        http_error(c->rs, 400, "UnknownField", "unknown field '%s' (this call takes: %s)", key, *known ? list : "none");
        return false;
    }
    return true;
}

bool admin_int(admin_call *c, const char *name, int64_t lo, int64_t hi, bool required, int64_t dflt, int64_t *out) {
    json_t *v = json_object_get(c->body, name);
    *out = dflt;
    if (!v || json_is_null(v)) {
        if (!required) return true;
        http_error(c->rs, 400, "MissingField", "field '%s' is required", name);
        return false;
    }
    if (!json_is_integer(v)) {
        http_error(c->rs, 400, "InvalidField", "field '%s' must be an integer", name);
        return false;
    }
    int64_t x = json_integer_value(v);
    if (x < lo || x > hi) {
        http_error(c->rs, 400, "InvalidField", "field '%s' is %lld; it must be between %lld and %lld", name,
                   (long long)x, (long long)lo, (long long)hi);
        return false;
    }
    *out = x;
    return true;
}

bool admin_str(admin_call *c, const char *name, bool required, const char **out) {
    json_t *v = json_object_get(c->body, name);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (!required) return true;
        http_error(c->rs, 400, "MissingField", "field '%s' is required", name);
        return false;
    }
    if (!json_is_string(v)) {
        http_error(c->rs, 400, "InvalidField", "field '%s' must be a string", name);
        return false;
    }
    *out = json_string_value(v);
    return true;
}

bool admin_bool(admin_call *c, const char *name, bool dflt, bool *out) {
    json_t *v = json_object_get(c->body, name);
    *out = dflt;
    if (!v || json_is_null(v)) return true;
    if (!json_is_boolean(v)) {
        http_error(c->rs, 400, "InvalidField", "field '%s' must be true or false", name);
        return false;
    }
    *out = json_is_true(v);
    return true;
}

json_t *admin_time(int64_t wall_ms) {
    if (wall_ms <= 0) return json_null();
    time_t t = (time_t)(wall_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[96];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(wall_ms % 1000));
    return json_string(buf);
}

/* ---- lifetime ---- */

int admin_start(srv *s, char *err, size_t n) {
    if (!s->cfg->admin_port) return 0;
    admin *a = xcalloc(1, sizeof *a);
    a->s = s;
    http_opts opts = {.name = "admin", .port_key = "admin.port", .max_body = ADMIN_MAX_BODY,
                      .max_clients = ADMIN_MAX_CLIENTS,
                      .timeout_ms = ADMIN_TIMEOUT_MS};
    if (http_start(s->loop, s->cfg->bind_address, s->cfg->ports_auto ? 0 : (int)s->cfg->admin_port, &opts, serve, a,
                   &a->http, err, n) != 0) {
        free(a);
        return -1;
    }
    s->admin = a;
    const char *b = s->cfg->bind_address;
    bool v6 = strchr(b, ':') != NULL;
    log_info("admin: HTTP admin API on http://%s%s%s:%d/v1/ and metrics on /metrics%s", v6 ? "[" : "", b, v6 ? "]" : "",
             http_port(a->http), *s->cfg->admin_token ? " (admin.token required)" : "");
    return 0;
}

int admin_port(const srv *s) { return s->admin ? http_port(s->admin->http) : 0; }

void admin_close(srv *s) {
    if (!s->admin) return;
    http_close(s->admin->http);
    free(s->admin);
    s->admin = NULL;
}
