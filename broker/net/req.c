#include "req.h"

#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "iam/sasl.h"
#include "log.h"
#include "net.h"
#include "req_fault.h"
#include "topic/topic.h"

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
    void **a = realloc(r->adopted, sizeof(void *) * (size_t)(r->nadopted + 1));
    if (!a) abort();
    r->adopted = a;
    a[r->nadopted++] = p;
}

void req_free(req *r) {
    for (int i = 0; i < r->nadopted; i++) free(r->adopted[i]);
    free(r->adopted);
    kp_arena_free(&r->arena);
    kp_writer_free(&r->out);
    free(r->frame);
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
#define RESP_INLINE_CAP 65536

/* Size prefix, response header (v1 with tagged fields when flexible, v0 otherwise), body. */
static void encode_response(req *r, const kp_msg *m, int16_t ver, const void *resp) {
    if (r->fault) req_fault_overwrite(r, m, ver, (void *)resp);
    int off = r->throttle_ms > 0 ? throttle_field(m, ver) : -1;
    if (off >= 0) {
        /* the request quota's throttle, unless a byte quota's is longer; Kafka reports the longer too */
        int32_t *t = (int32_t *)((char *)resp + off);
        if (*t < r->throttle_ms) *t = r->throttle_ms;
    }
    bool flex = kp_is_flex(m, ver);
    bool hflex = kp_resp_header_flex(m, ver);
    r->error_code = metrics_response_error(r->c->s, m, ver, flex, resp);
    size_t body = kp_size(m->resp, ver, flex, resp);
    size_t total = 4 + (hflex ? 1 : 0) + body;
    /* large records fields (Fetch) are referenced, not copied: the inline part is then small */
    kp_writer_init(&r->out, 4 + total <= RESP_INLINE_CAP ? 4 + total : RESP_INLINE_CAP);
    r->out.ref_min = RESP_REF_MIN;
    kp_wr_i32(&r->out, (int32_t)total);
    kp_wr_i32(&r->out, r->hdr.correlation_id);
    if (hflex) kp_wr_uvarint(&r->out, 0);
    kp_encode(&r->out, m->resp, ver, flex, resp);
}

void req_respond(req *r, const void *resp) {
    encode_response(r, r->msg, r->hdr.api_version, resp);
    r->state = REQ_READY;
}

void req_respond_again(req *r) {
    kp_writer_free(&r->out);
    encode_response(r, r->msg, r->hdr.api_version, r->resp);
    r->state = REQ_READY;
}

void req_respond_after_commit(srv *s, req *r, const void *resp) {
    r->resp = (void *)resp;
    encode_response(r, r->msg, r->hdr.api_version, resp);
    if (stor_in_txn(s->st)) {
        r->commit_seq = stor_commit_seq(s->st);
        r->state = REQ_WAIT_COMMIT;
        net_hold_for_commit(r->c);
    } else {
        r->state = REQ_READY;
    }
}

void req_silent(req *r) { r->state = REQ_SILENT; }

void req_park(req *r, void *data, void (*cancel)(srv *s, req *r)) {
    r->state = REQ_PARKED;
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

/*
 * An ApiVersions request newer than we serve gets a v0 answer with
 * UNSUPPORTED_VERSION and our ranges, so the client retries with one we know.
 */
static void refuse_api_versions(srv *s, req *r) {
    r->msg = kp_msg_get(18);
    kp_api_versions_response *resp = req_alloc(r, sizeof *resp);
    kp_defaults(r->msg->resp, 0, resp);
    resp->error_code = KERR_UNSUPPORTED_VERSION;
    api_fill_versions(s, r, resp);
    /* the normal first step of clients newer than us, so info rather than warn */
    log_info("conn=%llu client=%s api=ApiVersions v%d corr=%d answered error=UNSUPPORTED_VERSION(35) with v0 and the "
             "served ranges, so the client retries with one we serve",
             (unsigned long long)r->c->id, conn_client_id(r->c), r->hdr.api_version, r->hdr.correlation_id);
    encode_response(r, r->msg, 0, resp);
    r->state = REQ_READY;
}

void req_throttle(req *r, int32_t ms, const char *what, const char *quota) {
    if (ms <= 0) return;
    conn *c = r->c;
    net_mute(c, ms);
    metrics_throttle(c->s, quota, ms);
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

static void remember_client_id(conn *c, kp_str id) {
    if (id.len >= 0 && !(c->client_id && kp_str_eq(id, c->client_id))) {
        free(c->client_id);
        c->client_id = kp_str_dup(id);
    }
    net_log_scope(c);
    net_log_open(c);
}

static bool dispatch(srv *s, req *r);

/* log.format=json: what the request logs names its connection and API (log.h's scope). */
bool req_dispatch(srv *s, req *r) {
    if (log_fmt != LOG_JSON) return dispatch(s, r);
    log_scope saved = log_now;
    net_log_scope(r->c);
    bool ok = dispatch(s, r);
    log_now = saved;
    return ok;
}

static bool dispatch(srv *s, req *r) {
    conn *c = r->c;
    int16_t key, ver;
    int32_t corr;
    r->started_us = clk_mono_us();
    if (c->sasl_raw) return sasl_raw_token(s, r); /* after SaslHandshake v0 the frame is a bare SASL token */
    if (!kp_peek_req_header(r->frame, r->len, &key, &ver, &corr)) {
        log_warn("conn=%llu refused frame of %zu bytes: shorter than a request header", (unsigned long long)c->id,
                 r->len);
        return false;
    }
    r->hdr.api_key = key;
    r->hdr.api_version = ver;
    r->hdr.correlation_id = corr;
    const api_handler *h = api_lookup(key);
    r->msg = kp_msg_get(key);
    if (log_fmt == LOG_JSON) snprintf(log_now.api, sizeof log_now.api, "%s", r->msg ? r->msg->name : "");
    int16_t vmin = 0, vmax = -1;
    if (h) api_range(s, h, &vmin, &vmax);
    if (!h || !r->msg || ver < vmin || ver > vmax) {
        /* every header version starts like v1: the client id is readable for the log line */
        kp_reader rd;
        kp_reader_init(&rd, r->frame, r->len);
        if (kp_decode_req_header(&rd, false, &r->hdr)) remember_client_id(c, r->hdr.client_id);
    }
    if (!h || !r->msg || vmax < vmin) {
        log_warn("conn=%llu client=%s refused %s (key %d) v%d corr=%d: %s; closing as Kafka does",
                 (unsigned long long)c->id, conn_client_id(c), r->msg ? r->msg->name : "request", key, ver, corr,
                 !h || !r->msg ? "unknown or unserved API key"
                 : h->kafka_profile_only && s->cfg->profile != PROFILE_KAFKA
                     ? "MSK does not serve this API (it is served in the kafka profile)"
                     : "api.versions.min / api.versions.max leave no version of it served");
        return false;
    }
    if (!sasl_gate(s, r, key)) return false;
    if (ver < vmin || ver > vmax) {
        if (key == 18) {
            refuse_api_versions(s, r);
            return true;
        }
        /* MSK Serverless drops a request below its floor without an answer (kafka-go saw EOF on Metadata v1) */
        bool floor = ver < vmin && vmin > h->vmin;
        log_warn("conn=%llu client=%s refused %s v%d corr=%d: served versions are %d-%d%s; closing as %s does",
                 (unsigned long long)c->id, conn_client_id(c), r->msg->name, ver, corr, vmin, vmax,
                 !floor ? (ver > vmax && vmax < h->vmax ? " (api.versions.max)" : "")
                 : key == 17 && vmin == 1 && s->cfg->api_floor[17] < 1 ? " (sasl.handshake.v0.enable=false)"
                                                                        : " (api.versions.min)",
                 floor ? "MSK" : "Kafka");
        return false;
    }
    bool flex = kp_is_flex(r->msg, ver);
    kp_reader rd;
    kp_reader_init(&rd, r->frame, r->len);
    if (!kp_decode_req_header(&rd, flex, &r->hdr)) {
        log_warn("conn=%llu refused %s v%d corr=%d: malformed request header (%s at byte %zu)",
                 (unsigned long long)c->id, r->msg->name, ver, corr, rd.err, rd.err_pos);
        return false;
    }
    remember_client_id(c, r->hdr.client_id);
    r->body = req_alloc(r, r->msg->req->size);
    size_t hdr_len = rd.pos;
    kp_reader body;
    kp_reader_init(&body, r->frame + hdr_len, r->len - hdr_len);
    body.base = hdr_len;
    if (!kp_decode(&body, r->msg->req, ver, flex, r->body, &r->arena)) {
        req_log_refusal(r, KERR_INVALID_REQUEST, "malformed body: %s in field '%s' at byte %zu of %zu; closing",
                        body.err, body.err_field ? body.err_field : "?", body.err_pos, r->len);
        return false;
    }
    if (kp_rd_left(&body) && key != 18) {
        /* Kafka ignores trailing bytes too, but they usually mean a version mix-up: say so */
        log_debug("conn=%llu %s v%d: %zu trailing bytes ignored", (unsigned long long)c->id, r->msg->name, ver,
                  kp_rd_left(&body));
    }
    /* SASL is exempt, as in Kafka: an unauthenticated connection is not yet a client to throttle */
    if (s->cfg->max_request_rate > 0 && key != 17 && key != 36) {
        r->throttle_ms = quota_request(s);
        if (r->throttle_ms > 0) {
            char quota[48];
            snprintf(quota, sizeof quota, "max.request.rate=%lld", (long long)s->cfg->max_request_rate);
            req_throttle(r, r->throttle_ms, r->msg->name, quota);
        }
    }
    /* the admin API's fault rules; without any, this one test is all they cost */
    fault_hit hit;
    if (s->faults && fault_check(s, r, &hit)) return req_fault(s, r, h, &hit);
    h->fn(s, r);
    log_debug("conn=%llu %s v%d corr=%d handled in %lld us", (unsigned long long)c->id, r->msg->name, ver, corr,
              (long long)(clk_mono_us() - r->started_us));
    return true;
}
