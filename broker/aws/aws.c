/*
 * aws: the AWS APIs' listener; see aws.h and aws_call.h.
 *
 * Every request goes through the same steps before a service sees it, as AWS's front door does:
 * find the SigV4 authentication (Authorization header or presigned query), look the access key
 * up in the identities file, recompute the signature with its secret, then check the clock skew,
 * the session token and the credentials' expiry. Each refusal is the error code and message AWS
 * gives for it (https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html), in the
 * service's protocol: rest-json for `kafka`, the query protocol's XML for STS. The log line of
 * the request (http/) carries the reason, which the client is never told in more detail than
 * AWS tells it.
 */
#include "aws.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_call.h"
#include "clock.h"
#include "config.h"
#include "http/http.h"
#include "iam/authz.h"
#include "iam/iam_store.h"
#include "iam/sasl.h"
#include "iam/sigv4.h"
#include "ids.h"
#include "kp_mem.h"
#include "log.h"

#define AWS_MAX_BODY (1 << 20)
#define AWS_MAX_CLIENTS 256 /* 100 CreateClusterV2 at once are each answered (test_aws_clusters.py) */
#define AWS_TIMEOUT_MS 10000
/* AWS refuses a request whose X-Amz-Date is more than 5 minutes away from its clock. */
#define AWS_SKEW_MS (5 * 60 * 1000)

struct aws_api {
    srv *s;
    http_server *http;
    int64_t started_ms; /* taken once: every answer gives the same creation time */
};

/* ---- errors ---------------------------------------------------------------------------- */

static void put_detail(http_resp *rs, const char *type, const char *msg) {
    size_t n = (size_t)snprintf(rs->detail, sizeof rs->detail, "%s: ", type);
    for (size_t i = 0; msg[i] && n < sizeof rs->detail - 1; i++)
        rs->detail[n++] = (unsigned char)msg[i] >= 0x20 && (unsigned char)msg[i] < 0x7f ? msg[i] : '?';
    rs->detail[n < sizeof rs->detail ? n : sizeof rs->detail - 1] = '\0';
}

void aws_rest_error(aws_call *c, int status, const char *type, const char *invalid_parameter, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *j = json_pack("{s:s}", "message", msg);
    if (invalid_parameter) json_object_set_new(j, "invalidParameter", json_string(invalid_parameter));
    http_json(c->rs, status, j);
    http_resp_header(c->rs, "x-amzn-ErrorType", type);
    put_detail(c->rs, type, msg);
}

/* XML text: the five characters XML gives meaning to, escaped. */
static void xml_escape(const char *in, char *out, size_t cap) {
    size_t n = 0;
    for (; *in && n + 7 < cap; in++) {
        const char *e = *in == '&' ? "&amp;" : *in == '<' ? "&lt;" : *in == '>' ? "&gt;" : *in == '"' ? "&quot;"
                      : *in == '\'' ? "&apos;" : NULL;
        if (e) {
            size_t l = strlen(e);
            memcpy(out + n, e, l), n += l;
        } else {
            out[n++] = *in;
        }
    }
    out[n] = '\0';
}

