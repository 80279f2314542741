/*
 * mskbench: the same librdkafka clients measured against mskmock and against
 * librdkafka's own in-memory mock cluster (rdkafka_mock.h).
 *
 *   mskbench mskmock --binary build/mskmock [--data-dir DIR|:memory:] [options]
 *   mskbench mock [--brokers 3] [--isolated] [options]
 *   mskbench kafka --kafka-libs DIR --kafka-start bench/kafka/start.sh --brokers 1 [--warmup N] [options]
 *
 * Per run: startup time to the first accepted TCP connection, idle RSS, produce
 * and consume throughput on a 1- and an 8-partition topic (acks=all), peak RSS
 * during that load, and produce-to-consume latency at one record per
 * millisecond. Prints a table, then one JSON line starting with '{'.
 *
 * `mock` runs the mock cluster inside this process (its RSS is the growth of
 * this process, clients included); `mock --isolated` runs it in a child
 * process (`mskbench mock-serve`) so that its RSS and CPU are its own, like
 * mskmock's. `mskmock --security sasl_ssl` runs the same clients through the
 * IAM listener (SASL_SSL, OAUTHBEARER with tokens the bench signs). `kafka` runs
 * Apache Kafka (one KRaft node, broker and controller in one JVM, the JVM
 * options of its own start script) from jars fetched from Maven Central;
 * --warmup N produces and consumes N records before the measured phases, so
 * the JIT has compiled the hot paths.
 *
 *   mskbench groups --target mskmock|mock|mock-isolated ...   consumer groups (groups.c)
 *   mskbench auth --binary build/mskmock ...                 IAM authentication rate (auth.c)
 *
 * Method and figures: docs/benchmarks.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mskbench.h"
#include "iamsign.h"
#include "tlscert.h"

extern char **environ;

/* ---------------------------------------------------------------- options */

opts O = {
    .messages = 200000,
    .size = 1024,
    .brokers = 3,
    .lat_secs = 5.0,
    .lat_warmup_ms = 1000,
    .lat_interval_us = 1000,
    .lat_linger_ms = 0,
    .fetch_wait_ms = 100,
    .linger_ms = 5,
    .group_sizes = {3, 30},
    .ngroup_sizes = 2,
    .scale_groups = 500,
    .scale_members = 3,
    .scale_heartbeat_ms = 3000,
    .auth_conns = 32,
    .auth_threads = 1,
    .auth_secs = 4.0,
    .auth_warmup_s = 0.5,
    .auth_lat_count = 200,
};

/* ---------------------------------------------------------------- helpers */

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double pct_sorted(const double *v, size_t n, double p) {
    if (!n) return -1;
    size_t i = (size_t)(p * (double)n + 0.999999);
    i = i ? i - 1 : 0;
    return v[i < n ? i : n - 1];
}

int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

_Noreturn void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mskbench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

/* A field ("VmRSS:", "VmHWM:") of /proc/<pid>/status in KiB; pid 0 is this process. */
long status_kb(pid_t pid, const char *field) {
    char path[64], line[256];
    if (pid) snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    else snprintf(path, sizeof path, "/proc/self/status");
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    size_t fl = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, fl)) {
            kb = strtol(line + fl, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

long rss_kb(pid_t pid) { return status_kb(pid, "VmRSS:"); }

/* utime + stime in seconds of a /proc/.../stat file. */
static double stat_cpu_s(const char *path) {
    char buf[2048];
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* comm may hold spaces */
    if (!p) return -1;
    unsigned long ut = 0, st = 0;
    /* after ") ": state(3) ... utime is field 14, stime 15 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Bytes a process caused to be written to storage (/proc/<pid>/io
 * write_bytes), or -1. */
static long long proc_write_bytes(pid_t pid) {
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "write_bytes:", 12)) v = strtoll(line + 12, NULL, 10);
    fclose(f);
    return v;
}

/* Busy CPU seconds of the whole machine (all cores) from /proc/stat. Minus
 * what this process and the broker used, it tells how much other work (other
 * people's builds and tests) competed for the 2 cores during a measurement. */
double machine_busy_s(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long u = 0, n = 0, sy = 0, id = 0, io = 0, irq = 0, sirq = 0, st = 0;
    int k = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &u, &n, &sy, &id, &io, &irq, &sirq, &st);
    fclose(f);
    if (k < 4) return -1;
    return (double)(u + n + sy + irq + sirq + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of a whole process (every thread, ended ones included), to the nanosecond: the
 * kernel's per-process CPU clock. /proc/<pid>/stat counts 10 ms ticks, which at 0.03-0.08 s a
 * 200,000-record phase made a broker's figure jump by a sixth (the issue 37 table's ranges).
 * Falls back to the ticks when the clock is refused. */
double proc_cpu_s(pid_t pid) {
    clockid_t clk = CLOCK_PROCESS_CPUTIME_ID;
    struct timespec ts;
    if ((pid == 0 || clock_getcpuclockid(pid, &clk) == 0) && clock_gettime(clk, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    char path[64];
    if (pid) snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    else snprintf(path, sizeof path, "/proc/self/stat");
    return stat_cpu_s(path);
}

/* The thread of this process whose name contains `name` (librdkafka names the
 * mock cluster's thread "rdk:mock"), or 0. */
static pid_t find_thread(const char *name) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300], comm[64];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *c = fopen(path, "r");
        if (!c) continue;
        if (fgets(comm, sizeof comm, c) && strstr(comm, name)) found = (pid_t)atoi(e->d_name);
        fclose(c);
    }
    closedir(d);
    return found;
}

/* Connects to 127.0.0.1:port once; true when the connection was accepted. */
bool try_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    /*
     * A port in the ephemeral range with nothing listening can still "connect": Linux may pick
     * the same port as the source and complete a TCP simultaneous open with itself. Polled every
     * 200 us through Kafka's 4 s start, that happened, and the bench went on before Kafka
     * listened (CreateTopics refused, then no answer within 30 s).
     */
    struct sockaddr_in self;
    socklen_t len = sizeof self;
    if (ok && getsockname(fd, (struct sockaddr *)&self, &len) == 0 && self.sin_port == a.sin_port) ok = false;
    close(fd);
    return ok;
}

static bool port_free(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* A base port whose `n` consecutive ports are all free on 127.0.0.1 right now. */
int free_port_range(int n) {
    unsigned seed = (unsigned)getpid() ^ (unsigned)now_ns();
    for (int tries = 0; tries < 200; tries++) {
        int base = 20000 + (int)(rand_r(&seed) % 30000);
        bool ok = true;
        for (int i = 0; i < n && ok; i++) ok = port_free(base + i);
        if (ok) return base;
    }
    die("no free range of %d ports on 127.0.0.1", n);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static long long dir_bytes_total;
static int du_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)p, (void)ftw;
    if (flag == FTW_F) dir_bytes_total += (long long)sb->st_blocks * 512;
    return 0;
}

static long long dir_bytes(const char *dir) {
    dir_bytes_total = 0;
    nftw(dir, du_entry, 16, FTW_PHYS);
    return dir_bytes_total;
}

static const char *fs_name(const char *dir) {
    struct statfs s;
    if (statfs(dir, &s) != 0) return "?";
    switch ((unsigned long)s.f_type) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x794c7630: return "overlayfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    default: return "other";
    }
}

/* ---------------------------------------------------------------- librdkafka logs */

/* Client warnings go to stderr (first few per run) and are counted: a target
 * that makes the clients complain should show it. */
atomic_int client_warnings;
atomic_int client_errors;
char first_client_error[512];
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    if (level > 4 && !getenv("MSKBENCH_DEBUG")) return;
    int n = atomic_fetch_add(&client_warnings, 1);
    if (n < 20 || O.verbose) fprintf(stderr, "  [librdkafka %.4f %d %s] %s\n", now_s(), level, fac, buf);
    else if (n == 20) fprintf(stderr, "  [librdkafka] more warnings suppressed\n");
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
    (void)rk, (void)opaque;
    if (atomic_fetch_add(&client_errors, 1) == 0) {
        pthread_mutex_lock(&log_mu);
        snprintf(first_client_error, sizeof first_client_error, "%s: %s", rd_kafka_err2name(err), reason);
        pthread_mutex_unlock(&log_mu);
    }
}

void conf_set(rd_kafka_conf_t *c, const char *k, const char *v) {
    char err[256];
    if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) die("config %s=%s: %s", k, v, err);
}

