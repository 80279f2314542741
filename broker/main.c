/* mskmock: command line, configuration, and the one event loop. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "cli/cli.h"
#include "clock.h"
#include "config.h"
#include "iam/authz.h"
#include "log.h"
#include "manpage.h"
#include "ready.h"
#include "revision.h"
#include "lifecycle.h"
#include "srv.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: mskmock [--config FILE] [--data-dir DIR] [--profile NAME] [--log-level LEVEL]\n"
            "               [--ports auto] [--port-base N] [--ready-file PATH] [--set KEY=VALUE]...\n"
            "               [--help] [--version] [--man]\n"
            "       mskmock --probe [--config FILE] ...   health check: the running broker's listeners answer\n"
            "               ApiVersions (those in ready.file if set, else the configured ones); exit 0 or 1\n"
            "       mskmock --wait-ready FILE [--pid PID] [--log LOG] [--timeout S]   wait until the broker\n"
            "               that writes the ready file FILE serves; fail at once, with LOG's last lines, if PID\n"
            "               (the broker you started) exits first; default timeout 30 s; exit 0 or 1\n"
            "       mskmock --salvage DAMAGED.db [--data-dir DIR] ...   copy what is readable of a damaged\n"
            "               database into a new DIR/mskmock.db (which must not exist), topics and partitions\n"
            "               whose rows were lost rebuilt from their segment files, then exit\n"
            "       mskmock --rebuild-index [--data-dir DIR] ...   the same for DIR/mskmock.db (kept aside as\n"
            "               mskmock.db.before-rebuild-<time>), every partition's index rebuilt from its segments\n"
            "--ports auto is ports.auto=true (free ports the OS picks), --port-base N is port.base=N (every port\n"
            "moved together: admin N, plaintext N+12.., iam N+18..) and --ready-file PATH is ready.file=PATH;\n"
            "once serving, one line \"mskmock ready {JSON}\" on stdout gives the ports and bootstrap lists.\n"
            "       mskmock topic create|list|describe|delete ...   a Kafka client for any broker (MSK, Kafka,\n"
            "       mskmock produce TOPIC ...                       mskmock): topics, stdin lines as records,\n"
            "       mskmock consume TOPIC [-g GROUP] ...            records out, consumer groups and their\n"
            "       mskmock group list|describe|seek|delete ...     offsets; TLS and IAM (--sasl-mechanism);\n"
            "                                                       'mskmock group --help' etc.\n"
            "A local AWS MSK Serverless broker. Every configuration key can also be set with an\n"
            "environment variable MSKMOCK_<KEY> (dots become underscores, upper case).\n\nKeys:\n");
    for (size_t i = 0; i < cfg_key_count(); i++) {
        cfg_key_info k = cfg_key_at(i);
        fprintf(f, "  %-34s %s\n", k.name, k.doc);
    }
}

static uv_signal_t sigterm, sigint, sighup, sigchld;

/*
 * The signals that stop or reload the broker are blocked from the start of main until their
 * handlers are installed, after srv_init: one sent meanwhile (a harness stopping the broker as
 * soon as a port answered, while start-up still ran) waits and then stops it cleanly, where its
 * default action killed it (exit -15). The threads made meanwhile keep them blocked; the
 * loop's thread takes them.
 */
