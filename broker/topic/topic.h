/*
 * topic: topics and their partitions, their settings, and the log path below
 * a request — appending batches with idempotent-producer checks, and retention.
 *
 * Owns: the topic registry (srv.topics, mirrored in storage), per-partition
 * offsets and producer state, topic configs and the policy on changing them
 * (topic_config.h, config_alter.h). May call: storage, protocol, the loop's
 * core (srv, clock, log) and, to drop a deleted topic's committed offsets,
 * group/. Called by the API handlers and srv; never by protocol/ or storage/.
 */
#ifndef TOPIC_H
#define TOPIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kp_batch.h"
#include "srv.h"

/* Idempotent producer state of one partition (Kafka's ProducerStateEntry). */
#define PRODUCER_BATCH_CACHE 5
typedef struct producer_batch {
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset;
    int64_t timestamp;
} producer_batch;

typedef struct producer_state {
    int64_t producer_id;
    int16_t epoch;
    int nbatches;                        /* newest last */
    producer_batch batches[PRODUCER_BATCH_CACHE];
} producer_state;

/*
 * A producer's transaction on one partition (Kafka's ongoing/unreplicated TxnMetadata): open
 * from its first transactional batch until its marker is durable. marker_offset is -1 while
 * undecided; a decided one still holds the last stable offset until the commit holding its
 * marker returns (topic_txn_settle), so read_committed never serves what a crash could undo.
 */
typedef struct txn_open_entry {
    int64_t producer_id;
    int64_t first_offset;
    int64_t marker_offset;
} txn_open_entry;

typedef struct partition {
    struct topic *topic;
    int32_t index;
    int32_t leader;          /* index into srv.nodes; TOPIC_NO_LEADER while every replica is down */
    int32_t leader_epoch;
    int32_t *replicas;       /* the assignment a client gave (node indices, preferred leader first); NULL: the default */
    int32_t nreplicas;
    int64_t log_start;
    int64_t end;             /* next offset to assign (log end offset) */
    int64_t hw;              /* committed end: what Fetch may serve */
    bool dirty;              /* appended since the last commit */
    producer_state *producers;
    int nproducers, cap_producers;
    rate_bucket quota_in, quota_out; /* MSK's per-partition ingress and egress (quota.c) */
    txn_open_entry *txns;    /* transactions open on the partition (txn_log.c), in no order */
    int ntxns, cap_txns;
    int64_t last_abort_offset; /* the newest aborted-index entry's marker offset; -1: none */
    int64_t clean_due_ms;    /* when kept tombstones pass their delete horizon (compact.c); -1: none known */
    int64_t clean_next_ms;   /* the background cleaner leaves the partition alone until then */
    uint64_t clean_sweep;    /* the last topic_cleaner_run_now sweep that compacted it */
} partition;

/* Effective topic settings; overrides keep what the user set, for DescribeConfigs. */
typedef struct topic_override {
    char *key, *value;
} topic_override;

typedef struct topic {
    int64_t id;
    char *name;
    uint8_t uuid[16];
    int32_t nparts;
    partition *parts;
    int64_t created_ms;
    int16_t replication_factor; /* as created; 0: the broker's default.replication.factor */
    topic_override *overrides;
    int noverrides;
    /* cached values of the settings the data path reads */
    int64_t max_message_bytes;
    int64_t min_insync_replicas;
    int64_t retention_ms;
    int64_t retention_bytes;
    bool log_append_time;
    bool compact;
    bool policy_delete;            /* cleanup.policy includes delete: retention applies */
    int codec;                     /* compression.type as a batch codec; -1: "producer" (kept as produced) */
    int64_t ts_before_ms, ts_after_ms; /* the CreateTime window (INT64_MAX: unbounded) */
    /* for GET /metrics (admin/prometheus.c); they start at 0 with the process, as Prometheus counters do */
    uint64_t bytes_in, records_in; /* batches appended (append.c); a failed commit does not take them back */
    uint64_t bytes_out;            /* batches fetch answers carried (api/fetch.c) */
    struct topic *next;
    name_link by_name;   /* in srv.topics_by_name (topic_find beyond a few topics) */
} topic;

/* ---- the registry (topics.c) ---- */
topic *topic_find(srv *s, const char *name, size_t len);
/*
 * 0 if `more` partitions fit under max.partitions and in one operation (at most 10000, as
 * KRaft), else POLICY_VIOLATION with the message in why.
 */
