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
 */
#ifndef STOR_H
#define STOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct stor stor;

typedef enum stor_sync { STOR_SYNC_OFF, STOR_SYNC_NORMAL, STOR_SYNC_FULL } stor_sync;

/*
 * Open (creating if needed) the database at path; ":memory:" gives a
 * throwaway store. Returns 0, or -1 with a reason in err.
 */
int stor_open(stor **out, const char *path, stor_sync sync, char *err, size_t errlen);
void stor_close(stor *s);
int stor_schema_version(stor *s);

/* Commit the open write transaction, if any. Returns 0 or -1 (then the broker must not ack). */
int stor_commit(stor *s);
bool stor_in_txn(stor *s);
/* Number of commits so far: a produce waits until this passes the value it saw when appending. */
uint64_t stor_commit_seq(stor *s);
const char *stor_errmsg(stor *s);

/* ---- topics ---- */

typedef struct stor_topic {
    int64_t id;          /* row id, stable for the topic's life */
    const char *name;
    uint8_t uuid[16];    /* Kafka topic id */
    int32_t partitions;
    int64_t created_ms;
} stor_topic;

/* Creates topic + its partitions (log start 0, next offset 0). Sets t->id. */
int stor_topic_create(stor *s, stor_topic *t);
/* Removes the topic with its partitions, configs and batches. */
int stor_topic_delete(stor *s, int64_t topic_id);
/* Adds partitions [old count, new_count). */
int stor_topic_add_partitions(stor *s, int64_t topic_id, int32_t new_count);
/* value NULL deletes the override. */
int stor_topic_config_set(stor *s, int64_t topic_id, const char *key, const char *value);

/* Load callbacks, called once per row, topics first, then configs, then partitions. */
typedef struct stor_load_cb {
    void *ctx;
    void (*topic)(void *ctx, const stor_topic *t);
    void (*config)(void *ctx, int64_t topic_id, const char *key, const char *value);
    /* next_offset = 1 + the last stored offset (or log_start when empty);
       max_timestamp of the partition's newest batch, -1 if none */
    void (*partition)(void *ctx, int64_t topic_id, int32_t partition, int64_t log_start, int64_t next_offset);
} stor_load_cb;
int stor_load(stor *s, const stor_load_cb *cb);

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
} stor_batch_meta;

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
 * ListOffsets by timestamp: the first offset whose batch max_timestamp >= ts
 * (batch granularity, as Kafka's time index). Returns 1 found, 0 none, -1 error.
 */
int stor_offset_for_time(stor *s, int64_t topic_id, int32_t partition, int64_t ts, int64_t *offset,
                         int64_t *timestamp);
/* The batch with the largest max_timestamp (earliest on ties): 1 found, 0 none, -1 error. */
int stor_max_timestamp(stor *s, int64_t topic_id, int32_t partition, int64_t *offset, int64_t *timestamp);

/* Total stored bytes of a partition (retention.bytes). */
int64_t stor_partition_bytes(stor *s, int64_t topic_id, int32_t partition);

/*
 * Move the log start offset forward and delete every batch that lies wholly
 * below it. Returns the number of batches deleted, or -1.
 */
int stor_log_start_set(stor *s, int64_t topic_id, int32_t partition, int64_t log_start);
/* Oldest batch of a partition: base/last offset and max timestamp. 1 found, 0 empty, -1 error. */
int stor_oldest_batch(stor *s, int64_t topic_id, int32_t partition, stor_batch_meta *m);

/* Idempotent producer state is rebuilt from the newest 5 batches of each (partition, producer). */
typedef void (*stor_producer_fn)(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m);
int stor_load_producer_batches(stor *s, stor_producer_fn fn, void *ctx);

#endif
