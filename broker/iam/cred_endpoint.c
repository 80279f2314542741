/*
 * cred_endpoint: container-credentials HTTP endpoint; see cred_endpoint.h.
 *
 * A connection lives through three steps: it reads the request head into a fixed buffer
 * until the blank line; it answers (one uv_write, then uv_shutdown so the client sees the
 * end of the response); it keeps reading and discarding until the client's EOF before
 * closing, because closing a socket with unread input would send a reset that can destroy
 * the response in flight. A sweep timer closes whoever overstays CRED_CLIENT_TIMEOUT_MS.
 */
#include "cred_endpoint.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "iam_token.h"
#include "log.h"
#include "net/net.h"

#define SWEEP_MS 250
#define MAX_NAME 128

typedef struct cred_client cred_client;

struct cred_endpoint {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t sweep;
    iam_store *st;
    cred_client *clients;
    int nclients;
    int open_handles; /* listener, sweep timer and clients not yet closed */
    bool closed;
    int port;
};

struct cred_client {
    uv_tcp_t tcp;
    uv_write_t wr;
    uv_shutdown_t sd;
    cred_endpoint *ep;
    cred_client *prev, *next;
    int64_t deadline_ms; /* clk_mono_ms */
    bool responded, shut, peer_eof, closing;
    char *out;
    size_t len;
    char peer[64];
    char buf[CRED_MAX_REQUEST];
};

/* ---- lifetime -------------------------------------------------------------------------- */

static void handle_closed(cred_endpoint *ep) {
    if (--ep->open_handles == 0 && ep->closed) free(ep);
}

static void on_ep_handle_close(uv_handle_t *h) { handle_closed(h->data); }

static void on_client_close(uv_handle_t *h) {
    cred_client *c = h->data;
    cred_endpoint *ep = c->ep;
    if (c->prev)
        c->prev->next = c->next;
    else
        ep->clients = c->next;
    if (c->next) c->next->prev = c->prev;
    ep->nclients--;
    free(c->out);
    free(c);
    handle_closed(ep);
}

static void client_close(cred_client *c) {
    if (c->closing) return;
    c->closing = true;
    uv_close((uv_handle_t *)&c->tcp, on_client_close);
}

/* ---- text helpers ---------------------------------------------------------------------- */

/* A client-supplied value made safe for a log line: printable ASCII, at most 128 characters. */
typedef struct {
    char s[136];
} qstr;

static qstr q(const char *v, size_t len) {
    qstr o;
    size_t n = 0, i = 0;
    for (; i < len && n < 128; i++) {
        unsigned char ch = (unsigned char)v[i];
        o.s[n++] = (ch > 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (i < len) {
        memcpy(o.s + n, "...", 3);
        n += 3;
    }
    o.s[n] = '\0';
    return o;
}

static bool is_tchar(unsigned char ch) {
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..len) into out (cap bytes with the NUL); -1 when malformed or too long. */
static int pct_decode(const char *s, size_t len, char *out, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int ch = (unsigned char)s[i];
        if (ch == '%') {
            if (i + 2 >= len) return -1;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            ch = hi * 16 + lo;
            i += 2;
        }
        if (ch == 0 || n + 1 >= cap) return -1;
        out[n++] = (char)ch;
    }
    out[n] = '\0';
    return 0;
}

/* ---- responses ------------------------------------------------------------------------- */

typedef struct request {
    const char *method, *target; /* into the client buffer, not NUL-terminated */
    size_t method_len, target_len;
    size_t path_len;             /* target up to '?' or '#' */
    char role[MAX_NAME];         /* decoded role name when the path names one */
} request;

static const char *reason_phrase(int status) {
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    default: return "Internal Server Error";
    }
}

/* Queues the response, then the shutdown; the connection closes at the client's EOF. */
static void on_shutdown(uv_shutdown_t *sd, int status);
static void on_write(uv_write_t *wr, int status);

