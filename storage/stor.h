/*
 * stor: everything mskmock keeps, in one SQLite database (WAL mode).
 *
 * Only the event-loop thread calls into stor. Writes accumulate in one open
 * transaction that the broker commits once per loop iteration
 * (stor_commit), so many produce requests share one commit; a produce is
 * acknowledged only after the commit that holds its batch returned.
 *
 * The schema is versioned (PRAGMA user_version) and migrated forward on
 * open; a database newer than this binary is refused.
 *
 * Errors: functions return -1 and leave the reason in stor_errmsg. Callbacks
 * (load, batch read, producer batches) run while their statement is being
 * stepped: they may call other stor read functions, but not the function
 * that called them, and must not write.
 */
#ifndef STOR_H
#define STOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct stor stor;

/*
 * PRAGMA synchronous in WAL mode. All three keep every commit across a
 * process crash (kill -9). OFF: an OS crash or power cut may lose commits or
 * corrupt the database. NORMAL: a power cut may lose the newest commits but
 * never corrupts. FULL: every commit is on disk before stor_commit returns.
 */
typedef enum stor_sync { STOR_SYNC_OFF, STOR_SYNC_NORMAL, STOR_SYNC_FULL } stor_sync;

/*
 * SQLite's process-wide settings, before anything in the process opens a database (after that
 * SQLite refuses them and keeps its defaults, which are correct, only slower). Returns 0, or -1
 * when refused.
 */
int stor_process_init(void);
/*
 * Open (creating if needed) the database at path; ":memory:" gives a
 * throwaway store. Returns 0, or -1 with a reason in err.
 */
int stor_open(stor **out, const char *path, stor_sync sync, char *err, size_t errlen);
/*
 * PRAGMA quick_check, for at most budget_ms: 0 when the database is sound, 1 when time ran
 * out first (or budget_ms <= 0), -1 with what is damaged in err.
 */
int stor_check(stor *s, int64_t budget_ms, char *err, size_t errlen);
void stor_close(stor *s);
int stor_schema_version(stor *s);

/*
 * Copy what is readable of the damaged database at from into a new database at to (which
 * must not exist), then make it consistent; each step is reported as one line to fn. Returns
 * 0 when to was written (possibly with rows lost to the damage; the report says which), -1
 * with the reason in err, and to removed.
 */
typedef void (*stor_salvage_report)(void *ctx, const char *line);
int stor_salvage(const char *from, const char *to, stor_salvage_report fn, void *ctx, char *err, size_t errlen);
/*
 * The same, with every partition's index (batch and segment rows, log start, transaction index)
 * rebuilt from its segment files whatever the copy kept: mskmock --rebuild-index.
 */
int stor_salvage_rebuild(const char *from, const char *to, stor_salvage_report fn, void *ctx, char *err,
                         size_t errlen);

/*
 * One process per data directory (stor_dir_lock.c): an exclusive, non-blocking flock on
 * DIR/.lock (made, with DIR itself when create, if missing), the holder's pid written into it.
 * Take it before opening anything in DIR and keep *fd for the process's life; the kernel
 * releases it on exit, even after kill -9. ":memory:" takes none (0, *fd -1). Returns 0 when
 * held; 1 when another process (or another descriptor) holds it, with the directory, the
 * holder's pid when known and what to do in err; 2 when the file system cannot lock (err says
 * so; the caller may go on unlocked); -1 when DIR or the file cannot be made or opened (err).
 */
int stor_dir_lock(const char *dir, bool create, int *fd, char *err, size_t errlen);
void stor_dir_unlock(int fd);

/*
 * Write functions open a transaction on first use (BEGIN IMMEDIATE);
 * stor_commit commits it. Reads see the uncommitted writes. Closing without
 * a commit discards them.
 */

/*
 * Commit the open write transaction, if any (0 when none is open). Returns 0
 * or -1; on -1 the broker must not ack, and every write since the previous
 * commit is rolled back (the broker's in-memory state no longer matches).
 * A write error that made SQLite drop the whole transaction (disk full, I/O)
 * also makes the next stor_commit fail, and writes fail until it is called.
 */
int stor_commit(stor *s);
bool stor_in_txn(stor *s);
/*
 * What the open transaction writes, as STOR_TXN_* bits, so that the broker knows whether a
 * failed commit can be undone in memory: BATCHES (the log and its transaction index; it can),
 * OFFSETS (committed offsets), GROUPS (group state and members), OTHER (topics, configs,
 * retention, deletes), TXNS (the transaction coordinator's state; see "transactions").
 * Read it before stor_commit: a failed commit clears it with the transaction.
 */
