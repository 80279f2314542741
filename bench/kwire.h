/*
 * kwire: just enough of the Kafka wire protocol for the bench's own drivers
 * (groups.c: raw JoinGroup/SyncGroup/Heartbeat members; auth.c: SASL
 * authentications), plus a non-blocking client connection, optionally TLS
 * (OpenSSL on the socket), meant for an edge-triggered epoll loop.
 *
 * Requests use header v1 (api key, version, correlation id, client id), or v2
 * (+ tagged fields) for flexible versions; responses header v0 (correlation id).
 */
#ifndef KWIRE_H
#define KWIRE_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *p;
    size_t n, cap;
} kbuf;

void kb_raw(kbuf *b, const void *p, size_t n);
void kb_i8(kbuf *b, int8_t v);
void kb_i16(kbuf *b, int16_t v);
void kb_i32(kbuf *b, int32_t v);
void kb_i64(kbuf *b, int64_t v);
void kb_str(kbuf *b, const char *s);                 /* int16 length; NULL is -1 */
void kb_bytes(kbuf *b, const void *p, int32_t len);  /* int32 length; p NULL is -1 */
void kb_uvarint(kbuf *b, uint32_t v);
void kb_cstr(kbuf *b, const char *s);                /* compact string (flexible versions) */
/* Starts a request frame (size placeholder + header); kb_req_end fills in the size. */
size_t kb_req_begin(kbuf *b, int16_t key, int16_t ver, int32_t corr, const char *client_id, bool flexible);
void kb_req_end(kbuf *b, size_t start);
void kb_free(kbuf *b);

typedef struct {
    const uint8_t *p;
    size_t n, off;
    bool bad; /* read past the end */
} krd;

int8_t kr_i8(krd *r);
int16_t kr_i16(krd *r);
int32_t kr_i32(krd *r);
int64_t kr_i64(krd *r);
int kr_str(krd *r, const char **s);       /* length, -1 for null; *s not NUL-terminated */
int32_t kr_bytes(krd *r, const uint8_t **p);

/* A client connection for an edge-triggered epoll loop. */
typedef struct kconn {
    int fd;
    SSL *ssl;          /* NULL: plaintext */
    bool connected;    /* TCP connect finished */
    bool tls_done;     /* TLS handshake finished (or no TLS) */
    kbuf out;
    size_t out_off;
    uint8_t *in;
    size_t in_off, in_len, in_cap;
} kconn;

/* Non-blocking connect to 127.0.0.1:port; ssl_ctx non-NULL wraps it in TLS (SNI host). 0 or -1.
 * kc_source (0: the kernel's choice) sets the source address 127.0.0.<kc_source> of later
 * connections: tens of thousands of short connections a second leave their TIME_WAIT on
 * the client side, and one source address has only ~28,000 ephemeral ports. */
int kc_open(kconn *c, int port, SSL_CTX *ssl_ctx, const char *sni);
extern _Thread_local int kc_source;
/* Drives connect, handshake and pending output. Returns 1 when the connection is
 * ready for requests (connected, handshake done), 0 when waiting, -1 on error. */
int kc_progress(kconn *c);
/* Reads everything available. 0 ok (maybe nothing), -1 EOF or error. */
int kc_read(kconn *c);
/* The next complete response frame (without its size), or false. The frame
 * points into the connection's buffer until the next kc_read. */
bool kc_frame(kconn *c, krd *frame, int32_t *corr);
void kc_close(kconn *c);

/* Blocking helpers for set-up: connect, send a frame, read one response frame (malloc'd). */
int kw_connect_blocking(int port);
int kw_send_all(int fd, const void *p, size_t n);
uint8_t *kw_recv_frame(int fd, size_t *len);

#endif
