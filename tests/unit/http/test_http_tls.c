/*
 * http/ over TLS (http_opts.tls): a client that trusts the local CA gets its answer, the handler
 * told the request was secure, a body spread over many TLS records and reads, and the response
 * ended by close_notify; a client that does not trust the CA fails verification; a plaintext
 * request gets a plaintext 400; a handshake that stalls is closed at opts.timeout_ms. A client
 * thread (blocking OpenSSL) talks to a server on the test's own loop over loopback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <cmocka.h>
#include <jansson.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <uv.h>

#include "http/http.h"
#include "net/tls.h"

#define RESP_MAX 65536

typedef enum { TRUSTED, UNTRUSTED, PLAIN, STALLED } kind;

typedef struct exchange {
    kind k;
    const char *head;  /* request line and headers, without the blank line */
    size_t body_len;   /* a body of that many 'b' after the head */
    /* results */
    bool connected;    /* the TLS handshake succeeded */
    long verify;       /* SSL_get_verify_result after a failed handshake */
    bool close_notify; /* the response ended with the server's close_notify */
    bool eof;          /* STALLED: the server closed the connection */
    char response[RESP_MAX];
} exchange;

typedef struct job {
    exchange *ex;
    int nex, port;
    const char *ca_pem;
    uv_async_t *done;
} job;

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0); /* no cmocka assertions off the main thread */
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static char *request_text(const exchange *e, size_t *len) {
    size_t hl = strlen(e->head);
    char *r = malloc(hl + 64 + e->body_len);
    if (!r) return NULL;
    int n = snprintf(r, hl + 64, "%s\r\nContent-Length: %zu\r\n\r\n", e->head, e->body_len);
    memset(r + n, 'b', e->body_len);
    *len = (size_t)n + e->body_len;
    return r;
}

static void do_plain(int fd, exchange *e) {
    size_t len;
    char *req = request_text(e, &len);
    if (req && send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len) {
        size_t n = 0;
        for (ssize_t r; n < RESP_MAX - 1 && (r = recv(fd, e->response + n, RESP_MAX - 1 - n, 0)) > 0;) n += (size_t)r;
        e->response[n] = '\0';
    }
    free(req);
}

static void do_stalled(int fd, exchange *e) {
    static const uint8_t start[] = {0x16, 0x03, 0x01}; /* the start of a TLS record header, and nothing more */
    if (send(fd, start, sizeof start, MSG_NOSIGNAL) != (ssize_t)sizeof start) return;
    char b[16];
    e->eof = recv(fd, b, sizeof b, 0) == 0;
}

static void do_tls(int fd, exchange *e, const char *ca_pem) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) return;
    if (e->k == TRUSTED) {
        BIO *b = BIO_new_mem_buf(ca_pem, -1);
        X509 *ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
        if (ca) X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
        X509_free(ca);
        BIO_free(b);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL *ssl = SSL_new(ctx);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {
        e->verify = SSL_get_verify_result(ssl);
        goto out;
    }
    e->connected = true;
    size_t len;
    char *req = request_text(e, &len);
    /* in pieces: the server gets the request over several records and reads */
    for (size_t off = 0; req && off < len;) {
        int chunk = len - off > 1000 ? 1000 : (int)(len - off);
        if (SSL_write(ssl, req + off, chunk) != chunk) break;
        off += (size_t)chunk;
    }
    free(req);
    size_t n = 0;
    int r;
    while (n < RESP_MAX - 1 && (r = SSL_read(ssl, e->response + n, (int)(RESP_MAX - 1 - n))) > 0) n += (size_t)r;
    e->response[n] = '\0';
    e->close_notify = SSL_get_error(ssl, r) == SSL_ERROR_ZERO_RETURN;
out:
    SSL_free(ssl);
    SSL_CTX_free(ctx);
}

