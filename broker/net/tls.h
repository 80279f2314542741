/*
 * tls: the TLS side of MSK's port 9098 (TLS + SASL). A server context
 * (certificate, key, protocol settings) and a per-connection engine that
 * works on memory buffers only, so net.c keeps doing all socket I/O with
 * libuv and the loop never blocks or locks.
 *
 * Certificates. With cert_file/key_file set, those are served as given
 * (PEM, leaf first, chain allowed). Otherwise the context keeps a local CA in
 * <data_dir>/tls/: on first start it creates
 *     ca.pem      local CA (EC P-256, self-signed, CA:TRUE, keyCertSign, 10 years)
 *     ca.key      its key (0600)
 *     server.pem  server certificate (EC P-256, signed by the CA, serverAuth,
 *                 SANs = every host name, IP literals as IP SANs, 825 days)
 *     server.key  its key (0600)
 * and on later starts reuses them. The server certificate is issued again
 * from the same CA when it misses a host name, is not valid now, expires
 * within a day, or was not signed by ca.pem, so clients that trust ca.pem
 * keep working across restarts and host name changes. A CA that expires
 * within a day is replaced (clients then need the new ca.pem).
 * With data_dir ":memory:" nothing is written: the CA lives only in this
 * process and is lost at exit; tls_ctx_ca_pem() hands it to in-process users.
 *
 * tls_ctx_new does that work in a child process it waits for (tls_ca.c says
 * why) and the OpenSSL context is made at the first tls_conn_new; should that
 * fail, every connection fails at its first bytes, with the reason.
 *
 * Host names covered: the ones in settings (the advertised host first, then
 * any configured), plus "localhost", "127.0.0.1" and "::1".
 *
 * Protocol: TLS 1.2 and 1.3 only; TLS 1.2 limited to ECDHE with AES-GCM or
 * ChaCha20-Poly1305; groups X25519, P-256, P-384; no renegotiation; no
 * client certificates (authentication is SASL's job).
 *
 * Use from a libuv read callback. Ciphertext may be read straight into the
 * plaintext buffer (net.c's rbuf + rlen): tls_conn_feed copies it all before
 * anything is decrypted over it.
 *
 *     if (tls_conn_feed(t, rbuf + rlen, nread) < 0) -> send pending output (an alert), log tls_conn_error(t), close
 *     for (;;) {
 *         make room: rcap - rlen >= 16 KiB;
 *         rc = tls_conn_read(t, rbuf + rlen, rcap - rlen, &got);
 *         rlen += got;
 *         if (rc != 0 || rlen < rcap) break;     (got < cap: nothing more buffered)
 *     }
 *     rc < 0 -> error as above; rc == TLS_CLOSED -> the peer sent close_notify: close
 *     cut frames out of rbuf exactly as for plaintext; send pending output.
 *
 * tls_conn_feed finishes the handshake (and fails only there); the client's
 * first request may arrive in the same read as its Finished message and is
 * returned by the tls_conn_read that follows. Answers go through
 * tls_conn_write. After feed, read, write and shutdown, send what
 * tls_conn_take_all returns with uv_write and free() it in the write callback
 * (handshake records, session tickets, alerts and application records all
 * come out there, in order).
 *
 * Every function returns 0 on success and -1 on a failed connection; once
 * failed, a connection stays failed and tls_conn_error() tells why. A peer
 * that never finishes its handshake is the caller's idle timer's business.
 * One thread: OpenSSL's error queue is per thread and is cleared before each
 * call, so nothing leaks from one connection's error to another's.
 */
#ifndef TLS_H
#define TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tls_settings {
    const char *cert_file;    /* PEM certificate (chain allowed), or NULL to use the local CA */
    const char *key_file;     /* PEM private key for cert_file; set both or neither */
    const char *data_dir;     /* where tls/ lives; ":memory:" keeps everything in memory */
    const char *const *hosts; /* host names / IP literals the certificate must cover */
    size_t nhosts;            /* advertised host first; localhost, 127.0.0.1, ::1 are implied */
} tls_settings;

