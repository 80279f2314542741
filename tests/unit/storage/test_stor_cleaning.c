/*
 * stor: a compaction pass off the loop (stor_compact.c, issue 37). The pass reads through a
 * connection of its own on another thread and writes a cleaned file; the swap makes it the
 * partition's newest segment and points the rows into it in one commit, leaving alone the rows
 * the loop changed meanwhile, and keeping what was appended meanwhile. A kill between the swap's
 * link and its commit, or after the commit but before the .cleaned name went, leaves nothing
 * behind at the next start and loses nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "kp_batch.h"
#include "protocol/rdk_batches.h"
#include "stor.h"
#include "stor_int.h"

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_cleaning", STOR_SYNC_NORMAL, 1);
    return 0;
}

static void seg_path(fx *f, int id, char *out, size_t n) {
    snprintf(out, n, "%s.segments/%lld-0/%020d.log", f->path, (long long)f->topic, id);
}

static int64_t size_of(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static void real_batch(int64_t base, uint8_t out[sizeof rdk_batch_0]) {
    memcpy(out, rdk_batch_0, sizeof rdk_batch_0);
    kp_batch_patch(out, base, 0);
}

static void append_real(fx *f, int64_t base) {
    uint8_t b[sizeof rdk_batch_0];
    real_batch(base, b);
    stor_batch_meta m = {.base_offset = base, .last_offset = base, .max_timestamp = 1000 + base, .producer_id = -1,
                         .producer_epoch = -1, .base_sequence = -1, .last_sequence = -1, .records_count = 1};
    if (stor_batch_append(f->s, f->topic, 0, &m, b, sizeof b)) fail_msg("append: %s", stor_errmsg(f->s));
}

typedef struct got {
    int n;
    int64_t bases[64];
    bool bytes_ok;
} got;

static bool on_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    got *g = ctx;
    uint8_t want[sizeof rdk_batch_0];
    real_batch(m->base_offset, want);
    if (len != sizeof want || memcmp(data, want, len) != 0) g->bytes_ok = false;
    if (g->n < 64) g->bases[g->n++] = m->base_offset;
    return true;
}

static got read_all(fx *f) {
    got g = {.bytes_ok = true};
    if (stor_batch_read(f->s, f->topic, 0, 0, INT64_MAX, on_batch, &g)) fail_msg("read: %s", stor_errmsg(f->s));
    return g;
}

/* What a worker does: every batch of [0, upto) copied to the cleaned file, where each went recorded. */
typedef struct copied {
    stor_cleaning *c;
    int64_t upto;
    int n;
    stor_clean_batch b[64];
    int64_t new_pos[64];
    int rc;
} copied;

static bool copy_one(void *ctx, const stor_clean_batch *b, const void *data, size_t len) {
    copied *w = ctx;
    if (stor_cleaning_write(w->c, data, len, &w->new_pos[w->n]) != 0) return false;
    w->b[w->n++] = *b;
    return true;
}

static void *worker(void *arg) {
    copied *w = arg;
    w->rc = stor_cleaning_read(w->c, 0, w->upto, copy_one, w);
    if (w->rc == 0) w->rc = stor_cleaning_finish(w->c);
    return NULL;
}

static void run_worker(copied *w) {
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, worker, w), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (w->rc) fail_msg("worker: %s", stor_cleaning_err(w->c));
}

/* The swap: the cleaned file adopted, every batch the worker copied moved; how many moved. */
static int swap(fx *f, copied *w) {
    int64_t seg = 0;
    if (stor_cleaning_adopt(f->s, w->c, &seg) != 0) fail_msg("adopt: %s", stor_errmsg(f->s));
    int moved = 0;
    for (int i = 0; i < w->n; i++) {
        int rc = stor_batch_move(f->s, w->c, w->b[i].m.base_offset, w->b[i].seg, w->b[i].pos, seg, w->new_pos[i],
                                 w->b[i].size, w->b[i].m.max_timestamp, w->b[i].m.records_count);
        if (rc < 0) fail_msg("move: %s", stor_errmsg(f->s));
        moved += rc;
    }
    return moved;
}

static int cleaned_files(fx *f) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls '%s.segments/%lld-0' | grep -c '\\.cleaned$'", f->path, (long long)f->topic);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (!p || fscanf(p, "%d", &n) != 1) n = -1;
    if (p) pclose(p);
    return n;
}

static bool orphaned(fx *f) {
    char aside[256];
    snprintf(aside, sizeof aside, "%s/orphaned", f->dir);
    return size_of(aside) >= 0;
}

/*
 * The loop changes the partition while the worker runs: DeleteRecords removes batch 0, new
 * batches are appended. The swap moves the rest into the cleaned segment, leaves batch 0 gone,
 * keeps the new ones, and the old segments die; appends go on in the cleaned segment.
 */
