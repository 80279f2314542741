/*
 * The records field of a Produce partition: record batches one after another, parsed and
 * checked as the append path does (kp_batch_next, CRC, kp_batch_validate), then patched as
 * the log does on append (base offset, leader epoch, LogAppendTime with a new CRC), after which
 * the batch must still parse with the same length and a valid CRC. Every batch is also read as
 * a transaction marker (what a consumer of the log must tell apart), which a produced batch
 * never is: validation refuses control batches.
 */
#include <stdlib.h>
#include <string.h>

#include "kp_batch.h"

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
