/*
 * req: a request's life below the pipeline (req.h): its arena and adopted buffers, the refusal
 * line, encoding its answer (size prefix, header v0 or v1, throttle_time_ms, the first error code
 * the metrics count) and the three ways an answer becomes ready: at once, after the storage
 * commit, or when a parked request is answered. net.c then writes answers strictly in order.
 */
#include "req.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_mem.h"
#include "log.h"
#include "metrics.h"
#include "net.h"

void *req_alloc(req *r, size_t n) { return kp_arena_alloc(&r->arena, n); }

kp_str req_strf(req *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = req_alloc(r, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return (kp_str){p, n};
}

void req_adopt(req *r, void *p) {
    void **a = xrealloc(r->adopted, sizeof(void *) * (size_t)(r->nadopted + 1));
    r->adopted = a;
    a[r->nadopted++] = p;
}

void req_free(req *r) {
    if (r->pooled) net_pool_release(r);
    for (int i = 0; i < r->nadopted; i++) free(r->adopted[i]);
    free(r->adopted);
    kp_arena_free(&r->arena);
    kp_writer_free(&r->out);
    if (r->frame) free(r->frame - r->frame_off);
    free(r);
}

void req_log_refusal(const req *r, int16_t code, const char *fmt, ...) {
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    log_now.error = code; /* log.format=json carries it as error_code */
    log_now.has_error = true;
    /* the API layer's refusal, whichever handler asked: its component is "api" */
    log_write_at(LOG_WARN, "broker/api/refusal", "conn=%llu client=%s principal=%s api=%s v%d corr=%d refused error=%s(%d): %s",
             (unsigned long long)r->c->id, conn_client_id(r->c), r->c->principal ? r->c->principal : "ANONYMOUS",
             kp_api_name(r->hdr.api_key),
             r->hdr.api_version, r->hdr.correlation_id, kp_err_name(code), code, why);
    log_now.has_error = false;
}

void *req_resp(req *r) {
    void *p = req_alloc(r, r->msg->resp->size);
    kp_defaults(r->msg->resp, r->hdr.api_version, p);
    return p;
}

/* Where the response struct of m at ver keeps throttle_time_ms; -1: it has none (ApiVersions v0...). */
static int throttle_field(const kp_msg *m, int16_t ver) {
    const kp_schema *sc = m->resp;
    for (uint16_t i = 0; i < sc->nfields; i++) {
        const kp_field *f = &sc->fields[i];
        if (f->tag < 0 && f->vmin <= ver && ver <= f->vmax && !strcmp(f->name, "throttle_time_ms")) return f->off;
    }
    return -1;
}

/* Records fields from this size on go out by reference (net.c writes the spans). */
#define RESP_REF_MIN 4096
/* The first buffer of an answer: most (Produce, Fetch's inline part, the transactions' APIs) fit. */
#define RESP_FIRST_CAP 1024

/*
 * Size prefix, response header (v1 with tagged fields when flexible, v0 otherwise), body. The body
 * is encoded in one pass and the size patched in afterwards: sizing it first (kp_size) walked the
 * description twice, ~40% of the encoding's instructions (issue 37); a larger answer grows its
 * buffer by doubling instead.
 */
void req_encode(req *r, const kp_msg *m, int16_t ver, const void *resp) {
    if (r->amend) r->amend(r, m, ver, (void *)resp);
    int off = r->throttle_ms > 0 ? throttle_field(m, ver) : -1;
    if (off >= 0) {
        /* the request quota's throttle, unless a byte quota's is longer; Kafka reports the longer too */
        int32_t *t = (int32_t *)((char *)resp + off);
        if (*t < r->throttle_ms) *t = r->throttle_ms;
    }
    bool flex = kp_is_flex(m, ver);
    bool hflex = kp_resp_header_flex(m, ver);
    r->error_code = metrics_response_error(&r->c->s->metrics, m, ver, flex, resp);
    /* large records fields (Fetch) are referenced, not copied: the inline part is then small */
    kp_writer_init(&r->out, RESP_FIRST_CAP);
    r->out.ref_min = RESP_REF_MIN;
    kp_wr_i32(&r->out, 0); /* the size, below */
    kp_wr_i32(&r->out, r->hdr.correlation_id);
    if (hflex) kp_wr_uvarint(&r->out, 0);
    kp_encode(&r->out, m->resp, ver, flex, resp);
    size_t total = r->out.len - 4;
    for (int i = 0; i < r->out.nrefs; i++) total += r->out.refs[i].len;
    kp_put_i32(r->out.buf, (int32_t)total);
}

void req_respond(req *r, const void *resp) {
    srv *s = r->c->s;
    if (stor_in_txn(s->st) && stor_change_count(s->st) != r->changes_at_start) {
        req_respond_after_commit(s, r, resp);
        return;
    }
    req_encode(r, r->msg, r->hdr.api_version, resp);
    req_set_state(r, REQ_READY);
}

void req_respond_again(req *r) {
    kp_writer_free(&r->out);
    req_encode(r, r->msg, r->hdr.api_version, r->resp);
    req_set_state(r, REQ_READY);
}

void req_respond_after_commit(srv *s, req *r, const void *resp) {
    r->resp = (void *)resp;
    req_encode(r, r->msg, r->hdr.api_version, resp);
    if (stor_in_txn(s->st)) {
        r->commit_seq = stor_commit_seq(s->st);
        req_set_state(r, REQ_WAIT_COMMIT);
        net_hold_for_commit(r->c);
    } else {
        req_set_state(r, REQ_READY);
    }
}

void req_silent(req *r) { req_set_state(r, REQ_SILENT); }

void req_park(req *r, void *data, void (*cancel)(srv *s, req *r)) {
    req_set_state(r, REQ_PARKED);
    r->park = data;
    r->park_cancel = cancel;
}

void req_cancel_park(srv *s, req *r) {
    if (r->park_cancel) r->park_cancel(s, r);
    r->park_cancel = NULL;
    r->park = NULL;
}

void req_unpark_respond(srv *s, req *r, const void *resp) {
    r->park = NULL;
    r->park_cancel = NULL;
    req_respond_after_commit(s, r, resp);
    net_pump_later(r->c);
}

void req_throttle(req *r, int32_t ms, const char *what, const char *quota) {
    if (ms <= 0) return;
    conn *c = r->c;
    net_mute(c, ms);
    metrics_throttle(&c->s->metrics, quota, ms);
    if (!c->throttle_logged) {
        c->throttle_logged = true;
        log_info("conn=%llu client=%s: %s throttled %d ms by a quota (%s); the connection is muted that long; its "
                 "later throttles are logged at debug",
                 (unsigned long long)c->id, conn_client_id(c), what, ms, quota);
    } else {
        log_debug("conn=%llu client=%s: %s throttled %d ms (%s)", (unsigned long long)c->id, conn_client_id(c), what,
                  ms, quota);
    }
}