/* --security sasl_ssl: the mskmock target whose IAM listener the clients use. */
static const target *sec_target;

/* An OAUTHBEARER token signed by the bench (iamsign.c) for the identity in the
 * identities file, as an MSK signer library would hand it to librdkafka. */
static void set_oauth_token(rd_kafka_t *rk) {
    iam_signer sg = {BENCH_AKID, BENCH_SECRET, BENCH_REGION, 900};
    char tok[4096], err[256];
    int64_t exp = iam_sign_oauth_token(&sg, "kafka." BENCH_REGION ".amazonaws.com", wall_ms(), tok, sizeof tok);
    if (exp < 0) die("could not sign an OAUTHBEARER token");
    if (rd_kafka_oauthbearer_set_token(rk, tok, exp, BENCH_PRINCIPAL, NULL, 0, err, sizeof err))
        rd_kafka_oauthbearer_set_token_failure(rk, err);
}

static void oauth_refresh_cb(rd_kafka_t *rk, const char *config, void *opaque) {
    (void)config, (void)opaque;
    set_oauth_token(rk);
}

rd_kafka_conf_t *base_conf(const char *bootstrap) {
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (bootstrap) conf_set(c, "bootstrap.servers", bootstrap);
    conf_set(c, "client.id", "mskbench");
    rd_kafka_conf_set_log_cb(c, log_cb);
    rd_kafka_conf_set_error_cb(c, error_cb);
    if (getenv("MSKBENCH_DEBUG")) conf_set(c, "debug", getenv("MSKBENCH_DEBUG"));
    for (int i = 0; i < O.nclient_sets; i++) {
        char k[128];
        const char *eq = strchr(O.client_sets[i], '=');
        if (!eq || eq - O.client_sets[i] >= (int)sizeof k) die("--client-set %s: expected KEY=VALUE", O.client_sets[i]);
        snprintf(k, sizeof k, "%.*s", (int)(eq - O.client_sets[i]), O.client_sets[i]);
        conf_set(c, k, eq + 1);
    }
    if (sec_target) {
        /* MSK's port 9098 as librdkafka users reach it: SASL_SSL with OAUTHBEARER and a signer's token */
        conf_set(c, "security.protocol", "SASL_SSL");
        conf_set(c, "sasl.mechanisms", "OAUTHBEARER");
        conf_set(c, "ssl.ca.location", sec_target->ca_path);
        rd_kafka_conf_set_oauthbearer_token_refresh_cb(c, oauth_refresh_cb);
        rd_kafka_conf_enable_sasl_queue(c, 1); /* refreshes on librdkafka's background thread, not in poll() */
    }
    return c;
}

void client_ready(rd_kafka_t *rk) {
    if (!sec_target) return;
    set_oauth_token(rk); /* the first token now: metadata calls before the first poll() need it */
    rd_kafka_error_t *e = rd_kafka_sasl_background_callbacks_enable(rk);
    if (e) {
        fprintf(stderr, "mskbench: %s\n", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
}

/* The producer settings used against both targets (printed with the results). */
static void producer_conf(rd_kafka_conf_t *c, int linger_ms) {
    char v[32];
    conf_set(c, "acks", "all");
    snprintf(v, sizeof v, "%d", linger_ms);
    conf_set(c, "linger.ms", v);
    conf_set(c, "compression.type", "none");
    conf_set(c, "enable.idempotence", "false");
    /* batch.size 1000000, batch.num.messages 10000, queue.buffering.max.messages
     * 100000, max.in.flight 1000000: librdkafka's defaults */
}

static void consumer_conf(rd_kafka_conf_t *c) {
    char v[32];
    /* assign() needs a group.id in librdkafka; nothing subscribes or commits */
    snprintf(v, sizeof v, "mskbench-%d", (int)getpid());
    conf_set(c, "group.id", v);
    conf_set(c, "enable.auto.commit", "false");
    conf_set(c, "enable.auto.offset.store", "false");
    conf_set(c, "auto.offset.reset", "earliest");
    conf_set(c, "enable.partition.eof", "false");
    if (getenv("MSKBENCH_DEBUG")) conf_set(c, "debug", getenv("MSKBENCH_DEBUG"));
    snprintf(v, sizeof v, "%d", O.fetch_wait_ms);
    conf_set(c, "fetch.wait.max.ms", v);
    conf_set(c, "fetch.min.bytes", "1");
}

static const char *client_settings(void) {
    static char s[512];
    snprintf(s, sizeof s,
             "producer: acks=all linger.ms=%d compression.type=none enable.idempotence=false, other settings "
             "librdkafka %s defaults (batch.size=1000000 batch.num.messages=10000); partition chosen round-robin by "
             "the bench; latency producer linger.ms=%d. consumer: assign() from the beginning, group.id set but "
             "no subscribe/commit, fetch.wait.max.ms=%d fetch.min.bytes=1, other defaults",
             O.linger_ms, rd_kafka_version_str(), O.lat_linger_ms, O.fetch_wait_ms);
    return s;
}

/* ---------------------------------------------------------------- targets */


/* Broker RSS in KiB: the broker process, or this process's growth for the in-process mock. */
long target_rss_kb(const target *t) {
    if (t->pid) return rss_kb(t->pid);
    return rss_kb(0) - t->base_rss_kb;
}

/* Broker CPU seconds: its process, or the mock cluster's thread in this process. */
double target_cpu_s(target *t) {
    if (t->pid) return proc_cpu_s(t->pid);
    if (!t->mock_tid) t->mock_tid = find_thread("rdk:mock"); /* it names itself once running */
    if (!t->mock_tid) return -1;
    /* the thread's time on a CPU in ns (schedstat's first field), else its ticks */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)t->mock_tid);
    FILE *f = fopen(path, "r");
    unsigned long long ns;
    if (f) {
        int k = fscanf(f, "%llu", &ns);
        fclose(f);
        if (k == 1) return (double)ns / 1e9;
    }
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)t->mock_tid);
    return stat_cpu_s(path);
}

/*
 * The log's error lines (a JVM's come first, then tens of lines of stack: the tail alone can miss
 * why), then its last 40 lines.
 */
static void dump_log_tail(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    int nerr = 0;
    fprintf(stderr, "--- %s (error lines) ---\n", path);
    while (nerr < 10 && fgets(line, sizeof line, f))
        if (strstr(line, " ERROR ") || strstr(line, "FATAL") || !strncmp(line, "Caused by:", 10)) {
            fputs(line, stderr);
            nerr++;
        }
    rewind(f);
    fprintf(stderr, "--- %s (tail) ---\n", path);
    static char tail[40][1024];
    int n = 0;
    while (fgets(line, sizeof line, f)) snprintf(tail[n++ % 40], sizeof tail[0], "%s", line);
    for (int i = n > 40 ? n - 40 : 0; i < n; i++) fputs(tail[i % 40], stderr);
    fclose(f);
}

/* If the bench dies half-way (die() exits), the broker it spawned must not outlive it. */
static target *running_target;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw);

static void cleanup_at_exit(void) {
    target *t = running_target;
    if (!t) return;
    if (t->pid > 0 && waitpid(t->pid, NULL, WNOHANG) == 0) {
        kill(t->pid, SIGKILL);
        waitpid(t->pid, NULL, 0);
    }
    if (t->own_tmpdir && !O.keep) nftw(t->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory of the target's own under $TMPDIR (or /tmp), removed by finish_target. */
static void make_tmpdir(target *t) {
    snprintf(t->tmpdir, sizeof t->tmpdir, "%s/mskbench.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(t->tmpdir)) die("mkdtemp: %s", strerror(errno));
    t->own_tmpdir = true;
}

/*
 * Start argv[0] (looked up in PATH when search) with stdout and stderr to log_path; MSKMOCK_*
 * variables are not passed on: mskmock reads them as configuration, and the figures are of its
 * defaults plus --broker-set, whatever this shell has set.
 */
static pid_t spawn_logged(char *const argv[], const char *log_path, bool search) {
    int logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (logfd < 0) die("%s: %s", log_path, strerror(errno));
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(logfd, 1);
        dup2(logfd, 2);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        for (char **e = environ; *e;) {
            if (!strncmp(*e, "MSKMOCK_", 8)) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
            } else {
                e++;
            }
        }
        if (search) execvp(argv[0], argv);
        else execv(argv[0], argv);
        _exit(127);
    }
    close(logfd);
    return pid;
}

/* Wait until port accepts a connection; dies, with the log's tail, if pid exits or timeout_s passes. */
static void wait_listening(pid_t pid, int port, double t0, double timeout_s, const char *log_path, const char *what) {
    for (;;) {
        if (try_connect(port)) return;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            dump_log_tail(log_path);
            die("%s exited during start-up (status %d)", what, st);
        }
        if (now_s() - t0 > timeout_s) {
            dump_log_tail(log_path);
            die("%s accepted no connection within %.0f s", what, timeout_s);
        }
        sleep_us(200);
    }
}

