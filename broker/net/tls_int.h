/* What tls.c and tls_ca.c share; not for other files (tls.h is the interface). */
#ifndef TLS_INT_H
#define TLS_INT_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "tls.h"

/* tls.c: OpenSSL's error queue, rendered (and emptied): reasons joined by "; ", with any detail text. */
void tls_render_errors(char *buf, size_t n);
/* tls.c: err = "what: <the rendered queue>"; returns -1. */
int tls_fail_ssl(char *err, size_t n, const char *what);
/* tls.c: a server SSL_CTX with MSK's protocol settings and no certificate yet; NULL with err. */
SSL_CTX *tls_server_ssl_ctx(char *err, size_t n);

/*
 * tls_ca.c: the context's SSL_CTX, for each connection's SSL, made at the first call (issue 37:
 * OpenSSL stays untouched until a TLS connection comes); NULL when making it failed, and
 * tls_ctx_ssl_error then says why.
 */
SSL_CTX *tls_ctx_ssl(tls_ctx *x);
const char *tls_ctx_ssl_error(const tls_ctx *x);

#endif
