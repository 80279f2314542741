/*
 * mskbench groups: consumer groups (classic protocol) on mskmock and on
 * librdkafka's mock cluster.
 *
 * 1. Rebalance time, librdkafka consumers. For each N of --group-consumers
 *    (3, 30): a fresh topic of 2N partitions and a fresh group; N consumers
 *    are created and subscribe one after another, each polled by its own
 *    thread, without waiting for each other. The figure is the time from the
 *    last consumer's subscribe() to the rebalance callback (assign) that
 *    completes the picture: every consumer holds a non-empty assignment and
 *    every partition is held by exactly one consumer. The consumers use
 *    librdkafka's defaults (range,roundrobin, eager; session.timeout.ms
 *    45000, heartbeat.interval.ms 3000 unless --heartbeat-ms) on both targets.
 *    mskmock runs with group.initial.rebalance.delay.ms=0.
 *
 * 2. Scale, a raw-protocol driver: --scale-groups groups (500, MSK
 *    Serverless's cap) of --scale-members members (3) join at once. One
 *    librdkafka handle per member (1500 handles, each with its threads and
 *    connections to every broker) would measure the client machinery on 2
 *    cores more than the broker, so one thread drives every member through an
 *    edge-triggered epoll loop. Each member has its own connection to its
 *    group's coordinator (found with FindCoordinator beforehand): a
 *    coordinator mutes a connection while a JoinGroup or SyncGroup is parked
 *    on it, as Kafka does, so members sharing a connection would wait for one
 *    another and would not be joining at once. Members speak what librdkafka
 *    2.0.2 speaks: JoinGroup v5 (MEMBER_ID_REQUIRED round trip on mskmock),
 *    SyncGroup v3 (the leader assigns one partition to each member),
 *    Heartbeat v3 every --scale-heartbeat-ms, and rejoin on
 *    REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID. A group
 *    counts as Stable when all its members got a SyncGroup answer without
 *    error for the same generation; on mskmock DescribeGroups then confirms
 *    every group is Stable with all its members. The broker's RSS is taken
 *    before the connections, with them open and idle, and once every group is
 *    Stable.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kwire.h"
#include "mskbench.h"

/* ================================================================ 1. rebalance time (librdkafka) */

typedef struct gmember {
    int idx;
    rd_kafka_t *rk;
    pthread_t th;
    int assigned;
    int assigns, revokes;
} gmember;

typedef struct {
    int n, nparts;
    gmember *m;
    int *owner;
    int created;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    double done_at;
    int conflicts;
    atomic_bool stop;
} rebalance_state;

static rebalance_state R;

static void check_done_locked(void) {
    if (R.done || R.created < R.n) return;
    for (int i = 0; i < R.n; i++)
        if (R.m[i].assigned <= 0) return;
    for (int p = 0; p < R.nparts; p++)
        if (R.owner[p] < 0) return;
    R.done = true;
    R.done_at = now_s();
    pthread_cond_broadcast(&R.cv);
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *parts, void *opaque) {
    gmember *m = opaque;
    pthread_mutex_lock(&R.mu);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < parts->cnt; i++) {
            int p = parts->elems[i].partition;
            if (p < 0 || p >= R.nparts) continue;
            if (R.owner[p] >= 0 && R.owner[p] != m->idx) R.conflicts++;
            R.owner[p] = m->idx;
        }
        m->assigned = parts->cnt;
        m->assigns++;
        check_done_locked();
        pthread_mutex_unlock(&R.mu);
        rd_kafka_assign(rk, parts);
    } else {
        for (int i = 0; i < parts->cnt; i++) {
            int p = parts->elems[i].partition;
            if (p >= 0 && p < R.nparts && R.owner[p] == m->idx) R.owner[p] = -1;
        }
        m->assigned = 0;
        m->revokes++;
        pthread_mutex_unlock(&R.mu);
        rd_kafka_assign(rk, NULL);
    }
}

static void *consumer_thread(void *p) {
    gmember *m = p;
    while (!atomic_load(&R.stop)) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(m->rk, 100);
        if (msg) rd_kafka_message_destroy(msg);
    }
    rd_kafka_consumer_close(m->rk);
    rd_kafka_destroy(m->rk);
    return NULL;
}

typedef struct {
    int n;
    double ms;            /* last subscribe() -> every consumer assigned */
    double from_first_ms; /* first subscribe() -> the same moment */
    double start_ms;      /* creating and subscribing all N */
    int assigns, revokes; /* rebalance callbacks, all consumers */
    int conflicts;
    double broker_cpu_s;
    double close_ms;
    char error[256];
} rebalance_result;

