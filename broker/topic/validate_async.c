/*
 * The record pass of a big batch, on libuv's threadpool (uv_queue_work, which is how libuv
 * itself does blocking work beside its one loop). A batch whose pass would hold the loop more
 * than about a millisecond (validate.c's inline budget: millions of tiny records in a few KB of
 * zstd are within the decompression cap, and walking them took the loop 100 ms to 3 s) is
 * copied with what the pass reads of its topic (check_cfg) and checked by a worker, which
 * touches nothing but that copy; the caller parks its request meanwhile and continues on the
 * loop when done is called, in the order the connection sent its requests (a parked request
 * mutes its connection). The append itself, with the idempotent producer's sequence checks,
 * stays on the loop.
 *
 * At most CHECK_WORKERS passes run at once; the others wait here, in arrival order: each holds
 * up to topic_max_decompressed bytes while it runs, and the loop needs a core of its own. A
 * cancelled job (its connection closed, the broker stopping) is dropped if it has not started,
 * or left to finish and freed then: its worker never reads anything the loop frees.
 */
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "clock.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"
#include "topic.h"
#include "validate.h"

#define CHECK_WORKERS 2

typedef struct rec_err {
    int32_t index;
    char *msg;
} rec_err;

struct topic_check_job {
    uv_work_t work;
    uv_loop_t *loop;
    srv *s;                  /* NULL once cancelled: the result is dropped */
    topic_record_error_fn fn;
    topic_check_done_fn done;
    void *ctx;
    check_cfg cfg;
    char *topic;             /* cfg.topic, copied */
    uint8_t *bytes;          /* the batch, copied; b.data points here */
    kp_batch b;
    int16_t code;            /* the worker's answer */
    topic_checked out;
    char why[512];
    rec_err *errs;
    int nerrs, cap_errs;
    int64_t queued_us, started_us, ran_us;
    bool submitted;
    topic_check_job *next;   /* waiting for a worker */
};

/* Loop-only: the one loop of the process queues and submits. */
static topic_check_job *waiting, **waiting_tail = &waiting;
static int running;

static void job_free(topic_check_job *j) {
    for (int i = 0; i < j->nerrs; i++) free(j->errs[i].msg);
    free(j->errs);
    free(j->out.batch);
    free(j->bytes);
    free(j->topic);
    free(j);
}

/* ---- on a worker thread: only the job ---- */

static void collect(void *ctx, int32_t index, const char *msg) {
    topic_check_job *j = ctx;
    XGROW(j->errs, j->cap_errs, j->nerrs + 1, 16);
    j->errs[j->nerrs++] = (rec_err){index, xstrdup(msg)};
}

static void work(uv_work_t *w) {
    topic_check_job *j = w->data;
    uint64_t t0 = uv_hrtime(); /* not the broker's clock: the loop may move its offset */
    const char *why = NULL;
    j->code = check_run(&j->cfg, &j->b, false, &j->out, collect, j, &why);
    if (why) snprintf(j->why, sizeof j->why, "%s", why);
    j->ran_us = (int64_t)((uv_hrtime() - t0) / 1000);
}

/* ---- on the loop ---- */

static void after(uv_work_t *w, int status);

static void submit_waiting(void) {
    while (waiting && running < CHECK_WORKERS) {
        topic_check_job *j = waiting;
        waiting = j->next;
        if (!waiting) waiting_tail = &waiting;
        j->next = NULL;
        j->submitted = true;
        j->started_us = clk_mono_us();
        running++;
        if (uv_queue_work(j->loop, &j->work, work, after) != 0) abort(); /* only for a NULL callback */
    }
}

static void after(uv_work_t *w, int status) {
    topic_check_job *j = w->data;
    running--;
    submit_waiting();
    if (!j->s || status == UV_ECANCELED) {
        job_free(j);
        return;
    }
    log_debug("%s-%d: record pass of a %zu-byte batch of %d records on the threadpool: %.1f ms waiting, "
              "%.1f ms checking, error %d", j->cfg.topic, j->cfg.partition, j->b.size, j->b.records_count,
              (double)(j->started_us - j->queued_us) / 1000.0, (double)j->ran_us / 1000.0, j->code);
    for (int i = 0; i < j->nerrs; i++) j->fn(j->ctx, j->errs[i].index, j->errs[i].msg);
    topic_checked out = j->out;
    j->out.batch = NULL; /* the caller's now */
    j->done(j->s, j->ctx, j->code, &out, j->why[0] ? j->why : NULL);
    job_free(j);
}

int16_t topic_check_records_async(srv *s, partition *p, const kp_batch *b, topic_checked *out,
                                  topic_record_error_fn fn, void *ctx, const char **why, topic_check_done_fn done,
                                  topic_check_job **job) {
    *job = NULL;
    check_cfg cfg;
    check_cfg_of(p, &cfg);
    int16_t code = check_run(&cfg, b, true, out, fn, ctx, why);
    if (code != CHECK_OVER_BUDGET) return code;
    topic_check_job *j = xcalloc(1, sizeof *j);
    j->work.data = j;
    j->loop = s->loop;
    j->s = s;
    j->fn = fn;
    j->done = done;
    j->ctx = ctx;
    j->cfg = cfg;
    j->topic = xstrdup(cfg.topic);
    j->cfg.topic = j->topic;
    j->bytes = xmalloc(b->size);
    memcpy(j->bytes, b->data, b->size);
    j->b = *b;
    j->b.data = j->bytes;
    j->queued_us = clk_mono_us();
    *waiting_tail = j;
    waiting_tail = &j->next;
    submit_waiting();
    *job = j;
    return TOPIC_CHECK_PENDING;
}

void topic_check_cancel(topic_check_job *j) {
    if (!j->submitted) {
        for (topic_check_job **pp = &waiting; *pp; pp = &(*pp)->next)
            if (*pp == j) {
                *pp = j->next;
                if (!*pp) waiting_tail = pp;
                break;
            }
        job_free(j);
        return;
    }
    j->s = NULL;
    uv_cancel((uv_req_t *)&j->work); /* not started yet: after() gets UV_ECANCELED; else it frees the result */
}
