/*
 * cred_endpoint: container-credentials HTTP endpoint; see cred_endpoint.h. The HTTP layer
 * (sockets, parsing, limits, framing, the request's log line) is broker/http.
 */
#include "cred_endpoint.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arn.h"
#include "clock.h"
#include "http/http.h"
#include "iam_token.h"
#include "kp_mem.h"
#include "log.h"

struct cred_endpoint {
    http_server *http;
    iam_store *st;
    char *token; /* the Authorization value every request must carry; NULL: none asked */
};

#define MAX_NAME 128

static void serve_role(const cred_endpoint *ep, const char *role, http_resp *rs) {
    const iam_store *st = ep->st;
    const iam_cred *cr = iam_store_current(st, role);
    const char *arn = iam_store_role_arn(st, role);
    if (!cr || !arn) {
        char roles[400];
        size_t l = 0, nroles = iam_store_role_count(st);
        roles[0] = '\0';
        for (size_t i = 0; i < nroles && l < sizeof roles; i++)
            l += (size_t)snprintf(roles + l, sizeof roles - l, "%s %s", i ? "," : "", iam_store_role_name(st, i));
        /* the path is the client's: http.c logs it made printable; the message quotes it as JSON */
        http_error(rs, 404, "NotFound", "no role '%s' in iam.identities.file (roles:%s)", role, nroles ? roles : " none");
        snprintf(rs->detail, sizeof rs->detail, "role unknown");
        return;
    }
    int64_t now = clk_now_ms();
    /* Issued role credentials always expire; an SDK needs an Expiration in any case. */
    int64_t expiry = cr->expiry_ms >= 0 ? cr->expiry_ms : now + 86400000;
    char when[32];
    iam_format_time(expiry, when);
    /* arn:<partition>:iam::<account>:role/... : the account is the fifth field */
    char account[64];
    arn_account(arn, account, sizeof account);
    http_json(rs, 200,
              json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "AccessKeyId", cr->access_key_id, "SecretAccessKey",
                        cr->secret_access_key, "Token", cr->session_token ? cr->session_token : "", "Expiration", when,
                        "RoleArn", arn, "AccountId", account));
    /* the access key id is not secret; the secret key and the token never reach the log */
    snprintf(rs->detail, sizeof rs->detail, "role=%s access_key_id=%s expiration=%s%s", role,
             cr->access_key_id, when,
             cr->expiry_ms >= 0 && cr->expiry_ms <= now ? " (already expired: rotation is off or late)" : "");
}

/*
 * The token the SDKs send as the whole Authorization value, read from
 * AWS_CONTAINER_AUTHORIZATION_TOKEN or _FILE (botocore's ContainerProvider, the AWS SDKs' "container
 * credential provider": https://docs.aws.amazon.com/sdkref/latest/guide/feature-container-credentials.html).
 * Missing: 401; another: 403, as EKS Pod Identity's agent refuses a request without its token.
 * Compared in constant time; neither the token nor what was sent reaches the log.
 */
static bool token_ok(const cred_endpoint *ep, const http_req *rq, http_resp *rs) {
    if (!ep->token) return true;
    const char *got = http_header_get(rq, "authorization"); /* not rq->authorization: a JWT may pass its 1 KiB */
    size_t gl = got ? strlen(got) : 0, wl = strlen(ep->token);
    while (gl && (got[gl - 1] == ' ' || got[gl - 1] == '\t')) gl--; /* trailing OWS is not part of a field value */
    if (!gl) {
        http_error(rs, 401, "Unauthorized",
                   "iam.credentials.authorization.token is set: send it as the Authorization header "
                   "(AWS_CONTAINER_AUTHORIZATION_TOKEN or AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE in the client)");
        snprintf(rs->detail, sizeof rs->detail, "no authorization token");
        return false;
    }
    if (gl != wl || CRYPTO_memcmp(got, ep->token, wl) != 0) {
        http_error(rs, 403, "Forbidden", "the Authorization header is not iam.credentials.authorization.token");
        snprintf(rs->detail, sizeof rs->detail, "wrong authorization token");
        return false;
    }
    return true;
}

