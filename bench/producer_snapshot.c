/*
 * What the idempotent-producer snapshot (storage/stor_producers.c) costs the loop, measured on
 * the store alone (issue 37, docs/benchmarks.md "The producer snapshot's costs on the loop"):
 *
 *   snapshot: --partitions partitions with --producers idempotent producers each, then rounds of
 *     4,096 batches appended to --busy of them, the commit that carries each round's snapshot
 *     (stor_commit writes one every 4,096 batches, STOR_PRODUCER_SNAPSHOT_EVERY) timed;
 *   retention: one partition of --batches batches from --producers producers, stopped cleanly
 *     (snapshot written); then rounds of: a process moves its log start up by a slice and exits
 *     as kill -9 would (no clean stop), the next start's load of the producer state, 4,096
 *     batches appended, and the two commits, one carrying the next snapshot; each step timed.
 *
 * Built against the storage library of any revision with the producer snapshot, so a change is
 * measured before and after with the same program. CPU time of this one thread, so it is less
 * sensitive to the machine's load than wall time; medians of --rounds.
 *
 *   producer_snapshot [--partitions 1000] [--producers 5] [--busy 8] [--batches 200000] [--rounds 9] DIR
 */
#include "stor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* storage/stor_int.h's STOR_PRODUCER_SNAPSHOT_EVERY */
#define SNAPSHOT_EVERY 4096

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(stor *s, const char *what) {
    fprintf(stderr, "%s: %s\n", what, s ? stor_errmsg(s) : "");
    exit(1);
}

static stor *open_store(const char *path) {
    char err[512];
    stor *s = NULL;
    if (stor_open(&s, path, STOR_SYNC_NORMAL, err, sizeof err) != 0) {
        fprintf(stderr, "open %s: %s\n", path, err);
        exit(1);
    }
    if (stor_recover(s) != 0) die(s, "recover");
    return s;
}

typedef struct part_state {
    int64_t next;
    int32_t seq[64];
} part_state;

static void append(stor *s, int64_t topic, int32_t part, part_state *p, int64_t pid, int npids) {
    static const uint8_t data[64] = {1};
    int k = (int)(pid % npids);
    stor_batch_meta m = {.base_offset = p->next, .last_offset = p->next, .max_timestamp = 1000 + p->next,
                         .producer_id = pid, .producer_epoch = 0, .base_sequence = p->seq[k],
                         .last_sequence = p->seq[k], .records_count = 1};
    if (stor_batch_append(s, topic, part, &m, data, sizeof data) != 0) die(s, "append");
    p->next++;
    p->seq[k]++;
}

static void count_row(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    (void)topic_id, (void)partition, (void)m;
    ++*(int *)ctx;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("%-44s median %9.3f ms  min %9.3f  max %9.3f  (%d runs)\n", what, v[n / 2], v[0], v[n - 1], n);
}