static void respond(cred_client *c, int status, json_t *body) {
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) {
        status = 500;
        text = strdup("{\"code\":\"InternalError\",\"message\":\"out of memory\"}");
        if (!text) {
            client_close(c);
            return;
        }
    }
    size_t blen = strlen(text), cap = blen + 320;
    c->out = malloc(cap);
    if (!c->out) {
        free(text);
        client_close(c);
        return;
    }
    int hl = snprintf(c->out, cap,
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                      "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
                      status, reason_phrase(status), blen, status == 405 ? "Allow: GET\r\n" : "");
    memcpy(c->out + hl, text, blen);
    free(text);
    c->responded = true;
    uv_buf_t b = uv_buf_init(c->out, (unsigned)((size_t)hl + blen));
    c->wr.data = c->sd.data = c;
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0 ||
        uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        client_close(c);
}

static json_t *error_body(const char *code, const char *message) {
    return json_pack("{s:s, s:s}", "code", code, "message", message);
}

static void respond_error(cred_client *c, int status, const char *code, const char *message, const request *r,
                          const char *detail) {
    log_info("cred: peer=%s %s %s %d %s", c->peer, r && r->method ? q(r->method, r->method_len).s : "-",
             r && r->target ? q(r->target, r->path_len).s : "-", status, detail ? detail : message);
    respond(c, status, error_body(code, message));
}

static void serve_role(cred_client *c, const request *r) {
    const iam_store *st = c->ep->st;
    const iam_cred *cr = iam_store_current(st, r->role);
    const char *arn = iam_store_role_arn(st, r->role);
    if (!cr || !arn) {
        char msg[512];
        size_t l = (size_t)snprintf(msg, sizeof msg, "no role '%s' in iam.identities.file (roles:",
                                      q(r->role, strlen(r->role)).s);
        size_t nroles = iam_store_role_count(st);
        for (size_t i = 0; i < nroles && l < sizeof msg; i++)
            l += (size_t)snprintf(msg + l, sizeof msg - l, "%s %s", i ? "," : "", iam_store_role_name(st, i));
        if (l < sizeof msg) snprintf(msg + l, sizeof msg - l, "%s)", nroles ? "" : " none");
        char detail[200];
        snprintf(detail, sizeof detail, "role=%s unknown", q(r->role, strlen(r->role)).s);
        respond_error(c, 404, "NotFound", msg, r, detail);
        return;
    }
    int64_t now = clk_now_ms();
    /* Issued role credentials always expire; an SDK needs an Expiration in any case. */
    int64_t expiry = cr->expiry_ms >= 0 ? cr->expiry_ms : now + 86400000;
    char when[32];
    iam_format_time(expiry, when);
    /* arn:<partition>:iam::<account>:role/... : the account is the fifth field */
    char account[64] = "";
    const char *p = arn;
    for (int i = 0; i < 4 && p; i++) p = strchr(p, ':'), p = p ? p + 1 : NULL;
    if (p) {
        const char *e = strchr(p, ':');
        size_t al = e ? (size_t)(e - p) : 0;
        if (al < sizeof account) memcpy(account, p, al), account[al] = '\0';
    }
    json_t *body = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "AccessKeyId", cr->access_key_id, "SecretAccessKey",
                             cr->secret_access_key, "Token", cr->session_token ? cr->session_token : "",
                             "Expiration", when, "RoleArn", arn, "AccountId", account);
    log_info("cred: peer=%s %s %s 200 role=%s access_key_id=%s expiration=%s%s", c->peer,
             q(r->method, r->method_len).s, q(r->target, r->path_len).s, r->role, cr->access_key_id, when,
             cr->expiry_ms >= 0 && cr->expiry_ms <= now ? " (already expired: rotation is off or late)" : "");
    respond(c, 200, body);
}

/* ---- request parsing ------------------------------------------------------------------- */

