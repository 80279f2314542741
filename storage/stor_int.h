/*
 * stor internals shared by the storage/ sources (and by storage unit tests,
 * which inspect query plans). Nothing outside storage/ should include this.
 */
#ifndef STOR_INT_H
#define STOR_INT_H

#include "stor.h"

#include <sqlite3.h>

/* PRAGMA application_id of an mskmock database: "MSKM". */
#define STOR_APPLICATION_ID 0x4D534B4D

/* Kafka keeps the newest 5 batches per producer to detect duplicates. */
#define STOR_PRODUCER_BATCHES_KEPT 5

/*
 * Batches appended after which a commit first brings the producer snapshot up to date
 * (stor_producers.c): what a start-up after kill -9 reads beyond the snapshot, and what that
 * one commit reads more (a few ms at most).
 */
#define STOR_PRODUCER_SNAPSHOT_EVERY 4096

#define STOR_BUSY_TIMEOUT_MS 5000

/* ?1 and ?2 of a statement keyed by partition (stor_sql.c's BATCH_KEY): non-zero on an SQLite error. */
static inline int stor_bind_part(sqlite3_stmt *st, int64_t topic_id, int32_t partition) {
    return sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition);
}

/* A partition's slot in the open-addressing tables keyed by (topic id, partition): segments, time index, producers. */
static inline uint64_t stor_part_hash(int64_t topic_id, int32_t partition) {
    uint64_t h = (uint64_t)topic_id * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)partition * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}
/*
 * Migration 16, and salvage of a database from before it: the txn_partitions rows
 * into their txns row's list ("topic_id:partition" separated by spaces; stor_txns.c), then the
 * rows go. Only rows without a list take one, so running it again changes nothing.
 */
#define STOR_TXN_PARTS_INTO_ROWS                                                                                       \
    "UPDATE txns SET partitions = (SELECT group_concat(p.topic_id || ':' || p.partition, ' ') FROM txn_partitions p"  \
    "  WHERE p.transactional_id = txns.transactional_id)"                                                              \
    " WHERE partitions IS NULL"                                                                                        \
    "  AND EXISTS (SELECT 1 FROM txn_partitions p WHERE p.transactional_id = txns.transactional_id);"                 \
    "DELETE FROM txn_partitions;"

/* Column list every batch-metadata query selects first, in this order (see stor_meta_from_row). */
#define STOR_META_COLS                                                                                                 \
    "base_offset, last_offset, max_timestamp, producer_id, producer_epoch, base_sequence, last_sequence, "            \
    "records_count"
#define STOR_META_NCOLS 8

