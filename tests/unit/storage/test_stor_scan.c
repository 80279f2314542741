/*
 * stor: a partition's segment files read back without the database (stor_scan.c): batches in
 * offset order, the newest copy of rewritten offsets, and damage ending a file with the bytes
 * after it counted.
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

#include "fixtures.h"
#include "kp_batch.h"
#include "protocol/rdk_batches.h"
#include "stor_int.h"

#define BS ((int64_t)sizeof rdk_batch_0)

typedef struct sfx {
    char dir[256];
} sfx;

static int setup(void **state) {
    sfx *f = calloc(1, sizeof *f);
    tmp_dir_new(f->dir, sizeof f->dir, "stor_scan");
    *state = f;
    return 0;
}

static int teardown(void **state) {
    sfx *f = *state;
    tmp_dir_remove(f->dir);
    free(f);
    return 0;
}

/* librdkafka's one-record batch at base offset base, appended to segment id. */
static void put(sfx *f, int64_t id, int64_t base) {
    uint8_t b[sizeof rdk_batch_0];
    memcpy(b, rdk_batch_0, sizeof b);
    kp_batch_patch(b, base, 0);
    char path[400];
    snprintf(path, sizeof path, "%s/%020lld.log", f->dir, (long long)id);
    FILE *fp = fopen(path, "ab");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, sizeof b, fp), sizeof b);
    fclose(fp);
}

static void put_bytes(sfx *f, int64_t id, const void *p, size_t n) {
    char path[400];
    snprintf(path, sizeof path, "%s/%020lld.log", f->dir, (long long)id);
    FILE *fp = fopen(path, "ab");
    assert_non_null(fp);
    assert_int_equal(fwrite(p, 1, n, fp), n);
    fclose(fp);
}

static void scan(sfx *f, int64_t log_start, stor_scan_limit_fn limit, void *ctx, stor_scan *out) {
    char err[300] = "";
    if (stor_scan_partition(f->dir, log_start, limit, ctx, out, err, sizeof err)) fail_msg("scan: %s", err);
}

static void test_batches_in_offset_order_across_segments(void **state) {
    sfx *f = *state;
    for (int i = 0; i < 5; i++) put(f, 1, i);
    for (int i = 5; i < 8; i++) put(f, 2, i);
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 8);
    assert_int_equal(s.nsegs, 2);
    for (size_t i = 0; i < s.n; i++) {
        assert_int_equal(s.b[i].base_offset, (int64_t)i);
        assert_int_equal(s.b[i].seg, i < 5 ? 1 : 2);
        assert_int_equal(s.b[i].pos, (int64_t)(i < 5 ? i : i - 5) * BS);
        assert_int_equal(s.b[i].size, BS);
        assert_int_equal(s.b[i].marker, -1);
    }
    assert_int_equal(s.records, 8);
    assert_int_equal(s.dropped_bytes, 0);
    assert_int_equal(s.segs[0].valid, 5 * BS);
    assert_string_equal(s.segs[0].why, "");
    stor_scan_free(&s);
}

/* The cleaner appends a rewritten batch at its old offsets: the copy read later wins. */
static void test_newest_copy_of_rewritten_offsets_wins(void **state) {
    sfx *f = *state;
    put(f, 1, 0);
    put(f, 1, 1);
    put(f, 1, 2);
    put(f, 2, 3);
    put(f, 2, 1); /* the rewrite of 1, after 3 */
    put(f, 2, 4);
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.superseded, 1);
    for (size_t i = 0; i < s.n; i++) assert_int_equal(s.b[i].base_offset, (int64_t)i);
    assert_int_equal(s.b[1].seg, 2);
    assert_int_equal(s.b[1].pos, BS);
    stor_scan_free(&s);
}

static void test_torn_tail_drops_only_the_last_batch(void **state) {
    sfx *f = *state;
    put(f, 1, 0);
    put(f, 1, 1);
    put_bytes(f, 1, rdk_batch_0, 40); /* a batch cut short */
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.segs[0].valid, 2 * BS);
    assert_int_equal(s.segs[0].dropped, 40);
    assert_int_equal(s.segs[0].bad_from, 2 * BS);
    assert_int_equal(s.dropped_bytes, 40);
    assert_true(strstr(s.segs[0].why, "at byte 176") != NULL);
    stor_scan_free(&s);
}

