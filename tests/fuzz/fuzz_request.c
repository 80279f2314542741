/*
 * Request frames (header and body) as the broker receives them, for every API key and version
 * the schema tables describe. A frame that decodes must re-encode to exactly kp_size bytes,
 * and encoding is stable: decode(encode(x)) encodes to the same bytes. What a request carries
 * for other decoders goes through them too: JoinGroup's subscriptions, SyncGroup's
 * assignments (both modes), Produce's record batches. And what a fault rule of the admin API
 * does with it: the error answer mirrored from it encodes to exactly its size.
 *
 * Input: one request frame without its 4-byte size prefix (what tools/fuzz-seeds captures).
 */
#include <stdlib.h>
#include <string.h>

#include "kp.h"
#include "kp_batch.h"
#include "kp_consumer.h"
#include "kp_mirror.h"
#include "kp_msgs.h"

#define CHECK(c) \
    do {         \
        if (!(c)) abort(); \
    } while (0)

static void consumer_bytes(kp_bytes b, bool assignment) {
    if (b.len <= 0) return;
    for (int mode = KP_CONSUMER_STRICT; mode <= KP_CONSUMER_LENIENT; mode++) {
        kp_arena a = {0};
        kp_consumer_error e;
        char line[512];
        if (assignment) {
            kp_assignment out;
            if (!kp_assignment_decode((const uint8_t *)b.p, (size_t)b.len, mode, &out, &a, &e))
                kp_consumer_error_format(&e, "ConsumerProtocolAssignment", out.version, (size_t)b.len, line, sizeof line);
        } else {
            kp_subscription out;
            if (!kp_subscription_decode((const uint8_t *)b.p, (size_t)b.len, mode, &out, &a, &e))
                kp_consumer_error_format(&e, "ConsumerProtocolSubscription", out.version, (size_t)b.len, line,
                                         sizeof line);
        }
        kp_arena_free(&a);
    }
}

static void batches(kp_bytes recs) {
    if (recs.len <= 0) return;
    size_t pos = 0;
    kp_batch b;
    const char *why;
    while (kp_batch_next((const uint8_t *)recs.p, (size_t)recs.len, &pos, &b, &why) == 1) {
        kp_batch_crc_ok(&b);
        kp_batch_validate(&b, &why);
    }
}

/*
 * What a fault rule does with the request (admin API): ask what it names, mirror an error
 * answer from it, and write an error over that answer; the answer must encode to its size.
 */
static void mirror(const kp_msg *m, int16_t ver, bool flex, const void *msg, kp_arena *a) {
    static const kp_uuid id = {{1, 2, 3}};
    kp_target t = {kp_str_c("t"), &id, 0};
    kp_names_topic(m->req, ver, msg, &t);
    kp_names_group(m->req, ver, msg, kp_str_c("g"));
    void *resp = kp_arena_alloc(a, m->resp->size);
    kp_mirror_error(m->req, m->resp, ver, msg, resp, 6, kp_str_c("injected"), a);
    kp_set_errors(m->resp, ver, resp, 3, KP_STR_NULL, &t);
    size_t want = kp_size(m->resp, ver, flex, resp);
    kp_writer w;
    kp_writer_init(&w, 256);
    kp_encode(&w, m->resp, ver, flex, resp);
    CHECK(w.len == want);
    kp_writer_free(&w);
}

static void inner(int16_t key, const void *msg) {
    if (key == 11) { /* JoinGroup */
        const kp_join_group_request *j = msg;
        for (int i = 0; i < j->protocols.n; i++) consumer_bytes(j->protocols.v[i].metadata, false);
    } else if (key == 14) { /* SyncGroup */
        const kp_sync_group_request *s = msg;
        for (int i = 0; i < s->assignments.n; i++) consumer_bytes(s->assignments.v[i].assignment, true);
    } else if (key == 0) { /* Produce */
        const kp_produce_request *p = msg;
        for (int t = 0; t < p->topic_data.n; t++)
            for (int q = 0; q < p->topic_data.v[t].partition_data.n; q++) batches(p->topic_data.v[t].partition_data.v[q].records);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int16_t key, ver;
    int32_t corr;
    if (!kp_peek_req_header(data, size, &key, &ver, &corr)) return 0;
    const kp_msg *m = kp_msg_get(key);
    if (!m || ver < m->vmin || ver > m->vmax) return 0;
    bool flex = kp_is_flex(m, ver);
    kp_reader r;
    kp_reader_init(&r, data, size);
    kp_req_header h;
    if (!kp_decode_req_header(&r, flex, &h)) return 0;

    kp_arena a = {0};
    void *msg = kp_arena_alloc(&a, m->req->size);
    if (kp_decode(&r, m->req, ver, flex, msg, &a)) {
        inner(key, msg);
        mirror(m, ver, flex, msg, &a);
        size_t want = kp_size(m->req, ver, flex, msg);
        kp_writer w;
        kp_writer_init(&w, 256);
        kp_encode(&w, m->req, ver, flex, msg);
        CHECK(w.len == want);
        /* what was encoded decodes, and encodes to the same bytes */
        kp_reader r2;
        kp_reader_init(&r2, w.buf, w.len);
        void *again = kp_arena_alloc(&a, m->req->size);
        CHECK(kp_decode(&r2, m->req, ver, flex, again, &a));
        CHECK(kp_rd_left(&r2) == 0);
        kp_writer w2;
        kp_writer_init(&w2, 256);
        kp_encode(&w2, m->req, ver, flex, again);
        CHECK(w2.len == w.len && memcmp(w2.buf, w.buf, w.len) == 0);
        kp_writer_free(&w);
        kp_writer_free(&w2);
    }
    kp_arena_free(&a);
    return 0;
}
