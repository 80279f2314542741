/* The AWS credential chain and region of the CLI (aws_creds.h). */
#include "aws_creds.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conn.h"
#include "kp_mem.h"

#define ECS_HOST "169.254.170.2"
#define MAX_HTTP_ANSWER (64 << 10)

/* ---- shared files ---- */

static const char *home_path(const char *env, const char *rel, char *buf, size_t n) {
    const char *v = getenv(env);
    if (v && *v) return v;
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    snprintf(buf, n, "%s/%s", home, rel);
    return buf;
}

static const char *profile_name(void) {
    const char *p = getenv("AWS_PROFILE");
    if (!p || !*p) p = getenv("AWS_DEFAULT_PROFILE"); /* botocore and the CLI read it too */
    return p && *p ? p : "default";
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

/*
 * Calls want(key, value) for each key of the section named section in the INI file at path. 1
 * when the section exists, 0 when it does not, -1 when the file cannot be read (a missing file
 * is 0, as for the SDKs).
 */
static int ini_section(const char *path, const char *section, void (*want)(void *, const char *, const char *),
                       void *ctx) {
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    char line[10240];
    bool in = false, found = false;
    while (fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || !*s) continue;
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (e) *e = 0;
            in = !strcmp(trim(s + 1), section);
            found |= in;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!in || !eq) continue;
        *eq = 0;
        want(ctx, trim(s), trim(eq + 1));
    }
    fclose(f);
    return found;
}

typedef struct profile_keys {
    cli_aws_creds *c;
    bool id, secret;
    char other[64]; /* a key naming a source this client does not follow */
} profile_keys;

static void take_key(void *ctx, const char *k, const char *v) {
    profile_keys *p = ctx;
    if (!strcmp(k, "aws_access_key_id")) {
        snprintf(p->c->access_key_id, sizeof p->c->access_key_id, "%s", v);
        p->id = *v;
    } else if (!strcmp(k, "aws_secret_access_key")) {
        snprintf(p->c->secret_access_key, sizeof p->c->secret_access_key, "%s", v);
        p->secret = *v;
    } else if (!strcmp(k, "aws_session_token")) {
        snprintf(p->c->session_token, sizeof p->c->session_token, "%s", v);
    } else if (!strcmp(k, "role_arn") || !strcmp(k, "credential_process") || !strcmp(k, "sso_session") ||
               !strcmp(k, "sso_start_url") || !strcmp(k, "web_identity_token_file")) {
        snprintf(p->other, sizeof p->other, "%s", k);
    }
}

/* 1 found, 0 not there, -1 error (err set). */
static int from_files(cli_aws_creds *out, bool *profile_seen, char *err, size_t n) {
    char b1[1024], b2[1024], section[300];
    const char *prof = profile_name();
    const char *files[2] = {home_path("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", b1, sizeof b1),
                            home_path("AWS_CONFIG_FILE", ".aws/config", b2, sizeof b2)};
    for (int i = 0; i < 2; i++) {
        if (!files[i]) continue;
        /* the config file names profiles "profile NAME", except default */
        if (i == 1 && strcmp(prof, "default")) snprintf(section, sizeof section, "profile %s", prof);
        else snprintf(section, sizeof section, "%s", prof);
        profile_keys k = {.c = out};
        memset(out, 0, sizeof *out);
        int rc = ini_section(files[i], section, take_key, &k);
        if (rc < 0) {
            snprintf(err, n, "%s: %s", files[i], strerror(errno));
            return -1;
        }
        if (!rc) continue;
        *profile_seen = true;
        if (k.id && k.secret) {
            out->expiry_ms = -1;
            snprintf(out->source, sizeof out->source, "profile %s in %s", prof, files[i]);
            return 1;
        }
        if (k.id || k.secret) {
            snprintf(err, n, "profile %s in %s has %s but no %s", prof, files[i],
                     k.id ? "aws_access_key_id" : "aws_secret_access_key",
                     k.id ? "aws_secret_access_key" : "aws_access_key_id");
            return -1;
        }
        if (*k.other) {
            snprintf(err, n, "profile %s in %s gets its credentials through %s, which this client does not follow "
                     "(export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN instead)",
                     prof, files[i], k.other);
            return -1;
        }
    }
    return 0;
}

