/*
 * http: see http.h.
 *
 * A connection lives through three steps: http-parser consumes what arrives until the message is
 * complete (or malformed, or over a limit); the handler's response goes out in one uv_write
 * followed by uv_shutdown; the connection then reads and discards until the client's EOF, because
 * closing a socket with unread input sends a reset that can destroy the response in flight. A
 * sweep timer closes whoever overstays opts.timeout_ms.
 *
 * Over HTTPS (opts.tls) the same steps run on the plaintext net/tls.c's engine yields: what
 * arrives is fed to it, what it decrypts goes to http-parser, and the response is encrypted and
 * followed by close_notify before the shutdown. Everything the engine produces (handshake
 * records, session tickets, alerts, the response) leaves through one queue, in order, each
 * buffer in a write request of its own.
 */
#include "http.h"

#include <http_parser.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "config.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"
#include "net/tls.h"

#define SWEEP_MS 250
#define MAX_TARGET 2048
#define MAX_AUTH 1024
/*
 * Slots. opts.max_clients connections are served at once; a connection over it closes the
 * oldest one that has not sent a whole request (of the peer holding most of those), and a peer
 * holds at most a quarter of the slots with unfinished requests (its oldest makes room for its
 * new one). So connections that never finish their request head (slowloris) cannot keep a
 * quick request, a health probe above all, from being read and answered, even from the same
 * address: the probe sends its request at once and is answered as soon as it is read, before
 * any later connection can push it out. A connection is never closed for room before it could
 * be read once (FRESH_MS); past HARD_FACTOR times opts.max_clients a new one is refused.
 */
#define FRESH_MS 100
#define HARD_FACTOR 2
#define EVICT_LOG_MS 10000

typedef struct client client;

struct http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t sweep;
    http_opts opts;
    char name[16];
    http_handler fn;
    void *ctx;
    client *clients;
    int nclients;
    int nclosing;            /* of nclients, closed and waiting for their close callback */
    int64_t evict_logged_ms; /* clk_mono_ms of the last "closed to make room" warning */
    uint64_t evicted;        /* connections closed to make room since that warning */
    int open_handles; /* listener, sweep timer and clients not yet closed */
    bool closed;
    int port;
};

struct client {
    uv_tcp_t tcp;
    uv_write_t wr;
    uv_shutdown_t sd;
    http_server *h;
    client *prev, *next;
    http_parser parser;
    int64_t deadline_ms; /* clk_mono_ms */
    int64_t opened_ms;   /* clk_mono_ms */
    bool responded, shut, peer_eof, closing, complete;
    bool read_any;       /* some bytes (plaintext or TLS) arrived: it had its chance to be read */
    size_t received;
    char peer[64];
    char addr[64];       /* peer without the port: what the per-peer bound counts */
    char target[MAX_TARGET + 1];
    size_t target_len;
    bool target_long;
    /* header fields as NUL-terminated names (lower case) and values, back to back in hbuf */
    char hbuf[HTTP_MAX_HEAD + 2 * HTTP_MAX_HEADERS + 2];
    size_t hlen;
    uint16_t hname[HTTP_MAX_HEADERS], hvalue[HTTP_MAX_HEADERS];
    int nheaders;
    bool in_value; /* the value of the last header is being read */
    char *body;
    size_t body_len, body_cap;
    int refuse;          /* a limit hit while parsing: the status to answer */
    char *out;
    tls_conn *tls;       /* HTTPS: the connection's engine; NULL on plain HTTP */
    uint8_t first[4];    /* HTTPS: the connection's first bytes, to answer a plaintext request in plaintext */
    size_t nfirst;
    char rbuf[4096];
};

/* One buffer of ciphertext on its way out (HTTPS); freed by its callback. */
typedef struct tls_write {
    uv_write_t w;
    client *c;
    uint8_t *buf;
} tls_write;

/* ---- lifetime -------------------------------------------------------------------------- */

static void handle_closed(http_server *h) {
    if (--h->open_handles == 0 && h->closed) free(h);
}

static void on_server_handle_close(uv_handle_t *hd) { handle_closed(hd->data); }

