/*
 * tls: TLS on memory BIOs (see tls.h for the contract): the server's protocol settings
 * (versions, ciphers, groups) and the per-connection engine. The certificate the server
 * context serves, given or from the local CA, is tls_ca.c's.
 */
#include "tls.h"
#include "tls_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "kp_mem.h"

/* Mozilla "intermediate" minus DHE: every TLS 1.2 suite has forward secrecy and an AEAD. */
#define TLS12_CIPHERS                                                                        \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                              \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                              \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
#define GROUPS "X25519:P-256:P-384"

struct tls_conn {
    SSL *ssl;
    BIO *wbio; /* owned by ssl; ciphertext waiting for the socket */
    bool established, failed, peer_closed;
    uint8_t first[8]; /* the connection's first bytes, to recognise plaintext clients */
    size_t nfirst;
    char *sni;
    char err[512];
};

/* ---------- errors ---------- */

void tls_render_errors(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    const char *data;
    int flags;
    unsigned long e;
    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        if (len + 8 >= n) continue; /* keep draining */
        const char *reason = ERR_reason_error_string(e);
        char code[64];
        if (!reason) {
            ERR_error_string_n(e, code, sizeof code);
            reason = code;
        }
        int w = snprintf(buf + len, n - len, "%s%s%s%s", len ? "; " : "", reason, (flags & ERR_TXT_STRING) && data && *data ? ": " : "",
                         (flags & ERR_TXT_STRING) && data ? data : "");
        if (w > 0) len += (size_t)w < n - len ? (size_t)w : n - len - 1;
    }
    if (!len) snprintf(buf, n, "unknown OpenSSL error");
}

int tls_fail_ssl(char *err, size_t n, const char *what) {
    char q[512];
    tls_render_errors(q, sizeof q);
    snprintf(err, n, "%s: %s", what, q);
    return -1;
}

/* ---------- server settings ---------- */

SSL_CTX *tls_server_ssl_ctx(char *err, size_t n) {
    SSL_CTX *c = SSL_CTX_new(TLS_server_method());
    if (!c) {
        tls_fail_ssl(err, n, "tls: SSL_CTX_new");
        return NULL;
    }
    static const unsigned char sid_ctx[] = "mskmock";
    bool ok = SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION) && SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION) &&
              SSL_CTX_set_cipher_list(c, TLS12_CIPHERS) && SSL_CTX_set_ciphersuites(c, TLS13_SUITES) &&
              SSL_CTX_set1_groups_list(c, GROUPS) && SSL_CTX_set_session_id_context(c, sid_ctx, sizeof sid_ctx - 1);
    if (!ok) {
        tls_fail_ssl(err, n, "tls: configuring the server context");
        SSL_CTX_free(c);
        return NULL;
    }
    /* renegotiation only costs us CPU; compression invites CRIME */
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    /* idle Kafka connections are common: drop the 34 KB of record buffers while idle */
    SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
    return c;
}

/* ---------- connections ---------- */

tls_conn *tls_conn_new(tls_ctx *x) {
    tls_conn *t = xcalloc(1, sizeof(*t));
    SSL_CTX *ctx = tls_ctx_ssl(x);
    if (!ctx) { /* a connection that fails at its first bytes, saying why */
        snprintf(t->err, sizeof t->err, "%s", tls_ctx_ssl_error(x));
        t->failed = true;
        return t;
    }
    BIO *rbio = BIO_new(BIO_s_mem()), *wbio = BIO_new(BIO_s_mem());
    t->ssl = SSL_new(ctx);
    if (!t->ssl || !rbio || !wbio) xoom("SSL_new for a TLS connection", 0); /* all they can lack is memory */
    /* an empty input buffer means "wait for more", not end of stream */
    BIO_set_mem_eof_return(rbio, -1);
    SSL_set_bio(t->ssl, rbio, wbio);
    SSL_set_accept_state(t->ssl);
    t->wbio = wbio;
    return t;
}

void tls_conn_free(tls_conn *t) {
    if (!t) return;
    SSL_free(t->ssl);
    free(t->sni);
    free(t);
}

