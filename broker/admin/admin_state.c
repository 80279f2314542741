/*
 * admin_state: what a test can look at (topics with their partitions' offsets and leaders,
 * groups with members and lag, connections), topics created and deleted from a shell (POST
 * /v1/topics, DELETE /v1/topics/NAME: the checks of CreateTopics, no client library needed),
 * and POST /v1/reset, which puts the broker back to an empty cluster between two tests
 * without a restart.
 */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "admin_brokers.h"
#include "admin_route.h"
#include "clock.h"
#include "fault.h"
#include "group/consumer.h"
#include "group/group.h"
#include "log.h"
#include "net/net.h"
#include "topic/topic.h"
#include "txn/txn.h"

/* A topic id as Kafka tools print it: unpadded URL-safe base64 of the 16 bytes. */
static json_t *topic_id_json(const uint8_t id[16]) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char out[24];
    int n = 0, bits = 0;
    uint32_t acc = 0;
    for (int i = 0; i < 16; i++) {
        acc = (acc << 8) | id[i];
        bits += 8;
        while (bits >= 6) out[n++] = a[(acc >> (bits -= 6)) & 63];
    }
    if (bits) out[n++] = a[(acc << (6 - bits)) & 63];
    out[n] = '\0';
    return json_string(out);
}

static json_t *topic_json(const srv *s, const topic *t, bool detail) {
    json_t *j = json_pack("{s:s, s:o, s:i}", "name", t->name, "topic_id", topic_id_json(t->uuid), "partitions",
                          (int)t->nparts);
    json_t *cfg = json_object();
    for (int i = 0; i < t->noverrides; i++) json_object_set_new(cfg, t->overrides[i].key, json_string(t->overrides[i].value));
    json_object_set_new(j, "configs", cfg);
    json_object_set_new(j, "created", admin_time(t->created_ms));
    if (!detail) return j;
    json_t *parts = json_array();
    for (int32_t i = 0; i < t->nparts; i++) {
        const partition *p = &t->parts[i];
        int32_t r[TOPIC_MAX_REPLICAS];
        int32_t n = topic_replicas(s, t, i, r);
        json_t *replicas = json_array();
        for (int32_t k = 0; k < n; k++) json_array_append_new(replicas, json_integer(s->nodes[r[k]].id));
        /* leader -1: offline, every replica down (Metadata's leader id for it too) */
        json_array_append_new(parts, json_pack("{s:i, s:i, s:i, s:o, s:I, s:I, s:I, s:I, s:i}", "partition", (int)i,
                                               "leader", p->leader == TOPIC_NO_LEADER ? -1 : (int)s->nodes[p->leader].id,
                                               "leader_epoch", (int)p->leader_epoch, "replicas", replicas,
                                               "log_start_offset", (json_int_t)p->log_start,
                                               "high_watermark", (json_int_t)p->hw, "last_stable_offset",
                                               (json_int_t)topic_lso(p), "log_end_offset", (json_int_t)p->end,
                                               "open_transactions", p->ntxns));
    }
    json_object_set_new(j, "partitions", parts);
    return j;
}

void admin_get_topics(admin_call *c) {
    json_t *a = json_array();
    /* Kafka's internal topics are left out, as AdminClient.listTopics leaves them out; GET /v1/topics/<name> shows them */
    for (const topic *t = c->s->topics; t; t = t->next)
        if (!topic_is_internal(t->name, strlen(t->name))) json_array_append_new(a, topic_json(c->s, t, true));
    admin_ok(c, json_pack("{s:o}", "topics", a));
}

void admin_get_topic(admin_call *c) {
    const topic *t = topic_find(c->s, c->args[0], strlen(c->args[0]));
    if (!t) {
        http_error(c->rs, 404, "NotFound", "no topic '%s'", c->args[0]);
        return;
    }
    admin_ok(c, topic_json(c->s, t, true));
}

/* POST /v1/topics {"name", "partitions"?, "replication_factor"?, "configs"?: {key: value}}: -1 or absent
   take the broker defaults; refusals carry Kafka's error name and message, as CreateTopics would. */
