/*
 * Authentication on the IAM listeners (sasl.h): set-up of the identities, the TLS context and
 * the credentials endpoint; the gate that lets only ApiVersions and SASL through before
 * authentication; SaslHandshake; SaslAuthenticate with MSK's connect-rate limit, its refusal
 * messages and KIP-368 session lifetimes; scheduled and admin-driven credential rotation.
 */
#include "sasl.h"
#include "authz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "cred_endpoint.h"
#include "iam_store.h"
#include "iam_token.h"
#include "ids.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"
#include "net/tls.h"

enum { MECH_NONE = -1, MECH_AWS_MSK_IAM = 0, MECH_OAUTHBEARER = 1 };
_Static_assert((int)MECH_AWS_MSK_IAM == (int)MX_MECH_AWS_MSK_IAM && (int)MECH_OAUTHBEARER == (int)MX_MECH_OAUTHBEARER,
               "the metrics count mechanisms by these numbers");
static const char *const mech_names[] = {"AWS_MSK_IAM", "OAUTHBEARER"};

typedef struct sasl_ctx {
    iam_store *iam;
    cred_endpoint *creds;
    uv_timer_t rotation;
    bool enabled[2];
    char **oauth_hosts;  /* hosts an OAUTHBEARER token may be signed for */
    size_t n_oauth_hosts;
    char **broker_hosts; /* hosts an AWS_MSK_IAM payload may name: what clients dial */
    size_t n_broker_hosts;
    double connect_tokens;
    int64_t refill_ms;
    tls_setup *tls_setup; /* made by a child process from sasl_init until sasl_tls_finish */
} sasl_ctx;

/* ---- set-up ---- */

static void add_host(char ***list, size_t *n, const char *h, size_t len) {
    while (len && *h == ' ') h++, len--;
    while (len && h[len - 1] == ' ') len--;
    if (!len) return;
    char **l = xrealloc(*list, sizeof(char *) * (*n + 1));
    *list = l;
    l[*n] = xstrndup(h, len);
    (*n)++;
}

static void add_hosts(char ***list, size_t *n, const char *csv, const char *region) {
    for (const char *p = csv; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char buf[512];
        const char *tag = strstr(p, "{region}");
        if (tag && tag < p + len && len - 8 + strlen(region) < sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s%s%.*s", (int)(tag - p), p, region, (int)(p + len - tag - 8), tag + 8);
            add_host(list, n, buf, strlen(buf));
        } else {
            add_host(list, n, p, len);
        }
        p = comma ? comma + 1 : p + len;
    }
}

static void on_rotation(uv_timer_t *t);

static void arm_rotation(srv *s) {
    int64_t next = iam_store_next_rotation(s->sasl->iam);
    if (next < 0) return;
    clk_timer_start(&s->sasl->rotation, on_rotation, next - clk_now_ms());
}

static const char *invalidation_name(const srv *s) {
    return s->cfg->iam_token_invalidation == IAM_INVALIDATE_ROTATION      ? "rotation"
           : s->cfg->iam_token_invalidation == IAM_INVALIDATE_TOKEN_EXPIRY ? "token-expiry"
                                                                            : "credential-expiry";
}

/*
 * Ends at their next request the sessions whose credentials match ended(cred), on every cluster
 * of the process (the credentials are the process's: test_iam_sessions_on_created_cluster_end);
 * returns how many.
 */
static int end_sessions(srv *s, bool (*ended)(const iam_cred *cr, int64_t now), const char *why) {
    int64_t now = clk_now_ms();
    int n = 0;
    for (int i = 0; i < (s->fleet ? s->fleet->n : 1); i++) {
        srv *cs = s->fleet ? s->fleet->list[i]->s : s;
        for (conn *c = cs ? cs->conns : NULL; c; c = c->next) {
            if (c->sasl_state != SASL_AUTHENTICATED || !c->access_key_id) continue;
            const iam_cred *cr = iam_store_lookup(s->sasl->iam, c->access_key_id);
            if (cr && ended(cr, now) && (!c->session_expiry_ms || c->session_expiry_ms > now)) {
                c->session_expiry_ms = now;
                n++;
                log_info("conn=%llu principal=%s: credentials %s %s; the session ends at the next request",
                         (unsigned long long)c->id, c->principal, c->access_key_id, why);
            }
        }
    }
    return n;
}