enum { STOR_TXN_BATCHES = 1, STOR_TXN_OFFSETS = 2, STOR_TXN_GROUPS = 4, STOR_TXN_OTHER = 8 };
unsigned stor_txn_kinds(stor *s);
/* Bytes of the database's free pages, which new writes reuse before the file grows. */
int64_t stor_free_page_bytes(stor *s);
/* Number of commits so far: a produce waits until this passes the value it saw when appending. */
uint64_t stor_commit_seq(stor *s);
/*
 * Rows written so far on the loop's connection (SQLite's total changes): a request that saw
 * another value when it started wrote, or was written for, since; its answer waits for the
 * open transaction's commit (req_respond).
 */
int64_t stor_change_count(stor *s);

/*
 * Record bytes of a database on disk live in segment files next to it (stor_segments.c); a
 * segment is closed once the next batch would take it past bytes (storage.segment.bytes).
 */
void stor_seg_set_bytes(stor *s, int64_t bytes);
/*
 * storage.verify (stor_verify.c). START: before stor_recover, every segment file the batch rows
 * name is checked against them: it exists and is long enough, the rows overlap neither in
 * offsets nor in bytes, and the newest batch of each file reads back as its row's with its
 * CRC holding. FULL: every batch so at start, and every batch a read serves (a read stops at
 * one that fails: stor_read_bad_batch). OFF: neither.
 */
typedef enum stor_verify_mode { STOR_VERIFY_OFF, STOR_VERIFY_START, STOR_VERIFY_FULL } stor_verify_mode;
typedef struct stor_verify_stats {
    int64_t rows, segments, batches_read, bytes_read;
} stor_verify_stats;
/*
 * The check (after stor_check, before stor_recover; it writes nothing), and the mode reads use
 * from now on. 0 when every file matches; 1 when one does not, with the file and what is wrong
 * in err; -1 when the check itself failed (err).
 */
int stor_verify(stor *s, stor_verify_mode mode, stor_verify_stats *stats, char *err, size_t errlen);
/* The last failed read stopped at a batch whose bytes are not the batch its row names (storage.verify=full). */
bool stor_read_bad_batch(stor *s);
/*
 * After stor_open (and stor_check): cut segment bytes no commit holds, check after a reboot
 * what a power cut may have lost, delete dead segments. stor_open itself writes nothing, so a
 * start refused on damage leaves the files as they were. 0 or -1 (stor_errmsg).
 */
int stor_recover(stor *s);
/*
 * Where storage's lines for the operator go (files it moved aside rather than delete,
 * stor_orphans.c): fn(ctx, line) on the thread calling storage. Lines made before this is set
 * (stor_recover's) are held and given to fn when it is.
 */
typedef void (*stor_notice_fn)(void *ctx, const char *line);
void stor_set_notice(stor *s, stor_notice_fn fn, void *ctx);
/* Bytes written to segment files and how many there are (*count); -1 when unknown. */
int64_t stor_seg_bytes(stor *s, int64_t *count);
/* What stor_recover's check after a reboot did: batch rows removed (returned), bytes read back. */
int64_t stor_seg_recovery(stor *s, int64_t *verified_bytes);
const char *stor_errmsg(stor *s);

/* ---- settings kept with the data (the generated cluster uuid) ---- */

/* 1 and the value in buf when the key is set, 0 when not, -1 on error or when n is too small. */
int stor_setting_get(stor *s, const char *key, char *buf, size_t n);
/* Insert or replace; part of the open write transaction. */
int stor_setting_put(stor *s, const char *key, const char *value);

/*
 * What the background checkpoint thread (which copies the WAL into the
 * database file) has done; all zero without one (:memory:). The thread cannot
 * log, so the broker reports failures from these counters.
 */
typedef struct stor_ckpt_stats {
    uint64_t runs, failures, restarts; /* restarts: the loop's own RESTART of a long WAL */
    int wal_frames, backfilled; /* of the latest checkpoint: frames in the WAL, frames copied to the database */
    int restart_frames;         /* the loop restarts a WAL of more frames than this (16 MiB of pages) */
    char last_error[160];
} stor_ckpt_stats;
void stor_checkpoint_stats(stor *s, stor_ckpt_stats *out);
/*
 * After a commit's answers are out: restart a WAL that has grown long (a RESTART checkpoint,
 * which syncs on the calling thread). Not part of stor_commit, so the answers of the commit
 * that found the WAL long never wait for it.
 */