void admin_post_topic(admin_call *c) {
    static const char *const known[] = {"name", "partitions", "replication_factor", "configs", NULL};
    const char *name;
    int64_t parts, rf;
    if (!admin_known_fields(c, known) || !admin_str(c, "name", true, &name) ||
        !admin_int(c, "partitions", -1, INT32_MAX, false, -1, &parts) ||
        !admin_int(c, "replication_factor", -1, INT16_MAX, false, -1, &rf))
        return;
    json_t *configs = json_object_get(c->body, "configs");
    if (configs && !json_is_object(configs)) {
        http_error(c->rs, 400, "BadRequest", "configs: an object of config names and string values");
        return;
    }
    size_t nov = configs ? json_object_size(configs) : 0;
    topic_override ov[64];
    if (nov > sizeof ov / sizeof ov[0]) {
        http_error(c->rs, 400, "BadRequest", "configs: at most %zu", sizeof ov / sizeof ov[0]);
        return;
    }
    const char *key;
    json_t *v;
    size_t i = 0;
    json_object_foreach(configs, key, v) {
        if (!json_is_string(v)) {
            http_error(c->rs, 400, "BadRequest", "configs: the value of %s is not a string", key);
            return;
        }
        ov[i++] = (topic_override){(char *)key, (char *)json_string_value(v)};
    }
    int16_t code;
    char why[512];
    topic *t = topic_create_checked(c->s, name, (int32_t)parts, (int16_t)rf, ov, (int)nov, "admin API", &code, why,
                                    sizeof why);
    if (!t) {
        int status = code == KERR_TOPIC_ALREADY_EXISTS ? 409 : code == KERR_UNKNOWN_SERVER_ERROR ? 500 : 400;
        http_error(c->rs, status, kp_err_name(code), "%s", why);
        return;
    }
    /* answered once stored, as CreateTopics is */
    if (topic_commit_now(c->s) != 0) {
        http_error(c->rs, 500, "StorageError", "storing topic %s failed: %s", name, stor_errmsg(c->s->st));
        return;
    }
    admin_ok(c, topic_json(c->s, t, true));
}