int16_t topic_partition_room(srv *s, int64_t more, char *why, size_t n);
topic *topic_find_uuid(srv *s, const uint8_t uuid[16]);
/* By storage row id (what the transaction coordinator keeps, as partitions move in memory). */
topic *topic_find_id(srv *s, int64_t id);
partition *topic_partition(srv *s, const char *name, size_t len, int32_t index);
/*
 * Create with overrides already validated; rf is the replication factor asked for (0: the
 * broker's default.replication.factor). Returns NULL and sets *why on storage failure.
 */
topic *topic_create(srv *s, const char *name, int32_t nparts, int16_t rf, const topic_override *ov, int nov,
                    const char **why);
/*
 * The checks Kafka and the active profile make on a topic about to be created, for every way one
 * is created (CreateTopics, topics.create, the admin API): the name (legal, not taken), then the
 * shape (partitions and replication factor, -1 taking the broker defaults and resolved in place;
 * max.partitions; each config under the topic policy). 0, or Kafka's error with its message in why.
 */
int16_t topic_check_new_name(srv *s, const char *name, size_t len, char *why, size_t n);
int16_t topic_check_new_shape(srv *s, int32_t *nparts, int16_t *rf, const topic_override *ov, int nov, char *why,
                              size_t n);
/*
 * Both checks, then topic_create and one log line naming `by` (what asked for it). NULL with
 * *code and why set when refused (KERR_UNKNOWN_SERVER_ERROR: storage failed).
 */
topic *topic_create_checked(srv *s, const char *name, int32_t nparts, int16_t rf, const topic_override *ov, int nov,
                            const char *by, int16_t *code, char *why, size_t n);
/*
 * topics.create (the compose convention of bitnami's and wurstmeister's KAFKA_CREATE_TOPICS):
 * "name[:partitions[:replication factor][:cleanup policy][:key=value]...],..." created at start
 * when missing, left as they are when present. -1 with the entry quoted in err when one is
 * malformed or refused.
 */
int topic_create_configured(srv *s, char *err, size_t errlen);
/*
 * Kafka's internal topics (topics_internal.c): __consumer_offsets and __transaction_state, by name
 * as Kafka's Topic.isInternal decides. topic_internal_ensure creates one when its partition
 * key (offsets.topic.num.partitions, transaction.state.log.num.partitions) is above 0 and it is
 * missing: -1 only when storing it failed.
 */
bool topic_is_internal(const char *name, size_t len);
#define TOPIC_OFFSETS "__consumer_offsets"
#define TOPIC_TXN_STATE "__transaction_state"
int topic_internal_ensure(srv *s, const char *name);
/* The replication factor Metadata and DescribeTopics report: as created, at most the broker count. */
int32_t topic_replication_factor(const srv *s, const topic *t);
int topic_delete(srv *s, topic *t);
void topic_free(topic *t);
/*
 * A commit of batch appends failed: the partitions appended to (still marked dirty) go back
 * to their committed end, and their idempotent-producer state is read again from storage.
 */
int topic_rollback(srv *s, partition **dirty, int n);
int topic_load_all(srv *s);
/* Grow t to count partitions, placed by default (topic_assign then gives them a client's assignment). */
int topic_add_partitions(srv *s, topic *t, int32_t count);
/* Set (value != NULL) or remove one override, refreshing the cached settings. */
int topic_set_config(srv *s, topic *t, const char *key, const char *value);

/*
 * Throughput quotas (quota.c): bytes sent to (produced: stored or refused, as Kafka counts them)
 * or returned from (fetched) p are charged to p's and the cluster's account (the cluster's alone
 * when p is NULL: a partition that does not exist). A request's charges meet in one quota_throttle: the
 * longest throttle any of them earned (in ms; the time the response carries and the connection
 * is muted for, 0 within quota) and the quota that set it, for the log.
 */
typedef struct quota_throttle {
    int32_t ms;
    const char *key;     /* the quota's config key; NULL while ms is 0 */
    int64_t rate;        /* its value, bytes per second */
    const partition *p;  /* for a partition quota: which */
} quota_throttle;
void quota_produced(srv *s, partition *p, int64_t bytes, quota_throttle *th);
void quota_fetched(srv *s, partition *p, int64_t bytes, quota_throttle *th);
/* "quota.partition.ingress.bytes.per.second=5242880 on orders-0": the quota th names. */
const char *quota_throttle_why(const quota_throttle *th, char *buf, size_t n);
/* Neither the partition's nor the cluster's egress account holds anything (now). */
bool quota_egress_idle(srv *s, partition *p);
/* Takes back a quota_fetched charge: a throttled fetch response goes out without its records. */
void quota_unfetched(srv *s, partition *p, int64_t bytes);
/*
 * n partitions created or deleted (max.partition.mutations.per.5.minutes). Returns
 * THROTTLING_QUOTA_EXCEEDED, not charging them, when the quota is already used up and the
 * request's version can carry that error (refusable); else charges them and returns 0. Either
 * way *throttle becomes at least the ms until the quota has room again (0 while it has).
 */
