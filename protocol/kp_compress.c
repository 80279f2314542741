/*
 * The four codecs of a record batch's records section, on the well-kept libraries (zlib, snappy,
 * liblz4, libzstd), in the framings Kafka's clients really use: snappy-java's xerial chunks from
 * the Java client but bare blocks from librdkafka, lz4 frames as KafkaLZ4BlockOutputStream
 * writes them, zstd frames that often omit their content size. The input comes from clients, so
 * every length in it is untrusted and the output is bounded by the caller's max_out as it is
 * produced: a small batch must not be able to make the broker allocate gigabytes.
 */
#include "kp_compress.h"
#include "kp_snappy.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

static const char TOO_LONG[] = "decompressed data exceeds the size limit";

/* snappy-java's stream header: magic, version 1, minimum compatible version 1 */
static const uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
#define XERIAL_HEADER 16
#define XERIAL_BLOCK (32 << 10) /* snappy-java's default block size, which Kafka keeps */

static int fail(const char **why, const char *msg) {
    if (why) *why = msg;
    return -1;
}

static uint32_t get_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uInt clamp_uint(size_t n) { return n > UINT_MAX ? UINT_MAX : (uInt)n; }

/*
 * Output of a streaming decoder, doubling up to limit = max_out + 1: a decoder can only show that
 * its output is too long by producing one byte more than max_out, so that byte is the slack.
 */
typedef struct out_buf {
    uint8_t *p;
    size_t len, cap, limit;
} out_buf;

static int ob_init(out_buf *o, size_t in_len, size_t max_out) {
    o->limit = max_out < SIZE_MAX ? max_out + 1 : SIZE_MAX;
    size_t cap = in_len < o->limit / 4 ? in_len * 4 : o->limit; /* a guess: batches compress ~4x */
    if (cap < 4096) cap = 4096;
    if (cap > o->limit) cap = o->limit;
    o->len = 0;
    o->cap = cap;
    o->p = malloc(cap);
    return o->p ? 0 : -1;
}

/* Room for at least one more byte, or the refusal. */
static int ob_room(out_buf *o, const char **why) {
    if (o->len < o->cap) return 0;
    if (o->cap >= o->limit) return fail(why, TOO_LONG);
    size_t cap = o->cap <= o->limit / 2 ? o->cap * 2 : o->limit;
    uint8_t *p = realloc(o->p, cap);
    if (!p) return fail(why, "out of memory");
    o->p = p;
    o->cap = cap;
    return 0;
}

/* gzip; concatenated members are read one after another, as Java's GZIPInputStream does. */
static int gunzip(const uint8_t *in, size_t in_len, out_buf *o, const char **why) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 32) != Z_OK) return fail(why, "out of memory");
    int rc = -1;
    size_t pos = 0;
    while (ob_room(o, why) == 0) {
        uInt ain = clamp_uint(in_len - pos), aout = clamp_uint(o->cap - o->len);
        zs.next_in = in + pos;
        zs.avail_in = ain;
        zs.next_out = o->p + o->len;
        zs.avail_out = aout;
        int zr = inflate(&zs, Z_NO_FLUSH);
        pos += ain - zs.avail_in;
        o->len += aout - zs.avail_out;
        if (zr == Z_STREAM_END) {
            if (pos == in_len) {
                rc = 0;
                break;
            }
            inflateReset(&zs);
        } else if (zr != Z_OK) {
            fail(why, zr == Z_BUF_ERROR   ? "truncated gzip data"
                      : zr == Z_MEM_ERROR ? "out of memory"
                                          : "corrupt gzip data");
            break;
        }
    }
    inflateEnd(&zs);
    return rc;
}