/* DELETE /v1/topics/NAME: as DeleteTopics (its offsets and transaction state go with it). */
void admin_delete_topic(admin_call *c) {
    topic *t = topic_find(c->s, c->args[0], strlen(c->args[0]));
    if (!t) {
        http_error(c->rs, 404, "NotFound", "no topic '%s'", c->args[0]);
        return;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", t->name);
    txn_forget_topic(c->s, t->id, name);
    if (topic_delete(c->s, t) != 0 || topic_commit_now(c->s) != 0) {
        http_error(c->rs, 500, "StorageError", "deleting topic %s failed: %s", name, stor_errmsg(c->s->st));
        return;
    }
    log_info("deleted topic %s (admin API)", name);
    admin_ok(c, json_pack("{s:s}", "deleted", name));
}

static void put_config(void *ctx, const char *key, const char *value) {
    json_object_set_new(ctx, key, json_string(value));
}

static json_t *group_json(srv *s, group *g, bool detail) {
    json_t *j = json_pack("{s:s, s:s, s:i, s:i, s:i}", "group_id", g->id, "state", grp_state_label(g),
                          "generation", (int)(g->cg ? g->cg->group_epoch : g->generation), "members",
                          grp_member_count(g), "coordinator", (int)s->nodes[grp_coordinator_for(s, g->id, strlen(g->id))].id);
    json_object_set_new(j, "type", json_string(grp_type(g))); /* classic, or consumer (KIP-848) */
    json_object_set_new(j, "protocol_type", g->protocol_type ? json_string(g->protocol_type) : json_null());
    json_object_set_new(j, "protocol", g->protocol_name ? json_string(g->protocol_name) : json_null());
    int64_t total_lag = 0;
    json_t *offsets = json_array();
    for (int i = 0; i < g->noffsets; i++) {
        const committed_offset *o = &g->offsets[i];
        const partition *p = topic_partition(s, o->topic, strlen(o->topic), o->partition);
        json_t *e = json_pack("{s:s, s:i, s:I}", "topic", o->topic, "partition", (int)o->partition, "committed_offset",
                              (json_int_t)o->offset);
        if (p) {
            /* as kafka-consumer-groups.sh: the high watermark minus the committed offset */
            int64_t lag = p->hw > o->offset ? p->hw - o->offset : 0;
            total_lag += lag;
            json_object_set_new(e, "high_watermark", json_integer(p->hw));
            json_object_set_new(e, "lag", json_integer(lag));
        }
        if (o->metadata_len > 0) {
            /* a string that may hold NUL bytes; one that is not UTF-8 cannot be JSON and is left out */
            json_t *md = json_stringn(o->metadata, (size_t)o->metadata_len);
            if (md) json_object_set_new(e, "metadata", md);
        }
        json_array_append_new(offsets, e);
    }
    json_object_set_new(j, "lag", json_integer(total_lag));
    json_t *cfg = json_object(); /* group config overrides (KIP-848), as a topic's "configs" */
    grp_config_overrides(s, g->id, put_config, cfg);
    json_object_set_new(j, "configs", cfg);
    if (!detail) {
        json_decref(offsets);
        return j;
    }
    json_t *members = json_array();
    for (const member *m = g->members; m; m = m->next) {
        json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:i, s:b}", "member_id", m->id, "client_id",
                              m->client_id ? m->client_id : "", "client_host", m->client_host ? m->client_host : "",
                              "session_timeout_ms", (int)m->session_timeout_ms, "rebalance_timeout_ms",
                              (int)m->rebalance_timeout_ms, "leader", g->leader && !strcmp(g->leader, m->id));
        json_object_set_new(e, "group_instance_id", m->instance_id ? json_string(m->instance_id) : json_null());
        json_array_append_new(members, e);
    }
    for (int k = 0; g->cg && k < g->cg->n; k++) {
        /* a consumer group's members: epochs and partitions as ConsumerGroupDescribe shows them */
        const cmember *m = g->cg->m[k];
        char *a = cg_parts_format(&m->assigned), *t = cg_parts_format(&m->target);
        json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "member_id", m->id, "client_id",
                              m->client_id ? m->client_id : "", "client_host", m->client_host ? m->client_host : "",
                              "member_epoch", (int)m->epoch, "assigned", a, "target", t);
        json_object_set_new(e, "group_instance_id", m->instance_id ? json_string(m->instance_id) : json_null());
        /* KIP-848's online migration: a member may still speak the classic protocol */
        json_object_set_new(e, "protocol", json_string(m->classic ? "classic" : "consumer"));
        json_array_append_new(members, e);
        free(a);
        free(t);
    }
    if (g->cg) {
        json_object_set_new(j, "group_epoch", json_integer(g->cg->group_epoch));
        json_object_set_new(j, "assignment_epoch", json_integer(g->cg->assignment_epoch));
        json_object_set_new(j, "assignor", g->cg->assignor ? json_string(g->cg->assignor) : json_null());
    }
    json_object_set_new(j, "members", members);
    json_object_set_new(j, "offsets", offsets);
    return j;
}

void admin_get_groups(admin_call *c) {
    json_t *a = json_array();
    for (group *g = c->s->groups; g; g = g->next) json_array_append_new(a, group_json(c->s, g, false));
    admin_ok(c, json_pack("{s:o}", "groups", a));
}

void admin_get_group(admin_call *c) {
    group *g = grp_find(c->s, c->args[0], strlen(c->args[0]));
    if (!g) {
        http_error(c->rs, 404, "NotFound", "no group '%s'", c->args[0]);
        return;
    }
    admin_ok(c, group_json(c->s, g, true));
}

void admin_get_connections(admin_call *c) {
    srv *s = c->s;
    json_t *a = json_array();
    int64_t mono = clk_mono_ms();
    for (const conn *k = s->conns; k; k = k->next) {
        json_t *e = json_pack("{s:I, s:i, s:s, s:s, s:I, s:I}", "id", (json_int_t)k->id, "broker",
                              (int)s->nodes[k->node].id, "listener", lsn_name(k->listener), "peer", k->peer,
                              "requests", (json_int_t)k->requests, "age_ms", (json_int_t)(mono - k->opened_ms));
        json_object_set_new(e, "client_id", k->client_id ? json_string(k->client_id) : json_null());
        json_object_set_new(e, "principal", k->principal ? json_string(k->principal) : json_null());
        json_object_set_new(e, "session_expiry", k->session_expiry_ms ? admin_time(k->session_expiry_ms) : json_null());
        json_array_append_new(a, e);
    }
    admin_ok(c, json_pack("{s:o}", "connections", a));
}

/*
 * Every Kafka connection closes first: a client of the previous test must not keep a parked
 * request, a group membership or a fetch session into the next one. Then groups and their
 * offsets go, every group's configs, then topics (but those named in keep_topics), fault rules,
 * and brokers taken down come back up: the broker is as a fresh start on an empty data
 * directory, but for producer ids (never reused, as in Kafka).
 */
