/* The topic registry: in memory for the data path, mirrored in storage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "clock.h"
#include "group/group.h"
#include "ids.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"
#include "topic.h"
#include "topic_config.h"

/*
 * Up to a few topics the list's pass is cheaper than hashing the name (FNV-1a, a multiply a byte);
 * beyond, the index (issue 37: the pass had a strlen per topic at every request naming one).
 */
#define TOPIC_WALK_MAX 8

topic *topic_find(srv *s, const char *name, size_t len) {
    if (s->ntopics > TOPIC_WALK_MAX) return NAME_OWNER(name_index_find(&s->topics_by_name, name, len), topic, by_name);
    for (topic *t = s->topics; t; t = t->next)
        if (strlen(t->name) == len && memcmp(t->name, name, len) == 0) return t;
    return NULL;
}

/*
 * KRaft's controller writes the records of one operation in one batch of at most 10000
 * (QuorumController.MAX_RECORDS_PER_USER_OP): one per new partition, plus the topic's record
 * and one per config for a creation. Past that it answers POLICY_VIOLATION
 * (EventHandlerExceptionInfo, BoundedListTooLongException). Without it, max.partitions=0 let
 * one CreateTopics of 2^31-1 partitions hold the loop for good, creating them.
 */
#define MAX_RECORDS_PER_OP 10000

static int16_t too_many_records(int64_t records, char *why, size_t n) {
    if (records <= MAX_RECORDS_PER_OP) return 0;
    snprintf(why, n, "Unable to perform excessively large batch operation.");
    return KERR_POLICY_VIOLATION;
}

int16_t topic_partition_room(srv *s, int64_t more, char *why, size_t n) {
    int64_t cap = s->cfg->max_partitions, have = 0;
    int16_t code = too_many_records(more, why, n);
    if (code || cap <= 0) return code;
    for (topic *t = s->topics; t; t = t->next) have += t->nparts;
    if (have + more <= cap) return 0;
    /* MSK's code is not public; POLICY_VIOLATION is what Kafka's create-topic policies answer */
    snprintf(why, n, "The cluster has %lld partition%s; %lld more would exceed its limit of %lld partition%s "
             "(max.partitions).", (long long)have, PLURAL_S(have), (long long)more, (long long)cap, PLURAL_S(cap));
    return KERR_POLICY_VIOLATION;
}

topic *topic_find_uuid(srv *s, const uint8_t uuid[16]) {
    for (topic *t = s->topics; t; t = t->next)
        if (memcmp(t->uuid, uuid, 16) == 0) return t;
    return NULL;
}

partition *topic_partition(srv *s, const char *name, size_t len, int32_t index) {
    topic *t = topic_find(s, name, len);
    if (!t || index < 0 || index >= t->nparts) return NULL;
    return &t->parts[index];
}

const char *topic_name_invalid(const char *name, size_t len) {
    if (len == 0) return "the empty string is not allowed";
    if (len == 1 && name[0] == '.') return "'.' is not allowed";
    if (len == 2 && name[0] == '.' && name[1] == '.') return "'..' is not allowed";
    if (len > 249) return "the length exceeds the maximum of 249 characters";
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return "it contains a character other than ASCII alphanumerics, '.', '_' and '-'";
    }
    return NULL;
}

static int64_t num_setting(const srv *s, const topic *t, const char *key) {
    bool d;
    const char *v = topic_config_value(s, t, key, &d);
    return v ? strtoll(v, NULL, 10) : 0;
}

