/* The ready file and the --probe health check (ready.h). */
#include "ready.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/ssl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admin/admin.h"
#include "aws/aws.h"
#include "clock.h"
#include "iam/authz.h"
#include "iam/sasl.h"
#include "net/net.h"
#include "net/tls.h"

/* "host:port,host:port,..." of every broker's listener of kind k: a client's bootstrap list. */
static json_t *bootstrap(const srv *s, listener_kind k) {
    char list[4096];
    size_t off = 0;
    for (int i = 0; i < s->nnodes && off < sizeof list; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s:%d", i ? "," : "", lsn_cfg_host(s->cfg, k),
                                s->nodes[i].ports[k]);
    return json_string(list);
}

/* The URL of one of the HTTP listeners: a wildcard bind is reached on the loopback address. */
typedef struct url_buf {
    char s[128];
} url_buf;

static url_buf listener_url(const config *cfg, const char *scheme, int port) {
    const char *b = cfg->bind_address;
    const char *host = !strcmp(b, "0.0.0.0") ? "127.0.0.1" : !strcmp(b, "::") ? "::1" : b;
    url_buf u;
    snprintf(u.s, sizeof u.s, "%s://%s%s%s:%d", scheme, strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
             port);
    return u;
}

/*
 * The clusters the control plane created that serve (CreateClusterV2; docs/control-plane.md):
 * name, ARN, type, a bootstrap list per listener kind. Apart from "brokers", which the probe dials:
 * the configured cluster's health is the process's.
 */
static json_t *created_clusters(const srv *s) {
    json_t *list = json_array();
    for (int i = 0; s->fleet && i < s->fleet->n; i++) {
        const cluster *c = s->fleet->list[i];
        if (c->primary || !c->s || cluster_state_now(c) == CLUSTER_DELETING) continue;
        json_t *boot = json_object();
        for (int k = 0; k < LSN_COUNT; k++)
            if (c->s->nnodes && c->s->nodes[0].ports[k])
                json_object_set_new(boot, lsn_name((listener_kind)k), bootstrap(c->s, (listener_kind)k));
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:o}", "name", c->name, "arn", c->arn, "type",
                                              c->serverless ? "SERVERLESS" : "PROVISIONED", "bootstrap", boot));
    }
    return list;
}

/* What a test needs to connect: every bound port, a bootstrap list per listener kind, the CA. */
static json_t *ready_doc(const srv *s) {
    const config *cfg = s->cfg;
    json_t *brokers = json_array();
    for (int i = 0; i < s->nnodes; i++) {
        json_t *ports = json_object();
        for (int k = 0; k < LSN_COUNT; k++)
            if (s->nodes[i].ports[k]) json_object_set_new(ports, lsn_name((listener_kind)k), json_integer(s->nodes[i].ports[k]));
        json_array_append_new(brokers, json_pack("{s:i, s:o}", "id", (int)s->nodes[i].id, "ports", ports));
    }
    json_t *boot = json_object();
    for (int k = 0; k < LSN_COUNT; k++)
        if (s->nnodes && s->nodes[0].ports[k]) json_object_set_new(boot, lsn_name((listener_kind)k), bootstrap(s, (listener_kind)k));
    json_t *doc = json_pack("{s:i, s:s, s:s, s:s, s:s, s:o, s:o, s:I, s:s}", "pid", (int)getpid(), "version",
                            MSKMOCK_VERSION, "bind_address", cfg->bind_address, "advertised_host", cfg->advertised_host,
                            "external_advertised_host", cfg->external_advertised_host, "brokers", brokers,
                            "bootstrap", boot, "credentials_port", (json_int_t)sasl_credentials_port(s),
                            "cluster_arn", authz_cluster_arn(s));
    const char *ca = s->tls ? tls_ctx_ca_file(s->tls) : NULL;
    json_object_set_new(doc, "ca_file", ca ? json_string(ca) : json_null());
    json_object_set_new(doc, "admin_port", json_integer(admin_port(s)));
    if (admin_port(s)) json_object_set_new(doc, "admin_url", json_string(listener_url(cfg, "http", admin_port(s)).s));
    json_object_set_new(doc, "aws_port", json_integer(aws_port(s)));
    if (aws_port(s))
        json_object_set_new(doc, "aws_url", json_string(listener_url(cfg, cfg->aws_tls ? "https" : "http", aws_port(s)).s));
    json_object_set_new(doc, "clusters", created_clusters(s));
    return doc;
}