static void start_mskmock(target *t) {
    t->kind = "mskmock";
    if (!O.binary) die("mskmock mode needs --binary PATH");
    if (access(O.binary, X_OK) != 0) die("%s: not executable", O.binary);
    make_tmpdir(t);
    snprintf(t->log_path, sizeof t->log_path, "%s/mskmock.log", t->tmpdir);
    if (!O.data_dir) {
        snprintf(t->data_dir, sizeof t->data_dir, "%s/data", t->tmpdir);
        if (mkdir(t->data_dir, 0700) != 0) die("mkdir %s: %s", t->data_dir, strerror(errno));
    } else {
        snprintf(t->data_dir, sizeof t->data_dir, "%s", O.data_dir);
    }
    t->storage = strcmp(t->data_dir, ":memory:") ? "disk" : ":memory:";

    bool iam = O.security == SEC_SASL_SSL || !strcmp(O.mode, "auth");
    /* Every listener on free ports: the serverless profile's IAM listener is on by
     * default, and its fixed 9098 would collide with any other mskmock running here; so
     * would the admin API's 9080 (an mskmock left running made every run of a suite fail). */
    int port = free_port_range(3 * O.brokers + 1);
    t->plain_port = port;
    t->iam_port = port + O.brokers;
    t->sasl_port = !strcmp(O.mode, "auth") ? port + 2 * O.brokers : 0;
    char portset[64], countset[64], iamset[64], saslset[64], adminset[64], idset[500], certset[500], keyset[500];
    snprintf(portset, sizeof portset, "plaintext.port=%d", port);
    snprintf(adminset, sizeof adminset, "admin.port=%d", port + 3 * O.brokers);
    snprintf(countset, sizeof countset, "broker.count=%d", O.brokers);
    snprintf(iamset, sizeof iamset, "iam.port=%d", t->iam_port);
    /* advertise 127.0.0.1, as the mock does, so no client tries ::1 first */
    char *argv[32 + 2 * 16] = {(char *)O.binary, "--data-dir", t->data_dir, "--set", portset, "--set", countset,
                               "--set", "advertised.host=127.0.0.1", "--log-level", "info", "--set", iamset,
                               "--set", adminset};
    int argc = 15;
    if (iam) {
        /* one long-term key; the bench signs its tokens with it (iamsign.c) */
        snprintf(t->identities_path, sizeof t->identities_path, "%s/identities.json", t->tmpdir);
        FILE *f = fopen(t->identities_path, "w");
        if (!f) die("%s: %s", t->identities_path, strerror(errno));
        fprintf(f, "{\"identities\": [{\"access_key_id\": \"%s\", \"secret_access_key\": \"%s\", \"principal\": \"%s\"}]}\n",
                BENCH_AKID, BENCH_SECRET, BENCH_PRINCIPAL);
        fclose(f);
        snprintf(idset, sizeof idset, "iam.identities.file=%s", t->identities_path);
        argv[argc++] = "--set";
        argv[argc++] = idset;
        /* the default 100 per second (MSK's limit) would cap the measurement */
        argv[argc++] = "--set";
        argv[argc++] = "iam.max.connects.per.second=0";
        if (O.security == SEC_SASL_SSL) {
            /* librdkafka before 2.10 enables SASL only when the broker advertises SaslHandshake v0
             * (its src/rdkafka_feature.c asks for the exact range 0-0) and then speaks v1; the serverless
             * profile advertises v1 only, as MSK Serverless does, and 2.0.2 gives up with "SASL
             * Handshake not supported by broker". Advertising v0 as well (the provisioned and kafka
             * profiles' default) lets it authenticate; it still uses SaslHandshake v1. */
            argv[argc++] = "--set";
            argv[argc++] = "sasl.handshake.v0.enable=true";
        }
        if (t->sasl_port) {
            snprintf(saslset, sizeof saslset, "sasl.plaintext.port=%d", t->sasl_port);
            argv[argc++] = "--set";
            argv[argc++] = saslset;
        }
        if (strcmp(t->data_dir, ":memory:")) {
            snprintf(t->ca_path, sizeof t->ca_path, "%s/tls/ca.pem", t->data_dir);
        } else {
            /* mskmock keeps its generated CA in memory here: give it a certificate whose CA the clients can trust */
            char dir[300], err[256];
            snprintf(dir, sizeof dir, "%s/tls", t->tmpdir);
            if (mkdir(dir, 0700) != 0 || tlscert_make(dir, err, sizeof err) != 0) die("%s", err);
            snprintf(t->ca_path, sizeof t->ca_path, "%s/ca.pem", dir);
            snprintf(certset, sizeof certset, "tls.cert.file=%s/server.pem", dir);
            snprintf(keyset, sizeof keyset, "tls.key.file=%s/server.key", dir);
            argv[argc++] = "--set";
            argv[argc++] = certset;
            argv[argc++] = "--set";
            argv[argc++] = keyset;
        }
    }
    for (int i = 0; i < O.nbroker_sets; i++) {
        argv[argc++] = "--set";
        argv[argc++] = (char *)O.broker_sets[i];
    }
    argv[argc] = NULL;
    double t0 = now_s();
    pid_t pid = spawn_logged(argv, t->log_path, false);
    t->pid = pid;
    wait_listening(pid, port, t0, 10, t->log_path, "mskmock");
    t->startup_ms = (now_s() - t0) * 1000.0;
    char *b = t->plain_bootstrap;
    for (int i = 0; i < O.brokers; i++)
        b += snprintf(b, sizeof t->plain_bootstrap - (size_t)(b - t->plain_bootstrap), "%s127.0.0.1:%d", i ? "," : "",
                      port + i);
    b = t->bootstrap;
    int client_port = O.security == SEC_SASL_SSL ? t->iam_port : port;
    for (int i = 0; i < O.brokers; i++)
        b += snprintf(b, sizeof t->bootstrap - (size_t)(b - t->bootstrap), "%s127.0.0.1:%d", i ? "," : "",
                      client_port + i);
    if (O.security == SEC_SASL_SSL) sec_target = t;

    /* the broker's own figure, for reference */
    t->self_ready_ms = -1;
    for (int i = 0; i < 200 && t->self_ready_ms < 0; i++) {
        FILE *f = fopen(t->log_path, "r");
        char line[2048];
        while (f && fgets(line, sizeof line, f)) {
            char *p = strstr(line, "ready in ");
            if (p) t->self_ready_ms = strtod(p + 9, NULL);
        }
        if (f) fclose(f);
        if (t->self_ready_ms < 0) sleep_us(1000);
    }
}

static void start_mock_inprocess(target *t) {
    t->kind = "mock";
    t->storage = "memory (in-process)";
    t->base_rss_kb = rss_kb(0);
    double h0 = now_s();
    rd_kafka_conf_t *c = base_conf(NULL);
    char err[256];
    t->mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!t->mock_rk) die("rd_kafka_new: %s", err);
    double t0 = now_s();
    t->host_handle_ms = (t0 - h0) * 1000.0;
    t->mcluster = rd_kafka_mock_cluster_new(t->mock_rk, O.brokers);
    if (!t->mcluster) die("rd_kafka_mock_cluster_new failed");
    const char *bs = rd_kafka_mock_cluster_bootstraps(t->mcluster);
    const char *colon = strchr(bs, ':');
    int port = colon ? atoi(colon + 1) : 0;
    while (!try_connect(port)) {
        if (now_s() - t0 > 10) die("mock cluster accepted no connection on %s within 10 s", bs);
        sleep_us(200);
    }
    t->startup_ms = (now_s() - t0) * 1000.0;
    snprintf(t->bootstrap, sizeof t->bootstrap, "%s", bs);
    t->mock_tid = find_thread("rdk:mock");
}

