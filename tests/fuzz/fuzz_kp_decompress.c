/*
 * Decompression of a records section, as the broker does for a batch it must look inside: the
 * first byte (mod 5) picks the codec, the rest is the input, the limit is 1 MiB. An answer must
 * keep to the limit and survive a round trip through our own compressor; a refusal must say why
 * and hand nothing back.
 */
#include <stdlib.h>
#include <string.h>

#include "kp_compress.h"

#define MAX_OUT ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    int codec = data[0] % 5;
    uint8_t *out = (uint8_t *)data, *z, *back;
    size_t out_len = 0, zn, back_len;
    const char *why = NULL;
    if (kp_decompress(codec, data + 1, size - 1, MAX_OUT, &out, &out_len, &why) != 0) {
        if (out || !why) abort();
        return 0;
    }
    if (!out || out_len > MAX_OUT) abort();
    if (kp_compress(codec, out, out_len, &z, &zn, &why) != 0) abort();
    if (kp_decompress(codec, z, zn, out_len, &back, &back_len, &why) != 0) abort();
    if (back_len != out_len || (out_len && memcmp(back, out, out_len) != 0)) abort();
    free(back);
    free(z);
    free(out);
    return 0;
}
