/*
 * kwire (kwire.h): the byte-level Kafka encoding the bench drivers write by hand (big-endian
 * ints, classic and compact strings, request headers v1/v2), a bounds-checked reader for the
 * replies, and the connections they travel on: non-blocking (optionally TLS) for the epoll
 * drivers, blocking for one-off exchanges. mskbench links nothing of the broker (protocol/
 * included), so what it measures is driven by code the broker does not share.
 */
#include "kwire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- encoding ---- */

static void reserve(kbuf *b, size_t more) {
    if (b->n + more <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) abort();
    b->p = p;
    b->cap = cap;
}

void kb_raw(kbuf *b, const void *p, size_t n) {
    reserve(b, n);
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}
void kb_i8(kbuf *b, int8_t v) { kb_raw(b, &v, 1); }
void kb_i16(kbuf *b, int16_t v) {
    uint16_t x = htons((uint16_t)v);
    kb_raw(b, &x, 2);
}
void kb_i32(kbuf *b, int32_t v) {
    uint32_t x = htonl((uint32_t)v);
    kb_raw(b, &x, 4);
}
void kb_i64(kbuf *b, int64_t v) {
    kb_i32(b, (int32_t)((uint64_t)v >> 32));
    kb_i32(b, (int32_t)(uint32_t)v);
}
void kb_str(kbuf *b, const char *s) {
    if (!s) {
        kb_i16(b, -1);
        return;
    }
    size_t n = strlen(s);
    kb_i16(b, (int16_t)n);
    kb_raw(b, s, n);
}
void kb_bytes(kbuf *b, const void *p, int32_t len) {
    if (!p) {
        kb_i32(b, -1);
        return;
    }
    kb_i32(b, len);
    kb_raw(b, p, (size_t)len);
}
void kb_uvarint(kbuf *b, uint32_t v) {
    while (v >= 0x80) {
        kb_i8(b, (int8_t)((v & 0x7f) | 0x80));
        v >>= 7;
    }
    kb_i8(b, (int8_t)v);
}
void kb_cstr(kbuf *b, const char *s) {
    if (!s) {
        kb_uvarint(b, 0);
        return;
    }
    size_t n = strlen(s);
    kb_uvarint(b, (uint32_t)n + 1);
    kb_raw(b, s, n);
}
size_t kb_req_begin(kbuf *b, int16_t key, int16_t ver, int32_t corr, const char *client_id, bool flexible) {
    size_t start = b->n;
    kb_i32(b, 0);
    kb_i16(b, key);
    kb_i16(b, ver);
    kb_i32(b, corr);
    kb_str(b, client_id);
    if (flexible) kb_uvarint(b, 0); /* no tagged fields */
    return start;
}
void kb_req_end(kbuf *b, size_t start) {
    uint32_t size = htonl((uint32_t)(b->n - start - 4));
    memcpy(b->p + start, &size, 4);
}
void kb_free(kbuf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ---- decoding ---- */

static const uint8_t *take(krd *r, size_t n) {
    if (r->bad || r->n - r->off < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}
int8_t kr_i8(krd *r) {
    const uint8_t *p = take(r, 1);
    return p ? (int8_t)p[0] : 0;
}
int16_t kr_i16(krd *r) {
    const uint8_t *p = take(r, 2);
    return p ? (int16_t)(p[0] << 8 | p[1]) : 0;
}
int32_t kr_i32(krd *r) {
    const uint8_t *p = take(r, 4);
    return p ? (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]) : 0;
}
int64_t kr_i64(krd *r) {
    uint64_t hi = (uint32_t)kr_i32(r), lo = (uint32_t)kr_i32(r);
    return (int64_t)(hi << 32 | lo);
}
int kr_str(krd *r, const char **s) {
    int16_t n = kr_i16(r);
    *s = NULL;
    if (n < 0) return -1;
    *s = (const char *)take(r, (size_t)n);
    return *s ? n : -1;
}
int32_t kr_bytes(krd *r, const uint8_t **p) {
    int32_t n = kr_i32(r);
    *p = NULL;
    if (n < 0) return -1;
    *p = take(r, (size_t)n);
    return *p ? n : -1;
}

/* ---- non-blocking connection ---- */

_Thread_local int kc_source;

int kc_open(kconn *c, int port, SSL_CTX *ssl_ctx, const char *sni) {
    memset(c, 0, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return -1;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* as Kafka clients do */
    if (kc_source > 0) {
        /* the port is chosen at connect(), per destination, so ports in TIME_WAIT towards others stay usable */
        setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)(kc_source & 255));
        if (bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0) {
            close(c->fd);
            c->fd = -1;
            return -1;
        }
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    if (ssl_ctx) {
        c->ssl = SSL_new(ssl_ctx);
        if (!c->ssl) return -1;
        SSL_set_fd(c->ssl, c->fd);
        SSL_set_connect_state(c->ssl);
        if (sni) SSL_set_tlsext_host_name(c->ssl, sni);
    } else {
        c->tls_done = true;
    }
    return 0;
}

static int flush_out(kconn *c) {
    while (c->out_off < c->out.n) {
        size_t left = c->out.n - c->out_off;
        if (c->ssl) {
            int k = SSL_write(c->ssl, c->out.p + c->out_off, (int)left);
            if (k <= 0) {
                int e = SSL_get_error(c->ssl, k);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) return 0;
                return -1;
            }
            c->out_off += (size_t)k;
        } else {
            ssize_t k = send(c->fd, c->out.p + c->out_off, left, MSG_NOSIGNAL);
            if (k < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
                if (errno == EINTR) continue;
                return -1;
            }
            c->out_off += (size_t)k;
        }
    }
    c->out.n = c->out_off = 0;
    return 0;
}

