/*
 * http: the one small HTTP/1.1 server of the broker, on its libuv loop: the container-credentials
 * endpoint (iam/cred_endpoint.c) and the admin API (admin/) are both routes on it.
 *
 * Parsing is the http-parser library's (Debian's libhttp-parser, Node's former parser): request
 * line, headers, Content-Length and chunked bodies. This module owns the sockets, the limits
 * and the response framing; a route handler gets a whole request and fills one response,
 * synchronously, on the loop: it may read and change any broker state, as a Kafka handler does.
 * A handler sees every header field (the AWS APIs verify SigV4 over them) and may add its own
 * response header lines (x-amzn-RequestId, x-amzn-ErrorType).
 *
 * Every response carries Connection: close; after writing it the server shuts its side down and
 * reads (discarding) until the client's EOF before closing, so the response is never cut by a
 * reset. Limits: HTTP_MAX_HEAD bytes of request line and headers, HTTP_MAX_HEADERS header fields
 * (431 either way), opts.max_body bytes of
 * body (413), opts.max_clients connections (past it the oldest connection without a whole request
 * is closed to make room, a peer address holds at most a quarter of the slots with unfinished
 * requests, and past twice opts.max_clients a new connection is closed at once: see http.c),
 * opts.timeout_ms for a connection's whole life (a slow or idle client is closed; 408 when it had
 * started a request). More than one Authorization header is refused (400); an error message is
 * made UTF-8 (stray bytes of a quoted path become '?') so it is never a 500.
 * One log line per request: peer, method, path (without the query, which may be private),
 * status and the handler's detail.
 *
 * HTTPS: with opts.tls set, every connection is TLS (net/tls.h's engine on memory buffers, this
 * module doing the socket I/O, as net/ does for the IAM listeners) with the certificate of that
 * context. The handshake counts in opts.timeout_ms and a connection in opts.max_clients; a failed
 * handshake is closed with a log line saying why (the client distrusting the CA, no shared
 * version or cipher), and a plaintext HTTP request is answered 400 in plaintext, as nginx does
 * ("The plain HTTP request was sent to HTTPS port"), so curl or a mistyped endpoint URL shows the
 * reason rather than an empty reply. The response ends with TLS close_notify, then the TCP FIN.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#define HTTP_MAX_HEAD 8192
#define HTTP_MAX_HEADERS 64 /* more header fields in one request: 431 */

typedef struct http_server http_server;
struct tls_ctx; /* net/tls.h */

/* One request header field: the name lower-cased, the value as sent (leading blanks dropped by the parser). */
typedef struct http_header {
    const char *name;
    const char *value;
} http_header;

typedef struct http_req {
    const char *method;        /* "GET", "POST", ... */
    const char *path;          /* percent-decoded path, without query; never NULL */
    const char *raw_path;      /* the path as sent, still percent-encoded (what SigV4 signs) */
    const char *query;         /* raw query string after '?', or NULL */
    const char *body;          /* NUL-terminated (the body may hold NULs: use body_len) */
    size_t body_len;
    const char *authorization; /* the Authorization header, or NULL */
    const http_header *headers; /* every header field, in the order sent (repeated names repeat) */
    size_t n_headers;
    const char *peer;          /* "host:port" */
    bool secure;               /* arrived over TLS (opts.tls): what IAM's aws:SecureTransport tells */
} http_req;

typedef struct http_resp {
    int status;                /* 200 unless the handler sets another */
    const char *content_type;  /* default "application/json" */
    char *body;                /* malloc'd; the server frees it */
    size_t len;
    char allow[64];            /* Allow header of a 405 ("GET, POST") */
    char headers[512];         /* extra header lines, "Name: value\r\n" each (http_resp_header) */
    bool quiet;                /* log the request at debug, not info (health checks, scrapes) */
    char detail[512];          /* appended to the request's log line */
} http_resp;

typedef void (*http_handler)(void *ctx, const http_req *rq, http_resp *rs);

typedef struct http_opts {
    const char *name;          /* log prefix: "cred", "admin" */
    const char *port_key;      /* the config key of its port, named when the port is taken */
    size_t max_body;           /* 0: a request with a body is refused (413) */
    int max_clients;
    int timeout_ms;
    struct tls_ctx *tls;       /* HTTPS with this context's certificate; NULL: plain HTTP. Kept until http_close
                                * (each new connection takes its SSL from it; a live one keeps what it needs) */
} http_opts;

/*
 * Listen on bind_address:port (IPv4 or IPv6 literal; 0 picks a free port, see http_port) and
 * serve every request with fn(ctx, ...). 0, or -1 with a reason in err.
 */
int http_start(uv_loop_t *loop, const char *bind_address, int port, const http_opts *opts, http_handler fn, void *ctx,
               http_server **out, char *err, size_t n);
int http_port(const http_server *h);
/* Stop listening and close every client; memory goes with the close callbacks. NULL is allowed. */
void http_close(http_server *h);

/* ---- helpers for handlers ---- */
/* The body of rs becomes j's compact text (j is released). */
void http_json(http_resp *rs, int status, void *j /* json_t* */);
/* A JSON error {"code": code, "message": message} with status; the message goes to the log too. */
void http_error(http_resp *rs, int status, const char *code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The first value of a request header (name in lower case), or NULL. */
const char *http_header_get(const http_req *rq, const char *name);
/* Adds "name: value" to the response's headers; false (nothing added) when it would not fit or holds CR/LF. */
bool http_resp_header(http_resp *rs, const char *name, const char *value);
/* The value of name in a query string (percent-decoded, '+' as space) into out; false if absent. */
bool http_query_get(const char *query, const char *name, char *out, size_t cap);
/*
 * Every value of name in a query string, in order (a list: ?k=a&k=b), each percent-decoded and
 * given to fn until it returns false. The values live only during the call.
 */
void http_query_each(const char *query, const char *name, bool (*fn)(void *ctx, const char *value), void *ctx);

#endif
