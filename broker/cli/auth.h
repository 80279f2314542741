/*
 * TLS and SASL for the CLI's connections (conn.h): the OpenSSL client context (the CA file or
 * the system's trust store, host name or IP address verified), the handshake and the bytes of a
 * TLS connection, and SaslHandshake + SaslAuthenticate with an MSK IAM message (iam_sign.h)
 * signed with the credentials aws_creds.h finds, which are looked up once per command and again
 * when they are about to expire.
 */
#ifndef CLI_AUTH_H
#define CLI_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn.h"

/* Decides what --security-protocol, --tls and --sasl-mechanism left open and makes o->auth
 * when TLS or SASL is on. 0, or -1 with err (a contradiction among the flags, an unreadable CA
 * file, no region). */
int cli_auth_setup(cli_opts *o, char *err, size_t n);
void cli_auth_free(cli_opts *o);

/* The TLS handshake on c->fd, which becomes c->ssl. 0, or -1 with err. */
int cli_tls_start(cli_conn *c, int64_t deadline, char *err, size_t n);
/* Moves exactly len bytes through c->ssl before the deadline. 0, or -1 with err. */
int cli_tls_io(cli_conn *c, void *buf, size_t len, bool out, int64_t deadline, char *err, size_t n);
void cli_tls_close(cli_conn *c);

/* SaslHandshake and SaslAuthenticate on c (after ApiVersions), and c->reauth_at_ms from the
 * session lifetime the broker returned. 0, or -1 with err holding the broker's message. */
int cli_sasl_login(cli_conn *c, char *err, size_t n);

#endif
