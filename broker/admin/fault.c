/*
 * fault: the rules (see fault.h), their matching against a request, and their routes:
 *
 *   POST   /v1/faults        create one; 201 with the rule
 *   GET    /v1/faults        {"faults": [rule...]}
 *   GET    /v1/faults/{id}   one rule; 404 when unknown
 *   DELETE /v1/faults/{id}   delete one; 200 with its last state; 404 when unknown
 *   DELETE /v1/faults        delete all; {"deleted": n}
 *
 * A rule that expired (duration_ms) or ran out (count) stays listed with "active": false, so a
 * test can still read how often it fired, but matches nothing more. Rules live in memory only:
 * a restart forgets them, as it should for a test fixture.
 */
#include "fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_route.h"
#include "api/api.h"
#include "clock.h"
#include "kp_errors.h"
#include "kp_mem.h"
#include "kp_mirror.h"
#include "log.h"
#include "metrics.h"
#include "net/net.h"
#include "topic/topic.h"

/* Enough for any test; a bound so a runaway script cannot slow every request down. */
#define FAULT_MAX_RULES 1000
#define FAULT_MAX_LATENCY_MS 600000

struct fault_rule {
    struct fault_rule *next;
    uint64_t id;
    int16_t api_key;
    int16_t vmin, vmax;
    bool versions_given;
    char *topic;            /* NULL: any */
    int32_t partition;      /* -1: any */
    char *group, *client_id, *principal;
    int listener;           /* -1: any */
    bool has_broker;
    int32_t broker;         /* a synthetic broker's node id */
    fault_action action;
    int16_t error_code;
    int32_t latency_ms;
    int64_t count, remaining; /* count 0: no limit */
    int64_t duration_ms, expires_mono_ms, expires_wall_ms;
    double probability;     /* 1: every match */
    uint64_t seed, rng;
    uint64_t matched, fired;
    int64_t created_wall_ms;
    bool active;
    char desc[320];         /* for log lines: what it matches and does */
};

typedef struct fault_rule fault_rule;

static uint64_t next_id = 1;

/* splitmix64: small, seedable, and good enough to decide whether a fault fires. */
static uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *state) { return (double)(rng_next(state) >> 11) * 0x1.0p-53; }

static const char *action_name(fault_action a) {
    switch (a) {
    case FAULT_ERROR: return "error";
    case FAULT_LATENCY: return "latency";
    case FAULT_CLOSE: return "close";
    case FAULT_DROP: return "drop";
    default: return "none";
    }
}

static void rule_free(fault_rule *f) {
    free(f->topic);
    free(f->group);
    free(f->client_id);
    free(f->principal);
    free(f);
}

int fault_clear(srv *s) {
    int n = 0;
    while (s->faults) {
        fault_rule *f = s->faults;
        s->faults = f->next;
        rule_free(f);
        n++;
    }
    return n;
}

void fault_free_all(srv *s) { fault_clear(s); }

static void deactivate(fault_rule *f, const char *why) {
    f->active = false;
    log_info("fault: rule %llu %s (matched %llu, fired %llu); it stays listed, inactive, until deleted",
             (unsigned long long)f->id, why, (unsigned long long)f->matched, (unsigned long long)f->fired);
}

/* Whether f is still in force at monotonic time now (read lazily: -1 until needed). */
static bool in_force(fault_rule *f, int64_t *now) {
    if (!f->active) return false;
    if (!f->expires_mono_ms) return true;
    if (*now < 0) *now = clk_mono_ms();
    if (*now < f->expires_mono_ms) return true;
    deactivate(f, "expired: its duration_ms passed");
    return false;
}

/* ---- matching ---- */

static bool str_is(kp_str a, const char *b) { return a.len >= 0 && kp_str_eq(a, b); }

static bool rule_matches(srv *s, const fault_rule *f, const req *r) {
    const conn *c = r->c;
    int16_t ver = r->hdr.api_version;
    if (f->versions_given && (ver < f->vmin || ver > f->vmax)) return false;
    if (f->client_id && !str_is(r->hdr.client_id, f->client_id)) return false;
    if (f->principal && strcmp(c->principal ? c->principal : "ANONYMOUS", f->principal) != 0) return false;
    if (f->listener >= 0 && (int)c->listener != f->listener) return false;
    if (f->has_broker && s->nodes[c->node].id != f->broker) return false;
    if (f->group && !kp_names_group(r->msg->req, ver, r->body, kp_str_c(f->group))) return false;
    if (f->topic) {
        /* requests that name topics by id (Fetch v13+) match through the topic's current id */
        const topic *t = topic_find(s, f->topic, strlen(f->topic));
        kp_target tg = {kp_str_c(f->topic), t ? (const kp_uuid *)t->uuid : NULL, f->partition};
        if (!kp_names_topic(r->msg->req, ver, r->body, &tg)) return false;
    }
    return true;
}

