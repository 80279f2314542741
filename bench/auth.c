/*
 * mskbench auth: how many IAM authentications mskmock completes per second,
 * and how long one takes, for OAUTHBEARER and AWS_MSK_IAM, with the TLS
 * handshake (the IAM listener, iam.port) and without it (sasl.plaintext.port).
 *
 * A small driver, one thread and an edge-triggered epoll loop, keeps
 * --auth-conns connections in flight. Each connection does what a client does
 * on a new connection: TCP connect, TLS handshake (IAM listener), ApiVersions
 * v3, SaslHandshake v1, SaslAuthenticate v1 with a token the driver signs
 * for that connection (iamsign.c, one long-term key from the identities file),
 * then closes and is replaced by a new one. Two references without SASL:
 * ApiVersions only, on the plaintext listener and through TLS on the IAM
 * listener (allowed before authentication), which separate the cost of the
 * connection and of TLS from the cost of the authentication itself.
 *
 * mskmock runs one event loop on one thread, so its CPU per authentication is
 * the figure: 1 / (broker CPU seconds per authentication) is what one broker
 * core sustains, whether or not the driver (on the machine's other core)
 * managed to keep the broker busy. The rate reached and the broker's busy
 * share are reported beside it. iam.max.connects.per.second=0 (no limiter).
 */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "iamsign.h"
#include "kwire.h"
#include "mskbench.h"

typedef enum { MECH_NONE, MECH_OAUTHBEARER, MECH_AWS_MSK_IAM } mech;

typedef struct {
    const char *name;  /* JSON key prefix */
    const char *title;
    mech m;
    bool tls;
} auth_cfg;

static const auth_cfg CFGS[] = {
    {"plain_apiversions", "no auth: connect + ApiVersions (plaintext listener)", MECH_NONE, false},
    {"tls_apiversions", "no auth: connect + TLS + ApiVersions (IAM listener)", MECH_NONE, true},
    {"oauth_sasl", "OAUTHBEARER without TLS (sasl.plaintext.port)", MECH_OAUTHBEARER, false},
    {"iam_sasl", "AWS_MSK_IAM without TLS (sasl.plaintext.port)", MECH_AWS_MSK_IAM, false},
    {"oauth_tls", "OAUTHBEARER with TLS (iam.port)", MECH_OAUTHBEARER, true},
    {"iam_tls", "AWS_MSK_IAM with TLS (iam.port)", MECH_AWS_MSK_IAM, true},
};
#define NCFG (sizeof CFGS / sizeof CFGS[0])

enum { ST_CONNECT, ST_APIVERSIONS, ST_HANDSHAKE, ST_AUTHENTICATE };

typedef struct {
    kconn c;
    int st;
    int port;
    double t0;
    bool sent; /* the request of the current state is written */
} aconn;

typedef struct {
    long ok, failed;
    char first_error[256];
    double *lat;     /* seconds per authentication, when recorded */
    size_t nlat, cap;
    long window_ok, window_failed;
    char tls_version[32], tls_cipher[64];
    int64_t session_ms; /* session lifetime of the last success */
} astats;

static const target *AT;
static SSL_CTX *ssl_ctx;
static const auth_cfg *CUR;

static void fail(astats *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(astats *s, const char *fmt, ...) {
    s->failed++;
    if (s->first_error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->first_error, sizeof s->first_error, fmt, ap);
    va_end(ap);
}

static int port_for(int i) {
    int base = CUR->m == MECH_NONE ? (CUR->tls ? AT->iam_port : AT->plain_port) : (CUR->tls ? AT->iam_port : AT->sasl_port);
    return base + i % O.brokers;
}

static int open_conn(aconn *a, int epfd, int idx) {
    a->port = port_for(idx);
    a->st = ST_CONNECT;
    a->sent = false;
    a->t0 = now_s();
    static atomic_uint rot;
    kc_source = 1 + (int)(atomic_fetch_add(&rot, 1) % 16); /* 127.0.0.1-16 */
    if (kc_open(&a->c, a->port, CUR->tls ? ssl_ctx : NULL, "127.0.0.1") != 0) return -1;
    if (a->c.ssl) {
        /* verify the server certificate against the CA and the address dialled, as librdkafka does by default */
        X509_VERIFY_PARAM *vp = SSL_get0_param(a->c.ssl);
        X509_VERIFY_PARAM_set1_ip_asc(vp, "127.0.0.1");
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = a};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, a->c.fd, &ev);
}