static void run_rebalance(target *t, int n, rebalance_result *res) {
    memset(res, 0, sizeof *res);
    res->n = n;
    char topic[1][128];
    int parts = 2 * n;
    snprintf(topic[0], sizeof topic[0], "bench-group-%d-%d", n, (int)getpid());
    create_topics(t, topic, &parts, 1);
    sleep_us(200000);

    memset(&R, 0, sizeof R);
    pthread_mutex_init(&R.mu, NULL);
    pthread_cond_init(&R.cv, NULL);
    R.n = n;
    R.nparts = parts;
    R.m = calloc((size_t)n, sizeof *R.m);
    R.owner = malloc(sizeof(int) * (size_t)parts);
    for (int p = 0; p < parts; p++) R.owner[p] = -1;
    char group[128];
    snprintf(group, sizeof group, "bench-group-%d-%d", n, (int)getpid());

    double cpu0 = target_cpu_s(t);
    double t_first = 0, t_last = 0;
    double c0 = now_s();
    for (int i = 0; i < n; i++) {
        gmember *m = &R.m[i];
        m->idx = i;
        rd_kafka_conf_t *c = base_conf(t->bootstrap);
        conf_set(c, "group.id", group);
        conf_set(c, "enable.auto.commit", "false");
        conf_set(c, "auto.offset.reset", "earliest");
        if (O.heartbeat_ms > 0) {
            char v[32];
            snprintf(v, sizeof v, "%d", O.heartbeat_ms);
            conf_set(c, "heartbeat.interval.ms", v);
        }
        if (getenv("MSKBENCH_DEBUG")) conf_set(c, "debug", getenv("MSKBENCH_DEBUG"));
        rd_kafka_conf_set_rebalance_cb(c, rebalance_cb);
        rd_kafka_conf_set_opaque(c, m);
        char err[256];
        m->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
        if (!m->rk) die("rd_kafka_new: %s", err);
        client_ready(m->rk);
        rd_kafka_poll_set_consumer(m->rk);
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic[0], RD_KAFKA_PARTITION_UA);
        pthread_mutex_lock(&R.mu);
        R.created = i + 1;
        pthread_mutex_unlock(&R.mu);
        double ts = now_s();
        if (i == 0) t_first = ts;
        if (i == n - 1) t_last = ts;
        rd_kafka_resp_err_t e = rd_kafka_subscribe(m->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (e) die("subscribe: %s", rd_kafka_err2str(e));
        pthread_create(&m->th, NULL, consumer_thread, m);
    }
    res->start_ms = (now_s() - c0) * 1000;

    pthread_mutex_lock(&R.mu);
    double deadline = now_s() + 120;
    while (!R.done && now_s() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&R.cv, &R.mu, &ts);
    }
    bool done = R.done;
    double done_at = R.done_at;
    pthread_mutex_unlock(&R.mu);
    res->broker_cpu_s = target_cpu_s(t) - cpu0;
    if (done) {
        res->ms = (done_at - t_last) * 1000;
        res->from_first_ms = (done_at - t_first) * 1000;
    } else {
        int assigned = 0;
        for (int i = 0; i < n; i++) assigned += R.m[i].assigned > 0;
        snprintf(res->error, sizeof res->error, "not every consumer assigned after 120 s (%d of %d hold partitions)",
                 assigned, n);
        res->ms = res->from_first_ms = -1;
    }
    /* close all at once, each from its own thread */
    double s0 = now_s();
    atomic_store(&R.stop, true);
    for (int i = 0; i < n; i++) pthread_join(R.m[i].th, NULL);
    res->close_ms = (now_s() - s0) * 1000;
    for (int i = 0; i < n; i++) res->assigns += R.m[i].assigns, res->revokes += R.m[i].revokes;
    res->conflicts = R.conflicts;
    free(R.m);
    free(R.owner);
}

/* ================================================================ 2. scale (raw protocol) */

enum { RQ_NONE, RQ_JOIN, RQ_SYNC, RQ_HB };
enum { ERR_ILLEGAL_GENERATION = 22, ERR_UNKNOWN_MEMBER_ID = 25, ERR_REBALANCE_IN_PROGRESS = 27, ERR_MEMBER_ID_REQUIRED = 79 };

typedef struct smember {
    kconn c;
    int g, k;
    char member_id[256];
    int32_t generation;
    int32_t synced_gen; /* -1 until a SyncGroup without error */
    int inflight;
    double next_hb;
    char (*ids)[256]; /* leader: the generation's members */
    int nids;
    double sync_due; /* leader: when to send its SyncGroup (--scale-leader-delay-ms), 0 = not pending */
} smember;