/* The end of the request head (index just past the blank line), or 0 when not there yet. */
static size_t head_end(const char *b, size_t len) {
    for (size_t i = 0; i + 1 < len; i++) {
        if (b[i] != '\n') continue;
        if (b[i + 1] == '\n') return i + 2;
        if (b[i + 1] == '\r' && i + 2 < len && b[i + 2] == '\n') return i + 3;
    }
    return 0;
}

/* Next line of [*p, end): its start and length without CR LF; false at the end. */
static bool next_line(const char **p, const char *end, const char **line, size_t *len) {
    if (*p >= end) return false;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl) return false;
    *line = *p;
    *len = (size_t)(nl - *p);
    if (*len && (*p)[*len - 1] == '\r') (*len)--;
    *p = nl + 1;
    return true;
}

static void handle_request(cred_client *c, size_t end) {
    request r;
    memset(&r, 0, sizeof r);
    const char *p = c->buf, *stop = c->buf + end, *line;
    size_t ll;
    /* Tolerate blank lines before the request line (RFC 9112 §2.2). */
    do {
        if (!next_line(&p, stop, &line, &ll)) {
            respond_error(c, 400, "BadRequest", "no request line", NULL, NULL);
            return;
        }
    } while (ll == 0);

    /* request-line = method SP request-target SP HTTP-version */
    const char *sp1 = memchr(line, ' ', ll);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', ll - (size_t)(sp1 + 1 - line)) : NULL;
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 || memchr(sp2 + 1, ' ', ll - (size_t)(sp2 + 1 - line))) {
        respond_error(c, 400, "BadRequest", "malformed request line (expected: METHOD target HTTP/1.1)", NULL, NULL);
        return;
    }
    r.method = line;
    r.method_len = (size_t)(sp1 - line);
    r.target = sp1 + 1;
    r.target_len = (size_t)(sp2 - r.target);
    const char *ver = sp2 + 1;
    size_t vl = ll - (size_t)(ver - line);
    for (size_t i = 0; i < r.method_len; i++)
        if (!is_tchar((unsigned char)r.method[i])) {
            respond_error(c, 400, "BadRequest", "malformed method", NULL, NULL);
            return;
        }
    for (size_t i = 0; i < r.target_len; i++)
        if ((unsigned char)r.target[i] <= 0x20 || (unsigned char)r.target[i] >= 0x7f) {
            respond_error(c, 400, "BadRequest", "request target holds a control or non-ASCII character", NULL, NULL);
            return;
        }
    r.path_len = r.target_len; /* what is logged: the query string might hold something private */
    for (size_t i = 0; i < r.target_len; i++)
        if (r.target[i] == '?' || r.target[i] == '#') {
            r.path_len = i;
            break;
        }
    if (vl != 8 || (memcmp(ver, "HTTP/1.1", 8) != 0 && memcmp(ver, "HTTP/1.0", 8) != 0)) {
        respond_error(c, 400, "BadRequest", "not HTTP/1.0 or HTTP/1.1", &r, NULL);
        return;
    }

    /* header-field = field-name ":" OWS field-value OWS; no obsolete line folding */
    while (next_line(&p, stop, &line, &ll) && ll) {
        const char *colon = memchr(line, ':', ll);
        bool ok = colon && colon > line;
        for (const char *h = line; ok && h < colon; h++) ok = is_tchar((unsigned char)*h);
        for (const char *h = colon ? colon + 1 : line; ok && h < line + ll; h++)
            ok = (unsigned char)*h >= 0x20 ? (unsigned char)*h != 0x7f : *h == '\t';
        if (!ok) {
            respond_error(c, 400, "BadRequest", "malformed header line", &r, NULL);
            return;
        }
    }

    if (r.method_len != 3 || memcmp(r.method, "GET", 3) != 0) {
        respond_error(c, 405, "MethodNotAllowed", "only GET is served", &r, NULL);
        return;
    }
    /* absolute-form (http://host/path) is allowed by RFC 9112 §3.2.2 */
    const char *path = r.target;
    size_t pl = r.path_len;
    if (pl >= 7 && strncmp(path, "http://", 7) == 0) {
        const char *slash = memchr(path + 7, '/', pl - 7);
        pl = slash ? pl - (size_t)(slash - path) : 0;
        path = slash ? slash : path + r.path_len;
    }
    if (pl == 0 || path[0] != '/') {
        respond_error(c, 400, "BadRequest", "request target is not a path", &r, NULL);
        return;
    }
    static const char *const prefixes[] = {"/role/", "/v2/credentials/"};
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(prefixes[i]);
        if (pl <= n || strncmp(path, prefixes[i], n) != 0) continue;
        if (pct_decode(path + n, pl - n, r.role, sizeof r.role) != 0) {
            respond_error(c, 400, "BadRequest", "malformed percent-encoding in the role name, or a name too long",
                          &r, NULL);
            return;
        }
        if (strchr(r.role, '/')) break;
        serve_role(c, &r);
        return;
    }
    respond_error(c, 404, "NotFound", "no such path; credentials are at /role/<role name>", &r, NULL);
}