int16_t quota_mutations(srv *s, int64_t n, bool refusable, int32_t *throttle);
const char *topic_config_value(const srv *s, const topic *t, const char *key, bool *is_default);
/* Validate a topic name as Kafka does; returns a reason or NULL. */
const char *topic_name_invalid(const char *name, size_t len);

/*
 * Move p's leadership to node index `to` (TOPIC_NO_LEADER: offline) with its leader epoch
 * bumped, and store both (part of the open storage transaction) so a restart goes on from them.
 * 0, or -1 when storing failed (the move is made all the same).
 */
int topic_move_leader(srv *s, topic *t, partition *p, int to);

/* ---- replica assignments and leaders (assign.c) ---- */
#define TOPIC_NO_LEADER (-1)
#define TOPIC_MAX_REPLICAS CFG_MAX_BROKERS
/*
 * Partition i's replicas as node indices, the preferred leader first; returns how many. One
 * mechanism: a client's assignment when it gave one, else the default placement (the
 * topic's replication factor of consecutive brokers from a start spread round-robin).
 */
int32_t topic_replicas(const srv *s, const topic *t, int32_t i, int32_t out[TOPIC_MAX_REPLICAS]);
bool topic_is_replica(const srv *s, const topic *t, int32_t i, int node);
/* Partition i's in-sync replicas: those on brokers up (Metadata lists the same ones as its ISR). */
int32_t topic_in_sync(const srv *s, const topic *t, int32_t i);
/* Who should lead partition i now: its first replica up, as Kafka elects; TOPIC_NO_LEADER when none is. */
int32_t topic_elect_leader(const srv *s, const topic *t, int32_t i);

/* One partition's assignment as a client sends it: node ids, the preferred leader first. */
typedef struct topic_assignment {
    int32_t partition;
    const int32_t *ids;
    int32_t n;
} topic_assignment;
/*
 * Kafka's checks of the manual assignments of CreateTopics (KRaft's ReplicationControlManager):
 * no partition twice, each assignment valid (topic_assignment_check, every one as long as the
 * first), partitions 0..n-1. 0, or INVALID_REPLICA_ASSIGNMENT with Kafka's message in why.
 */
int16_t topic_check_create_assignments(const srv *s, const topic_assignment *a, int32_t n, char *why, size_t len);
/*
 * One assignment for partition `partition`: not empty, only registered brokers (down ones count),
 * none twice, rf replicas when rf > 0, and at least one replica up. 0 or INVALID_REPLICA_ASSIGNMENT.
 */
int16_t topic_assignment_check(const srv *s, const topic_assignment *a, int32_t rf, char *why, size_t len);
/*
 * Partitions [from, from + n) were just created: a[k] (checked above) becomes partition from + k's
 * assignment, stored (part of the open storage transaction), and its first replica up leads it.
 * 0, or -1 when storing failed (stor_errmsg).
 */
int topic_assign(srv *s, topic *t, int32_t from, const topic_assignment *a, int32_t n);
/* Inside the topic module: p's replicas in memory only (node ids this configuration has; loading). */
void topic_set_replicas(const srv *s, partition *p, const int32_t *ids, int32_t n);

/* ---- the log (append.c, retention.c, log_start.c) ---- */
producer_state *topic_producer(partition *p, int64_t producer_id, bool create);
void topic_producer_record(producer_state *ps, int16_t epoch, int32_t first_seq, int32_t last_seq, int64_t first_offset,
                           int64_t last_offset, int64_t timestamp);
/*
 * Append one batch that kp_batch_validate accepted. Returns 0 or a Kafka
 * error code with *why; on success *base_offset is where it landed (for a
 * duplicate idempotent batch: where it landed the first time).
 */
int16_t topic_append(srv *s, partition *p, uint8_t *batch, size_t size, const kp_batch *b, int64_t *base_offset,
                     int64_t *append_time, const char **why);
void topic_enforce_retention(srv *s);