typedef struct sgroup {
    char id[64];
    int port;
    bool stable;
    double stable_at;
    int32_t stable_gen;
    int unstable_again; /* became Stable, then rebalanced */
} sgroup;

typedef struct {
    int ng, nm;
    sgroup *g;
    smember *m;
    int stable_count;
    long joins, member_id_required, syncs, heartbeats, rejoins;
    long errors;
    char first_error[256];
    int32_t seq;
    double t0;
} scale_state;

static scale_state S;
static const char *SCALE_TOPIC = "bench-scale";

static void serr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void serr(const char *fmt, ...) {
    S.errors++;
    if (S.first_error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(S.first_error, sizeof S.first_error, fmt, ap);
    va_end(ap);
}

static void subscription(kbuf *b) {
    /* ConsumerProtocolSubscription v0: topics, user_data (null) */
    kb_i16(b, 0);
    kb_i32(b, 1);
    kb_str(b, SCALE_TOPIC);
    kb_i32(b, -1);
}

static void send_join(smember *m) {
    kbuf sub = {0};
    subscription(&sub);
    kbuf *b = &m->c.out;
    size_t st = kb_req_begin(b, 11, 5, ++S.seq, "mskbench-scale", false);
    kb_str(b, S.g[m->g].id);
    kb_i32(b, 45000);  /* session.timeout.ms, librdkafka's default */
    kb_i32(b, 300000); /* rebalance timeout = max.poll.interval.ms */
    kb_str(b, m->member_id);
    kb_str(b, NULL); /* group.instance.id */
    kb_str(b, "consumer");
    kb_i32(b, 1);
    kb_str(b, "range");
    kb_bytes(b, sub.p, (int32_t)sub.n);
    kb_req_end(b, st);
    kb_free(&sub);
    m->inflight = RQ_JOIN;
    m->synced_gen = -1;
    S.joins++;
}

static void send_sync(smember *m) {
    kbuf *b = &m->c.out;
    size_t st = kb_req_begin(b, 14, 3, ++S.seq, "mskbench-scale", false);
    kb_str(b, S.g[m->g].id);
    kb_i32(b, m->generation);
    kb_str(b, m->member_id);
    kb_str(b, NULL);
    kb_i32(b, m->nids);
    for (int i = 0; i < m->nids; i++) {
        kbuf a = {0};
        /* ConsumerProtocolAssignment v0: partition i of the topic, user_data null */
        kb_i16(&a, 0);
        kb_i32(&a, 1);
        kb_str(&a, SCALE_TOPIC);
        kb_i32(&a, 1);
        kb_i32(&a, i % S.nm);
        kb_i32(&a, -1);
        kb_str(b, m->ids[i]);
        kb_bytes(b, a.p, (int32_t)a.n);
        kb_free(&a);
    }
    kb_req_end(b, st);
    m->inflight = RQ_SYNC;
    S.syncs++;
}

static void send_heartbeat(smember *m) {
    kbuf *b = &m->c.out;
    size_t st = kb_req_begin(b, 12, 3, ++S.seq, "mskbench-scale", false);
    kb_str(b, S.g[m->g].id);
    kb_i32(b, m->generation);
    kb_str(b, m->member_id);
    kb_str(b, NULL);
    kb_req_end(b, st);
    m->inflight = RQ_HB;
    S.heartbeats++;
}

static void group_unstable(sgroup *g) {
    if (!g->stable) return;
    g->stable = false;
    g->unstable_again++;
    S.stable_count--;
}

static void check_group(int gi, double now) {
    sgroup *g = &S.g[gi];
    smember *base = &S.m[gi * S.nm];
    int32_t gen = base[0].synced_gen;
    if (gen < 0) return;
    for (int k = 1; k < S.nm; k++)
        if (base[k].synced_gen != gen) return;
    if (g->stable && g->stable_gen == gen) return;
    if (!g->stable) S.stable_count++;
    g->stable = true;
    g->stable_gen = gen;
    g->stable_at = now;
}

static void rejoin(smember *m, bool forget_id) {
    if (forget_id) m->member_id[0] = 0;
    group_unstable(&S.g[m->g]);
    S.rejoins++;
    send_join(m);
}

static void on_scale_response(smember *m, krd *r, double now) {
    int kind = m->inflight;
    m->inflight = RQ_NONE;
    kr_i32(r); /* throttle_time_ms */
    int16_t err = kr_i16(r);
    if (kind == RQ_JOIN) {
        int32_t gen = kr_i32(r);
        const char *s;
        int l = kr_str(r, &s); /* protocol name */
        const char *leader;
        int ll = kr_str(r, &leader);
        const char *mid;
        int ml = kr_str(r, &mid);
        if (r->bad) {
            serr("JoinGroup response of %s cut short", S.g[m->g].id);
            return;
        }
        if (err == ERR_MEMBER_ID_REQUIRED) {
            S.member_id_required++;
            snprintf(m->member_id, sizeof m->member_id, "%.*s", ml > 0 ? ml : 0, mid);
            send_join(m);
            return;
        }
        if (err) {
            if (err != ERR_UNKNOWN_MEMBER_ID && err != ERR_REBALANCE_IN_PROGRESS)
                serr("JoinGroup %s: error %d", S.g[m->g].id, err);
            rejoin(m, err == ERR_UNKNOWN_MEMBER_ID);
            return;
        }
        (void)l;
        snprintf(m->member_id, sizeof m->member_id, "%.*s", ml > 0 ? ml : 0, mid);
        m->generation = gen;
        m->nids = 0;
        if (ll == ml && ml > 0 && !memcmp(leader, mid, (size_t)ml)) {
            int32_t n = kr_i32(r);
            if (n > 0 && n <= 1024) {
                m->ids = realloc(m->ids, sizeof *m->ids * (size_t)n);
                for (int32_t i = 0; i < n; i++) {
                    const char *id, *inst;
                    int il = kr_str(r, &id);
                    kr_str(r, &inst);
                    const uint8_t *meta;
                    kr_bytes(r, &meta);
                    snprintf(m->ids[i], sizeof m->ids[i], "%.*s", il > 0 ? il : 0, id);
                }
                m->nids = r->bad ? 0 : n;
            }
            if (O.scale_leader_delay_ms > 0) {
                /* a leader that takes a moment to assign (a metadata round trip and the assignor) */
                m->sync_due = now + O.scale_leader_delay_ms / 1000.0;
                return;
            }
        }
        send_sync(m);
    } else if (kind == RQ_SYNC) {
        if (err == 0) {
            m->synced_gen = m->generation;
            m->next_hb = now + O.scale_heartbeat_ms / 1000.0;
            check_group(m->g, now);
            return;
        }
        if (err != ERR_REBALANCE_IN_PROGRESS && err != ERR_ILLEGAL_GENERATION && err != ERR_UNKNOWN_MEMBER_ID)
            serr("SyncGroup %s: error %d", S.g[m->g].id, err);
        rejoin(m, err == ERR_UNKNOWN_MEMBER_ID);
    } else if (kind == RQ_HB) {
        if (err == 0) {
            m->next_hb = now + O.scale_heartbeat_ms / 1000.0;
            return;
        }
        if (err != ERR_REBALANCE_IN_PROGRESS && err != ERR_ILLEGAL_GENERATION && err != ERR_UNKNOWN_MEMBER_ID)
            serr("Heartbeat %s: error %d", S.g[m->g].id, err);
        m->synced_gen = -1;
        rejoin(m, err == ERR_UNKNOWN_MEMBER_ID);
    }
}

typedef struct {
    int groups, members;
    double find_ms, connect_ms, stable_ms;
    double group_p50_ms, group_p99_ms, group_max_ms;
    int multi_gen_groups; /* Stable only at generation > 1 */
    int unstable_again;
    long joins, member_id_required, syncs, heartbeats, rejoins, errors;
    long rss_before_kib, rss_conns_kib, rss_stable_kib, peak_rss_kib;
    double broker_cpu_s;
    int verified; /* DescribeGroups: Stable with every member; -1 not checked */
    char error[256];
} scale_result;

/* DescribeGroups v1 on every coordinator: how many groups are Stable with all their members. */
static int describe_verify(int *ports, int nports, char *err, size_t errn) {
    int ok = 0;
    for (int pi = 0; pi < nports; pi++) {
        int fd = kw_connect_blocking(ports[pi]);
        if (fd < 0) {
            snprintf(err, errn, "DescribeGroups: cannot connect to %d", ports[pi]);
            return ok;
        }
        for (int start = 0; start < S.ng; start += 100) {
            kbuf b = {0};
            size_t st = kb_req_begin(&b, 15, 1, 1, "mskbench-scale", false);
            int n = 0;
            for (int g = start; g < S.ng && g < start + 100; g++) n += S.g[g].port == ports[pi];
            kb_i32(&b, n);
            for (int g = start; g < S.ng && g < start + 100; g++)
                if (S.g[g].port == ports[pi]) kb_str(&b, S.g[g].id);
            kb_req_end(&b, st);
            if (!n) {
                kb_free(&b);
                continue;
            }
            size_t len;
            uint8_t *resp = kw_send_all(fd, b.p, b.n) ? NULL : kw_recv_frame(fd, &len);
            kb_free(&b);
            if (!resp) {
                snprintf(err, errn, "DescribeGroups: no answer from %d", ports[pi]);
                break;
            }
            krd r = {resp, len, 0, false};
            kr_i32(&r); /* correlation */
            kr_i32(&r); /* throttle */
            int32_t ng = kr_i32(&r);
            for (int32_t i = 0; i < ng && !r.bad; i++) {
                int16_t e = kr_i16(&r);
                const char *s;
                kr_str(&r, &s);
                const char *state;
                int sl = kr_str(&r, &state);
                kr_str(&r, &s);
                kr_str(&r, &s);
                int32_t nm = kr_i32(&r);
                for (int32_t k = 0; k < nm && !r.bad; k++) {
                    const uint8_t *bb;
                    kr_str(&r, &s);
                    kr_str(&r, &s);
                    kr_str(&r, &s);
                    kr_bytes(&r, &bb);
                    kr_bytes(&r, &bb);
                }
                if (!e && sl == 6 && !memcmp(state, "Stable", 6) && nm == S.nm) ok++;
                else if (!err[0]) snprintf(err, errn, "DescribeGroups: a group is %.*s with %d members (error %d)", sl > 0 ? sl : 0, sl > 0 ? state : "", nm, e);
            }
            free(resp);
        }
        close(fd);
    }
    return ok;
}

static void run_scale(target *t, scale_result *res) {
    memset(res, 0, sizeof *res);
    memset(&S, 0, sizeof S);
    S.ng = O.scale_groups;
    S.nm = O.scale_members;
    res->groups = S.ng;
    res->members = S.nm;
    res->verified = -1;
    int total = S.ng * S.nm;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)total + 256) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)total + 256 ? rl.rlim_max : (rlim_t)total + 256;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    S.g = calloc((size_t)S.ng, sizeof *S.g);
    S.m = calloc((size_t)total, sizeof *S.m);
    int parts = S.nm;
    char topic[1][128];
    snprintf(topic[0], sizeof topic[0], "%s", SCALE_TOPIC);
    create_topics(t, topic, &parts, 1);
    sleep_us(300000);
    res->rss_before_kib = target_rss_kb(t);

    /* find every group's coordinator, pipelined on one connection */
    int boot_port = t->plain_port;
    if (!boot_port) {
        const char *c = strchr(t->bootstrap, ':');
        boot_port = c ? atoi(c + 1) : 0;
    }
    double f0 = now_s();
    int fd = kw_connect_blocking(boot_port);
    if (fd < 0) die("connect %d: %s", boot_port, strerror(errno));
    int ports[64], nports = 0;
    for (int start = 0; start < S.ng; start += 100) {
        int end = start + 100 < S.ng ? start + 100 : S.ng;
        kbuf b = {0};
        for (int g = start; g < end; g++) {
            snprintf(S.g[g].id, sizeof S.g[g].id, "bench-scale-%d-%04d", (int)getpid(), g);
            size_t st = kb_req_begin(&b, 10, 2, g, "mskbench-scale", false);
            kb_str(&b, S.g[g].id);
            kb_i8(&b, 0);
            kb_req_end(&b, st);
        }
        if (kw_send_all(fd, b.p, b.n)) die("FindCoordinator: send failed");
        kb_free(&b);
        for (int g = start; g < end; g++) {
            size_t len;
            uint8_t *resp = kw_recv_frame(fd, &len);
            if (!resp) die("FindCoordinator: connection closed");
            krd r = {resp, len, 0, false};
            int32_t corr = kr_i32(&r);
            kr_i32(&r);
            int16_t e = kr_i16(&r);
            const char *s;
            kr_str(&r, &s);
            kr_i32(&r); /* node id */
            kr_str(&r, &s);
            int32_t port = kr_i32(&r);
            if (r.bad || e || corr != g) die("FindCoordinator %s: error %d", S.g[g].id, e);
            S.g[g].port = port;
            bool seen = false;
            for (int i = 0; i < nports; i++) seen |= ports[i] == port;
            if (!seen && nports < 64) ports[nports++] = port;
            free(resp);
        }
    }
    close(fd);
    res->find_ms = (now_s() - f0) * 1000;

    /* one connection per member to its coordinator */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    double c0 = now_s();
    /* all at once, non-blocking: a listener with a short accept queue (the mock's is 5) drops SYNs
     * when it falls behind, and the kernel's retries then overlap instead of adding up */
    int pending = total;
    for (int i = 0; i < total; i++) {
        smember *m = &S.m[i];
        m->g = i / S.nm;
        m->k = i % S.nm;
        m->synced_gen = -1;
        if (kc_open(&m->c, S.g[m->g].port, NULL, NULL) != 0) die("connect for member %d: %s", i, strerror(errno));
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = m};
        epoll_ctl(ep, EPOLL_CTL_ADD, m->c.fd, &ev);
    }
    {
        struct epoll_event evs[512];
        while (pending > 0) {
            if (now_s() - c0 > 120) die("only %d of %d member connections established after 120 s", total - pending, total);
            int k = epoll_wait(ep, evs, 512, 100);
            for (int i = 0; i < k; i++) {
                smember *m = evs[i].data.ptr;
                if (m->c.connected) continue;
                int p = kc_progress(&m->c);
                if (p < 0) die("connect for a member to %d: %s", S.g[m->g].port, strerror(errno));
                if (p > 0) pending--;
            }
        }
    }
    res->connect_ms = (now_s() - c0) * 1000;
    sleep_us(300000);
    res->rss_conns_kib = target_rss_kb(t);
    long peak = res->rss_conns_kib;

    /* everyone joins at once */
    double cpu0 = target_cpu_s(t);
    S.t0 = now_s();
    for (int i = 0; i < total; i++) {
        send_join(&S.m[i]);
        if (kc_progress(&S.m[i].c) < 0) serr("write JoinGroup: %s", strerror(errno));
    }
    struct epoll_event evs[512];
    double deadline = S.t0 + 120, last_sample = 0, last_hb_scan = 0;
    while (S.stable_count < S.ng) {
        double now = now_s();
        if (now > deadline) {
            snprintf(res->error, sizeof res->error, "only %d of %d groups Stable after 120 s", S.stable_count, S.ng);
            break;
        }
        int k = epoll_wait(ep, evs, 512, 5);
        now = now_s();
        for (int i = 0; i < k; i++) {
            smember *m = evs[i].data.ptr;
            if (kc_progress(&m->c) < 0 || kc_read(&m->c) < 0) {
                serr("member connection to %d closed", S.g[m->g].port);
                epoll_ctl(ep, EPOLL_CTL_DEL, m->c.fd, NULL);
                continue;
            }
            krd r;
            int32_t corr;
            while (kc_frame(&m->c, &r, &corr)) on_scale_response(m, &r, now);
            if (kc_progress(&m->c) < 0) serr("write: %s", strerror(errno));
        }
        if (now - last_hb_scan >= (O.scale_leader_delay_ms > 0 ? 0.001 : 0.01)) {
            last_hb_scan = now;
            for (int i = 0; i < total; i++) {
                smember *m = &S.m[i];
                if (m->sync_due > 0 && now >= m->sync_due && m->inflight == RQ_NONE) {
                    m->sync_due = 0;
                    send_sync(m);
                    kc_progress(&m->c);
                }
                if (m->inflight == RQ_NONE && m->synced_gen >= 0 && now >= m->next_hb) {
                    send_heartbeat(m);
                    kc_progress(&m->c);
                }
            }
        }
        if (now - last_sample >= 0.01) {
            last_sample = now;
            long r = target_rss_kb(t);
            if (r > peak) peak = r;
        }
    }
    double end = now_s();
    res->broker_cpu_s = target_cpu_s(t) - cpu0;
    double *times = malloc(sizeof(double) * (size_t)S.ng);
    int nt = 0;
    double last = 0;
    for (int g = 0; g < S.ng; g++) {
        if (!S.g[g].stable) continue;
        double ms = (S.g[g].stable_at - S.t0) * 1000;
        times[nt++] = ms;
        if (ms > last) last = ms;
        res->multi_gen_groups += S.g[g].stable_gen > 1;
        res->unstable_again += S.g[g].unstable_again;
    }
    qsort(times, (size_t)nt, sizeof(double), cmp_double);
    res->stable_ms = S.stable_count == S.ng ? last : -1;
    res->group_p50_ms = pct_sorted(times, (size_t)nt, 0.5);
    res->group_p99_ms = pct_sorted(times, (size_t)nt, 0.99);
    res->group_max_ms = nt ? times[nt - 1] : -1;
    free(times);
    (void)end;
    long r = target_rss_kb(t);
    res->rss_stable_kib = r;
    res->peak_rss_kib = r > peak ? r : peak;
    res->joins = S.joins;
    res->member_id_required = S.member_id_required;
    res->syncs = S.syncs;
    res->heartbeats = S.heartbeats;
    res->rejoins = S.rejoins;
    res->errors = S.errors;
    if (S.first_error[0]) {
        size_t l = strlen(res->error);
        snprintf(res->error + l, sizeof res->error - l, "%sfirst error: %s", l ? "; " : "", S.first_error);
    }
    if (!strcmp(t->kind, "mskmock") && S.stable_count == S.ng) {
        char err[256] = "";
        res->verified = describe_verify(ports, nports, err, sizeof err);
        if (err[0] && !res->error[0]) snprintf(res->error, sizeof res->error, "%s", err);
    }
    for (int i = 0; i < total; i++) {
        kc_close(&S.m[i].c);
        free(S.m[i].ids);
    }
    close(ep);
    free(S.m);
    free(S.g);
}