typedef struct tls_ctx tls_ctx;
typedef struct tls_conn tls_conn;

/* tls_conn_read's result once the peer's close_notify has been read. */
#define TLS_CLOSED 1

int tls_ctx_new(tls_ctx **out, const tls_settings *set, char *err, size_t n);
/*
 * tls_ctx_new in two steps, so the caller can do other work while the child works: begin
 * forks it (so call it while the process has no other thread: a lock another thread held at
 * the fork, such as a sanitizer's allocator's, would stay held in the child for ever), finish
 * waits for it and frees the setup. begin always gives a setup (working in-process when no
 * child can be made); finish must be called once on it.
 */
typedef struct tls_setup tls_setup;
void tls_ctx_begin(tls_setup **out, const tls_settings *set);
int tls_ctx_finish(tls_setup *p, tls_ctx **out, char *err, size_t n);
void tls_ctx_free(tls_ctx *x); /* live connections keep what they need */

/* One line for the start-up log: where the certificate came from, what was generated or reused and why. */
const char *tls_ctx_summary(const tls_ctx *x);
/* A problem worth a warning (given certificate misses a host name or expires soon), or NULL. */
const char *tls_ctx_warning(const tls_ctx *x);
/* Path of ca.pem for clients to trust; NULL with given cert files or ":memory:". */
const char *tls_ctx_ca_file(const tls_ctx *x);
/* The local CA certificate as PEM text; NULL with given cert files. */
const char *tls_ctx_ca_pem(const tls_ctx *x);
/* SHA-256 of the DER of the local CA / of the served certificate, lower-case hex ("" for no CA). */
const char *tls_ctx_ca_fingerprint(const tls_ctx *x);
const char *tls_ctx_cert_fingerprint(const tls_ctx *x);

tls_conn *tls_conn_new(tls_ctx *x); /* never NULL: out of memory aborts (kp_mem.h) */
void tls_conn_free(tls_conn *t);

/* Ciphertext read from the socket; advances the handshake. */
int tls_conn_feed(tls_conn *t, const uint8_t *cipher, size_t n);
/*
 * Decrypted application bytes into plain[0..cap): *got of them. *got < cap
 * means nothing more is buffered. Returns TLS_CLOSED when the peer's
 * close_notify has been read (*got may still hold the bytes before it).
 */
int tls_conn_read(tls_conn *t, uint8_t *plain, size_t cap, size_t *got);
/* Encrypt application bytes (only once established); the records join the output. */
int tls_conn_write(tls_conn *t, const uint8_t *plain, size_t n);
/* Queue our close_notify (after which nothing more may be written). */
int tls_conn_shutdown(tls_conn *t);

/* Received bytes not yet decrypted into application data (a partial record). */
bool tls_conn_has_pending_in(const tls_conn *t);

/* Ciphertext waiting to be sent (handshake records, alerts, application records). */
size_t tls_conn_pending_out(const tls_conn *t);
int tls_conn_take_out(tls_conn *t, uint8_t *buf, size_t cap, size_t *got);
/* All pending ciphertext in one malloc'd buffer (caller frees), or NULL with *len = 0 when none. */
uint8_t *tls_conn_take_all(tls_conn *t, size_t *len);

bool tls_conn_established(const tls_conn *t);
bool tls_conn_failed(const tls_conn *t);
const char *tls_conn_sni(const tls_conn *t);     /* server name the client sent, or NULL */
const char *tls_conn_version(const tls_conn *t); /* "TLSv1.3", or "-" before the handshake */
const char *tls_conn_cipher(const tls_conn *t);  /* "TLS_AES_128_GCM_SHA256", or "-" */
/*
 * Why the connection failed, e.g. "wrong version number (plaintext Kafka
 * request on a TLS port? ...)"; "" while it has not.
 */
const char *tls_conn_error(const tls_conn *t);

#endif