static void on_client_close(uv_handle_t *hd) {
    client *c = hd->data;
    http_server *h = c->h;
    if (c->prev)
        c->prev->next = c->next;
    else
        h->clients = c->next;
    if (c->next) c->next->prev = c->prev;
    h->nclients--;
    h->nclosing--;
    /* the sweep runs only while a client is connected: an idle broker is not woken 4 times a second */
    if (!h->nclients && !h->closed) uv_timer_stop(&h->sweep);
    free(c->out);
    free(c->body);
    tls_conn_free(c->tls);
    free(c);
    handle_closed(h);
}

static void client_close(client *c) {
    if (c->closing) return;
    c->closing = true;
    c->h->nclosing++;
    uv_close((uv_handle_t *)&c->tcp, on_client_close);
}

/* ---- helpers --------------------------------------------------------------------------- */

/* A client-supplied value made safe for a log line: printable ASCII, at most 128 characters. */
typedef struct {
    char s[136];
} qstr;

static qstr q(const char *v) {
    qstr o;
    size_t n = 0, i = 0, len = strlen(v);
    for (; i < len && n < 128; i++) {
        unsigned char ch = (unsigned char)v[i];
        o.s[n++] = (ch > 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (i < len) memcpy(o.s + n, "...", 3), n += 3;
    o.s[n] = '\0';
    return o;
}

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..len) into out (cap with the NUL); '+' is a space when plus. -1: malformed, NUL or too long. */
static int pct_decode(const char *s, size_t len, char *out, size_t cap, bool plus) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int ch = (unsigned char)s[i];
        if (ch == '%') {
            if (i + 2 >= len) return -1;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            ch = hi * 16 + lo;
            i += 2;
        } else if (ch == '+' && plus) {
            ch = ' ';
        }
        if (ch == 0 || n + 1 >= cap) return -1;
        out[n++] = (char)ch;
    }
    out[n] = '\0';
    return 0;
}

bool http_query_get(const char *query, const char *name, char *out, size_t cap) {
    if (!query) return false;
    size_t nl = strlen(name);
    for (const char *p = query; *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t kl = eq ? (size_t)(eq - p) : len;
        if (kl == nl && !memcmp(p, name, nl)) {
            if (!eq) {
                if (cap) out[0] = '\0';
                return true;
            }
            return pct_decode(eq + 1, len - kl - 1, out, cap, true) == 0;
        }
        p += len + (amp ? 1 : 0);
    }
    return false;
}

void http_query_each(const char *query, const char *name, bool (*fn)(void *ctx, const char *value), void *ctx) {
    size_t nl = strlen(name);
    char value[HTTP_MAX_HEAD + 1]; /* a decoded value is never longer than the request target */
    for (const char *p = query ? query : ""; *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t kl = eq ? (size_t)(eq - p) : len;
        if (kl == nl && !memcmp(p, name, nl)) {
            if (!eq) value[0] = '\0';
            if ((!eq || pct_decode(eq + 1, len - kl - 1, value, sizeof value, true) == 0) && !fn(ctx, value)) return;
        }
        p += len + (amp ? 1 : 0);
    }
}

static const char *reason_phrase(int status) {
    const char *s = http_status_str((enum http_status)status);
    return s && *s && strcmp(s, "<unknown>") ? s : "Unknown";
}

void http_json(http_resp *rs, int status, void *j) {
    free(rs->body);
    rs->body = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL; /* 0.3, not 0.29999999999999999 */
    json_decref(j);
    rs->status = status;
    rs->len = rs->body ? strlen(rs->body) : 0;
    if (!rs->body) {
        rs->status = 500;
        rs->body = xstrdup("{\"code\":\"InternalError\",\"message\":\"out of memory\"}");
        rs->len = strlen(rs->body);
    }
}

/*
 * Replaces each byte that does not belong to a well-formed UTF-8 sequence (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF) with '?'. jansson refuses a string that is not
 * UTF-8, so a message quoting a client's path or name (percent-decoded: any bytes) would make
 * the whole error answer a 500 instead of the 404 or 400 it is.
 */