void ready_announce(const srv *s) {
    json_t *doc = ready_doc(s);
    char *line = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!line) return;
    /* one line, flushed: a harness reading the pipe learns the ports (ports.auto) without a file */
    printf("mskmock ready %s\n", line);
    fflush(stdout);
    free(line);
}

int ready_write(const srv *s, char *err, size_t errlen) {
    const config *cfg = s->cfg;
    if (!*cfg->ready_file) return 0;
    json_t *doc = ready_doc(s);

    /* written beside the target and renamed over it: a reader sees all of it or nothing */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", cfg->ready_file, (int)getpid());
    int rc = json_dump_file(doc, tmp, JSON_INDENT(2));
    json_decref(doc);
    if (rc != 0 || rename(tmp, cfg->ready_file) != 0) {
        snprintf(err, errlen, "ready.file %s: cannot write it: %s", cfg->ready_file, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void ready_remove(const config *cfg) {
    if (*cfg->ready_file) unlink(cfg->ready_file);
}

/* ---- the probe ---- */

typedef struct target {
    int port;
    bool kafka; /* a Kafka listener: ask ApiVersions (over TLS on a TLS one); else only connect */
    bool tls;
    const char *what;
} target;

/* A connection to host:port within the deadline, or -1 with why filled. */
static int dial(const char *host, int port, int64_t deadline, char *why, size_t n) {
    struct sockaddr_storage a;
    socklen_t alen;
    memset(&a, 0, sizeof a);
    if (strchr(host, ':')) {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a;
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &v6->sin6_addr) != 1) goto bad;
        alen = sizeof *v6;
    } else {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&a;
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &v4->sin_addr) != 1) goto bad;
        alen = sizeof *v4;
    }
    int fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, n, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, alen) != 0 && errno != EINPROGRESS) {
        snprintf(why, n, "connect %s:%d: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int left = (int)(deadline - clk_mono_ms());
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (left <= 0 || poll(&p, 1, left) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr) {
        snprintf(why, n, "connect %s:%d: %s", host, port, soerr ? strerror(soerr) : "timed out");
        close(fd);
        return -1;
    }
    return fd;
bad:
    snprintf(why, n, "'%s' is not an IP address", host);
    return -1;
}

/* Moves exactly len bytes within the deadline, through TLS when ssl is set. */
static int io_all(int fd, SSL *ssl, void *buf, size_t len, bool out, int64_t deadline) {
    size_t done = 0;
    while (done < len) {
        struct pollfd p = {fd, out ? POLLOUT : POLLIN, 0};
        if (ssl && !out && SSL_pending(ssl) > 0) p.revents = POLLIN;
        else {
            int left = (int)(deadline - clk_mono_ms());
            if (left <= 0 || poll(&p, 1, left) != 1) return -1;
        }
        ssize_t r;
        if (ssl) {
            int k = out ? SSL_write(ssl, (char *)buf + done, (int)(len - done)) : SSL_read(ssl, (char *)buf + done, (int)(len - done));
            if (k <= 0) {
                int e = SSL_get_error(ssl, k);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
                return -1;
            }
            r = k;
        } else {
            r = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL) : recv(fd, (char *)buf + done, len - done, 0);
            if (r <= 0) return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

/* A TLS session on fd within the deadline; the certificate is not checked (this is a liveness check). */
static SSL *tls_open(int fd, int64_t deadline, char *why, size_t n) {
    static SSL_CTX *ctx;
    if (!ctx && !(ctx = SSL_CTX_new(TLS_client_method()))) goto fail;
    SSL *ssl = SSL_new(ctx);
    if (!ssl) goto fail;
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, PROBE_CLIENT_ID); /* the broker logs the handshake at debug */
    for (;;) {
        int k = SSL_connect(ssl);
        if (k == 1) return ssl;
        int e = SSL_get_error(ssl, k);
        struct pollfd p = {fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 0};
        int left = (int)(deadline - clk_mono_ms());
        if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) || left <= 0 || poll(&p, 1, left) != 1) break;
    }
    SSL_free(ssl);
fail:
    snprintf(why, n, "TLS handshake failed");
    return NULL;
}

static uint32_t get_u32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/*
 * ApiVersions v2 (the serverless floor; v0-2 share the request, and the answer starts with the
 * error code): the listener parses and answers Kafka requests.
 */