static bool superseded(const iam_cred *cr, int64_t now) { return cr->superseded_ms >= 0 && cr->superseded_ms <= now; }
static bool expired(const iam_cred *cr, int64_t now) { return cr->expiry_ms >= 0 && cr->expiry_ms <= now; }

/* After rotations: under iam.token.invalidation=rotation, sessions signed with what was superseded end. */
static void after_rotation(srv *s, int n) {
    if (!n) return;
    if (s->cfg->iam_token_invalidation == IAM_INVALIDATE_ROTATION)
        end_sessions(s, superseded, "superseded by rotation (iam.token.invalidation=rotation)");
    log_info("iam: rotated the credentials of %d role(s) (iam.token.invalidation=%s)", n, invalidation_name(s));
}

static void on_rotation(uv_timer_t *t) {
    srv *s = t->data;
    after_rotation(s, iam_store_rotate_due(s->sasl->iam, clk_now_ms()));
    arm_rotation(s);
}

int sasl_rotate_role(srv *s, const char *role) {
    if (!s->sasl || iam_store_rotate_role(s->sasl->iam, role, clk_now_ms()) != 0) return -1;
    log_info("iam: role %s rotated now (admin API)", role);
    after_rotation(s, 1);
    arm_rotation(s);
    return 0;
}

int sasl_expire_credential(srv *s, const char *access_key_id, bool *rotated) {
    *rotated = false;
    if (!s->sasl || !iam_store_expire(s->sasl->iam, access_key_id, clk_now_ms(), rotated)) return -1;
    log_info("iam: credentials %s expired now (admin API)%s", access_key_id,
             *rotated ? "; their role got new ones" : "");
    /* under token-expiry only a token's own expiry counts: its sessions run on */
    int n = s->cfg->iam_token_invalidation == IAM_INVALIDATE_TOKEN_EXPIRY ? 0 : end_sessions(s, expired, "expired");
    if (*rotated) {
        after_rotation(s, 1);
        arm_rotation(s);
    }
    return n;
}