static void hold_stop_signals(bool hold) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(hold ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void on_signal(uv_signal_t *h, int signum) {
    srv *s = h->data;
    log_info("signal %d: shutting down", signum);
    s->stopping = true;
    srv_close(s);
    uv_close((uv_handle_t *)&sigterm, NULL);
    uv_close((uv_handle_t *)&sigint, NULL);
    uv_close((uv_handle_t *)&sighup, NULL);
    if (uv_is_active((uv_handle_t *)&sigchld)) uv_close((uv_handle_t *)&sigchld, NULL);
}

/*
 * As PID 1 in a container, orphans of processes run inside it (docker exec, a health check's
 * children) are re-parented to mskmock; reaping them keeps the process table clean.
 */
static void on_sigchld(uv_signal_t *h, int signum) {
    (void)h;
    (void)signum;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

/* SIGHUP: the IAM policies of iam.identities.file are read again (iam/authz.h). */
static void on_sighup(uv_signal_t *h, int signum) {
    (void)signum;
    char err[1024];
    authz_reload(h->data, "SIGHUP", err, sizeof err);
}

/* Thousands of client connections need as many descriptors as the hard limit allows. */
static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int fail(const char *what, const char *err) {
    fprintf(stderr, "mskmock: %s%s\n", what, err);
    return 2;
}

/*
 * glibc serves each megabyte-sized request buffer from a fresh mmap, or trims
 * the heap top after freeing it, so the next one faults in zeroed pages: that
 * was 13% of the loop's time under produce load. Keep up to 256 MiB of freed
 * heap; housekeeping trims it once the broker is idle (lifecycle.c). One arena
 * for every thread: the record pass of big batches runs on libuv's threadpool
 * (topic/validate_async.c), and per-thread arenas each kept up to the
 * decompression cap of what their last pass freed, several times over.
 */
static void tune_malloc(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_ARENA_MAX, 1);
}

/*
 * One process per data directory (stor_dir_lock): the broker, --salvage and --rebuild-index take
 * it before anything in the directory is opened or written, so none of them runs beside a broker
 * on it. The descriptor stays open until the process ends, which releases it (even on kill -9).
 * Returns -1 when held (or the file system cannot lock: a warning), else the exit code (2).
 */
static int lock_data_dir(const char *dir, bool create, const char *what) {
    static int fd = -1;
    char err[8400];
    int rc = stor_dir_lock(dir, create, &fd, err, sizeof err);
    if (rc == 2) log_warn("%s", err);
    if (rc == 0 || rc == 2) return -1;
    return fail(what, err);
}

static void salvage_line(void *ctx, const char *line) {
    (void)ctx;
    log_info("%s", line);
}

/* --salvage: what is readable of a damaged database, into a new one in the data directory. */
static int run_salvage(const char *from, const char *data_dir) {
    if (strcmp(data_dir, ":memory:") == 0) return fail("--salvage needs a data directory to write into, not ", data_dir);
    int rc = lock_data_dir(data_dir, true, "--salvage: ");
    if (rc >= 0) return rc;
    char to[4096], err[1024];
    snprintf(to, sizeof to, "%s/mskmock.db", data_dir);
    if (stor_salvage(from, to, salvage_line, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "mskmock: salvage failed: %s\n", err);
        return 1;
    }
    return 0;
}

/*
 * --rebuild-index: the data directory's database moved aside (with its WAL, never deleted) and
 * salvaged back with every partition's index rebuilt from its segment files; on failure the
 * old file goes back where it was.
 */
static int run_rebuild_index(const char *data_dir) {
    if (strcmp(data_dir, ":memory:") == 0) return fail("--rebuild-index needs a data directory, not ", data_dir);
    char db[4096], aside[4200], err[1024], stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(db, sizeof db, "%s/mskmock.db", data_dir);
    snprintf(aside, sizeof aside, "%s.before-rebuild-%s", db, stamp);
    struct stat sb;
    if (stat(db, &sb) != 0) return fail("--rebuild-index: no database at ", db);
    int rc = lock_data_dir(data_dir, false, "--rebuild-index: ");
    if (rc >= 0) return rc;
    if (stat(aside, &sb) == 0) return fail("--rebuild-index: already exists (try again in a second): ", aside);
    static const char *const parts[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char a[4300], b[4300];
        snprintf(a, sizeof a, "%s%s", db, parts[i]);
        snprintf(b, sizeof b, "%s%s", aside, parts[i]);
        if (rename(a, b) != 0 && (i == 0 || errno != ENOENT)) {
            fprintf(stderr, "mskmock: --rebuild-index: moving %s aside: %s\n", a, strerror(errno));
            return 1;
        }
    }
    log_info("rebuild-index: %s moved aside to %s", db, aside);
    if (stor_salvage_rebuild(aside, db, salvage_line, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "mskmock: rebuild-index failed: %s\n", err);
        for (int i = 0; i < 3; i++) {
            char a[4300], b[4300];
            snprintf(a, sizeof a, "%s%s", aside, parts[i]);
            snprintf(b, sizeof b, "%s%s", db, parts[i]);
            if (rename(a, b) == 0 && i == 0) fprintf(stderr, "mskmock: %s is back where it was\n", db);
        }
        return 1;
    }
    return 0;
}

/* What the command line asked for; the values point into argv. */
typedef struct flags {
    const char *config_file, *data_dir, *profile, *level, *salvage, *ports, *ready_file, *port_base;
    const char *wait_ready, *wait_pid, *wait_log, *wait_timeout;
    const char *sets[64];
    int nsets;
    bool probe, rebuild_index;
} flags;

/* The command line into *f. Returns -1 to go on, else the exit code (--help, --version, --man, a bad flag). */
static int parse_flags(int argc, char **argv, flags *f) {
    *f = (flags){0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **target = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("mskmock %s (%s)\n", MSKMOCK_VERSION, MSKMOCK_REVISION);
            return 0;
        }
        if (!strcmp(a, "--man")) {
            manpage_write(stdout, MSKMOCK_REVISION);
            return 0;
        }
        if (!strcmp(a, "--probe")) {
            f->probe = true;
            continue;
        }
        if (!strcmp(a, "--rebuild-index")) {
            f->rebuild_index = true;
            continue;
        }
        if (!strcmp(a, "--config")) target = &f->config_file;
        else if (!strcmp(a, "--data-dir")) target = &f->data_dir;
        else if (!strcmp(a, "--profile")) target = &f->profile;
        else if (!strcmp(a, "--log-level")) target = &f->level;
        else if (!strcmp(a, "--salvage")) target = &f->salvage;
        else if (!strcmp(a, "--ports")) target = &f->ports;
        else if (!strcmp(a, "--ready-file")) target = &f->ready_file;
        else if (!strcmp(a, "--port-base")) target = &f->port_base;
        else if (!strcmp(a, "--wait-ready")) target = &f->wait_ready;
        else if (!strcmp(a, "--pid")) target = &f->wait_pid;
        else if (!strcmp(a, "--log")) target = &f->wait_log;
        else if (!strcmp(a, "--timeout")) target = &f->wait_timeout;
        else if (!strcmp(a, "--set")) {
            if (i + 1 >= argc || f->nsets == 64) return fail("--set needs KEY=VALUE", "");
            f->sets[f->nsets++] = argv[++i];
            continue;
        } else {
            usage(stderr);
            return fail("unknown argument: ", a);
        }
        if (i + 1 >= argc) return fail("missing value after ", a);
        *target = argv[++i];
    }
    return -1;
}

