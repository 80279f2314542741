/*
 * mskmock consume TOPIC: ListOffsets for where to start (beginning, end, @timestamp), then
 * Fetch from each partition's leader (no fetch session, read_uncommitted), printing each
 * record through -f FORMAT (format.h). Stops after -n COUNT records, or once --timeout
 * seconds pass with nothing new; without either it follows the topic until interrupted.
 * With -g GROUP it reads the partitions the group assigns it (member.h), from the group's
 * committed offsets, and commits what it printed after each fetch and before it leaves.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_int.h"
#include "clock.h"
#include "format.h"
#include "kp_batch.h"
#include "kp_mem.h"
#include "kp_records.h"
#include "member.h"

#define CMD "consume"
#define PARTITION_MAX_BYTES (1 << 20)
#define FETCH_MAX_BYTES (52428800)
#define MAX_DECOMPRESSED (256 << 20)

static void usage(FILE *f) {
    fprintf(f,
            "usage: mskmock consume TOPIC [-o beginning|end|OFFSET|@TIMESTAMP_MS] [-n COUNT] [-f FORMAT]\n"
            "                        [-p PARTITION | -g GROUP] [--timeout S]\n"
            "Prints each record through FORMAT (default \"%%v\\n\"): %%t topic, %%p partition, %%o offset,\n"
            "%%T timestamp (ms), %%k key, %%v value, %%K and %%S key and value lengths, %%h headers, %%%%;\n"
            "\\n \\t escapes. -o: where to start in every partition read (default beginning); @TIMESTAMP_MS is the\n"
            "first record at or after that time. Without -p every partition is read. Stops after COUNT records,\n"
            "or when S seconds pass with nothing new; without either it follows the topic.\n"
            "-g: read as a member of consumer group GROUP (range assignment): from the group's committed offsets\n"
            "(-o where it has none), committing what was printed after each fetch and on exit (also on Ctrl-C).\n"
            CLI_COMMON_USAGE);
}

typedef struct cpart {
    int32_t index, leader;
    int64_t pos;
    int64_t committed; /* with -g: what the group holds for it (-1 none) */
} cpart;

typedef struct consumer {
    cli_cluster cl;
    const char *topic;
    kp_uuid topic_id;
    cpart *parts;
    int32_t nparts;
    const char *fmt;
    int64_t count, max;
    const char *from;
    cli_member *mb; /* with -g */
    sigset_t stop;  /* with -g: SIGINT and SIGTERM, blocked and polled so the member commits and leaves */
    char err[1024];
} consumer;

/* ListOffsets at ts (-2 earliest, -1 latest, else a time) for every partition: pos set. */
static int list_offsets(consumer *k, int64_t ts) {
    cli_tps s = {0};
    for (int32_t i = 0; i < k->nparts; i++) {
        cli_tps_add(&s, k->topic, (int32_t)strlen(k->topic), k->parts[i].index);
        s.v[i].leader = k->parts[i].leader;
    }
    int rc = cli_tps_list_offsets(&k->cl, &s, ts, true, k->err, sizeof k->err);
    for (int32_t i = 0; rc == 0 && i < k->nparts; i++) k->parts[i].pos = s.v[i].offset;
    cli_tps_free(&s);
    return rc;
}