static int ask_api_versions(int fd, SSL *ssl, int64_t deadline, char *why, size_t n) {
    /* size, api key 18, version 2, correlation id, client id (the broker logs its connections at debug) */
    static const uint8_t req[] = {0, 0, 0, 23, 0, 18, 0, 2, 0x70, 0x72, 0x6f, 0x62, 0, 13,
                                  'm', 's', 'k', 'm', 'o', 'c', 'k', '-', 'p', 'r', 'o', 'b', 'e'};
    _Static_assert(sizeof req == 4 + 23 && sizeof PROBE_CLIENT_ID - 1 == 13, "the probe's request frame");
    uint8_t head[10];
    if (io_all(fd, ssl, (void *)req, sizeof req, true, deadline) != 0 ||
        io_all(fd, ssl, head, sizeof head, false, deadline) != 0) {
        snprintf(why, n, "no ApiVersions answer");
        return -1;
    }
    uint32_t size = get_u32(head), corr = get_u32(head + 4);
    int16_t code = (int16_t)(head[8] << 8 | head[9]);
    if (size < 6 || corr != get_u32(req + 8)) {
        snprintf(why, n, "ApiVersions answer malformed (size %u, correlation id %u)", size, corr);
        return -1;
    }
    /* 35 (UNSUPPORTED_VERSION): a higher floor on ApiVersions (api.versions.min) still answers, in v0 */
    if (code != 0 && code != 35) {
        snprintf(why, n, "ApiVersions answered error %d", code);
        return -1;
    }
    return 0;
}

/* The ports to check: from the ready file when there is one, else from the configuration. */
static int collect(const config *cfg, target *t, int max, int *nt, char *host, size_t hostlen, char *why, size_t n) {
    const char *bind = cfg->bind_address;
    json_t *doc = NULL;
    *nt = 0;
    if (*cfg->ready_file) {
        json_error_t je;
        doc = json_load_file(cfg->ready_file, 0, &je);
        if (!doc) {
            snprintf(why, n, "not ready: %s: %s", cfg->ready_file, errno == ENOENT ? "no such file" : je.text);
            return -1;
        }
        const char *b = json_string_value(json_object_get(doc, "bind_address"));
        if (b) bind = b;
    }
    /* a wildcard bind answers on loopback */
    snprintf(host, hostlen, "%s", !strcmp(bind, "0.0.0.0") ? "127.0.0.1" : !strcmp(bind, "::") ? "::1" : bind);
    if (doc) {
        size_t i;
        json_t *b;
        /*
         * The file says every listener was bound, so one broker's listeners suffice: one answer
         * per kind proves the loop serves and that kind's stack (TLS, SASL) works. A check a
         * second, as containers run it, then costs a few milliseconds.
         */
        json_array_foreach(json_object_get(doc, "brokers"), i, b) {
            if (i > 0) break;
            for (int k = 0; k < LSN_COUNT; k++) {
                json_int_t port = json_integer_value(json_object_get(json_object_get(b, "ports"), lsn_name((listener_kind)k)));
                if (port > 0 && *nt < max) t[(*nt)++] = (target){(int)port, true, lsn_tls((listener_kind)k), lsn_name((listener_kind)k)};
            }
        }
        json_int_t cp = json_integer_value(json_object_get(doc, "credentials_port"));
        if (cp > 0 && *nt < max) t[(*nt)++] = (target){(int)cp, false, false, "credentials"};
        json_decref(doc);
    } else if (cfg->ports_auto) {
        snprintf(why, n, "ports.auto: the ports are the OS's pick; set ready.file so the probe can read them");
        return -1;
    } else {
        const int64_t base[LSN_COUNT] = {cfg->plaintext_port, cfg->iam_port, cfg->sasl_plaintext_port, cfg->external_port,
                                         cfg->external_iam_port};
        for (int i = 0; i < (int)cfg->broker_count; i++)
            for (int k = 0; k < LSN_COUNT; k++)
                if (base[k] && *nt < max) t[(*nt)++] = (target){(int)(base[k] + i), true, lsn_tls((listener_kind)k), lsn_name((listener_kind)k)};
        if (cfg->iam_credentials_port && *nt < max) t[(*nt)++] = (target){(int)cfg->iam_credentials_port, false, false, "credentials"};
    }
    if (*nt == 0) {
        snprintf(why, n, "no listener to check");
        return -1;
    }
    return 0;
}

