/*
 * stor: record bytes in segment files (stor_segments.c): where appends go, rolling and
 * deleting segments, what open cuts and checks, rollbacks, rows from before migration 8; files no
 * row accounts for moved aside, never deleted (stor_orphans.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "kp_batch.h"
#include "protocol/rdk_batches.h"
#include "stor.h"
#include "stor_int.h"

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_segments", STOR_SYNC_NORMAL, 2);
    return 0;
}

static void seg_path(fx *f, int32_t partition, int id, char *out, size_t n) {
    snprintf(out, n, "%s.segments/%lld-%d/%020d.log", f->path, (long long)f->topic, partition, id);
}

static int64_t size_of(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* librdkafka's one-record batch, its base offset set to base (outside the CRC, as the broker does). */
static void real_batch(int64_t base, uint8_t out[sizeof rdk_batch_0]) {
    memcpy(out, rdk_batch_0, sizeof rdk_batch_0);
    kp_batch_patch(out, base, 0);
}

static stor_batch_meta meta1(int64_t base) {
    return (stor_batch_meta){.base_offset = base, .last_offset = base, .max_timestamp = 1000 + base,
                             .producer_id = -1, .producer_epoch = -1, .base_sequence = -1, .last_sequence = -1,
                             .records_count = 1};
}

static void append_real(fx *f, int32_t partition, int64_t base) {
    uint8_t b[sizeof rdk_batch_0];
    real_batch(base, b);
    stor_batch_meta m = meta1(base);
    if (stor_batch_append(f->s, f->topic, partition, &m, b, sizeof b)) fail_msg("append: %s", stor_errmsg(f->s));
}

typedef struct got {
    int n;
    int64_t bases[256];
    bool bytes_ok;
} got;

static bool on_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    got *g = ctx;
    uint8_t want[sizeof rdk_batch_0];
    real_batch(m->base_offset, want);
    if (len != sizeof want || memcmp(data, want, len) != 0) g->bytes_ok = false;
    if (g->n < 256) g->bases[g->n++] = m->base_offset;
    return true;
}

static got read_all(fx *f, int32_t partition) {
    got g = {.bytes_ok = true};
    if (stor_batch_read(f->s, f->topic, partition, 0, INT64_MAX, on_batch, &g)) fail_msg("read: %s", stor_errmsg(f->s));
    return g;
}

/* The bytes are in the newest segment, once each, back to back; the row keeps none of them. */
static void test_bytes_go_to_segment_files(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, 0, i);
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    char seg[256];
    seg_path(f, 0, 1, seg, sizeof seg);
    assert_int_equal(size_of(seg), 3 * (int64_t)sizeof rdk_batch_0); /* each partition has its own */
    assert_int_equal(fx_raw_int(f->path, "SELECT sum(length(data)) FROM batches"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT " STOR_SEG_LIVE("segments") " FROM segments WHERE partition = 0 AND id = 1"), 3);
    assert_int_equal(fx_raw_int(f->path, "SELECT " STOR_SEG_LIVE("segments") " FROM segments WHERE partition = 1 AND id = 1"), 1);
    fx_reopen(f);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 3 * (int64_t)sizeof rdk_batch_0);
}

/* A full segment is closed for a new one; a segment whose every row is gone is deleted after the commit. */
static void test_roll_and_delete_dead_segments(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 3 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 10; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    char s1[256], s4[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    seg_path(f, 0, 4, s4, sizeof s4);
    assert_true(size_of(s1) > 0);
    assert_int_equal(size_of(s4), (int64_t)sizeof rdk_batch_0); /* 3 + 3 + 3 + 1 */
    /* closed segments are synced later, off the loop (test_closed_segments_are_synced_later) */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE synced = " STOR_SEG_USED("segments")), 0);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 7), 7);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(size_of(s1), -1);
    /* their rows go with the next commit (test_dead_segments_rows_go_with_the_next_commit) */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE " STOR_SEG_LIVE("segments") " > 0 OR id = 4"), 2);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.bases[0], 7);
    assert_true(g.bytes_ok);
    /* the newest segment stays even when empty: appends go on there */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 10), 3);
    assert_int_equal(stor_commit(f->s), 0);
    assert_true(size_of(s4) > 0);
    append_real(f, 0, 10);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(read_all(f, 0).n, 1);
}

/* A close with no producer snapshot: what a kill -9 leaves of the rows past bytes_end (migration 22). */
static void kill9_reopen(fx *f) {
    f->s->producer_snap_due = 0;
    fx_reopen(f);
}