bool fault_check(srv *s, req *r, fault_hit *hit) {
    int64_t now = -1;
    for (fault_rule *f = s->faults; f; f = f->next) {
        if (f->api_key != r->hdr.api_key || !in_force(f, &now) || !rule_matches(s, f, r)) continue;
        f->matched++;
        if (f->probability < 1 && rng_unit(&f->rng) >= f->probability) continue;
        f->fired++;
        metrics_fault_fired(&s->metrics, f->action);
        *hit = (fault_hit){.action = f->action, .error_code = f->error_code, .latency_ms = f->latency_ms,
                           .rule_id = f->id, .first = f->fired == 1, .topic = f->topic, .partition = f->partition};
        if (f->count && --f->remaining == 0) deactivate(f, "fires for the last time: its count is reached");
        return true;
    }
    return false;
}

/* ---- JSON ---- */

static json_t *rule_json(fault_rule *f) {
    int64_t now = -1;
    in_force(f, &now);
    json_t *j = json_pack("{s:I, s:s, s:i}", "id", (json_int_t)f->id, "api", kp_api_name(f->api_key), "api_key",
                          (int)f->api_key);
    if (f->versions_given) {
        json_object_set_new(j, "version_min", json_integer(f->vmin));
        json_object_set_new(j, "version_max", json_integer(f->vmax));
    }
    if (f->topic) json_object_set_new(j, "topic", json_string(f->topic));
    if (f->partition >= 0) json_object_set_new(j, "partition", json_integer(f->partition));
    if (f->group) json_object_set_new(j, "group", json_string(f->group));
    if (f->client_id) json_object_set_new(j, "client_id", json_string(f->client_id));
    if (f->principal) json_object_set_new(j, "principal", json_string(f->principal));
    if (f->listener >= 0) json_object_set_new(j, "listener", json_string(lsn_name((listener_kind)f->listener)));
    if (f->has_broker) json_object_set_new(j, "broker", json_integer(f->broker));
    json_object_set_new(j, "action", json_string(action_name(f->action)));
    if (f->action == FAULT_ERROR) {
        json_object_set_new(j, "error", json_string(kp_err_name(f->error_code)));
        json_object_set_new(j, "error_code", json_integer(f->error_code));
    }
    if (f->action == FAULT_LATENCY) json_object_set_new(j, "latency_ms", json_integer(f->latency_ms));
    if (f->action == FAULT_CLOSE) json_object_set_new(j, "close", json_true());
    if (f->action == FAULT_DROP) json_object_set_new(j, "drop", json_true());
    if (f->count) {
        json_object_set_new(j, "count", json_integer(f->count));
        json_object_set_new(j, "remaining", json_integer(f->remaining));
    }
    if (f->duration_ms) json_object_set_new(j, "duration_ms", json_integer(f->duration_ms));
    json_object_set_new(j, "expires_at", admin_time(f->expires_wall_ms));
    if (f->probability < 1) {
        json_object_set_new(j, "probability", json_real(f->probability));
        /* a string: JSON numbers beyond 2^53 lose digits in most languages */
        char seed[24];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)f->seed);
        json_object_set_new(j, "seed", json_string(seed));
    }
    json_object_set_new(j, "matched", json_integer((json_int_t)f->matched));
    json_object_set_new(j, "fired", json_integer((json_int_t)f->fired));
    json_object_set_new(j, "active", json_boolean(f->active));
    json_object_set_new(j, "created_at", admin_time(f->created_wall_ms));
    return j;
}

/* ---- POST /v1/faults ---- */