/*
 * What one batch may decompress to: Kafka sets no bound, but a broker that looks inside batches
 * must not let a few compressed bytes of a hostile client take its memory and its loop.
 * TOPIC_MAX_DECOMPRESSED bounds stored batches (the cleaner, time lookups); a produced batch
 * gets topic_max_decompressed: TOPIC_DECOMPRESSED_FACTOR times the topic's max.message.bytes,
 * at least TOPIC_MIN_DECOMPRESSED, at most TOPIC_MAX_DECOMPRESSED (1 MiB, the default, allows
 * 32 MiB: a 32:1 ratio is beyond what record data compresses to with any of Kafka's codecs
 * short of deliberately repetitive bytes).
 */
#define TOPIC_MAX_DECOMPRESSED ((size_t)256 << 20)
#define TOPIC_MIN_DECOMPRESSED ((size_t)16 << 20)
#define TOPIC_DECOMPRESSED_FACTOR 32
size_t topic_max_decompressed(const topic *t);
/* The refused records a produce answer lists for one batch (record_errors); more are counted only. */
#define TOPIC_MAX_RECORD_ERRORS 1000
typedef struct topic_checked {
    uint8_t *batch; /* the batch rebuilt in the topic's codec (free it), or NULL: append it as produced */
    size_t size;
} topic_checked;
/* One refused record: its index in the batch and Kafka's message for it (the produce response's record_errors). */
typedef void (*topic_record_error_fn)(void *ctx, int32_t index, const char *msg);
/*
 * The record pass of Kafka's LogValidator (validate.c), made when p's topic needs one: keys on
 * a compacted topic, the CreateTime window, recompression to compression.type; on other topics
 * a compressed batch's records are read to see that they decode. Returns 0, with out->batch set
 * when the batch was rebuilt; or INVALID_RECORD / INVALID_TIMESTAMP after calling fn for each
 * bad record (the first TOPIC_MAX_RECORD_ERRORS), or CORRUPT_MESSAGE / INVALID_RECORD for a
 * batch whose records cannot be read, or MESSAGE_TOO_LARGE for one whose records would
 * decompress past topic_max_decompressed, with *why.
 */
int16_t topic_check_records(srv *s, partition *p, const kp_batch *b, topic_checked *out, topic_record_error_fn fn,
                            void *ctx, const char **why);
/*
 * topic_check_records for a request that can wait (validate_async.c): a batch whose pass costs
 * about a millisecond or less is checked at once and its code returned; a bigger one is copied
 * and checked on libuv's threadpool: TOPIC_CHECK_PENDING with *job, then later, on the loop, fn
 * for each refused record and done with the code, the rebuilt batch (the callee's to free) and
 * why (valid during the call), unless topic_check_cancel(*job) came first (then neither is
 * called, and the job is freed when its worker ends). The caller re-checks on done whatever may
 * have changed meanwhile (the topic, the partition, the transaction).
 */
#define TOPIC_CHECK_PENDING (-1)
typedef struct topic_check_job topic_check_job;
typedef void (*topic_check_done_fn)(srv *s, void *ctx, int16_t code, topic_checked *out, const char *why);
int16_t topic_check_records_async(srv *s, partition *p, const kp_batch *b, topic_checked *out,
                                  topic_record_error_fn fn, void *ctx, const char **why, topic_check_done_fn done,
                                  topic_check_job **job);
void topic_check_cancel(topic_check_job *job);

/*
 * Move p's log start offset forward to `to` (never back): stored, and every batch wholly below
 * it deleted; a batch holding `to` stays whole, as Kafka keeps the segment (reads start at it,
 * consumers skip the records before `to`). Part of the open storage transaction. 0 or -1.
 */
int topic_advance_log_start(srv *s, partition *p, int64_t to);
/*
 * DeleteRecords on one partition, as Kafka's leader applies it: offset -1 means the high
 * watermark; a negative offset or one above the high watermark is OFFSET_OUT_OF_RANGE; a topic
 * whose cleanup.policy lacks "delete" is POLICY_VIOLATION; otherwise the log start becomes
 * max(current, offset). Returns 0 or the error code with the reason in why; *low is the log
 * start offset afterwards (the response's low watermark).
 */
int16_t topic_delete_records(srv *s, partition *p, int64_t offset, int64_t *low, char *why, size_t n);

/* ---- the log cleaner (compact.c) ---- */
typedef struct topic_cleaner topic_cleaner;
/* Start the cleaner's timer (nothing when log.cleaner.enable is false). */
void topic_cleaner_start(srv *s);
/* A storage commit failed: a running pass ends (its later rewrites may depend on the lost ones). */
void topic_cleaner_abort(srv *s, const char *why);
void topic_cleaner_stop(srv *s);
/*
 * Run passes now, each to its end, until no partition is due or max_passes ran (tests; the
 * admin API's POST /v1/compaction). force: a partition with any uncompacted bytes is due,
 * whatever min.cleanable.dirty.ratio says. Returns the passes completed, or -1 without a cleaner.
 */
