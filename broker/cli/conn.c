/* Blocking Kafka connections and the cluster view of the CLI (conn.h). */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "kp_mem.h"

#define MAX_FRAME (256 << 20) /* an answer larger than this is not believed */
#define APIV_FIRST 3          /* Kafka 2.4+; an older broker answers v0 with its range */

int cli_dial(const char *host, int port, int timeout_ms, char *err, size_t n) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        snprintf(err, n, "%s:%d: %s", host, port, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    snprintf(err, n, "%s:%d: no address", host, port);
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        int soerr = 0;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            soerr = errno;
            if (soerr == EINPROGRESS) {
                struct pollfd p = {fd, POLLOUT, 0};
                socklen_t sl = sizeof soerr;
                int k = poll(&p, 1, timeout_ms);
                if (k != 1) soerr = ETIMEDOUT;
                else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) soerr = errno;
            }
        }
        if (!soerr) break;
        snprintf(err, n, "connect %s:%d: %s", host, port, strerror(soerr));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* Moves exactly len bytes before the deadline: the one place bytes cross the socket. */
static int conn_io(cli_conn *c, void *buf, size_t len, bool out, int64_t deadline, char *err, size_t n) {
    if (c->ssl) return cli_tls_io(c, buf, len, out, deadline, err, n);
    size_t done = 0;
    while (done < len) {
        struct pollfd p = {c->fd, out ? POLLOUT : POLLIN, 0};
        int left = (int)(deadline - clk_mono_ms());
        if (left <= 0 || poll(&p, 1, left) != 1) {
            snprintf(err, n, "%s: no answer within %d ms", c->addr, c->o->timeout_ms);
            return -1;
        }
        ssize_t r = out ? send(c->fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                        : recv(c->fd, (char *)buf + done, len - done, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (r <= 0) {
            /* a broker closes the connection, unanswered, on a request below its version floor */
            snprintf(err, n, "%s: connection %s", c->addr, r == 0 ? "closed by the broker" : strerror(errno));
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

static int send_req(cli_conn *c, const kp_msg *m, int16_t ver, const void *req, int64_t deadline, char *err,
                    size_t n) {
    bool flex = kp_is_flex(m, ver);
    kp_writer w;
    kp_writer_init(&w, 256);
    kp_wr_i32(&w, 0); /* the size, patched below */
    kp_wr_i16(&w, m->key);
    kp_wr_i16(&w, ver);
    kp_wr_i32(&w, ++c->corr);
    size_t idlen = strlen(c->o->client_id);
    kp_wr_i16(&w, (int16_t)idlen);
    kp_wr_raw(&w, c->o->client_id, idlen);
    if (flex) kp_wr_uvarint(&w, 0); /* request header v2: no tagged fields */
    kp_encode(&w, m->req, ver, flex, req);
    kp_put_i32(w.buf, (int32_t)(w.len - 4));
    int rc = conn_io(c, w.buf, w.len, true, deadline, err, n);
    kp_writer_free(&w);
    return rc;
}

/* The answer's body (after the correlation id) into the arena. */
static int recv_resp(cli_conn *c, const kp_msg *m, kp_arena *a, int64_t deadline, const uint8_t **body,
                     size_t *len, char *err, size_t n) {
    uint8_t head[4];
    if (conn_io(c, head, 4, false, deadline, err, n) != 0) return -1;
    int32_t size = kp_get_i32(head);
    if (size < 4 || size > MAX_FRAME) {
        snprintf(err, n, "%s: %s answer of %d bytes: not believed", c->addr, m->name, size);
        return -1;
    }
    uint8_t *buf = kp_arena_alloc(a, (size_t)size);
    if (conn_io(c, buf, (size_t)size, false, deadline, err, n) != 0) return -1;
    if (kp_get_i32(buf) != c->corr) {
        snprintf(err, n, "%s: %s answer has correlation id %d, expected %d", c->addr, m->name, kp_get_i32(buf), c->corr);
        return -1;
    }
    *body = buf + 4;
    *len = (size_t)size - 4;
    return 0;
}

static int decode(cli_conn *c, const kp_msg *m, int16_t ver, bool hflex, const uint8_t *body, size_t len, void *resp,
                  kp_arena *a, char *err, size_t n) {
    kp_reader r;
    kp_reader_init(&r, body, len);
    if (hflex) { /* response header v1: tagged fields, none of which we read */
        uint64_t ntags = 0, tag, sz;
        const uint8_t *skip;
        if (kp_rd_uvarint(&r, &ntags) && ntags > kp_rd_left(&r)) kp_rd_fail(&r, "tag count exceeds the answer");
        for (uint64_t i = 0; !r.err && i < ntags; i++)
            if (kp_rd_uvarint(&r, &tag) && kp_rd_uvarint(&r, &sz)) {
                if (sz > kp_rd_left(&r)) kp_rd_fail(&r, "tagged field runs past the answer");
                else kp_rd_raw(&r, (size_t)sz, &skip);
            }
    }
    if (!r.err) kp_decode(&r, m->resp, ver, kp_is_flex(m, ver), resp, a);
    if (r.err) {
        snprintf(err, n, "%s: malformed %s v%d answer: %s at byte %zu", c->addr, m->name, ver, r.err, r.err_pos);
        return -1;
    }
    return 0;
}

static int conn_start(cli_conn *c, char *err, size_t n);

/*
 * KIP-368: a broker closes a connection whose session ended at its next request, so a long
 * consume authenticates again first; should that fail (a broker that refuses re-authentication
 * so soon, say), a new connection authenticates from the start.
 */
static int reauthenticate(cli_conn *c, char *err, size_t n) {
    if (cli_sasl_login(c, err, n) == 0) return 0;
    cli_tls_close(c);
    close(c->fd);
    c->fd = -1;
    c->reauth_at_ms = 0;
    char why[1024];
    snprintf(why, sizeof why, "%s", err);
    if (conn_start(c, err, n) == 0) return 0;
    size_t l = strlen(err);
    snprintf(err + l, n - l, " (reconnecting after a failed re-authentication: %s)", why);
    return -1;
}

int cli_call(cli_conn *c, const kp_msg *m, int16_t ver, const void *req, void *resp, kp_arena *a, char *err,
             size_t n) {
    if (c->reauth_at_ms && clk_mono_ms() >= c->reauth_at_ms && reauthenticate(c, err, n) != 0) return -1;
    int64_t deadline = clk_mono_ms() + c->o->timeout_ms + c->wait_ms;
    if (send_req(c, m, ver, req, deadline, err, n) != 0) return -1;
    if (!resp) return 0;
    const uint8_t *body;
    size_t len;
    if (recv_resp(c, m, a, deadline, &body, &len, err, n) != 0) return -1;
    return decode(c, m, ver, kp_resp_header_flex(m, ver), body, len, resp, a, err, n);
}

/* ApiVersions: v3 first; a broker without it answers UNSUPPORTED_VERSION in v0 with its range. */
static int negotiate(cli_conn *c, char *err, size_t n) {
    const kp_msg *m = &kp_msg_api_versions;
    int16_t ver = APIV_FIRST;
    for (int attempt = 0; attempt < 2; attempt++) {
        kp_arena a = {0};
        kp_api_versions_request req;
        kp_defaults(m->req, ver, &req);
        req.client_software_name = kp_str_c("mskmock-cli");
        req.client_software_version = kp_str_c(MSKMOCK_VERSION);
        const uint8_t *body;
        size_t len;
        int64_t deadline = clk_mono_ms() + c->o->timeout_ms;
        if (send_req(c, m, ver, &req, deadline, err, n) != 0 || recv_resp(c, m, &a, deadline, &body, &len, err, n) != 0) {
            kp_arena_free(&a);
            return -1;
        }
        /* the error code leads every version; UNSUPPORTED_VERSION comes in v0 */
        bool unsupported = len >= 2 && kp_get_i16(body) == KERR_UNSUPPORTED_VERSION;
        kp_api_versions_response resp;
        if (decode(c, m, unsupported ? 0 : ver, false, body, len, &resp, &a, err, n) != 0) {
            kp_arena_free(&a);
            return -1;
        }
        if (resp.error_code && !unsupported) {
            snprintf(err, n, "%s: ApiVersions answered %s", c->addr, kp_err_name(resp.error_code));
            kp_arena_free(&a);
            return -1;
        }
        for (int k = 0; k < CLI_MAX_API; k++) c->api_min[k] = 0, c->api_max[k] = -1;
        int16_t theirs = -1;
        for (int32_t i = 0; i < resp.api_keys.n; i++) {
            const kp_api_versions_api_version *v = &resp.api_keys.v[i];
            if (v->api_key == m->key) theirs = v->max_version;
            if (v->api_key >= 0 && v->api_key < CLI_MAX_API) {
                c->api_min[v->api_key] = v->min_version;
                c->api_max[v->api_key] = v->max_version;
            }
        }
        kp_arena_free(&a);
        if (!unsupported) return 0;
        if (theirs < 0 || theirs >= ver) break;
        ver = theirs;
    }
    snprintf(err, n, "%s: no ApiVersions version both sides serve", c->addr);
    return -1;
}

static bool last_dialed; /* whether the last conn_start got past the dial, for cli_cluster_open's message */

/* Dial, TLS, ApiVersions, SASL: a connection ready for requests. */
static int conn_start(cli_conn *c, char *err, size_t n) {
    c->fd = cli_dial(c->host, c->port, c->o->timeout_ms, err, n);
    last_dialed = c->fd >= 0;
    if (c->fd < 0) return -1;
    if (c->o->tls && cli_tls_start(c, clk_mono_ms() + c->o->timeout_ms, err, n) != 0) return -1;
    if (negotiate(c, err, n) != 0) return -1;
    return c->o->sasl ? cli_sasl_login(c, err, n) : 0;
}

cli_conn *cli_conn_open(const cli_opts *o, const char *host, int port, char *err, size_t n) {
    cli_conn *c = xcalloc(1, sizeof *c);
    c->o = o;
    snprintf(c->host, sizeof c->host, "%s", host);
    c->port = port;
    snprintf(c->addr, sizeof c->addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    if (conn_start(c, err, n) != 0) {
        cli_conn_close(c);
        return NULL;
    }
    return c;
}

void cli_conn_close(cli_conn *c) {
    if (!c) return;
    cli_tls_close(c);
    if (c->fd >= 0) close(c->fd);
    free(c);
}

int16_t cli_version(const cli_conn *c, const kp_msg *m, char *err, size_t n) {
    int16_t theirs_max = m->key >= 0 && m->key < CLI_MAX_API ? c->api_max[m->key] : -1;
    int16_t theirs_min = theirs_max >= 0 ? c->api_min[m->key] : 0;
    int16_t hi = theirs_max < m->vmax ? theirs_max : m->vmax;
    int16_t lo = theirs_min > m->vmin ? theirs_min : m->vmin;
    if (theirs_max < 0 || hi < lo) {
        if (theirs_max < 0) snprintf(err, n, "%s does not serve %s", c->addr, m->name);
        else
            snprintf(err, n, "%s serves %s v%d-%d, this client v%d-%d", c->addr, m->name, theirs_min, theirs_max,
                     m->vmin, m->vmax);
        return -1;
    }
    return hi;
}

/* ---- the cluster ---- */

/* host:port from "host:port" or "[v6]:port"; a missing port is 9092. */
static int split_addr(const char *s, size_t len, char *host, size_t hn, int *port) {
    const char *colon = NULL;
    const char *h = s;
    size_t hl;
    if (len && s[0] == '[') {
        const char *close_b = memchr(s, ']', len);
        if (!close_b) return -1;
        h = s + 1;
        hl = (size_t)(close_b - h);
        colon = close_b + 1 < s + len && close_b[1] == ':' ? close_b + 1 : NULL;
    } else {
        colon = memrchr(s, ':', len);
        hl = colon ? (size_t)(colon - s) : len;
    }
    if (hl == 0 || hl >= hn) return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    *port = 9092;
    if (colon) {
        char ps[8];
        size_t pl = (size_t)(s + len - colon - 1);
        if (pl == 0 || pl >= sizeof ps) return -1;
        memcpy(ps, colon + 1, pl);
        ps[pl] = 0;
        char *end;
        long p = strtol(ps, &end, 10);
        if (*end || p <= 0 || p > 65535) return -1;
        *port = (int)p;
    }
    return 0;
}

int cli_cluster_open(cli_cluster *cl, cli_opts *o, char *err, size_t n) {
    memset(cl, 0, sizeof *cl);
    cl->o = o;
    cl->controller = -1;
    if (cli_auth_setup(o, err, n) != 0) {
        cli_auth_free(o);
        return -1;
    }
    if (!o->bootstrap) o->bootstrap = cli_default_bootstrap(o);
    const char *s = o->bootstrap;
    char why[512] = "empty bootstrap list";
    while (*s) {
        size_t len = strcspn(s, ",");
        char host[256];
        int port;
        if (len && split_addr(s, len, host, sizeof host, &port) != 0) {
            snprintf(err, n, "bootstrap: '%.*s' is not HOST:PORT", (int)len, s);
            cli_auth_free(o);
            return -1;
        }
        if (len && (cl->boot = cli_conn_open(o, host, port, why, sizeof why))) return 0;
        s += len;
        if (*s == ',') s++;
    }
    /* a broker that answered and refused (TLS, SASL) says why itself */
    if (last_dialed) snprintf(err, n, "%s", why);
    else snprintf(err, n, "no bootstrap broker answered (%s): %s", o->bootstrap, why);
    cli_auth_free(o);
    return -1;
}

void cli_cluster_close(cli_cluster *cl) {
    for (int i = 0; i < cl->nb; i++) cli_conn_close(cl->b[i].c);
    cli_conn_close(cl->boot);
    if (cl->o) cli_auth_free(cl->o);
    memset(cl, 0, sizeof *cl);
}

int cli_metadata(cli_cluster *cl, const char *topic, kp_metadata_response *out, kp_arena *a, char *err, size_t n) {
    const kp_msg *m = &kp_msg_metadata;
    int16_t ver = cli_version(cl->boot, m, err, n);
    if (ver < 0) return -1;
    kp_metadata_request req;
    kp_defaults(m->req, ver, &req);
    req.allow_auto_topic_creation = false;
    if (topic) {
        kp_metadata_request_topic *t = kp_arena_alloc(a, sizeof *t);
        kp_defaults(&kp_metadata_request_topic_schema, ver, t);
        t->name = kp_str_c(topic);
        req.topics.n = 1;
        req.topics.v = t;
    } else {
        /* v0 has no null array: an empty one means every topic there */
        req.topics.n = ver >= 1 ? -1 : 0;
    }
    if (cli_call(cl->boot, m, ver, &req, out, a, err, n) != 0) return -1;
    cl->controller = out->controller_id;
    for (int32_t i = 0; i < out->brokers.n; i++) {
        const kp_metadata_response_broker *b = &out->brokers.v[i];
        int j = 0;
        while (j < cl->nb && cl->b[j].id != b->node_id) j++;
        if (j == cl->nb) {
            if (cl->nb == CLI_MAX_BROKERS || b->host.len <= 0 || (size_t)b->host.len >= sizeof cl->b[j].host) continue;
            cl->nb++;
            cl->b[j] = (cli_broker){.id = b->node_id};
        }
        if (cl->b[j].c) continue; /* keep an open connection */
        memcpy(cl->b[j].host, b->host.p, (size_t)b->host.len);
        cl->b[j].host[b->host.len] = 0;
        cl->b[j].port = b->port;
    }
    return 0;
}

cli_conn *cli_node(cli_cluster *cl, int32_t id, char *err, size_t n) {
    for (int i = 0; i < cl->nb; i++) {
        cli_broker *b = &cl->b[i];
        if (b->id != id) continue;
        if (!b->c) b->c = cli_conn_open(cl->o, b->host, b->port, err, n);
        return b->c;
    }
    snprintf(err, n, "broker %d is not in the cluster's metadata", id);
    return NULL;
}

const char *cli_err_text(int16_t code, kp_str message, char *buf, size_t n) {
    if (message.len > 0) snprintf(buf, n, "%s: %.*s", kp_err_name(code), (int)message.len, message.p);
    else snprintf(buf, n, "%s", kp_err_name(code));
    return buf;
}