static bool parse_api(admin_call *c, fault_rule *f) {
    json_t *v = json_object_get(c->body, "api");
    const kp_msg *m = NULL;
    if (!v || json_is_null(v)) {
        http_error(c->rs, 400, "MissingField", "field 'api' is required: an API name as Kafka spells it "
                   "(\"Produce\", \"Fetch\") or its key");
        return false;
    }
    if (json_is_string(v)) {
        m = kp_msg_by_name(json_string_value(v), json_string_length(v));
        if (!m) {
            http_error(c->rs, 400, "UnknownApi", "api '%s' is not an API mskmock knows (names as Kafka spells "
                       "them: Produce, Fetch, Metadata, JoinGroup, ...)", json_string_value(v));
            return false;
        }
    } else if (json_is_integer(v)) {
        json_int_t k = json_integer_value(v);
        m = k >= 0 && k <= INT16_MAX ? kp_msg_get((int16_t)k) : NULL;
        if (!m) {
            http_error(c->rs, 400, "UnknownApi", "api key %lld is not an API mskmock knows", (long long)k);
            return false;
        }
    } else {
        http_error(c->rs, 400, "InvalidField", "field 'api' must be an API name or key");
        return false;
    }
    const api_handler *h = api_lookup(m->key);
    int16_t lo = 0, hi = -1;
    if (h) api_range(c->s, h, &lo, &hi);
    if (hi < lo) {
        http_error(c->rs, 400, "UnknownApi", "api %s is not served by this broker (profile or api.versions.*), "
                   "so no request of it reaches a rule", m->name);
        return false;
    }
    f->api_key = m->key;
    f->vmin = lo;
    f->vmax = hi;
    return true;
}

static bool parse_versions(admin_call *c, fault_rule *f) {
    int64_t lo, hi;
    if (!admin_int(c, "version_min", f->vmin, f->vmax, false, f->vmin, &lo) ||
        !admin_int(c, "version_max", f->vmin, f->vmax, false, f->vmax, &hi))
        return false;
    if (lo > hi) {
        http_error(c->rs, 400, "InvalidField", "version_min %lld is above version_max %lld", (long long)lo,
                   (long long)hi);
        return false;
    }
    f->versions_given = json_object_get(c->body, "version_min") || json_object_get(c->body, "version_max");
    f->vmin = (int16_t)lo;
    f->vmax = (int16_t)hi;
    return true;
}

/* A string field that must not be empty when given; *out is a malloc'd copy or NULL. */
static bool opt_str(admin_call *c, const char *name, char **out) {
    const char *v;
    if (!admin_str(c, name, false, &v)) return false;
    if (v && !*v) {
        http_error(c->rs, 400, "InvalidField", "field '%s' is empty; leave it out to match any", name);
        return false;
    }
    *out = v ? xstrdup(v) : NULL;
    return true;
}

static bool parse_filters(admin_call *c, fault_rule *f) {
    int64_t part, broker;
    const char *lsn;
    if (!opt_str(c, "topic", &f->topic) || !opt_str(c, "group", &f->group) ||
        !opt_str(c, "client_id", &f->client_id) || !opt_str(c, "principal", &f->principal) ||
        !admin_int(c, "partition", 0, INT32_MAX, false, -1, &part) || !admin_str(c, "listener", false, &lsn) ||
        !admin_int(c, "broker", INT32_MIN, INT32_MAX, false, 0, &broker))
        return false;
    if (part >= 0 && !f->topic) {
        http_error(c->rs, 400, "InvalidField", "field 'partition' needs 'topic': a partition of which topic?");
        return false;
    }
    f->partition = (int32_t)part;
    f->listener = -1;
    if (lsn) {
        char names[128] = "";
        size_t l = 0;
        for (int k = 0; k < LSN_COUNT; k++) {
            if (!strcmp(lsn, lsn_name((listener_kind)k))) f->listener = k;
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", k ? ", " : "", lsn_name((listener_kind)k));
        }
        if (f->listener < 0) {
            http_error(c->rs, 400, "InvalidField", "listener '%s' is not one of: %s", lsn, names);
            return false;
        }
    }
    if (json_object_get(c->body, "broker")) {
        bool known = false;
        for (int i = 0; i < c->s->nnodes; i++) known |= c->s->nodes[i].id == broker;
        if (!known) {
            http_error(c->rs, 400, "InvalidField", "broker %lld is not the node id of a synthetic broker (GET "
                       "/v1/brokers lists them)", (long long)broker);
            return false;
        }
        f->has_broker = true;
        f->broker = (int32_t)broker;
    }
    return true;
}