static atomic_int corr_seq;

static void send_request(aconn *a) {
    kbuf *b = &a->c.out;
    int32_t corr = atomic_fetch_add(&corr_seq, 1) + 1;
    size_t st;
    switch (a->st) {
    case ST_APIVERSIONS:
        /* v3, as librdkafka >= 1.4 and the Java client send it (flexible header) */
        st = kb_req_begin(b, 18, 3, corr, "mskbench", true);
        kb_cstr(b, "mskbench");
        kb_cstr(b, "1.0");
        kb_uvarint(b, 0);
        kb_req_end(b, st);
        break;
    case ST_HANDSHAKE:
        st = kb_req_begin(b, 17, 1, corr, "mskbench", false);
        kb_str(b, CUR->m == MECH_OAUTHBEARER ? "OAUTHBEARER" : "AWS_MSK_IAM");
        kb_req_end(b, st);
        break;
    case ST_AUTHENTICATE: {
        /* a token signed now, for this connection, as a signer library would produce it */
        iam_signer sg = {BENCH_AKID, BENCH_SECRET, BENCH_REGION, 900};
        char tok[4096], msg[4096 + 64];
        size_t n;
        if (CUR->m == MECH_OAUTHBEARER) {
            if (iam_sign_oauth_token(&sg, "kafka." BENCH_REGION ".amazonaws.com", wall_ms(), tok, sizeof tok) < 0) abort();
            n = iam_oauth_message(tok, msg, sizeof msg);
        } else {
            n = iam_sign_msk_iam_payload(&sg, "127.0.0.1", wall_ms(), msg, sizeof msg);
        }
        st = kb_req_begin(b, 36, 1, corr, "mskbench", false);
        kb_bytes(b, msg, (int32_t)n);
        kb_req_end(b, st);
        break;
    }
    }
    a->sent = true;
}

/* One response for the connection's current state; returns 1 when the connection is done (success), 0 to go on, -1 on failure. */
static int on_response(aconn *a, krd *r, astats *s) {
    switch (a->st) {
    case ST_APIVERSIONS: {
        int16_t err = kr_i16(r);
        if (r->bad || err) {
            fail(s, "ApiVersions: error %d", err);
            return -1;
        }
        if (CUR->m == MECH_NONE) return 1;
        a->st = ST_HANDSHAKE;
        return 0;
    }
    case ST_HANDSHAKE: {
        int16_t err = kr_i16(r);
        if (r->bad || err) {
            fail(s, "SaslHandshake: error %d", err);
            return -1;
        }
        a->st = ST_AUTHENTICATE;
        return 0;
    }
    case ST_AUTHENTICATE: {
        int16_t err = kr_i16(r);
        const char *msg;
        int ml = kr_str(r, &msg);
        const uint8_t *bytes;
        kr_bytes(r, &bytes);
        int64_t life = kr_i64(r);
        if (r->bad || err) {
            fail(s, "SaslAuthenticate: error %d %.*s", err, ml > 0 ? ml : 0, ml > 0 ? msg : "");
            return -1;
        }
        s->session_ms = life;
        return 1;
    }
    }
    return -1;
}

static void note_tls(aconn *a, astats *s) {
    if (a->c.ssl && !s->tls_version[0]) {
        snprintf(s->tls_version, sizeof s->tls_version, "%s", SSL_get_version(a->c.ssl));
        snprintf(s->tls_cipher, sizeof s->tls_cipher, "%s", SSL_get_cipher_name(a->c.ssl));
    }
}