static void client_main(void *arg) {
    job *j = arg;
    for (int i = 0; i < j->nex; i++) {
        int fd = dial(j->port);
        if (fd < 0) continue;
        exchange *e = &j->ex[i];
        if (e->k == PLAIN)
            do_plain(fd, e);
        else if (e->k == STALLED)
            do_stalled(fd, e);
        else
            do_tls(fd, e, j->ca_pem);
        close(fd);
    }
    uv_async_send(j->done);
}

/* The handler: what it was told of the request. */
static void echo(void *ctx, const http_req *rq, http_resp *rs) {
    (void)ctx;
    http_json(rs, 200, json_pack("{s:s, s:b, s:I}", "path", rq->path, "secure", rq->secure, "body_len",
                                 (json_int_t)rq->body_len));
}

static http_server *server;

static void on_done(uv_async_t *a) {
    http_close(server);
    uv_close((uv_handle_t *)a, NULL);
}

static json_t *body_of(const exchange *e) {
    if (strncmp(e->response, "HTTP/1.1 200 OK\r\n", 17) != 0) fail_msg("not 200:\n%s", e->response);
    const char *b = strstr(e->response, "\r\n\r\n");
    assert_non_null(b);
    json_t *j = json_loads(b + 4, 0, NULL);
    assert_non_null(j);
    return j;
}

static void test_https(void **state) {
    (void)state;
    tls_settings set = {.data_dir = ":memory:"};
    tls_ctx *tls = NULL;
    char err[512];
    if (tls_ctx_new(&tls, &set, err, sizeof err) != 0) fail_msg("tls_ctx_new: %s", err);

    exchange ex[] = {
        {.k = TRUSTED, .head = "GET /x HTTP/1.1\r\nHost: 127.0.0.1"},
        {.k = TRUSTED, .head = "POST /big HTTP/1.1\r\nHost: 127.0.0.1", .body_len = 20000},
        {.k = TRUSTED, .head = "POST /too-big HTTP/1.1\r\nHost: 127.0.0.1", .body_len = 40000},
        {.k = UNTRUSTED, .head = "GET /x HTTP/1.1\r\nHost: 127.0.0.1"},
        {.k = PLAIN, .head = "GET /x HTTP/1.1\r\nHost: 127.0.0.1"},
        {.k = STALLED},
    };
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    http_opts opts = {.name = "test", .max_body = 32768, .max_clients = 8, .timeout_ms = 500, .tls = tls};
    if (http_start(&loop, "127.0.0.1", 0, &opts, echo, NULL, &server, err, sizeof err) != 0) fail_msg("start: %s", err);
    uv_async_t done;
    uv_async_init(&loop, &done, on_done);
    job j = {.ex = ex, .nex = sizeof ex / sizeof ex[0], .port = http_port(server), .ca_pem = tls_ctx_ca_pem(tls),
             .done = &done};
    uv_thread_t th;
    assert_int_equal(uv_thread_create(&th, client_main, &j), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_thread_join(&th);
    assert_int_equal(uv_loop_close(&loop), 0);
    tls_ctx_free(tls);

    assert_true(ex[0].connected);
    json_t *b = body_of(&ex[0]);
    assert_string_equal(json_string_value(json_object_get(b, "path")), "/x");
    assert_true(json_is_true(json_object_get(b, "secure")));
    json_decref(b);
    assert_true(ex[0].close_notify);

    b = body_of(&ex[1]);
    assert_int_equal(json_integer_value(json_object_get(b, "body_len")), 20000);
    json_decref(b);
    assert_true(ex[1].close_notify);

    assert_true(ex[2].connected);
    if (strncmp(ex[2].response, "HTTP/1.1 413 ", 13) != 0) fail_msg("40000-byte body: %s", ex[2].response);

    assert_false(ex[3].connected);
    assert_int_equal(ex[3].verify, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);

    if (strncmp(ex[4].response, "HTTP/1.1 400 ", 13) != 0) fail_msg("plaintext: %s", ex[4].response);
    assert_non_null(strstr(ex[4].response, "plain HTTP request was sent to the HTTPS port"));

    assert_true(ex[5].eof);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_https),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