void stor_wal_restart_if_long(stor *s);

/* ---- topics ---- */

typedef struct stor_topic {
    int64_t id;          /* row id, stable for the topic's life */
    const char *name;
    uint8_t uuid[16];    /* Kafka topic id */
    int32_t partitions;
    int64_t created_ms;
    int16_t replication_factor; /* as created; 0: not recorded (the broker's default applies) */
} stor_topic;

/* Creates topic + its partitions (log start 0, next offset 0). Sets t->id. Fails if the name exists. */
int stor_topic_create(stor *s, stor_topic *t);
/* Removes the topic with its partitions, configs and batches; -1 if there is no such topic. */
int stor_topic_delete(stor *s, int64_t topic_id);

/*
 * The reserve (stor_reserve.c): room set aside on the database's disk so that a topic can be
 * deleted when the disk is full. keep: allocates it if it is missing, true when it is there;
 * release: frees it, true when there was one to free.
 */
#define STOR_RESERVE_BYTES (8 << 20)
bool stor_reserve_keep(stor *s);
bool stor_reserve_release(stor *s);
/* Adds partitions [old count, new_count); new_count must exceed the old count. */
int stor_topic_add_partitions(stor *s, int64_t topic_id, int32_t new_count);
/* value NULL deletes the override. */
int stor_topic_config_set(stor *s, int64_t topic_id, const char *key, const char *value);

/*
 * Load callbacks, called once per row, topics first, then configs, then
 * partitions, each in (topic id, key or partition) order. A NULL callback
 * skips its rows. Strings are valid only during the call.
 */
typedef struct stor_load_cb {
    void *ctx;
    void (*topic)(void *ctx, const stor_topic *t);
    void (*config)(void *ctx, int64_t topic_id, const char *key, const char *value);
    /* next_offset = 1 + the last stored offset (or log_start when empty);
       the newest max timestamp is not passed: ask stor_max_timestamp */
    void (*partition)(void *ctx, int64_t topic_id, int32_t partition, int64_t log_start, int64_t next_offset);
    /* after every partition: those whose leader was stored (stor_leader_put); NULL skips them */
    void (*leader)(void *ctx, int64_t topic_id, int32_t partition, int32_t leader, int32_t leader_epoch);
    /* after partitions, before leaders: stored replica assignments (stor_replicas_put); NULL skips them */
    void (*replicas)(void *ctx, int64_t topic_id, int32_t partition, const int32_t *ids, int n);
} stor_load_cb;
int stor_load(stor *s, const stor_load_cb *cb);
/*
 * A partition's leader (a node id; the caller's meaning) and leader epoch, kept until the
 * partition is deleted; part of the open write transaction.
 */
int stor_leader_put(stor *s, int64_t topic_id, int32_t partition, int32_t leader, int32_t leader_epoch);
/*
 * A partition's replica assignment as a client gave it: n (1..STOR_MAX_REPLICAS) node ids, the
 * preferred leader first; kept until the partition is deleted; part of the open write transaction.
 */
#define STOR_MAX_REPLICAS 64
int stor_replicas_put(stor *s, int64_t topic_id, int32_t partition, const int32_t *ids, int n);

/* ---- record batches (kept exactly as produced, header already patched) ---- */

typedef struct stor_batch_meta {
    int64_t base_offset;
    int64_t last_offset;
    int64_t max_timestamp;
    int64_t producer_id;     /* -1 when not idempotent */
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t last_sequence;
    int32_t records_count;
    bool transactional; /* a transactional data batch (not a marker): what opens a transaction at start-up */
} stor_batch_meta;

/*
 * m->base_offset must be past every stored offset of the partition (batches
 * never overlap; reads depend on it), and the partition must exist.
 */
int stor_batch_append(stor *s, int64_t topic_id, int32_t partition, const stor_batch_meta *m, const void *data,
                      size_t len);

/*
 * Read batches of a partition whose last offset is >= from and base offset <
 * upto (the high watermark), in offset order, until the callback returns
 * false. The data pointer is valid only during the callback.
 */
typedef bool (*stor_batch_fn)(void *ctx, const stor_batch_meta *m, const void *data, size_t len);
int stor_batch_read(stor *s, int64_t topic_id, int32_t partition, int64_t from, int64_t upto, stor_batch_fn fn,
                    void *ctx);