/* Refresh the cached values the data path reads on every batch. */
static void refresh_settings(const srv *s, topic *t) {
    bool d;
    t->max_message_bytes = num_setting(s, t, "max.message.bytes");
    t->min_insync_replicas = num_setting(s, t, "min.insync.replicas");
    t->retention_ms = num_setting(s, t, "retention.ms");
    t->retention_bytes = num_setting(s, t, "retention.bytes");
    const char *ts = topic_config_value(s, t, "message.timestamp.type", &d);
    t->log_append_time = ts && strcmp(ts, "LogAppendTime") == 0;
    const char *cp = topic_config_value(s, t, "cleanup.policy", &d);
    t->compact = cp && strstr(cp, "compact") != NULL;
    t->policy_delete = !cp || strstr(cp, "delete") != NULL;
    const char *ct = topic_config_value(s, t, "compression.type", &d);
    static const char *const codecs[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd"};
    t->codec = -1;
    for (int i = 0; ct && i < 5; i++)
        if (strcmp(ct, codecs[i]) == 0) t->codec = i; /* the index is the batch codec (kp_batch.h) */
    /* MSK's message.timestamp.difference.max.ms bounds both sides, as Kafka 3.6+ reads it for before/after */
    int64_t diff = num_setting(s, t, "message.timestamp.difference.max.ms");
    int64_t before = num_setting(s, t, "message.timestamp.before.max.ms");
    int64_t after = num_setting(s, t, "message.timestamp.after.max.ms");
    t->ts_before_ms = before < diff ? before : diff;
    t->ts_after_ms = after < diff ? after : diff;
}

const char *topic_config_value(const srv *s, const topic *t, const char *key, bool *is_default) {
    for (int i = 0; i < t->noverrides; i++)
        if (strcmp(t->overrides[i].key, key) == 0) {
            *is_default = false;
            return t->overrides[i].value;
        }
    *is_default = true;
    static char buf[32]; /* the loop thread is the only caller */
    return tcfg_default(s, key, buf, sizeof buf);
}

static void set_override(topic *t, const char *key, const char *value) {
    for (int i = 0; i < t->noverrides; i++) {
        if (strcmp(t->overrides[i].key, key) != 0) continue;
        free(t->overrides[i].value);
        if (value) {
            t->overrides[i].value = xstrdup(value);
        } else {
            free(t->overrides[i].key);
            t->overrides[i] = t->overrides[--t->noverrides];
        }
        return;
    }
    if (!value) return;
    topic_override *o = xrealloc(t->overrides, sizeof(*o) * (size_t)(t->noverrides + 1));
    t->overrides = o;
    o[t->noverrides].key = xstrdup(key);
    o[t->noverrides].value = xstrdup(value);
    t->noverrides++;
}

static void init_partitions(srv *s, topic *t, int32_t from, int32_t to) {
    partition *p = xrealloc(t->parts, sizeof(*p) * (size_t)to);
    t->parts = p;
    /* reallocating moves partitions: nothing but the dirty list may hold partition pointers */
    for (int32_t i = from; i < to; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].topic = t;
        p[i].index = i;
        p[i].leader_epoch = 0;
        p[i].last_abort_offset = -1;
        p[i].clean_due_ms = -1;
    }
    t->nparts = to;
    /* the default assignment's first replica up; a client's assignment comes after (topic_assign) */
    for (int32_t i = from; i < to; i++) p[i].leader = topic_elect_leader(s, t, i);
}

/* Registers a topic in memory (used by load and create). */
static topic *add_topic(srv *s, int64_t id, const char *name, const uint8_t uuid[16], int32_t nparts, int64_t created,
                        int16_t rf) {
    topic *t = xcalloc(1, sizeof(*t));
    t->id = id;
    t->name = xstrdup(name);
    memcpy(t->uuid, uuid, 16);
    t->created_ms = created;
    t->replication_factor = rf; /* before the partitions: their default replicas depend on it */
    init_partitions(s, t, 0, nparts);
    t->next = s->topics;
    s->topics = t;
    name_index_put(&s->topics_by_name, &t->by_name, t->name);
    s->ntopics++;
    s->topics_generation++;
    refresh_settings(s, t);
    return t;
}

int32_t topic_replication_factor(const srv *s, const topic *t) {
    int64_t rf = t->replication_factor > 0 ? t->replication_factor : s->cfg->default_replication_factor;
    return rf < s->nnodes ? (int32_t)rf : s->nnodes;
}

