/*
 * cred_endpoint: the built-in container-credentials endpoint (iam.credentials.port).
 *
 * A small HTTP/1.1 server on the broker's libuv loop that serves a role's current
 * credentials from the iam_store in the ECS/EKS container-credentials format, so unmodified
 * AWS SDKs (botocore, JavaScript v3, Go v2, Java v2) configured with
 *   AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:<port>/role/<role name>
 * fetch the credentials mskmock issues and rotates (msk-iam-auth.md §4).
 *
 *   GET /role/<name>, GET /v2/credentials/<name> (a query string is ignored)
 *       200 {"AccessKeyId", "SecretAccessKey", "Token", "Expiration": "2026-12-02T15:04:05Z",
 *            "RoleArn", "AccountId"}            application/json
 *   unknown role or path  404 {"code": "NotFound", "message": ...}
 *   another method        405 (Allow: GET)
 *   malformed request     400
 *   request head > 8 KiB  431
 * Every answer carries Connection: close and the connection is closed after it (after the
 * client's EOF, or CRED_CLIENT_TIMEOUT_MS after it connected, whichever comes first, so a
 * response is never cut by a reset). An Authorization header
 * (AWS_CONTAINER_AUTHORIZATION_TOKEN) is accepted and ignored. A request body is ignored.
 * One log line per request: peer, method, path, status, role and the access key id served
 * (never the secret or the token).
 *
 * Never blocks the loop; buffers are bounded (CRED_MAX_REQUEST per client, at most
 * CRED_MAX_CLIENTS clients, more are closed at once); a client that has not finished
 * within CRED_CLIENT_TIMEOUT_MS (slow, idle or half-open) is closed. Times come from the
 * clock module. No globals: any number of endpoints can run on any loops.
 */
#ifndef CRED_ENDPOINT_H
#define CRED_ENDPOINT_H

#include <stddef.h>
#include <uv.h>

#include "iam_store.h"

#define CRED_MAX_REQUEST 8192          /* bytes of request line + headers */
#define CRED_MAX_CLIENTS 64            /* connections open at once */
#define CRED_CLIENT_TIMEOUT_MS 5000    /* a connection's whole life */

typedef struct cred_endpoint cred_endpoint;

/*
 * Listen on bind_address:port (IPv4 or IPv6 literal; port 0 picks a free port, see
 * cred_endpoint_port) and serve st's roles. st is not owned and must outlive the endpoint.
 * 0, or -1 with a reason in err.
 */
int cred_endpoint_start(uv_loop_t *loop, const char *bind_address, int port, iam_store *st, cred_endpoint **out,
                        char *err, size_t n);

/* The port actually bound. */
int cred_endpoint_port(const cred_endpoint *ep);

/*
 * Stop listening and close every client. The memory is released by the close callbacks:
 * run the loop (e.g. uv_run(loop, UV_RUN_DEFAULT)) before closing the loop itself.
 * NULL is allowed.
 */
void cred_endpoint_close(cred_endpoint *ep);

#endif