int sasl_init(srv *s, char *err, size_t n) {
    sasl_ctx *x = xcalloc(1, sizeof *x);
    s->sasl = x;
    const config *cfg = s->cfg;
    for (const char *p = cfg->sasl_enabled_mechanisms; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool known = false;
        for (int m = 0; m < 2; m++)
            if (strlen(mech_names[m]) == len && strncasecmp(p, mech_names[m], len) == 0) x->enabled[m] = known = true;
        if (!known && len) {
            snprintf(err, n, "sasl.enabled.mechanisms: '%.*s' is not AWS_MSK_IAM or OAUTHBEARER", (int)len, p);
            return -1;
        }
        p = comma ? comma + 1 : p + len;
    }
    add_hosts(&x->oauth_hosts, &x->n_oauth_hosts, cfg->iam_oauthbearer_hosts, cfg->iam_region);
    add_hosts(&x->broker_hosts, &x->n_broker_hosts, cfg->advertised_host, cfg->iam_region);
    if (cfg->external_port || cfg->external_iam_port)
        add_hosts(&x->broker_hosts, &x->n_broker_hosts, cfg->external_advertised_host, cfg->iam_region);
    add_hosts(&x->broker_hosts, &x->n_broker_hosts, cfg->tls_hosts, cfg->iam_region);
    add_hosts(&x->broker_hosts, &x->n_broker_hosts, "localhost,127.0.0.1", cfg->iam_region);
    x->connect_tokens = (double)cfg->iam_max_connects_per_second;
    x->refill_ms = clk_mono_ms();

    iam_store_settings set = {cfg->iam_identities_file, cfg->iam_credentials_rotation_interval_ms,
                              cfg->iam_credentials_lifetime_ms, cfg->iam_credentials_new_session_name,
                              cfg->iam_authorization_default};
    if (iam_store_open(&x->iam, &set, clk_now_ms(), err, n) != 0) return -1;
    uv_timer_init(s->loop, &x->rotation);
    x->rotation.data = s;
    uv_unref((uv_handle_t *)&x->rotation);
    arm_rotation(s);

    /* the AWS APIs' listener serves the same certificate under aws.tls (broker/aws/aws.c) */
    bool aws_tls = cfg->aws_port != 0 && cfg->aws_tls;
    bool tls_needed = cfg->iam_port != 0 || cfg->external_iam_port != 0 || aws_tls;
    if (tls_needed) {
        const char *hosts[65];
        size_t nh = 0;
        for (size_t i = 0; i < x->n_broker_hosts && nh < 64; i++) hosts[nh++] = x->broker_hosts[i];
        /* its URL names bind.address (the ready file's aws_url), which a wildcard bind makes 127.0.0.1 or ::1 */
        if (aws_tls && strcmp(cfg->bind_address, "0.0.0.0") && strcmp(cfg->bind_address, "::"))
            hosts[nh++] = cfg->bind_address;
        tls_settings ts = {*cfg->tls_cert_file ? cfg->tls_cert_file : NULL,
                           *cfg->tls_key_file ? cfg->tls_key_file : NULL, cfg->data_dir, hosts, nh};
        tls_ctx_begin(&x->tls_setup, &ts);
    }
    if (cfg->iam_credentials_port &&
        cred_endpoint_start(s->loop, cfg->bind_address, cfg->ports_auto ? 0 : (int)cfg->iam_credentials_port, x->iam,
                            &(cred_endpoint_auth){cfg->iam_credentials_authorization_token,
                                                  cfg->iam_credentials_authorization_token_file},
                            &x->creds, err, n) != 0)
        return -1;
    size_t users = 0; /* long-term keys; a role's issued credentials are not identities of their own */
    for (size_t i = 0; i < iam_store_count(x->iam); i++) users += iam_store_at(x->iam, i)->role == NULL;
    log_info("iam: identities from %s: users=%zu roles=%zu, region %s, credentials endpoint %s",
             *cfg->iam_identities_file ? cfg->iam_identities_file : "(none)", users, iam_store_role_count(x->iam),
             cfg->iam_region, x->creds ? "on (the cred: line above)" : "off");
    return 0;
}

int sasl_tls_finish(srv *s, char *err, size_t n) {
    sasl_ctx *x = s->sasl;
    if (!x || !x->tls_setup) return 0;
    tls_setup *p = x->tls_setup;
    x->tls_setup = NULL;
    if (tls_ctx_finish(p, &s->tls, err, n) != 0) return -1;
    log_info("%s", tls_ctx_summary(s->tls));
    if (tls_ctx_warning(s->tls)) log_warn("tls: %s", tls_ctx_warning(s->tls));
    return 0;
}

bool sasl_host_accepted(const srv *s, const char *host, char *list, size_t n) {
    const sasl_ctx *x = s->sasl;
    size_t off = 0;
    bool found = !x;
    if (n) list[0] = 0;
    for (size_t i = 0; x && i < x->n_broker_hosts; i++) {
        found = found || strcasecmp(x->broker_hosts[i], host) == 0;
        bool dup = false; /* advertised.host is often localhost, which is always there too */
        for (size_t j = 0; j < i && !dup; j++) dup = strcasecmp(x->broker_hosts[j], x->broker_hosts[i]) == 0;
        if (!dup && off < n) off += (size_t)snprintf(list + off, n - off, "%s%s", off ? ", " : "", x->broker_hosts[i]);
    }
    return found;
}

iam_store *sasl_identities(srv *s) { return s->sasl ? s->sasl->iam : NULL; }

int sasl_credentials_port(const srv *s) { return s->sasl && s->sasl->creds ? cred_endpoint_port(s->sasl->creds) : 0; }

void sasl_close(srv *s) {
    sasl_ctx *x = s->sasl;
    if (!x) return;
    if (x->creds) cred_endpoint_close(x->creds);
    x->creds = NULL;
    if (!uv_is_closing((uv_handle_t *)&x->rotation)) uv_close((uv_handle_t *)&x->rotation, NULL);
}