/*
 * The same batches, read straight into the caller's memory (Fetch): dest
 * answers where a batch's len bytes go, or NULL to stop before it. Each
 * batch is copied once into dest: read from its segment file (pread), or for
 * a row kept inline (in-memory database, rows from before migration 8) from
 * SQLite's pages.
 */
typedef void *(*stor_batch_dest_fn)(void *ctx, const stor_batch_meta *m, size_t len);
int stor_batch_read_into(stor *s, int64_t topic_id, int32_t partition, int64_t from, int64_t upto,
                         stor_batch_dest_fn dest, void *ctx);

/*
 * ListOffsets by timestamp, as Kafka's time index: the base offset and max
 * timestamp of the first batch (by offset) whose max_timestamp >= ts, where
 * the search for the first *record* with timestamp >= ts starts
 * (broker/topic/time_lookup.c reads the records). 1 found, 0 none, -1 error.
 */
int stor_offset_for_time(stor *s, int64_t topic_id, int32_t partition, int64_t ts, int64_t *offset,
                         int64_t *timestamp);
/*
 * The batch with the largest max_timestamp (earliest on ties): its last
 * offset and that timestamp; the record carrying it is found by reading the
 * batch (broker/topic/time_lookup.c). 1 found, 0 none, -1 error.
 */
int stor_max_timestamp(stor *s, int64_t topic_id, int32_t partition, int64_t *offset, int64_t *timestamp);

/*
 * Total stored bytes of a partition (retention.bytes, DescribeLogDirs); -1 if there is no such
 * partition. Sums the batches appended since the last producer snapshot (up to 4,096): a loop
 * taking batches off one by one subtracts stor_bytes_below instead of asking again.
 */
int64_t stor_partition_bytes(stor *s, int64_t topic_id, int32_t partition);

/* The bytes of the batches stor_log_start_set(s, topic_id, partition, offset) would delete; -1 on error. */
int64_t stor_bytes_below(stor *s, int64_t topic_id, int32_t partition, int64_t offset);

/*
 * Move the log start offset forward (never back) and delete every batch that
 * lies wholly below it, with the aborted-transaction entries whose marker is
 * below it. Returns the number of batches deleted, or -1.
 */
int stor_log_start_set(stor *s, int64_t topic_id, int32_t partition, int64_t log_start);
/* ---- the log cleaner's writes (compaction); kind STOR_TXN_BATCHES ---- */
/*
 * Replace the bytes of the batch at base_offset with a compacted copy (same offsets and producer
 * columns; fewer records). 1 replaced, 0 when there is no such batch (retention or DeleteRecords
 * removed it meanwhile: nothing is written), -1 error.
 */
int stor_batch_replace(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset, int64_t max_timestamp,
                       int32_t records_count, const void *data, size_t len);
/* Delete the batch at base_offset (all its records were compacted away). 0 (also when none) or -1. */
int stor_batch_delete(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset);
/*
 * The base offset of the producer's newest data batch (not a marker), which the cleaner keeps,
 * emptied if need be, because the producer's state is read back from it. 1 found, 0 none, -1.
 */
int stor_producer_last_data(stor *s, int64_t topic_id, int32_t partition, int64_t producer_id, int64_t *base_offset);
typedef struct stor_clean_state {
    int64_t cleaned_to;       /* the cleaner's checkpoint */
    int64_t bytes;            /* the partition's bytes */
    int64_t dirty_bytes;      /* bytes of the batches at or past cleaned_to */
    int64_t first_dirty_ts;   /* max timestamp of the first batch at or past cleaned_to; -1 when none */
} stor_clean_state;
int stor_clean_state_get(stor *s, int64_t topic_id, int32_t partition, stor_clean_state *out);
int stor_cleaned_set(stor *s, int64_t topic_id, int32_t partition, int64_t offset);

/*
 * A compaction pass off the loop (issue 37): what it reads and writes before the loop swaps its
 * result in. stor_cleaning_new is called on the loop; the reads and the cleaned file's writes
 * may then run on one other thread at a time, touching nothing of s: with a database on disk the
 * reads go through a connection of their own (WAL readers never block the loop's writer) and
 * segment files opened by the pass, and their errors stay in the object (stor_cleaning_err).
 * An in-memory database has no file a second connection could open: its passes read through s
 * and must stay on the loop (stor_cleaning_off_loop says which).
 */
