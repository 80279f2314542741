/*
 * dispatch: the request pipeline, from a whole frame to its handler. Every request passes the
 * same steps, in Kafka's order (KafkaApis.handle behind SocketServer and the authenticator):
 *   1. header: the API key and version are read, the handler looked up, the client id kept;
 *   2. gates: an unknown or unserved API closes the connection; before authentication only SASL
 *      (and ApiVersions) pass (iam/sasl.c's gate); a version outside the served range closes
 *      the connection, except ApiVersions, answered at v0 so the client can retry (KIP-511);
 *   3. body: decoded strictly by the message's description; a malformed one closes;
 *   4. quotas and faults: the request-rate quota (max.request.rate) throttles, and the admin
 *      API's fault rules (admin/fault.h) may answer instead of the handler;
 *   5. the handler (api/table.c), which answers now, after the commit, or later.
 * The transport hands each frame here through srv.dispatch, set at start-up (lifecycle.c), so net/
 * knows nothing above it. Each refusal is logged once, saying why.
 */
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/fault.h"
#include "api/api.h"
#include "clock.h"
#include "fault_apply.h"
#include "iam/sasl.h"
#include "log.h"
#include "metrics.h"
#include "net/net.h"
#include "rate.h"

/* ---- 1. header ---- */

static void remember_client_id(conn *c, kp_str id) {
    if (id.len >= 0 && !(c->client_id && kp_str_eq(id, c->client_id))) {
        free(c->client_id);
        c->client_id = kp_str_dup(id);
    }
    net_log_scope(c);
    net_log_open(c);
}

/* Every header version starts like v1: the client id is readable for a refusal's log line. */
static void peek_client_id(req *r) {
    kp_reader rd;
    kp_reader_init(&rd, r->frame, r->len);
    if (kp_decode_req_header(&rd, false, &r->hdr)) remember_client_id(r->c, r->hdr.client_id);
}

/* ---- 2. gates ---- */

/*
 * An ApiVersions request newer than we serve gets a v0 answer with
 * UNSUPPORTED_VERSION and our ranges, so the client retries with one we know.
 */
static void refuse_api_versions(srv *s, req *r) {
    r->msg = kp_msg_get(KP_API_API_VERSIONS);
    kp_api_versions_response *resp = req_alloc(r, sizeof *resp);
    kp_defaults(r->msg->resp, 0, resp);
    resp->error_code = KERR_UNSUPPORTED_VERSION;
    api_fill_versions(s, r, resp);
    /* the normal first step of clients newer than us, so info rather than warn */
    log_info("conn=%llu client=%s api=ApiVersions v%d corr=%d answered error=UNSUPPORTED_VERSION(35) with v0 and the "
             "served ranges, so the client retries with one we serve",
             (unsigned long long)r->c->id, conn_client_id(r->c), r->hdr.api_version, r->hdr.correlation_id);
    req_encode(r, r->msg, 0, resp);
    req_set_state(r, REQ_READY);
}

/* An API nobody serves here (unknown, MSK-less in this profile, or narrowed away): closes. */
static bool refuse_unserved(srv *s, req *r, const api_handler *h) {
    conn *c = r->c;
    log_warn("conn=%llu client=%s refused %s (key %d) v%d corr=%d: %s; closing as Kafka does",
             (unsigned long long)c->id, conn_client_id(c), r->msg ? r->msg->name : "request", r->hdr.api_key,
             r->hdr.api_version, r->hdr.correlation_id,
             !h || !r->msg ? "unknown or unserved API key"
             : h->kafka_profile_only && s->cfg->profile != PROFILE_KAFKA
                 ? "MSK does not serve this API (it is served in the kafka profile)"
                 : "api.versions.min / api.versions.max leave no version of it served");
    return false;
}