static void test_swap_keeps_what_changed_meanwhile(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 5; i++) append_real(f, i); /* segments 1, 2, 3 */
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 1), .upto = 5};
    assert_true(stor_cleaning_off_loop(w.c));
    run_worker(&w);
    assert_int_equal(w.n, 5);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 1), 1); /* meanwhile on the loop */
    append_real(f, 5);                                              /* segment 3 */
    append_real(f, 6);                                              /* segment 4 */
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(swap(f, &w), 4); /* batch 0 went meanwhile: left gone */
    assert_int_equal(stor_commit(f->s), 0);
    stor_cleaning_free(w.c);
    assert_int_equal(cleaned_files(f), 0);
    char s1[256], s5[256];
    seg_path(f, 1, s1, sizeof s1);
    seg_path(f, 5, s5, sizeof s5);
    assert_int_equal(size_of(s1), -1); /* every row of it moved */
    assert_int_equal(size_of(s5), 5 * (int64_t)sizeof rdk_batch_0);
    assert_int_equal(fx_raw_int(f->path, "SELECT " STOR_SEG_LIVE("segments") " FROM segments WHERE id = 5"), 4);
    append_real(f, 7); /* the cleaned segment is the newest: appends go on there */
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    got g = read_all(f);
    assert_int_equal(g.n, 7);
    assert_int_equal(g.bases[0], 1);
    assert_int_equal(g.bases[6], 7);
    assert_true(g.bytes_ok);
    assert_false(orphaned(f));
}

/* A kill between the swap's link and its commit: the next start removes both names; nothing is lost. */
static void test_kill_before_the_swap_commits_leaves_the_old_segments(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, i);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 7), .upto = 3};
    run_worker(&w);
    assert_int_equal(swap(f, &w), 3);
    char s2[256];
    seg_path(f, 2, s2, sizeof s2);
    assert_true(size_of(s2) > 0);
    fx_reopen(f); /* closes without a commit, as a kill -9 would: the link and the .cleaned name stay */
    assert_int_equal(size_of(s2), -1);
    assert_int_equal(cleaned_files(f), 0);
    assert_false(orphaned(f));
    got g = read_all(f);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
    stor_cleaning_free(w.c); /* its names are gone already: nothing more to unlink */
}

/* A kill after the commit, before the .cleaned name went: the next start removes that name only. */
static void test_kill_after_the_swap_commits_keeps_the_new_segment(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, i);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 8), .upto = 3};
    run_worker(&w);
    assert_int_equal(swap(f, &w), 3);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(cleaned_files(f), 1);
    fx_reopen(f);
    assert_int_equal(cleaned_files(f), 0);
    assert_false(orphaned(f));
    char s2[256];
    seg_path(f, 2, s2, sizeof s2);
    assert_int_equal(size_of(s2), 3 * (int64_t)sizeof rdk_batch_0);
    got g = read_all(f);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
    stor_cleaning_free(w.c);
}

/* A swap whose transaction is lost (a failed commit) takes the link with it; the rows stay where they were. */
static void test_rolled_back_swap_leaves_nothing(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, i);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 9), .upto = 3};
    run_worker(&w);
    assert_int_equal(swap(f, &w), 3);
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_commit(f->s), -1);
    stor_cleaning_free(w.c);
    char s2[256];
    seg_path(f, 2, s2, sizeof s2);
    assert_int_equal(size_of(s2), -1);
    assert_int_equal(cleaned_files(f), 0);
    got g = read_all(f);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
    fx_reopen(f);
    assert_false(orphaned(f));
}

/* A batch whose row a rewrite moved meanwhile (another place) is not moved or removed by a stale pass. */
static void test_stale_pass_leaves_a_moved_row(void **state) {
    fx *f = *state;
    append_real(f, 0);
    append_real(f, 1);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 10), .upto = 2};
    run_worker(&w);
    uint8_t b[sizeof rdk_batch_0];
    real_batch(1, b);
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, 1, 1001, 1, b, sizeof b), 1); /* now elsewhere */
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_batch_delete_at(f->s, w.c, 1, w.b[1].seg, w.b[1].pos), 0);
    assert_int_equal(swap(f, &w), 1);
    assert_int_equal(stor_commit(f->s), 0);
    stor_cleaning_free(w.c);
    got g = read_all(f);
    assert_int_equal(g.n, 2);
    assert_true(g.bytes_ok);
}

/*
 * storage.sync=full syncs the newest segment of a partition before a commit that appended to it:
 * appends in the swap's transaction went to the segment the swap supersedes, and must be synced
 * too (its synced mark at its end after the commit).
 */
static void test_full_sync_covers_appends_to_the_superseded_segment(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    f->sync = STOR_SYNC_FULL;
    fx_open(f);
    for (int i = 0; i < 3; i++) append_real(f, i);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 11), .upto = 3};
    run_worker(&w);
    append_real(f, 3); /* the loop's append in the swap's transaction, to segment 1 */
    assert_int_equal(swap(f, &w), 3);
    assert_int_equal(stor_commit(f->s), 0);
    stor_cleaning_free(w.c);
    assert_int_equal(fx_raw_int(f->path, "SELECT synced = " STOR_SEG_USED("segments") " AND synced > 0 FROM segments WHERE id = 1"), 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM segments WHERE synced < " STOR_SEG_USED("segments")), 0);
    got g = read_all(f);
    assert_int_equal(g.n, 4);
    assert_true(g.bytes_ok);
}