int16_t topic_check_new_name(srv *s, const char *name, size_t len, char *why, size_t n) {
    const char *bad = topic_name_invalid(name, len);
    if (bad) {
        snprintf(why, n, "Topic name \"%.*s\" is illegal, %s", (int)len, name, bad);
        return KERR_INVALID_TOPIC_EXCEPTION;
    }
    if (topic_find(s, name, len)) {
        snprintf(why, n, "Topic '%.*s' already exists.", (int)len, name);
        return KERR_TOPIC_ALREADY_EXISTS;
    }
    return 0;
}

int16_t topic_check_new_shape(srv *s, int32_t *nparts, int16_t *rf, const topic_override *ov, int nov, char *why,
                              size_t n) {
    if (*nparts == -1) *nparts = (int32_t)s->cfg->num_partitions;
    if (*rf == -1) *rf = (int16_t)s->cfg->default_replication_factor;
    if (*nparts <= 0) {
        snprintf(why, n, "Number of partitions must be larger than 0.");
        return KERR_INVALID_PARTITIONS;
    }
    if (*rf <= 0) {
        snprintf(why, n, "Replication factor must be larger than 0.");
        return KERR_INVALID_REPLICATION_FACTOR;
    }
    if (*rf > s->nnodes) {
        snprintf(why, n, "Unable to replicate the partition %d time(s): The target replication factor of %d cannot be "
                 "reached because only %d broker(s) are registered.", *rf, *rf, s->nnodes);
        return KERR_INVALID_REPLICATION_FACTOR;
    }
    int16_t code = too_many_records((int64_t)*nparts + 1 + nov, why, n);
    if (!code) code = topic_partition_room(s, *nparts, why, n);
    for (int i = 0; !code && i < nov; i++) code = tcfg_check(s, ov[i].key, ov[i].value, true, why, n);
    return code;
}

topic *topic_create_checked(srv *s, const char *name, int32_t nparts, int16_t rf, const topic_override *ov, int nov,
                            const char *by, int16_t *code, char *why, size_t n) {
    *code = topic_check_new_name(s, name, strlen(name), why, n);
    if (!*code) *code = topic_check_new_shape(s, &nparts, &rf, ov, nov, why, n);
    if (*code) return NULL;
    const char *err = NULL;
    topic *t = topic_create(s, name, nparts, rf, ov, nov, &err);
    if (!t) {
        *code = KERR_UNKNOWN_SERVER_ERROR;
        snprintf(why, n, "storing topic '%s' failed: %s", name, err);
        return NULL;
    }
    log_info("created topic %s (%s): %d partition%s, replication factor %d, %d config override%s", t->name, by, nparts,
             PLURAL_S(nparts), rf, nov, PLURAL_S(nov));
    return t;
}

topic *topic_create(srv *s, const char *name, int32_t nparts, int16_t rf, const topic_override *ov, int nov,
                    const char **why) {
    stor_topic st = {.name = name, .partitions = nparts, .created_ms = clk_now_ms(), .replication_factor = rf};
    ids_uuid4(st.uuid); /* never the all-zero id Kafka reserves */
    if (stor_topic_create(s->st, &st) != 0) {
        *why = stor_errmsg(s->st);
        return NULL;
    }
    for (int i = 0; i < nov; i++)
        if (stor_topic_config_set(s->st, st.id, ov[i].key, ov[i].value) != 0) {
            *why = stor_errmsg(s->st);
            return NULL;
        }
    topic *t = add_topic(s, st.id, name, st.uuid, nparts, st.created_ms, rf);
    for (int i = 0; i < nov; i++) set_override(t, ov[i].key, ov[i].value);
    refresh_settings(s, t);
    for (int32_t i = 0; i < nparts; i++) topic_mark_dirty(s, &t->parts[i]);
    return t;
}