void sasl_free(srv *s) {
    sasl_ctx *x = s->sasl;
    if (!x) return;
    for (size_t i = 0; i < x->n_oauth_hosts; i++) free(x->oauth_hosts[i]);
    for (size_t i = 0; i < x->n_broker_hosts; i++) free(x->broker_hosts[i]);
    free(x->oauth_hosts);
    free(x->broker_hosts);
    iam_store_free(x->iam);
    if (x->tls_setup) { /* sasl_init failed after starting it */
        char err[1024];
        tls_ctx *unused = NULL;
        if (tls_ctx_finish(x->tls_setup, &unused, err, sizeof err) == 0) tls_ctx_free(unused);
    }
    if (s->tls) tls_ctx_free(s->tls);
    s->tls = NULL;
    free(x);
    s->sasl = NULL;
}

/* ---- the gate ---- */

bool sasl_gate(srv *s, req *r, int16_t key) {
    (void)s;
    conn *c = r->c;
    if (!lsn_sasl(c->listener)) return true;
    if (c->sasl_state != SASL_AUTHENTICATED) {
        if (key == KP_API_API_VERSIONS || key == KP_API_SASL_HANDSHAKE || key == KP_API_SASL_AUTHENTICATE) return true;
        log_warn("conn=%llu client=%s refused %s before SASL authentication on the %s listener; closing as Kafka does",
                 (unsigned long long)c->id, conn_client_id(c), kp_api_name(key), lsn_name(c->listener));
        return false;
    }
    /* an expired session may still re-authenticate: SaslHandshake, then the SaslAuthenticate it started */
    bool reauthenticating = key == KP_API_SASL_HANDSHAKE || (key == KP_API_SASL_AUTHENTICATE && c->reauth_started_ms);
    if (c->session_expiry_ms && clk_now_ms() >= c->session_expiry_ms && !reauthenticating) {
        char when[32];
        iam_format_time(c->session_expiry_ms, when);
        log_warn("conn=%llu client=%s principal=%s: SASL session expired at %s; %s closes the connection without a "
                 "reply (re-authenticate before expiry)",
                 (unsigned long long)c->id, conn_client_id(c), c->principal, when, kp_api_name(key));
        return false;
    }
    return true;
}

/*
 * SaslHandshake (key 17), v0–1: v0 (raw SASL frames after it, kafka-python's old way) only with
 * sasl.handshake.v0.enable, off in the serverless profile since MSK Serverless offers v1 only
 * (api_range). Chooses the mechanism, or starts a KIP-368 re-authentication.
 */

void api_sasl_handshake(srv *s, req *r) {
    kp_sasl_handshake_request *q = r->body;
    kp_sasl_handshake_response *resp = req_resp(r);
    sasl_ctx *x = s->sasl;
    conn *c = r->c;
    int n = 0;
    REQ_ARR(r, resp->mechanisms, 2);
    for (int m = 0; m < 2; m++)
        if (x->enabled[m]) resp->mechanisms.v[n++] = kp_str_c(mech_names[m]);
    resp->mechanisms.n = n;
    if (!lsn_sasl(c->listener)) {
        resp->error_code = KERR_ILLEGAL_SASL_STATE;
        req_log_refusal(r, resp->error_code, "SaslHandshake on the plaintext listener, which does not authenticate");
        req_respond(r, resp);
        return;
    }
    int mech = MECH_NONE;
    for (int m = 0; m < 2; m++)
        if (x->enabled[m] && kp_str_eq(q->mechanism, mech_names[m])) mech = m;
    if (mech == MECH_NONE) {
        resp->error_code = KERR_UNSUPPORTED_SASL_MECHANISM;
        req_log_refusal(r, resp->error_code, "mechanism '%.*s' is not enabled (sasl.enabled.mechanisms=%s)",
                        q->mechanism.len > 0 ? q->mechanism.len : 0, q->mechanism.p, s->cfg->sasl_enabled_mechanisms);
        req_respond(r, resp);
        return;
    }
    if (c->sasl_state == SASL_AUTHENTICATED) {
        /* KIP-368 re-authentication */
        if (!c->session_expiry_ms) {
            resp->error_code = KERR_ILLEGAL_SASL_STATE;
            req_log_refusal(r, resp->error_code, "re-authentication on a session without expiry");
            req_respond(r, resp);
            return;
        }
        int64_t now = clk_now_ms();
        if (c->last_reauth_ms && now - c->last_reauth_ms < 1000) {
            /* Kafka starts at most one re-authentication a second (KafkaChannel.MIN_REAUTH_INTERVAL) */
            resp->error_code = KERR_ILLEGAL_SASL_STATE;
            req_log_refusal(r, resp->error_code, "re-authentication %lld ms after the previous one (at least 1 s apart)",
                            (long long)(now - c->last_reauth_ms));
            req_respond(r, resp);
            return;
        }
        if (mech != c->sasl_mechanism) {
            resp->error_code = KERR_UNSUPPORTED_SASL_MECHANISM;
            req_log_refusal(r, resp->error_code,
                            "SASL mechanism '%s' requested by client is not supported for re-authentication of "
                            "mechanism '%s'",
                            mech_names[mech], mech_names[c->sasl_mechanism]);
            req_respond(r, resp);
            return;
        }
        c->reauth_started_ms = c->last_reauth_ms = now;
    } else if (c->sasl_state == SASL_HANDSHAKEN) {
        resp->error_code = KERR_ILLEGAL_SASL_STATE;
        req_log_refusal(r, resp->error_code, "a second SaslHandshake before SaslAuthenticate");
        req_respond(r, resp);
        return;
    }
    c->sasl_mechanism = mech;
    if (c->sasl_state != SASL_AUTHENTICATED) c->sasl_state = SASL_HANDSHAKEN;
    c->sasl_raw = r->hdr.api_version == 0;
    req_respond(r, resp);
}