/* What the first bytes say about a client that is not speaking TLS, or NULL. */
static const char *first_bytes_hint(const tls_conn *t, char *buf, size_t n) {
    const uint8_t *p = t->first;
    /* a TLS record (change_cipher_spec .. heartbeat, version 3.x) or an SSLv2-style hello: OpenSSL's reason says enough */
    if (!t->nfirst || (p[0] >= 0x14 && p[0] <= 0x18 && (t->nfirst < 2 || p[1] == 0x03)) || ((p[0] & 0x80) && t->nfirst >= 3 && p[2] == 0x01))
        return NULL;
    static const char *const http[] = {"GET ", "POST", "PUT ", "HEAD", "DELE", "OPTI", "PATC", "CONN", "PRI "};
    for (size_t i = 0; t->nfirst >= 4 && i < sizeof http / sizeof *http; i++)
        if (memcmp(p, http[i], 4) == 0) return "plaintext HTTP request on a TLS port?";
    if (p[0] == 0x00) { /* a Kafka frame under 16 MiB: int32 size, int16 api_key, int16 api_version */
        if (t->nfirst >= 8)
            snprintf(buf, n,
                     "plaintext Kafka request on a TLS port? first bytes are a %u-byte frame for api_key %u v%u; the client "
                     "needs security.protocol=SASL_SSL",
                     (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3], (unsigned)p[4] << 8 | p[5], (unsigned)p[6] << 8 | p[7]);
        else
            snprintf(buf, n, "plaintext Kafka request on a TLS port? the client needs security.protocol=SASL_SSL");
        return buf;
    }
    snprintf(buf, n, "not TLS: the first bytes are %02x %02x %02x %02x", p[0], t->nfirst > 1 ? p[1] : 0, t->nfirst > 2 ? p[2] : 0,
             t->nfirst > 3 ? p[3] : 0);
    return buf;
}

static const char *alert_hint(const char *reasons) {
    if (strstr(reasons, "unknown ca") || strstr(reasons, "bad certificate") || strstr(reasons, "certificate unknown"))
        return "the client rejected the server certificate: it does not trust the CA (give it ca.pem) or the host name it "
               "connected to is not covered";
    if (strstr(reasons, "no shared cipher"))
        return "the client offers no cipher we accept: TLS 1.2 needs ECDHE with AES-GCM or ChaCha20-Poly1305";
    if (strstr(reasons, "unsupported protocol") || strstr(reasons, "protocol version"))
        return "the client offers only TLS versions we refuse: MSK accepts TLS 1.2 and 1.3";
    return NULL;
}

static int conn_fail(tls_conn *t, int ssl_rc, const char *what) {
    char reasons[256], hint_buf[192];
    int e = SSL_get_error(t->ssl, ssl_rc);
    if (e == SSL_ERROR_SSL)
        tls_render_errors(reasons, sizeof reasons);
    else {
        snprintf(reasons, sizeof reasons, "%s failed (SSL_get_error %d)", what, e);
        ERR_clear_error();
    }
    const char *hint = first_bytes_hint(t, hint_buf, sizeof hint_buf);
    if (!hint) hint = alert_hint(reasons);
    if (hint)
        snprintf(t->err, sizeof t->err, "%s (%s)", reasons, hint);
    else
        snprintf(t->err, sizeof t->err, "%s", reasons);
    t->failed = true;
    return -1;
}

static void on_established(tls_conn *t) {
    t->established = true;
    const char *name = SSL_get_servername(t->ssl, TLSEXT_NAMETYPE_host_name);
    if (name) t->sni = xstrdup(name);
}

int tls_conn_feed(tls_conn *t, const uint8_t *cipher, size_t n) {
    if (t->failed) return -1;
    if (!n) return 0;
    if (t->nfirst < sizeof t->first) {
        size_t k = sizeof t->first - t->nfirst < n ? sizeof t->first - t->nfirst : n;
        memcpy(t->first + t->nfirst, cipher, k);
        t->nfirst += k;
    }
    BIO *rbio = SSL_get_rbio(t->ssl);
    while (n) {
        int chunk = n > (size_t)1 << 30 ? 1 << 30 : (int)n;
        if (BIO_write(rbio, cipher, chunk) != chunk) {
            snprintf(t->err, sizeof t->err, "out of memory buffering %zu bytes", n);
            t->failed = true;
            return -1;
        }
        cipher += chunk;
        n -= (size_t)chunk;
    }
    if (t->established) return 0;
    ERR_clear_error();
    int rc = SSL_do_handshake(t->ssl);
    if (rc == 1) {
        on_established(t);
        return 0;
    }
    /*
     * What a stranger can make us hold here is bounded by OpenSSL: the handshake drains the
     * memory BIO record by record, and a handshake message may not exceed its per-message
     * maximum (131396 bytes for a ClientHello); request.read.timeout.ms bounds how long.
     */
    if (SSL_get_error(t->ssl, rc) == SSL_ERROR_WANT_READ) return 0;
    return conn_fail(t, rc, "handshake");
}