/* segments.live and .used as stored agree with the rows (the start folded what the kill left). */
static void assert_segments_exact(fx *f) {
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments d WHERE live != (SELECT count(*) FROM batches b"
                                         " WHERE b.topic_id = d.topic_id AND b.partition = d.partition AND b.seg = d.id)"),
                     0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments d WHERE used < (SELECT coalesce(max(pos + size), 0)"
                                         " FROM batches b WHERE b.topic_id = d.topic_id AND b.partition = d.partition"
                                         " AND b.seg = d.id)"),
                     0);
}

/*
 * Rows appended since the last producer snapshot are not in segments.live or .used (migration
 * 22): a kill -9 then a start keeps every one of them, their segments not cut, and counts them.
 */
static void test_kill9_with_appends_past_snapshot_keeps_them(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 3 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 8; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT sum(live) FROM segments"), 0); /* not folded yet */
    kill9_reopen(f);
    char s3[256];
    seg_path(f, 0, 3, s3, sizeof s3);
    assert_int_equal(size_of(s3), 2 * (int64_t)sizeof rdk_batch_0);
    assert_segments_exact(f);
    assert_int_equal(fx_raw_int(f->path, "SELECT sum(live) FROM segments"), 8);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 8);
    assert_true(g.bytes_ok);
    /* appends go on after the last committed batch, and survive the next kill as well */
    append_real(f, 0, 8);
    assert_int_equal(stor_commit(f->s), 0);
    kill9_reopen(f);
    assert_segments_exact(f);
    g = read_all(f, 0);
    assert_int_equal(g.n, 9);
    assert_true(g.bytes_ok);
}

/* The sweep after a commit leaves a segment that only rows past bytes_end name (segments.live 0 there). */
static void test_sweep_keeps_segments_of_unfolded_rows(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 3 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 7; i++) append_real(f, 0, i); /* segments 1, 2, 3 */
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 1), 1);
    assert_int_equal(stor_commit(f->s), 0); /* the sweep runs after it */
    append_real(f, 0, 7);
    assert_int_equal(stor_commit(f->s), 0); /* and the retired rows go with this one */
    char s1[256], s2[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    seg_path(f, 0, 2, s2, sizeof s2);
    assert_int_equal(size_of(s1), 3 * (int64_t)sizeof rdk_batch_0); /* row 0 went, rows 1 and 2 hold it */
    assert_int_equal(size_of(s2), 3 * (int64_t)sizeof rdk_batch_0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments"), 3);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 7);
    assert_true(g.bytes_ok);
    /* after a kill and a start (the rows folded), retention still removes what dies */
    kill9_reopen(f);
    assert_segments_exact(f);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 6), 5);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(size_of(s1), -1);
    assert_int_equal(size_of(s2), -1);
    g = read_all(f, 0);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
}

/*
 * A rollback reloads where the next append goes: past the committed rows that segments.used does
 * not count yet (migration 22), or the next append would write over them.
 */
static void test_rollback_after_unfolded_appends_writes_past_them(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    append_real(f, 0, 3);
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_commit(f->s), -1);
    char s1[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    assert_int_equal(size_of(s1), 3 * (int64_t)sizeof rdk_batch_0); /* the lost append cut, no more */
    append_real(f, 0, 3);
    assert_int_equal(stor_commit(f->s), 0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 4);
    assert_true(g.bytes_ok);
    fx_reopen(f); /* a clean stop: the snapshot folds */
    assert_int_equal(fx_raw_int(f->path, "SELECT live FROM segments WHERE partition = 0 AND id = 1"), 4);
    assert_segments_exact(f);
}

/*
 * A database of schema 21: batches_seg_add counted every row, those past bytes_end too. Migration
 * 22 folds them into bytes_end before it drops the trigger, so the start's fold counts none twice.
 */
static void test_upgrade_from_version_21_counts_segments_once(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 3 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 5; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0;
    stor_close(f->s);
    f->s = NULL;
    assert_true(fx_raw_int(f->path, "SELECT bytes_end FROM partitions WHERE partition = 0") < 5);
    fx_raw_exec(f->path,
                "DROP TRIGGER batches_seg_del; DROP TRIGGER batches_seg_move;"
                "UPDATE segments SET live = (SELECT count(*) FROM batches b WHERE b.topic_id = segments.topic_id"
                "  AND b.partition = segments.partition AND b.seg = segments.id),"
                " used = (SELECT coalesce(max(pos + size), 0) FROM batches b WHERE b.topic_id = segments.topic_id"
                "  AND b.partition = segments.partition AND b.seg = segments.id);"
                FX_SEG_TRIGGERS_BEFORE_22
                "PRAGMA user_version = 21;");
    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'batches_seg_add'"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes_end FROM partitions WHERE partition = 0"), 5);
    assert_segments_exact(f);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 5 * (int64_t)sizeof rdk_batch_0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 5);
    assert_true(g.bytes_ok);
    /* retention removes the first segment once its rows go */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 3), 3);
    assert_int_equal(stor_commit(f->s), 0);
    char s1[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    assert_int_equal(size_of(s1), -1);
}