/* ---- verification ---- */

typedef struct lookup_ctx {
    srv *s;
    bool superseded;
    const iam_policy *policy; /* of the credentials found */
} lookup_ctx;

static int lookup(void *ctx, const char *akid, iam_credential *out) {
    lookup_ctx *lc = ctx;
    const iam_cred *cr = iam_store_lookup(lc->s->sasl->iam, akid);
    if (!cr) return -1;
    out->secret_access_key = cr->secret_access_key;
    out->session_token = cr->session_token;
    out->principal_arn = cr->principal;
    out->expiry_ms = cr->expiry_ms;
    lc->superseded = cr->superseded_ms >= 0;
    lc->policy = cr->policy;
    switch (lc->s->cfg->iam_token_invalidation) {
    case IAM_INVALIDATE_ROTATION:
        /* superseded credentials count as expired from the moment of rotation */
        if (cr->superseded_ms >= 0 && (cr->expiry_ms < 0 || cr->superseded_ms < cr->expiry_ms))
            out->expiry_ms = cr->superseded_ms;
        break;
    case IAM_INVALIDATE_TOKEN_EXPIRY: out->expiry_ms = -1; break;
    default: break;
    }
    return 0;
}

typedef struct auth_outcome {
    bool ok;
    char request_id[37];
    char message[2 * (IAM_MAX_ARN + 8) + IAM_REASON_MAX]; /* what the client sees */
    char principal[IAM_MAX_ARN + 8];   /* IAM.<arn> */
    char access_key_id[128];
    int64_t lifetime_ms;               /* 0: no expiry */
} auth_outcome;

static bool take_connect_token(srv *s) {
    sasl_ctx *x = s->sasl;
    int64_t rate = s->cfg->iam_max_connects_per_second;
    if (rate <= 0) return true;
    int64_t now = clk_mono_ms();
    x->connect_tokens += (double)(now - x->refill_ms) * (double)rate / 1000.0;
    if (x->connect_tokens > (double)rate) x->connect_tokens = (double)rate;
    x->refill_ms = now;
    if (x->connect_tokens < 1.0) return false;
    x->connect_tokens -= 1.0;
    return true;
}