/* One or more lz4 frames, whatever their block size, mode and checksums. */
static int unlz4(const uint8_t *in, size_t in_len, out_buf *o, const char **why) {
    LZ4F_dctx *dc;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dc, LZ4F_VERSION))) return fail(why, "out of memory");
    int rc = -1;
    size_t pos = 0;
    while (ob_room(o, why) == 0) {
        size_t dst = o->cap - o->len, src = in_len - pos;
        size_t hint = LZ4F_decompress(dc, o->p + o->len, &dst, in + pos, &src, NULL);
        if (LZ4F_isError(hint)) {
            fail(why, "corrupt lz4 data");
            break;
        }
        pos += src;
        o->len += dst;
        if (hint == 0 && pos == in_len) {
            rc = 0;
            break;
        }
        if (src == 0 && dst == 0) { /* with room for output: the decoder needs input it cannot have */
            fail(why, pos == in_len ? "truncated lz4 data" : "corrupt lz4 data");
            break;
        }
    }
    LZ4F_freeDecompressionContext(dc);
    return rc;
}

/*
 * One or more zstd frames. The decoder keeps a window as large as the frame declares, so that is
 * bounded too: 8 MiB covers what Kafka's producers write up to level 19 (level 3, the default,
 * declares 2 MiB), larger windows are allowed only as far as max_out, and never beyond 128 MiB,
 * zstd's default and what Kafka's own consumers accept.
 */
static int unzstd(const uint8_t *in, size_t in_len, size_t max_out, out_buf *o, const char **why) {
    unsigned long long declared = ZSTD_getFrameContentSize(in, in_len);
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared > max_out)
        return fail(why, TOO_LONG);
    int wlog = 23;
    while (wlog < 27 && ((size_t)1 << wlog) < max_out) wlog++;
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (!dc) return fail(why, "out of memory");
    int rc = -1;
    if (ZSTD_isError(ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, wlog))) {
        ZSTD_freeDCtx(dc);
        return fail(why, "zstd refused its window limit");
    }
    ZSTD_inBuffer ib = {in, in_len, 0};
    while (ob_room(o, why) == 0) {
        ZSTD_outBuffer ob = {o->p, o->cap, o->len};
        size_t r = ZSTD_decompressStream(dc, &ob, &ib);
        if (ZSTD_isError(r)) {
            ZSTD_ErrorCode e = ZSTD_getErrorCode(r);
            fail(why, e == ZSTD_error_frameParameter_windowTooLarge ? "zstd window too large"
                      : e == ZSTD_error_memory_allocation           ? "out of memory"
                                                                    : "corrupt zstd data");
            break;
        }
        o->len = ob.pos;
        if (r == 0 && ib.pos == ib.size) {
            rc = 0;
            break;
        }
        if (ib.pos == ib.size && ob.pos < ob.size) {
            fail(why, "truncated zstd data");
            break;
        }
    }
    ZSTD_freeDCtx(dc);
    return rc;
}

/*
 * One pass over xerial chunks: with out NULL, validate them and sum their lengths into *total
 * (refusing beyond max_out); then again with out sized to that, to decompress. A chunk length
 * equal to the magic's first word starts a concatenated stream, which snappy-java reads on.
 */
static int xerial_pass(const kp_snappy_api *sn, const uint8_t *in, size_t in_len, size_t max_out, uint8_t *out,
                       size_t *total, const char **why) {
    size_t pos = XERIAL_HEADER, sum = 0;
    while (pos < in_len) {
        if (in_len - pos < 4) return fail(why, "truncated snappy chunk");
        if (in_len - pos >= XERIAL_HEADER && memcmp(in + pos, xerial_magic, sizeof xerial_magic) == 0) {
            pos += XERIAL_HEADER;
            continue;
        }
        size_t n = get_be32(in + pos);
        pos += 4;
        if (n > in_len - pos) return fail(why, "truncated snappy chunk");
        const char *blk = (const char *)(in + pos);
        size_t ulen;
        if (sn->uncompressed_length(blk, n, &ulen) != SNAPPY_OK) return fail(why, "corrupt snappy chunk");
        if (ulen > max_out - sum) return fail(why, TOO_LONG);
        if (!out && sn->validate_compressed_buffer(blk, n) != SNAPPY_OK) return fail(why, "corrupt snappy chunk");
        size_t got = ulen;
        if (out && (sn->uncompress(blk, n, (char *)out + sum, &got) != SNAPPY_OK || got != ulen))
            return fail(why, "corrupt snappy chunk");
        sum += ulen;
        pos += n;
    }
    *total = sum;
    return 0;
}