void aws_query_error(aws_call *c, int status, const char *code, const char *fmt, ...) {
    char msg[1024], esc[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    xml_escape(msg, esc, sizeof esc);
    static const char form[] = "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
                               "  <Error>\n    <Type>Sender</Type>\n    <Code>%s</Code>\n    <Message>%s</Message>\n"
                               "  </Error>\n  <RequestId>%s</RequestId>\n</ErrorResponse>\n";
    int len = snprintf(NULL, 0, form, code, esc, c->request_id);
    free(c->rs->body);
    c->rs->body = xmalloc((size_t)len + 1);
    snprintf(c->rs->body, (size_t)len + 1, form, code, esc, c->request_id);
    c->rs->len = (size_t)len;
    c->rs->status = status;
    c->rs->content_type = "text/xml";
    put_detail(c->rs, code, msg);
}

typedef enum { SVC_KAFKA, SVC_STS } service;

/*
 * A refusal before the service is known from a verified scope: in the protocol of the service the
 * request is for (sts for a POST or GET of /, as the query protocol sends; kafka for its REST paths).
 */
static void refuse(aws_call *c, service svc, int status, const char *rest_type, const char *query_code,
                   const char *msg, const char *why) {
    if (svc == SVC_STS)
        aws_query_error(c, status, query_code, "%s", msg);
    else
        aws_rest_error(c, status, rest_type, NULL, "%s", msg);
    /* the log says why in mskmock's words; the client got AWS's */
    put_detail(c->rs, svc == SVC_STS ? query_code : rest_type, why);
}

/* ---- verification ---------------------------------------------------------------------- */

/* yyyymmddTHHMMSSZ to ms since the epoch; -1 when malformed. */
static int64_t amz_date_ms(const char *d) {
    unsigned y, mo, da, h, mi, se;
    char t, z, extra;
    if (strlen(d) != 16 || sscanf(d, "%4u%2u%2u%c%2u%2u%2u%c%c", &y, &mo, &da, &t, &h, &mi, &se, &z, &extra) != 8 ||
        t != 'T' || z != 'Z' || mo < 1 || mo > 12 || da < 1 || da > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    return ((clk_days_from_civil(y, mo, da) * 86400) + h * 3600 + mi * 60 + se) * 1000;
}

static void fmt_amz_date(int64_t ms, char out[17]) {
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* Verifies c's request; on success fills c->cred, principal, account, region and returns its service. -1: refused. */
static int verify(aws_call *c, service guess, char *account, size_t acap, char *region, size_t rcap) {
    const http_req *rq = c->rq;
    sigv4_pair *hs = xcalloc(rq->n_headers ? rq->n_headers : 1, sizeof *hs);
    for (size_t i = 0; i < rq->n_headers; i++) hs[i] = (sigv4_pair){rq->headers[i].name, rq->headers[i].value};
    char payload[SIGV4_HEX_LEN + 1];
    int rc = -1;
    if (sigv4_sha256_hex(rq->body, rq->body_len, payload) != 0) {
        refuse(c, guess, 500, "InternalServerErrorException", "InternalFailure", "internal error", "no SHA-256");
        goto out;
    }
    sigv4_request srq = {.method = rq->method, .raw_path = rq->raw_path, .query = rq->query, .headers = hs,
                         .n_headers = rq->n_headers, .payload_sha256_hex = payload, .s3_path = false};
    static sigv4_auth auth; /* 5 KiB; the loop is single-threaded and this is not reentered */
    const char *why = NULL;
    int parsed = sigv4_request_auth(&srq, &auth, &why);
    if (parsed != 0 && why && !strcmp(why, "missing")) {
        refuse(c, guess, 403, "MissingAuthenticationTokenException", "MissingAuthenticationToken",
               guess == SVC_STS ? "Request is missing Authentication Token" : "Missing Authentication Token",
               "no SigV4 signature (no Authorization header, no X-Amz-Algorithm in the query)");
        goto out;
    }
    if (parsed != 0) {
        refuse(c, guess, 400, "IncompleteSignatureException", "IncompleteSignature", why ? why : "malformed signature",
               "malformed SigV4 authentication");
        goto out;
    }
    service svc;
    if (!strcmp(auth.service, "kafka"))
        svc = SVC_KAFKA;
    else if (!strcmp(auth.service, "sts"))
        svc = SVC_STS;
    else {
        char msg[160];
        snprintf(msg, sizeof msg, "Credential should be scoped to correct service: '%s'. ",
                 guess == SVC_STS ? "sts" : "kafka");
        refuse(c, guess, 403, "InvalidSignatureException", "SignatureDoesNotMatch", msg, "service not kafka or sts");
        goto out;
    }
    const config *cfg = c->s->cfg;
    if (strcmp(auth.region, cfg->iam_region) != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "Credential should be scoped to a valid region. ");
        refuse(c, svc, 403, "InvalidSignatureException", "SignatureDoesNotMatch", msg, "region is not iam.region");
        goto out;
    }
    const iam_store *st = sasl_identities(c->s);
    const iam_cred *cred = st ? iam_store_lookup(st, auth.access_key_id) : NULL;
    char logwhy[256];
    if (!cred) {
        snprintf(logwhy, sizeof logwhy, "access key %.40s not in iam.identities.file", auth.access_key_id);
        refuse(c, svc, 403, "UnrecognizedClientException", "InvalidClientTokenId",
               "The security token included in the request is invalid.", logwhy);
        goto out;
    }
    char creq[SIGV4_HEX_LEN + 1], sig[SIGV4_HEX_LEN + 1];
    if (sigv4_request_signature(&srq, &auth, cred->secret_access_key, creq, sig) != 0) {
        refuse(c, svc, 500, "InternalServerErrorException", "InternalFailure", "internal error", "signature not computed");
        goto out;
    }
    if (!sigv4_hex_equal(sig, auth.signature)) {
        snprintf(logwhy, sizeof logwhy, "access key %s: signature mismatch, canonical request sha256 %s",
                 cred->access_key_id, creq);
        refuse(c, svc, 403, "InvalidSignatureException", "SignatureDoesNotMatch",
               "The request signature we calculated does not match the signature you provided. Check your AWS "
               "Secret Access Key and signing method. Consult the service documentation for details.",
               logwhy);
        goto out;
    }
    int64_t now = clk_now_ms(), at = amz_date_ms(auth.amz_date);
    char now_s[17], lo_s[17], hi_s[17];
    fmt_amz_date(now, now_s);
    fmt_amz_date(now - AWS_SKEW_MS, lo_s);
    fmt_amz_date(now + AWS_SKEW_MS, hi_s);
    if (at < 0) {
        refuse(c, svc, 400, "IncompleteSignatureException", "IncompleteSignature",
               "Date must be in ISO-8601 'basic format'.", "malformed X-Amz-Date");
        goto out;
    }
    if (auth.presigned && auth.expires_s >= 0 && now > at + auth.expires_s * 1000) {
        refuse(c, svc, 403, "InvalidSignatureException", "SignatureDoesNotMatch",
               "Signature expired: the presigned request's X-Amz-Expires has passed.", "presigned request expired");
        goto out;
    }
    if (!auth.presigned && at < now - AWS_SKEW_MS) {
        char msg[200];
        snprintf(msg, sizeof msg, "Signature expired: %s is now earlier than %s (%s - 5 min.)", auth.amz_date, lo_s, now_s);
        snprintf(logwhy, sizeof logwhy, "X-Amz-Date %s is %lld s behind the broker's clock (over 5 min.)",
                 auth.amz_date, (long long)((now - at) / 1000));
        refuse(c, svc, 403, "InvalidSignatureException", "SignatureDoesNotMatch", msg, logwhy);
        goto out;
    }
    if (at > now + AWS_SKEW_MS) {
        char msg[200];
        snprintf(msg, sizeof msg, "Signature not yet current: %s is still later than %s (%s + 5 min.)", auth.amz_date,
                 hi_s, now_s);
        snprintf(logwhy, sizeof logwhy, "X-Amz-Date %s is %lld s ahead of the broker's clock (over 5 min.)",
                 auth.amz_date, (long long)((at - now) / 1000));
        refuse(c, svc, 403, "InvalidSignatureException", "SignatureDoesNotMatch", msg, logwhy);
        goto out;
    }
    /* temporary credentials are only good with their session token */
    if (cred->session_token ? strcmp(cred->session_token, auth.security_token) != 0 : auth.security_token[0] != '\0') {
        snprintf(logwhy, sizeof logwhy, "access key %s: session token %s", cred->access_key_id,
                 cred->session_token ? (auth.security_token[0] ? "does not match" : "missing") : "sent for a long-term key");
        refuse(c, svc, 403, "UnrecognizedClientException", "InvalidClientTokenId",
               "The security token included in the request is invalid.", logwhy);
        goto out;
    }
    if (cred->expiry_ms >= 0 && now >= cred->expiry_ms) {
        snprintf(logwhy, sizeof logwhy, "access key %s expired", cred->access_key_id);
        refuse(c, svc, 403, "ExpiredTokenException", "ExpiredToken",
               "The security token included in the request is expired", logwhy);
        goto out;
    }
    c->cred = cred;
    c->principal = cred->principal;
    arn_account(cred->principal, account, acap);
    c->account = account;
    snprintf(region, rcap, "%s", auth.region);
    c->region = region;
    rc = (int)svc;
out:
    free(hs);
    return rc;
}

static void serve(void *ctx, const http_req *rq, http_resp *rs) {
    struct aws_api *a = ctx;
    srv *s = a->s;
    char request_id[37], account[32] = "", region[64] = "";
    ids_uuid4_str(request_id);
    http_resp_header(rs, "x-amzn-RequestId", request_id);
    aws_call c = {.s = s, .rq = rq, .rs = rs, .request_id = request_id, .started_ms = a->started_ms,
                  .secure = rq->secure};
    /* the query protocol posts to / (or GETs it with the parameters in the query); kafka's paths are REST */
    service guess = !strcmp(rq->path, "/") ? SVC_STS : SVC_KAFKA;
    int svc = verify(&c, guess, account, sizeof account, region, sizeof region);
    if (svc < 0) {
        size_t l = strlen(rs->detail);
        snprintf(rs->detail + l, sizeof rs->detail - l, " request_id=%s", request_id);
        return;
    }
    if (svc == SVC_STS)
        sts_route(&c);
    else
        kafka_api_route(&c);
    /* the caller and the request id end the line, whatever the length of the service's detail */
    char tail[200];
    int tl = snprintf(tail, sizeof tail, " request_id=%s principal=%.140s", request_id, c.principal);
    int keep = (int)sizeof rs->detail - 1 - tl;
    char d[sizeof rs->detail];
    snprintf(d, sizeof d, "%.*s%s", keep, rs->detail, tail);
    memcpy(rs->detail, d, sizeof d);
}

int aws_start(srv *s, char *err, size_t n) {
    if (!s->cfg->aws_port) return 0;
    /* aws.tls: the IAM listener's certificate, which sasl_init made for this listener too when no IAM port is on */
    if (s->cfg->aws_tls && !s->tls) {
        snprintf(err, n, "aws.tls: no TLS certificate was set up");
        return -1;
    }
    struct aws_api *a = xcalloc(1, sizeof *a);
    a->s = s;
    /* started_us is monotonic: the wall-clock moment it stands for */
    a->started_ms = clk_now_ms() - (clk_mono_us() - s->started_us) / 1000;
    http_opts opts = {.name = "aws", .port_key = "aws.port", .max_body = AWS_MAX_BODY, .max_clients = AWS_MAX_CLIENTS,
                      .timeout_ms = AWS_TIMEOUT_MS, .tls = s->cfg->aws_tls ? s->tls : NULL};
    if (http_start(s->loop, s->cfg->bind_address, s->cfg->ports_auto ? 0 : (int)s->cfg->aws_port, &opts, serve, a,
                   &a->http, err, n) != 0) {
        free(a);
        return -1;
    }
    s->aws = a;
    const char *b = s->cfg->bind_address;
    bool v6 = strchr(b, ':') != NULL;
    log_info("aws: the kafka control plane and STS on %s://%s%s%s:%d (SigV4, region %s, %s)",
             s->cfg->aws_tls ? "https" : "http", v6 ? "[" : "", b, v6 ? "]" : "", http_port(a->http), s->cfg->iam_region,
             sasl_identities(s) ? "identities of iam.identities.file" : "no iam.identities.file: every request refused");
    return 0;
}

int aws_port(const srv *s) { return s->aws ? http_port(s->aws->http) : 0; }

void aws_close(srv *s) {
    if (!s->aws) return;
    http_close(s->aws->http);
    free(s->aws);
    s->aws = NULL;
}