/* The metrics' label for a refusal by iam_verify. */
static mx_sasl_reason verify_refusal(iam_check check, bool superseded) {
    switch (check) {
    case IAM_CHECK_REGION: return MX_SASL_REGION;
    case IAM_CHECK_HOST: return MX_SASL_HOST;
    case IAM_CHECK_UNKNOWN_KEY: return MX_SASL_UNKNOWN_KEY;
    case IAM_CHECK_SESSION_TOKEN: return MX_SASL_SESSION_TOKEN;
    case IAM_CHECK_SIGNATURE: return MX_SASL_SIGNATURE;
    case IAM_CHECK_TOKEN_EXPIRED: return MX_SASL_TOKEN_EXPIRED;
    case IAM_CHECK_FUTURE_DATE: return MX_SASL_FUTURE_DATE;
    /* under iam.token.invalidation=rotation the lookup dates the expiry to the rotation */
    case IAM_CHECK_CREDENTIALS_EXPIRED: return superseded ? MX_SASL_CREDENTIALS_SUPERSEDED : MX_SASL_CREDENTIALS_EXPIRED;
    case IAM_CHECK_NONE:
    case IAM_CHECK_INTERNAL: break;
    }
    return MX_SASL_INTERNAL;
}

/*
 * Why an attempt is refused: MSK's words to the client, the reason logged, the metrics' label.
 * The steps of authenticate() below fill it, in the order MSK's and Kafka's
 * SaslServerAuthenticator take them: rate, token, session lifetime, authorization.
 */
typedef struct refusal {
    const char *msk;
    mx_sasl_reason why;
    char reason[IAM_REASON_MAX];
} refusal;

/* iam.max.connects.per.second: new authentications only, re-authentications do not count. */
static bool within_connect_rate(srv *s, bool reauth, refusal *f) {
    if (reauth || take_connect_token(s)) return true;
    f->msk = "Too many connects";
    f->why = MX_SASL_TOO_MANY_CONNECTS;
    snprintf(f->reason, sizeof f->reason, "more than iam.max.connects.per.second=%lld new authentications per second",
             (long long)s->cfg->iam_max_connects_per_second);
    return false;
}

/* The token parsed, then its signature, host, region, credentials and dates (iam_token.h). */
static bool verify(srv *s, const conn *c, const uint8_t *bytes, size_t len, iam_token *tok, lookup_ctx *lc,
                   iam_verified *v, refusal *f) {
    sasl_ctx *x = s->sasl;
    bool oauth = c->sasl_mechanism == MECH_OAUTHBEARER;
    iam_result res = oauth ? iam_parse_oauthbearer(bytes, len, tok, f->reason, sizeof f->reason)
                           : iam_parse_aws_msk_iam(bytes, len, tok, f->reason, sizeof f->reason);
    if (res != IAM_OK) {
        f->msk = iam_result_message(res);
        f->why = res == IAM_INVALID_PAYLOAD ? MX_SASL_INVALID_PAYLOAD : MX_SASL_INTERNAL;
        return false;
    }
    iam_verifier ver = {s->cfg->iam_region, (const char *const *)(oauth ? x->oauth_hosts : x->broker_hosts),
                        oauth ? x->n_oauth_hosts : x->n_broker_hosts, s->cfg->iam_clock_skew_ms, lookup, lc};
    res = iam_verify(tok, &ver, clk_now_ms(), v, f->reason, sizeof f->reason);
    if (res == IAM_OK) return true;
    bool superseded = lc->superseded && s->cfg->iam_token_invalidation == IAM_INVALIDATE_ROTATION;
    f->msk = iam_result_message(res);
    f->why = verify_refusal(v->refused_by, superseded);
    if (superseded) {
        size_t l = strlen(f->reason);
        snprintf(f->reason + l, sizeof f->reason - l, " (credentials superseded by rotation; iam.token.invalidation=rotation)");
    }
    return false;
}

/*
 * KIP-368's session lifetime: until the credentials expire (the token too, with
 * iam.session.cap.by.token), at most connections.max.reauth.ms; *life_ms 0 for no end. A
 * session already over, or shorter than iam.session.min.ms, is refused.
 */