/* `mskbench mock-serve`: the mock cluster in a process of its own. Prints
 * "BOOT <bootstraps>", then serves "topic NAME PARTITIONS" lines from stdin
 * with "ok <err>" until EOF. */
static int mock_serve(void) {
    char err[256];
    rd_kafka_conf_t *c = base_conf(NULL); /* as the in-process mock's handle */
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!rk) die("rd_kafka_new: %s", err);
    client_ready(rk);
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, O.brokers);
    if (!mc) die("rd_kafka_mock_cluster_new failed");
    printf("BOOT %s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);
    char line[512], name[256];
    int parts;
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "topic %255s %d", name, &parts) == 2) {
            rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, name, parts, RF);
            printf("ok %d\n", (int)e);
            fflush(stdout);
        }
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}

static void start_mock_isolated(target *t, const char *self) {
    t->kind = "mock-isolated";
    t->storage = "memory (own process)";
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) die("pipe: %s", strerror(errno));
    char nb[16];
    snprintf(nb, sizeof nb, "%d", O.brokers);
    char *argv[] = {(char *)self, "mock-serve", "--brokers", nb, NULL};
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execv(self, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    t->pid = pid;
    t->ctl_in = fdopen(in[1], "w");
    t->ctl_out = fdopen(out[0], "r");
    char line[sizeof t->bootstrap];
    if (!fgets(line, sizeof line, t->ctl_out) || strncmp(line, "BOOT ", 5)) die("mock-serve did not start");
    line[strcspn(line, "\n")] = 0;
    memmove(t->bootstrap, line + 5, strlen(line + 5) + 1);
    const char *colon = strchr(t->bootstrap, ':');
    int port = colon ? atoi(colon + 1) : 0;
    while (!try_connect(port)) {
        if (now_s() - t0 > 10) die("mock-serve accepted no connection within 10 s");
        sleep_us(200);
    }
    t->startup_ms = (now_s() - t0) * 1000.0;
}

static void start_kafka(target *t) {
    t->kind = "kafka";
    t->storage = "disk";
    if (!O.kafka_libs || !O.kafka_start) die("kafka mode needs --kafka-libs DIR and --kafka-start PATH");
    if (O.brokers != 1) die("kafka mode runs one node: pass --brokers 1");
    make_tmpdir(t);
    snprintf(t->log_path, sizeof t->log_path, "%s/kafka.log", t->tmpdir);
    snprintf(t->data_dir, sizeof t->data_dir, "%s/data", t->tmpdir);
    int port = free_port_range(2); /* the broker's and the controller's */
    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    char *argv[] = {"bash", (char *)O.kafka_start, (char *)O.kafka_libs, t->tmpdir, portarg, NULL};
    double t0 = now_s();
    t->pid = spawn_logged(argv, t->log_path, true); /* start.sh execs java: the broker itself */
    wait_listening(t->pid, port, t0, 90, t->log_path, "kafka");
    t->startup_ms = (now_s() - t0) * 1000.0; /* formatting the metadata log included */
    snprintf(t->bootstrap, sizeof t->bootstrap, "127.0.0.1:%d", port);
    snprintf(t->plain_bootstrap, sizeof t->plain_bootstrap, "127.0.0.1:%d", port);
    t->self_ready_ms = -1;
}

void create_topics(target *t, char names[][128], const int *parts, int n) {
    if (t->mcluster) {
        for (int i = 0; i < n; i++) {
            rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(t->mcluster, names[i], parts[i], RF);
            if (e) die("mock topic %s: %s", names[i], rd_kafka_err2str(e));
        }
        return;
    }
    if (t->ctl_in) {
        for (int i = 0; i < n; i++) {
            char line[64];
            fprintf(t->ctl_in, "topic %s %d\n", names[i], parts[i]);
            fflush(t->ctl_in);
            if (!fgets(line, sizeof line, t->ctl_out) || strcmp(line, "ok 0\n")) die("mock-serve topic %s: %s", names[i], line);
        }
        return;
    }
    char err[256];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, base_conf(t->bootstrap), err, sizeof err);
    if (!rk) die("rd_kafka_new: %s", err);
    client_ready(rk);
    rd_kafka_NewTopic_t *nt[8];
    for (int i = 0; i < n; i++) {
        nt[i] = rd_kafka_NewTopic_new(names[i], parts[i], RF, err, sizeof err);
        if (!nt[i]) die("NewTopic: %s", err);
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(ao, 10000, err, sizeof err);
    rd_kafka_CreateTopics(rk, nt, (size_t)n, ao, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    if (!ev) die("CreateTopics: no answer within 30 s");
    if (rd_kafka_event_error(ev)) die("CreateTopics: %s", rd_kafka_event_error_string(ev));
    size_t cnt;
    const rd_kafka_topic_result_t **res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    for (size_t i = 0; i < cnt; i++)
        if (rd_kafka_topic_result_error(res[i]))
            die("CreateTopics %s: %s", rd_kafka_topic_result_name(res[i]), rd_kafka_topic_result_error_string(res[i]));
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

/* Stops the broker; returns the seconds it took to exit (-1 if it had to be killed). */
double stop_target(target *t, int *exit_status) {
    *exit_status = 0;
    if (t->mcluster) {
        double t0 = now_s();
        rd_kafka_mock_cluster_destroy(t->mcluster);
        rd_kafka_destroy(t->mock_rk);
        return now_s() - t0;
    }
    double t0 = now_s();
    if (t->ctl_in) fclose(t->ctl_in); /* EOF stops mock-serve */
    else kill(t->pid, SIGTERM);
    int st = 0;
    for (;;) {
        pid_t r = waitpid(t->pid, &st, WNOHANG);
        if (r == t->pid) break;
        if (now_s() - t0 > 15) {
            kill(t->pid, SIGKILL);
            waitpid(t->pid, &st, 0);
            *exit_status = -1;
            if (t->ctl_out) fclose(t->ctl_out);
            return -1;
        }
        sleep_us(1000);
    }
    if (t->ctl_out) fclose(t->ctl_out);
    *exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return now_s() - t0;
}

/* ---------------------------------------------------------------- RSS sampler */

typedef struct {
    const target *t;
    atomic_bool run;
    atomic_long peak_kb, phase_peak_kb;         /* broker */
    atomic_long self_peak_kb, self_phase_peak_kb; /* this process (the clients) */
    pthread_t th;
} sampler;

static void amax(atomic_long *a, long v) {
    long cur = atomic_load(a);
    while (v > cur && !atomic_compare_exchange_weak(a, &cur, v)) {
    }
}

static void *sampler_main(void *p) {
    sampler *s = p;
    while (atomic_load(&s->run)) {
        long b = target_rss_kb(s->t), me = rss_kb(0);
        amax(&s->peak_kb, b);
        amax(&s->phase_peak_kb, b);
        amax(&s->self_peak_kb, me);
        amax(&s->self_phase_peak_kb, me);
        sleep_us(5000);
    }
    return NULL;
}

/* ---------------------------------------------------------------- workloads */

typedef struct {
    char name[32];
    int partitions;
    long ok, failed;
    long dups, bad; /* consume: duplicate or malformed records */
    long held;      /* consume: records the broker held (high - low watermarks) */
    double secs, first_ms;
    double msgs_s, mb_s;
    double steady_msgs_s; /* consume: first record to last, without the set-up */
    long broker_peak_kb, client_peak_kb;
    double broker_cpu_s, client_cpu_s;
    long long broker_write_bytes; /* to storage, broker process only; -1 unknown */
    long long wb0;
    char error[512];
} phase;

static atomic_long dr_ok, dr_failed;
static char dr_first_error[256];

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    (void)rk, (void)opaque;
    if (m->err) {
        if (atomic_fetch_add(&dr_failed, 1) == 0) snprintf(dr_first_error, sizeof dr_first_error, "%s", rd_kafka_err2str(m->err));
    } else {
        atomic_fetch_add(&dr_ok, 1);
    }
}

static void phase_begin(sampler *s, target *t, phase *ph, double *cpu0, double *self_cpu0) {
    atomic_store(&s->phase_peak_kb, 0);
    atomic_store(&s->self_phase_peak_kb, 0);
    *cpu0 = target_cpu_s(t);
    *self_cpu0 = proc_cpu_s(0);
    ph->wb0 = t->pid ? proc_write_bytes(t->pid) : -1;
}

static void phase_end(sampler *s, target *t, phase *ph, double cpu0, double self_cpu0, long self_base_kb) {
    long b = target_rss_kb(t);
    amax(&s->phase_peak_kb, b);
    amax(&s->peak_kb, b);
    ph->broker_peak_kb = atomic_load(&s->phase_peak_kb);
    ph->client_peak_kb = atomic_load(&s->self_phase_peak_kb) - self_base_kb;
    double c1 = target_cpu_s(t);
    ph->broker_cpu_s = (cpu0 >= 0 && c1 >= 0) ? c1 - cpu0 : -1;
    ph->client_cpu_s = proc_cpu_s(0) - self_cpu0;
    long long wb1 = t->pid ? proc_write_bytes(t->pid) : -1;
    ph->broker_write_bytes = ph->wb0 >= 0 && wb1 >= 0 ? wb1 - ph->wb0 : -1;
}

static void fill_payload(char *buf, int size) {
    for (int i = 0; i < size; i++) buf[i] = (char)('a' + i % 26);
}

static void run_produce(target *t, sampler *s, const char *topic, int parts, phase *ph, long self_base_kb) {
    snprintf(ph->name, sizeof ph->name, "produce");
    ph->partitions = parts;
    char err[256];
    rd_kafka_conf_t *c = base_conf(t->bootstrap);
    producer_conf(c, O.linger_ms);
    rd_kafka_conf_set_dr_msg_cb(c, dr_cb);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!rk) die("rd_kafka_new: %s", err);
    client_ready(rk);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const rd_kafka_metadata_t *md;
    /* connect and learn the leaders before the clock starts */
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_metadata_destroy(md);

    char *buf = malloc((size_t)O.size);
    fill_payload(buf, O.size);
    atomic_store(&dr_ok, 0);
    atomic_store(&dr_failed, 0);
    dr_first_error[0] = 0;
    double cpu0, scpu0;
    phase_begin(s, t, ph, &cpu0, &scpu0);
    double t0 = now_s();
    for (long i = 0; i < O.messages; i++) {
        uint64_t seq = (uint64_t)i;
        memcpy(buf, &seq, sizeof seq);
        for (;;) {
            rd_kafka_resp_err_t e =
                rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION((int32_t)(i % parts)),
                                  RD_KAFKA_V_VALUE(buf, (size_t)O.size), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce: %s", rd_kafka_err2str(e));
            rd_kafka_poll(rk, 5);
        }
        if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
    }
    rd_kafka_resp_err_t fe = rd_kafka_flush(rk, 120000);
    ph->secs = now_s() - t0;
    phase_end(s, t, ph, cpu0, scpu0, self_base_kb);
    ph->ok = atomic_load(&dr_ok);
    ph->failed = atomic_load(&dr_failed) + (O.messages - atomic_load(&dr_ok) - atomic_load(&dr_failed));
    if (fe) snprintf(ph->error, sizeof ph->error, "flush: %s (%d left in queue)", rd_kafka_err2str(fe), rd_kafka_outq_len(rk));
    else if (dr_first_error[0]) snprintf(ph->error, sizeof ph->error, "delivery: %s", dr_first_error);
    ph->msgs_s = (double)ph->ok / ph->secs;
    ph->mb_s = (double)ph->ok * O.size / 1e6 / ph->secs;
    free(buf);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
}