/* --wait-ready FILE [--pid PID] [--log LOG] [--timeout S]: the exit code. */
static int run_wait_ready(const flags *f) {
    char *end;
    long pid = f->wait_pid ? strtol(f->wait_pid, &end, 10) : 0;
    if (f->wait_pid && (*end || pid <= 0)) return fail("--pid needs a process id, got ", f->wait_pid);
    double secs = f->wait_timeout ? strtod(f->wait_timeout, &end) : 30;
    if (f->wait_timeout && (*end || !(secs > 0) || secs > 86400)) return fail("--timeout needs seconds, got ", f->wait_timeout);
    return ready_wait(f->wait_ready, pid, f->wait_log, (int)(secs * 1000));
}

/*
 * The configuration: file, environment, then the flags (config.h), and the log settings it
 * holds. Returns -1 when loaded, else the exit code.
 */
static int load_config(const flags *f, config *cfg, cfg_source *src) {
    char err[1024];
    /* --data-dir and --log-level come last: they win over --set of the same key */
    cfg_arg args[64 + 6];
    int nargs = 0;
    char kvs[64][1024];
    if (f->profile) args[nargs++] = (cfg_arg){"--profile", "profile", f->profile};
    for (int i = 0; i < f->nsets; i++) {
        snprintf(kvs[i], sizeof kvs[i], "%s", f->sets[i]);
        char *eq = strchr(kvs[i], '=');
        if (!eq) return fail("--set needs KEY=VALUE, got ", f->sets[i]);
        *eq = 0;
        args[nargs++] = (cfg_arg){"--set", kvs[i], eq + 1};
    }
    if (f->ports) {
        if (strcmp(f->ports, "auto") != 0) return fail("--ports takes auto (set each listener's port with --set), got ", f->ports);
        args[nargs++] = (cfg_arg){"--ports", "ports.auto", "true"};
    }
    if (f->ready_file) args[nargs++] = (cfg_arg){"--ready-file", "ready.file", f->ready_file};
    if (f->port_base) args[nargs++] = (cfg_arg){"--port-base", "port.base", f->port_base};
    if (f->data_dir) args[nargs++] = (cfg_arg){"--data-dir", "data.dir", f->data_dir};
    if (f->level) args[nargs++] = (cfg_arg){"--log-level", "log.level", f->level};
    if (cfg_load(cfg, f->config_file, args, nargs, err, sizeof err) != 0) return fail("", err);
    cfg_source_keep(src, f->config_file, args, nargs); /* a created cluster is configured from the same sources */
    if (log_level_parse(cfg->log_level, &log_threshold) != 0)
        return fail("log.level: expected error, warn, info, debug or trace, got ", cfg->log_level);
    log_fmt = cfg->log_format == 1 ? LOG_JSON : LOG_TEXT;
    if (cfg_finish(cfg, err, sizeof err) != 0) return fail("", err);
    return -1;
}

/*
 * The process-wide settings, the loop, the broker's state (srv.h; s->loop) and the signals it
 * answers. Returns -1 when started, else the exit code.
 */