/* snappy-java's framing when the magic is there, else one bare block (librdkafka). */
static int unsnappy(const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out, size_t *out_len,
                    const char **why) {
    const kp_snappy_api *sn = kp_snappy(why);
    if (!sn) return -1;
    size_t ulen;
    bool framed = in_len >= sizeof xerial_magic && memcmp(in, xerial_magic, sizeof xerial_magic) == 0;
    if (framed) {
        if (in_len < XERIAL_HEADER) return fail(why, "truncated snappy header");
        if (xerial_pass(sn, in, in_len, max_out, NULL, &ulen, why) != 0) return -1;
    } else {
        if (sn->uncompressed_length((const char *)in, in_len, &ulen) != SNAPPY_OK)
            return fail(why, "corrupt snappy data");
        if (ulen > max_out) return fail(why, TOO_LONG);
        if (sn->validate_compressed_buffer((const char *)in, in_len) != SNAPPY_OK)
            return fail(why, "corrupt snappy data");
    }
    uint8_t *p = malloc(ulen ? ulen : 1);
    if (!p) return fail(why, "out of memory");
    size_t got = ulen;
    int rc = framed ? xerial_pass(sn, in, in_len, max_out, p, &got, why)
                    : sn->uncompress((const char *)in, in_len, (char *)p, &got) == SNAPPY_OK ? 0 : -1;
    if (rc != 0 || got != ulen) {
        free(p);
        return fail(why, "corrupt snappy data");
    }
    *out = p;
    *out_len = ulen;
    return 0;
}

static int copy_out(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why) {
    uint8_t *p = malloc(in_len ? in_len : 1);
    if (!p) return fail(why, "out of memory");
    if (in_len) memcpy(p, in, in_len);
    *out = p;
    *out_len = in_len;
    return 0;
}

static int decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out, size_t *out_len,
                      const char **why) {
    static const uint8_t nothing[1];
    if (!in) {
        if (in_len) return fail(why, "no input");
        in = nothing; /* the libraries do pointer arithmetic on it */
    }
    if (!kp_codec_name(codec)) return fail(why, "unknown compression codec");
    if (codec == KP_CODEC_NONE) return in_len > max_out ? fail(why, TOO_LONG) : copy_out(in, in_len, out, out_len, why);
    if (codec == KP_CODEC_SNAPPY) return unsnappy(in, in_len, max_out, out, out_len, why);
    out_buf o;
    if (ob_init(&o, in_len, max_out) != 0) return fail(why, "out of memory");
    int rc = codec == KP_CODEC_GZIP  ? gunzip(in, in_len, &o, why)
             : codec == KP_CODEC_LZ4 ? unlz4(in, in_len, &o, why)
                                     : unzstd(in, in_len, max_out, &o, why);
    if (rc == 0 && o.len > max_out) rc = fail(why, TOO_LONG);
    if (rc != 0) {
        free(o.p);
        return -1;
    }
    *out = o.p;
    *out_len = o.len;
    return 0;
}

int kp_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out, size_t *out_len,
                  const char **why) {
    const char *w = NULL;
    *out = NULL;
    *out_len = 0;
    if (decompress(codec, in, in_len, max_out, out, out_len, &w) == 0) return 0;
    if (why) *why = w;
    return w == TOO_LONG ? KP_TOO_LARGE : -1; /* the one place TOO_LONG is compared: it is this file's string */
}