/* A consumer assigned to every partition of `topic` from the beginning. It
 * learns the leaders first: assigned before that, librdkafka 2.0.2 waits for
 * its offset-query timer (~500 ms) before the first ListOffsets. When `held`
 * is given it receives the number of records the broker holds (high - low
 * watermark, summed over partitions). */
static rd_kafka_t *new_consumer(const target *t, const char *topic, int parts, long *held) {
    char err[256];
    rd_kafka_conf_t *c = base_conf(t->bootstrap);
    consumer_conf(c);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
    if (!rk) die("rd_kafka_new: %s", err);
    client_ready(rk);
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const rd_kafka_metadata_t *md;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    if (held) {
        *held = 0;
        for (int p = 0; p < parts; p++) {
            int64_t lo, hi;
            rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000);
            if (e) die("watermarks of %s [%d]: %s", topic, p, rd_kafka_err2str(e));
            *held += (long)(hi - lo);
        }
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(parts);
    for (int p = 0; p < parts; p++) rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_resp_err_t e = rd_kafka_assign(rk, l);
    if (e) die("assign: %s", rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_destroy(l);
    return rk;
}

static void close_consumer(rd_kafka_t *rk) {
    rd_kafka_assign(rk, NULL);
    rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

/* Reads back every record the broker holds. mskmock holds all N; librdkafka's
 * mock keeps only the newest 5 MiB of each partition (max_size in its
 * src/rdkafka_mock.c), so against it fewer are read and `held` says how many. */
static void run_consume(target *t, sampler *s, const char *topic, int parts, phase *ph, long self_base_kb) {
    snprintf(ph->name, sizeof ph->name, "consume");
    ph->partitions = parts;
    long n = O.messages;
    uint8_t *seen = calloc((size_t)n / 8 + 1, 1);
    long held = 0;
    rd_kafka_t *rk = new_consumer(t, topic, parts, &held);
    /* new_consumer assigned; the clock starts there: the metadata and
     * watermark round trips before it are the same for both targets */
    double cpu0, scpu0;
    phase_begin(s, t, ph, &cpu0, &scpu0);
    double t0 = now_s(), last = t0, first = 0;
    long distinct = 0, errs = 0;
    ph->held = held;
    while (distinct < held) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
        double now = now_s();
        if (!m) {
            if (now - last > 30) {
                snprintf(ph->error, sizeof ph->error, "stalled: no record for 30 s after %ld of %ld", distinct, held);
                break;
            }
            continue;
        }
        if (m->err) {
            if (errs++ == 0) snprintf(ph->error, sizeof ph->error, "consumer error: %s", rd_kafka_message_errstr(m));
        } else {
            uint64_t seq;
            if (m->len != (size_t)O.size || (memcpy(&seq, m->payload, sizeof seq), seq >= (uint64_t)n)) {
                ph->bad++;
            } else if (seen[seq / 8] & (1u << (seq % 8))) {
                ph->dups++;
            } else {
                seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
                distinct++;
                if (!first) first = now;
                last = now;
            }
        }
        rd_kafka_message_destroy(m);
    }
    ph->secs = last - t0;
    ph->first_ms = first ? (first - t0) * 1000 : -1;
    phase_end(s, t, ph, cpu0, scpu0, self_base_kb);
    ph->ok = distinct;
    ph->failed = held - distinct;
    ph->msgs_s = (double)distinct / ph->secs;
    ph->mb_s = (double)distinct * O.size / 1e6 / ph->secs;
    ph->steady_msgs_s = distinct > 1 && last > first ? (double)(distinct - 1) / (last - first) : -1;
    close_consumer(rk);
    free(seen);
}

/* ---- latency: one record every lat_interval_us, consumer in another thread */

typedef struct {
    const target *t;
    const char *topic;
    long total, warmup;
    int64_t *lat_ns; /* by sequence number, -1 until received */
    atomic_long received;
    atomic_bool stop;
    atomic_bool assigned;
    long dups;
} lat_ctx;

static void *lat_consumer(void *p) {
    lat_ctx *L = p;
    rd_kafka_t *rk = new_consumer(L->t, L->topic, 1, NULL);
    atomic_store(&L->assigned, true);
    while (!atomic_load(&L->stop)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
        if (!m) continue;
        int64_t now = now_ns();
        if (!m->err && m->len >= 16) {
            uint64_t seq;
            int64_t sent;
            memcpy(&seq, m->payload, 8);
            memcpy(&sent, (char *)m->payload + 8, 8);
            if (seq < (uint64_t)L->total) {
                if (L->lat_ns[seq] >= 0) L->dups++;
                else {
                    L->lat_ns[seq] = now - sent;
                    atomic_fetch_add(&L->received, 1);
                }
            }
        }
        rd_kafka_message_destroy(m);
    }
    close_consumer(rk);
    return NULL;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct {
    long sent, measured, received_measured, failed, dups;
    double p50_ms, p99_ms, max_ms, mean_ms;
    double secs;
    char error[256];
} lat_result;

static void run_latency(const target *t, const char *topic, lat_result *r) {
    lat_ctx L = {.t = t, .topic = topic};
    L.warmup = (long)O.lat_warmup_ms * 1000 / O.lat_interval_us;
    long measured = (long)(O.lat_secs * 1e6) / O.lat_interval_us;
    L.total = L.warmup + measured;
    L.lat_ns = malloc(sizeof(int64_t) * (size_t)L.total);
    for (long i = 0; i < L.total; i++) L.lat_ns[i] = -1;
    pthread_t th;
    pthread_create(&th, NULL, lat_consumer, &L);
    while (!atomic_load(&L.assigned)) sleep_us(1000);

    char err[256];
    rd_kafka_conf_t *c = base_conf(t->bootstrap);
    producer_conf(c, O.lat_linger_ms);
    rd_kafka_conf_set_dr_msg_cb(c, dr_cb);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err);
    if (!rk) die("rd_kafka_new: %s", err);
    client_ready(rk);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const rd_kafka_metadata_t *md;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_metadata_destroy(md);
    atomic_store(&dr_ok, 0);
    atomic_store(&dr_failed, 0);
    dr_first_error[0] = 0;

    char *buf = malloc((size_t)O.size); /* --size is at least 16 */
    fill_payload(buf, O.size);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double t0 = now_s();
    for (long i = 0; i < L.total; i++) {
        next.tv_nsec += O.lat_interval_us * 1000L;
        while (next.tv_nsec >= 1000000000L) next.tv_nsec -= 1000000000L, next.tv_sec++;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
        }
        uint64_t seq = (uint64_t)i;
        int64_t ts = now_ns();
        memcpy(buf, &seq, 8);
        memcpy(buf + 8, &ts, 8);
        rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(0),
                                                  RD_KAFKA_V_VALUE(buf, (size_t)O.size),
                                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (e) die("latency produce: %s", rd_kafka_err2str(e));
        rd_kafka_poll(rk, 0);
    }
    rd_kafka_flush(rk, 30000);
    r->secs = now_s() - t0;
    double w0 = now_s();
    while (atomic_load(&L.received) < L.total && now_s() - w0 < 10) sleep_us(1000);
    atomic_store(&L.stop, true);
    pthread_join(th, NULL);

    r->sent = L.total;
    r->measured = measured;
    r->failed = atomic_load(&dr_failed);
    r->dups = L.dups;
    if (dr_first_error[0]) snprintf(r->error, sizeof r->error, "delivery: %.240s", dr_first_error);
    int64_t *v = malloc(sizeof(int64_t) * (size_t)measured);
    long k = 0;
    double sum = 0;
    for (long i = L.warmup; i < L.total; i++)
        if (L.lat_ns[i] >= 0) v[k++] = L.lat_ns[i], sum += (double)L.lat_ns[i];
    r->received_measured = k;
    if (k) {
        qsort(v, (size_t)k, sizeof *v, cmp_i64);
        r->p50_ms = (double)v[(k - 1) / 2] / 1e6;
        long i99 = (long)((double)k * 0.99 + 0.999999) - 1;
        if (i99 < 0) i99 = 0;
        r->p99_ms = (double)v[i99] / 1e6;
        r->max_ms = (double)v[k - 1] / 1e6;
        r->mean_ms = sum / (double)k / 1e6;
    }
    if (k < measured && !r->error[0]) snprintf(r->error, sizeof r->error, "%ld of %ld records not received within 10 s", measured - k, measured);
    free(v);
    free(buf);
    free(L.lat_ns);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
}