bool tls_conn_has_pending_in(const tls_conn *t) {
    if (!t->ssl) return false;
    return BIO_ctrl_pending(SSL_get_rbio(t->ssl)) > 0 || SSL_has_pending(t->ssl);
}

int tls_conn_read(tls_conn *t, uint8_t *plain, size_t cap, size_t *got) {
    *got = 0;
    if (t->failed) return -1;
    if (t->peer_closed) return TLS_CLOSED;
    if (!t->established) return 0;
    while (*got < cap) {
        size_t k = 0;
        ERR_clear_error();
        int rc = SSL_read_ex(t->ssl, plain + *got, cap - *got, &k);
        if (rc == 1) {
            *got += k;
            continue;
        }
        int e = SSL_get_error(t->ssl, rc);
        if (e == SSL_ERROR_WANT_READ) return 0;
        if (e == SSL_ERROR_ZERO_RETURN) {
            t->peer_closed = true;
            return TLS_CLOSED;
        }
        return conn_fail(t, rc, "read");
    }
    return 0;
}

int tls_conn_write(tls_conn *t, const uint8_t *plain, size_t n) {
    if (t->failed) return -1;
    if (!t->established) {
        snprintf(t->err, sizeof t->err, "write before the TLS handshake finished");
        t->failed = true;
        return -1;
    }
    if (!n) return 0;
    size_t done = 0;
    ERR_clear_error();
    /* memory BIOs never push back: one call encrypts everything */
    int rc = SSL_write_ex(t->ssl, plain, n, &done);
    if (rc != 1 || done != n) return conn_fail(t, rc, "write");
    return 0;
}

int tls_conn_shutdown(tls_conn *t) {
    if (t->failed) return -1;
    if (!t->established) return 0;
    ERR_clear_error();
    int rc = SSL_shutdown(t->ssl);
    if (rc < 0) return conn_fail(t, rc, "shutdown");
    return 0;
}

size_t tls_conn_pending_out(const tls_conn *t) { return t->wbio ? BIO_ctrl_pending(t->wbio) : 0; }

int tls_conn_take_out(tls_conn *t, uint8_t *buf, size_t cap, size_t *got) {
    *got = 0;
    size_t want = tls_conn_pending_out(t);
    if (want > cap) want = cap;
    if (want > INT_MAX) want = INT_MAX;
    if (!want) return 0;
    int rc = BIO_read(t->wbio, buf, (int)want);
    if (rc <= 0) return -1;
    *got = (size_t)rc;
    return 0;
}

uint8_t *tls_conn_take_all(tls_conn *t, size_t *len) {
    *len = 0;
    size_t n = tls_conn_pending_out(t);
    if (!n) return NULL;
    uint8_t *buf = xmalloc(n);
    if (tls_conn_take_out(t, buf, n, len) < 0 || *len == 0) {
        free(buf);
        *len = 0;
        return NULL;
    }
    return buf;
}

bool tls_conn_established(const tls_conn *t) { return t->established; }
bool tls_conn_failed(const tls_conn *t) { return t->failed; }
const char *tls_conn_sni(const tls_conn *t) { return t->sni; }
const char *tls_conn_version(const tls_conn *t) { return t->established ? SSL_get_version(t->ssl) : "-"; }

const char *tls_conn_cipher(const tls_conn *t) {
    const SSL_CIPHER *c = t->established ? SSL_get_current_cipher(t->ssl) : NULL;
    return c ? SSL_CIPHER_get_name(c) : "-";
}

const char *tls_conn_error(const tls_conn *t) { return t->err; }