typedef struct stor_cleaning stor_cleaning;
/* A batch as the pass read it: seg -1 when its bytes are in its row (no segment). */
typedef struct stor_clean_batch {
    stor_batch_meta m;
    int64_t seg, pos, size;
} stor_clean_batch;
typedef bool (*stor_clean_fn)(void *ctx, const stor_clean_batch *b, const void *data, size_t len);
stor_cleaning *stor_cleaning_new(stor *s, int64_t topic_id, int32_t partition, uint64_t seq);
bool stor_cleaning_off_loop(const stor_cleaning *c);
const char *stor_cleaning_err(const stor_cleaning *c);
/* The batches overlapping [from, upto), in offset order, until fn returns false. 0, or -1 (err). */
int stor_cleaning_read(stor_cleaning *c, int64_t from, int64_t upto, stor_clean_fn fn, void *ctx);
/* Append to the pass's cleaned file (<partition dir>/<seq>.cleaned, created on the first write). */
int stor_cleaning_write(stor_cleaning *c, const void *data, size_t len, int64_t *pos);
/* The cleaned file's bytes on disk (fdatasync unless storage.sync=off), its reads closed. 0 or -1. */
int stor_cleaning_finish(stor_cleaning *c);
int64_t stor_cleaning_size(const stor_cleaning *c);
/*
 * On the loop, into the open transaction: the cleaned file becomes the partition's newest
 * segment (a hard link <id>.log, its segments row). The batch moves follow; the commit makes
 * it all one step. *seg: its id. 0 or -1 (stor_errmsg).
 */
int stor_cleaning_adopt(stor *s, stor_cleaning *c, int64_t *seg);
/*
 * Point the batch at base_offset of c's partition, if it is still where the pass read it (old_seg, old_pos; -1:
 * in its row), at new_pos of segment seg, with the rewritten fields. 1 moved, 0 the batch changed
 * or went meanwhile (left alone), -1 error.
 */
int stor_batch_move(stor *s, stor_cleaning *c, int64_t base_offset, int64_t old_seg, int64_t old_pos, int64_t seg,
                    int64_t new_pos, int64_t size, int64_t max_timestamp, int32_t records_count);
/* Delete the batch at base_offset if it is still where the pass read it. 1, 0 (changed or gone), -1. */
int stor_batch_delete_at(stor *s, stor_cleaning *c, int64_t base_offset, int64_t old_seg, int64_t old_pos);
/* The pass is over: its cleaned file's own name goes (after the commit that adopted it, or unadopted). */
void stor_cleaning_free(stor_cleaning *c);
/*
 * Who removes a dead segment's file. Unset, it is unlinked at once after the commit that killed
 * it; set, it is renamed <id>.log.deleted (cheap) and handed to fn, which removes it whenever it
 * likes: freeing a 16 MiB file's page cache took the loop 3 to 5 ms per segment, and a
 * compaction's swap kills every old segment of its partition at once. Kafka deletes segments so
 * too (LocalLog.scala: DeletedFileSuffix, deleteSegmentFiles after file.delete.delay.ms). A
 * .deleted file a kill left is removed at the next start.
 */
typedef void (*stor_unlink_fn)(void *ctx, const char *path);
void stor_set_unlinker(stor *s, stor_unlink_fn fn, void *ctx);

/* Oldest batch of a partition: base/last offset and max timestamp. 1 found, 0 empty, -1 error. */
int stor_oldest_batch(stor *s, int64_t topic_id, int32_t partition, stor_batch_meta *m);

/*
 * Idempotent producer state is rebuilt from the newest 5 data batches of each
 * (partition, producer): fn gets them oldest first, producers in (topic,
 * partition, producer id) order. Batches with producer_id < 0 are skipped.
 * Transaction markers (producer_id >= 0, base_sequence -1) do not count as
 * data batches: when a producer's newest batch is a marker, fn gets it last
 * (it carries the producer's newest epoch).
 */
typedef void (*stor_producer_fn)(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m);
int stor_load_producer_batches(stor *s, stor_producer_fn fn, void *ctx);
/*
 * The same, and each producer's undecided transaction per partition: the first offset of its
 * first transactional data batch past its newest marker (Kafka's
 * ProducerStateEntry.currentTxnFirstOffset), from the snapshot and the batch rows past it, in
 * the same fold. The last stable offset is the least of them.
 */
