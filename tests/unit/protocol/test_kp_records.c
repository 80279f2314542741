/*
 * Records inside a v2 batch: reading them and rebuilding a batch from them. The reference batch
 * was written by librdkafka 2.0.2 (the same capture test_kp_batch.c uses): rebuilding it from
 * its own records must give back its exact bytes, which checks the record encoder and the
 * header handling against an independent implementation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kp.h"
#include "kp_batch.h"
#include "kp_compress.h"
#include "kp_records.h"

/* rdk_batch_1: partition 1, k1 -> "hello" and k3 -> "" (empty, not null), headers h1=v1, h2=xyz */
#include "rdk_batches.h"
#define rdk_batch rdk_batch_1

static void parse(const uint8_t *p, size_t n, kp_batch *b) {
    size_t at = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(p, n, &at, b, &why), 1);
    assert_int_equal(at, n);
    assert_true(kp_batch_crc_ok(b));
}

/* All records of b into recs (at most max); returns how many, failing the test on a malformed one. */
static int32_t read_all(const kp_batch *b, uint8_t **owned, kp_record *recs, int32_t max) {
    const uint8_t *sec;
    size_t len;
    const char *why = NULL;
    assert_int_equal(kp_batch_records(b, 1 << 20, &sec, &len, owned, &why), 0);
    kp_record_iter it;
    kp_records_begin(&it, sec, len, b->records_count);
    int32_t n = 0;
    int rc;
    while ((rc = kp_records_next(&it, &recs[n], &why)) == 1) {
        n++;
        assert_true(n <= max);
    }
    if (rc != 0) fail_msg("records: %s", why);
    return n;
}

static void test_reads_librdkafka_records(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned;
    assert_int_equal(read_all(&b, &owned, r, 4), 2);
    assert_null(owned); /* uncompressed: read in place */
    assert_int_equal(r[0].key_len, 2);
    assert_memory_equal(r[0].key, "k1", 2);
    assert_int_equal(r[0].value_len, 5);
    assert_memory_equal(r[0].value, "hello", 5);
    assert_int_equal(r[1].offset_delta, 1);
    assert_memory_equal(r[1].key, "k3", 2);
    assert_non_null(r[1].value); /* empty is not null: not a tombstone */
    assert_int_equal(r[1].value_len, 0);
    /* the headers as written: count 2, then h1=v1 and h2=xyz */
    assert_int_equal(r[0].headers_len, 14);
    assert_int_equal(r[0].headers[0], 0x04);
}

static void test_rebuild_gives_back_the_same_bytes(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned, *out;
    size_t n;
    const char *why = NULL;
    int32_t cnt = read_all(&b, &owned, r, 4);
    assert_int_equal(kp_batch_rebuild(&b, KP_CODEC_NONE, r, cnt, false, -1, &out, &n, &why), 0);
    assert_int_equal(n, sizeof rdk_batch);
    assert_memory_equal(out, rdk_batch, n);
    free(out);
    assert_int_equal(kp_batch_rebuild(&b, KP_CODEC_NONE, r, cnt, true, -1, &out, &n, &why), 0);
    assert_memory_equal(out, rdk_batch, n); /* its deltas are already 0..n-1 */
    free(out);
}

/* Recompression keeps every record, field for field, in every codec. */
static void test_rebuild_in_each_codec(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned;
    int32_t cnt = read_all(&b, &owned, r, 4);
    for (int codec = KP_CODEC_GZIP; codec <= KP_CODEC_ZSTD; codec++) {
        uint8_t *out, *owned2;
        size_t n;
        const char *why = NULL;
        assert_int_equal(kp_batch_rebuild(&b, codec, r, cnt, true, -1, &out, &n, &why), 0);
        kp_batch c;
        parse(out, n, &c);
        assert_int_equal(kp_batch_codec(&c), codec);
        assert_int_equal(c.records_count, 2);
        assert_int_equal(c.last_offset_delta, 1);
        assert_int_equal(c.producer_id, b.producer_id);
        assert_int_equal(c.base_sequence, b.base_sequence);
        assert_int_equal(c.max_timestamp, b.max_timestamp);
        kp_record q[4];
        assert_int_equal(read_all(&c, &owned2, q, 4), 2);
        assert_non_null(owned2);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(q[i].key_len, r[i].key_len);
            assert_memory_equal(q[i].key, r[i].key, (size_t)r[i].key_len);
            assert_int_equal(q[i].value_len, r[i].value_len);
            assert_int_equal(q[i].headers_len, r[i].headers_len);
            assert_memory_equal(q[i].headers, r[i].headers, r[i].headers_len);
            assert_int_equal(q[i].timestamp_delta, r[i].timestamp_delta);
        }
        free(owned2);
        free(out);
    }
}