/* The CRC does not cover the frame (base offset, length): with the frame whole, the next batch is read on. */
static void test_crc_failure_drops_that_batch_alone(void **state) {
    sfx *f = *state;
    put(f, 1, 0);
    uint8_t b[sizeof rdk_batch_0];
    memcpy(b, rdk_batch_0, sizeof b);
    kp_batch_patch(b, 1, 0);
    b[sizeof b - 3] ^= 0x5a; /* a record byte: the CRC covers it */
    put_bytes(f, 1, b, sizeof b);
    put(f, 1, 2);
    put(f, 2, 3);
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.b[0].base_offset, 0);
    assert_int_equal(s.b[1].base_offset, 2);
    assert_int_equal(s.b[2].base_offset, 3);
    assert_int_equal(s.segs[0].dropped, BS);
    assert_int_equal(s.segs[0].bad_from, BS);
    assert_int_equal(s.segs[0].valid, 3 * BS);
    assert_true(strstr(s.segs[0].why, "at byte 88: CRC mismatch") != NULL);
    stor_scan_free(&s);
}

/* A length that runs past the file: nothing after it can be framed, so the file ends there. */
static void test_bad_length_ends_the_file(void **state) {
    sfx *f = *state;
    put(f, 1, 0);
    uint8_t b[sizeof rdk_batch_0];
    memcpy(b, rdk_batch_0, sizeof b);
    kp_batch_patch(b, 1, 0);
    b[8] = 0x7f; /* batch_length: ~2 GB */
    put_bytes(f, 1, b, sizeof b);
    put(f, 1, 2);
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.segs[0].dropped, 2 * BS);
    assert_int_equal(s.segs[0].valid, BS);
    stor_scan_free(&s);
}

static int64_t limit_two(void *ctx, int64_t id) {
    (void)ctx;
    return id == 1 ? 2 * BS : -1;
}

/* Past segments.used: an append no commit held, not a record anyone was acknowledged for. */
static void test_bytes_past_the_committed_end_are_left_out(void **state) {
    sfx *f = *state;
    for (int i = 0; i < 3; i++) put(f, 1, i);
    stor_scan s;
    scan(f, 0, limit_two, NULL, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.segs[0].uncommitted, BS);
    assert_int_equal(s.segs[0].dropped, 0);
    assert_int_equal(s.dropped_bytes, 0);
    stor_scan_free(&s);
}

static void test_batches_before_log_start_stay_removed(void **state) {
    sfx *f = *state;
    for (int i = 0; i < 4; i++) put(f, 1, i);
    stor_scan s;
    scan(f, 2, NULL, NULL, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.b[0].base_offset, 2);
    assert_int_equal(s.below_start, 2);
    stor_scan_free(&s);
}

static void test_producer_fields_and_markers(void **state) {
    sfx *f = *state;
    put(f, 1, 0);
    uint8_t m[KP_MARKER_SIZE];
    kp_batch_write_marker(m, 77, 3, 1000, false, 0);
    kp_batch_patch(m, 1, 0);
    put_bytes(f, 1, m, sizeof m);
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 2);
    kp_batch b;
    size_t pos = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(rdk_batch_0, sizeof rdk_batch_0, &pos, &b, &why), 1);
    assert_int_equal(s.b[0].producer_id, b.producer_id);
    assert_int_equal(s.b[0].producer_epoch, b.producer_epoch);
    assert_int_equal(s.b[0].base_sequence, b.base_sequence);
    assert_int_equal(s.b[0].last_sequence, b.base_sequence + b.last_offset_delta);
    assert_int_equal(s.b[1].marker, 0); /* ABORT */
    assert_int_equal(s.b[1].producer_id, 77);
    assert_int_equal(s.b[1].last_sequence, -1);
    stor_scan_free(&s);
}

static void test_empty_directory(void **state) {
    sfx *f = *state;
    put_bytes(f, 1, "", 0);
    stor_scan s;
    scan(f, 0, NULL, NULL, &s);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.nsegs, 1);
    assert_int_equal(s.dropped_bytes, 0);
    stor_scan_free(&s);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_batches_in_offset_order_across_segments),
        T(test_newest_copy_of_rewritten_offsets_wins),
        T(test_torn_tail_drops_only_the_last_batch),
        T(test_crc_failure_drops_that_batch_alone),
        T(test_bad_length_ends_the_file),
        T(test_bytes_past_the_committed_end_are_left_out),
        T(test_batches_before_log_start_stay_removed),
        T(test_producer_fields_and_markers),
        T(test_empty_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