/* Prints what one partition's records hold from p->pos on; 1 when COUNT is reached. */
static int print_records(consumer *k, cpart *p, const uint8_t *buf, size_t len) {
    size_t at = 0;
    kp_batch b;
    const char *why;
    while (kp_batch_next(buf, len, &at, &b, &why) == 1) { /* -1 at the tail: a batch cut short by the size limit */
        int64_t next = kp_batch_last_offset(&b) + 1;
        if (next <= p->pos) continue;
        if (!kp_batch_crc_ok(&b)) {
            snprintf(k->err, sizeof k->err, "%s partition %d offset %" PRId64 ": %s (CRC mismatch)", k->topic, p->index,
                     b.base_offset, kp_err_name(KERR_CORRUPT_MESSAGE));
            return -1;
        }
        if (!(b.attributes & KP_ATTR_CONTROL)) {
            const uint8_t *sec;
            size_t sec_len;
            uint8_t *owned = NULL;
            if (kp_batch_records(&b, MAX_DECOMPRESSED, &sec, &sec_len, &owned, &why) != 0) {
                snprintf(k->err, sizeof k->err, "%s partition %d offset %" PRId64 ": %s", k->topic, p->index,
                         b.base_offset, why);
                return -1;
            }
            kp_record_iter it;
            kp_record rec;
            kp_records_begin(&it, sec, sec_len, b.records_count);
            int got;
            while ((got = kp_records_next(&it, &rec, &why)) == 1) {
                int64_t off = b.base_offset + rec.offset_delta;
                if (off < p->pos) continue;
                cli_rec r = {.topic = k->topic,
                             .partition = p->index,
                             .offset = off,
                             .timestamp = b.attributes & KP_ATTR_LOG_APPEND_TIME ? b.max_timestamp
                                                                                 : kp_ts_add(b.base_timestamp, rec.timestamp_delta),
                             .key = rec.key,
                             .key_len = rec.key_len,
                             .value = rec.value,
                             .value_len = rec.value_len,
                             .headers = rec.headers,
                             .headers_len = rec.headers_len};
                cli_format(stdout, k->fmt, &r);
                p->pos = off + 1;
                if (++k->count == k->max) {
                    free(owned);
                    return 1;
                }
            }
            free(owned);
            if (got < 0) {
                snprintf(k->err, sizeof k->err, "%s partition %d offset %" PRId64 ": %s", k->topic, p->index,
                         b.base_offset, why);
                return -1;
            }
        }
        p->pos = next;
    }
    return 0;
}

/* One Fetch to a leader for its partitions. 1: COUNT reached, 0: ok, -1: failed. */
static int fetch_leader(consumer *k, int32_t leader, int wait_ms) {
    const kp_msg *m = &kp_msg_fetch;
    char buf[512];
    kp_arena a = {0};
    int rc = -1;
    cli_conn *c = cli_node(&k->cl, leader, k->err, sizeof k->err);
    int16_t ver = c ? cli_version(c, m, k->err, sizeof k->err) : -1;
    static const kp_uuid zero;
    /* v13 on names topics by id: without one (Metadata below v10) stay below */
    if (ver >= 13 && !memcmp(&k->topic_id, &zero, sizeof zero)) ver = 12;
    if (ver < 0) goto out;
    kp_fetch_request req;
    kp_defaults(m->req, ver, &req);
    kp_fetch_topic t;
    kp_defaults(&kp_fetch_topic_schema, ver, &t);
    t.topic = kp_str_c(k->topic);
    t.topic_id = k->topic_id;
    kp_fetch_partition *fp = kp_arena_alloc(&a, sizeof *fp * (size_t)k->nparts);
    int32_t n = 0;
    for (int32_t i = 0; i < k->nparts; i++) {
        if (k->parts[i].leader != leader) continue;
        kp_defaults(&kp_fetch_partition_schema, ver, &fp[n]);
        fp[n].partition = k->parts[i].index;
        fp[n].fetch_offset = k->parts[i].pos;
        fp[n].partition_max_bytes = PARTITION_MAX_BYTES;
        n++;
    }
    t.partitions.n = n;
    t.partitions.v = fp;
    req.replica_id = -1;
    req.max_wait_ms = wait_ms;
    req.min_bytes = 1;
    req.max_bytes = FETCH_MAX_BYTES;
    req.isolation_level = 0;
    req.session_id = 0;
    req.session_epoch = -1; /* a full fetch, no session */
    req.topics.n = 1;
    req.topics.v = &t;
    kp_fetch_response resp;
    if (cli_call(c, m, ver, &req, &resp, &a, k->err, sizeof k->err) != 0) goto out;
    if (resp.error_code) {
        snprintf(k->err, sizeof k->err, "%s: Fetch: %s", c->addr, cli_err_text(resp.error_code, KP_STR_NULL, buf, sizeof buf));
        goto out;
    }
    rc = 0;
    for (int32_t i = 0; i < resp.responses.n && rc == 0; i++)
        for (int32_t j = 0; j < resp.responses.v[i].partitions.n && rc == 0; j++) {
            const kp_fetch_partition_data *d = &resp.responses.v[i].partitions.v[j];
            cpart *p = NULL;
            for (int32_t x = 0; x < k->nparts; x++)
                if (k->parts[x].index == d->partition_index && k->parts[x].leader == leader) p = &k->parts[x];
            if (!p) continue;
            if (d->error_code) {
                snprintf(k->err, sizeof k->err, "%s partition %d offset %" PRId64 ": %s", k->topic, p->index, p->pos,
                         cli_err_text(d->error_code, KP_STR_NULL, buf, sizeof buf));
                rc = -1;
            } else if (d->records.len > 0) {
                rc = print_records(k, p, (const uint8_t *)d->records.p, (size_t)d->records.len);
            }
        }
out:
    fflush(stdout);
    kp_arena_free(&a);
    return rc;
}