static void utf8_clean(char *s) {
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        unsigned char b = *p;
        size_t n = b < 0x80 ? 1 : (b >= 0xc2 && b <= 0xdf) ? 2 : (b >= 0xe0 && b <= 0xef) ? 3 : (b >= 0xf0 && b <= 0xf4) ? 4 : 0;
        bool ok = n > 0;
        for (size_t i = 1; ok && i < n; i++) ok = (p[i] & 0xc0) == 0x80; /* a NUL ends the loop too */
        if (ok && n == 3) ok = !(b == 0xe0 && p[1] < 0xa0) && !(b == 0xed && p[1] >= 0xa0);
        if (ok && n == 4) ok = !(b == 0xf0 && p[1] < 0x90) && !(b == 0xf4 && p[1] >= 0x90);
        if (!ok) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

void http_error(http_resp *rs, int status, const char *code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_clean(msg); /* vsnprintf may also have cut a sequence at the end */
    http_json(rs, status, json_pack("{s:s, s:s}", "code", code, "message", msg));
    /* messages may quote what the client sent: the log gets it printable and bounded */
    size_t i = 0;
    for (; msg[i] && i < sizeof rs->detail - 1; i++)
        rs->detail[i] = (unsigned char)msg[i] >= 0x20 && (unsigned char)msg[i] < 0x7f ? msg[i] : '?';
    rs->detail[i] = '\0';
}

/* ---- responding ------------------------------------------------------------------------ */

static void on_write(uv_write_t *wr, int status) {
    client *c = wr->data;
    if (status < 0) client_close(c);
}

/* a write cancelled by the close (UV_ECANCELED) comes back before the client's close callback: c is still there */
static void on_tls_write(uv_write_t *w, int status) {
    tls_write *tw = (tls_write *)w;
    client *c = tw->c;
    free(tw->buf);
    free(tw);
    if (status < 0) client_close(c);
}

/* Sends what the TLS engine has produced; false when the connection was closed. */
static bool send_tls_output(client *c) {
    size_t len = 0;
    uint8_t *out = tls_conn_take_all(c->tls, &len);
    if (!out) return true;
    tls_write *tw = xmalloc(sizeof *tw);
    tw->c = c;
    tw->buf = out;
    uv_buf_t b = uv_buf_init((char *)out, (unsigned)len);
    if (uv_write(&tw->w, (uv_stream_t *)&c->tcp, &b, 1, on_tls_write) != 0) {
        free(out);
        free(tw);
        client_close(c);
        return false;
    }
    return true;
}

static void maybe_finish(client *c) {
    if (c->responded && c->shut && c->peer_eof) client_close(c);
}

static void on_shutdown(uv_shutdown_t *sd, int status) {
    client *c = sd->data;
    if (status < 0) {
        client_close(c);
        return;
    }
    c->shut = true;
    maybe_finish(c);
}

static void send_resp(client *c, const char *method, const char *path, http_resp *rs) {
    if (c->responded) {
        free(rs->body);
        return;
    }
    c->responded = true;
    const char *ctype = rs->content_type ? rs->content_type : "application/json";
    size_t cap = rs->len + 400;
    size_t extra = strlen(rs->headers);
    cap += extra;
    c->out = xmalloc(cap);
    char allow[80] = "";
    if (rs->allow[0]) snprintf(allow, sizeof allow, "Allow: %s\r\n", rs->allow);
    int hl = snprintf(c->out, cap,
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                      "%s%s%sConnection: close\r\n\r\n",
                      rs->status, reason_phrase(rs->status), ctype, rs->len, allow,
                      rs->status == 401 ? "WWW-Authenticate: Bearer\r\n" : "", rs->headers);
    if (rs->len) memcpy(c->out + hl, rs->body, rs->len);
    free(rs->body);
    rs->body = NULL;
    log_level level = rs->quiet && rs->status < 400 ? LOG_DEBUG : LOG_INFO;
    if (log_threshold >= (log_level)level)
        log_write(level, "%s: peer=%s %s %s %d%s%s", c->h->name, c->peer, method ? q(method).s : "-",
                     path ? q(path).s : "-", rs->status, rs->detail[0] ? " " : "", rs->detail);
    c->wr.data = c->sd.data = c;
    if (c->tls) {
        /* close_notify before the FIN: the end of the response is the end of the TLS stream too */
        if (tls_conn_write(c->tls, (const uint8_t *)c->out, (size_t)hl + rs->len) != 0 || tls_conn_shutdown(c->tls) != 0) {
            log_warn("%s: peer=%s TLS failed while writing the response: %s", c->h->name, c->peer, tls_conn_error(c->tls));
            client_close(c);
            return;
        }
        free(c->out);
        c->out = NULL;
        if (send_tls_output(c) && uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) != 0) client_close(c);
        return;
    }
    uv_buf_t b = uv_buf_init(c->out, (unsigned)((size_t)hl + rs->len));
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0 ||
        uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        client_close(c);
}