static int start(srv *s, config *cfg, fleet *fl) {
    char err[1024];
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    uv_loop_t *loop = uv_default_loop();
    int rc = lock_data_dir(cfg->data_dir, true, "");
    if (rc >= 0) return rc;
    ready_remove(cfg); /* a file left by a killed broker must not say this one is ready */
    if (srv_init(s, loop, cfg, fl, err, sizeof err) != 0) {
        int rc = fail("", err);
        return s->fatal_exit ? s->fatal_exit : rc; /* a storage failure srv_fail_stop found fatal: exit 3 */
    }
    uv_signal_init(loop, &sigterm);
    uv_signal_init(loop, &sigint);
    uv_signal_init(loop, &sighup);
    sigterm.data = sigint.data = sighup.data = s;
    uv_signal_start(&sigterm, on_signal, SIGTERM);
    uv_signal_start(&sigint, on_signal, SIGINT);
    uv_signal_start(&sighup, on_sighup, SIGHUP);
    if (getpid() == 1) {
        uv_signal_init(loop, &sigchld);
        uv_signal_start(&sigchld, on_sigchld, SIGCHLD);
    }
    hold_stop_signals(false);
    return -1;
}

/* "1@localhost plaintext:9092 iam:9098, 2@...": each broker and its listeners, for the ready line. */
static void describe_nodes(const srv *s, const config *cfg, char *nodes, size_t n) {
    size_t off = 0;
    nodes[0] = 0;
    for (int i = 0; i < s->nnodes && off < n; i++) {
        off += (size_t)snprintf(nodes + off, n - off, "%s%d@%s", i ? ", " : "", s->nodes[i].id, cfg->advertised_host);
        for (int k = 0; k < LSN_COUNT && off < n; k++)
            if (s->nodes[i].ports[k])
                off += (size_t)snprintf(nodes + off, n - off, " %s:%d", lsn_name((listener_kind)k), s->nodes[i].ports[k]);
    }
}

/* The ready file and line, then the loop until a signal stops it (on_signal). Returns the exit code. */
static int run(srv *s, const config *cfg, int64_t t0) {
    char nodes[1024], err[1024];
    describe_nodes(s, cfg, nodes, sizeof nodes);
    if (ready_write(s, err, sizeof err) != 0) {
        log_error("%s", err);
        srv_close(s);
        uv_run(s->loop, UV_RUN_DEFAULT);
        srv_free(s);
        return 2;
    }
    ready_announce(s);
    log_info("mskmock %s (%s) ready in %.1f ms: profile=%s data.dir=%s topics=%d brokers %s", MSKMOCK_VERSION,
             MSKMOCK_REVISION, (double)(clk_mono_us() - t0) / 1000.0, cfg_profile_name((cfg_profile)cfg->profile),
             cfg->data_dir, s->ntopics, nodes);
    /* what start-up freed (SQLite's parse trees, the TLS child's answer) goes back now: tune_malloc's
       threshold keeps the heap from trimming itself, and housekeeping trims only after requests */
    malloc_trim(0);
    uv_run(s->loop, UV_RUN_DEFAULT);
    return 0;
}

/* After the loop ran dry: what start() and load_config() set up, released. Returns the exit code. */
static int shut_down(srv *s, config *cfg) {
    uv_loop_t *loop = s->loop;
    ready_remove(cfg);
    /* srv_fail_stop: memory is past storage; no orderly shutdown, which would store and answer */
    if (s->fatal_exit) return s->fatal_exit;
    srv_free(s);
    uv_loop_close(loop);
    cfg_free(cfg);
    log_info("stopped");
    return 0;
}

int main(int argc, char **argv) {
    int64_t t0 = clk_mono_us();
    /* the client commands run instead of the broker: no broker flag applies to them */
    if (argc > 1 && cli_is_command(argv[1])) return cli_main(argc, argv);
    hold_stop_signals(true);
    tune_malloc();
    if (stor_process_init() != 0) log_debug("SQLite refused its process-wide settings; it keeps its defaults");
    flags f;
    int rc = parse_flags(argc, argv, &f);
    if (rc >= 0) return rc;
    if ((f.wait_pid || f.wait_log || f.wait_timeout) && !f.wait_ready)
        return fail("--pid, --log and --timeout go with --wait-ready FILE", "");
    if (f.wait_ready) return run_wait_ready(&f);

    static config cfg;
    static fleet fl;
    if ((rc = load_config(&f, &cfg, &fl.src)) >= 0) return rc;
    if (f.salvage) return run_salvage(f.salvage, cfg.data_dir);
    if (f.rebuild_index) return run_rebuild_index(cfg.data_dir);
    if (f.probe) return ready_probe(&cfg, 2000);

    static srv s;
    if ((rc = start(&s, &cfg, &fl)) >= 0) return rc;
    if ((rc = run(&s, &cfg, t0)) != 0) return rc;
    return shut_down(&s, &cfg);
}