static int start_positions(consumer *k, const char *from);

/* Positions of the partitions the group assigned: its committed offsets, else where -o says. */
static int take_assignment(consumer *k) {
    cli_member *mb = k->mb;
    free(k->parts);
    k->parts = xcalloc((size_t)mb->assigned.n + 1, sizeof *k->parts);
    k->nparts = 0;
    if (mb->assigned.n && cli_offset_fetch(mb->coord, mb->group, &mb->assigned, false, k->err, sizeof k->err) != 0)
        return -1;
    cpart *all = k->parts, *fresh = xcalloc((size_t)mb->assigned.n + 1, sizeof *fresh);
    int32_t nf = 0;
    for (int i = 0; i < mb->assigned.n; i++) {
        const cli_tp *tp = &mb->assigned.v[i];
        all[i] = (cpart){tp->partition, tp->leader, tp->committed, tp->committed};
        if (tp->committed < 0) fresh[nf++] = all[i];
    }
    k->parts = fresh;
    k->nparts = nf;
    int rc = nf ? start_positions(k, k->from) : 0;
    for (int32_t i = 0, j = 0; i < mb->assigned.n && j < nf; i++)
        if (all[i].index == fresh[j].index) all[i].pos = fresh[j++].pos;
    free(fresh);
    k->parts = all;
    k->nparts = mb->assigned.n;
    fprintf(stderr, "mskmock consume: group %s generation %d: %d partition(s) of %s assigned\n", mb->group,
            mb->generation, k->nparts, k->topic);
    return rc;
}

/* Commits the positions that moved. 0, 1: the group rebalanced, -1 failed. */
static int commit(consumer *k) {
    cli_tps s = {0};
    for (int32_t i = 0; i < k->nparts; i++)
        if (k->parts[i].pos >= 0 && k->parts[i].pos != k->parts[i].committed) {
            cli_tps_add(&s, k->topic, -1, k->parts[i].index);
            s.v[s.n - 1].offset = k->parts[i].pos;
        }
    int rc = cli_member_commit(k->mb, &s, k->err, sizeof k->err);
    for (int32_t i = 0; rc == 0 && i < k->nparts; i++) k->parts[i].committed = k->parts[i].pos;
    cli_tps_free(&s);
    return rc;
}

/* Eager rebalancing: what was printed is committed (when the generation still takes it), then join again. */
static int rejoin(consumer *k) {
    if (commit(k) < 0) return -1;
    return cli_member_join(k->mb, k->err, sizeof k->err) == 0 && take_assignment(k) == 0 ? 0 : -1;
}

/* With -g: heartbeat, rebalance, and whether SIGINT or SIGTERM asks to stop (1). */
static int membership(consumer *k) {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM)) return 1;
    int h = cli_member_heartbeat(k->mb, k->err, sizeof k->err);
    if (h < 0) return -1;
    return h > 0 ? rejoin(k) : 0;
}