void admin_post_reset(admin_call *c) {
    static const char *const known[] = {"keep_topics", NULL};
    if (!admin_known_fields(c, known)) return;
    json_t *keep = json_object_get(c->body, "keep_topics");
    if (keep && !json_is_array(keep)) {
        http_error(c->rs, 400, "InvalidField", "keep_topics must be an array of topic names");
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach(keep, i, v) {
        if (!json_is_string(v)) {
            http_error(c->rs, 400, "InvalidField", "keep_topics[%zu] is not a string", i);
            return;
        }
        if (!topic_find(c->s, json_string_value(v), json_string_length(v))) {
            http_error(c->rs, 400, "InvalidField", "keep_topics[%zu]: no topic '%s'", i, json_string_value(v));
            return;
        }
    }
    srv *s = c->s;
    int nconns = 0, ngroups = 0, ntopics = 0, nkept = 0;
    while (s->conns) {
        net_close(s->conns, "admin API reset");
        nconns++;
    }
    topic_wake_all(s);
    txn_reset(s); /* open transactions are aborted: the topics kept hold no undecided data */
    while (s->groups) {
        if (grp_delete(s, s->groups) != 0) {
            http_error(c->rs, 500, "StorageError", "deleting group %s failed: %s", s->groups->id, stor_errmsg(s->st));
            return;
        }
        ngroups++;
    }
    /* their configs too (Kafka keeps them past the group, but a fresh cluster has none) */
    if (grp_configs_clear(s) != 0) {
        http_error(c->rs, 500, "StorageError", "deleting group configs failed: %s", stor_errmsg(s->st));
        return;
    }
    for (topic *t = s->topics, *next; t; t = next) {
        next = t->next;
        if (topic_is_internal(t->name, strlen(t->name))) continue; /* a fresh Kafka cluster has them too */
        bool kept = false;
        json_array_foreach(keep, i, v) kept = kept || !strcmp(json_string_value(v), t->name);
        if (kept) {
            nkept++;
            continue;
        }
        char name[256];
        snprintf(name, sizeof name, "%s", t->name);
        if (topic_delete(s, t) != 0) {
            http_error(c->rs, 500, "StorageError", "deleting topic %s failed: %s", name, stor_errmsg(s->st));
            return;
        }
        ntopics++;
    }
    int nfaults = fault_clear(s);
    int nup = admin_brokers_all_up(s);
    if (topic_commit_now(s) != 0) {
        http_error(c->rs, 500, "StorageError", "committing the reset failed: %s", stor_errmsg(s->st));
        return;
    }
    log_info("admin: reset: %d connections closed, %d groups and %d topics deleted (%d kept), %d fault rules removed, "
             "%d brokers brought back up",
             nconns, ngroups, ntopics, nkept, nfaults, nup);
    snprintf(c->rs->detail, sizeof c->rs->detail, "%d topics, %d groups deleted", ntopics, ngroups);
    admin_ok(c, json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "connections_closed", nconns, "groups_deleted", ngroups,
                          "topics_deleted", ntopics, "topics_kept", nkept, "fault_rules_removed", nfaults,
                          "brokers_up", nup));
}

/*
 * The log cleaner's work now rather than at its next look (log.cleaner.backoff.ms): every
 * compacted partition that is due (min.cleanable.dirty.ratio, max.compaction.lag.ms, tombstones
 * past their horizon; with force, any uncompacted bytes) is compacted to its end before the answer. The loop serves nothing
 * meanwhile: a test's control, not a production knob.
 */
void admin_post_compaction(admin_call *c) {
    static const char *const known[] = {"force", NULL};
    if (!admin_known_fields(c, known)) return;
    json_t *force = json_object_get(c->body, "force");
    if (force && !json_is_boolean(force)) {
        http_error(c->rs, 400, "InvalidField", "force must be true or false");
        return;
    }
    /* each partition at most once per call, however often a forced pass leaves it dirty */
    int n = topic_cleaner_run_now(c->s, 100000, force && json_is_true(force));
    if (n < 0) {
        http_error(c->rs, 409, "CleanerDisabled", "log.cleaner.enable is false: nothing is ever compacted");
        return;
    }
    admin_ok(c, json_pack("{s:i}", "passes", n));
}