static bool session_lifetime(srv *s, const iam_verified *v, int64_t *life_ms, refusal *f) {
    int64_t now = clk_now_ms();
    int64_t end = INT64_MAX;
    if (v->credential_expiry_ms >= 0) end = v->credential_expiry_ms;
    if (s->cfg->iam_session_cap_by_token && v->token_expiry_ms < end) end = v->token_expiry_ms;
    if (s->cfg->connections_max_reauth_ms > 0 && now + s->cfg->connections_max_reauth_ms < end)
        end = now + s->cfg->connections_max_reauth_ms;
    int64_t life = *life_ms = end == INT64_MAX ? 0 : end - now;
    if (end != INT64_MAX && life <= 0) {
        f->msk = "Access denied";
        f->why = MX_SASL_SESSION_EXPIRED;
        snprintf(f->reason, sizeof f->reason, "the session would already be over (credentials or token expired)");
        return false;
    }
    if (end != INT64_MAX && life < s->cfg->iam_session_min_ms) {
        f->msk = "Session too short";
        f->why = MX_SASL_SESSION_TOO_SHORT;
        snprintf(f->reason, sizeof f->reason, "session lifetime %lld ms is below iam.session.min.ms=%lld",
                 (long long)life, (long long)s->cfg->iam_session_min_ms);
        return false;
    }
    return true;
}

/* The policy of the credentials must allow kafka-cluster:Connect (authz.h). */
static bool authorize(srv *s, const iam_policy *policy, const char *access_key_id, refusal *f) {
    if (authz_connect(s, policy, access_key_id, f->reason, sizeof f->reason)) return true;
    f->msk = "Access denied"; /* MSK's answer when the policy lacks kafka-cluster:Connect */
    f->why = MX_SASL_NOT_AUTHORIZED;
    return false;
}

/*
 * A re-authentication keeps its principal (Kafka's SaslServerAuthenticator.ReauthInfo); refused
 * with Apache Kafka's own message, without MSK's request-id prefix, logged here.
 */
static bool same_principal(srv *s, conn *c, bool reauth, auth_outcome *o) {
    if (!reauth || !c->principal || strcmp(c->principal, o->principal) == 0) return true;
    snprintf(o->message, sizeof o->message, "Cannot change principals during re-authentication from %s: %s",
             c->principal, o->principal);
    log_warn("conn=%llu client=%s principal=%s api=SaslAuthenticate mechanism=%s refused "
             "error=SASL_AUTHENTICATION_FAILED(58): %s",
             (unsigned long long)c->id, conn_client_id(c), c->principal, mech_names[c->sasl_mechanism], o->message);
    metrics_sasl(&s->metrics, c->sasl_mechanism, reauth, MX_SASL_PRINCIPAL_CHANGED);
    return false;
}

static void refuse(srv *s, conn *c, bool reauth, auth_outcome *o, const refusal *f) {
    snprintf(o->message, sizeof o->message, "[%s]: %s", o->request_id, f->msk);
    log_warn("conn=%llu client=%s principal=%s api=SaslAuthenticate mechanism=%s refused "
             "error=SASL_AUTHENTICATION_FAILED(58) request-id=%s: %s: %s",
             (unsigned long long)c->id, conn_client_id(c),
             o->principal[0] ? o->principal : c->principal ? c->principal : "ANONYMOUS", /* verified, then refused */
             mech_names[c->sasl_mechanism], o->request_id, f->msk, f->reason);
    metrics_sasl(&s->metrics, c->sasl_mechanism, reauth, f->why);
}

/* The connection's new session: its principal, credentials and end. */
static void start_session(srv *s, conn *c, bool reauth, const auth_outcome *o) {
    metrics_sasl(&s->metrics, c->sasl_mechanism, reauth, MX_SASL_OK);
    free(c->principal);
    c->principal = xstrdup(o->principal);
    free(c->access_key_id);
    c->access_key_id = xstrdup(o->access_key_id);
    authz_forget(c); /* other credentials may carry other policies */
    c->sasl_state = SASL_AUTHENTICATED;
    c->session_expiry_ms = o->lifetime_ms ? clk_now_ms() + o->lifetime_ms : 0;
    log_info("conn=%llu client=%s %s as %s via %s, session %lld ms, request-id=%s", (unsigned long long)c->id,
             conn_client_id(c), reauth ? "re-authenticated" : "authenticated", c->principal,
             mech_names[c->sasl_mechanism], (long long)o->lifetime_ms, o->request_id);
}

