/* TLS and SASL of the CLI's connections (auth.h). */
#include "auth.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_creds.h"
#include "clock.h"
#include "iam_sign.h"
#include "kp_mem.h"

#define CREDS_REFRESH_MS (5 * 60 * 1000) /* the SDKs fetch new credentials this long before expiry */

struct cli_auth {
    SSL_CTX *ctx;
    char region[64];
    cli_aws_creds creds;
    bool have_creds;
};

static const char *mech_name(cli_mech m) { return m == CLI_MECH_OAUTHBEARER ? "OAUTHBEARER" : "AWS_MSK_IAM"; }

static void ssl_err(char *err, size_t n, const char *what) {
    unsigned long e = ERR_get_error();
    char buf[256] = "unknown error";
    if (e) ERR_error_string_n(e, buf, sizeof buf);
    snprintf(err, n, "%s: %s", what, buf);
    ERR_clear_error();
}

int cli_auth_setup(cli_opts *o, char *err, size_t n) {
    if (o->sasl == 1 && o->mech == CLI_MECH_NONE) {
        snprintf(err, n, "a SASL security protocol needs --sasl-mechanism AWS_MSK_IAM or OAUTHBEARER");
        return -1;
    }
    if (o->sasl == 0 && o->mech != CLI_MECH_NONE) {
        snprintf(err, n, "--sasl-mechanism needs --security-protocol SASL_SSL or SASL_PLAINTEXT, not %s",
                 o->tls == 1 ? "SSL" : "PLAINTEXT");
        return -1;
    }
    if (o->sasl < 0) o->sasl = o->mech != CLI_MECH_NONE;
    /* IAM on MSK is only ever offered over TLS: a mechanism alone means SASL_SSL */
    if (o->tls < 0) o->tls = o->sasl || o->ca_file;
    if (o->ca_file && !o->tls) {
        snprintf(err, n, "--ca-file goes with TLS (--tls, or --security-protocol SSL or SASL_SSL)");
        return -1;
    }
    if (!o->tls && !o->sasl) return 0;
    struct cli_auth *a = xcalloc(1, sizeof *a);
    o->auth = a;
    /* credentials first: a missing one is named before any broker is dialed */
    if (o->sasl && (cli_aws_region(o->region, a->region, sizeof a->region, err, n) != 0 ||
                    cli_aws_creds_resolve(&a->creds, o->timeout_ms, err, n) != 0))
        return -1;
    a->have_creds = o->sasl;
    if (!o->tls) return 0;
    a->ctx = SSL_CTX_new(TLS_client_method());
    if (!a->ctx) {
        ssl_err(err, n, "TLS");
        return -1;
    }
    SSL_CTX_set_min_proto_version(a->ctx, TLS1_2_VERSION); /* MSK serves 1.2 and 1.3 */
    SSL_CTX_set_verify(a->ctx, SSL_VERIFY_PEER, NULL);
    if (o->ca_file ? SSL_CTX_load_verify_locations(a->ctx, o->ca_file, NULL) != 1
                   : SSL_CTX_set_default_verify_paths(a->ctx) != 1) {
        char what[600];
        snprintf(what, sizeof what, "cannot load the CA file %s", o->ca_file ? o->ca_file : "(system trust store)");
        ssl_err(err, n, what);
        return -1;
    }
    return 0;
}

void cli_auth_free(cli_opts *o) {
    if (!o->auth) return;
    SSL_CTX_free(o->auth->ctx);
    OPENSSL_cleanse(&o->auth->creds, sizeof o->auth->creds);
    free(o->auth);
    o->auth = NULL;
}

/* Waits for what SSL asked for (r: SSL_get_error). 0 ready, -1 timed out or failed. */
static int ssl_wait(cli_conn *c, int r, int64_t deadline) {
    if (r != SSL_ERROR_WANT_READ && r != SSL_ERROR_WANT_WRITE) return -1;
    struct pollfd p = {c->fd, r == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 0};
    int left = (int)(deadline - clk_mono_ms());
    return left > 0 && poll(&p, 1, left) == 1 ? 0 : -1;
}

int cli_tls_start(cli_conn *c, int64_t deadline, char *err, size_t n) {
    SSL *s = SSL_new(c->o->auth->ctx);
    if (!s || SSL_set_fd(s, c->fd) != 1) {
        SSL_free(s);
        ssl_err(err, n, "TLS");
        return -1;
    }
    c->ssl = s;
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, c->host, ip) == 1 || inet_pton(AF_INET6, c->host, ip) == 1;
    /* the certificate must name what was dialed: a DNS name, or an IP address in its SAN */
    if (is_ip) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), c->host);
    else {
        SSL_set_tlsext_host_name(s, c->host);
        SSL_set1_host(s, c->host);
    }
    for (;;) {
        int r = SSL_connect(s);
        if (r == 1) return 0;
        int e = SSL_get_error(s, r);
        if (ssl_wait(c, e, deadline) == 0) continue;
        long v = SSL_get_verify_result(s);
        if (v != X509_V_OK)
            snprintf(err, n, "%s: TLS handshake: the broker's certificate is not trusted: %s (%s)", c->addr,
                     X509_verify_cert_error_string(v),
                     c->o->ca_file ? "is --ca-file the CA that signed it?" : "give its CA with --ca-file");
        else if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            snprintf(err, n, "%s: TLS handshake: no answer within %d ms (is this a TLS listener?)", c->addr,
                     c->o->timeout_ms);
        else {
            char what[400];
            snprintf(what, sizeof what, "%s: TLS handshake failed (is this a TLS listener?)", c->addr);
            ssl_err(err, n, what);
        }
        return -1;
    }
}

