/*
 * TLS layer: local CA generation and reuse, given certificate files, and the
 * memory-BIO connection engine driven by an in-process OpenSSL client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "fixtures.h"
#include "net/tls.h"

static char dir_a[64];           /* generated CA and server certificate, shared by most tests */
static char ca_file[128];
static tls_ctx *ctx_a;
static const char *const hosts_a[] = {"broker.mskmock.test", "10.1.2.3"};

/* ---------- helpers ---------- */

static void path_in(char *buf, size_t n, const char *dir, const char *file) { snprintf(buf, n, "%s/tls/%s", dir, file); }

static tls_ctx *ctx_for(const char *dir, const char *const *hosts, size_t nhosts) {
    tls_settings set = {.data_dir = dir, .hosts = hosts, .nhosts = nhosts};
    tls_ctx *x = NULL;
    char err[512];
    if (tls_ctx_new(&x, &set, err, sizeof err) < 0) fail_msg("tls_ctx_new: %s", err);
    return x;
}

typedef struct client {
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *rbio, *wbio;
} client;

static bool is_ip(const char *h) {
    ASN1_OCTET_STRING *ip = a2i_IPADDRESS(h);
    ASN1_OCTET_STRING_free(ip);
    ERR_clear_error();
    return ip != NULL;
}

/* A verifying client: trusts ca_path (file) or ca_pem (text), checks host, sends sni. */
static void client_init(client *c, const char *ca_path, const char *ca_pem, const char *host, const char *sni, int max_version) {
    c->ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(c->ctx);
    if (ca_path) assert_int_equal(SSL_CTX_load_verify_locations(c->ctx, ca_path, NULL), 1);
    if (ca_pem) {
        BIO *b = BIO_new_mem_buf(ca_pem, -1);
        X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
        assert_non_null(ca);
        assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(c->ctx), ca), 1);
        X509_free(ca);
        BIO_free(b);
    }
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    if (max_version) assert_int_equal(SSL_CTX_set_max_proto_version(c->ctx, max_version), 1);
    c->ssl = SSL_new(c->ctx);
    assert_non_null(c->ssl);
    c->rbio = BIO_new(BIO_s_mem());
    c->wbio = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(c->rbio, -1);
    SSL_set_bio(c->ssl, c->rbio, c->wbio);
    SSL_set_connect_state(c->ssl);
    if (host) {
        if (is_ip(host))
            assert_int_equal(X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host), 1);
        else
            assert_int_equal(SSL_set1_host(c->ssl, host), 1);
    }
    if (sni) assert_int_equal(SSL_set_tlsext_host_name(c->ssl, sni), 1);
}

static void client_free(client *c) {
    SSL_free(c->ssl);
    SSL_CTX_free(c->ctx);
}

/* Move every pending byte both ways; returns how many moved. Server errors are left for the caller to check. */
static size_t shuttle(client *c, tls_conn *t) {
    size_t moved = 0;
    uint8_t buf[16384];
    int n;
    while ((n = BIO_read(c->wbio, buf, sizeof buf)) > 0) {
        moved += (size_t)n;
        if (tls_conn_feed(t, buf, (size_t)n) < 0) break;
    }
    size_t len;
    uint8_t *out = tls_conn_take_all(t, &len);
    if (out) {
        assert_int_equal(BIO_write(c->rbio, out, (int)len), (int)len);
        moved += len;
        free(out);
    }
    return moved;
}

/* Run the handshake; true when both sides finished it. */
static bool handshake(client *c, tls_conn *t) {
    for (int i = 0; i < 20; i++) {
        int rc = SSL_do_handshake(c->ssl);
        if (rc <= 0 && SSL_get_error(c->ssl, rc) != SSL_ERROR_WANT_READ) {
            shuttle(c, t); /* let the server see the client's alert */
            ERR_clear_error();
            return false;
        }
        size_t moved = shuttle(c, t);
        if (tls_conn_failed(t)) return false;
        if (rc == 1 && tls_conn_established(t) && !moved) return true;
    }
    return false;
}

static tls_conn *connect_ok(client *c, tls_ctx *x, const char *ca_path, const char *ca_pem, const char *host, const char *sni,
                            int max_version) {
    client_init(c, ca_path, ca_pem, host, sni, max_version);
    tls_conn *t = tls_conn_new(x);
    assert_non_null(t);
    if (!handshake(c, t))
        fail_msg("handshake for %s failed: server \"%s\", client verify %s", host ? host : "-", tls_conn_error(t),
                 X509_verify_cert_error_string(SSL_get_verify_result(c->ssl)));
    assert_int_equal(SSL_get_verify_result(c->ssl), X509_V_OK);
    return t;
}