/* Every statement stor runs after open; prepared once in stor_open, SQL text in stor_sql.c. */
typedef enum stor_stmt_id {
    STOR_BEGIN,
    STOR_COMMIT,
    STOR_ROLLBACK,
    STOR_SAVEPOINT,
    STOR_RELEASE,
    STOR_ROLLBACK_TO,
    STOR_TOPIC_INSERT,
    STOR_TOPIC_DELETE,
    STOR_TOPIC_PARTITIONS_GET,
    STOR_TOPIC_PARTITIONS_SET,
    STOR_PARTITION_INSERT,
    STOR_CONFIG_UPSERT,
    STOR_CONFIG_DELETE,
    STOR_LOAD_TOPICS,
    STOR_LOAD_CONFIGS,
    STOR_LOAD_PARTITIONS,
    STOR_BATCH_INSERT,
    STOR_BATCH_LAST,
    STOR_BATCH_READ,
    STOR_TIME_INSERT,
    STOR_TIME_LAST,
    STOR_TIME_TAIL,
    STOR_TIME_FLOOR,
    STOR_TIME_SCAN,
    STOR_TIME_TRIM,
    STOR_TIME_BATCH_TS,
    STOR_TIME_RAISE,
    STOR_PARTITION_BYTES,
    STOR_FOLD_ROWS,
    STOR_PARTITION_BYTES_FOLD,
    STOR_SEGMENTS_FOLD,
    STOR_BYTES_BELOW,
    STOR_BATCH_DELETE_BELOW,
    STOR_LOG_START_UPDATE,
    STOR_OLDEST_BATCH,
    STOR_PRODUCER_PARTITIONS,
    STOR_PRODUCER_SNAP_END,
    STOR_PRODUCER_SNAP_LOAD,
    STOR_PRODUCER_TAIL,
    STOR_PRODUCER_SNAP_PUT,
    STOR_PRODUCER_SNAP_END_PUT,
    STOR_PRODUCER_SNAP_DEL,
    STOR_PRODUCER_SNAP_TRIM,
    STOR_PRODUCER_HEAD,
    STOR_PRODUCER_BATCH_AT,
    STOR_OFFSET_UPSERT,
    STOR_OFFSET_DELETE,
    STOR_OFFSETS_DELETE_GROUP,
    STOR_OFFSETS_DELETE_TOPIC,
    STOR_LOAD_OFFSETS,
    STOR_GROUP_UPSERT,
    STOR_GROUP_DELETE,
    STOR_MEMBERS_DELETE,
    STOR_MEMBER_INSERT,
    STOR_LOAD_GROUPS,
    STOR_LOAD_MEMBERS,
    STOR_SETTING_GET,
    STOR_SETTING_PUT,
    STOR_LEADER_PUT,
    STOR_LOAD_LEADERS,
    STOR_TXNS_UPDATE,
    STOR_TXNS_UPSERT,
    STOR_TXNS_DELETE,
    STOR_TXN_MEMBERS_PROBE,
    STOR_TXN_GROUP_INSERT,
    STOR_TXN_GROUP_CLEAR,
    STOR_TXN_OFFSET_UPSERT,
    STOR_TXN_OFFSET_CLEAR,
    STOR_TXN_OFFSET_SUPERSEDE,
    STOR_TXN_OFFSET_DELETE_GROUP,
    STOR_TXN_OFFSET_DELETE_TOPIC,
    STOR_TXN_OFFSET_DELETE_ONE,
    STOR_LOAD_TXNS,
    STOR_LOAD_TXN_GROUPS,
    STOR_LOAD_TXN_OFFSETS,
    STOR_TXN_ABORTED_INSERT,
    STOR_TXN_ABORTED_READ,
    STOR_TXN_ABORTED_LAST,
    STOR_TXN_ABORTED_DELETE_BELOW,
    STOR_BATCH_REPLACE,
    STOR_BATCH_DELETE_ONE,
    STOR_CLEAN_STATE,
    STOR_CLEAN_DIRTY,
    STOR_CLEANED_SET,
    STOR_TOPIC_RF_INSERT,
    STOR_REPLICAS_PUT,
    STOR_LOAD_REPLICAS,
    STOR_GROUP_CONFIG_UPSERT,
    STOR_GROUP_CONFIG_DELETE,
    STOR_GROUP_CONFIGS_CLEAR,
    STOR_LOAD_GROUP_CONFIGS,
    STOR_CLUSTER_TAG_UPSERT,
    STOR_CLUSTER_TAG_DELETE,
    STOR_CLUSTER_TAGS_DELETE,
    STOR_LOAD_CLUSTER_TAGS,
    STOR_CLUSTER_POLICY_PUT,
    STOR_CLUSTER_POLICY_GET,
    STOR_CLUSTER_POLICY_DELETE,
    STOR_CLUSTER_PUT,
    STOR_CLUSTER_DELETE,
    STOR_LOAD_CLUSTERS,
    STOR_CGROUP_UPSERT,
    STOR_CGROUP_DELETE,
    STOR_CMEMBERS_DELETE,
    STOR_CMEMBER_INSERT,
    STOR_LOAD_CGROUPS,
    STOR_LOAD_CMEMBERS,
    STOR_STMT_COUNT
} stor_stmt_id;

extern const char *const stor_stmt_sql[STOR_STMT_COUNT];

typedef struct stor_ckpt stor_ckpt;