/* ---- the container endpoint ---- */

static bool allowed_ip(const struct sockaddr *sa) {
    char s[INET6_ADDRSTRLEN] = "";
    if (sa->sa_family == AF_INET) {
        const struct in_addr *a = &((const struct sockaddr_in *)sa)->sin_addr;
        if ((ntohl(a->s_addr) >> 24) == 127) return true;
        inet_ntop(AF_INET, a, s, sizeof s);
        return !strcmp(s, ECS_HOST) || !strcmp(s, "169.254.170.23"); /* ECS, EKS Pod Identity */
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a)) return true;
        inet_ntop(AF_INET6, a, s, sizeof s);
        return !strcmp(s, "fd00:ec2::23");
    }
    return false;
}

int cli_container_url(const char *url, char *host, size_t hcap, int *port, char *path, size_t pcap, char *err,
                      size_t n) {
    if (!strncmp(url, "https://", 8)) {
        snprintf(err, n, "container credentials URI %s: https is not supported by this client (plain http to a "
                 "loopback or the ECS/EKS link-local address is)", url);
        return -1;
    }
    if (strncmp(url, "http://", 7)) {
        snprintf(err, n, "container credentials URI %s is not an http:// URL", url);
        return -1;
    }
    const char *h = url + 7, *slash = strchr(h, '/');
    size_t hl = slash ? (size_t)(slash - h) : strlen(h);
    const char *hend = h + hl, *colon = NULL;
    if (hl && *h == '[') { /* [v6]:port */
        const char *cb = memchr(h, ']', hl);
        if (!cb) goto bad;
        colon = cb + 1 < hend && cb[1] == ':' ? cb + 1 : NULL;
        if (cb - h - 1 <= 0 || (size_t)(cb - h - 1) >= hcap) goto bad;
        memcpy(host, h + 1, (size_t)(cb - h - 1));
        host[cb - h - 1] = 0;
    } else {
        colon = memchr(h, ':', hl);
        size_t l = colon ? (size_t)(colon - h) : hl;
        if (!l || l >= hcap) goto bad;
        memcpy(host, h, l);
        host[l] = 0;
    }
    *port = 80;
    if (colon) {
        char *e;
        long p = strtol(colon + 1, &e, 10);
        if (e != hend || p <= 0 || p > 65535) goto bad;
        *port = (int)p;
    }
    snprintf(path, pcap, "%s", slash ? slash : "/");
    /* the SDKs refuse plain HTTP to anything that is not loopback or the link-local endpoints */
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
        snprintf(err, n, "container credentials URI %s: cannot resolve %s", url, host);
        return -1;
    }
    bool ok = true;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) ok &= allowed_ip(ai->ai_addr);
    freeaddrinfo(res);
    if (!ok) {
        snprintf(err, n, "container credentials URI %s: plain http only to a loopback address, %s or "
                 "169.254.170.23, as the AWS SDKs allow", url, ECS_HOST);
        return -1;
    }
    return 0;
bad:
    snprintf(err, n, "container credentials URI %s is not http://HOST[:PORT]/PATH", url);
    return -1;
}

/* Undoes Transfer-Encoding: chunked in place; the body's length, or -1. */
static long unchunk(char *body, size_t len) {
    size_t in = 0, out = 0;
    for (;;) {
        char *e;
        unsigned long sz = strtoul(body + in, &e, 16);
        char *crlf = strstr(body + in, "\r\n");
        if (!crlf || e == body + in) return -1;
        in = (size_t)(crlf - body) + 2;
        if (!sz) return (long)out;
        if (sz > len - in) return -1;
        memmove(body + out, body + in, sz);
        out += sz;
        in += sz + 2;
        if (in > len) return -1;
    }
}

