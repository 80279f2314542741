/*
 * http/: what a handler sees of a request's header fields (names lower-cased, values as sent,
 * repeats kept, pieces split across reads joined), the raw path next to the decoded one, the
 * field limit (431), and the response header lines a handler adds. A client thread talks to a
 * server on the test's own loop over loopback.
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
#include <uv.h>

#include "http/http.h"

#define RESP_MAX 16384

typedef struct exchange {
    const char *request;
    bool byte_by_byte;
    char response[RESP_MAX];
} exchange;

typedef struct job {
    exchange *ex;
    int nex, port;
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

static void do_exchange(int port, exchange *e) {
    int fd = dial(port);
    if (fd < 0) return;
    size_t len = strlen(e->request);
    for (size_t off = 0; off < len;) {
        size_t n = e->byte_by_byte ? 1 : len - off;
        ssize_t w = send(fd, e->request + off, n, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
        if (e->byte_by_byte) usleep(100);
    }
    size_t n = 0;
    for (ssize_t r; n < RESP_MAX - 1 && (r = recv(fd, e->response + n, RESP_MAX - 1 - n, 0)) > 0;) n += (size_t)r;
    e->response[n] = '\0';
    close(fd);
}

static void client_main(void *arg) {
    job *j = arg;
    for (int i = 0; i < j->nex; i++) do_exchange(j->port, &j->ex[i]);
    uv_async_send(j->done);
}

/* The handler: the request as JSON (path, raw_path, authorization, headers as [name, value] pairs), and two added header lines. */
static void echo(void *ctx, const http_req *rq, http_resp *rs) {
    (void)ctx;
    json_t *hs = json_array();
    for (size_t i = 0; i < rq->n_headers; i++)
        json_array_append_new(hs, json_pack("[s, s]", rq->headers[i].name, rq->headers[i].value));
    const char *xa = http_header_get(rq, "x-amz-date");
    json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:o}", "path", rq->path, "raw_path", rq->raw_path, "authorization",
                          rq->authorization ? json_string(rq->authorization) : json_null(), "x_amz_date",
                          xa ? json_string(xa) : json_null(), "headers", hs);
    http_json(rs, 200, j);
    http_resp_header(rs, "x-amzn-RequestId", "0123");
    http_resp_header(rs, "x-amzn-ErrorType", "NoneException");
    /* refused: a header line may not be smuggled in */
    if (http_resp_header(rs, "X-Bad", "a\r\nInjected: yes")) rs->status = 500;
}

static http_server *server;

static void on_done(uv_async_t *a) {
    http_close(server);
    uv_close((uv_handle_t *)a, NULL);
}