/* Segment files (stor_segments.c); enabled for a database on disk. */
struct stor_seg_part;
struct stor_seg_fd;
typedef struct stor_seg_syncer stor_seg_syncer;
/* A closed segment whose bytes up to pos are on disk (stor_seg_sync.c), or are to be once the open transaction commits. */
typedef struct stor_seg_synced {
    int64_t topic_id, id, pos;
    int32_t partition;
} stor_seg_synced;
typedef struct stor_segs {
    bool enabled;
    bool name_unsaved;  /* the directory's name is not in settings yet */
    bool recovered;     /* stor_recover ran */
    bool maybe_dead;    /* the open transaction removed or moved batch rows: look for dead segments after it */
    stor_sync sync;
    int64_t bytes;      /* storage.segment.bytes: a segment is closed once the next batch would pass it */
    int64_t verified_bytes, dropped_rows; /* stor_recover's check (stor_seg_recovery) */
    char dir[512];
    struct stor_seg_part *parts; /* open-addressing hash by (topic, partition) */
    size_t nparts, capparts;
    struct { int64_t topic_id; int32_t partition; } *dirty; /* partitions appended to in the open transaction */
    size_t ndirty, capdirty;
    int64_t *gone_topics; /* deleted in the open transaction: their files go after its commit */
    size_t ngone, capgone;
    struct stor_seg_fd *fds;
    int nfds;
    uint64_t clock;
    /* stor_orphans.c: lines for the log, and where unaccounted files go */
    stor_notice_fn notice;
    void *notice_ctx;
    char **notes; /* made before stor_set_notice */
    size_t nnotes, capnotes;
    char orphan_stamp[48];
    /* storage.sync=normal (stor_seg_sync.c): closed in the open transaction, handed to the syncer after its commit */
    stor_seg_synced *sealed;
    size_t nsealed, capsealed;
    stor_seg_syncer *syncer; /* started with the first closed segment */
    bool syncer_failed;
    int64_t sync_delay_ms;
    stor_seg_synced *marking; /* synced; their marks go into the next commit */
    size_t nmarking, capmarking;
    stor_unlink_fn unlink_fn; /* stor_set_unlinker */
    void *unlink_ctx;
    /* dead segments whose files went (stor_seg_collect): their rows go in the next commit */
    struct stor_seg_dead { int64_t topic_id, id; int32_t partition; } *retired;
    size_t nretired, capretired;
    sqlite3_stmt *retire_st, *dead_st; /* prepared once: a swap retires several segments at once */
} stor_segs;

/*
 * Per partition, what an append needs of the stored rows without reading them: the sparse time
 * index's running state (stor_time_index.c) and the last stored offset (stor_batches.c).
 * Open-addressing hash; stor_time_forget drops it all, stor_batch_last_forget one partition's offset.
 */
struct stor_time_part {
    int64_t topic_id;
    int32_t partition;
    bool used;
    int64_t max_ts; /* INT64_MIN: no batch yet */
    int64_t bytes;  /* appended since the last entry */
    /* the partition's largest stored last_offset (-1: no row), valid while last_known */
    bool last_known;
    int64_t last_off;
};
typedef struct stor_times {
    struct stor_time_part *parts;
    size_t n, cap;
} stor_times;

/* Kafka's index.interval.bytes default: the log between two entries of the time index. */
#define STOR_TIME_INTERVAL_BYTES 4096

/*
 * batch_times built from the batch rows: the running largest max timestamp of each partition, at
 * every batch that crosses a multiple of STOR_TIME_INTERVAL_BYTES of the partition's bytes.
 * Migration 17 and salvage's repair run it; INSERT OR IGNORE keeps it idempotent.
 */
#define STOR_TIME_INDEX_BUILD                                                                                          \
    "INSERT OR IGNORE INTO batch_times (topic_id, partition, max_timestamp, base_offset)"                             \
    " SELECT topic_id, partition, run_max, base_offset FROM ("                                                        \
    "  SELECT topic_id, partition, base_offset, size,"                                                                 \
    "   max(max_timestamp) OVER w AS run_max, sum(size) OVER w AS run_bytes FROM batches"                            \
    "  WINDOW w AS (PARTITION BY topic_id, partition ORDER BY base_offset ROWS UNBOUNDED PRECEDING))"                 \
    " WHERE run_bytes / 4096 > (run_bytes - size) / 4096;"