static void route(void *ctx, const http_req *rq, http_resp *rs) {
    const cred_endpoint *ep = ctx;
    if (!token_ok(ep, rq, rs)) return;
    if (strcmp(rq->method, "GET") != 0) {
        snprintf(rs->allow, sizeof rs->allow, "GET");
        http_error(rs, 405, "MethodNotAllowed", "only GET is served");
        return;
    }
    static const char *const prefixes[] = {"/role/", "/v2/credentials/"};
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(prefixes[i]);
        const char *role = rq->path + n;
        if (strncmp(rq->path, prefixes[i], n) != 0 || !*role || strchr(role, '/')) continue;
        if (strlen(role) >= MAX_NAME) {
            http_error(rs, 400, "BadRequest", "role name longer than %d bytes", MAX_NAME - 1);
            return;
        }
        serve_role(ep, role, rs);
        return;
    }
    http_error(rs, 404, "NotFound", "no such path; credentials are at /role/<role name>");
}

/* The required token, from the key or its file (one trailing newline, or CRLF, dropped); NULL: none. */
static int load_token(const cred_endpoint_auth *auth, char **out, char *err, size_t n) {
    *out = NULL;
    const char *tok = auth && auth->token && *auth->token ? auth->token : NULL;
    const char *file = auth && auth->token_file && *auth->token_file ? auth->token_file : NULL;
    if (tok && file) {
        snprintf(err, n, "cred: set iam.credentials.authorization.token or iam.credentials.authorization.token.file, "
                 "not both");
        return -1;
    }
    char buf[8192];
    if (file) {
        FILE *f = fopen(file, "rb");
        size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
        bool more = f && got == sizeof buf;
        int e = errno;
        if (f) fclose(f);
        if (!f) {
            snprintf(err, n, "cred: iam.credentials.authorization.token.file %s: %s", file, strerror(e));
            return -1;
        }
        if (more) {
            snprintf(err, n, "cred: iam.credentials.authorization.token.file %s: longer than %zu bytes", file,
                     sizeof buf - 1);
            return -1;
        }
        buf[got] = '\0';
        if (got && buf[got - 1] == '\n') buf[--got] = '\0';
        if (got && buf[got - 1] == '\r') buf[--got] = '\0';
        if (!got) {
            snprintf(err, n, "cred: iam.credentials.authorization.token.file %s is empty", file);
            return -1;
        }
        tok = buf;
    }
    if (!tok) return 0;
    for (const char *p = tok; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            /* what an SDK could not send as a header value (botocore refuses CR and LF in it) */
            snprintf(err, n, "cred: the authorization token%s holds a control character", file ? " in its file" : "");
            return -1;
        }
    if (*tok == ' ' || tok[strlen(tok) - 1] == ' ') {
        snprintf(err, n, "cred: the authorization token%s begins or ends with a space, which HTTP drops",
                 file ? " in its file" : "");
        return -1;
    }
    *out = xstrdup(tok);
    return 0;
}

int cred_endpoint_start(uv_loop_t *loop, const char *bind_address, int port, iam_store *st,
                        const cred_endpoint_auth *auth, cred_endpoint **out, char *err, size_t n) {
    *out = NULL;
    char *token;
    if (load_token(auth, &token, err, n) != 0) return -1;
    cred_endpoint *ep = xcalloc(1, sizeof *ep);
    ep->st = st;
    ep->token = token;
    http_opts opts = {.name = "cred", .port_key = "iam.credentials.port", .max_body = 65536,
                      .max_clients = CRED_MAX_CLIENTS,
                      .timeout_ms = CRED_CLIENT_TIMEOUT_MS};
    if (http_start(loop, bind_address, port, &opts, route, ep, &ep->http, err, n) != 0) {
        free(ep->token);
        free(ep);
        return -1;
    }
    log_info("cred: container-credentials endpoint on http://%s%s%s:%d/role/<role name> (%zu roles)%s",
             strchr(bind_address, ':') ? "[" : "", bind_address, strchr(bind_address, ':') ? "]" : "",
             http_port(ep->http), iam_store_role_count(st),
             token ? ", Authorization token required (iam.credentials.authorization.token)" : "");
    bool wildcard = !strcmp(bind_address, "0.0.0.0") || !strcmp(bind_address, "::");
    if (wildcard && !token)
        log_warn("cred: the credentials endpoint listens on %s without iam.credentials.authorization.token: any "
                 "host that reaches port %d gets every role's secret key and session token", bind_address,
                 http_port(ep->http));
    *out = ep;
    return 0;
}

int cred_endpoint_port(const cred_endpoint *ep) { return ep ? http_port(ep->http) : 0; }

void cred_endpoint_close(cred_endpoint *ep) {
    if (!ep) return;
    http_close(ep->http);
    free(ep->token);
    free(ep);
}