/* Everything the server decrypts, appended to got/ngot; reads in small slices to exercise *got == cap. */
static int server_drain(tls_conn *t, uint8_t *got, size_t *ngot) {
    for (;;) {
        size_t k = 0;
        int rc = tls_conn_read(t, got + *ngot, 7001, &k);
        *ngot += k;
        if (rc != 0 || k < 7001) return rc;
    }
}

static void client_drain(client *c, uint8_t *got, size_t *ngot) {
    size_t k;
    while (SSL_read_ex(c->ssl, got + *ngot, 65536, &k) == 1) *ngot += k;
    assert_int_equal(SSL_get_error(c->ssl, 0), SSL_ERROR_WANT_READ);
}

static bool file_exists(const char *p) { return access(p, F_OK) == 0; }

static mode_t file_mode(const char *p) {
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    return st.st_mode & 0777;
}

/* ---------- group setup ---------- */

static int setup(void **state) {
    (void)state;
    tmp_dir_new(dir_a, sizeof dir_a, "tls");
    ctx_a = ctx_for(dir_a, hosts_a, 2);
    path_in(ca_file, sizeof ca_file, dir_a, "ca.pem");
    return 0;
}

static int teardown(void **state) {
    (void)state;
    tls_ctx_free(ctx_a);
    tmp_dir_remove(dir_a);
    return 0;
}

/* ---------- the local CA ---------- */