struct stor {
    sqlite3 *db;
    stor_ckpt *ckpt;  /* background WAL checkpoints (stor_checkpoint.c); NULL for :memory: and sync off */
    sqlite3_stmt *stmt[STOR_STMT_COUNT];
    int schema_version;
    bool in_txn;     /* we ran BEGIN and neither COMMIT nor ROLLBACK since */
    bool txn_failed; /* SQLite rolled our open transaction back after an error */
    bool in_op;      /* between stor_op_begin and stor_op_end: the savepoint is open */
    unsigned txn_kinds; /* STOR_TXN_* of the writes in the open transaction */
    uint64_t commit_seq;
    int64_t producer_snap_due; /* batches appended (or found at load) past the producer snapshot */
    bool opened;               /* stor_open finished: stor_close may write the producer snapshot */
    struct stor_producer_cache *producer_cache; /* stor_producer_last_data's fold of one partition */
    struct stor_dirty_parts *producer_dirty;    /* partitions the next producer snapshot writes (stor_producers.c) */
    bool producer_snap_taken; /* the open transaction holds a snapshot: its commit empties producer_dirty */
    stor_segs segs;
    stor_times times;
    stor_verify_mode verify; /* storage.verify (stor_verify.c): FULL checks every batch a read serves */
    bool read_bad;           /* the last read stopped at a batch that failed that check */
    char *reserve_path; /* stor_reserve.c: <db>-reserve, NULL until first asked (and for :memory:) */
    char err[512];
};

/* stor_write_begin / stor_op_begin for a write of one STOR_TXN_* kind (those two: STOR_TXN_OTHER). */
int stor_write_begin_as(stor *s, unsigned kind);
int stor_op_begin_as(stor *s, unsigned kind);

/* sqlite3_exec of sql; -1 with "<sql>: <SQLite's message>" in err when it fails. */
int stor_sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* ---- stor_migrate.c ---- */

/* Number of migrations this binary knows, i.e. the newest schema version. */
int stor_schema_latest(void);
/*
 * Bring the schema to the newest version. Returns 0 with *version set, or -1 with a reason in err.
 * An empty database is given the newest schema at once (stor_schema_fresh.h, generated at build
 * time); stor_migrate_by_chain runs every migration in turn even then: the generator's way, and
 * what its unit test compares the fresh schema against.
 */
int stor_migrate(sqlite3 *db, int *version, char *err, size_t errlen);
int stor_migrate_by_chain(sqlite3 *db, int *version, char *err, size_t errlen);

/* ---- stor_producers.c ---- */

/*
 * Bring the producer snapshot of every partition whose rows changed since up to the newest
 * batch, in the open write transaction: stor_commit every STOR_PRODUCER_SNAPSHOT_EVERY batches,
 * stor_close always.
 */
int stor_producer_snapshot(stor *s);
typedef struct stor_producer_cache stor_producer_cache;
/*
 * A partition whose batch rows changed (an append, a removal, a rewrite): the next snapshot
 * folds it; the others it leaves alone. 0 or -1 (out of memory).
 */
int stor_producer_dirty(stor *s, int64_t topic_id, int32_t partition);
/* The commit that held the snapshot succeeded: what it wrote is no longer due. */
void stor_producer_snapshot_committed(stor *s);
void stor_producer_dirty_free(stor *s);
/* Drop stor_producer_last_data's fold (at every commit, rollback and close). */
void stor_producer_cache_free(stor *s);

/* ---- stor_checkpoint.c ---- */

int stor_ckpt_start(stor *s, const char *path, stor_sync sync, char *err, size_t errlen);
void stor_ckpt_kick(stor *s);
void stor_ckpt_stop(stor *s);

/* ---- stor_vfs.c ---- */

#define STOR_VFS_NAME "mskmock-gather"
/* The loop connection's VFS (appends gathered into large writes), registered on first use; NULL if unavailable. */
const char *stor_vfs_name(void);