/* A version outside the served range: ApiVersions is answered at v0, anything else closes. */
static bool refuse_version(srv *s, req *r, const api_handler *h, int16_t vmin, int16_t vmax) {
    conn *c = r->c;
    int16_t key = r->hdr.api_key, ver = r->hdr.api_version;
    if (key == KP_API_API_VERSIONS) {
        refuse_api_versions(s, r);
        return true;
    }
    /* Kafka closes the connection on a version its release does not enable (KIP-896's removals) */
    if (api_bound_by_kafka_version(s, h, ver < vmin)) {
        log_warn("conn=%llu client=%s refused %s v%d corr=%d: served versions are %d-%d (kafka.version %s); closing "
                 "as Kafka does", (unsigned long long)c->id, conn_client_id(c), r->msg->name, ver,
                 r->hdr.correlation_id, vmin, vmax, cfg_kafka_version_name(s->cfg->kafka_version));
        return false;
    }
    /* MSK Serverless drops a request below its floor without an answer (kafka-go saw EOF on Metadata v1) */
    bool floor = ver < vmin && vmin > h->vmin;
    log_warn("conn=%llu client=%s refused %s v%d corr=%d: served versions are %d-%d%s; closing as %s does",
             (unsigned long long)c->id, conn_client_id(c), r->msg->name, ver, r->hdr.correlation_id, vmin, vmax,
             !floor ? (ver > vmax && vmax < h->vmax ? " (api.versions.max)" : "")
             : key == KP_API_SASL_HANDSHAKE && vmin == 1 && s->cfg->api_floor[KP_API_SASL_HANDSHAKE] < 1
                 ? " (sasl.handshake.v0.enable=false)"
                 : " (api.versions.min)",
             floor ? "MSK" : "Kafka");
    return false;
}

/* ---- 3. body ---- */

static bool decode_body(req *r) {
    conn *c = r->c;
    int16_t ver = r->hdr.api_version;
    bool flex = kp_is_flex(r->msg, ver);
    kp_reader rd;
    kp_reader_init(&rd, r->frame, r->len);
    if (!kp_decode_req_header(&rd, flex, &r->hdr)) {
        log_warn("conn=%llu refused %s v%d corr=%d: malformed request header (%s at byte %zu)",
                 (unsigned long long)c->id, r->msg->name, ver, r->hdr.correlation_id, rd.err, rd.err_pos);
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
    if (kp_rd_left(&body) && r->hdr.api_key != KP_API_API_VERSIONS) {
        /* Kafka ignores trailing bytes too, but they usually mean a version mix-up: say so */
        log_debug("conn=%llu %s v%d: %zu trailing bytes ignored", (unsigned long long)c->id, r->msg->name, ver,
                  kp_rd_left(&body));
    }
    return true;
}

/* ---- 4. quotas and faults ---- */

/*
 * max.request.rate: every request the cluster serves charges one to a leaky bucket (rate.h);
 * SASL is exempt, as in Kafka: an unauthenticated connection is not yet a client to throttle.
 */
static void charge_request_rate(srv *s, req *r) {
    int16_t key = r->hdr.api_key;
    if (s->cfg->max_request_rate <= 0 || key == KP_API_SASL_HANDSHAKE || key == KP_API_SASL_AUTHENTICATE) return;
    r->throttle_ms = rate_clamp_ms(rate_charge(&s->quota_requests, s->cfg->max_request_rate, 1, clk_mono_ms()));
    if (r->throttle_ms > 0) {
        char quota[48];
        snprintf(quota, sizeof quota, "max.request.rate=%lld", (long long)s->cfg->max_request_rate);
        req_throttle(r, r->throttle_ms, r->msg->name, quota);
    }
}

/* ---- the steps in order ---- */

static bool dispatch(srv *s, req *r) {
    conn *c = r->c;
    int16_t key, ver;
    int32_t corr;
    r->started_us = clk_mono_us();
    r->changes_at_start = stor_change_count(s->st);
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
    if (!h || !r->msg || ver < vmin || ver > vmax) peek_client_id(r);
    if (!h || !r->msg || vmax < vmin) return refuse_unserved(s, r, h);
    if (!sasl_gate(s, r, key)) return false;
    if (ver < vmin || ver > vmax) return refuse_version(s, r, h, vmin, vmax);
    if (!decode_body(r)) return false;
    r->authz_actions = h->authz;
    charge_request_rate(s, r);
    /* the admin API's fault rules; without any, this one test is all they cost */
    fault_hit hit;
    if (s->faults && fault_check(s, r, &hit)) return fault_apply(s, r, h, &hit);
    h->fn(s, r);
    log_debug("conn=%llu %s v%d corr=%d handled in %lld us", (unsigned long long)c->id, r->msg->name, ver, corr,
              (long long)(clk_mono_us() - r->started_us));
    return true;
}

/* log.format=json: what the request logs names its connection and API (log.h's scope). */
bool pipeline_dispatch(srv *s, req *r) {
    if (log_fmt != LOG_JSON) return dispatch(s, r);
    log_scope saved = log_now;
    net_log_scope(r->c);
    bool ok = dispatch(s, r);
    log_now = saved;
    return ok;
}