/* GET url; the JSON answer, or NULL with err. */
static json_t *http_get_json(const char *url, const char *authorization, int timeout_ms, char *err, size_t n) {
    char host[256], path[2048], req[8192], why[512];
    int port;
    if (cli_container_url(url, host, sizeof host, &port, path, sizeof path, err, n) != 0) return NULL;
    int len = snprintf(req, sizeof req,
                       "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: application/json\r\nUser-Agent: mskmock-cli\r\n"
                       "%s%s%sConnection: close\r\n\r\n",
                       path, host, port, authorization ? "Authorization: " : "", authorization ? authorization : "",
                       authorization ? "\r\n" : "");
    if (len < 0 || (size_t)len >= sizeof req) {
        snprintf(err, n, "container credentials request for %s too long", url);
        return NULL;
    }
    int fd = cli_dial(host, port, timeout_ms, why, sizeof why);
    if (fd < 0) {
        snprintf(err, n, "container credentials endpoint %s: %s", url, why);
        return NULL;
    }
    int64_t deadline = clk_mono_ms() + timeout_ms;
    char *buf = xmalloc(MAX_HTTP_ANSWER + 1);
    size_t got = 0, sent = 0;
    json_t *j = NULL;
    for (;;) {
        bool out = sent < (size_t)len;
        struct pollfd p = {fd, out ? POLLOUT : POLLIN, 0};
        int left = (int)(deadline - clk_mono_ms());
        if (left <= 0 || poll(&p, 1, left) != 1) {
            snprintf(err, n, "container credentials endpoint %s: no answer within %d ms", url, timeout_ms);
            goto out;
        }
        ssize_t r = out ? send(fd, req + sent, (size_t)len - sent, MSG_NOSIGNAL)
                        : recv(fd, buf + got, MAX_HTTP_ANSWER - got, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (r < 0) {
            snprintf(err, n, "container credentials endpoint %s: %s", url, strerror(errno));
            goto out;
        }
        if (out) sent += (size_t)r;
        else if (r == 0 || (got += (size_t)r) == MAX_HTTP_ANSWER) break;
    }
    buf[got] = 0;
    int status = 0;
    char *body = strstr(buf, "\r\n\r\n");
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1 || !body) {
        snprintf(err, n, "container credentials endpoint %s: not an HTTP answer", url);
        goto out;
    }
    *body = 0;
    body += 4;
    size_t blen = got - (size_t)(body - buf);
    for (char *h = strstr(buf, "\r\n"); h; h = strstr(h + 2, "\r\n"))
        if (!strncasecmp(h + 2, "transfer-encoding:", 18) && strstr(h + 20, "chunked")) {
            long u = unchunk(body, blen);
            if (u < 0) {
                snprintf(err, n, "container credentials endpoint %s: a broken chunked answer", url);
                goto out;
            }
            blen = (size_t)u;
            break;
        }
    body[blen] = 0;
    if (status != 200) {
        snprintf(err, n, "container credentials endpoint %s answered HTTP %d: %.300s", url, status, body);
        goto out;
    }
    json_error_t je;
    j = json_loadb(body, blen, 0, &je);
    if (!j) snprintf(err, n, "container credentials endpoint %s: the answer is not JSON (%s)", url, je.text);
out:
    close(fd);
    free(buf);
    return j;
}

/* 2006-01-02T15:04:05Z (fractions and an offset of Z only, as the endpoints send it) in ms. */
static int64_t parse_iso8601(const char *s) {
    struct tm tm = {0};
    const char *e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!e) return -1;
    return (int64_t)timegm(&tm) * 1000;
}