int cli_tls_io(cli_conn *c, void *buf, size_t len, bool out, int64_t deadline, char *err, size_t n) {
    size_t done = 0;
    while (done < len) {
        int r = out ? SSL_write(c->ssl, (char *)buf + done, (int)(len - done))
                    : SSL_read(c->ssl, (char *)buf + done, (int)(len - done));
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (ssl_wait(c, e, deadline) == 0) continue;
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            snprintf(err, n, "%s: no answer within %d ms", c->addr, c->o->timeout_ms);
        else if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && !ERR_peek_error()) ||
                 ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            ERR_clear_error();
            snprintf(err, n, "%s: connection closed by the broker%s", c->addr,
                     c->o->sasl ? "" : " (a SASL listener closes a connection that sends requests before it "
                                       "authenticates: add --sasl-mechanism)");
        }
        else {
            char what[400];
            snprintf(what, sizeof what, "%s: TLS", c->addr);
            ssl_err(err, n, what);
        }
        return -1;
    }
    return 0;
}

void cli_tls_close(cli_conn *c) {
    if (!c->ssl) return;
    SSL_free(c->ssl); /* no close_notify: the socket closes right after, as Kafka clients do */
    c->ssl = NULL;
}

static int credentials(cli_conn *c, bool fresh, char *err, size_t n) {
    struct cli_auth *a = c->o->auth;
    bool stale = a->have_creds && a->creds.expiry_ms >= 0 && a->creds.expiry_ms - clk_now_ms() < CREDS_REFRESH_MS;
    if (a->have_creds && !fresh && !stale) return 0;
    if (cli_aws_creds_resolve(&a->creds, c->o->timeout_ms, err, n) != 0) return -1;
    a->have_creds = true;
    return 0;
}

static int handshake(cli_conn *c, char *err, size_t n) {
    const kp_msg *m = &kp_msg_sasl_handshake;
    int16_t ver = cli_version(c, m, err, n);
    if (ver < 0) return -1;
    if (ver < 1) { /* v0 sends the SASL bytes unframed, which no MSK listener takes */
        snprintf(err, n, "%s serves SaslHandshake v0 only", c->addr);
        return -1;
    }
    kp_arena a = {0};
    kp_sasl_handshake_request req;
    kp_defaults(m->req, ver, &req);
    req.mechanism = kp_str_c(mech_name(c->o->mech));
    kp_sasl_handshake_response resp;
    int rc = cli_call(c, m, ver, &req, &resp, &a, err, n);
    if (!rc && resp.error_code) {
        char offered[256] = "";
        size_t off = 0;
        for (int32_t i = 0; i < resp.mechanisms.n && off < sizeof offered; i++)
            off += (size_t)snprintf(offered + off, sizeof offered - off, "%s%.*s", i ? ", " : "",
                                    (int)resp.mechanisms.v[i].len, resp.mechanisms.v[i].p);
        snprintf(err, n, "%s: SaslHandshake %s: %s (the broker offers: %s)", c->addr, mech_name(c->o->mech),
                 kp_err_name(resp.error_code), off ? offered : "none");
        rc = -1;
    }
    kp_arena_free(&a);
    return rc;
}

int cli_sasl_login(cli_conn *c, char *err, size_t n) {
    bool again = c->reauth_at_ms != 0;
    c->reauth_at_ms = 0; /* cli_call must not start another authentication inside this one */
    if (credentials(c, again, err, n) != 0 || handshake(c, err, n) != 0) return -1;
    const kp_msg *m = &kp_msg_sasl_authenticate;
    int16_t ver = cli_version(c, m, err, n);
    if (ver < 0) return -1;
    const struct cli_auth *au = c->o->auth;
    size_t len;
    char *msg = cli_iam_message(c->o->mech, &au->creds, au->region, c->host, clk_now_ms(), &len, err, n);
    if (!msg) return -1;
    kp_arena a = {0};
    kp_sasl_authenticate_request req;
    kp_defaults(m->req, ver, &req);
    req.auth_bytes = (kp_bytes){msg, (int32_t)len};
    kp_sasl_authenticate_response resp;
    int64_t sent = clk_mono_ms();
    int rc = cli_call(c, m, ver, &req, &resp, &a, err, n);
    OPENSSL_cleanse(msg, len);
    free(msg);
    if (!rc && resp.error_code) {
        char buf[600];
        snprintf(err, n, "%s: SASL %s authentication failed: %s (credentials from %s, key %s, region %s)", c->addr,
                 mech_name(c->o->mech), cli_err_text(resp.error_code, resp.error_message, buf, sizeof buf),
                 au->creds.source, au->creds.access_key_id, au->region);
        rc = -1;
    }
    if (!rc && resp.session_lifetime_ms > 0) {
        /* KIP-368: authenticate again at 85% of the session, as the Java client does at 85-95%,
         * but not within a second of this one, which Kafka refuses (ILLEGAL_SASL_STATE) */
        int64_t at = resp.session_lifetime_ms * 85 / 100;
        c->reauth_at_ms = sent + (at > 1000 ? at : 1000);
    }
    kp_arena_free(&a);
    return rc;
}