/* ================================================================ main */

int groups_main(const char *self) {
    (void)self;
    const char *name = O.target ? O.target : "mskmock";
    if (!strcmp(name, "mskmock")) {
        if (O.nbroker_sets >= 16) die("too many --broker-set");
        O.broker_sets[O.nbroker_sets++] = "group.initial.rebalance.delay.ms=0";
    }
    static target T;
    target *t = &T;
    start_target(t, name);
    sleep_us(200000);
    printf("mskbench groups: %s (%s), %d brokers, librdkafka %s\n", t->kind, t->storage, O.brokers, rd_kafka_version_str());
    for (int i = 0; i < O.nbroker_sets && !strcmp(t->kind, "mskmock"); i++) printf("  broker setting %s\n", O.broker_sets[i]);
    printf("  consumers: librdkafka defaults (partition.assignment.strategy range,roundrobin; session.timeout.ms 45000; "
           "heartbeat.interval.ms %s), enable.auto.commit=false, one polling thread each\n",
           O.heartbeat_ms > 0 ? "set by --heartbeat-ms" : "3000");
    fflush(stdout);

    jbuf j = {0};
    j.cap = 4096;
    j.p = malloc(j.cap);
    jraw(&j, "{\"bench\":\"mskbench-groups\"");
    jstr(&j, "target", t->kind);
    jstr(&j, "storage", t->storage);
    jstr(&j, "librdkafka", rd_kafka_version_str());
    jnum(&j, "heartbeat_ms", O.heartbeat_ms > 0 ? O.heartbeat_ms : 3000);
    double busy0 = machine_busy_s(), own0 = proc_cpu_s(0) + (t->pid ? proc_cpu_s(t->pid) : 0), wall0 = now_s();
    bool bad = false;
    for (int i = 0; i < O.ngroup_sizes; i++) {
        if (O.group_sizes[i] <= 0) continue; /* --group-consumers 0: the scale test only */
        rebalance_result rr;
        run_rebalance(t, O.group_sizes[i], &rr);
        printf("  rebalance, %2d consumers, %2d partitions: %8.1f ms from the last subscribe() to every consumer assigned "
               "(%.1f ms from the first; creating and subscribing took %.1f ms); %d assign and %d revoke callbacks; broker "
               "CPU %.2f s; closing all took %.0f ms\n",
               rr.n, 2 * rr.n, rr.ms, rr.from_first_ms, rr.start_ms, rr.assigns, rr.revokes, rr.broker_cpu_s, rr.close_ms);
        if (rr.error[0] || rr.conflicts) {
            printf("           error: %s%s\n", rr.error, rr.conflicts ? " (a partition was assigned to two consumers)" : "");
            bad = true;
        }
        fflush(stdout);
        char k[64];
#define K(x) (snprintf(k, sizeof k, "rebal_n%d_%s", rr.n, x), k)
        jnum(&j, K("ms"), rr.ms);
        jnum(&j, K("from_first_ms"), rr.from_first_ms);
        jnum(&j, K("start_ms"), rr.start_ms);
        jnum(&j, K("assigns"), rr.assigns);
        jnum(&j, K("revokes"), rr.revokes);
        jnum(&j, K("conflicts"), rr.conflicts);
        jnum(&j, K("broker_cpu_s"), rr.broker_cpu_s);
        jnum(&j, K("close_ms"), rr.close_ms);
        jstr(&j, K("error"), rr.error);
#undef K
        sleep_us(500000);
    }
    if (O.scale_groups > 0) {
        scale_result sr;
        run_scale(t, &sr);
        printf("  scale: %d groups x %d members, one connection each (%d), raw JoinGroup v5 / SyncGroup v3 / Heartbeat v3 "
               "every %d ms\n",
               sr.groups, sr.members, sr.groups * sr.members, O.scale_heartbeat_ms);
        printf("    FindCoordinator for all groups %.1f ms; opening the connections %.1f ms\n", sr.find_ms, sr.connect_ms);
        printf("    all groups Stable %.1f ms after the first JoinGroup (per group: p50 %.1f ms, p99 %.1f ms); %d groups "
               "needed more than one generation, %d fell back to rebalancing once Stable\n",
               sr.stable_ms, sr.group_p50_ms, sr.group_p99_ms, sr.multi_gen_groups, sr.unstable_again);
        printf("    requests: %ld JoinGroup (%ld answered MEMBER_ID_REQUIRED), %ld SyncGroup, %ld Heartbeat, %ld rejoins; "
               "broker CPU %.2f s\n",
               sr.joins, sr.member_id_required, sr.syncs, sr.heartbeats, sr.rejoins, sr.broker_cpu_s);
        printf("    broker RSS: %.1f MiB before, %.1f MiB with the connections open, %.1f MiB with every group Stable (peak "
               "%.1f MiB)\n",
               mib(sr.rss_before_kib), mib(sr.rss_conns_kib), mib(sr.rss_stable_kib), mib(sr.peak_rss_kib));
        if (sr.verified >= 0) printf("    DescribeGroups: %d of %d groups Stable with %d members\n", sr.verified, sr.groups, sr.members);
        if (sr.error[0] || sr.errors) {
            printf("    error: %s (%ld errors)\n", sr.error, sr.errors);
            bad = true;
        }
        if (sr.verified >= 0 && sr.verified != sr.groups) bad = true;
        jnum(&j, "scale_groups", sr.groups);
        jnum(&j, "scale_members", sr.members);
        jnum(&j, "scale_find_ms", sr.find_ms);
        jnum(&j, "scale_connect_ms", sr.connect_ms);
        jnum(&j, "scale_stable_ms", sr.stable_ms);
        jnum(&j, "scale_group_p50_ms", sr.group_p50_ms);
        jnum(&j, "scale_group_p99_ms", sr.group_p99_ms);
        jnum(&j, "scale_multi_gen_groups", sr.multi_gen_groups);
        jnum(&j, "scale_unstable_again", sr.unstable_again);
        jnum(&j, "scale_joins", (double)sr.joins);
        jnum(&j, "scale_member_id_required", (double)sr.member_id_required);
        jnum(&j, "scale_syncs", (double)sr.syncs);
        jnum(&j, "scale_heartbeats", (double)sr.heartbeats);
        jnum(&j, "scale_rejoins", (double)sr.rejoins);
        jnum(&j, "scale_errors", (double)sr.errors);
        jnum(&j, "scale_broker_cpu_s", sr.broker_cpu_s);
        jnum(&j, "scale_rss_before_kib", (double)sr.rss_before_kib);
        jnum(&j, "scale_rss_conns_kib", (double)sr.rss_conns_kib);
        jnum(&j, "scale_rss_stable_kib", (double)sr.rss_stable_kib);
        jnum(&j, "scale_peak_rss_kib", (double)sr.peak_rss_kib);
        jnum(&j, "scale_verified", sr.verified);
        jstr(&j, "scale_error", sr.error);
    }
    double other = (machine_busy_s() - busy0) - (proc_cpu_s(0) + (t->pid ? proc_cpu_s(t->pid) : 0) - own0);
    if (other < 0) other = 0;
    double wall = now_s() - wall0;
    printf("  other processes' CPU during the run: %.2f s over %.2f s wall\n", other, wall);
    int exit_status;
    double stop_s = stop_target(t, &exit_status);
    printf("  stop: %s in %.1f ms, exit status %d\n", stop_s < 0 ? "killed, did not exit" : "exited", stop_s * 1000,
           exit_status);
    int warn = atomic_load(&client_warnings), cerr = atomic_load(&client_errors);
    printf("  client warnings logged %d, error callbacks %d%s%s\n", warn, cerr, cerr ? ": first " : "", first_client_error);
    jnum(&j, "other_cpu_s", other);
    jnum(&j, "wall_s", wall);
    jnum(&j, "exit_status", exit_status);
    jnum(&j, "client_warnings", warn);
    jnum(&j, "client_errors", cerr);
    jstr(&j, "first_client_error", first_client_error);
    jraw(&j, "}");
    printf("%s\n", j.p);
    free(j.p);
    finish_target(t);
    return bad || exit_status ? 1 : 0;
}