static void run(exchange *ex, int nex) {
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    http_opts opts = {.name = "test", .max_body = 1024, .max_clients = 8, .timeout_ms = 10000};
    char err[256];
    if (http_start(&loop, "127.0.0.1", 0, &opts, echo, NULL, &server, err, sizeof err) != 0) fail_msg("start: %s", err);
    uv_async_t done;
    uv_async_init(&loop, &done, on_done);
    job j = {.ex = ex, .nex = nex, .port = http_port(server), .done = &done};
    uv_thread_t th;
    assert_int_equal(uv_thread_create(&th, client_main, &j), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_thread_join(&th);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static json_t *body_of(const exchange *e) {
    if (strncmp(e->response, "HTTP/1.1 200 OK\r\n", 17) != 0) fail_msg("not 200:\n%s", e->response);
    const char *b = strstr(e->response, "\r\n\r\n");
    assert_non_null(b);
    json_t *j = json_loads(b + 4, 0, NULL);
    if (!j) fail_msg("body is not JSON: %s", e->response);
    return j;
}

static void assert_header_pair(json_t *hs, size_t i, const char *name, const char *value) {
    json_t *p = json_array_get(hs, i);
    if (!p || strcmp(json_string_value(json_array_get(p, 0)), name) || strcmp(json_string_value(json_array_get(p, 1)), value))
        fail_msg("header %zu: got %s, want [%s, %s]", i, p ? json_dumps(p, 0) : "none", name, value);
}

static void test_headers(void **state) {
    (void)state;
    static char many[8000];
    int n = snprintf(many, sizeof many, "GET / HTTP/1.1\r\n");
    for (int i = 0; i <= HTTP_MAX_HEADERS; i++) n += snprintf(many + n, sizeof many - (size_t)n, "X-H%d: %d\r\n", i, i);
    snprintf(many + n, sizeof many - (size_t)n, "\r\n");
    static char exactly[8000];
    n = snprintf(exactly, sizeof exactly, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < HTTP_MAX_HEADERS; i++) n += snprintf(exactly + n, sizeof exactly - (size_t)n, "X-H%d: %d\r\n", i, i);
    snprintf(exactly + n, sizeof exactly - (size_t)n, "\r\n");
    static exchange ex[] = {
        /* 0: what botocore sends for a rest-json GET: an encoded ARN in the path */
        {.request = "GET /api/v2/clusters/arn%3Aaws%3Akafka%3Aus-east-1%3A1%3Acluster%2Fc%2Fu-s1 HTTP/1.1\r\n"
                    "Host: 127.0.0.1:9081\r\nX-Amz-Date: 20261206T100000Z\r\n"
                    "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261206/us-east-1/kafka/aws4_request, "
                    "SignedHeaders=host;x-amz-date, Signature=00\r\nX-Empty:\r\nX-Spaces:   a  b  \r\n"
                    "x-amz-date: 20261206T100001Z\r\n\r\n"},
        /* 1: the same fields one byte at a time */
        {.request = "GET /a%2Fb HTTP/1.1\r\nHOST: h\r\nX-Long-Name-Of-A-Header: v1\r\nX-Empty:\r\nX-Last: z\r\n\r\n",
         .byte_by_byte = true},
        /* 2: HTTP_MAX_HEADERS + 1 fields */
        {.request = many},
        /* 3: exactly HTTP_MAX_HEADERS fields */
        {.request = exactly},
        /* 4: no header at all */
        {.request = "GET /x HTTP/1.0\r\n\r\n"},
    };
    run(ex, sizeof ex / sizeof ex[0]);

    json_t *j = body_of(&ex[0]);
    assert_string_equal(json_string_value(json_object_get(j, "path")), "/api/v2/clusters/arn:aws:kafka:us-east-1:1:cluster/c/u-s1");
    assert_string_equal(json_string_value(json_object_get(j, "raw_path")),
                        "/api/v2/clusters/arn%3Aaws%3Akafka%3Aus-east-1%3A1%3Acluster%2Fc%2Fu-s1");
    assert_non_null(strstr(json_string_value(json_object_get(j, "authorization")), "Credential=AKID/"));
    assert_string_equal(json_string_value(json_object_get(j, "x_amz_date")), "20261206T100000Z"); /* the first */
    json_t *hs = json_object_get(j, "headers");
    assert_int_equal(json_array_size(hs), 6);
    assert_header_pair(hs, 0, "host", "127.0.0.1:9081");
    assert_header_pair(hs, 1, "x-amz-date", "20261206T100000Z");
    assert_header_pair(hs, 3, "x-empty", "");
    assert_non_null(strstr(json_string_value(json_array_get(json_array_get(hs, 4), 1)), "a  b")); /* inner blanks kept */
    assert_header_pair(hs, 5, "x-amz-date", "20261206T100001Z");
    json_decref(j);
    /* the handler's lines, in the head; the smuggling attempt refused */
    const char *end = strstr(ex[0].response, "\r\n\r\n");
    const char *rid = strstr(ex[0].response, "\r\nx-amzn-RequestId: 0123\r\n");
    const char *et = strstr(ex[0].response, "\r\nx-amzn-ErrorType: NoneException\r\n");
    assert_true(rid && et && rid < end && et < end);
    assert_null(strstr(ex[0].response, "Injected"));

    j = body_of(&ex[1]);
    assert_string_equal(json_string_value(json_object_get(j, "raw_path")), "/a%2Fb");
    assert_string_equal(json_string_value(json_object_get(j, "path")), "/a/b");
    assert_true(json_is_null(json_object_get(j, "authorization")));
    hs = json_object_get(j, "headers");
    assert_int_equal(json_array_size(hs), 4);
    assert_header_pair(hs, 0, "host", "h");
    assert_header_pair(hs, 1, "x-long-name-of-a-header", "v1");
    assert_header_pair(hs, 2, "x-empty", "");
    assert_header_pair(hs, 3, "x-last", "z");
    json_decref(j);

    if (strncmp(ex[2].response, "HTTP/1.1 431 ", 13) != 0) fail_msg("65 fields: %s", ex[2].response);
    assert_non_null(strstr(ex[2].response, "more than 64 header fields"));
    j = body_of(&ex[3]);
    assert_int_equal(json_array_size(json_object_get(j, "headers")), HTTP_MAX_HEADERS);
    assert_header_pair(json_object_get(j, "headers"), HTTP_MAX_HEADERS - 1, "x-h63", "63");
    json_decref(j);
    j = body_of(&ex[4]);
    assert_int_equal(json_array_size(json_object_get(j, "headers")), 0);
    json_decref(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