/* Compaction keeps a subset at the original offsets: the last offset delta (the producer's last sequence) stays. */
static void test_rebuild_subset_keeps_offsets(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned, *out;
    size_t n;
    const char *why = NULL;
    read_all(&b, &owned, r, 4);
    assert_int_equal(kp_batch_rebuild(&b, KP_CODEC_NONE, &r[1], 1, false, -1, &out, &n, &why), 0);
    kp_batch c;
    parse(out, n, &c);
    assert_int_equal(c.records_count, 1);
    assert_int_equal(c.last_offset_delta, 1);
    kp_record q[2];
    uint8_t *owned2;
    assert_int_equal(read_all(&c, &owned2, q, 2), 1);
    assert_int_equal(q[0].offset_delta, 1);
    assert_memory_equal(q[0].key, "k3", 2);
    free(out);
    /* no records at all: an empty, uncompressed batch (what the cleaner keeps of a producer's last batch) */
    assert_int_equal(kp_batch_rebuild(&b, KP_CODEC_ZSTD, r, 0, false, -1, &out, &n, &why), 0);
    assert_int_equal(n, KP_BATCH_HEADER_SIZE);
    parse(out, n, &c);
    assert_int_equal(c.records_count, 0);
    assert_int_equal(kp_batch_codec(&c), KP_CODEC_NONE);
    assert_int_equal(c.last_offset_delta, 1);
    assert_int_equal(c.max_timestamp, b.max_timestamp);
    free(out);
}

/* KIP-534: the base timestamp becomes the delete horizon, and every record keeps its timestamp. */
static void test_delete_horizon_keeps_record_timestamps(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned, *out, *out2, *o1, *o2;
    size_t n, n2;
    const char *why = NULL;
    read_all(&b, &owned, r, 4);
    int64_t horizon = b.base_timestamp + 86400000;
    assert_int_equal(kp_batch_rebuild(&b, KP_CODEC_LZ4, r, 2, false, horizon, &out, &n, &why), 0);
    kp_batch c;
    parse(out, n, &c);
    assert_true(c.attributes & KP_ATTR_DELETE_HORIZON);
    assert_int_equal(c.base_timestamp, horizon);
    assert_int_equal(c.max_timestamp, b.max_timestamp);
    kp_record q[4];
    assert_int_equal(read_all(&c, &o1, q, 4), 2);
    for (int i = 0; i < 2; i++) assert_int_equal(c.base_timestamp + q[i].timestamp_delta, b.base_timestamp + r[i].timestamp_delta);
    /* cleared again (no tombstone left): the first record's time is the base */
    assert_int_equal(kp_batch_rebuild(&c, KP_CODEC_LZ4, q, 2, false, -1, &out2, &n2, &why), 0);
    kp_batch d;
    parse(out2, n2, &d);
    assert_false(d.attributes & KP_ATTR_DELETE_HORIZON);
    kp_record s[4];
    assert_int_equal(read_all(&d, &o2, s, 4), 2);
    for (int i = 0; i < 2; i++) assert_int_equal(d.base_timestamp + s[i].timestamp_delta, b.base_timestamp + r[i].timestamp_delta);
    free(o1);
    free(o2);
    free(out);
    free(out2);
}