static int64_t blocks_of(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_blocks * 512 : -1;
}

/*
 * The newest segment's blocks are allocated ahead of its appends (fallocate, its size unchanged:
 * readers and recovery see only what was written); a closed segment gives back what it did not use.
 */
static void test_segment_blocks_allocated_ahead_and_given_back(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 1 << 20);
    append_real(f, 0, 0);
    assert_int_equal(stor_commit(f->s), 0);
    char s1[256], s2[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    seg_path(f, 0, 2, s2, sizeof s2);
    assert_int_equal(size_of(s1), (int64_t)sizeof rdk_batch_0);
    if (blocks_of(s1) < 64 << 10) skip(); /* a file system without fallocate */
    stor_seg_set_bytes(f->s, (int64_t)sizeof rdk_batch_0 + 1);
    append_real(f, 0, 1); /* closes segment 1 */
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(size_of(s1), (int64_t)sizeof rdk_batch_0);
    assert_true(blocks_of(s1) <= 4096);
    assert_int_equal(size_of(s2), (int64_t)sizeof rdk_batch_0);
    fx_reopen(f);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
}

/* Appends cut into 128 KiB pieces of the file (pwrite_all) keep every byte in place, whatever their alignment. */
static void test_large_append_written_in_pieces(void **state) {
    fx *f = *state;
    size_t sizes[] = {100, 700 << 10, (128 << 10) - 100, 1, (300 << 10) + 7, 128 << 10};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) total += sizes[i];
    uint8_t *want = malloc(total);
    assert_non_null(want);
    for (size_t i = 0; i < total; i++) want[i] = (uint8_t)(i * 2654435761u >> 13);
    size_t at = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int64_t seg = 0, pos = -1;
        assert_int_equal(stor_seg_append(f->s, f->topic, 0, want + at, sizes[i], &seg, &pos), 0);
        assert_int_equal(seg, 1);
        assert_int_equal(pos, (int64_t)at);
        at += sizes[i];
    }
    uint8_t *back = malloc(total);
    assert_non_null(back);
    assert_int_equal(stor_seg_read(f->s, f->topic, 0, 1, 0, back, total), 0);
    assert_memory_equal(back, want, total);
    char seg[256];
    seg_path(f, 0, 1, seg, sizeof seg);
    assert_int_equal(size_of(seg), (int64_t)total);
    free(back);
    free(want);
}

/*
 * storage.sync=normal: a closed segment is fdatasync'd by a thread after a delay (the kernel's
 * writeback has usually done the work by then), and its mark goes into the next commit after
 * that, never before; the newest segment is left to recovery as before.
 */