static void test_first_start_writes_ca_and_server_cert(void **state) {
    (void)state;
    char p[160];
    const char *files[] = {"ca.pem", "ca.key", "server.pem", "server.key"};
    for (int i = 0; i < 4; i++) {
        path_in(p, sizeof p, dir_a, files[i]);
        assert_true(file_exists(p));
        if (strstr(files[i], ".key")) assert_int_equal(file_mode(p), 0600);
    }
    assert_string_equal(tls_ctx_ca_file(ctx_a), ca_file);
    assert_non_null(strstr(tls_ctx_ca_pem(ctx_a), "BEGIN CERTIFICATE"));
    assert_int_equal(strlen(tls_ctx_ca_fingerprint(ctx_a)), 64);
    assert_non_null(strstr(tls_ctx_summary(ctx_a), "created local CA"));
    assert_null(tls_ctx_warning(ctx_a));

    /* the CA is a P-256 CA allowed to sign; the server certificate is for servers only */
    FILE *f = fopen(ca_file, "r");
    X509 *ca = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(ca);
    assert_int_equal(X509_check_ca(ca), 1);
    assert_true(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
    assert_int_equal(EVP_PKEY_get_bits(X509_get0_pubkey(ca)), 256);
    path_in(p, sizeof p, dir_a, "server.pem");
    f = fopen(p, "r");
    X509 *srv = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(srv);
    assert_int_equal(X509_check_ca(srv), 0);
    assert_true(X509_get_extended_key_usage(srv) & XKU_SSL_SERVER);
    assert_int_equal(X509_check_ip_asc(srv, "127.0.0.1", 0), 1);
    assert_int_equal(X509_check_ip_asc(srv, "::1", 0), 1);
    assert_int_equal(X509_check_host(srv, "localhost", 0, 0, NULL), 1);
    X509_free(ca);
    X509_free(srv);
}

static void test_restart_reuses_ca_and_cert(void **state) {
    (void)state;
    tls_ctx *x = ctx_for(dir_a, hosts_a, 2);
    assert_string_equal(tls_ctx_ca_fingerprint(x), tls_ctx_ca_fingerprint(ctx_a));
    assert_string_equal(tls_ctx_cert_fingerprint(x), tls_ctx_cert_fingerprint(ctx_a));
    assert_non_null(strstr(tls_ctx_summary(x), "reusing local CA"));
    tls_ctx_free(x);
}

static void test_new_host_reissues_from_same_ca(void **state) {
    (void)state;
    char dir[64];
    tmp_dir_new(dir, sizeof dir, "tls");
    tls_ctx *x1 = ctx_for(dir, hosts_a, 2);
    const char *const more[] = {"broker.mskmock.test", "10.1.2.3", "new.mskmock.test"};
    tls_ctx *x2 = ctx_for(dir, more, 3);
    assert_string_equal(tls_ctx_ca_fingerprint(x2), tls_ctx_ca_fingerprint(x1));
    assert_string_not_equal(tls_ctx_cert_fingerprint(x2), tls_ctx_cert_fingerprint(x1));
    assert_non_null(strstr(tls_ctx_summary(x2), "does not cover new.mskmock.test"));
    /* a client that trusted ca.pem before the change accepts the new name */
    client c;
    tls_conn *t = connect_ok(&c, x2, tls_ctx_ca_file(x1), NULL, "new.mskmock.test", "new.mskmock.test", 0);
    tls_conn_free(t);
    client_free(&c);
    /* and the third start reuses the reissued certificate */
    tls_ctx *x3 = ctx_for(dir, more, 3);
    assert_string_equal(tls_ctx_cert_fingerprint(x3), tls_ctx_cert_fingerprint(x2));
    tls_ctx_free(x1);
    tls_ctx_free(x2);
    tls_ctx_free(x3);
    tmp_dir_remove(dir);
}

/* A server certificate that expires within the day is replaced, still under the same CA. */
static void test_expiring_cert_is_reissued(void **state) {
    (void)state;
    char dir[64], p[160];
    tmp_dir_new(dir, sizeof dir, "tls");
    tls_ctx *x1 = ctx_for(dir, hosts_a, 2);

    path_in(p, sizeof p, dir, "ca.pem");
    FILE *f = fopen(p, "r");
    X509 *ca = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    path_in(p, sizeof p, dir, "ca.key");
    f = fopen(p, "r");
    EVP_PKEY *ca_key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    path_in(p, sizeof p, dir, "server.pem");
    f = fopen(p, "r");
    X509 *old = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(ca);
    assert_non_null(ca_key);
    assert_non_null(old);
    /* same certificate, but valid for one more hour only */
    X509 *x = X509_dup(old);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 4242);
    assert_true(X509_sign(x, ca_key, EVP_sha256()) > 0);
    f = fopen(p, "w");
    assert_int_equal(PEM_write_X509(f, x), 1);
    fclose(f);

    tls_ctx *x2 = ctx_for(dir, hosts_a, 2);
    assert_non_null(strstr(tls_ctx_summary(x2), "expires within a day"));
    assert_string_equal(tls_ctx_ca_fingerprint(x2), tls_ctx_ca_fingerprint(x1));
    assert_string_not_equal(tls_ctx_cert_fingerprint(x2), tls_ctx_cert_fingerprint(x1));
    client c;
    tls_conn *t = connect_ok(&c, x2, tls_ctx_ca_file(x1), NULL, "localhost", NULL, 0);
    X509 *served = SSL_get1_peer_certificate(c.ssl);
    assert_true(ASN1_TIME_cmp_time_t(X509_get0_notAfter(served), time(NULL) + 800L * 86400) > 0);
    X509_free(served);
    tls_conn_free(t);
    client_free(&c);
    X509_free(x);
    X509_free(old);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    tls_ctx_free(x1);
    tls_ctx_free(x2);
    tmp_dir_remove(dir);
}

