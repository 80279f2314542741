/*
 * stor: the background checkpoint thread really copies the WAL into the database file, sleeps
 * while nothing is written, and lets go at once when its storage closes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <sys/syscall.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "stor.h"
#include "stor_int.h"

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_checkpoint", STOR_SYNC_NORMAL, 1);
    return 0;
}

static off_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Appends n batches of len bytes after *next, one commit for them all. */
static void append_batches(fx *f, int64_t *next, int n, size_t len) {
    uint8_t *data = malloc(len);
    assert_non_null(data);
    for (int i = 0; i < n; i++) {
        memset(data, 'a' + (int)(*next % 26), len);
        stor_batch_meta m = {.base_offset = *next,
                             .last_offset = *next,
                             .max_timestamp = 1,
                             .producer_id = -1,
                             .producer_epoch = -1,
                             .base_sequence = -1,
                             .last_sequence = -1,
                             .records_count = 1};
        if (stor_batch_append(f->s, f->topic, 0, &m, data, len) != 0) fail_msg("append: %s", stor_errmsg(f->s));
        (*next)++;
    }
    free(data);
    if (stor_commit(f->s) != 0) fail_msg("commit: %s", stor_errmsg(f->s));
}

/* Waits up to 5 s for a checkpoint that copied every one of more than min_frames WAL frames. */
static stor_ckpt_stats wait_backfilled(fx *f, int min_frames) {
    stor_ckpt_stats st;
    for (int i = 0; i < 500; i++) {
        stor_checkpoint_stats(f->s, &st);
        if (st.wal_frames > min_frames && st.backfilled == st.wal_frames) break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return st;
}

/*
 * Regression (checkpoint_thread_saw_no_wal): the thread's fresh connection
 * had never read the database header, so each PASSIVE checkpoint answered
 * -1 frames and copied nothing; the WAL grew to the 1 GiB safety valve under
 * load and the loop thread then checkpointed it all in one stall.
 */
static void test_checkpoint_thread_saw_no_wal(void **state) {
    fx *f = *state;
    off_t before = file_size(f->path);
    int64_t next = 0;
    /* record bytes go to segment files (stor_segments.c): the WAL gets rows, so many of them */
    append_batches(f, &next, 60000, 16); /* over 2 MiB of rows and index entries (fewer since migration 18) */
    stor_ckpt_stats st = wait_backfilled(f, 512); /* more than 512 pages of 4 KiB */
    assert_int_equal(st.failures, 0);
    assert_true(st.wal_frames > 512);
    assert_int_equal(st.backfilled, st.wal_frames);
    /* the pages are in the database file itself, not only in the WAL */
    assert_true(file_size(f->path) >= before + 2 * 1024 * 1024);
}

/* The same after a restart: the thread's connection is opened on an existing WAL database. */
static void test_checkpoint_after_reopen(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append_batches(f, &next, 4, 1024);
    fx_reopen(f);
    off_t before = file_size(f->path);
    append_batches(f, &next, 60000, 16);
    stor_ckpt_stats st = wait_backfilled(f, 512);
    assert_int_equal(st.failures, 0);
    assert_true(st.wal_frames > 512);
    assert_int_equal(st.backfilled, st.wal_frames);
    assert_true(file_size(f->path) >= before + 2 * 1024 * 1024);
}

/* :memory: has no WAL and no thread: the stats stay zero. */
static void test_memory_store_has_no_checkpoints(void **state) {
    (void)state;
    stor *s = NULL;
    char err[256] = "";
    assert_int_equal(stor_open(&s, ":memory:", STOR_SYNC_NORMAL, err, sizeof err), 0);
    stor_ckpt_stats st;
    stor_checkpoint_stats(s, &st);
    assert_int_equal(st.runs, 0);
    stor_close(s);
}

/* Voluntary context switches of every thread of this process but the calling one. */
static long other_threads_wakeups(void) {
    long self = (long)syscall(SYS_gettid), total = 0;
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || atol(e->d_name) == self) continue;
        char path[300], line[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "voluntary_ctxt_switches:", 24)) total += atol(line + 24);
        fclose(f);
    }
    closedir(d);
    return total;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Regression (idle_checkpoint_thread_woke_twice_a_second): with nothing written, the thread
 * still woke every 500 ms to find nothing to do. Each cluster of the process has one, so an idle
 * process with 50 created clusters woke 100 times a second for nothing.
 */
static void test_idle_checkpoint_thread_woke_twice_a_second(void **state) {
    (void)state; /* the fixture's store, open and idle */
    sleep_ms(100); /* the kick of the fixture's commit, and the pause after its checkpoint */
    long before = other_threads_wakeups();
    sleep_ms(1600);
    long woke = other_threads_wakeups() - before;
    assert_true(woke <= 1); /* it was 3 or 4 */
}