static int run(consumer *k, int64_t timeout_ms) {
    int64_t last_new = clk_mono_ms();
    for (;;) {
        if (k->mb) {
            int r = membership(k);
            if (r) return r < 0 ? -1 : 0;
        }
        int32_t leaders[CLI_MAX_BROKERS];
        int nl = 0;
        for (int32_t i = 0; i < k->nparts; i++) {
            int j = 0;
            while (j < nl && leaders[j] != k->parts[i].leader) j++;
            if (j == nl && nl < CLI_MAX_BROKERS) leaders[nl++] = k->parts[i].leader;
        }
        if (!nl) /* a member the group gave nothing: heartbeats only */
            nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
        int64_t before = k->count;
        for (int j = 0; j < nl; j++) {
            int64_t left = timeout_ms >= 0 ? last_new + timeout_ms - clk_mono_ms() : 500;
            int wait = nl > 1 ? 100 : 500;
            if (left < wait) wait = left > 0 ? (int)left : 0;
            int rc = fetch_leader(k, leaders[j], wait);
            if (rc != 0) return rc < 0 ? -1 : 0;
        }
        if (k->mb && k->count > before) {
            int c = commit(k);
            if (c < 0 || (c > 0 && rejoin(k) != 0)) return -1;
        }
        if (k->count > before) last_new = clk_mono_ms();
        else if (timeout_ms >= 0 && clk_mono_ms() - last_new >= timeout_ms) return 0;
    }
}

static int setup(consumer *k, long partition, const char *from) {
    char buf[512];
    kp_arena a = {0};
    kp_metadata_response md;
    int rc = -1;
    if (cli_metadata(&k->cl, k->topic, &md, &a, k->err, sizeof k->err) != 0) goto out;
    const kp_metadata_response_topic *t = md.topics.n == 1 ? &md.topics.v[0] : NULL;
    if (!t || t->error_code || t->partitions.n <= 0) {
        snprintf(k->err, sizeof k->err, "%s: %s", k->topic,
                 cli_err_text(t && t->error_code ? t->error_code : KERR_UNKNOWN_TOPIC_OR_PARTITION, KP_STR_NULL, buf,
                              sizeof buf));
        goto out;
    }
    k->topic_id = t->topic_id;
    k->parts = xcalloc((size_t)t->partitions.n, sizeof *k->parts);
    for (int32_t i = 0; i < t->partitions.n; i++) {
        const kp_metadata_response_partition *mp = &t->partitions.v[i];
        if (partition >= 0 && mp->partition_index != partition) continue;
        if (mp->leader_id < 0) {
            snprintf(k->err, sizeof k->err, "%s partition %d: %s", k->topic, mp->partition_index,
                     kp_err_name(KERR_LEADER_NOT_AVAILABLE));
            goto out;
        }
        k->parts[k->nparts++] = (cpart){mp->partition_index, mp->leader_id, 0, -1};
    }
    if (!k->nparts) {
        snprintf(k->err, sizeof k->err, "%s partition %ld: %s (the topic has %d partitions)", k->topic, partition,
                 kp_err_name(KERR_UNKNOWN_TOPIC_OR_PARTITION), t->partitions.n);
        goto out;
    }
    rc = start_positions(k, from);
out:
    kp_arena_free(&a);
    return rc;
}

static int start_positions(consumer *k, const char *from) {
    int rc;
    if (!strcmp(from, "beginning")) rc = list_offsets(k, -2);
    else if (!strcmp(from, "end")) rc = list_offsets(k, -1);
    else if (from[0] == '@') {
        rc = list_offsets(k, strtoll(from + 1, NULL, 10));
        /* no record at or after that time: start at the end, as a Java consumer's offsetsForTimes user would */
        for (int32_t i = 0; rc == 0 && i < k->nparts; i++)
            if (k->parts[i].pos < 0) {
                cpart keep = k->parts[i];
                cpart *all = k->parts;
                int32_t n = k->nparts;
                k->parts = &keep;
                k->nparts = 1;
                rc = list_offsets(k, -1);
                all[i].pos = keep.pos;
                k->parts = all;
                k->nparts = n;
            }
    } else {
        int64_t off = strtoll(from, NULL, 10);
        for (int32_t i = 0; i < k->nparts; i++) k->parts[i].pos = off;
        rc = 0;
    }
    return rc;
}

