/*
 * fault_apply: a fired fault rule's action (admin/fault.h), applied by the pipeline where the
 * handler would have run.
 *
 * An error is answered without running the handler, so a refused Produce, OffsetCommit or
 * JoinGroup changes nothing, exactly as a broker refusing it would: the answer is mirrored from
 * the request (protocol/kp_mirror.h), each topic, partition and group it names carrying the
 * error. A few read-only APIs answer with more than the request names (Metadata's brokers,
 * ApiVersions' ranges, ListGroups' groups): there the handler runs and the error is written
 * over its answer, so a client still learns where to go next.
 *
 * Latency parks the request on a timer and then runs the handler as if it had just arrived;
 * the connection starts nothing else meanwhile, as it does for any parked request. A dropped
 * answer is built as usual and freed instead of written (net.c), so the requests after it are
 * still answered, as when a broker loses one response.
 */
#include "fault_apply.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_mem.h"
#include "kp_mirror.h"
#include "log.h"
#include "net/net.h"

static bool answered_by_handler(int16_t key) {
    switch (key) {
    case KP_API_METADATA:     /* brokers, and topics a null list asks for */
    case KP_API_OFFSET_FETCH: /* a null topic list means every committed topic */
    case KP_API_LIST_GROUPS:
    case KP_API_API_VERSIONS:
    case KP_API_DESCRIBE_LOG_DIRS:
    case KP_API_LIST_PARTITION_REASSIGNMENTS:
    case KP_API_DESCRIBE_CLUSTER:
        return true;
    default:
        return false;
    }
}

static const char *peer_line(const req *r, char *buf, size_t n) {
    snprintf(buf, n, "conn=%llu client=%s %s v%d corr=%d", (unsigned long long)r->c->id, conn_client_id(r->c),
             r->msg->name, r->hdr.api_version, r->hdr.correlation_id);
    return buf;
}

/* The first fire of a rule at info, its later ones at debug: a rule on every Fetch must not flood the log. */
#define FIRE_LOG(hit, ...) log_write((hit)->first ? LOG_INFO : LOG_DEBUG, __VA_ARGS__)

/* ---- latency ---- */

typedef struct delay {
    uv_timer_t timer; /* first: the handle's memory is the delay's */
    srv *s;
    req *r;
    api_fn fn;
} delay;

static void free_delay(uv_handle_t *h) { free(h); }

static void delay_cancel(srv *s, req *r) {
    (void)s;
    delay *d = r->park;
    uv_timer_stop(&d->timer);
    uv_close((uv_handle_t *)&d->timer, free_delay);
}

static void delay_over(uv_timer_t *t) {
    delay *d = t->data;
    req *r = d->r;
    srv *s = d->s;
    api_fn fn = d->fn;
    uv_close((uv_handle_t *)t, free_delay);
    r->park = NULL;
    r->park_cancel = NULL;
    req_set_state(r, REQ_QUEUED);
    log_scope saved = log_now;
    if (log_fmt == LOG_JSON) {
        net_log_scope(r->c);
        snprintf(log_now.api, sizeof log_now.api, "%s", r->msg->name);
    }
    fn(s, r); /* it may park again (a Fetch's long poll) */
    log_now = saved;
    net_pump_later(r->c);
}

static void hold(srv *s, req *r, const api_handler *h, const fault_hit *hit) {
    char who[256];
    FIRE_LOG(hit, "%s: held %d ms by fault rule %llu (admin API), then served", peer_line(r, who, sizeof who),
             hit->latency_ms, (unsigned long long)hit->rule_id);
    delay *d = xcalloc(1, sizeof *d);
    d->s = s;
    d->r = r;
    d->fn = h->fn;
    uv_timer_init(s->loop, &d->timer);
    d->timer.data = d;
    clk_timer_start(&d->timer, delay_over, hit->latency_ms);
    req_park(r, d, delay_cancel);
}

/* ---- error ---- */

static kp_str fault_message(req *r, uint64_t id) {
    return req_strf(r, "injected by mskmock fault rule %llu", (unsigned long long)id);
}

/* r->amend: the rule's error written over the answer its handler built, just before encoding. */
static void overwrite(req *r, const kp_msg *m, int16_t ver, void *resp) {
    const fault_hit *hit = r->amend_ctx;
    kp_target t = {hit->topic ? kp_str_c(hit->topic) : KP_STR_NULL, NULL, hit->partition};
    kp_set_errors(m->resp, ver, resp, hit->error_code, fault_message(r, hit->rule_id), &t);
}

static bool answer_error(srv *s, req *r, const api_handler *h, const fault_hit *hit) {
    int16_t key = r->hdr.api_key;
    if (key == KP_API_PRODUCE && ((const kp_produce_request *)r->body)->acks == 0) {
        req_log_refusal(r, hit->error_code, "by fault rule %llu (admin API); acks=0, so the connection is closed "
                        "instead, as Kafka does", (unsigned long long)hit->rule_id);
        return false;
    }
    req_log_refusal(r, hit->error_code, "by fault rule %llu (admin API)%s", (unsigned long long)hit->rule_id,
                    answered_by_handler(key) ? "; the handler ran, its answer carries the error" : "");
    if (answered_by_handler(key)) {
        fault_hit *kept = req_alloc(r, sizeof *kept);
        *kept = *hit;
        if (hit->topic) {
            /* the rule may be deleted before a commit failure has the answer encoded again */
            size_t n = strlen(hit->topic) + 1;
            char *t = req_alloc(r, n);
            memcpy(t, hit->topic, n);
            kept->topic = t;
        }
        r->amend = overwrite;
        r->amend_ctx = kept;
        h->fn(s, r);
        return true;
    }
    void *resp = req_alloc(r, r->msg->resp->size);
    kp_mirror_error(r->msg->req, r->msg->resp, r->hdr.api_version, r->body, resp, hit->error_code,
                    fault_message(r, hit->rule_id), &r->arena);
    req_respond(r, resp);
    return true;
}

bool fault_apply(srv *s, req *r, const api_handler *h, const fault_hit *hit) {
    char who[256];
    switch (hit->action) {
    case FAULT_ERROR: return answer_error(s, r, h, hit);
    case FAULT_LATENCY: hold(s, r, h, hit); return true;
    case FAULT_CLOSE:
        FIRE_LOG(hit, "%s: closing the connection unanswered: fault rule %llu (admin API)",
                 peer_line(r, who, sizeof who), (unsigned long long)hit->rule_id);
        return false;
    case FAULT_DROP:
        FIRE_LOG(hit, "%s: served, and its answer dropped: fault rule %llu (admin API)", peer_line(r, who, sizeof who),
                 (unsigned long long)hit->rule_id);
        r->dropped = true;
        h->fn(s, r);
        return true;
    case FAULT_NONE: break;
    }
    h->fn(s, r);
    return true;
}