static bool same_file(const char *a, const char *b) {
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void cleaned_path(fx *f, int seq, char *out, size_t n) {
    snprintf(out, n, "%s.segments/%lld-0/%020d.cleaned", f->path, (long long)f->topic, seq);
}

/*
 * The worker links its cleaned file as the next segment (and syncs the directory) before it
 * ends, so the swap on the loop finds the name there and only adds the rows.
 */
static void test_worker_links_ahead_and_the_swap_takes_it(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, i);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 12), .upto = 3};
    run_worker(&w);
    char s2[256], cl[256];
    seg_path(f, 2, s2, sizeof s2);
    cleaned_path(f, 12, cl, sizeof cl);
    assert_true(same_file(s2, cl)); /* before the swap */
    assert_int_equal(swap(f, &w), 3);
    assert_int_equal(stor_commit(f->s), 0);
    stor_cleaning_free(w.c);
    assert_int_equal(size_of(s2), 3 * (int64_t)sizeof rdk_batch_0);
    assert_int_equal(cleaned_files(f), 0);
    append_real(f, 3);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    assert_false(orphaned(f));
    got g = read_all(f);
    assert_int_equal(g.n, 4);
    assert_true(g.bytes_ok);
}

/* A kill after the worker's link, before the swap: the next start removes both names; nothing is lost. */
static void test_kill_after_the_link_ahead_leaves_the_old_segments(void **state) {
    fx *f = *state;
    for (int i = 0; i < 3; i++) append_real(f, i);
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 13), .upto = 3};
    run_worker(&w);
    char s2[256];
    seg_path(f, 2, s2, sizeof s2);
    assert_true(size_of(s2) > 0);
    fx_reopen(f); /* as a kill -9 would */
    assert_int_equal(size_of(s2), -1);
    assert_int_equal(cleaned_files(f), 0);
    assert_false(orphaned(f));
    got g = read_all(f);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
    stor_cleaning_free(w.c);
}

/*
 * The loop needs the linked name for a segment of its own before the swap: it takes the name
 * (the cleaned file keeps its other one), the swap links past it, and a pass dropped after that
 * leaves the loop's segment alone.
 */
static void test_new_segment_takes_the_name_linked_ahead(void **state) {
    fx *f = *state;
    stor_seg_set_bytes(f->s, 2 * (int64_t)sizeof rdk_batch_0);
    for (int i = 0; i < 2; i++) append_real(f, i); /* segment 1, full */
    assert_int_equal(stor_commit(f->s), 0);
    copied w = {.c = stor_cleaning_new(f->s, f->topic, 0, 14), .upto = 2};
    run_worker(&w);
    copied w2 = {.c = stor_cleaning_new(f->s, f->topic, 0, 15), .upto = 2};
    run_worker(&w2); /* a second pass: its link finds the name taken, its swap links on the loop */
    char s2[256], s3[256], cl[256];
    seg_path(f, 2, s2, sizeof s2);
    seg_path(f, 3, s3, sizeof s3);
    cleaned_path(f, 14, cl, sizeof cl);
    assert_true(same_file(s2, cl));
    append_real(f, 2); /* segment 2, the loop's own */
    assert_int_equal(stor_commit(f->s), 0);
    assert_false(same_file(s2, cl));
    assert_int_equal(size_of(s2), (int64_t)sizeof rdk_batch_0);
    stor_cleaning_free(w.c); /* dropped: segment 2 is not its to remove */
    assert_int_equal(size_of(s2), (int64_t)sizeof rdk_batch_0);
    assert_int_equal(swap(f, &w2), 2);
    assert_int_equal(stor_commit(f->s), 0);
    stor_cleaning_free(w2.c);
    assert_int_equal(size_of(s3), 2 * (int64_t)sizeof rdk_batch_0);
    assert_int_equal(cleaned_files(f), 0);
    fx_reopen(f);
    assert_false(orphaned(f));
    got g = read_all(f);
    assert_int_equal(g.n, 3);
    assert_true(g.bytes_ok);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_swap_keeps_what_changed_meanwhile),
        T(test_kill_before_the_swap_commits_leaves_the_old_segments),
        T(test_kill_after_the_swap_commits_keeps_the_new_segment),
        T(test_rolled_back_swap_leaves_nothing),
        T(test_stale_pass_leaves_a_moved_row),
        T(test_full_sync_covers_appends_to_the_superseded_segment),
        T(test_worker_links_ahead_and_the_swap_takes_it),
        T(test_kill_after_the_link_ahead_leaves_the_old_segments),
        T(test_new_segment_takes_the_name_linked_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