/* A records section that does not match its header, or a record that runs past itself: refused, never read past. */
static void test_malformed_records(void **state) {
    (void)state;
    const uint8_t *sec = rdk_batch + KP_BATCH_HEADER_SIZE;
    size_t len = sizeof rdk_batch - KP_BATCH_HEADER_SIZE;
    kp_record r;
    const char *why;
    kp_record_iter it;
    struct {
        size_t len;
        int32_t count;
        const char *want;
    } cases[] = {
        {len, 3, "fewer records"},
        {len, 1, "bytes left"},
        {len - 1, 2, "length runs past"},
        {5, 1, "length runs past"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kp_records_begin(&it, sec, cases[i].len, cases[i].count);
        int rc;
        why = NULL;
        while ((rc = kp_records_next(&it, &r, &why)) == 1) {}
        assert_int_equal(rc, -1);
        if (!strstr(why, cases[i].want)) fail_msg("case %zu: %s", i, why);
    }
    /* a record whose own length is too short for its key, or claims a negative header count */
    uint8_t bad[sizeof rdk_batch];
    memcpy(bad, rdk_batch, sizeof bad);
    bad[KP_BATCH_HEADER_SIZE] = 0x08; /* first record length 4: ends inside the key */
    kp_records_begin(&it, bad + KP_BATCH_HEADER_SIZE, 5, 1);
    assert_int_equal(kp_records_next(&it, &r, &why), -1);
    memcpy(bad, rdk_batch, sizeof bad);
    bad[KP_BATCH_HEADER_SIZE + 13] = 0x01; /* header count -1 (zigzag) */
    kp_records_begin(&it, bad + KP_BATCH_HEADER_SIZE, len, 2);
    assert_int_equal(kp_records_next(&it, &r, &why), -1);
    assert_non_null(strstr(why, "header count"));
}

/* A compressed section that does not decompress is refused as a whole. */
static void test_corrupt_compressed_section(void **state) {
    (void)state;
    uint8_t buf[sizeof rdk_batch];
    memcpy(buf, rdk_batch, sizeof buf);
    buf[22] = KP_CODEC_ZSTD; /* attributes' low byte: claims zstd over plain records */
    kp_batch b;
    size_t at = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(buf, sizeof buf, &at, &b, &why), 1);
    const uint8_t *sec;
    size_t len;
    uint8_t *owned = (uint8_t *)&at;
    assert_int_equal(kp_batch_records(&b, 1 << 20, &sec, &len, &owned, &why), -1);
    assert_null(owned);
    assert_non_null(why);
}

/* Sets a batch's record count (and last offset delta, which must agree) and fixes its CRC. */
static void set_count(uint8_t *buf, size_t n, int32_t count) {
    kp_put_i32(buf + 23, count - 1);
    kp_put_i32(buf + 57, count);
    kp_put_i32(buf + 17, (int32_t)kp_crc32c(0, buf + 21, n - 21));
}

/*
 * The header's record count is checked against the bytes records may take before anything is
 * allocated: each record is at least KP_RECORD_MIN_SIZE bytes, so a compressed section claiming
 * more records than max_out can hold is KP_TOO_LARGE without being decompressed; one that then
 * holds fewer records than its count is the iterator's refusal.
 */
static void test_record_count_checked_first(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned, *z;
    size_t zn;
    const char *why = NULL;
    int32_t cnt = read_all(&b, &owned, r, 4);
    assert_int_equal(kp_batch_rebuild(&b, KP_CODEC_ZSTD, r, cnt, true, -1, &z, &zn, &why), 0);
    kp_batch c;
    const uint8_t *sec;
    size_t len;
    set_count(z, zn, 33554432); /* the 24 KB zstd bomb's claim: 224 MiB at least */
    parse(z, zn, &c);
    assert_int_equal(kp_batch_records(&c, 32 << 20, &sec, &len, &owned, &why), KP_TOO_LARGE); /* the default topic's limit */
    assert_null(owned);
    set_count(z, zn, 1000); /* fits the limit, not the decompressed bytes */
    parse(z, zn, &c);
    assert_int_equal(kp_batch_records(&c, 1 << 20, &sec, &len, &owned, &why), 0);
    kp_record_iter it;
    kp_records_begin(&it, sec, len, c.records_count);
    while (kp_records_next(&it, &r[0], &why) == 1) {
    }
    assert_non_null(strstr(why, "fewer records"));
    free(owned);
    /* the decompressed size past max_out is KP_TOO_LARGE too, not corrupt */
    set_count(z, zn, 2);
    parse(z, zn, &c);
    int rc = kp_batch_records(&c, 16, &sec, &len, &owned, &why);
    if (rc != KP_TOO_LARGE) fail_msg("rc %d: %s", rc, why);
    free(z);
}