/* Drives one connection after an epoll event; returns 1 done, 0 waiting, -1 failed. */
static int drive(aconn *a, astats *s) {
    for (;;) {
        int p = kc_progress(&a->c);
        if (p < 0) {
            unsigned long e = ERR_get_error();
            char buf[160] = "";
            if (e) ERR_error_string_n(e, buf, sizeof buf);
            fail(s, "%s on port %d: %s", a->c.connected ? "TLS handshake or write" : "connect", a->port,
                 buf[0] ? buf : strerror(errno));
            return -1;
        }
        if (p == 0) return 0;
        if (a->st == ST_CONNECT) {
            note_tls(a, s);
            a->st = ST_APIVERSIONS;
        }
        if (!a->sent) {
            send_request(a);
            continue; /* flush it */
        }
        if (kc_read(&a->c) < 0) {
            fail(s, "connection closed by the broker in state %d", a->st);
            return -1;
        }
        krd r;
        int32_t corr;
        if (!kc_frame(&a->c, &r, &corr)) return 0;
        if (a->st == ST_APIVERSIONS) {
            /* ApiVersions answers with response header v0 even at v3 */
        }
        int rc = on_response(a, &r, s);
        if (rc) return rc;
        a->sent = false;
    }
}

typedef struct {
    double secs, rate, broker_cpu_s, driver_cpu_s, other_cpu_s;
    double broker_us_per_auth, per_core_rate, broker_busy;
    long ok, failed;
    long broker_rss_kib;
} rate_result;

/* The rate run: --auth-threads driver threads, each with its share of --auth-conns
 * connections in flight, through a warm-up and then the measured window. */
static atomic_int rate_phase; /* 0 warm-up, 1 measured, 2 stop */

typedef struct {
    int first, n; /* connection indexes */
    astats s;
    pthread_t th;
} rate_worker;

static void *rate_thread(void *p) {
    rate_worker *w = p;
    astats *s = &w->s;
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    aconn *cs = calloc((size_t)w->n, sizeof *cs);
    for (int i = 0; i < w->n; i++)
        if (open_conn(&cs[i], epfd, w->first + i) != 0) die("connect: %s", strerror(errno));
    struct epoll_event evs[256];
    int opened = w->first + w->n;
    while (atomic_load(&rate_phase) < 2) {
        int k = epoll_wait(epfd, evs, 256, 20);
        if (k < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < k; i++) {
            aconn *a = evs[i].data.ptr;
            int rc = drive(a, s);
            if (!rc) continue;
            bool in_window = atomic_load(&rate_phase) == 1;
            if (rc > 0) {
                s->ok++;
                if (in_window) {
                    s->window_ok++;
                    if (s->nlat < s->cap) s->lat[s->nlat++] = now_s() - a->t0;
                }
            } else if (in_window) {
                s->window_failed++;
            }
            kc_close(&a->c); /* the fd leaves the epoll set with it */
            if (open_conn(a, epfd, opened++) != 0) fail(s, "connect: %s", strerror(errno));
        }
    }
    for (int i = 0; i < w->n; i++) kc_close(&cs[i].c);
    free(cs);
    close(epfd);
    return NULL;
}