static void test_ca_without_key_is_refused(void **state) {
    (void)state;
    char dir[64], p[160], cmd[512];
    tmp_dir_new(dir, sizeof dir, "tls");
    snprintf(p, sizeof p, "%s/tls", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/ca.pem'", ca_file, p);
    assert_int_equal(system(cmd), 0);
    tls_settings set = {.data_dir = dir};
    tls_ctx *x = NULL;
    char err[512];
    assert_int_equal(tls_ctx_new(&x, &set, err, sizeof err), -1);
    assert_null(x);
    assert_non_null(strstr(err, "ca.key"));
    tmp_dir_remove(dir);
}

static void test_bad_host_name_is_refused(void **state) {
    (void)state;
    const char *const bad[] = {"evil,DNS:example.com"};
    tls_settings set = {.data_dir = ":memory:", .hosts = bad, .nhosts = 1};
    tls_ctx *x = NULL;
    char err[512];
    assert_int_equal(tls_ctx_new(&x, &set, err, sizeof err), -1);
    assert_non_null(strstr(err, "evil,DNS:example.com"));
}

static void test_memory_mode_writes_nothing(void **state) {
    (void)state;
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    tls_ctx *x = ctx_for(":memory:", hosts_a, 2);
    assert_null(tls_ctx_ca_file(x));
    assert_non_null(tls_ctx_ca_pem(x));
    assert_non_null(strstr(tls_ctx_summary(x), "in-memory"));
    assert_false(file_exists(":memory:"));
    client c;
    tls_conn *t = connect_ok(&c, x, NULL, tls_ctx_ca_pem(x), "broker.mskmock.test", "broker.mskmock.test", 0);
    tls_conn_free(t);
    client_free(&c);
    tls_ctx_free(x);
}

/* ---------- given certificate files ---------- */

static void test_given_files_are_served(void **state) {
    (void)state;
    char dir[64], cert[160], key[160], ca_key[160], p[160];
    tmp_dir_new(dir, sizeof dir, "tls");
    path_in(cert, sizeof cert, dir_a, "server.pem");
    path_in(key, sizeof key, dir_a, "server.key");
    path_in(ca_key, sizeof ca_key, dir_a, "ca.key");
    const char *const other[] = {"elsewhere.example"};
    tls_settings set = {.cert_file = cert, .key_file = key, .data_dir = dir, .hosts = other, .nhosts = 1};
    tls_ctx *x = NULL;
    char err[512];
    assert_int_equal(tls_ctx_new(&x, &set, err, sizeof err), 0);
    assert_string_equal(tls_ctx_cert_fingerprint(x), tls_ctx_cert_fingerprint(ctx_a));
    assert_null(tls_ctx_ca_file(x));
    assert_null(tls_ctx_ca_pem(x));
    assert_non_null(strstr(tls_ctx_summary(x), cert));
    assert_non_null(tls_ctx_warning(x));
    assert_non_null(strstr(tls_ctx_warning(x), "elsewhere.example"));
    snprintf(p, sizeof p, "%s/tls", dir);
    assert_false(file_exists(p)); /* no local CA made */
    client c;
    tls_conn *t = connect_ok(&c, x, ca_file, NULL, "localhost", "localhost", 0);
    tls_conn_free(t);
    client_free(&c);
    tls_ctx_free(x);

    /* a key that is not the certificate's */
    set.key_file = ca_key;
    assert_int_equal(tls_ctx_new(&x, &set, err, sizeof err), -1);
    assert_non_null(strstr(err, "does not belong"));
    /* a missing file is named */
    set.key_file = "/nonexistent/server.key";
    assert_int_equal(tls_ctx_new(&x, &set, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/server.key"));
    /* one without the other */
    set.key_file = NULL;
    assert_int_equal(tls_ctx_new(&x, &set, err, sizeof err), -1);
    assert_non_null(strstr(err, "key file"));
    tmp_dir_remove(dir);
}

/* ---------- handshakes ---------- */

static void test_handshake_tls13(void **state) {
    (void)state;
    client c;
    tls_conn *t = connect_ok(&c, ctx_a, ca_file, NULL, "localhost", "localhost", 0);
    assert_string_equal(tls_conn_version(t), "TLSv1.3");
    assert_string_equal(SSL_get_version(c.ssl), "TLSv1.3");
    assert_string_equal(tls_conn_sni(t), "localhost");
    assert_string_not_equal(tls_conn_cipher(t), "-");
    assert_string_equal(tls_conn_error(t), "");
    tls_conn_free(t);
    client_free(&c);
}

static void test_handshake_tls12(void **state) {
    (void)state;
    client c;
    tls_conn *t = connect_ok(&c, ctx_a, ca_file, NULL, "broker.mskmock.test", "broker.mskmock.test", TLS1_2_VERSION);
    assert_string_equal(tls_conn_version(t), "TLSv1.2");
    assert_non_null(strstr(tls_conn_cipher(t), "ECDHE-ECDSA-"));
    assert_string_equal(tls_conn_sni(t), "broker.mskmock.test");
    tls_conn_free(t);
    client_free(&c);
}

static void test_ip_sans_and_no_sni(void **state) {
    (void)state;
    const char *ips[] = {"127.0.0.1", "::1", "10.1.2.3"};
    for (int i = 0; i < 3; i++) {
        client c;
        tls_conn *t = connect_ok(&c, ctx_a, ca_file, NULL, ips[i], NULL, 0);
        assert_null(tls_conn_sni(t));
        tls_conn_free(t);
        client_free(&c);
    }
}

static void test_uncovered_name_fails_verification(void **state) {
    (void)state;
    client c;
    client_init(&c, ca_file, NULL, "not-covered.example", "not-covered.example", 0);
    tls_conn *t = tls_conn_new(ctx_a);
    assert_false(handshake(&c, t));
    assert_int_equal(SSL_get_verify_result(c.ssl), X509_V_ERR_HOSTNAME_MISMATCH);
    assert_true(tls_conn_failed(t));
    assert_non_null(strstr(tls_conn_error(t), "rejected the server certificate"));
    tls_conn_free(t);
    client_free(&c);
}

static void test_untrusted_ca_is_explained(void **state) {
    (void)state;
    client c;
    client_init(&c, NULL, NULL, "localhost", "localhost", 0); /* trusts nothing */
    tls_conn *t = tls_conn_new(ctx_a);
    assert_false(handshake(&c, t));
    assert_true(tls_conn_failed(t));
    assert_non_null(strstr(tls_conn_error(t), "unknown ca"));
    assert_non_null(strstr(tls_conn_error(t), "ca.pem"));
    tls_conn_free(t);
    client_free(&c);
}

/* ---------- application data ---------- */

#define MIB (1024 * 1024)

static void test_data_both_ways(void **state) {
    (void)state;
    client c;
    tls_conn *t = connect_ok(&c, ctx_a, ca_file, NULL, "localhost", "localhost", 0);
    uint8_t *src = malloc(MIB), *got = malloc(MIB + 65536);
    uint32_t seed = 12345;
    for (size_t i = 0; i < MIB; i++) {
        seed = seed * 1103515245u + 12345u;
        src[i] = (uint8_t)(seed >> 16);
    }
    /* client -> server in uneven pieces */
    size_t sent = 0, ngot = 0;
    while (sent < MIB) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = 1 + (seed >> 8) % 40000;
        if (piece > MIB - sent) piece = MIB - sent;
        size_t w;
        assert_int_equal(SSL_write_ex(c.ssl, src + sent, piece, &w), 1);
        sent += piece;
        shuttle(&c, t);
        assert_int_equal(server_drain(t, got, &ngot), 0);
    }
    assert_int_equal(ngot, MIB);
    assert_memory_equal(got, src, MIB);
    /* server -> client */
    sent = ngot = 0;
    while (sent < MIB) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = 1 + (seed >> 8) % 70000;
        if (piece > MIB - sent) piece = MIB - sent;
        assert_int_equal(tls_conn_write(t, src + sent, piece), 0);
        sent += piece;
        assert_true(tls_conn_pending_out(t) > piece);
        shuttle(&c, t);
        client_drain(&c, got, &ngot);
    }
    assert_int_equal(ngot, MIB);
    assert_memory_equal(got, src, MIB);
    free(src);
    free(got);
    tls_conn_free(t);
    client_free(&c);
}

static void test_take_out_in_slices(void **state) {
    (void)state;
    client c;
    tls_conn *t = connect_ok(&c, ctx_a, ca_file, NULL, "localhost", NULL, 0);
    const char msg[] = "hello from the broker";
    assert_int_equal(tls_conn_write(t, (const uint8_t *)msg, sizeof msg), 0);
    uint8_t buf[7];
    size_t k, total = tls_conn_pending_out(t), moved = 0;
    while (tls_conn_pending_out(t)) {
        assert_int_equal(tls_conn_take_out(t, buf, sizeof buf, &k), 0);
        assert_true(k > 0 && k <= sizeof buf);
        BIO_write(c.rbio, buf, (int)k);
        moved += k;
    }
    assert_int_equal(moved, total);
    char got[64];
    size_t n;
    assert_int_equal(SSL_read_ex(c.ssl, got, sizeof got, &n), 1);
    assert_int_equal(n, sizeof msg);
    assert_string_equal(got, msg);
    tls_conn_free(t);
    client_free(&c);
}

static void test_close_notify(void **state) {
    (void)state;
    /* the client closes: the server reads its data, then TLS_CLOSED */
    client c;
    tls_conn *t = connect_ok(&c, ctx_a, ca_file, NULL, "localhost", NULL, 0);
    size_t w;
    assert_int_equal(SSL_write_ex(c.ssl, "last", 4, &w), 1);
    assert_true(SSL_shutdown(c.ssl) >= 0);
    shuttle(&c, t);
    uint8_t buf[64];
    size_t k = 0;
    int rc = tls_conn_read(t, buf, sizeof buf, &k);
    assert_int_equal(k, 4);
    if (rc == 0) rc = tls_conn_read(t, buf, sizeof buf, &k);
    assert_int_equal(rc, TLS_CLOSED);
    assert_int_equal(tls_conn_read(t, buf, sizeof buf, &k), TLS_CLOSED);
    tls_conn_free(t);
    client_free(&c);

    /* the server closes: the client sees close_notify */
    t = connect_ok(&c, ctx_a, ca_file, NULL, "localhost", NULL, 0);
    assert_int_equal(tls_conn_shutdown(t), 0);
    assert_true(tls_conn_pending_out(t) > 0);
    shuttle(&c, t);
    assert_int_equal(SSL_read_ex(c.ssl, buf, sizeof buf, &k), 0);
    assert_int_equal(SSL_get_error(c.ssl, 0), SSL_ERROR_ZERO_RETURN);
    tls_conn_free(t);
    client_free(&c);
}

/* ---------- clients that do not speak TLS ---------- */

static void test_plaintext_kafka_frame(void **state) {
    (void)state;
    /* ApiVersions v3: header v2 (api_key 18, version 3, correlation 1, client "cli", no tags), body with software name/version */
    static const uint8_t frame[] = {0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 3, 'c', 'l', 'i', 0, 3, 'l', 'k', 2, '1', 0};
    tls_conn *t = tls_conn_new(ctx_a);
    assert_int_equal(tls_conn_feed(t, frame, sizeof frame), -1);
    assert_true(tls_conn_failed(t));
    const char *e = tls_conn_error(t);
    assert_non_null(strstr(e, "wrong version number"));
    assert_non_null(strstr(e, "plaintext Kafka request on a TLS port?"));
    assert_non_null(strstr(e, "api_key 18 v3"));
    assert_non_null(strstr(e, "SASL_SSL"));
    /* it stays failed */
    assert_int_equal(tls_conn_feed(t, frame, sizeof frame), -1);
    size_t k;
    uint8_t buf[8];
    assert_int_equal(tls_conn_read(t, buf, sizeof buf, &k), -1);
    tls_conn_free(t);
}

static void test_plaintext_http(void **state) {
    (void)state;
    static const char req[] = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n";
    tls_conn *t = tls_conn_new(ctx_a);
    assert_int_equal(tls_conn_feed(t, (const uint8_t *)req, sizeof req - 1), -1);
    assert_non_null(strstr(tls_conn_error(t), "plaintext HTTP request"));
    tls_conn_free(t);
}

static void test_garbage(void **state) {
    (void)state;
    static const uint8_t junk[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06};
    tls_conn *t = tls_conn_new(ctx_a);
    assert_int_equal(tls_conn_feed(t, junk, sizeof junk), -1);
    assert_non_null(strstr(tls_conn_error(t), "not TLS: the first bytes are de ad be ef"));
    tls_conn_free(t);

    /* a TLS handshake record header followed by nonsense */
    uint8_t rec[5 + 64] = {0x16, 0x03, 0x01, 0x00, 64};
    for (size_t i = 5; i < sizeof rec; i++) rec[i] = (uint8_t)(i * 37);
    t = tls_conn_new(ctx_a);
    assert_int_equal(tls_conn_feed(t, rec, sizeof rec), -1);
    assert_true(strlen(tls_conn_error(t)) > 0);
    assert_null(strstr(tls_conn_error(t), "plaintext"));
    tls_conn_free(t);
}

static void test_write_before_handshake_fails(void **state) {
    (void)state;
    tls_conn *t = tls_conn_new(ctx_a);
    assert_int_equal(tls_conn_write(t, (const uint8_t *)"x", 1), -1);
    assert_non_null(strstr(tls_conn_error(t), "before the TLS handshake"));
    assert_string_equal(tls_conn_version(t), "-");
    tls_conn_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_start_writes_ca_and_server_cert),
        cmocka_unit_test(test_restart_reuses_ca_and_cert),
        cmocka_unit_test(test_new_host_reissues_from_same_ca),
        cmocka_unit_test(test_expiring_cert_is_reissued),
        cmocka_unit_test(test_ca_without_key_is_refused),
        cmocka_unit_test(test_bad_host_name_is_refused),
        cmocka_unit_test(test_memory_mode_writes_nothing),
        cmocka_unit_test(test_given_files_are_served),
        cmocka_unit_test(test_handshake_tls13),
        cmocka_unit_test(test_handshake_tls12),
        cmocka_unit_test(test_ip_sans_and_no_sni),
        cmocka_unit_test(test_uncovered_name_fails_verification),
        cmocka_unit_test(test_untrusted_ca_is_explained),
        cmocka_unit_test(test_data_both_ways),
        cmocka_unit_test(test_take_out_in_slices),
        cmocka_unit_test(test_close_notify),
        cmocka_unit_test(test_plaintext_kafka_frame),
        cmocka_unit_test(test_plaintext_http),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_write_before_handshake_fails),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