static bool parse_error(admin_call *c, fault_rule *f) {
    json_t *v = json_object_get(c->body, "error");
    int code = 0;
    if (json_is_string(v)) {
        if (!kp_err_by_name(json_string_value(v), &code)) {
            http_error(c->rs, 400, "InvalidField", "error '%s' is not a Kafka error name mskmock knows "
                       "(NOT_LEADER_OR_FOLLOWER, REBALANCE_IN_PROGRESS, ...; or give the code)",
                       json_string_value(v));
            return false;
        }
    } else if (json_is_integer(v) && json_integer_value(v) >= INT16_MIN && json_integer_value(v) <= INT16_MAX) {
        code = (int)json_integer_value(v);
        if (!kp_err_known(code)) {
            http_error(c->rs, 400, "InvalidField", "error %d is not a Kafka error code mskmock knows", code);
            return false;
        }
    } else {
        http_error(c->rs, 400, "InvalidField", "field 'error' must be a Kafka error name or code");
        return false;
    }
    if (code == 0) {
        http_error(c->rs, 400, "InvalidField", "error NONE (0) is no error; a rule must inject one");
        return false;
    }
    char why[640];
    if (!fault_error_fits(f->api_key, f->vmin, f->vmax, (int16_t)code, why, sizeof why)) {
        http_error(c->rs, 400, "ErrorNotValidForApi", "%s", why);
        return false;
    }
    f->error_code = (int16_t)code;
    return true;
}

static bool parse_action(admin_call *c, fault_rule *f) {
    bool close, drop;
    int64_t latency;
    if (!admin_bool(c, "close", false, &close) || !admin_bool(c, "drop", false, &drop) ||
        !admin_int(c, "latency_ms", 1, FAULT_MAX_LATENCY_MS, false, 0, &latency))
        return false;
    bool error = json_object_get(c->body, "error") != NULL;
    int n = error + (latency > 0) + close + drop;
    if (n != 1) {
        http_error(c->rs, 400, n ? "ConflictingFields" : "MissingField",
                   "a rule takes exactly one action: \"error\" (a Kafka error), \"latency_ms\", \"close\": true or "
                   "\"drop\": true; %s", n ? "this one gives several" : "this one gives none");
        return false;
    }
    f->action = error ? FAULT_ERROR : latency ? FAULT_LATENCY : close ? FAULT_CLOSE : FAULT_DROP;
    f->latency_ms = (int32_t)latency;
    return !error || parse_error(c, f);
}

static bool parse_window(admin_call *c, fault_rule *f) {
    int64_t seed;
    if (!admin_int(c, "count", 1, INT32_MAX, false, 0, &f->count) ||
        !admin_int(c, "duration_ms", 1, INT32_MAX, false, 0, &f->duration_ms) ||
        !admin_int(c, "seed", 0, INT64_MAX, false, -1, &seed))
        return false;
    f->remaining = f->count;
    f->probability = 1;
    json_t *p = json_object_get(c->body, "probability");
    if (p && !json_is_null(p)) {
        double v = json_number_value(p);
        if (!json_is_number(p) || !(v > 0 && v <= 1)) {
            http_error(c->rs, 400, "InvalidField", "field 'probability' must be a number above 0 and at most 1");
            return false;
        }
        f->probability = v;
    }
    if (seed >= 0 && f->probability >= 1) {
        http_error(c->rs, 400, "InvalidField", "field 'seed' only applies with a 'probability' below 1");
        return false;
    }
    /* without a seed, one from the clock: the rule shows it, so a run can be repeated */
    f->seed = seed >= 0 ? (uint64_t)seed : (uint64_t)clk_mono_us() ^ (f->id * 0x9e3779b97f4a7c15ULL);
    f->rng = f->seed;
    return true;
}