static int gzip(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why) {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* as Java's GZIPOutputStream: default level, a bare gzip header naming no OS (255) */
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return fail(why, "out of memory");
    gz_header h;
    memset(&h, 0, sizeof h);
    h.os = 255;
    deflateSetHeader(&zs, &h);
    size_t cap = deflateBound(&zs, in_len); /* in_len <= INT32_MAX: the bound fits a uInt */
    uint8_t *p = malloc(cap);
    zs.next_in = in;
    zs.avail_in = (uInt)in_len;
    zs.next_out = p;
    zs.avail_out = (uInt)cap;
    int zr = p ? deflate(&zs, Z_FINISH) : Z_MEM_ERROR;
    deflateEnd(&zs);
    if (zr != Z_STREAM_END) {
        free(p);
        return fail(why, p ? "gzip compression failed" : "out of memory");
    }
    *out = p;
    *out_len = zs.total_out;
    return 0;
}

static int snappy_xerial(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why) {
    const kp_snappy_api *sn = kp_snappy(why);
    if (!sn) return -1;
    size_t chunks = (in_len + XERIAL_BLOCK - 1) / XERIAL_BLOCK;
    size_t cap = XERIAL_HEADER + chunks * (4 + sn->max_compressed_length(XERIAL_BLOCK));
    uint8_t *p = malloc(cap);
    if (!p) return fail(why, "out of memory");
    memcpy(p, xerial_magic, sizeof xerial_magic);
    put_be32(p + 8, 1);
    put_be32(p + 12, 1);
    size_t pos = XERIAL_HEADER;
    for (size_t off = 0; off < in_len; off += XERIAL_BLOCK) {
        size_t n = in_len - off < XERIAL_BLOCK ? in_len - off : XERIAL_BLOCK, clen = cap - pos - 4;
        if (sn->compress((const char *)in + off, n, (char *)p + pos + 4, &clen) != SNAPPY_OK) {
            free(p);
            return fail(why, "snappy compression failed");
        }
        put_be32(p + pos, (uint32_t)clen);
        pos += 4 + clen;
    }
    *out = p;
    *out_len = pos;
    return 0;
}

static int lz4(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why) {
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs); /* level 0 (fast), no checksums, no content size */
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    size_t cap = LZ4F_compressFrameBound(in_len, &prefs);
    uint8_t *p = malloc(cap);
    if (!p) return fail(why, "out of memory");
    size_t n = LZ4F_compressFrame(p, cap, in, in_len, &prefs);
    if (LZ4F_isError(n)) {
        free(p);
        return fail(why, "lz4 compression failed");
    }
    *out = p;
    *out_len = n;
    return 0;
}

static int zstd(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why) {
    size_t cap = ZSTD_compressBound(in_len);
    uint8_t *p = malloc(cap);
    if (!p) return fail(why, "out of memory");
    size_t n = ZSTD_compress(p, cap, in, in_len, 3);
    if (ZSTD_isError(n)) {
        free(p);
        return fail(why, "zstd compression failed");
    }
    *out = p;
    *out_len = n;
    return 0;
}

int kp_compress(int codec, const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why) {
    static const uint8_t nothing[1];
    *out = NULL;
    *out_len = 0;
    if (!in) {
        if (in_len) return fail(why, "no input");
        in = nothing;
    }
    if (in_len > INT32_MAX) return fail(why, "input larger than a record batch");
    switch (codec) {
    case KP_CODEC_NONE: return copy_out(in, in_len, out, out_len, why);
    case KP_CODEC_GZIP: return gzip(in, in_len, out, out_len, why);
    case KP_CODEC_SNAPPY: return snappy_xerial(in, in_len, out, out_len, why);
    case KP_CODEC_LZ4: return lz4(in, in_len, out, out_len, why);
    case KP_CODEC_ZSTD: return zstd(in, in_len, out, out_len, why);
    default: return fail(why, "unknown compression codec");
    }
}

const char *kp_codec_name(int codec) {
    static const char *const names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    return codec >= 0 && codec < (int)(sizeof names / sizeof names[0]) ? names[codec] : NULL;
}