/* ---- stor_segments.c ---- */

/* Find the segment directory and the newest segment (reads only; stor_recover does the rest). */
int stor_seg_open(stor *s, const char *db_path, stor_sync sync);
void stor_seg_close(stor *s);
/* Write a batch's bytes to its partition's newest segment (a new one when it is full); where they went. */
int stor_seg_append(stor *s, int64_t topic_id, int32_t partition, const void *data, size_t len, int64_t *seg,
                    int64_t *pos);
int stor_seg_read(stor *s, int64_t topic_id, int32_t partition, int64_t seg, int64_t pos, void *buf, size_t len);
/* The open transaction removes a topic: its segment files go after the commit (recorded in it). */
int stor_seg_topic_deleted(stor *s, int64_t topic_id);
/* The id a new topic gets: past every topic row and every directory in the segment directory. */
int stor_seg_topic_id(stor *s, int64_t *id);
/* DIR/<topic id>-<partition>/<id>.log of the database's segment directory. */
void stor_seg_path(stor *s, int64_t topic_id, int32_t partition, int64_t id, char *out, size_t n);
/*
 * 1 when the system restarted since the database was last open and storage.sync is not off:
 * stor_recover then reads back what is past each segment's synced mark. 0 when not, -1 on error.
 */
int stor_seg_power_cut(stor *s);

/* ---- stor_seg_sync.c ---- */

/* How long a closed segment waits before its fdatasync: the kernel's writeback interval and age, from /proc. */
int64_t stor_seg_sync_default_delay_ms(void);
/* A closed segment (bytes final up to pos) to fdatasync off the loop, after the delay. */
void stor_seg_sync_later(stor *s, int64_t topic_id, int32_t partition, int64_t id, int64_t pos);
/* In the open transaction: the synced marks of the segments the thread has synced since the last commit. */
int stor_seg_sync_marks(stor *s);
/* That commit is in: those marks are done. */
void stor_seg_sync_committed(stor *s);
/* At open: closed segments whose marks are behind go to the thread again. */
int stor_seg_sync_pending(stor *s);
/* Stop the thread (what is queued keeps its mark) and free its state. */
void stor_seg_sync_stop(stor *s);
/* Tests: the delay before a closed segment's fdatasync, and a wait (up to wait_ms) until none is queued. */
void stor_seg_sync_set_delay(stor *s, int64_t ms);
bool stor_seg_sync_idle(stor *s, int64_t wait_ms);

/* ---- stor_verify.c ---- */

/*
 * NULL when data (len bytes) is exactly one record batch of offsets base..last whose CRC-32C
 * holds; else what differs, written into why ("is offsets 200-299, the index says 0-99",
 * "CRC mismatch").
 */
const char *stor_batch_unsound(const uint8_t *data, size_t len, int64_t base, int64_t last, char *why, size_t n);

/* ---- stor_orphans.c ---- */