const char *http_header_get(const http_req *rq, const char *name) {
    for (size_t i = 0; i < rq->n_headers; i++)
        if (!strcmp(rq->headers[i].name, name)) return rq->headers[i].value;
    return NULL;
}

bool http_resp_header(http_resp *rs, const char *name, const char *value) {
    if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n")) return false;
    size_t used = strlen(rs->headers), need = strlen(name) + 2 + strlen(value) + 2;
    if (used + need >= sizeof rs->headers) return false;
    snprintf(rs->headers + used, sizeof rs->headers - used, "%s: %s\r\n", name, value);
    return true;
}

static void refuse(client *c, int status, const char *code, const char *msg) {
    http_resp rs = {.status = status};
    http_error(&rs, status, code, "%s", msg);
    send_resp(c, NULL, NULL, &rs);
}

/* The whole request is in: route it. */
static void dispatch(client *c) {
    struct http_parser_url u;
    http_parser_url_init(&u);
    char path[MAX_TARGET + 1], query[MAX_TARGET + 1];
    const char *method = http_method_str((enum http_method)c->parser.method);
    if (http_parser_parse_url(c->target, c->target_len, 0, &u) != 0 || !(u.field_set & (1 << UF_PATH))) {
        refuse(c, 400, "BadRequest", "the request target is not a path");
        return;
    }
    const char *raw = c->target + u.field_data[UF_PATH].off;
    if (pct_decode(raw, u.field_data[UF_PATH].len, path, sizeof path, false) != 0) {
        refuse(c, 400, "BadRequest", "malformed percent-encoding in the path");
        return;
    }
    bool has_query = u.field_set & (1 << UF_QUERY);
    if (has_query) {
        memcpy(query, c->target + u.field_data[UF_QUERY].off, u.field_data[UF_QUERY].len);
        query[u.field_data[UF_QUERY].len] = '\0';
    }
    char raw_path[MAX_TARGET + 1];
    memcpy(raw_path, raw, u.field_data[UF_PATH].len);
    raw_path[u.field_data[UF_PATH].len] = '\0';
    http_header headers[HTTP_MAX_HEADERS];
    const char *authorization = NULL;
    int nauth = 0;
    for (int i = 0; i < c->nheaders; i++) {
        headers[i] = (http_header){c->hbuf + c->hname[i], c->hbuf + c->hvalue[i]};
        if (strcmp(headers[i].name, "authorization") != 0) continue;
        nauth++;
        /* as before the headers were kept: a longer Authorization is none (no route takes one) */
        if (strlen(headers[i].value) <= MAX_AUTH) authorization = headers[i].value;
    }
    /*
     * Authorization is a singleton field (RFC 9110 section 5.3: a field that is not a list must not
     * be repeated): two of them leave which one the client meant, and what an intermediary
     * joined or dropped, unknowable, so none is chosen.
     */
    if (nauth > 1) {
        refuse(c, 400, "BadRequest", "more than one Authorization header");
        return;
    }
    http_req rq = {
        .method = method,
        .path = path,
        .raw_path = raw_path,
        .query = has_query ? query : NULL,
        .body = c->body ? c->body : "",
        .body_len = c->body_len,
        .authorization = authorization && *authorization ? authorization : NULL,
        .headers = headers,
        .n_headers = (size_t)c->nheaders,
        .peer = c->peer,
        .secure = c->tls != NULL,
    };
    http_resp rs = {.status = 200};
    c->h->fn(c->h->ctx, &rq, &rs);
    send_resp(c, method, path, &rs);
}