static void test_closed_segments_are_synced_later(void **state) {
    fx *f = *state;
    stor_seg_sync_set_delay(f->s, 0);
    stor_seg_set_bytes(f->s, 3 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 10; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    /* the commit that closed them cannot hold their marks: nothing was synced before it */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE synced > 0"), 0);
    assert_true(stor_seg_sync_idle(f->s, 10000));
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE partition = 0 AND synced = " STOR_SEG_USED("segments")), 3);
    assert_int_equal(fx_raw_int(f->path, "SELECT synced FROM segments WHERE partition = 0 AND id = 4"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT synced FROM segments WHERE partition = 0 AND id = 1"),
                     3 * (int64_t)sizeof rdk_batch_0);
}

/* A segment closed by a transaction that was lost is open again: nothing of it is queued or marked. */
static void test_rolled_back_close_syncs_nothing(void **state) {
    fx *f = *state;
    stor_seg_sync_set_delay(f->s, 0);
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    append_real(f, 0, 0);
    append_real(f, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    append_real(f, 0, 2); /* closes segment 1, opens 2 */
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_commit(f->s), -1);
    assert_true(stor_seg_sync_idle(f->s, 10000));
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE synced > 0"), 0);
    /* closed again, for good this time */
    append_real(f, 0, 2);
    assert_int_equal(stor_commit(f->s), 0);
    assert_true(stor_seg_sync_idle(f->s, 10000));
    append_real(f, 1, 1);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT synced FROM segments WHERE partition = 0 AND id = 1"),
                     2 * (int64_t)sizeof rdk_batch_0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
}

/* Closed segments a stop left unsynced go to the thread again at the next open. */
static void test_unsynced_closed_segments_are_queued_at_open(void **state) {
    fx *f = *state;
    stor_seg_sync_set_delay(f->s, 3600 * 1000);
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 5; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    assert_false(stor_seg_sync_idle(f->s, 0)); /* two closed segments wait their delay */
    fx_reopen(f); /* the stop does not wait for them */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE synced > 0"), 0);
    assert_false(stor_seg_sync_idle(f->s, 0));
    assert_int_equal(read_all(f, 0).n, 5);
}

/* Appends whose commit never happened are cut at the next open; what was committed is intact. */
static void test_open_cuts_uncommitted_appends(void **state) {
    fx *f = *state;
    append_real(f, 0, 0);
    assert_int_equal(stor_commit(f->s), 0);
    append_real(f, 0, 1);
    append_real(f, 0, 2);
    char seg[256];
    seg_path(f, 0, 1, seg, sizeof seg);
    assert_int_equal(size_of(seg), 3 * (int64_t)sizeof rdk_batch_0);
    fx_reopen(f); /* closes without a commit, as a kill -9 would */
    assert_int_equal(size_of(seg), (int64_t)sizeof rdk_batch_0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 1);
    append_real(f, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    g = read_all(f, 0);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
}

/* A transaction SQLite lost takes its new segment and its appends with it. */
static void test_rollback_undoes_segment_writes(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    append_real(f, 0, 0);
    assert_int_equal(stor_commit(f->s), 0);
    append_real(f, 0, 1);
    append_real(f, 0, 2); /* opens segment 2 */
    char s1[256], s2[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    seg_path(f, 0, 2, s2, sizeof s2);
    assert_true(size_of(s2) > 0);
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_commit(f->s), -1);
    assert_int_equal(size_of(s2), -1);
    assert_int_equal(size_of(s1), (int64_t)sizeof rdk_batch_0);
    append_real(f, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
}

static void flip_byte(const char *path, long at) {
    FILE *sf = fopen(path, "r+b");
    assert_non_null(sf);
    assert_int_equal(fseek(sf, at, SEEK_SET), 0);
    int c = fgetc(sf);
    assert_int_equal(fseek(sf, at, SEEK_SET), 0);
    fputc(c ^ 0x5a, sf);
    fclose(sf);
}

/* n batches into partition 0 and one into partition 1, committed, and the store closed. */
static void fill_and_close(fx *f, int n) {
    for (int i = 0; i < n; i++) append_real(f, 0, i);
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
}

/*
 * After a reboot (another kernel boot id) what was not synced is read back: the first batch
 * that fails its CRC goes with every later batch of its partition; other partitions keep theirs.
 */
static void test_reboot_checks_unsynced_bytes(void **state) {
    fx *f = *state;
    fill_and_close(f, 4);
    char seg[256];
    seg_path(f, 0, 1, seg, sizeof seg);
    flip_byte(seg, (long)sizeof rdk_batch_0 * 1 + 70); /* a record byte of offset 1 */

    /* the same boot: the page cache held everything, nothing is read back */
    fx_open(f);
    int64_t verified = -1;
    assert_int_equal(stor_seg_recovery(f->s, &verified), 0);
    assert_int_equal(verified, 0);
    assert_int_equal(read_all(f, 0).n, 4);
    stor_close(f->s);
    f->s = NULL;

    fx_raw_exec(f->path, "UPDATE settings SET value = 'another boot' WHERE key = 'segments.boot_id'");
    fx_open(f);
    assert_int_equal(stor_seg_recovery(f->s, &verified), 3);
    assert_int_equal(verified, 5 * (int64_t)sizeof rdk_batch_0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.bases[0], 0);
    assert_int_equal(read_all(f, 1).n, 1);
    /* checked once: the marks moved to the end */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE synced = " STOR_SEG_USED("segments")), 2);
    /*
     * The dropped offsets were counted by partitions.bytes (the clean stop folded them in);
     * appended again they are counted again, also after a kill -9 (schema migration 21).
     */
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), (int64_t)sizeof rdk_batch_0);
    append_real(f, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0; /* as a kill -9 would: no snapshot at close */
    stor_close(f->s);
    fx_open(f);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 2 * (int64_t)sizeof rdk_batch_0);
}

/* A missing segment that rows still point into is refused at open, with the way out. */
static void test_missing_segment_is_refused(void **state) {
    fx *f = *state;
    append_real(f, 0, 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    char seg[256], err[512] = "";
    (void)err;
    seg_path(f, 0, 1, seg, sizeof seg);
    assert_int_equal(unlink(seg), 0);
    assert_int_equal(stor_open(&f->s, f->path, STOR_SYNC_NORMAL, err, sizeof err), 0);
    assert_int_equal(stor_recover(f->s), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "is missing: 1 batches have their bytes there"));
    assert_non_null(strstr(stor_errmsg(f->s), "mskmock --salvage"));
}

/*
 * Regression (dir_fsync_of_new_segments): storage.sync=normal fsyncs a new segment's name only
 * with the segment (the syncer), not when it is made, so a power cut may take the names of
 * never-synced segments, their partition's directory too: after the reboot their rows go as
 * lost bytes' do, with every later row of the partition, and the partition takes appends again.
 * Once synced, a missing segment is refused as before (test_missing_segment_is_refused).
 */
static void test_reboot_recovers_never_synced_segment_whose_name_is_lost(void **state) {
    fx *f = *state;
    fill_and_close(f, 3);
    char seg[256], dir[300];
    seg_path(f, 0, 1, seg, sizeof seg);
    snprintf(dir, sizeof dir, "%s.segments/%lld-0", f->path, (long long)f->topic);
    assert_int_equal(unlink(seg), 0);
    assert_int_equal(rmdir(dir), 0);
    fx_raw_exec(f->path, "UPDATE settings SET value = 'another boot' WHERE key = 'segments.boot_id'");
    fx_open(f);
    int64_t verified = -1;
    assert_int_equal(stor_seg_recovery(f->s, &verified), 3);
    assert_int_equal(read_all(f, 0).n, 0);
    assert_int_equal(read_all(f, 1).n, 1);
    append_real(f, 0, 0);
    assert_int_equal(stor_commit(f->s), 0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 1);
    assert_true(g.bytes_ok);

    /* synced and then missing: not a power cut's doing */
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "UPDATE segments SET synced = " STOR_SEG_USED("segments"));
    fx_raw_exec(f->path, "UPDATE settings SET value = 'a third boot' WHERE key = 'segments.boot_id'");
    seg_path(f, 1, 1, seg, sizeof seg);
    assert_int_equal(unlink(seg), 0);
    char err[512] = "";
    assert_int_equal(stor_open(&f->s, f->path, STOR_SYNC_NORMAL, err, sizeof err), 0);
    assert_int_equal(stor_recover(f->s), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "is missing"));
}