int topic_cleaner_run_now(srv *s, int max_passes, bool force);

/* ---- transactions on the log (txn_log.c) ---- */
/*
 * The last stable offset: the first offset of the oldest transaction not yet durably decided,
 * clamped to [log start, high watermark]; the high watermark when there is none.
 */
int64_t topic_lso(const partition *p);

/*
 * ListOffsets by time (time_lookup.c): the first record at or past the log start whose timestamp
 * reaches ts, or the first carrying the partition's largest timestamp; an answer at or past upto
 * (the high watermark or the last stable offset) is none. 1 found, 0 none, -1 storage could not
 * read a batch (logged).
 */
typedef struct topic_time_hit {
    int64_t offset, timestamp;
    int32_t leader_epoch;    /* of the batch holding the record */
} topic_time_hit;
int topic_offset_for_time(srv *s, partition *p, int64_t ts, int64_t upto, topic_time_hit *hit);
int topic_offset_of_max_timestamp(srv *s, partition *p, int64_t upto, topic_time_hit *hit);
/* The producer's undecided transaction on p, or NULL. */
txn_open_entry *topic_txn_open(partition *p, int64_t producer_id);
/*
 * Write a COMMIT or ABORT marker for the producer's transaction (Kafka's control batch) at p's
 * end, with the coordinator's epoch for the producer. An ABORT of a transaction that had data
 * here adds an aborted-index entry. The marker bypasses storage.min.free.bytes: a coordinator
 * must always be able to finish what it started. Part of the open storage transaction; 0 or
 * KAFKA_STORAGE_ERROR with *why.
 */
int16_t topic_append_marker(srv *s, partition *p, int64_t producer_id, int16_t epoch, bool commit,
                            int32_t coordinator_epoch, const char **why);
/*
 * The per-iteration commit (commit.c): a partition appended to is marked dirty, and its batches
 * go out with the next commit, after which its high watermark advances. topic_commit_now commits
 * now (normally once per loop iteration); -1 if the commit failed (then either survived: the
 * appends are undone and their held answers get storage errors; or fatal: srv_fail_stop).
 */
void topic_mark_dirty(srv *s, partition *p);
int topic_commit_now(srv *s);
/*
 * Whether `need` more bytes fit in storage while leaving storage.min.free.bytes free (the
 * file system's free space plus the database's free pages); *free_bytes is what was free
 * (-1 when not checked: :memory:, or the limit is 0).
 */
bool topic_storage_room(srv *s, size_t need, int64_t *free_bytes);
/*
 * A parked reader (a Fetch long poll, api/fetch.c) waiting for committed data. After each commit
 * that advanced a high watermark, every waiter is asked `ready`; those that are leave the list
 * and get `wake` (which may answer and so start its connection's next request). topic_wake_all
 * wakes every waiter (shutdown, the admin API's reset). Embed it; unwait is a no-op when woken.
 */
typedef struct topic_waiter {
    struct topic_waiter *prev, *next;
    bool waiting;
    bool (*ready)(srv *s, struct topic_waiter *w);
    void (*wake)(srv *s, struct topic_waiter *w);
} topic_waiter;
void topic_wait(srv *s, topic_waiter *w);
void topic_unwait(srv *s, topic_waiter *w);
void topic_wake_all(srv *s);
/* After a commit: transactions whose marker is now durable no longer hold the last stable offset. */
void topic_txn_settle(partition *p);
/*
 * The aborted transactions a read_committed fetch of [from, upper) must report: entries whose
 * marker is at or past from and whose first offset is below upper, as Kafka's transaction
 * index answers. fn gets each; 0 or -1 (storage error).
 */
typedef void (*topic_aborted_fn)(void *ctx, int64_t producer_id, int64_t first_offset);
int topic_aborted_read(srv *s, partition *p, int64_t from, int64_t upper, topic_aborted_fn fn, void *ctx);
/* Start-up: the aborted index's newest entries (the open transactions come with the producer state). */
int topic_txn_load(srv *s);
/* Inside the topic module: a transactional batch appended (append.c), a failed commit undone (topics.c). */
void topic_txn_begin(partition *p, int64_t producer_id, int64_t first_offset);
/* stor_txn_open_fn for stor_load_producer_state: an undecided transaction found at start-up (ctx: srv). */
void topic_txn_load_open(void *ctx, int64_t topic_id, int32_t index, int64_t producer_id, int64_t first_offset);
void topic_txn_rollback(partition *p);

#endif