static int from_container(cli_aws_creds *out, int timeout_ms, char *err, size_t n) {
    const char *full = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    char url[2048], token[8192];
    if (rel && *rel) snprintf(url, sizeof url, "http://" ECS_HOST "%s", rel); /* RELATIVE wins, as in the SDKs */
    else if (full && *full) snprintf(url, sizeof url, "%s", full);
    else return 0;
    const char *auth = NULL;
    const char *tf = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    if (tf && *tf) { /* the file wins over the variable: EKS Pod Identity rotates it */
        FILE *f = fopen(tf, "r");
        if (!f || !fgets(token, sizeof token, f)) {
            snprintf(err, n, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s: %s", tf, f ? "empty" : strerror(errno));
            if (f) fclose(f);
            return -1;
        }
        fclose(f);
        auth = trim(token);
    } else if (getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN") && *getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
        auth = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    }
    if (auth && strpbrk(auth, "\r\n")) {
        snprintf(err, n, "the container authorization token holds a line break");
        return -1;
    }
    json_t *j = http_get_json(url, auth, timeout_ms, err, n);
    if (!j) return -1;
    const char *id = json_string_value(json_object_get(j, "AccessKeyId"));
    const char *secret = json_string_value(json_object_get(j, "SecretAccessKey"));
    const char *tok = json_string_value(json_object_get(j, "Token"));
    const char *exp = json_string_value(json_object_get(j, "Expiration"));
    int rc = -1;
    if (!id || !*id || !secret || !*secret) {
        snprintf(err, n, "container credentials endpoint %s: no AccessKeyId and SecretAccessKey in its answer", url);
    } else {
        memset(out, 0, sizeof *out);
        snprintf(out->access_key_id, sizeof out->access_key_id, "%s", id);
        snprintf(out->secret_access_key, sizeof out->secret_access_key, "%s", secret);
        snprintf(out->session_token, sizeof out->session_token, "%s", tok ? tok : "");
        out->expiry_ms = exp ? parse_iso8601(exp) : -1;
        snprintf(out->source, sizeof out->source, "the container credentials endpoint %s", url);
        rc = 1;
    }
    json_decref(j);
    return rc;
}

int cli_aws_creds_resolve(cli_aws_creds *out, int timeout_ms, char *err, size_t n) {
    const char *id = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
    bool has_id = id && *id, has_secret = secret && *secret;
    if (has_id != has_secret) {
        snprintf(err, n, "%s is set but %s is not", has_id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                 has_id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        return -1;
    }
    if (has_id) {
        const char *tok = getenv("AWS_SESSION_TOKEN");
        memset(out, 0, sizeof *out);
        snprintf(out->access_key_id, sizeof out->access_key_id, "%s", id);
        snprintf(out->secret_access_key, sizeof out->secret_access_key, "%s", secret);
        snprintf(out->session_token, sizeof out->session_token, "%s", tok ? tok : "");
        out->expiry_ms = -1;
        snprintf(out->source, sizeof out->source, "the environment (AWS_ACCESS_KEY_ID)");
        return 0;
    }
    bool profile_seen = false;
    int rc = from_files(out, &profile_seen, err, n);
    if (rc) return rc > 0 ? 0 : -1;
    const char *asked = getenv("AWS_PROFILE");
    if (asked && *asked && !profile_seen) {
        char b1[1024], b2[1024];
        const char *cf = home_path("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", b1, sizeof b1);
        const char *cc = home_path("AWS_CONFIG_FILE", ".aws/config", b2, sizeof b2);
        snprintf(err, n, "AWS_PROFILE names profile %s, which neither %s nor %s holds", asked, cf ? cf : "(no HOME)",
                 cc ? cc : "(no HOME)");
        return -1;
    }
    rc = from_container(out, timeout_ms, err, n);
    if (rc) return rc > 0 ? 0 : -1;
    snprintf(err, n, "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), in profile %s of the shared "
             "files, or from a container endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI)",
             profile_name());
    return -1;
}

static void take_region(void *ctx, const char *k, const char *v) {
    if (!strcmp(k, "region")) snprintf(ctx, 64, "%s", v);
}

int cli_aws_region(const char *flag, char *out, size_t cap, char *err, size_t n) {
    const char *r = flag && *flag ? flag : getenv("AWS_REGION");
    if (!r || !*r) r = getenv("AWS_DEFAULT_REGION");
    if (r && *r) {
        snprintf(out, cap, "%s", r);
        return 0;
    }
    char b[1024], section[300], region[64] = "";
    const char *cfg = home_path("AWS_CONFIG_FILE", ".aws/config", b, sizeof b);
    const char *prof = profile_name();
    if (strcmp(prof, "default")) snprintf(section, sizeof section, "profile %s", prof);
    else snprintf(section, sizeof section, "default");
    if (cfg && ini_section(cfg, section, take_region, region) > 0 && *region) {
        snprintf(out, cap, "%s", region);
        return 0;
    }
    snprintf(err, n, "no AWS region: give --region, or set AWS_REGION or AWS_DEFAULT_REGION");
    return -1;
}
