/*
 * cred_endpoint: container-credentials HTTP endpoint; see cred_endpoint.h. The HTTP layer
 * (sockets, parsing, limits, framing, the request's log line) is broker/http.
 */
#include "cred_endpoint.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "http/http.h"
#include "iam_token.h"
#include "kp_mem.h"
#include "log.h"

struct cred_endpoint {
    http_server *http;
    iam_store *st;
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
    char account[64] = "";
    const char *p = arn;
    for (int i = 0; i < 4 && p; i++) p = strchr(p, ':'), p = p ? p + 1 : NULL;
    if (p) {
        const char *e = strchr(p, ':');
        size_t al = e ? (size_t)(e - p) : 0;
        if (al < sizeof account) memcpy(account, p, al), account[al] = '\0';
    }
    http_json(rs, 200,
              json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "AccessKeyId", cr->access_key_id, "SecretAccessKey",
                        cr->secret_access_key, "Token", cr->session_token ? cr->session_token : "", "Expiration", when,
                        "RoleArn", arn, "AccountId", account));
    /* the access key id is not secret; the secret key and the token never reach the log */
    snprintf(rs->detail, sizeof rs->detail, "role=%s access_key_id=%s expiration=%s%s", role,
             cr->access_key_id, when,
             cr->expiry_ms >= 0 && cr->expiry_ms <= now ? " (already expired: rotation is off or late)" : "");
}

static void route(void *ctx, const http_req *rq, http_resp *rs) {
    const cred_endpoint *ep = ctx;
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

int cred_endpoint_start(uv_loop_t *loop, const char *bind_address, int port, iam_store *st, cred_endpoint **out,
                        char *err, size_t n) {
    *out = NULL;
    cred_endpoint *ep = xcalloc(1, sizeof *ep);
    ep->st = st;
    http_opts opts = {.name = "cred", .port_key = "iam.credentials.port", .max_body = 65536,
                      .max_clients = CRED_MAX_CLIENTS,
                      .timeout_ms = CRED_CLIENT_TIMEOUT_MS};
    if (http_start(loop, bind_address, port, &opts, route, ep, &ep->http, err, n) != 0) {
        free(ep);
        return -1;
    }
    log_info("cred: container-credentials endpoint on http://%s%s%s:%d/role/<role name> (%zu roles)",
             strchr(bind_address, ':') ? "[" : "", bind_address, strchr(bind_address, ':') ? "]" : "",
             http_port(ep->http), iam_store_role_count(st));
    *out = ep;
    return 0;
}

int cred_endpoint_port(const cred_endpoint *ep) { return ep ? http_port(ep->http) : 0; }

void cred_endpoint_close(cred_endpoint *ep) {
    if (!ep) return;
    http_close(ep->http);
    free(ep);
}