/* ---- storage.verify (stor_verify.c): the segment files checked against the rows before stor_recover ---- */

/* The store closed and opened again without stor_recover, as the broker does before its check. */
static int verify_reopened(fx *f, stor_verify_mode mode, char *err, size_t n) {
    if (f->s) stor_close(f->s);
    f->s = NULL;
    char why[512];
    if (stor_open(&f->s, f->path, STOR_SYNC_NORMAL, why, sizeof why) != 0) fail_msg("stor_open: %s", why);
    return stor_verify(f->s, mode, NULL, err, n);
}

static void test_verify_passes_sound_files_and_after_kill9(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, 0, i);
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    append_real(f, 0, 3); /* written, never committed: a kill -9 leaves these bytes past segments.used */
    char err[512] = "";
    stor_verify_stats st;
    stor_close(f->s);
    f->s = NULL;
    assert_int_equal(stor_open(&f->s, f->path, STOR_SYNC_NORMAL, err, sizeof err), 0);
    assert_int_equal(stor_verify(f->s, STOR_VERIFY_START, &st, err, sizeof err), 0);
    assert_int_equal(st.segments, 2);
    assert_int_equal(st.batches_read, 2); /* the newest of each file */
    assert_int_equal(st.rows, 4);
    assert_int_equal(stor_verify(f->s, STOR_VERIFY_FULL, &st, err, sizeof err), 0);
    assert_int_equal(st.batches_read, 4);
    assert_int_equal(stor_recover(f->s), 0);
    assert_int_equal(read_all(f, 0).n, 3);
}

/* A file shorter than its rows need is refused, named, with what the rows need. */
static void test_verify_refuses_truncated_segment(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    char seg[256], err[512] = "", want[600];
    seg_path(f, 0, 1, seg, sizeof seg);
    assert_int_equal(truncate(seg, (off_t)sizeof rdk_batch_0), 0);
    assert_int_equal(verify_reopened(f, STOR_VERIFY_START, err, sizeof err), 1);
    snprintf(want, sizeof want, "segment %s is %zu bytes, the index needs %zu (its batch of offsets 2-2 ends there)", seg,
             sizeof rdk_batch_0, 3 * sizeof rdk_batch_0);
    if (!strstr(err, want)) fail_msg("%s", err);
    assert_non_null(strstr(err, "(topic t partition 0)"));
    assert_int_equal(verify_reopened(f, STOR_VERIFY_OFF, err, sizeof err), 0);
}