/* ---------------------------------------------------------------- output */

void jraw(jbuf *j, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(j->p + j->n, j->cap - j->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < j->cap - j->n) {
            j->n += (size_t)k;
            return;
        }
        j->cap = j->cap * 2 + (size_t)(k > 0 ? k : 64) + 64;
        j->p = realloc(j->p, j->cap);
    }
}

void jnum(jbuf *j, const char *k, double v) {
    if (v == (double)(long long)v && v < 1e15 && v > -1e15) jraw(j, ",\"%s\":%lld", k, (long long)v);
    else jraw(j, ",\"%s\":%.3f", k, v);
}

void jstr(jbuf *j, const char *k, const char *v) {
    jraw(j, ",\"%s\":\"", k);
    for (const char *s = v ? v : ""; *s; s++) {
        if (*s == '"' || *s == '\\') jraw(j, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) jraw(j, "\\u%04x", *s);
        else jraw(j, "%c", *s);
    }
    jraw(j, "\"");
}

static void jphase(jbuf *j, const char *pre, const phase *ph, bool consume) {
    char k[64];
#define K(x) (snprintf(k, sizeof k, "%s_%s", pre, x), k)
    jnum(j, K("msgs_s"), ph->msgs_s);
    jnum(j, K("mb_s"), ph->mb_s);
    jnum(j, K("secs"), ph->secs);
    jnum(j, K("ok"), (double)ph->ok);
    jnum(j, K("failed"), (double)ph->failed);
    if (consume) {
        jnum(j, K("first_ms"), ph->first_ms);
        jnum(j, K("held"), (double)ph->held);
        jnum(j, K("steady_msgs_s"), ph->steady_msgs_s);
        jnum(j, K("dups"), (double)ph->dups);
        jnum(j, K("bad"), (double)ph->bad);
    }
    jnum(j, K("broker_peak_rss_kib"), (double)ph->broker_peak_kb);
    jnum(j, K("client_peak_rss_growth_kib"), (double)ph->client_peak_kb);
    jnum(j, K("broker_cpu_s"), ph->broker_cpu_s);
    jnum(j, K("client_cpu_s"), ph->client_cpu_s);
    jnum(j, K("broker_write_bytes"), (double)ph->broker_write_bytes);
    jstr(j, K("error"), ph->error);
#undef K
}

double mib(long kb) { return (double)kb / 1024.0; }

static void print_phase(const phase *ph) {
    char cpu[48] = "";
    if (ph->broker_cpu_s >= 0) snprintf(cpu, sizeof cpu, "broker CPU %6.3f s, ", ph->broker_cpu_s);
    printf("  %-8s %d partition%s %10.0f msg/s %8.1f MB/s  %6.2f s  peak broker RSS %7.1f MiB  %sclient CPU %5.2f s",
           ph->name, ph->partitions, ph->partitions == 1 ? " " : "s", ph->msgs_s, ph->mb_s, ph->secs, mib(ph->broker_peak_kb),
           cpu, ph->client_cpu_s);
    if (ph->broker_write_bytes > 0)
        printf("\n           broker wrote %.1f MB to storage (%.2f bytes per record byte)", (double)ph->broker_write_bytes / 1e6,
               (double)ph->broker_write_bytes / ((double)ph->ok * O.size));
    if (!strcmp(ph->name, "consume"))
        printf("\n           first record after %.1f ms; from the first record to the last %.0f msg/s", ph->first_ms,
               ph->steady_msgs_s);
    if (ph->failed || ph->dups || ph->bad) printf("  FAILED %ld dups %ld bad %ld", ph->failed, ph->dups, ph->bad);
    if (!strcmp(ph->name, "consume") && ph->held != O.messages)
        printf("\n           the broker held only %ld of the %ld records produced", ph->held, O.messages);
    printf("\n");
    if (ph->error[0]) printf("           error: %s\n", ph->error);
}

/* ---------------------------------------------------------------- main */

_Noreturn static void usage(void) {
    fprintf(stderr,
            "usage: mskbench mskmock --binary PATH [--data-dir DIR|:memory:] [--security plaintext|sasl_ssl] [options]\n"
            "       mskbench mock [--brokers N] [--isolated] [options]\n"
            "       mskbench kafka --kafka-libs DIR --kafka-start PATH --brokers 1 [--warmup N] [options]\n"
            "       mskbench groups --target mskmock|mock|mock-isolated [--binary PATH] [--data-dir ...] [group options]\n"
            "       mskbench auth --binary PATH [--data-dir ...] [auth options]\n"
            "options: --messages N (200000) --size BYTES (1024) --brokers N (3) --linger-ms MS (5)\n"
            "         --fetch-wait-ms MS (100) --lat-seconds S (5) --lat-interval-us US (1000)\n"
            "         --lat-linger-ms MS (0) --lat-warmup-ms MS (1000) --keep --verbose\n"
            "         --broker-set KEY=VALUE (mskmock only, repeatable; MSKMOCK_* variables are not passed on)\n"
            "         --client-set KEY=VALUE (librdkafka setting for every client, repeatable)\n"
            "group options: --group-consumers 3,30 --heartbeat-ms MS (librdkafka's default) --scale-groups 500 (0: skip)\n"
            "         --scale-members 3 --scale-heartbeat-ms 3000 --scale-leader-delay-ms 0\n"
            "auth options: --auth-conns 32 --auth-threads 1 --auth-seconds 4 --auth-warmup 0.5 --auth-latency-count 200 --auth-only NAME\n");
    exit(2);
}