/* A line for the log (stor_set_notice), held until someone listens. */
void stor_seg_notice(stor *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void stor_seg_notes_free(stor_segs *g);
/* Rename path to DATA/orphaned/<stamp>/<its path under DATA>, never over anything; *to: where. */
int stor_seg_move_aside(stor *s, const char *path, char *to, size_t n);
/* A partition directory no row and no deletion accounts for: moved aside (removed when empty), logged. */
int stor_seg_orphan_dir(stor *s, const char *dir, int64_t topic_id, int32_t partition);
/* A segment file no row accounts for: moved aside (removed when empty), logged with why. */
int stor_seg_orphan_file(stor *s, const char *path, const char *why);
/* The highest topic id a directory in the segment directory names (0: none). */
int64_t stor_seg_dir_max_topic(stor *s);
/* The open transaction removes or moves batch rows: look for dead segments after the commit. */
void stor_seg_maybe_dead(stor *s);
/*
 * The batch rows (alias b) pointing into segment row `d` (an alias) that its counters do not
 * count yet: segments.live and .used count the rows below the partition's bytes_end (migration
 * 22); those past it are at most the batches since the last producer snapshot, a range of the
 * primary key.
 */
#define STOR_SEG_UNFOLDED(d)                                                                                \
    "FROM batches b WHERE b.topic_id = " d ".topic_id AND b.partition = " d ".partition"                  \
    " AND b.base_offset >= (SELECT p.bytes_end FROM partitions p WHERE p.topic_id = " d ".topic_id"        \
    " AND p.partition = " d ".partition) AND b.seg = " d ".id"
/* The committed end of segment row `d`. */
#define STOR_SEG_USED(d) "max(" d ".used, coalesce((SELECT max(b.pos + b.size) " STOR_SEG_UNFOLDED(d) "), 0))"
/* The rows pointing into segment row `d`. */
#define STOR_SEG_LIVE(d) "(" d ".live + (SELECT count(*) " STOR_SEG_UNFOLDED(d) "))"

/* The rows past partitions.bytes_end counted into bytes, segments.live and .used (migrations 21, 22). */
int stor_part_fold(stor *s, int64_t topic_id, int32_t partition);
/*
 * storage.sync=full: the segment's appends reach the disk before the commit that names them; normal:
 * the marks of closed segments the thread has synced go into the commit (stor_seg_sync.c).
 */
int stor_seg_before_commit(stor *s);
void stor_seg_after_commit(stor *s);
/* The transaction is gone: so are the segments it created and its appends to the newest. */
void stor_seg_after_rollback(stor *s);
/* Delete segments no row points into any more (outside a transaction). */
void stor_seg_collect(stor *s);
/*
 * A compaction's cleaned file (path, size bytes, synced: on disk) becomes the partition's newest
 * segment in the open transaction: linked as <id>.log, its row added; a rollback removes the link.
 */
int stor_seg_adopt(stor *s, int64_t topic_id, int32_t partition, const char *path, int64_t size, bool synced,
                   int64_t *seg);
/* fsync a directory, so names created in it survive a power cut. */
void stor_fsync_dir(const char *dir);
/* fsync the `levels` directories above path, nearest first. */
void stor_fsync_dirs_above(const char *path, int levels);
/* The directories that name a segment: its partition's, the segments directory, the data directory. */
#define STOR_SEG_DIR_LEVELS 3
/* stor_compact.c: at start, what a kill left in a partition directory: cleaned files, .deleted segments. */
void stor_cleaning_leftovers(stor *s, const char *pdir, int64_t newest);

/* ---- stor_time_index.c ---- */

/* Before a batch row goes in: the partition's time index state (loaded at its first append). */
int stor_time_before_append(stor *s, int64_t topic_id, int32_t partition, struct stor_time_part **tp);
/* The row is in: an entry when the interval has gone by since the last one. */
int stor_time_appended(stor *s, struct stor_time_part *tp, int64_t base_offset, int64_t max_timestamp, size_t len);
/* Before a batch's max timestamp is rewritten (compaction): entries at or past it that it would pass are raised. */
int stor_time_raise(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset, int64_t max_timestamp);
/* The log start moved: entries of batches below it go. */
int stor_time_trim(stor *s, int64_t topic_id, int32_t partition, int64_t log_start);
/* A rollback or a topic deletion: every partition's state is loaded again at its next append. */
void stor_time_forget(stor *s);
/* The slot of (topic_id, partition) if it has one, else NULL: no load, no insert. */
struct stor_time_part *stor_time_find(stor *s, int64_t topic_id, int32_t partition);
/* Rows of the partition went (or changed offsets): the next append reads its last offset again. */
void stor_batch_last_forget(stor *s, int64_t topic_id, int32_t partition);
void stor_time_free(stor *s);

/* ---- stor_scan.c: a partition's segment files read back without the database ---- */

/* One batch found: where it is and the fields of its index row (stor_batch_meta's, from its header). */
typedef struct stor_scan_batch {
    int64_t seg, pos, size;
    int64_t base_offset, last_offset, max_timestamp, producer_id;
    int32_t base_sequence, last_sequence, records_count;
    int16_t producer_epoch, attributes;
    int marker; /* kp_batch_marker_type: 1 COMMIT, 0 ABORT, -1 not a marker */
} stor_scan_batch;

/* One segment file: its size, where its sound batches end (valid), what was dropped past them and why. */
typedef struct stor_scan_seg {
    int64_t id;
    int64_t limit;       /* the end the database last committed (segments.used), -1 unknown */
    int64_t size, valid; /* valid: the end of the last whole batch whose CRC holds */
    int64_t end;         /* where the scan stopped reading: the limit, or the file's end */
    int64_t dropped;     /* bytes of damaged or torn batches, up to end */
    int64_t bad_from;    /* where the first of them starts, -1 none */
    int64_t uncommitted; /* bytes past the limit: appends no commit held */
    char why[160];       /* the first damage, "" when there was none */
} stor_scan_seg;

typedef struct stor_scan {
    stor_scan_batch *b; /* kept: no two overlap, in offset order */
    size_t n;
    stor_scan_seg *segs; /* in id order */
    size_t nsegs;
    int64_t records, dropped_bytes;
    int64_t superseded;  /* older copies of offsets a later batch holds (the cleaner's rewrites) */
    int64_t below_start; /* batches ending before log_start */
} stor_scan;

/* The end the database committed for segment id (segments.used), or -1 when it does not know. */
typedef int64_t (*stor_scan_limit_fn)(void *ctx, int64_t id);
/* Scan the partition directory pdir (DIR/<topic id>-<partition>); limit may be NULL. 0, or -1 with err. */
int stor_scan_partition(const char *pdir, int64_t log_start, stor_scan_limit_fn limit, void *ctx, stor_scan *out,
                        char *err, size_t errlen);
void stor_scan_free(stor_scan *s);

/* ---- stor_rebuild.c: the index rebuilt from the segment files, inside a salvage ---- */

/*
 * In fresh (a salvage's new database, its transaction open): topics rows for topic ids whose
 * row was lost (names from old's index on topic names, else placeholders), and the rows of
 * every partition directory under seg_dir that all is set for or that has no segments row, from
 * its segment files. Reports through fn; *rebuilt: partitions rebuilt. 0, or -1 with err.
 */
int stor_rebuild_index(sqlite3 *fresh, sqlite3 *old, const char *seg_dir, bool all, bool configs_damaged,
                       stor_salvage_report fn, void *ctx, long long *rebuilt, char *err, size_t errlen);

/* ---- stor.c: helpers for the other files ---- */

/* Format into a caller's buffer that may be NULL or empty. */
void stor_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Record "what: <sqlite message>" as the current error; returns -1. */
int stor_fail(stor *s, const char *what);
/* Record a message of ours (bad argument, missing row); returns -1. */
int stor_failf(stor *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The cached statement, reset and with no bindings left from an earlier use. */
sqlite3_stmt *stor_stmt(stor *s, stor_stmt_id id);
/* Step a statement that returns no rows, then reset it. Returns 0 or -1 (error recorded as "what: ..."). */
int stor_step_done(stor *s, sqlite3_stmt *st, const char *what);
/* Open the write transaction if none is open (writes call this first). */
int stor_write_begin(stor *s);
/* Write operations of several statements run inside a savepoint so a failure leaves none of them behind. */
int stor_op_begin(stor *s);
/* Release the savepoint when rc is 0, else roll back to it; returns rc. */
int stor_op_end(stor *s, int rc);
/* ---- stor_groups.c: commit metadata, for committed and transactional offsets ---- */

/* Bind o's metadata (its metadata_len bytes, "" when none) to column col. */
int stor_bind_metadata(sqlite3_stmt *st, int col, const stor_offset *o);
/* Read column col into o->metadata and o->metadata_len. */
void stor_column_metadata(sqlite3_stmt *st, int col, stor_offset *o);

/* Fill m from the STOR_META_COLS columns starting at column col. */
void stor_meta_from_row(sqlite3_stmt *st, int col, stor_batch_meta *m);

#endif