void topic_free(topic *t) {
    for (int i = 0; i < t->noverrides; i++) {
        free(t->overrides[i].key);
        free(t->overrides[i].value);
    }
    for (int32_t i = 0; i < t->nparts; i++) {
        free(t->parts[i].producers);
        free(t->parts[i].txns);
        free(t->parts[i].replicas);
    }
    free(t->overrides);
    free(t->parts);
    free(t->name);
    free(t);
}

/*
 * The delete in a commit of its own, so that a failure rolls back storage while memory still
 * holds the topic: the request is refused, and the broker goes on (a failed commit of topic
 * state stops it otherwise). On a full disk the commit has no room for its WAL pages: the
 * reserve (storage/stor_reserve.c) is freed and the delete tried once more, which frees the
 * topic's segments, and the reserve is taken again from them.
 */
static int delete_stored(srv *s, topic *t) {
    if (stor_topic_delete(s->st, t->id) == 0 && stor_commit(s->st) == 0) return 0;
    stor_commit(s->st); /* after a failed statement: rolls back, or commits the nothing left */
    return -1;
}

int topic_delete(srv *s, topic *t) {
    /* the dirty list points into the partition array: settle it first */
    topic_commit_now(s);
    if (s->fatal_exit) return -1;
    if (delete_stored(s, t) != 0) {
        char err[512];
        snprintf(err, sizeof err, "%s", stor_errmsg(s->st));
        if (!stor_reserve_release(s->st)) return -1;
        log_info("topic %s: deleting it failed (%s); freed the storage reserve (%d MiB) to delete it", t->name, err,
                 STOR_RESERVE_BYTES >> 20);
        int rc = delete_stored(s, t);
        stor_reserve_keep(s->st);
        if (rc != 0) return -1;
    } else {
        stor_reserve_keep(s->st); /* a reserve missing since a full disk: its room may be back */
    }
    for (topic **pp = &s->topics; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    name_index_del(&s->topics_by_name, &t->by_name);
    s->ntopics--;
    s->topics_generation++;
    grp_forget_topic(s, t->name); /* Kafka drops the committed offsets of a deleted topic */
    topic_free(t);
    return 0;
}

int topic_add_partitions(srv *s, topic *t, int32_t count) {
    topic_commit_now(s); /* the partition array moves: settle the dirty list first */
    if (stor_topic_add_partitions(s->st, t->id, count) != 0) return -1;
    int32_t old = t->nparts;
    init_partitions(s, t, old, count);
    return 0;
}

int topic_set_config(srv *s, topic *t, const char *key, const char *value) {
    if (stor_topic_config_set(s->st, t->id, key, value) != 0) return -1;
    set_override(t, key, value);
    refresh_settings(s, t);
    return 0;
}

/* ---- loading at start-up ---- */

static void load_topic(void *ctx, const stor_topic *st) {
    add_topic(ctx, st->id, st->name, st->uuid, st->partitions, st->created_ms, st->replication_factor);
}

topic *topic_find_id(srv *s, int64_t id) {
    for (topic *t = s->topics; t; t = t->next)
        if (t->id == id) return t;
    return NULL;
}

static void load_config(void *ctx, int64_t topic_id, const char *key, const char *value) {
    topic *t = topic_find_id(ctx, topic_id);
    if (!t) return;
    set_override(t, key, value);
    refresh_settings(ctx, t);
}

static void load_partition(void *ctx, int64_t topic_id, int32_t index, int64_t log_start, int64_t next) {
    topic *t = topic_find_id(ctx, topic_id);
    if (!t || index < 0 || index >= t->nparts) return;
    partition *p = &t->parts[index];
    p->log_start = log_start;
    p->end = p->hw = next;
}

/*
 * A client's assignment. Node ids this configuration no longer has (broker.ids or broker.count
 * changed) cannot hold replicas: the partition falls back to the default placement.
 */
static void load_replicas(void *ctx, int64_t topic_id, int32_t index, const int32_t *ids, int n) {
    srv *s = ctx;
    topic *t = topic_find_id(s, topic_id);
    if (!t || index < 0 || index >= t->nparts) return;
    for (int k = 0; k < n; k++) {
        bool known = false;
        for (int i = 0; i < s->nnodes; i++) known = known || s->nodes[i].id == ids[k];
        if (!known) {
            log_warn("topic %s partition %d: its stored replica assignment names broker %d, which this configuration "
                     "does not have; the default placement applies", t->name, index, ids[k]);
            return;
        }
    }
    topic_set_replicas(s, &t->parts[index], ids, n);
    t->parts[index].leader = topic_elect_leader(s, t, index); /* load_leader may override it */
}

/*
 * A stored leader (the admin API or a failover moved it): kept when that node still exists and
 * holds a replica, else the partition's preferred leader; either way the epoch goes on from the
 * stored one, never back.
 */
static void load_leader(void *ctx, int64_t topic_id, int32_t index, int32_t leader, int32_t leader_epoch) {
    srv *s = ctx;
    topic *t = topic_find_id(s, topic_id);
    if (!t || index < 0 || index >= t->nparts) return;
    partition *p = &t->parts[index];
    int at = -1;
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].id == leader) at = i;
    bool kept = at >= 0 && topic_is_replica(s, t, index, at);
    p->leader = kept ? at : topic_elect_leader(s, t, index);
    p->leader_epoch = kept ? leader_epoch : leader_epoch + 1;
}