/* ---- parser callbacks ------------------------------------------------------------------ */

static int on_url(http_parser *p, const char *at, size_t len) {
    client *c = p->data;
    if (c->target_len + len > MAX_TARGET) {
        c->target_long = true;
        return 0;
    }
    memcpy(c->target + c->target_len, at, len);
    c->target_len += len;
    c->target[c->target_len] = '\0';
    return 0;
}

/* Appends to hbuf, NUL-terminated; false when full (the parser's head limit keeps it from happening). */
static bool hbuf_put(client *c, const char *at, size_t len, bool lower) {
    if (c->hlen + len + 1 >= sizeof c->hbuf) return false;
    for (size_t i = 0; i < len; i++)
        c->hbuf[c->hlen + i] = (char)(lower && at[i] >= 'A' && at[i] <= 'Z' ? at[i] + 32 : at[i]);
    c->hlen += len;
    c->hbuf[c->hlen] = '\0';
    return true;
}

/* The parser may hand a name or a value over in pieces (split across reads): a field starts after a value. */
static int on_header_field(http_parser *p, const char *at, size_t len) {
    client *c = p->data;
    if (c->in_value || c->nheaders == 0) {
        if (c->nheaders == HTTP_MAX_HEADERS) {
            c->refuse = 431;
            return -1;
        }
        if (c->nheaders) c->hlen++; /* past the previous value's NUL */
        c->hname[c->nheaders++] = (uint16_t)c->hlen;
        c->in_value = false;
    }
    if (!hbuf_put(c, at, len, true)) {
        c->refuse = 431;
        return -1;
    }
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len) {
    client *c = p->data;
    if (!c->in_value) {
        c->hlen++; /* past the name's NUL */
        c->hvalue[c->nheaders - 1] = (uint16_t)c->hlen;
        c->hbuf[c->hlen] = '\0';
        c->in_value = true;
    }
    if (!hbuf_put(c, at, len, false)) {
        c->refuse = 431;
        return -1;
    }
    return 0;
}

static int on_headers_complete(http_parser *p) {
    client *c = p->data;
    if (c->nheaders && !c->in_value) { /* a last name without a value (the parser does not allow it, but) */
        c->hlen++;
        c->hvalue[c->nheaders - 1] = (uint16_t)c->hlen;
        c->hbuf[c->hlen] = '\0';
    }
    if (c->target_long) {
        c->refuse = 414;
        return -1;
    }
    if (p->http_major != 1) {
        c->refuse = 505;
        return -1;
    }
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > c->h->opts.max_body) {
        c->refuse = 413;
        return -1;
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len) {
    client *c = p->data;
    if (c->body_len + len > c->h->opts.max_body) {
        c->refuse = 413;
        return -1;
    }
    if (c->body_len + len + 1 > c->body_cap) {
        size_t cap = c->body_cap ? c->body_cap : 1024;
        while (cap < c->body_len + len + 1) cap *= 2;
        char *b = realloc(c->body, cap);
        if (!b) {
            c->refuse = 500;
            return -1;
        }
        c->body = b;
        c->body_cap = cap;
    }
    memcpy(c->body + c->body_len, at, len);
    c->body_len += len;
    c->body[c->body_len] = '\0';
    return 0;
}

static int on_message_complete(http_parser *p) {
    client *c = p->data;
    c->complete = true;
    http_parser_pause(p, 1); /* one request per connection: anything after it is not parsed */
    return 0;
}