/*
 * Regression (close_waited_out_the_checkpoint_pause): after each checkpoint the thread slept
 * 20 ms in nanosleep, which nothing interrupts, so closing the storage right after a commit
 * (DeleteCluster stops a cluster's storage on the loop every cluster shares) blocked the loop
 * until the pause was over.
 */
static void test_close_waited_out_the_checkpoint_pause(void **state) {
    fx *f = *state;
    int64_t next = 0;
    double best = 1e9;
    for (int round = 0; round < 3; round++) {
        if (round) fx_reopen(f);
        stor_ckpt_stats st;
        stor_checkpoint_stats(f->s, &st);
        uint64_t runs = st.runs;
        append_batches(f, &next, 1, 100); /* the commit kicks the thread */
        for (int i = 0; i < 5000 && st.runs == runs; i++) {
            sleep_ms(1);
            stor_checkpoint_stats(f->s, &st);
        }
        assert_true(st.runs > runs); /* the checkpoint ran: the thread is in its pause now */
        double t0 = now_ms();
        stor_ckpt_stop(f->s);
        double took = now_ms() - t0;
        if (took < best) best = took;
    }
    assert_true(best < 10); /* it was 19 to 20 ms: the rest of the pause */
}

/*
 * Regression (commit_answers_waited_for_wal_restart): a WAL grown past RESTART_FRAMES was
 * restarted inside stor_commit, whose RESTART syncs the WAL and the database file on the loop
 * (1-6 ms), so the answers of that commit waited for it: a tail of the produce latency
 * benchmark. stor_commit now leaves it to stor_wal_restart_if_long, which the broker calls once
 * the answers are written.
 */
static void test_commit_answers_waited_for_wal_restart(void **state) {
    fx *f = *state;
    int64_t next = 0;
    stor_ckpt_stats st;
    stor_checkpoint_stats(f->s, &st);
    assert_true(st.restart_frames > 0);
    for (int i = 0; i < 20000 && st.wal_frames < st.restart_frames; i++) {
        append_batches(f, &next, 50, 100);
        if (i % 20 == 19) sleep_ms(5); /* room for the thread's pass, which reports the WAL's length */
        stor_checkpoint_stats(f->s, &st);
    }
    if (st.wal_frames < st.restart_frames) skip(); /* the WAL restarted by itself every time */
    assert_int_equal(st.restarts, 0); /* no commit restarted it */
    for (int i = 0; i < 2000 && st.restarts == 0; i++) {
        stor_wal_restart_if_long(f->s); /* tries again while the thread holds the checkpoint lock */
        stor_checkpoint_stats(f->s, &st);
        if (st.restarts == 0) sleep_ms(1);
    }
    assert_int_equal(st.restarts, 1);
}

/*
 * The loop restarts a WAL past 16 MiB whatever the page size: 16,384 frames of a new database's
 * 1 KiB pages, 4,096 of an older database's 4 KiB. Counted as 4,096 frames for both, a new
 * database's WAL restarted at 4 MiB, with two fdatasyncs on the loop each time, four times as
 * often per byte written.
 */
static void test_wal_restart_threshold_is_16_mib_at_any_page_size(void **state) {
    fx *f = *state;
    stor_ckpt_stats st;
    stor_checkpoint_stats(f->s, &st);
    assert_int_equal(fx_raw_int(f->path, "PRAGMA page_size"), 1024);
    assert_int_equal(st.restart_frames, 16384);

    stor_close(f->s);
    f->s = NULL;
    char side[160];
    unlink(f->path);
    snprintf(side, sizeof side, "%s-wal", f->path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", f->path);
    unlink(side);
    fx_raw_exec(f->path, "PRAGMA page_size = 4096; CREATE TABLE keep (x); DROP TABLE keep;");
    fx_open(f);
    stor_checkpoint_stats(f->s, &st);
    assert_int_equal(fx_raw_int(f->path, "PRAGMA page_size"), 4096);
    assert_int_equal(st.restart_frames, 4096);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_checkpoint_thread_saw_no_wal),
        T(test_commit_answers_waited_for_wal_restart),
        T(test_wal_restart_threshold_is_16_mib_at_any_page_size),
        T(test_checkpoint_after_reopen),
        T(test_idle_checkpoint_thread_woke_twice_a_second),
        T(test_close_waited_out_the_checkpoint_pause),
        cmocka_unit_test(test_memory_store_has_no_checkpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
