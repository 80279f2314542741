/*
 * The records field of a Produce partition: record batches one after another, parsed and
 * checked as the append path does (kp_batch_next, CRC, kp_batch_validate), then patched as
 * the log does on append (base offset, leader epoch, LogAppendTime with a new CRC), after which
 * the batch must still parse with the same length and a valid CRC. Every batch is also read as
 * a transaction marker (what a consumer of the log must tell apart), which a produced batch
 * never is: validation refuses control batches. A valid batch's records are then read as the
 * record pass on append reads them (decompressed, each bounds-checked), and when they all read,
 * rebuilt the way recompression rebuilds them: the new batch must parse, with a valid CRC, and
 * hold the same records.
 */
#include <stdlib.h>
#include <string.h>

#include "kp_batch.h"
#include "kp_records.h"

/* How many records b holds, each read (into out, when given: only for uncompressed b); -1 when they do not read. */
static int count_records(const kp_batch *b, kp_record *out, int max) {
    const uint8_t *sec;
    size_t len;
    uint8_t *owned;
    const char *why;
    if (kp_batch_records(b, 1 << 20, &sec, &len, &owned, &why) != 0) return -1;
    kp_record_iter it;
    kp_records_begin(&it, sec, len, b->records_count);
    kp_record r;
    int n = 0, rc;
    while ((rc = kp_records_next(&it, &r, &why)) == 1) {
        if (out && n < max) out[n] = r;
        n++;
    }
    free(owned); /* out points into it only for uncompressed batches, where there is none */
    return rc == 0 ? n : -1;
}

static void rebuilt_the_same(const kp_batch *b) {
    kp_record recs[256];
    if (kp_batch_codec(b) != KP_CODEC_NONE || b->records_count > 256) return;
    int n = count_records(b, recs, 256);
    if (n < 0) return;
    uint8_t *out;
    size_t len, at = 0;
    const char *why;
    if (kp_batch_rebuild(b, KP_CODEC_LZ4, recs, n, true, -1, &out, &len, &why) != 0) abort();
    kp_batch c;
    if (kp_batch_next(out, len, &at, &c, &why) != 1 || at != len || !kp_batch_crc_ok(&c) || c.records_count != n ||
        count_records(&c, NULL, 0) != n)
        abort();
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    size_t pos = 0;
    kp_batch b;
    const char *why;
    while (kp_batch_next(buf, size, &pos, &b, &why) == 1) {
        kp_batch_crc_ok(&b);
        int marker = kp_batch_marker_type(&b);
        if (marker < -1 || marker > 1) abort();
        if (kp_batch_validate(&b, &why) != 0) continue;
        if (marker != -1) abort();
        count_records(&b, NULL, 0);
        rebuilt_the_same(&b);
        uint8_t *p = (uint8_t *)b.data;
        size_t at = (size_t)(p - buf), len = b.size;
        kp_batch_patch(p, 12345, 7);
        kp_batch_set_log_append_time(p, len, 1796200000000);
        size_t again = at;
        kp_batch c;
        if (kp_batch_next(buf, size, &again, &c, &why) != 1 || again != at + len || !kp_batch_crc_ok(&c) ||
            c.base_offset != 12345)
            abort();
    }
    free(buf);
    return 0;
}