static void authenticate(srv *s, req *r, const uint8_t *bytes, size_t len, auth_outcome *o) {
    conn *c = r->c;
    memset(o, 0, sizeof *o);
    ids_uuid4_str(o->request_id);
    bool reauth = c->sasl_state == SASL_AUTHENTICATED;
    refusal f = {NULL, MX_SASL_OK, ""};
    iam_token tok;
    memset(&tok, 0, sizeof tok);
    iam_verified v;
    lookup_ctx lc = {s, false, NULL};
    int64_t life = 0;
    bool ok = within_connect_rate(s, reauth, &f) && verify(s, c, bytes, len, &tok, &lc, &v, &f);
    if (ok) {
        snprintf(o->principal, sizeof o->principal, "IAM.%s", v.principal_arn);
        snprintf(o->access_key_id, sizeof o->access_key_id, "%s", tok.access_key_id);
        ok = session_lifetime(s, &v, &life, &f) && authorize(s, lc.policy, tok.access_key_id, &f);
    }
    bool changed = ok && !same_principal(s, c, reauth, o);
    iam_token_free(&tok);
    if (changed) return;
    if (!ok) {
        refuse(s, c, reauth, o, &f);
        return;
    }
    o->ok = true;
    o->lifetime_ms = life;
    start_session(s, c, reauth, o);
}

static kp_bytes success_bytes(req *r, const auth_outcome *o, int mech) {
    if (mech == MECH_OAUTHBEARER) return (kp_bytes){"", 0}; /* clients treat any server reply as an error */
    kp_str js = req_strf(r, "{\"version\":\"2020_10_22\",\"request-id\":\"%s\"}", o->request_id);
    return (kp_bytes){js.p, js.len};
}

/*
 * SaslAuthenticate (key 36), v0–2: verifies the token of the mechanism the handshake chose;
 * v1+ carries KIP-368's session lifetime. A failure closes the connection, as Kafka does.
 */
void api_sasl_authenticate(srv *s, req *r) {
    kp_sasl_authenticate_request *q = r->body;
    kp_sasl_authenticate_response *resp = req_resp(r);
    conn *c = r->c;
    resp->auth_bytes = (kp_bytes){"", 0};
    bool expecting = lsn_sasl(c->listener) && !c->sasl_raw &&
                     (c->sasl_state == SASL_HANDSHAKEN || (c->sasl_state == SASL_AUTHENTICATED && c->reauth_started_ms));
    if (!expecting) {
        resp->error_code = KERR_ILLEGAL_SASL_STATE;
        resp->error_message = kp_str_c("Unexpected SaslAuthenticate request");
        req_log_refusal(r, resp->error_code, "SaslAuthenticate without a preceding SaslHandshake v1");
        req_respond(r, resp);
        net_close_after_flush(c, "unexpected SaslAuthenticate");
        return;
    }
    auth_outcome o;
    authenticate(s, r, (const uint8_t *)q->auth_bytes.p, q->auth_bytes.len > 0 ? (size_t)q->auth_bytes.len : 0, &o);
    c->reauth_started_ms = 0;
    if (!o.ok) {
        resp->error_code = KERR_SASL_AUTHENTICATION_FAILED;
        resp->error_message = req_strf(r, "%s", o.message);
        req_respond(r, resp);
        net_close_after_flush(c, "SASL authentication failed");
        return;
    }
    resp->auth_bytes = success_bytes(r, &o, c->sasl_mechanism);
    resp->error_message = KP_STR_NULL; /* as Kafka answers a success */
    resp->session_lifetime_ms = o.lifetime_ms;
    req_respond(r, resp);
}

bool sasl_raw_token(srv *s, req *r) {
    conn *c = r->c;
    c->sasl_raw = false;
    r->hdr.api_key = KP_API_SASL_AUTHENTICATE; /* for log lines: this is what the frame stands for */
    r->msg = kp_msg_get(KP_API_SASL_AUTHENTICATE);
    auth_outcome o;
    authenticate(s, r, r->frame, r->len, &o);
    c->reauth_started_ms = 0;
    if (!o.ok) return false; /* SaslHandshake v0 has no way to carry an error: Kafka closes */
    kp_bytes b = success_bytes(r, &o, c->sasl_mechanism);
    kp_writer_init(&r->out, 4 + (size_t)b.len);
    kp_wr_i32(&r->out, b.len);
    kp_wr_raw(&r->out, b.p, (size_t)b.len);
    req_set_state(r, REQ_READY);
    return true;
}