static void run_rate(target *t, astats *s, rate_result *rr) {
    int nt = O.auth_threads > 0 ? O.auth_threads : 1;
    rate_worker *w = calloc((size_t)nt, sizeof *w);
    atomic_store(&rate_phase, 0);
    for (int i = 0; i < nt; i++) {
        w[i].first = O.auth_conns * i / nt;
        w[i].n = O.auth_conns * (i + 1) / nt - w[i].first;
        w[i].s.cap = s->cap / (size_t)nt;
        w[i].s.lat = malloc(sizeof(double) * w[i].s.cap);
        pthread_create(&w[i].th, NULL, rate_thread, &w[i]);
    }
    sleep_us((long)(O.auth_warmup_s * 1e6));
    double bcpu0 = target_cpu_s(t), dcpu0 = proc_cpu_s(0), busy0 = machine_busy_s(), w0 = now_s();
    atomic_store(&rate_phase, 1);
    sleep_us((long)(O.auth_secs * 1e6));
    atomic_store(&rate_phase, 2);
    double secs = now_s() - w0;
    double bcpu = target_cpu_s(t) - bcpu0, dcpu = proc_cpu_s(0) - dcpu0, busy = machine_busy_s() - busy0;
    rr->ok = rr->failed = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(w[i].th, NULL);
        astats *x = &w[i].s;
        rr->ok += x->window_ok;
        rr->failed += x->window_failed;
        s->ok += x->ok;
        s->failed += x->failed;
        if (!s->first_error[0] && x->first_error[0]) snprintf(s->first_error, sizeof s->first_error, "%s", x->first_error);
        if (!s->tls_version[0] && x->tls_version[0]) {
            snprintf(s->tls_version, sizeof s->tls_version, "%s", x->tls_version);
            snprintf(s->tls_cipher, sizeof s->tls_cipher, "%s", x->tls_cipher);
        }
        if (x->session_ms) s->session_ms = x->session_ms;
        for (size_t k = 0; k < x->nlat && s->nlat < s->cap; k++) s->lat[s->nlat++] = x->lat[k];
        free(x->lat);
    }
    free(w);
    rr->secs = secs;
    rr->rate = (double)rr->ok / secs;
    rr->broker_cpu_s = bcpu;
    rr->driver_cpu_s = dcpu;
    rr->other_cpu_s = busy - bcpu - dcpu > 0 ? busy - bcpu - dcpu : 0;
    rr->broker_us_per_auth = rr->ok ? bcpu / (double)rr->ok * 1e6 : -1;
    rr->per_core_rate = bcpu > 0 ? (double)rr->ok / bcpu : -1;
    rr->broker_busy = bcpu / secs;
    rr->broker_rss_kib = target_rss_kb(t);
}

/* One authentication at a time: the latency of a new connection with nothing else going on. */
static void run_latency(astats *s, int count) {
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    aconn a;
    struct epoll_event ev;
    for (int i = 0; i < count; i++) {
        if (open_conn(&a, epfd, i) != 0) die("connect: %s", strerror(errno));
        for (;;) {
            int k = epoll_wait(epfd, &ev, 1, 5000);
            if (k == 0) {
                fail(s, "no answer within 5 s");
                break;
            }
            if (k < 0) continue;
            int rc = drive(&a, s);
            if (rc > 0) {
                s->ok++;
                if (s->nlat < s->cap) s->lat[s->nlat++] = now_s() - a.t0;
            }
            if (rc) break;
        }
        kc_close(&a.c);
    }
    close(epfd);
}