typedef void (*stor_txn_open_fn)(void *ctx, int64_t topic_id, int32_t partition, int64_t producer_id,
                                 int64_t first_offset);
int stor_load_producer_state(stor *s, stor_producer_fn fn, stor_txn_open_fn open_fn, void *ctx);

/* ---- consumer groups: committed offsets and group state ---- */

/*
 * Writes join the open transaction like batches do: durable at the next
 * stor_commit, gone if the store is closed before it. Strings and blobs
 * handed to load callbacks are valid only during the call.
 */

typedef struct stor_offset {
    const char *group_id;
    const char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;     /* -1: unknown */
    const char *metadata;     /* never NULL ("" when none); a string that may hold NUL bytes: */
    int32_t metadata_len;     /* its length in bytes (Kafka keeps all of them) */
    int64_t commit_ms;
    int64_t expire_ms;        /* -1: expiry follows the group rules, else an absolute time (OffsetCommit v2-v4) */
} stor_offset;

/*
 * Insert or replace the commit of (group, topic, partition). A NULL metadata is stored (and loaded) as "";
 * a loaded metadata is NUL-terminated after its metadata_len bytes.
 */
int stor_offset_commit(stor *s, const stor_offset *o);
/* Delete one committed offset (OffsetDelete, expiry). Returns rows deleted or -1. */
int stor_offset_delete(stor *s, const char *group_id, const char *topic, int32_t partition);
/* Delete every offset of a group (DeleteGroups). Returns rows deleted or -1. */
int stor_offsets_delete_group(stor *s, const char *group_id);
/* Delete every offset of a topic in every group (the topic was deleted). Returns rows deleted or -1. */
int stor_offsets_delete_topic(stor *s, const char *topic);
/* Every committed offset, ordered by group, topic, partition. */
typedef void (*stor_offset_fn)(void *ctx, const stor_offset *o);
int stor_offsets_load(stor *s, stor_offset_fn fn, void *ctx);

typedef struct stor_group {
    const char *group_id;
    const char *protocol_type;   /* NULL: none (simple group) */
    const char *protocol_name;   /* NULL: none selected */
    int32_t generation;
    const char *leader;          /* member id, NULL when none */
    int32_t state;               /* the coordinator's state enum, stored as is */
    int64_t state_ms;            /* when the group entered that state (offset expiry of Empty groups) */
} stor_group;

/*
 * client_id and client_host: a NULL is stored (and loaded) as "". A blob of
 * length 0 may be NULL when saved; loaded, metadata and assignment are never
 * NULL (a zero-length blob points at an empty buffer).
 */
typedef struct stor_member {
    const char *member_id;
    const char *instance_id;     /* NULL: dynamic member */
    const char *client_id;
    const char *client_host;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    const void *metadata;        /* subscription for the selected protocol */
    size_t metadata_len;
    const void *assignment;
    size_t assignment_len;
} stor_member;

/*
 * Replace the group's row and all its member rows (one call per state change worth keeping).
 * All or nothing: on -1 (e.g. a member id given twice) the stored group is left as it was.
 */
int stor_group_save(stor *s, const stor_group *g, const stor_member *members, int nmembers);
/* Returns 0 (also when no such group was saved, e.g. a simple group) or -1. */
int stor_group_delete(stor *s, const char *group_id);   /* the group and its members, not its offsets */
/* Every group, each followed by its members (in the order they were saved). */
typedef struct stor_group_load_cb {
    void *ctx;
    void (*group)(void *ctx, const stor_group *g);
    void (*member)(void *ctx, const char *group_id, const stor_member *m);
} stor_group_load_cb;
/* Groups in group id order. A NULL callback skips its rows (both NULL: nothing is read). */
int stor_groups_load(stor *s, const stor_group_load_cb *cb);

/*
 * Consumer groups (KIP-848), beside the classic ones. Partition sets and topic lists are text the
 * group coordinator writes and reads (storage keeps them as given); NULL texts are stored as NULL.
 */
