/*
 * cred_endpoint: the built-in container-credentials endpoint (iam.credentials.port).
 *
 * A small HTTP/1.1 server on the broker's libuv loop that serves a role's current
 * credentials from the iam_store in the ECS/EKS container-credentials format, so unmodified
 * AWS SDKs (botocore, JavaScript v3, Go v2, Java v2) configured with
 *   AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:<port>/role/<role name>
 * fetch the credentials mskmock issues and rotates (docs/msk-behaviors.md#credential-rotation).
 *
 *   GET /role/<name>, GET /v2/credentials/<name> (a query string is ignored)
 *       200 {"AccessKeyId", "SecretAccessKey", "Token", "Expiration": "2026-12-02T15:04:05Z",
 *            "RoleArn", "AccountId"}            application/json
 *   unknown role or path  404 {"code": "NotFound", "message": ...}
 *   another method        405 (Allow: GET)
 *   malformed request     400
 *   request head > 8 KiB  431
 *   no or another Authorization, when a token is required  401 / 403 (before anything else)
 * The HTTP layer is broker/http (http-parser): every answer carries Connection: close. The
 * Authorization header AWS SDKs send from AWS_CONTAINER_AUTHORIZATION_TOKEN (or _FILE) is the
 * bare token; with iam.credentials.authorization.token (or .file) set, it must be exactly that
 * token, else ignored. A request body is ignored; a request head over 8 KiB gets 431; a connection that has not finished within
 * CRED_CLIENT_TIMEOUT_MS is closed; at most CRED_MAX_CLIENTS are open at once. One log line per
 * request: peer, method, path, status, role and the access key id served (never the secret or
 * the token). Times come from the clock module. No globals: any number of endpoints can run.
 */
#ifndef CRED_ENDPOINT_H
#define CRED_ENDPOINT_H

#include <stddef.h>
#include <uv.h>

#include "iam_store.h"

#define CRED_MAX_CLIENTS 64            /* connections open at once */
#define CRED_CLIENT_TIMEOUT_MS 5000    /* a connection's whole life */

typedef struct cred_endpoint cred_endpoint;

/* The token requests must carry (iam.credentials.authorization.token, or .file: read at start); both empty: none. */
typedef struct cred_endpoint_auth {
    const char *token;
    const char *token_file;
} cred_endpoint_auth;

/*
 * Listen on bind_address:port (IPv4 or IPv6 literal; port 0 picks a free port, see
 * cred_endpoint_port) and serve st's roles. st is not owned and must outlive the endpoint.
 * auth: the token required (NULL: none). 0, or -1 with a reason in err (an unreadable token
 * file too).
 */
int cred_endpoint_start(uv_loop_t *loop, const char *bind_address, int port, iam_store *st,
                        const cred_endpoint_auth *auth, cred_endpoint **out, char *err, size_t n);

/* The port actually bound. */
int cred_endpoint_port(const cred_endpoint *ep);

/*
 * Stop listening and close every client. The memory is released by the close callbacks:
 * run the loop (e.g. uv_run(loop, UV_RUN_DEFAULT)) before closing the loop itself.
 * NULL is allowed.
 */
void cred_endpoint_close(cred_endpoint *ep);

#endif