/* Asks every listener collect() names; 0 with *nt and host filled, or -1 with why. */
static int probe_all(const config *cfg, int timeout_ms, int *nt_out, char *host, size_t hostlen, char *why, size_t n) {
    target t[CFG_MAX_BROKERS * LSN_COUNT + 1];
    int nt;
    if (collect(cfg, t, (int)(sizeof t / sizeof t[0]), &nt, host, hostlen, why, n) != 0) return -1;
    for (int i = 0; i < nt; i++) {
        int64_t deadline = clk_mono_ms() + timeout_ms;
        int fd = dial(host, t[i].port, deadline, why, n);
        bool ok = fd >= 0;
        if (ok && t[i].kafka) {
            SSL *ssl = t[i].tls ? tls_open(fd, deadline, why, n) : NULL;
            ok = (!t[i].tls || ssl) && ask_api_versions(fd, ssl, deadline, why, n) == 0;
            if (ssl) {
                SSL_shutdown(ssl);
                SSL_free(ssl);
            }
        }
        if (fd >= 0) close(fd);
        if (!ok) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", why);
            snprintf(why, n, "%s listener on %s:%d: %s", t[i].what, host, t[i].port, inner);
            return -1;
        }
    }
    *nt_out = nt;
    return 0;
}

int ready_probe(const config *cfg, int timeout_ms) {
    int nt;
    char host[256], why[1024];
    if (probe_all(cfg, timeout_ms, &nt, host, sizeof host, why, sizeof why) != 0) {
        printf("mskmock probe: %s\n", why);
        return 1;
    }
    printf("mskmock probe: ok, %d listener(s) on %s answered\n", nt, host);
    return 0;
}

/* ---- --wait-ready ---- */

/* Whether pid runs: a zombie (exited, not yet reaped by whoever started it) does not. */
static bool running(long pid) {
    if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM)) return false;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return true; /* no /proc: kill() said it exists */
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold spaces */
    return !(close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z');
}

/* The last lines of the broker's log, where it said why it stopped. */
static void print_tail(const char *log_file, int lines) {
    if (!log_file) {
        printf("mskmock wait-ready: its log says why (--log FILE shows it here)\n");
        return;
    }
    FILE *f = fopen(log_file, "r");
    if (!f) {
        printf("mskmock wait-ready: cannot read its log %s: %s\n", log_file, strerror(errno));
        return;
    }
    static char ring[64][1024];
    long n = 0;
    while (fgets(ring[n % 64], sizeof ring[0], f)) n++;
    fclose(f);
    if (lines > 64) lines = 64;
    printf("mskmock wait-ready: the last lines of %s:\n", log_file);
    for (long i = n > lines ? n - lines : 0; i < n; i++) {
        const char *l = ring[i % 64];
        printf("  %s%s", l, l[0] && l[strlen(l) - 1] == '\n' ? "" : "\n");
    }
}

static const char *or_off(const json_t *v) { return json_string_value(v) ? json_string_value(v) : "off"; }

int ready_wait(const char *file, long pid, const char *log_file, int timeout_ms) {
    static config cfg; /* what collect() reads: the ready file and, absent one in it, a bind address */
    cfg.ready_file = (char *)file;
    cfg.bind_address = (char *)"127.0.0.1";
    int64_t deadline = clk_mono_ms() + timeout_ms;
    char why[1024] = "no such file yet";
    for (;;) {
        if (pid > 0 && !running(pid)) {
            printf("mskmock wait-ready: the broker (pid %ld) exited before it was ready\n", pid);
            print_tail(log_file, 20);
            return 1;
        }
        json_error_t je;
        json_t *doc = json_load_file(file, 0, &je);
        if (doc) {
            long fpid = (long)json_integer_value(json_object_get(doc, "pid"));
            json_t *boot = json_object_get(doc, "bootstrap");
            char line[1024];
            snprintf(line, sizeof line, "plaintext %s, iam %s, admin %s", or_off(json_object_get(boot, "plaintext")),
                     or_off(json_object_get(boot, "iam")), or_off(json_object_get(doc, "admin_url")));
            json_decref(doc);
            int nt;
            char host[256];
            /* a file whose broker is gone is a killed broker's: the next one to start replaces it */
            if (pid > 0 && fpid != pid)
                snprintf(why, sizeof why, "%s was written by pid %ld, not %ld", file, fpid, pid);
            else if (!running(fpid))
                snprintf(why, sizeof why, "%s was written by pid %ld, which is gone", file, fpid);
            else if (probe_all(&cfg, 1000, &nt, host, sizeof host, why, sizeof why) == 0) {
                printf("mskmock wait-ready: ok, pid %ld serves (%d listener(s) answered): %s\n", fpid, nt, line);
                return 0;
            }
        } else if (errno != ENOENT) {
            snprintf(why, sizeof why, "%s: %s", file, je.text);
        }
        if (clk_mono_ms() >= deadline) {
            printf("mskmock wait-ready: not ready after %d ms: %s\n", timeout_ms, why);
            print_tail(log_file, 20);
            return 1;
        }
        usleep(50 * 1000);
    }
}