int auth_main(const char *self) {
    (void)self;
    static target T;
    target *t = &T;
    AT = t;
    start_target(t, "mskmock");
    sleep_us(200000);

    ssl_ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ssl_ctx, TLS1_2_VERSION);
    if (SSL_CTX_load_verify_locations(ssl_ctx, t->ca_path, NULL) != 1) die("cannot load CA %s", t->ca_path);
    SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_session_cache_mode(ssl_ctx, SSL_SESS_CACHE_OFF); /* a full handshake per connection */

    printf("mskbench auth: mskmock %s, %d brokers, %s storage; %d connections in flight from %d driver thread%s, %.1f s "
           "measured after %.1f s warm-up; latency over %d authentications one at a time\n",
           O.binary, O.brokers, t->storage, O.auth_conns, O.auth_threads, O.auth_threads == 1 ? "" : "s", O.auth_secs,
           O.auth_warmup_s, O.auth_lat_count);
    printf("  identity %s (long-term key), region %s, X-Amz-Expires 900, iam.max.connects.per.second=0\n", BENCH_PRINCIPAL,
           BENCH_REGION);

    jbuf j = {0};
    j.cap = 4096;
    j.p = malloc(j.cap);
    jraw(&j, "{\"bench\":\"mskbench-auth\"");
    jstr(&j, "target", "mskmock");
    jstr(&j, "storage", t->storage);
    jnum(&j, "auth_conns", O.auth_conns);
    jnum(&j, "auth_threads", O.auth_threads);
    jnum(&j, "auth_secs", O.auth_secs);
    bool bad = false;
    for (size_t ci = 0; ci < NCFG; ci++) {
        CUR = &CFGS[ci];
        if (O.auth_only && !strstr(CUR->name, O.auth_only)) continue;
        astats s = {0};
        s.cap = 2000000;
        s.lat = malloc(sizeof(double) * s.cap);
        rate_result rr = {0};
        run_rate(t, &s, &rr);
        size_t nl = s.nlat;
        qsort(s.lat, nl, sizeof(double), cmp_double);
        double rp50 = pct_sorted(s.lat, nl, 0.5) * 1e3, rp99 = pct_sorted(s.lat, nl, 0.99) * 1e3;
        long rate_failed = s.failed;
        char rate_err[256];
        snprintf(rate_err, sizeof rate_err, "%s", s.first_error);

        astats l = {0};
        l.cap = (size_t)O.auth_lat_count;
        l.lat = malloc(sizeof(double) * l.cap);
        sleep_us(200000);
        run_latency(&l, O.auth_lat_count);
        qsort(l.lat, l.nlat, sizeof(double), cmp_double);
        double lp50 = pct_sorted(l.lat, l.nlat, 0.5) * 1e3, lp99 = pct_sorted(l.lat, l.nlat, 0.99) * 1e3;

        printf("  %-55s %7.0f /s  broker CPU %5.1f us each = %6.0f /s per broker core (broker busy %3.0f%%)\n", CUR->title,
               rr.rate, rr.broker_us_per_auth, rr.per_core_rate, rr.broker_busy * 100);
        printf("  %-55s driver CPU %.2f s, other processes %.2f s over %.2f s; in flight p50 %.2f ms p99 %.2f ms; one at a "
               "time p50 %.3f ms p99 %.3f ms\n",
               "", rr.driver_cpu_s, rr.other_cpu_s, rr.secs, rp50, rp99, lp50, lp99);
        if (s.tls_version[0]) printf("  %-55s %s %s\n", "", s.tls_version, s.tls_cipher);
        if (rate_failed || l.failed) {
            printf("  %-55s FAILED: %ld in the rate run (%s), %ld one at a time (%s)\n", "", rate_failed, rate_err, l.failed,
                   l.first_error);
            bad = true;
        }
        fflush(stdout);
        char k[96];
#define K(x) (snprintf(k, sizeof k, "%s_%s", CUR->name, x), k)
        jnum(&j, K("rate_s"), rr.rate);
        jnum(&j, K("per_core_s"), rr.per_core_rate);
        jnum(&j, K("broker_us"), rr.broker_us_per_auth);
        jnum(&j, K("broker_busy"), rr.broker_busy);
        jnum(&j, K("broker_cpu_s"), rr.broker_cpu_s);
        jnum(&j, K("driver_cpu_s"), rr.driver_cpu_s);
        jnum(&j, K("other_cpu_s"), rr.other_cpu_s);
        jnum(&j, K("ok"), (double)rr.ok);
        jnum(&j, K("inflight_p50_ms"), rp50);
        jnum(&j, K("inflight_p99_ms"), rp99);
        jnum(&j, K("lat_p50_ms"), lp50);
        jnum(&j, K("lat_p99_ms"), lp99);
        jnum(&j, K("failed"), (double)(rate_failed + l.failed));
        jnum(&j, K("session_ms"), (double)s.session_ms);
        jnum(&j, K("broker_rss_kib"), (double)rr.broker_rss_kib);
        jstr(&j, K("tls"), s.tls_version[0] ? s.tls_version : "-");
        jstr(&j, K("error"), rate_err[0] ? rate_err : l.first_error);
#undef K
        free(s.lat);
        free(l.lat);
    }
    int exit_status;
    double stop_s = stop_target(t, &exit_status);
    printf("  stop: %s in %.1f ms, exit status %d\n", stop_s < 0 ? "killed, did not exit" : "exited", stop_s * 1000,
           exit_status);
    jnum(&j, "exit_status", exit_status);
    jraw(&j, "}");
    printf("%s\n", j.p);
    free(j.p);
    SSL_CTX_free(ssl_ctx);
    finish_target(t);
    return bad || exit_status ? 1 : 0;
}