typedef struct stor_cgroup {
    const char *group_id;
    int32_t group_epoch, assignment_epoch;
    const char *assignor;
    const char *topics;
} stor_cgroup;
typedef struct stor_cmember {
    const char *member_id, *instance_id, *rack_id, *client_id, *client_host, *server_assignor, *topics;
    int32_t member_epoch, previous_epoch, state, rebalance_timeout_ms;
    const char *assigned, *revoking, *target;
    const char *regex; /* SubscribedTopicRegex; NULL: none */
    const char *names; /* SubscribedTopicNames when a regex is set ("a,b"); NULL: topics */
    /* a member on the classic protocol (KIP-848's online migration): its JoinGroup's session timeout and protocols */
    int32_t classic_session_timeout_ms;
    const void *classic_protocols; /* the coordinator's encoding; NULL: a consumer-protocol member */
    size_t classic_protocols_len;
} stor_cmember;
/* Replace the group's row and all its members, all or nothing. */
int stor_consumer_group_save(stor *s, const stor_cgroup *g, const stor_cmember *members, int nmembers);
int stor_consumer_group_delete(stor *s, const char *group_id); /* 0 also when there is none */
typedef struct stor_cgroup_load_cb {
    void *ctx;
    void (*group)(void *ctx, const stor_cgroup *g);
    void (*member)(void *ctx, const char *group_id, const stor_cmember *m);
} stor_cgroup_load_cb;
int stor_consumer_groups_load(stor *s, const stor_cgroup_load_cb *cb);

/* ---- group configs (KIP-848: consumer.session.timeout.ms, ...), by group id ---- */

/* Insert or replace one override (value NULL deletes it); part of the open write transaction. */
int stor_group_config_set(stor *s, const char *group_id, const char *key, const char *value);
/* Every group's overrides go (a reset to an empty cluster). 0 or -1. */
int stor_group_configs_clear(stor *s);
/* Every override, in (group id, key) order. Strings are valid only during the call. */
typedef void (*stor_group_config_fn)(void *ctx, const char *group_id, const char *key, const char *value);
int stor_group_configs_load(stor *s, stor_group_config_fn fn, void *ctx);

/*
 * Cluster tags (the `kafka` control plane's TagResource), keyed by the cluster's ARN. Set
 * (value NULL: remove the key; removing one that is absent is no error), remove all of a
 * cluster's, and read a cluster's in key order (uncommitted writes included).
 */
int stor_cluster_tag_set(stor *s, const char *arn, const char *key, const char *value);
/* keys[i] = values[i] (values NULL: remove the keys), all or none */
int stor_cluster_tags_put(stor *s, const char *arn, const char *const *keys, const char *const *values, size_t n);
int stor_cluster_tags_delete(stor *s, const char *arn);
typedef void (*stor_cluster_tag_fn)(void *ctx, const char *key, const char *value);
int stor_cluster_tags_load(stor *s, const char *arn, stor_cluster_tag_fn fn, void *ctx);

/*
 * Cluster policies (PutClusterPolicy): one document and its version per cluster ARN. Put
 * replaces; get gives 1 with *policy and *version malloc'd (the caller frees them), 0 when the
 * cluster has none, -1 on error; delete of none is no error.
 */
int stor_cluster_policy_put(stor *s, const char *arn, const char *policy, const char *version);
int stor_cluster_policy_get(stor *s, const char *arn, char **policy, char **version);
int stor_cluster_policy_delete(stor *s, const char *arn);

/*
 * The clusters the control plane created (kept in the configured cluster's database): add one
 * (a taken ARN or name fails), remove one with its tags and policy, and read them all, oldest
 * first. Strings are valid only during the call.
 */
int stor_cluster_add(stor *s, const char *arn, const char *name, const char *spec, int64_t created_ms);
int stor_cluster_remove(stor *s, const char *arn);
typedef void (*stor_cluster_fn)(void *ctx, const char *arn, const char *name, const char *spec, int64_t created_ms);
int stor_clusters_load(stor *s, stor_cluster_fn fn, void *ctx);

/* ---- transactions (the coordinator's state and each partition's transaction index) ---- */

/*
 * One transactional id (Kafka's TransactionMetadata). state holds Kafka's ids 0..5 (Empty,
 * Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort); Dead is a deleted row.
 * Times are wall-clock ms, as Kafka keeps them, so time the broker was down counts.
 */
typedef struct stor_txn_part {
    int64_t topic_id;
    int32_t partition;
} stor_txn_part;