/* Another partition's file in this one's place: its newest batch is not the row's. */
static void test_verify_refuses_swapped_segment(void **state) {
    fx *f = *state;
    append_real(f, 0, 0);
    append_real(f, 0, 1);
    append_real(f, 1, 5);
    append_real(f, 1, 6);
    append_real(f, 1, 7);
    assert_int_equal(stor_commit(f->s), 0);
    char s0[256], s1[256], tmp[300], err[512] = "";
    seg_path(f, 0, 1, s0, sizeof s0);
    seg_path(f, 1, 1, s1, sizeof s1);
    snprintf(tmp, sizeof tmp, "%s.tmp", s0);
    assert_int_equal(rename(s0, tmp), 0);
    assert_int_equal(rename(s1, s0), 0);
    assert_int_equal(rename(tmp, s1), 0);
    assert_int_equal(verify_reopened(f, STOR_VERIFY_START, err, sizeof err), 1);
    if (!strstr(err, "the batch at byte 88 (offsets 1-1 in the index) is offsets 6-6, the index says 1-1 (swapped or "
                     "overwritten?)") || !strstr(err, s0))
        fail_msg("%s", err);
    /* nothing was cut: partition 1's bytes are whole in partition 0's place */
    assert_int_equal(size_of(s0), 3 * (int64_t)sizeof rdk_batch_0);
}

/* A byte changed in a batch other than the newest: start does not read it, full does, and reads stop there. */
static void test_verify_full_reads_every_batch_and_reads_stop_at_damage(void **state) {
    fx *f = *state;
    for (int i = 0; i < 4; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    char seg[256], err[512] = "";
    seg_path(f, 0, 1, seg, sizeof seg);
    flip_byte(seg, (long)sizeof rdk_batch_0 * 2 + 70); /* a record byte of offset 2 */
    assert_int_equal(verify_reopened(f, STOR_VERIFY_START, err, sizeof err), 0);
    got g = read_all(f, 0); /* start does not check reads */
    assert_int_equal(g.n, 4);
    assert_false(g.bytes_ok);
    assert_int_equal(verify_reopened(f, STOR_VERIFY_FULL, err, sizeof err), 1);
    if (!strstr(err, "the batch at byte 176 (offsets 2-2 in the index) has a CRC mismatch (overwritten?)"))
        fail_msg("%s", err);
    /* full on a running store (the damage came after its start): a read serves what is before the batch */
    g = (got){.bytes_ok = true};
    assert_int_equal(stor_batch_read(f->s, f->topic, 0, 0, INT64_MAX, on_batch, &g), -1);
    assert_true(stor_read_bad_batch(f->s));
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
    if (!strstr(stor_errmsg(f->s), "the batch at offset 2 (offsets 2-2, in segment ") ||
        !strstr(stor_errmsg(f->s), "at byte 176) has a CRC mismatch; not served (storage.verify=full)"))
        fail_msg("%s", stor_errmsg(f->s));
    g = (got){.bytes_ok = true};
    assert_int_equal(stor_batch_read(f->s, f->topic, 0, 3, INT64_MAX, on_batch, &g), 0);
    assert_false(stor_read_bad_batch(f->s));
    assert_int_equal(g.n, 1);
}

/*
 * After a reboot, bytes past a segment's synced mark may be lost with the page cache: they are
 * stor_recover's to check and remove, not a reason to refuse the start.
 */
static void test_verify_leaves_unsynced_bytes_to_recovery_after_reboot(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    char seg[256], err[512] = "";
    seg_path(f, 0, 1, seg, sizeof seg);
    assert_int_equal(truncate(seg, (off_t)sizeof rdk_batch_0 + 10), 0); /* the power cut took the rest */
    assert_int_equal(verify_reopened(f, STOR_VERIFY_START, err, sizeof err), 1); /* same boot: refused */
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "UPDATE settings SET value = 'another boot' WHERE key = 'segments.boot_id'");
    fx_raw_exec(f->path, "UPDATE segments SET synced = 88");
    assert_int_equal(verify_reopened(f, STOR_VERIFY_FULL, err, sizeof err), 0);
    assert_int_equal(stor_recover(f->s), 0);
    assert_int_equal(read_all(f, 0).n, 1);
}

/* Rows from before migration 8 keep their bytes in the row; reads take them, compaction moves them out. */
static void test_rows_with_bytes_inline(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    uint8_t b[sizeof rdk_batch_0];
    real_batch(0, b);
    char hex[2 * sizeof b + 1];
    for (size_t i = 0; i < sizeof b; i++) snprintf(hex + 2 * i, 3, "%02x", b[i]);
    char sql[1024];
    snprintf(sql, sizeof sql,
             "INSERT INTO batches (topic_id, partition, base_offset, last_offset, max_timestamp, producer_id,"
             " producer_epoch, base_sequence, last_sequence, records_count, size, data)"
             " VALUES (%lld, 0, 0, 0, 1000, -1, -1, -1, -1, 1, %zu, x'%s')",
             (long long)f->topic, sizeof b, hex);
    fx_raw_exec(f->path, sql);
    fx_open(f);
    append_real(f, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, 0, 1000, 1, b, sizeof b), 1);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM batches WHERE seg IS NULL"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT " STOR_SEG_LIVE("segments") " FROM segments WHERE partition = 0 AND id = 1"), 2);
    g = read_all(f, 0);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
}

