/*
 * sasl: authentication on the IAM listeners, as MSK does it.
 *
 * Before a connection has authenticated only ApiVersions, SaslHandshake and
 * SaslAuthenticate are served; anything else closes it (Kafka's behaviour on
 * a SASL listener). Mechanisms: AWS_MSK_IAM (JSON payload) and OAUTHBEARER
 * (RFC 7628 message carrying a presigned URL), both verified with SigV4
 * against the identities in iam_store. Failures answer SASL_AUTHENTICATION_
 * FAILED (58) with MSK's message "[<request id>]: <reason>" and close; the
 * log line carries the same request id and the check that failed.
 *
 * KIP-368: SaslAuthenticate v1+ returns the session lifetime, min(expiry of
 * the signing credentials, the token's own expiry when
 * iam.session.cap.by.token, connections.max.reauth.ms) - now. The first
 * request after expiry other than SaslHandshake closes the connection
 * without a reply, for v0 clients too. Re-authentication must keep the
 * principal and the mechanism.
 */
#ifndef SASL_H
#define SASL_H

#include "net/net.h"
#include "net/req.h"

/* conn.sasl_state's values (net.h), by their names here */
enum { SASL_NONE = CONN_SASL_NONE, SASL_HANDSHAKEN = CONN_SASL_HANDSHAKEN, SASL_AUTHENTICATED = CONN_SASL_AUTHENTICATED };

int sasl_init(srv *s, char *err, size_t n);
/*
 * sasl_init starts the TLS material in a child process (net/tls.h, tls_ctx_begin: call it while
 * the process has no other thread); this waits for it, sets s->tls and logs where the
 * certificate came from. 0, or -1 with err.
 */
int sasl_tls_finish(srv *s, char *err, size_t n);
void sasl_close(srv *s); /* handles */
void sasl_free(srv *s);  /* memory, after the loop ended */
/* The identities (and their policies) tokens are checked against. */
struct iam_store *sasl_identities(srv *s);
/*
 * Whether host is one an AWS_MSK_IAM token may name and the TLS certificate covers (advertised.host,
 * external.advertised.host when external listeners are on, tls.hosts, localhost): what a listener
 * may be advertised as. Without SASL, every host; the names go to list (comma-separated) either way.
 */
bool sasl_host_accepted(const srv *s, const char *host, char *list, size_t n);
/* The credentials endpoint's bound port (the OS's pick under ports.auto); 0: off. */
int sasl_credentials_port(const srv *s);
/*
 * The admin API's IAM events. Rotate a role's credentials now (-1: no such role), with what a
 * scheduled rotation does to sessions (iam.token.invalidation). Expire a credential now: the
 * sessions it signed end at their next request (not under token-expiry); a role's current
 * credentials are replaced (*rotated). Returns the sessions ended, -1 for an unknown key.
 */
int sasl_rotate_role(srv *s, const char *role);
int sasl_expire_credential(srv *s, const char *access_key_id, bool *rotated);

/* Whether the request may go on to its handler; false closes the connection (the reason is logged). */
bool sasl_gate(srv *s, req *r, int16_t key);
/* A raw SASL token frame after SaslHandshake v0. False closes the connection. */
bool sasl_raw_token(srv *s, req *r);

void api_sasl_handshake(srv *s, req *r);
void api_sasl_authenticate(srv *s, req *r);

#endif