int cli_consume(int argc, char **argv) {
    static consumer k;
    cli_opts o;
    cli_opts_default(&o);
    const char *from = "beginning";
    long partition = -1;
    double timeout_s = -1;
    const char *group = NULL;
    k.fmt = "%v\\n";
    k.max = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = cli_common_flag(&o, argc, argv, &i);
        if (r < 0) return cli_usage_error(CMD, "a bad or missing value after ", a);
        if (r) continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "-o") || !strcmp(a, "--offset")) {
            if (!v || !cli_valid_position(v)) return cli_usage_error(CMD, "-o takes beginning, end, OFFSET or @TIMESTAMP_MS", NULL);
            from = v;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--count")) {
            k.max = v ? strtoll(v, &end, 10) : 0;
            if (!v || *end || !*v || k.max <= 0) return cli_usage_error(CMD, "-n needs a positive count", NULL);
        } else if (!strcmp(a, "-f") || !strcmp(a, "--format")) {
            if (!v) return cli_usage_error(CMD, "-f needs a format", NULL);
            k.fmt = v;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--partition")) {
            partition = v ? strtol(v, &end, 10) : -1;
            if (!v || *end || !*v || partition < 0 || partition > INT32_MAX)
                return cli_usage_error(CMD, "-p needs a partition number", NULL);
        } else if (!strcmp(a, "-g") || !strcmp(a, "--group")) {
            if (!v || !*v) return cli_usage_error(CMD, "-g needs a group id", NULL);
            group = v;
        } else if (!strcmp(a, "--timeout")) {
            timeout_s = v ? strtod(v, &end) : -1;
            if (!v || *end || !(timeout_s >= 0) || timeout_s > 86400)
                return cli_usage_error(CMD, "--timeout needs seconds", NULL);
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(CMD, "unknown flag ", a);
        } else if (!k.topic) {
            k.topic = a;
            continue;
        } else {
            return cli_usage_error(CMD, "unexpected argument ", a);
        }
        i++;
    }
    if (!k.topic) {
        usage(stderr);
        return 2;
    }
    if (group && partition >= 0) return cli_usage_error(CMD, "-p and -g do not go together: the group assigns partitions", NULL);
    if (cli_cluster_open(&k.cl, &o, k.err, sizeof k.err) != 0) return cli_fail(CMD, k.err);
    k.from = from;
    static cli_member mb;
    int rc = setup(&k, partition, from);
    if (!rc && group) {
        mb = (cli_member){.cl = &k.cl, .group = group, .topic = k.topic, .generation = -1};
        k.mb = &mb;
        sigemptyset(&k.stop);
        sigaddset(&k.stop, SIGINT);
        sigaddset(&k.stop, SIGTERM);
        sigprocmask(SIG_BLOCK, &k.stop, NULL);
        rc = cli_member_join(&mb, k.err, sizeof k.err) == 0 ? take_assignment(&k) : -1;
    }
    if (!rc) rc = run(&k, timeout_s >= 0 ? (int64_t)(timeout_s * 1000) : -1);
    fflush(stdout);
    if (k.mb) {
        char why[1024];
        snprintf(why, sizeof why, "%s", k.err);
        if (commit(&k) < 0 && !rc) rc = -1; /* what was printed is the group's before it leaves */
        else snprintf(k.err, sizeof k.err, "%s", why);
        cli_member_leave(&mb);
    }
    rc = rc ? 1 : 0;
    if (rc) cli_fail(CMD, k.err);
    else fprintf(stderr, "mskmock consume: %" PRId64 " record(s)\n", k.count);
    free(k.parts);
    cli_cluster_close(&k.cl);
    return rc;
}