/* Deleting a topic removes its segments' rows with it and its files after the commit. */
static void test_topic_delete_frees_segments(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 5; i++) append_real(f, 0, i);
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments"), 4);
    char dir[256];
    snprintf(dir, sizeof dir, "%s.segments/%lld-0", f->path, (long long)f->topic);
    assert_true(size_of(dir) >= 0);
    assert_int_equal(stor_topic_delete(f->s, f->topic), 0);
    assert_true(size_of(dir) >= 0); /* not before the commit */
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments"), 0);
    assert_int_equal(size_of(dir), -1);
}

/*
 * A dead segment's file goes right after the commit that killed it, its row with the next commit
 * (one autocommit DELETE per segment held the loop after a compaction's swap), or at close.
 */
static void test_dead_segments_rows_go_with_the_next_commit(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 3 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 10; i++) append_real(f, 0, i);
    assert_int_equal(stor_commit(f->s), 0);
    char s1[256], s2[256];
    seg_path(f, 0, 1, s1, sizeof s1);
    seg_path(f, 0, 2, s2, sizeof s2);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 3), 3);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(size_of(s1), -1);
    assert_int_equal(fx_raw_int(f->path, "SELECT " STOR_SEG_LIVE("segments") " FROM segments WHERE id = 1"), 0);
    append_real(f, 0, 10);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE id = 1"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments"), 3);
    /* a rolled-back commit keeps them for the one after it */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 6), 3);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(size_of(s2), -1);
    append_real(f, 0, 11);
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_commit(f->s), -1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE id = 2"), 1);
    fx_reopen(f); /* the close deletes them */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE id = 2"), 0);
    got g = read_all(f, 0);
    assert_int_equal(g.n, 5);
    assert_int_equal(g.bases[0], 6);
    assert_true(g.bytes_ok);
}

/* Partitions roll and free their segments independently: one topic's retention never waits for another's. */
static void test_partitions_have_their_own_segments(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 6; i++) {
        append_real(f, 0, i);
        append_real(f, 1, i);
    }
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 4), 4);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE partition = 0 AND " STOR_SEG_LIVE("segments") " > 0"), 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE partition = 1"), 3);
    assert_int_equal(read_all(f, 0).n, 2);
    assert_int_equal(read_all(f, 1).n, 6);
}

/* Notices storage gives the operator's log (stor_set_notice), collected. */
typedef struct notes {
    int n;
    char last[1600];
} notes;

static void on_notice(void *ctx, const char *line) {
    notes *ns = ctx;
    ns->n++;
    snprintf(ns->last, sizeof ns->last, "%s", line);
}

/* Files and bytes under a directory, at any depth. */
static int64_t tree_bytes(const char *dir, int *files) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -printf '%%s\\n' 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    int64_t sum = 0;
    long long v;
    *files = 0;
    while (p && fscanf(p, "%lld", &v) == 1) {
        sum += v;
        (*files)++;
    }
    if (p) pclose(p);
    return sum;
}

/*
 * A salvage that lost a topic's rows leaves its partition directories with no row: the next
 * start moves them aside whole, logs one line per directory, and deletes nothing.
 */
static void test_partitions_without_rows_are_moved_aside(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, 0, i);
    append_real(f, 1, 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    /* what a salvage that could not read the topics table leaves: the rows gone, the directory named */
    char sql[200];
    snprintf(sql, sizeof sql, "PRAGMA foreign_keys = ON; DELETE FROM topics WHERE id = %lld", (long long)f->topic);
    fx_raw_exec(f->path, sql);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM partitions"), 0);
    fx_open(f);
    notes ns = {0};
    stor_set_notice(f->s, on_notice, &ns); /* lines made at open are held until now */
    assert_int_equal(ns.n, 2);
    assert_non_null(strstr(ns.last, "is not in the database"));
    assert_non_null(strstr(ns.last, "moved aside to"));
    char dir[256], aside[256];
    snprintf(dir, sizeof dir, "%s.segments/%lld-0", f->path, (long long)f->topic);
    assert_int_equal(size_of(dir), -1);
    snprintf(aside, sizeof aside, "%s/orphaned", f->dir);
    int files = 0;
    assert_int_equal(tree_bytes(aside, &files), 4 * (int64_t)sizeof rdk_batch_0);
    assert_int_equal(files, 2);
}