int main(int argc, char **argv) {
    int partitions = 1000, producers = 5, busy = 8, batches = 200000, rounds = 9;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--partitions")) partitions = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--producers")) producers = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--busy")) busy = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--batches")) batches = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
        else dir = argv[i];
    }
    if (!dir || producers < 1 || producers > 64 || busy < 1 || busy > partitions || rounds < 1) {
        fprintf(stderr, "usage: producer_snapshot [--partitions N] [--producers N] [--busy N] [--batches N] "
                        "[--rounds N] DIR\n");
        return 2;
    }
    char path[4096];
    double *v = calloc((size_t)rounds, sizeof *v);
    part_state *ps = calloc((size_t)partitions, sizeof *ps);
    if (!v || !ps) return 1;

    /* ---- snapshot: many partitions, a few busy ---- */
    snprintf(path, sizeof path, "%s/snapshot.db", dir);
    remove(path);
    stor *s = open_store(path);
    stor_topic t = {.name = "many", .partitions = partitions, .created_ms = 1};
    if (stor_topic_create(s, &t) != 0 || stor_commit(s) != 0) die(s, "topic");
    for (int p = 0; p < partitions; p++)
        for (int k = 0; k < producers; k++)
            for (int j = 0; j < 3; j++) append(s, t.id, p, &ps[p], 1 + (int64_t)p * producers + k, producers);
    if (stor_commit(s) != 0) die(s, "first snapshot");
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < SNAPSHOT_EVERY - 1; i++) {
            int p = i % busy;
            append(s, t.id, p, &ps[p], 1 + (int64_t)p * producers + i % producers, producers);
        }
        if (stor_commit(s) != 0) die(s, "commit");
        int p = r % busy;
        append(s, t.id, p, &ps[p], 1 + (int64_t)p * producers, producers); /* the snapshot rides in its commit */
        double t0 = cpu_ms();
        if (stor_commit(s) != 0) die(s, "commit");
        v[r] = cpu_ms() - t0;
    }
    char what[128];
    snprintf(what, sizeof what, "commit with snapshot, %d part. x %d prod., %d busy", partitions, producers, busy);
    report(what, v, rounds);
    stor_close(s);

    /* ---- retention: a big partition's log start moves ---- */
    snprintf(path, sizeof path, "%s/retention.db", dir);
    remove(path);
    s = open_store(path);
    stor_topic big = {.name = "big", .partitions = 1, .created_ms = 1};
    if (stor_topic_create(s, &big) != 0 || stor_commit(s) != 0) die(s, "topic");
    part_state bp = {0};
    for (int i = 0; i < batches; i++) {
        append(s, big.id, 0, &bp, 1 + i % producers, producers);
        if (i % 10000 == 9999 && stor_commit(s) != 0) die(s, "commit");
    }
    if (stor_commit(s) != 0) die(s, "commit");
    stor_close(s); /* a clean stop: the snapshot written */
    double *w = calloc((size_t)rounds, sizeof *w), *x = calloc((size_t)rounds, sizeof *x);
    if (!w || !x) return 1;
    int64_t start = 0;
    for (int r = 0; r < rounds; r++) {
        /* retention takes a slice off the head, and the process dies before any snapshot */
        start += batches / 2 / rounds;
        int fds[2];
        if (pipe(fds) != 0) return 1;
        pid_t child = fork();
        if (child == 0) {
            stor *c = open_store(path);
            double t0 = cpu_ms();
            if (stor_log_start_set(c, big.id, 0, start) < 0 || stor_commit(c) != 0) die(c, "log start");
            double ms = cpu_ms() - t0;
            _exit(write(fds[1], &ms, sizeof ms) == (ssize_t)sizeof ms ? 0 : 1);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0 ||
            read(fds[0], &x[r], sizeof x[r]) != (ssize_t)sizeof x[r])
            return 1;
        close(fds[0]);
        close(fds[1]);
        s = open_store(path);
        int rows = 0;
        double t0 = cpu_ms();
        if (stor_load_producer_batches(s, count_row, &rows) != 0) die(s, "load");
        w[r] = cpu_ms() - t0;
        if (rows == 0) die(s, "no producer state loaded");
        /* the load counts the batches it folded as due: the snapshot may ride in either commit */
        for (int i = 0; i < SNAPSHOT_EVERY - 1; i++) append(s, big.id, 0, &bp, 1 + i % producers, producers);
        t0 = cpu_ms();
        if (stor_commit(s) != 0) die(s, "commit");
        v[r] = cpu_ms() - t0;
        append(s, big.id, 0, &bp, 1, producers);
        t0 = cpu_ms();
        if (stor_commit(s) != 0) die(s, "commit");
        v[r] += cpu_ms() - t0;
        stor_close(s);
    }
    snprintf(what, sizeof what, "retention: the removal of %d batches", batches / 2 / rounds);
    report(what, x, rounds);
    snprintf(what, sizeof what, "retention: next start's producer load");
    report(what, w, rounds);
    snprintf(what, sizeof what, "retention: next two commits, one with snapshot");
    report(what, v, rounds);
    free(w);
    free(x);
    free(v);
    free(ps);
    return 0;
}