int topic_move_leader(srv *s, topic *t, partition *p, int to) {
    if (p->leader == to) return 0;
    /* moved whatever storage says: clients are served by the new leader from now on */
    p->leader = to;
    p->leader_epoch++;
    return stor_leader_put(s->st, t->id, p->index, to == TOPIC_NO_LEADER ? -1 : s->nodes[to].id, p->leader_epoch);
}

/* Idempotent-producer state from storage: at start-up every partition's, after a failed commit the dirty ones'. */
static void record_producer(srv *s, int64_t topic_id, int32_t index, const stor_batch_meta *m, bool dirty_only) {
    topic *t = topic_find_id(s, topic_id);
    if (!t || index < 0 || index >= t->nparts || (dirty_only && !t->parts[index].dirty)) return;
    producer_state *ps = topic_producer(&t->parts[index], m->producer_id, true);
    if (m->base_sequence < 0) {
        /* a transaction marker: the producer's newest epoch, a new sequence history if it changed */
        if (ps->epoch != m->producer_epoch) ps->nbatches = 0;
        ps->epoch = m->producer_epoch;
    } else {
        topic_producer_record(ps, m->producer_epoch, m->base_sequence, m->last_sequence, m->base_offset, m->last_offset,
                              m->max_timestamp);
    }
    if (m->producer_id >= s->next_producer_id) s->next_producer_id = sat_add_i64(m->producer_id, 1);
}

static void load_producer(void *ctx, int64_t topic_id, int32_t index, const stor_batch_meta *m) {
    record_producer(ctx, topic_id, index, m, false);
}

static void reload_producer(void *ctx, int64_t topic_id, int32_t index, const stor_batch_meta *m) {
    record_producer(ctx, topic_id, index, m, true);
}

int topic_rollback(srv *s, partition **dirty, int n) {
    for (int i = 0; i < n; i++) {
        dirty[i]->end = dirty[i]->hw; /* what storage holds */
        dirty[i]->nproducers = 0;
        topic_txn_rollback(dirty[i]);
    }
    return stor_load_producer_batches(s->st, reload_producer, s);
}

int topic_load_all(srv *s) {
    stor_load_cb cb = {s, load_topic, load_config, load_partition, load_leader, load_replicas};
    if (stor_load(s->st, &cb) != 0) return -1;
    if (topic_txn_load(s) != 0) return -1;
    return stor_load_producer_state(s->st, load_producer, topic_txn_load_open, s);
}