static const http_parser_settings settings = {
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ---- I/O ------------------------------------------------------------------------------- */

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *b) {
    (void)suggested;
    client *c = hd->data;
    *b = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

/* Plaintext of the request (as read, or as the TLS engine decrypted it) to the parser; answers once it is whole. */
static void consume(client *c, const char *data, size_t n) {
    c->received += n;
    size_t used = http_parser_execute(&c->parser, &settings, data, n);
    (void)used;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (c->complete) {
        dispatch(c);
        return;
    }
    if (c->refuse == 413) {
        char msg[96];
        snprintf(msg, sizeof msg, "request body larger than %zu bytes", c->h->opts.max_body);
        refuse(c, 413, "PayloadTooLarge", msg);
    } else if (c->refuse == 414) {
        refuse(c, 414, "URITooLong", "request target longer than 2048 bytes");
    } else if (c->refuse == 505) {
        refuse(c, 400, "BadRequest", "not HTTP/1.0 or HTTP/1.1");
    } else if (c->refuse == 431) {
        char msg[96];
        snprintf(msg, sizeof msg, "more than %d header fields", HTTP_MAX_HEADERS);
        refuse(c, 431, "RequestHeaderFieldsTooLarge", msg);
    } else if (c->refuse) {
        refuse(c, 500, "InternalError", "out of memory");
    } else if (e == HPE_HEADER_OVERFLOW) {
        char msg[96];
        snprintf(msg, sizeof msg, "request head larger than %d bytes", HTTP_MAX_HEAD);
        refuse(c, 431, "RequestHeaderFieldsTooLarge", msg);
    } else if (e != HPE_OK) {
        char msg[160];
        snprintf(msg, sizeof msg, "malformed HTTP request: %s", http_errno_description(e));
        refuse(c, 400, "BadRequest", msg);
    }
}

/* The first bytes of an HTTP/1 request line (the methods a client sends by mistake to an HTTPS port). */
static bool looks_like_http(const client *c) {
    static const char *const methods[] = {"GET ", "POST", "PUT ", "HEAD", "DELE", "OPTI", "PATC"};
    for (size_t i = 0; c->nfirst == sizeof c->first && i < sizeof methods / sizeof *methods; i++)
        if (!memcmp(c->first, methods[i], 4)) return true;
    return false;
}

/*
 * HTTPS: ciphertext just read (in rbuf: the engine copies it all before rbuf is reused for the
 * plaintext) through the engine, the plaintext to the parser.
 */
static void tls_in(client *c, const char *data, size_t n) {
    for (size_t i = 0; i < n && c->nfirst < sizeof c->first; i++) c->first[c->nfirst++] = (uint8_t)data[i];
    bool was_established = tls_conn_established(c->tls);
    int rc = tls_conn_feed(c->tls, (const uint8_t *)data, n);
    if (rc == 0 && !was_established && tls_conn_established(c->tls)) {
        const char *sni = tls_conn_sni(c->tls);
        log_debug("%s: peer=%s TLS established: %s %s sni=%s", c->h->name, c->peer, tls_conn_version(c->tls),
                  tls_conn_cipher(c->tls), sni ? sni : "-");
    }
    while (rc == 0 && !c->responded && !c->closing) {
        size_t got = 0;
        rc = tls_conn_read(c->tls, (uint8_t *)c->rbuf, sizeof c->rbuf, &got);
        if (got && rc >= 0) consume(c, c->rbuf, got);
        if (got < sizeof c->rbuf) break;
    }
    if (c->closing || c->responded) return; /* the response took the engine's output with it */
    if (rc < 0) {
        log_warn("%s: peer=%s TLS %s failed: %s", c->h->name, c->peer, was_established ? "connection" : "handshake",
                 tls_conn_error(c->tls));
        if (!was_established && looks_like_http(c)) {
            /* the client speaks plaintext: it reads an answer in plaintext, not a TLS alert */
            tls_conn_free(c->tls);
            c->tls = NULL;
            refuse(c, 400, "BadRequest", "The plain HTTP request was sent to the HTTPS port: use an https:// URL");
            return;
        }
        if (send_tls_output(c)) client_close(c); /* the alert, if the engine made one */
        return;
    }
    if (rc == TLS_CLOSED) {
        if (c->received)
            log_info("%s: peer=%s closed (TLS close_notify) after %zu bytes of an unfinished request", c->h->name,
                     c->peer, c->received);
        client_close(c);
        return;
    }
    send_tls_output(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *b) {
    client *c = s->data;
    if (c->closing) return;
    if (nread < 0) {
        if (nread != UV_EOF || !c->responded) {
            if (c->tls && !tls_conn_established(c->tls) && c->nfirst)
                log_info("%s: peer=%s closed during the TLS handshake", c->h->name, c->peer);
            else if (nread == UV_EOF && c->received)
                log_info("%s: peer=%s closed after %zu bytes of an unfinished request", c->h->name, c->peer,
                         c->received);
            client_close(c);
            return;
        }
        c->peer_eof = true;
        uv_read_stop(s);
        maybe_finish(c);
        return;
    }
    if (c->responded || nread == 0) return;
    c->read_any = true;
    if (c->tls)
        tls_in(c, b->base, (size_t)nread);
    else
        consume(c, b->base, (size_t)nread);
}

static void on_sweep(uv_timer_t *t);

/* Still reading its request, and had the time to be read at least once. */
static bool evictable(const client *c, int64_t now) {
    return !c->closing && !c->responded && (c->read_any || now - c->opened_ms >= FRESH_MS);
}

/* The oldest evictable connection of addr (any address when NULL), other than self; *unfinished counts addr's. */
static client *oldest_unfinished(http_server *h, const client *self, const char *addr, int64_t now, int *unfinished) {
    client *old = NULL;
    *unfinished = 0;
    for (client *o = h->clients; o; o = o->next) {
        if (o == self || o->closing || o->responded || (addr && strcmp(o->addr, addr) != 0)) continue;
        ++*unfinished;
        if (evictable(o, now) && (!old || o->opened_ms < old->opened_ms)) old = o;
    }
    return old;
}

static void evict(http_server *h, client *victim, const char *why, int64_t now) {
    h->evicted++;
    log_debug("%s: peer=%s closed to make room: %s", h->name, victim->peer, why);
    if (now - h->evict_logged_ms >= EVICT_LOG_MS || !h->evict_logged_ms) {
        /* a flood of slow clients would otherwise write a line per connection */
        log_warn("%s: peer=%s closed with %zu bytes of an unfinished request to make room (%s); %llu such closes "
                 "in the last %d s", h->name, victim->peer, victim->received, why, (unsigned long long)h->evicted,
                 EVICT_LOG_MS / 1000);
        h->evict_logged_ms = now;
        h->evicted = 0;
    }
    client_close(victim);
}

/* Room for c (already counted in nclients): false when it must be refused. */
static bool make_room(http_server *h, client *c) {
    int64_t now = clk_mono_ms();
    int max = h->opts.max_clients, per_peer = max / 4 > 0 ? max / 4 : 1, mine = 0;
    client *victim = oldest_unfinished(h, c, c->addr, now, &mine);
    if (mine >= per_peer && victim) {
        char why[160];
        snprintf(why, sizeof why, "%d connections from %s without a whole request, at most %d", mine + 1, c->addr,
                 per_peer);
        evict(h, victim, why, now);
    }
    if (h->nclients - h->nclosing <= max) return true;
    /* over the slots: the oldest unfinished one of the address holding most of them */
    victim = NULL;
    int most = 0;
    for (client *o = h->clients; o; o = o->next) {
        int n;
        client *v = o == c || o->closing || o->responded ? NULL : oldest_unfinished(h, c, o->addr, now, &n);
        if (v && n > most) most = n, victim = v;
    }
    if (victim) evict(h, victim, "all connection slots taken", now);
    return h->nclients - h->nclosing <= max * HARD_FACTOR;
}

static void on_connection(uv_stream_t *server, int status) {
    http_server *h = server->data;
    if (status < 0) {
        log_warn("%s: accept failed: %s", h->name, uv_strerror(status));
        return;
    }
    client *c = xcalloc(1, sizeof *c);
    uv_tcp_init(h->loop, &c->tcp);
    c->tcp.data = c;
    c->h = h;
    c->next = h->clients;
    if (h->clients) h->clients->prev = c;
    h->clients = c;
    h->nclients++;
    h->open_handles++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        client_close(c);
        return;
    }
    net_peer_name(&c->tcp, c->peer, sizeof c->peer);
    c->opened_ms = clk_mono_ms();
    snprintf(c->addr, sizeof c->addr, "%s", c->peer);
    char *colon = strrchr(c->addr, ':'); /* "host:port", an IPv6 host unbracketed: the port is after the last */
    if (colon) *colon = '\0';
    if (!make_room(h, c)) {
        log_warn("%s: peer=%s refused: already %d connections open", h->name, c->peer, h->nclients - h->nclosing - 1);
        client_close(c);
        return;
    }
    if (h->opts.tls) c->tls = tls_conn_new(h->opts.tls);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->deadline_ms = clk_mono_ms() + h->opts.timeout_ms;
    if (!uv_is_active((uv_handle_t *)&h->sweep)) uv_timer_start(&h->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) client_close(c);
}

static void on_sweep(uv_timer_t *t) {
    http_server *h = t->data;
    int64_t now = clk_mono_ms();
    for (client *c = h->clients; c; c = c->next) {
        if (c->closing || now < c->deadline_ms) continue;
        if (!c->responded && c->tls && !tls_conn_established(c->tls) && c->nfirst) {
            log_warn("%s: peer=%s closed: the TLS handshake did not complete within %d ms", h->name, c->peer,
                     h->opts.timeout_ms);
            client_close(c);
            continue;
        }
        if (!c->responded && c->received) {
            char msg[96];
            snprintf(msg, sizeof msg, "no complete request within %d ms (%zu bytes received)", h->opts.timeout_ms,
                     c->received);
            refuse(c, 408, "RequestTimeout", msg);
            c->deadline_ms = now + 1000; /* a last second for the 408 to leave */
            continue;
        }
        if (!c->responded)
            log_debug("%s: peer=%s closed: no request within %d ms", h->name, c->peer, h->opts.timeout_ms);
        client_close(c); /* unlinks in its close callback: iteration stays valid */
    }
}

/* ---- API ------------------------------------------------------------------------------- */

int http_start(uv_loop_t *loop, const char *bind_address, int port, const http_opts *opts, http_handler fn, void *ctx,
               http_server **out, char *err, size_t n) {
    *out = NULL;
    if (port < 0 || port > 65535) {
        snprintf(err, n, "%s: port %d out of range", opts->name, port);
        return -1;
    }
    struct sockaddr_storage addr;
    int rc = strchr(bind_address, ':') ? uv_ip6_addr(bind_address, port, (struct sockaddr_in6 *)&addr)
                                       : uv_ip4_addr(bind_address, port, (struct sockaddr_in *)&addr);
    if (rc != 0) {
        snprintf(err, n, "%s: '%s' is not an IP address: %s", opts->name, bind_address, uv_strerror(rc));
        return -1;
    }
    http_server *h = xcalloc(1, sizeof *h);
    http_parser_set_max_header_size(HTTP_MAX_HEAD);
    h->loop = loop;
    h->opts = *opts;
    snprintf(h->name, sizeof h->name, "%s", opts->name);
    h->opts.name = h->name;
    h->fn = fn;
    h->ctx = ctx;
    uv_tcp_init(loop, &h->listener);
    uv_timer_init(loop, &h->sweep);
    h->listener.data = h->sweep.data = h;
    h->open_handles = 2;
    rc = uv_tcp_bind(&h->listener, (struct sockaddr *)&addr, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&h->listener, 128, on_connection);
    if (rc != 0) {
        char hint[256] = "";
        if (rc == UV_EADDRINUSE && opts->port_key) cfg_port_taken_hint(hint, sizeof hint, opts->port_key, port, false);
        snprintf(err, n, "%s: cannot listen on %s:%d: %s%s", opts->name, bind_address, port, uv_strerror(rc), hint);
        http_close(h);
        return -1;
    }
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    h->port = port;
    if (uv_tcp_getsockname(&h->listener, (struct sockaddr *)&bound, &blen) == 0)
        h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                    : ((struct sockaddr_in *)&bound)->sin_port);
    uv_unref((uv_handle_t *)&h->sweep); /* started by the first client (on_connection) */
    *out = h;
    return 0;
}

int http_port(const http_server *h) { return h ? h->port : 0; }

void http_close(http_server *h) {
    if (!h || h->closed) return;
    h->closed = true;
    for (client *c = h->clients; c; c = c->next) client_close(c);
    uv_close((uv_handle_t *)&h->listener, on_server_handle_close);
    uv_close((uv_handle_t *)&h->sweep, on_server_handle_close);
}