/* ---- I/O ------------------------------------------------------------------------------- */

static void maybe_finish(cred_client *c) {
    if (c->responded && c->shut && c->peer_eof) client_close(c);
}

static void on_write(uv_write_t *wr, int status) {
    cred_client *c = wr->data;
    if (status < 0) client_close(c);
}

static void on_shutdown(uv_shutdown_t *sd, int status) {
    cred_client *c = sd->data;
    if (status < 0) {
        client_close(c);
        return;
    }
    c->shut = true;
    maybe_finish(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
    (void)suggested;
    cred_client *c = h->data;
    if (c->responded) {
        /* after the answer everything read is discarded: reuse the whole buffer */
        *b = uv_buf_init(c->buf, sizeof c->buf);
        return;
    }
    *b = uv_buf_init(c->buf + c->len, (unsigned)(sizeof c->buf - c->len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b) {
    (void)b;
    cred_client *c = s->data;
    if (c->closing) return;
    if (nread < 0) {
        if (nread != UV_EOF || !c->responded) {
            /* Nothing answered yet: a probe that only connects, or a half-sent request. */
            if (nread == UV_EOF && c->len)
                log_info("cred: peer=%s closed after %zu bytes of an unfinished request", c->peer, c->len);
            client_close(c);
            return;
        }
        c->peer_eof = true;
        uv_read_stop(s);
        maybe_finish(c);
        return;
    }
    if (c->responded || nread == 0) return;
    size_t from = c->len >= 3 ? c->len - 3 : 0;
    c->len += (size_t)nread;
    size_t end = head_end(c->buf + from, c->len - from);
    if (end) {
        handle_request(c, from + end);
        return;
    }
    if (memchr(c->buf + c->len - (size_t)nread, '\0', (size_t)nread)) {
        respond_error(c, 400, "BadRequest", "NUL byte in the request head", NULL, NULL);
        return;
    }
    if (c->len == sizeof c->buf) {
        char detail[96];
        snprintf(detail, sizeof detail, "request head larger than %d bytes", CRED_MAX_REQUEST);
        respond_error(c, 431, "RequestHeaderFieldsTooLarge", detail, NULL, NULL);
    }
}

static void on_connection(uv_stream_t *server, int status) {
    cred_endpoint *ep = server->data;
    if (status < 0) {
        log_warn("cred: accept failed: %s", uv_strerror(status));
        return;
    }
    cred_client *c = calloc(1, sizeof *c);
    if (!c) {
        log_error("cred: out of memory accepting a connection");
        return;
    }
    uv_tcp_init(ep->loop, &c->tcp);
    c->tcp.data = c;
    c->ep = ep;
    c->next = ep->clients;
    if (ep->clients) ep->clients->prev = c;
    ep->clients = c;
    ep->nclients++;
    ep->open_handles++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        client_close(c);
        return;
    }
    net_peer_name(&c->tcp, c->peer, sizeof c->peer);
    if (ep->nclients > CRED_MAX_CLIENTS) {
        log_warn("cred: peer=%s refused: already %d connections open", c->peer, CRED_MAX_CLIENTS);
        client_close(c);
        return;
    }
    c->deadline_ms = clk_mono_ms() + CRED_CLIENT_TIMEOUT_MS;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) client_close(c);
}

static void on_sweep(uv_timer_t *t) {
    cred_endpoint *ep = t->data;
    int64_t now = clk_mono_ms();
    for (cred_client *c = ep->clients; c; c = c->next) {
        if (c->closing || now < c->deadline_ms) continue;
        if (!c->responded)
            log_info("cred: peer=%s closed: no complete request within %d ms (%zu bytes received)", c->peer,
                     CRED_CLIENT_TIMEOUT_MS, c->len);
        client_close(c); /* unlinks in its close callback: iteration stays valid */
    }
}

/* ---- API ------------------------------------------------------------------------------- */

int cred_endpoint_start(uv_loop_t *loop, const char *bind_address, int port, iam_store *st, cred_endpoint **out,
                        char *err, size_t n) {
    *out = NULL;
    if (port < 0 || port > 65535) {
        snprintf(err, n, "credentials endpoint: port %d out of range", port);
        return -1;
    }
    struct sockaddr_storage addr;
    int rc = strchr(bind_address, ':') ? uv_ip6_addr(bind_address, port, (struct sockaddr_in6 *)&addr)
                                       : uv_ip4_addr(bind_address, port, (struct sockaddr_in *)&addr);
    if (rc != 0) {
        snprintf(err, n, "credentials endpoint: '%s' is not an IP address: %s", bind_address, uv_strerror(rc));
        return -1;
    }
    cred_endpoint *ep = calloc(1, sizeof *ep);
    if (!ep) {
        snprintf(err, n, "credentials endpoint: out of memory");
        return -1;
    }
    ep->loop = loop;
    ep->st = st;
    uv_tcp_init(loop, &ep->listener);
    uv_timer_init(loop, &ep->sweep);
    ep->listener.data = ep->sweep.data = ep;
    ep->open_handles = 2;
    rc = uv_tcp_bind(&ep->listener, (struct sockaddr *)&addr, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&ep->listener, 128, on_connection);
    if (rc != 0) {
        snprintf(err, n, "credentials endpoint: cannot listen on %s:%d: %s", bind_address, port, uv_strerror(rc));
        cred_endpoint_close(ep);
        return -1;
    }
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    ep->port = port;
    if (uv_tcp_getsockname(&ep->listener, (struct sockaddr *)&bound, &blen) == 0)
        ep->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                     : ((struct sockaddr_in *)&bound)->sin_port);
    uv_timer_start(&ep->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
    uv_unref((uv_handle_t *)&ep->sweep);
    log_info("cred: container-credentials endpoint on http://%s%s%s:%d/role/<role name> (%zu roles)",
             strchr(bind_address, ':') ? "[" : "", bind_address, strchr(bind_address, ':') ? "]" : "", ep->port,
             iam_store_role_count(st));
    *out = ep;
    return 0;
}

int cred_endpoint_port(const cred_endpoint *ep) { return ep ? ep->port : 0; }

void cred_endpoint_close(cred_endpoint *ep) {
    if (!ep || ep->closed) return;
    ep->closed = true;
    for (cred_client *c = ep->clients; c; c = c->next) client_close(c);
    uv_close((uv_handle_t *)&ep->listener, on_ep_handle_close);
    uv_close((uv_handle_t *)&ep->sweep, on_ep_handle_close);
}