int kc_progress(kconn *c) {
    if (!c->connected) {
        int err = 0;
        socklen_t l = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0 || err) return -1;
        struct sockaddr_in peer;
        socklen_t pl = sizeof peer;
        if (getpeername(c->fd, (struct sockaddr *)&peer, &pl) != 0) return errno == ENOTCONN ? 0 : -1;
        c->connected = true;
    }
    if (!c->tls_done) {
        ERR_clear_error();
        int k = SSL_do_handshake(c->ssl);
        if (k != 1) {
            int e = SSL_get_error(c->ssl, k);
            return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
        }
        c->tls_done = true;
    }
    return flush_out(c) < 0 ? -1 : 1;
}

int kc_read(kconn *c) {
    if (c->in_off && c->in_off == c->in_len) c->in_off = c->in_len = 0;
    if (c->in_off > 65536) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    for (;;) {
        if (c->in_cap - c->in_len < 16384) {
            size_t cap = c->in_cap ? c->in_cap * 2 : 32768;
            uint8_t *p = realloc(c->in, cap);
            if (!p) abort();
            c->in = p;
            c->in_cap = cap;
        }
        size_t room = c->in_cap - c->in_len;
        if (c->ssl) {
            ERR_clear_error();
            int k = SSL_read(c->ssl, c->in + c->in_len, (int)room);
            if (k <= 0) {
                int e = SSL_get_error(c->ssl, k);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
                return -1;
            }
            c->in_len += (size_t)k;
        } else {
            ssize_t k = recv(c->fd, c->in + c->in_len, room, 0);
            if (k < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
                if (errno == EINTR) continue;
                return -1;
            }
            if (k == 0) return -1;
            c->in_len += (size_t)k;
        }
    }
}

bool kc_frame(kconn *c, krd *frame, int32_t *corr) {
    size_t avail = c->in_len - c->in_off;
    if (avail < 4) return false;
    const uint8_t *p = c->in + c->in_off;
    uint32_t size = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (avail - 4 < size) return false;
    krd r = {p + 4, size, 0, false};
    *corr = kr_i32(&r);
    *frame = r;
    c->in_off += 4 + size;
    return true;
}

void kc_close(kconn *c) {
    if (c->ssl) SSL_free(c->ssl);
    if (c->fd >= 0) close(c->fd);
    kb_free(&c->out);
    free(c->in);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

/* ---- blocking helpers ---- */

int kw_connect_blocking(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int kw_send_all(int fd, const void *p, size_t n) {
    const uint8_t *b = p;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int recv_all(int fd, void *p, size_t n) {
    uint8_t *b = p;
    while (n) {
        ssize_t k = recv(fd, b, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

uint8_t *kw_recv_frame(int fd, size_t *len) {
    uint8_t h[4];
    if (recv_all(fd, h, 4)) return NULL;
    size_t n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    uint8_t *p = malloc(n ? n : 1);
    if (!p) abort();
    if (recv_all(fd, p, n)) {
        free(p);
        return NULL;
    }
    *len = n;
    return p;
}