static void self_path(char *self, size_t n) {
    ssize_t k = readlink("/proc/self/exe", self, n - 1);
    if (k <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
    self[k] = 0;
}

void start_target(target *t, const char *name) {
    running_target = t;
    static bool registered;
    if (!registered) atexit(cleanup_at_exit);
    registered = true;
    if (!strcmp(name, "mskmock")) {
        start_mskmock(t);
    } else if (!strcmp(name, "mock-isolated")) {
        char self[4096];
        self_path(self, sizeof self);
        start_mock_isolated(t, self);
    } else if (!strcmp(name, "mock")) {
        start_mock_inprocess(t);
    } else if (!strcmp(name, "kafka")) {
        start_kafka(t);
    } else {
        usage();
    }
}

void finish_target(target *t) {
    if (t->own_tmpdir) {
        if (O.keep) fprintf(stderr, "mskbench: kept %s\n", t->tmpdir);
        else nftw(t->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    if (sec_target == t) sec_target = NULL;
    running_target = NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    O.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && (v || (usage(), 0)) && ++i)
        if (OPT("--binary")) O.binary = v;
        else if (OPT("--data-dir")) O.data_dir = v;
        else if (OPT("--messages")) O.messages = atol(v);
        else if (OPT("--size")) O.size = atoi(v);
        else if (OPT("--brokers")) O.brokers = atoi(v);
        else if (OPT("--linger-ms")) O.linger_ms = atoi(v);
        else if (OPT("--fetch-wait-ms")) O.fetch_wait_ms = atoi(v);
        else if (OPT("--lat-seconds")) O.lat_secs = atof(v);
        else if (OPT("--lat-interval-us")) O.lat_interval_us = atoi(v);
        else if (OPT("--lat-linger-ms")) O.lat_linger_ms = atoi(v);
        else if (OPT("--lat-warmup-ms")) O.lat_warmup_ms = atoi(v);
        else if (OPT("--broker-set")) {
            if (O.nbroker_sets == 16) usage();
            O.broker_sets[O.nbroker_sets++] = v;
        }
        else if (OPT("--client-set")) {
            if (O.nclient_sets == 16) usage();
            O.client_sets[O.nclient_sets++] = v;
        }
        else if (OPT("--security")) {
            if (!strcmp(v, "plaintext")) O.security = SEC_PLAINTEXT;
            else if (!strcmp(v, "sasl_ssl")) O.security = SEC_SASL_SSL;
            else usage();
        }
        else if (OPT("--target")) O.target = v;
        else if (OPT("--group-consumers")) {
            O.ngroup_sizes = 0;
            for (const char *p = v; *p && O.ngroup_sizes < 8;) {
                O.group_sizes[O.ngroup_sizes++] = atoi(p);
                p += strcspn(p, ",");
                if (*p) p++;
            }
        }
        else if (OPT("--heartbeat-ms")) O.heartbeat_ms = atoi(v);
        else if (OPT("--scale-groups")) O.scale_groups = atoi(v);
        else if (OPT("--scale-members")) O.scale_members = atoi(v);
        else if (OPT("--scale-heartbeat-ms")) O.scale_heartbeat_ms = atoi(v);
        else if (OPT("--scale-leader-delay-ms")) O.scale_leader_delay_ms = atoi(v);
        else if (OPT("--auth-conns")) O.auth_conns = atoi(v);
        else if (OPT("--auth-threads")) O.auth_threads = atoi(v);
        else if (OPT("--auth-seconds")) O.auth_secs = atof(v);
        else if (OPT("--auth-warmup")) O.auth_warmup_s = atof(v);
        else if (OPT("--auth-latency-count")) O.auth_lat_count = atoi(v);
        else if (OPT("--auth-only")) O.auth_only = v;
        else if (OPT("--kafka-libs")) O.kafka_libs = v;
        else if (OPT("--kafka-start")) O.kafka_start = v;
        else if (OPT("--warmup")) O.warmup = atol(v);
        else if (!strcmp(a, "--isolated")) O.isolated = true;
        else if (!strcmp(a, "--keep")) O.keep = true;
        else if (!strcmp(a, "--verbose")) O.verbose = true;
        else usage();
#undef OPT
    }
    if (O.messages < 1 || O.size < 16 || O.brokers < 1 || O.lat_interval_us < 1) usage();
    signal(SIGPIPE, SIG_IGN);
    if (!strcmp(O.mode, "mock-serve")) return mock_serve();
    char self[4096];
    self_path(self, sizeof self);
    if (!strcmp(O.mode, "groups")) return groups_main(self);
    if (!strcmp(O.mode, "auth")) {
        O.target = "mskmock";
        return auth_main(self);
    }
    if (O.security != SEC_PLAINTEXT && strcmp(O.mode, "mskmock")) usage();

    static target T;
    target *t = &T;
    if (!strcmp(O.mode, "mskmock")) start_target(t, "mskmock");
    else if (!strcmp(O.mode, "mock")) start_target(t, O.isolated ? "mock-isolated" : "mock");
    else if (!strcmp(O.mode, "kafka")) start_target(t, "kafka");
    else usage();

    sleep_us(200000);
    long idle_kb = target_rss_kb(t);
    char names[3][128];
    int parts[3] = {1, 8, 1};
    snprintf(names[0], sizeof names[0], "bench-p1-%d", (int)getpid());
    snprintf(names[1], sizeof names[1], "bench-p8-%d", (int)getpid());
    snprintf(names[2], sizeof names[2], "bench-lat-%d", (int)getpid());
    double ct0 = now_s();
    create_topics(t, names, parts, 3);
    double create_ms = (now_s() - ct0) * 1000;
    sleep_us(200000);
    long idle_topics_kb = target_rss_kb(t);

    printf("mskbench %s: %ld records of %d B, %d brokers, librdkafka %s\n", t->kind, O.messages, O.size, O.brokers,
           rd_kafka_version_str());
    if (t->data_dir[0]) printf("  data dir %s (%s, %s)\n", t->data_dir, t->storage, strcmp(t->storage, "disk") ? "-" : fs_name(t->data_dir));
    else printf("  storage: %s\n", t->storage);
    for (int i = 0; i < O.nbroker_sets && !strcmp(t->kind, "mskmock"); i++) printf("  broker setting %s\n", O.broker_sets[i]);
    printf("  clients: %s\n", client_settings());
    for (int i = 0; i < O.nclient_sets; i++) printf("  client setting %s\n", O.client_sets[i]);
    if (O.security == SEC_SASL_SSL)
        printf("  clients connect with security.protocol=SASL_SSL, sasl.mechanisms=OAUTHBEARER (token signed by the "
               "bench), CA %s, to the IAM listener %s; broker setting sasl.handshake.v0.enable=true (librdkafka %s "
               "needs SaslHandshake v0 advertised)\n", t->ca_path, t->bootstrap, rd_kafka_version_str());
    printf("  startup to first accepted connection  %8.2f ms", t->startup_ms);
    if (t->self_ready_ms > 0) printf("   (broker's log: ready in %.1f ms)", t->self_ready_ms);
    if (t->mcluster) printf("   (+ %.2f ms for the rd_kafka_t the mock needs)", t->host_handle_ms);
    printf("\n  idle RSS after start                  %8.1f MiB%s\n", mib(idle_kb),
           t->pid ? "" : "   (growth of this process)");
    printf("  idle RSS after creating 3 topics      %8.1f MiB   (create took %.1f ms)\n", mib(idle_topics_kb), create_ms);
    fflush(stdout);

    sampler S = {.t = t};
    atomic_store(&S.run, true);
    long self_base_kb = rss_kb(0);
    pthread_create(&S.th, NULL, sampler_main, &S);

    if (O.warmup > 0) {
        /* the same work, unmeasured, so a JVM's JIT has compiled it before the measured phases */
        char warm[1][128];
        int wparts[1] = {8};
        snprintf(warm[0], sizeof warm[0], "bench-warmup-%d", (int)getpid());
        create_topics(t, warm, wparts, 1);
        long m = O.messages;
        O.messages = O.warmup;
        phase wp[2];
        memset(wp, 0, sizeof wp);
        double w0 = now_s();
        run_produce(t, &S, warm[0], 8, &wp[0], self_base_kb);
        run_consume(t, &S, warm[0], 8, &wp[1], self_base_kb);
        O.messages = m;
        printf("  warm-up: %ld records produced and consumed in %.1f s (not measured)\n", O.warmup, now_s() - w0);
        fflush(stdout);
    }
    phase ph[4];
    memset(ph, 0, sizeof ph);
    double busy0 = machine_busy_s(), own0 = proc_cpu_s(0) + (t->pid ? proc_cpu_s(t->pid) : 0), wall0 = now_s();
    run_produce(t, &S, names[0], 1, &ph[0], self_base_kb);
    print_phase(&ph[0]);
    fflush(stdout);
    run_consume(t, &S, names[0], 1, &ph[1], self_base_kb);
    print_phase(&ph[1]);
    fflush(stdout);
    run_produce(t, &S, names[1], 8, &ph[2], self_base_kb);
    print_phase(&ph[2]);
    fflush(stdout);
    run_consume(t, &S, names[1], 8, &ph[3], self_base_kb);
    print_phase(&ph[3]);
    fflush(stdout);

    double other_cpu_s = (machine_busy_s() - busy0) - (proc_cpu_s(0) + (t->pid ? proc_cpu_s(t->pid) : 0) - own0);
    if (other_cpu_s < 0) other_cpu_s = 0; /* clock-tick granularity */
    double load_wall_s = now_s() - wall0;
    printf("  other processes' CPU during the throughput phases: %.2f s over %.2f s wall (2 cores = %.2f s available)\n",
           other_cpu_s, load_wall_s, 2 * load_wall_s);

    lat_result lr = {0};
    double lcpu0 = target_cpu_s(t);
    long long lwb0 = t->pid ? proc_write_bytes(t->pid) : -1;
    run_latency(t, names[2], &lr);
    double lat_cpu = target_cpu_s(t) - lcpu0;
    long long lwb1 = t->pid ? proc_write_bytes(t->pid) : -1;
    long long lat_wb = lwb0 >= 0 && lwb1 >= 0 ? lwb1 - lwb0 : -1;
    printf("  latency  1 record / %d us for %.1f s: p50 %.2f ms  p99 %.2f ms  max %.2f ms  mean %.2f ms  (%ld/%ld received",
           O.lat_interval_us, O.lat_secs, lr.p50_ms, lr.p99_ms, lr.max_ms, lr.mean_ms, lr.received_measured, lr.measured);
    if (lcpu0 >= 0) printf(", broker CPU %.2f s", lat_cpu);
    if (lat_wb > 0) printf(", broker wrote %.1f MB to storage for %.1f MB of records", (double)lat_wb / 1e6, (double)lr.sent * O.size / 1e6);
    printf(")\n");
    if (lr.error[0]) printf("           error: %s\n", lr.error);

    atomic_store(&S.run, false);
    pthread_join(S.th, NULL);
    long peak_kb = atomic_load(&S.peak_kb);
    long client_peak_kb = atomic_load(&S.self_peak_kb) - self_base_kb;
    long hwm_kb = t->pid ? status_kb(t->pid, "VmHWM:") : -1;
    sleep_us(500000);
    long after_kb = target_rss_kb(t);
    long long data_bytes = strcmp(t->storage, "disk") ? -1 : dir_bytes(t->data_dir);
    printf("  peak RSS under load                   %8.1f MiB", mib(peak_kb));
    if (hwm_kb > 0) printf("   (VmHWM %.1f MiB)", mib(hwm_kb));
    printf("\n  RSS after load (idle again)           %8.1f MiB\n", mib(after_kb));
    printf("  client (this process) peak RSS growth %8.1f MiB\n", mib(client_peak_kb));
    if (data_bytes >= 0) printf("  data dir size after load              %8.1f MiB\n", (double)data_bytes / 1048576.0);

    int exit_status;
    double stop_s = stop_target(t, &exit_status);
    printf("  stop: %s in %.1f ms, exit status %d\n", stop_s < 0 ? "killed, did not exit" : "exited", stop_s * 1000, exit_status);
    int warn = atomic_load(&client_warnings), cerr = atomic_load(&client_errors);
    printf("  client warnings logged %d, error callbacks %d%s%s\n", warn, cerr, cerr ? ": first " : "", first_client_error);

    jbuf j = {0};
    j.cap = 4096;
    j.p = malloc(j.cap);
    jraw(&j, "{\"bench\":\"mskbench\"");
    jstr(&j, "target", t->kind);
    jstr(&j, "storage", t->storage);
    jstr(&j, "fs", strcmp(t->storage, "disk") ? "-" : fs_name(t->data_dir));
    jstr(&j, "security", O.security == SEC_SASL_SSL ? "SASL_SSL/OAUTHBEARER" : "PLAINTEXT");
    {
        char cs[512] = "";
        for (int i = 0; i < O.nclient_sets; i++)
            snprintf(cs + strlen(cs), sizeof cs - strlen(cs), "%s%s", i ? " " : "", O.client_sets[i]);
        jstr(&j, "client_sets", cs);
    }
    jnum(&j, "messages", (double)O.messages);
    jnum(&j, "size", O.size);
    jnum(&j, "brokers", O.brokers);
    jstr(&j, "librdkafka", rd_kafka_version_str());
    jstr(&j, "cpu_clock", "ns"); /* broker and client CPU from the kernel's CPU clocks, not 10-ms ticks */
    jnum(&j, "linger_ms", O.linger_ms);
    jnum(&j, "fetch_wait_max_ms", O.fetch_wait_ms);
    jnum(&j, "lat_linger_ms", O.lat_linger_ms);
    jnum(&j, "startup_ms", t->startup_ms);
    jnum(&j, "self_ready_ms", t->self_ready_ms > 0 ? t->self_ready_ms : -1);
    jnum(&j, "host_handle_ms", t->mcluster ? t->host_handle_ms : -1);
    jnum(&j, "idle_rss_kib", (double)idle_kb);
    jnum(&j, "idle_rss_topics_kib", (double)idle_topics_kb);
    jnum(&j, "create_topics_ms", create_ms);
    jphase(&j, "produce_p1", &ph[0], false);
    jphase(&j, "consume_p1", &ph[1], true);
    jphase(&j, "produce_p8", &ph[2], false);
    jphase(&j, "consume_p8", &ph[3], true);
    jnum(&j, "other_cpu_s", other_cpu_s);
    jnum(&j, "load_wall_s", load_wall_s);
    jnum(&j, "lat_p50_ms", lr.p50_ms);
    jnum(&j, "lat_p99_ms", lr.p99_ms);
    jnum(&j, "lat_max_ms", lr.max_ms);
    jnum(&j, "lat_mean_ms", lr.mean_ms);
    jnum(&j, "lat_measured", (double)lr.measured);
    jnum(&j, "lat_received", (double)lr.received_measured);
    jnum(&j, "lat_broker_cpu_s", lcpu0 >= 0 ? lat_cpu : -1);
    jnum(&j, "lat_broker_write_bytes", (double)lat_wb);
    jstr(&j, "lat_error", lr.error);
    jnum(&j, "peak_rss_kib", (double)peak_kb);
    jnum(&j, "vmhwm_kib", (double)hwm_kb);
    jnum(&j, "rss_after_load_kib", (double)after_kb);
    jnum(&j, "client_peak_rss_growth_kib", (double)client_peak_kb);
    jnum(&j, "data_bytes", (double)data_bytes);
    jnum(&j, "stop_ms", stop_s < 0 ? -1 : stop_s * 1000);
    jnum(&j, "exit_status", exit_status);
    jnum(&j, "client_warnings", warn);
    jnum(&j, "client_errors", cerr);
    jstr(&j, "first_client_error", first_client_error);
    jraw(&j, "}");
    printf("%s\n", j.p);
    free(j.p);

    finish_target(t);
    /* the JVM ends a SIGTERM with 143 after Kafka's shutdown hook: that is Kafka's clean stop */
    bool clean_stop = exit_status == 0 || (!strcmp(t->kind, "kafka") && exit_status == 143);
    bool bad = !clean_stop || stop_s < 0;
    for (int i = 0; i < 4; i++) bad |= ph[i].failed > 0 || ph[i].dups > 0 || ph[i].bad > 0;
    return bad ? 1 : 0;
}