/* The builder, fed one record at a time, makes the bytes kp_batch_rebuild makes from a list. */
static void test_builder_matches_rebuild(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned;
    int32_t cnt = read_all(&b, &owned, r, 4);
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_ZSTD; codec++) {
        uint8_t *a, *c;
        size_t an, cn;
        const char *why = NULL;
        assert_int_equal(kp_batch_rebuild(&b, codec, r, cnt, true, -1, &a, &an, &why), 0);
        kp_batch_builder bb;
        kp_builder_begin(&bb, &b, codec, true, -1);
        for (int32_t i = 0; i < cnt; i++) kp_builder_add(&bb, &r[i]);
        assert_true(kp_builder_len(&bb) > 0);
        assert_int_equal(kp_builder_finish(&bb, &c, &cn, &why), 0);
        assert_int_equal(an, cn);
        assert_memory_equal(a, c, an);
        free(a);
        free(c);
    }
    kp_batch_builder bb;
    kp_builder_begin(&bb, &b, 9, true, -1);
    kp_builder_add(&bb, &r[0]);
    uint8_t *x = NULL;
    size_t xn;
    const char *why = NULL;
    assert_int_equal(kp_builder_finish(&bb, &x, &xn, &why), -1);
    assert_null(x);
    kp_builder_begin(&bb, &b, KP_CODEC_LZ4, true, -1);
    kp_builder_add(&bb, &r[0]);
    kp_builder_discard(&bb);
}

/*
 * The cleaner's worker rebuilds batch after batch into the same two buffers (begin_with and
 * finish_into): each batch must come out as kp_batch_rebuild makes it, whatever the buffers
 * held before, a smaller batch must not reallocate them, and a failed rebuild hands the
 * records' buffer back.
 */
static void test_builder_reuses_its_buffers(void **state) {
    (void)state;
    kp_batch b;
    parse(rdk_batch, sizeof rdk_batch, &b);
    kp_record r[4];
    uint8_t *owned;
    int32_t cnt = read_all(&b, &owned, r, 4);
    kp_writer scratch, into;
    kp_writer_init(&scratch, 0);
    kp_writer_init(&into, 0);
    const int32_t sizes[] = {cnt, 1, cnt, 0, 2};
    for (int codec = KP_CODEC_NONE; codec <= KP_CODEC_ZSTD; codec++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int32_t n = sizes[k];
            int64_t horizon = k == 2 ? 1234567 : -1;
            uint8_t *a;
            size_t an;
            const char *why = NULL;
            assert_int_equal(kp_batch_rebuild(&b, codec, r, n, false, horizon, &a, &an, &why), 0);
            uint8_t *before = into.buf;
            size_t cap = into.cap;
            kp_batch_builder bb;
            kp_builder_begin_with(&bb, &scratch, &b, codec, false, horizon);
            for (int32_t i = 0; i < n; i++) kp_builder_add(&bb, &r[i]);
            assert_int_equal(kp_builder_finish_into(&bb, &into, &scratch, &why), 0);
            assert_int_equal(into.len, an);
            assert_memory_equal(into.buf, a, an);
            if (an <= cap) assert_ptr_equal(into.buf, before); /* kept, not reallocated */
            assert_int_equal(scratch.len, 0);
            free(a);
        }
    }
    assert_non_null(scratch.buf); /* the records' buffer came back each time */
    kp_batch_builder bb;
    kp_builder_begin_with(&bb, &scratch, &b, 9, false, -1);
    assert_null(scratch.buf); /* lent to the builder */
    kp_builder_add(&bb, &r[0]);
    const char *why = NULL;
    assert_int_equal(kp_builder_finish_into(&bb, &into, &scratch, &why), -1);
    assert_non_null(why);
    assert_non_null(scratch.buf); /* and back after a failure */
    kp_writer_free(&scratch);
    kp_writer_free(&into);
    free(owned);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_librdkafka_records),
        cmocka_unit_test(test_rebuild_gives_back_the_same_bytes),
        cmocka_unit_test(test_rebuild_in_each_codec),
        cmocka_unit_test(test_rebuild_subset_keeps_offsets),
        cmocka_unit_test(test_delete_horizon_keeps_record_timestamps),
        cmocka_unit_test(test_malformed_records),
        cmocka_unit_test(test_corrupt_compressed_section),
        cmocka_unit_test(test_record_count_checked_first),
        cmocka_unit_test(test_builder_matches_rebuild),
        cmocka_unit_test(test_builder_reuses_its_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