/* A topic the broker deleted, killed before its files went: the next start deletes them (the commit recorded it). */
static void test_deleted_topic_files_go_at_next_start(void **state) {
    fx *f = *state;
    append_real(f, 0, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_topic_delete(f->s, f->topic), 0);
    /* the commit, without what follows it (a kill between the two) */
    assert_int_equal(sqlite3_exec(f->s->db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    f->s->in_txn = false;
    f->s->segs.ngone = 0;
    char dir[256];
    snprintf(dir, sizeof dir, "%s.segments/%lld-0", f->path, (long long)f->topic);
    assert_true(size_of(dir) >= 0);
    fx_reopen(f);
    notes ns = {0};
    stor_set_notice(f->s, on_notice, &ns);
    assert_int_equal(ns.n, 0);
    assert_int_equal(size_of(dir), -1);
    char aside[256];
    snprintf(aside, sizeof aside, "%s/orphaned", f->dir);
    assert_int_equal(size_of(aside), -1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM settings WHERE key LIKE 'segments.deleting.%'"), 0);
}

/* A new topic never takes an id whose directory exists, and a new segment never overwrites a file. */
static void test_new_topic_skips_ids_on_disk(void **state) {
    fx *f = *state;
    char stray[256];
    snprintf(stray, sizeof stray, "%s.segments", f->path);
    mkdir(stray, 0755); /* no append made it yet */
    snprintf(stray, sizeof stray, "%s.segments/%lld-0", f->path, (long long)f->topic + 5);
    assert_int_equal(mkdir(stray, 0755), 0);
    stor_topic t = {.name = "u", .partitions = 1, .created_ms = 1};
    assert_int_equal(stor_topic_create(f->s, &t), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(t.id, f->topic + 6);
    /* a file where the partition's next segment goes (no row names it): moved aside, not truncated */
    char dir[256], seg[300];
    snprintf(dir, sizeof dir, "%s.segments/%lld-0", f->path, (long long)t.id);
    snprintf(seg, sizeof seg, "%s/%020d.log", dir, 1);
    assert_int_equal(mkdir(dir, 0755), 0);
    FILE *old = fopen(seg, "wb");
    assert_non_null(old);
    fputs("bytes of another life", old);
    fclose(old);
    notes ns = {0};
    stor_set_notice(f->s, on_notice, &ns);
    uint8_t b[sizeof rdk_batch_0];
    real_batch(0, b);
    stor_batch_meta m = meta1(0);
    assert_int_equal(stor_batch_append(f->s, t.id, 0, &m, b, sizeof b), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(ns.n, 1);
    assert_non_null(strstr(ns.last, "was in the way of a new segment"));
    assert_int_equal(size_of(seg), (int64_t)sizeof rdk_batch_0);
    char aside[256];
    snprintf(aside, sizeof aside, "%s/orphaned", f->dir);
    int files = 0;
    assert_int_equal(tree_bytes(aside, &files), (int64_t)strlen("bytes of another life"));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_bytes_go_to_segment_files),
        T(test_roll_and_delete_dead_segments),
        T(test_segment_blocks_allocated_ahead_and_given_back),
        T(test_large_append_written_in_pieces),
        T(test_closed_segments_are_synced_later),
        T(test_rolled_back_close_syncs_nothing),
        T(test_unsynced_closed_segments_are_queued_at_open),
        T(test_open_cuts_uncommitted_appends),
        T(test_kill9_with_appends_past_snapshot_keeps_them),
        T(test_sweep_keeps_segments_of_unfolded_rows),
        T(test_rollback_after_unfolded_appends_writes_past_them),
        T(test_upgrade_from_version_21_counts_segments_once),
        T(test_rollback_undoes_segment_writes),
        T(test_reboot_checks_unsynced_bytes),
        T(test_verify_passes_sound_files_and_after_kill9),
        T(test_verify_refuses_truncated_segment),
        T(test_verify_refuses_swapped_segment),
        T(test_verify_full_reads_every_batch_and_reads_stop_at_damage),
        T(test_verify_leaves_unsynced_bytes_to_recovery_after_reboot),
        T(test_missing_segment_is_refused),
        T(test_reboot_recovers_never_synced_segment_whose_name_is_lost),
        T(test_rows_with_bytes_inline),
        T(test_topic_delete_frees_segments),
        T(test_dead_segments_rows_go_with_the_next_commit),
        T(test_partitions_have_their_own_segments),
        T(test_partitions_without_rows_are_moved_aside),
        T(test_deleted_topic_files_go_at_next_start),
        T(test_new_topic_skips_ids_on_disk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