static void describe(fault_rule *f) {
    size_t l = 0, n = sizeof f->desc;
    char *d = f->desc;
#define ADD(...) l += l < n ? (size_t)snprintf(d + l, n - l, __VA_ARGS__) : 0
    ADD("%s", kp_api_name(f->api_key));
    if (f->versions_given) ADD(" v%d-%d", f->vmin, f->vmax);
    if (f->topic) ADD(" topic=%s", f->topic);
    if (f->partition >= 0) ADD(" partition=%d", f->partition);
    if (f->group) ADD(" group=%s", f->group);
    if (f->client_id) ADD(" client=%s", f->client_id);
    if (f->principal) ADD(" principal=%s", f->principal);
    if (f->listener >= 0) ADD(" listener=%s", lsn_name((listener_kind)f->listener));
    if (f->has_broker) ADD(" broker=%d", f->broker);
    if (f->action == FAULT_ERROR)
        ADD(" -> error %s(%d)", kp_err_name(f->error_code), f->error_code);
    else if (f->action == FAULT_LATENCY)
        ADD(" -> latency %d ms", f->latency_ms);
    else
        ADD(" -> %s", action_name(f->action));
    if (f->count) ADD(", next %lld matches", (long long)f->count);
    if (f->duration_ms) ADD(", for %lld ms", (long long)f->duration_ms);
    if (f->probability < 1) ADD(", probability %g (seed %llu)", f->probability, (unsigned long long)f->seed);
#undef ADD
}

static int rule_count(const srv *s) {
    int n = 0;
    for (const fault_rule *f = s->faults; f; f = f->next) n++;
    return n;
}

void fault_post(admin_call *c) {
    static const char *const known[] = {"api", "version_min", "version_max", "topic", "partition", "group",
                                        "client_id", "principal", "listener", "broker", "error", "latency_ms",
                                        "close", "drop", "count", "duration_ms", "probability", "seed", NULL};
    if (!admin_known_fields(c, known)) return;
    if (rule_count(c->s) >= FAULT_MAX_RULES) {
        http_error(c->rs, 409, "TooManyRules", "%d fault rules exist; delete some (DELETE /v1/faults)",
                   FAULT_MAX_RULES);
        return;
    }
    fault_rule *f = xcalloc(1, sizeof *f);
    f->id = next_id;
    if (!parse_api(c, f) || !parse_versions(c, f) || !parse_filters(c, f) || !parse_action(c, f) ||
        !parse_window(c, f)) {
        rule_free(f);
        return;
    }
    next_id++;
    f->active = true;
    f->created_wall_ms = clk_now_ms();
    if (f->duration_ms) {
        f->expires_mono_ms = clk_mono_ms() + f->duration_ms;
        f->expires_wall_ms = f->created_wall_ms + f->duration_ms;
    }
    describe(f);
    fault_rule **tail = &c->s->faults;
    while (*tail) tail = &(*tail)->next;
    *tail = f;
    log_info("fault: rule %llu created: %s", (unsigned long long)f->id, f->desc);
    snprintf(c->rs->detail, sizeof c->rs->detail, "rule %llu", (unsigned long long)f->id);
    http_json(c->rs, 201, rule_json(f));
}

/* ---- the others ---- */

void fault_get_all(admin_call *c) {
    json_t *list = json_array();
    for (fault_rule *f = c->s->faults; f; f = f->next) json_array_append_new(list, rule_json(f));
    admin_ok(c, json_pack("{s:o}", "faults", list));
}

/* The rule the path's {} names, as **link, so it can be unlinked; NULL after a 404. */
static fault_rule **find_rule(admin_call *c) {
    char *end;
    unsigned long long id = strtoull(c->args[0], &end, 10);
    if (*end == '\0' && c->args[0][0] >= '0' && c->args[0][0] <= '9')
        for (fault_rule **p = &c->s->faults; *p; p = &(*p)->next)
            if ((*p)->id == id) return p;
    http_error(c->rs, 404, "NotFound", "no fault rule %s (GET /v1/faults lists them)", c->args[0]);
    return NULL;
}

void fault_get_one(admin_call *c) {
    fault_rule **p = find_rule(c);
    if (p) admin_ok(c, rule_json(*p));
}

void fault_delete_one(admin_call *c) {
    fault_rule **p = find_rule(c);
    if (!p) return;
    fault_rule *f = *p;
    json_t *j = rule_json(f);
    *p = f->next;
    log_info("fault: rule %llu deleted (matched %llu, fired %llu): %s", (unsigned long long)f->id,
             (unsigned long long)f->matched, (unsigned long long)f->fired, f->desc);
    rule_free(f);
    admin_ok(c, j);
}

void fault_delete_all(admin_call *c) {
    int n = fault_clear(c->s);
    if (n) log_info("fault: all %d rules deleted", n);
    admin_ok(c, json_pack("{s:i}", "deleted", n));
}