typedef struct stor_txn {
    const char *transactional_id;
    int64_t producer_id, prev_producer_id;   /* prev: -1 unless the id rotated to a new producer id */
    int16_t producer_epoch, last_producer_epoch;
    int32_t timeout_ms;
    int32_t state;
    int64_t start_ms;                        /* -1 when no transaction has started */
    int64_t update_ms;
    int16_t client_tv;                       /* the transaction version its client used: 2 bumps at every EndTxn */
    int64_t next_producer_id;                /* TV2, epoch exhausted: the id it takes once the markers are written; -1 */
    /*
     * The partitions in its current transaction, stored in the row itself (migration 16): the row
     * is rewritten whenever they change anyway, so they cost no rows or index pages of their own.
     */
    const stor_txn_part *parts;
    int32_t nparts;
} stor_txn;

/*
 * The coordinator writes are of kind STOR_TXN_TXNS: a failed commit holding one cannot be undone
 * in memory. Supersede and the pending-offset deletes by group or topic add the kind only when
 * they changed a row (or failed), so the plain OffsetCommits and deletions that call them keep
 * their own kinds. Insert or replace the id's row with its partitions (its groups and offsets stay).
 */
enum { STOR_TXN_TXNS = 16 };
int stor_txn_put(stor *s, const stor_txn *t);
/* Delete the id with its partitions, groups and pending offsets (expiry). 0 or -1. */
int stor_txn_delete(stor *s, const char *transactional_id);
/* The groups in the id's current transaction. Adding one twice is not an error. */
int stor_txn_group_add(stor *s, const char *transactional_id, const char *group_id);
/* Removes the id's groups and pending offsets (the transaction completed; its partitions go with the next stor_txn_put). */
int stor_txn_members_clear(stor *s, const char *transactional_id);
/*
 * A pending transactional offset (TxnOffsetCommit), materialised into the committed offsets at
 * COMMIT unless superseded (a plain OffsetCommit of the same partition came after it). Insert or
 * replace by (transactional id, group, topic, partition); o->expire_ms is ignored.
 */
int stor_txn_offset_put(stor *s, const char *transactional_id, int64_t producer_id, const stor_offset *o);
/* Mark every pending offset of (group, topic, partition) superseded. 0 or -1. */
int stor_txn_offsets_supersede(stor *s, const char *group_id, const char *topic, int32_t partition);
/* Pending offsets of a deleted group, topic or (OffsetDelete) partition go with it. Return rows deleted or -1. */
int stor_txn_offset_delete(stor *s, const char *group_id, const char *topic, int32_t partition);
int stor_txn_offsets_delete_group(stor *s, const char *group_id);
int stor_txn_offsets_delete_topic(stor *s, const char *topic);

/*
 * Start-up: every id in id order, each followed by its partitions, groups and pending offsets.
 * A NULL callback skips its rows. Strings are valid only during the call.
 */
typedef struct stor_txn_load_cb {
    void *ctx;
    void (*txn)(void *ctx, const stor_txn *t);
    void (*partition)(void *ctx, const char *transactional_id, int64_t topic_id, int32_t partition);
    void (*group)(void *ctx, const char *transactional_id, const char *group_id);
    void (*offset)(void *ctx, const char *transactional_id, int64_t producer_id, const stor_offset *o,
                   bool superseded);
} stor_txn_load_cb;
int stor_txns_load(stor *s, const stor_txn_load_cb *cb);

/*
 * A partition's aborted-transaction index, written in the same storage transaction as the
 * ABORT marker (kind STOR_TXN_BATCHES, undone in memory like the batches): Kafka's .txnindex,
 * one entry per aborted transaction that had data on the partition, keyed by its ABORT
 * marker's offset (last_offset). The open transactions are producer state
 * (stor_load_producer_state).
 */

typedef struct stor_aborted {
    int64_t producer_id;
    int64_t first_offset, last_offset;
    int64_t lso;   /* the last stable offset once this abort was decided */
} stor_aborted;
/* A second entry at the same last_offset is an error: a marker has one offset. */
int stor_txn_aborted_put(stor *s, int64_t topic_id, int32_t partition, const stor_aborted *a);
/* Entries with last_offset >= from, in last_offset order, until fn returns false. 0 or -1. */
typedef bool (*stor_aborted_fn)(void *ctx, const stor_aborted *a);
int stor_txn_aborted_read(stor *s, int64_t topic_id, int32_t partition, int64_t from, stor_aborted_fn fn, void *ctx);
/* The newest entry's last_offset of each partition that has entries (start-up). */
typedef void (*stor_aborted_last_fn)(void *ctx, int64_t topic_id, int32_t partition, int64_t last_offset);
int stor_txn_aborted_last(stor *s, stor_aborted_last_fn fn, void *ctx);

#endif
