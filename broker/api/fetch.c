/*
 * Fetch (key 1), v0–17. Serves stored batches byte for byte up to the high
 * watermark (what the last storage commit made durable), honouring
 * partition_max_bytes and max_bytes but always returning the first batch
 * when nothing else was returned (KIP-74), so consumers make progress. Topic
 * ids from v13. Long poll: with nothing to return, the request is parked
 * until a commit brings data to one of its partitions or max_wait_ms
 * (capped by fetch.max.wait.cap.ms) passes. read_committed (v4+) is served
 * up to the last stable offset, with the aborted transactions of what it
 * returns (null for read_uncommitted, as Kafka sends). Before v10 a partition
 * whose batches are zstd (produced so, or rebuilt for compression.type=zstd)
 * gets UNSUPPORTED_COMPRESSION_TYPE, as from Kafka. Gaps: no fetch sessions
 * (session_id is always 0, so clients send full fetches); min_bytes above 1
 * is treated as 1 when waking.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "kp_mem.h"
#include "log.h"
#include "topic/topic.h"

/* A partition's buffer starts at most this large and grows to what its budget allows. */
#define FETCH_FIRST_CAP (1 << 20)

typedef struct fetch_wait {
    topic_waiter w; /* first: topic/'s waiter list hands it back */
    srv *s;
    req *r;
    uv_timer_t timer;
} fetch_wait;

typedef struct collect {
    kp_writer w;                /* the partition's records: batches back to back, as stored */
    int64_t budget_partition, budget_total;
    bool first;                 /* nothing returned yet: the first batch goes out whatever its size */
    int64_t next;               /* the offset after the last batch placed */
    size_t before_last;         /* w.len and next before the last batch placed: what is kept when it fails its */
    int64_t next_before_last;   /* check (storage.verify=full) */
} collect;

/* Where the next batch goes: the end of the partition's buffer. NULL stops the read. */
static void *place_batch(void *ctx, const stor_batch_meta *m, size_t len) {
    collect *c = ctx;
    if (!c->first && ((int64_t)len > c->budget_partition || (int64_t)len > c->budget_total)) return NULL;
    c->before_last = c->w.len;
    c->next_before_last = c->next;
    void *p = kp_wr_reserve(&c->w, len);
    c->next = m->last_offset + 1;
    c->first = false;
    c->budget_partition -= (int64_t)len;
    c->budget_total -= (int64_t)len;
    /* a batch that spent the budget is the last one: the next call answers NULL */
    if (c->budget_partition <= 0 || c->budget_total <= 0) c->budget_partition = c->budget_total = -1;
    return p;
}

/* The topic by id (v13+) or name, once the principal may read it (ReadData, logged when refused). */
static topic *resolve_topic(srv *s, req *r, const kp_fetch_topic *ft, int16_t *code) {
    topic *t;
    if (r->hdr.api_version >= 13) {
        t = topic_find_uuid(s, ft->topic_id.b);
        *code = t ? api_authz(s, r, IAM_RES_TOPIC, kp_str_c(t->name)) : KERR_UNKNOWN_TOPIC_ID;
    } else {
        t = api_topic(s, r, ft->topic, code);
    }
    return *code ? NULL : t;
}

/*
 * The topic a fetch names, for the passes after build(): no authorization and no log line.
 * build() already refused (and logged, once) what it refused; those partitions carry no
 * records, and a later pass only looks at partitions that do. Resolving with api_topic again
 * logged every refusal up to three times (issue 31).
 */
static topic *known_topic(srv *s, const req *r, const kp_fetch_topic *ft) {
    if (r->hdr.api_version >= 13) return topic_find_uuid(s, ft->topic_id.b);
    return ft->topic.len > 0 ? topic_find(s, ft->topic.p, (size_t)ft->topic.len) : NULL;
}

static bool read_committed(const req *r) {
    return r->hdr.api_version >= 4 && ((const kp_fetch_request *)r->body)->isolation_level == 1;
}

typedef struct aborted_list {
    req *r;
    kp_fetch_partition_data *out;
    int32_t cap;
} aborted_list;

static void add_aborted(void *ctx, int64_t producer_id, int64_t first_offset) {
    aborted_list *l = ctx;
    kp_fetch_partition_data *out = l->out;
    if (out->aborted_transactions.n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        kp_fetch_aborted_transaction *v = req_alloc(l->r, sizeof(*v) * (size_t)l->cap);
        if (out->aborted_transactions.n) memcpy(v, out->aborted_transactions.v, sizeof(*v) * (size_t)out->aborted_transactions.n);
        out->aborted_transactions.v = v;
    }
    out->aborted_transactions.v[out->aborted_transactions.n++] = (kp_fetch_aborted_transaction){producer_id, first_offset};
}

/* Fetch v10 brought zstd (KIP-110): an older fetch cannot be given zstd batches. */
static bool has_zstd(const uint8_t *p, size_t len) {
    size_t pos = 0;
    kp_batch b;
    const char *why;
    while (kp_batch_next(p, len, &pos, &b, &why) == 1)
        if (kp_batch_codec(&b) == KP_CODEC_ZSTD) return true;
    return false;
}

static int16_t fetch_partition(srv *s, req *r, topic *t, const kp_fetch_partition *fp, kp_fetch_partition_data *out,
                               int64_t *total_left, bool *returned_any, bool quiet) {
    partition *p;
    int16_t code = api_partition_check(s, r, t, fp->partition, &p);
    if (code) return code;
    bool committed = read_committed(r);
    int64_t lso = topic_lso(p), upto = committed ? lso : p->hw;
    out->high_watermark = p->hw;
    out->last_stable_offset = lso;
    if (committed) out->aborted_transactions.n = 0; /* an empty list, not null */
    out->log_start_offset = p->log_start;
    code = api_leader_epoch_check(r, p, fp->current_leader_epoch, quiet);
    if (code) return code;
    if (fp->fetch_offset < p->log_start || fp->fetch_offset > p->end) {
        if (!quiet)
            req_log_refusal(r, KERR_OFFSET_OUT_OF_RANGE, "%s-%d: fetch offset %lld is outside [%lld, %lld]", t->name,
                            fp->partition, (long long)fp->fetch_offset, (long long)p->log_start, (long long)p->end);
        return KERR_OFFSET_OUT_OF_RANGE;
    }
    if (fp->fetch_offset >= upto || *total_left <= 0) return 0;
    collect c = {.budget_partition = fp->partition_max_bytes, .budget_total = *total_left, .first = !*returned_any};
    /* room for what the budget allows, up to FETCH_FIRST_CAP to begin with */
    int64_t want = c.budget_partition < c.budget_total ? c.budget_partition : c.budget_total;
    kp_writer_init(&c.w, want <= 0 ? 0 : (size_t)(want < FETCH_FIRST_CAP ? want : FETCH_FIRST_CAP));
    aborted_list al = {r, out, 0};
    int rc = stor_batch_read_into(s->st, t->id, p->index, fp->fetch_offset, upto, place_batch, &c);
    if (rc != 0 && stor_read_bad_batch(s->st) && c.before_last > 0) {
        /* the sound batches before a damaged one go out; the next fetch, from the damaged one, is refused */
        c.w.len = c.before_last;
        c.next = c.next_before_last;
        rc = 0;
    }
    if (rc != 0 || (committed && c.w.len && topic_aborted_read(s, p, fp->fetch_offset, c.next, add_aborted, &al) != 0)) {
        kp_writer_free(&c.w);
        out->aborted_transactions.n = committed ? 0 : -1;
        req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "%s-%d: reading the log failed: %s", t->name, fp->partition,
                        stor_errmsg(s->st));
        return KERR_KAFKA_STORAGE_ERROR;
    }
    if (c.w.len && r->hdr.api_version < 10 && has_zstd(c.w.buf, c.w.len)) {
        kp_writer_free(&c.w);
        out->aborted_transactions.n = committed ? 0 : -1;
        if (!quiet)
            req_log_refusal(r, KERR_UNSUPPORTED_COMPRESSION_TYPE, "%s-%d: zstd batches need Fetch v10 or later (asked "
                            "with v%d)", t->name, fp->partition, r->hdr.api_version);
        return KERR_UNSUPPORTED_COMPRESSION_TYPE;
    }
    if (c.w.len) {
        /* the response references the collected batches (no copy); the request, then the write, owns them */
        out->records = (kp_bytes){(const char *)c.w.buf, (int32_t)c.w.len};
        req_adopt(r, c.w.buf);
        t->bytes_out += c.w.len;
        *total_left -= (int64_t)c.w.len;
        *returned_any = true;
    } else {
        kp_writer_free(&c.w);
    }
    return 0;
}

/*
 * Build the whole response. Returns true when it should be sent now (data,
 * an error, or nothing to wait for).
 */
static bool build(srv *s, req *r, kp_fetch_response **out, bool quiet) {
    kp_fetch_request *q = r->body;
    int16_t ver = r->hdr.api_version;
    kp_fetch_response *resp = req_resp(r);
    resp->session_id = 0;
    /* fetch.max.bytes bounds every version, as Kafka's min(request max_bytes, fetch.max.bytes) does */
    int64_t total_left = ver >= 3 && q->max_bytes < s->cfg->fetch_max_bytes ? q->max_bytes : s->cfg->fetch_max_bytes;
    bool returned_any = false, any_error = false;
    REQ_ARR(r, resp->responses, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_fetch_topic *ft = &q->topics.v[i];
        kp_fetchable_topic_response *tr = &resp->responses.v[i];
        tr->topic = ft->topic;
        tr->topic_id = ft->topic_id;
        int16_t tcode;
        topic *t = resolve_topic(s, r, ft, &tcode);
        if (tcode == KERR_UNKNOWN_TOPIC_ID && !quiet)
            req_log_refusal(r, tcode, "no topic has the id asked for");
        REQ_ARR(r, tr->partitions, ft->partitions.n);
        for (int32_t j = 0; j < ft->partitions.n; j++) {
            kp_fetch_partition *fp = &ft->partitions.v[j];
            kp_fetch_partition_data *pd = &tr->partitions.v[j];
            kp_defaults(&kp_fetch_partition_data_schema, ver, pd);
            pd->partition_index = fp->partition;
            pd->high_watermark = -1;
            pd->records = (kp_bytes){"", 0}; /* Kafka sends empty records, never null */
            pd->aborted_transactions.n = -1;
            int16_t code = tcode ? tcode : fetch_partition(s, r, t, fp, pd, &total_left, &returned_any, quiet);
            pd->error_code = code;
            if (code) any_error = true;
        }
    }
    *out = resp;
    return returned_any || any_error || q->max_wait_ms <= 0 || q->topics.n == 0;
}

/*
 * The egress quotas (topic/quota.c), charged for a response about to be sent. As Kafka does
 * (KIP-219), a response past a quota is sent without its records, with the throttle time, and
 * the bytes it would have carried are not counted: the client fetches them again once muted.
 * A response whose accounts were all empty goes out whole however large, with the throttle
 * time its excess costs: one larger than a quota's burst would otherwise never go out (Kafka
 * avoids that by capping a fetch at its quota window's bytes).
 */
static void charge_egress(srv *s, req *r, kp_fetch_response *resp) {
    kp_fetch_request *q = r->body;
    quota_throttle throttle = {0};
    bool idle = true;
    /* quotas off (every profile but serverless): no walk over the response */
    if (s->cfg->quota_partition_egress_bytes <= 0 && s->cfg->quota_cluster_egress_bytes <= 0) return;
    /* pass 0 sees whether every account is empty; pass 1 charges every partition's bytes;
       pass 2, only when over a quota with something owed before, takes them back */
    for (int pass = 0; pass < 3 && (pass < 2 || (throttle.ms && !idle)); pass++)
        for (int32_t i = 0; i < q->topics.n; i++) {
            topic *t = known_topic(s, r, &q->topics.v[i]);
            kp_fetchable_topic_response *tr = &resp->responses.v[i];
            for (int32_t k = 0; t && k < tr->partitions.n; k++) {
                kp_fetch_partition_data *pd = &tr->partitions.v[k];
                if (pd->records.len <= 0 || pd->partition_index < 0 || pd->partition_index >= t->nparts) continue;
                partition *p = &t->parts[pd->partition_index];
                if (pass == 0) {
                    idle = idle && quota_egress_idle(s, p);
                } else if (pass == 1) {
                    quota_fetched(s, p, pd->records.len, &throttle);
                } else {
                    quota_unfetched(s, p, pd->records.len);
                    t->bytes_out -= (uint64_t)pd->records.len;
                    pd->records = (kp_bytes){"", 0};
                }
            }
        }
    char why[192];
    resp->throttle_time_ms = throttle.ms;
    req_throttle(r, throttle.ms, kp_api_name(KP_API_FETCH), quota_throttle_why(&throttle, why, sizeof why));
}

static void free_wait(uv_handle_t *h) { free(h->data); }

/* Answer the parked fetch with what there is now; it leaves topic/'s list if still on it. */
static void finish(fetch_wait *w) {
    srv *s = w->s;
    req *r = w->r;
    topic_unwait(s, &w->w);
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, free_wait);
    kp_fetch_response *resp;
    build(s, r, &resp, true);
    charge_egress(s, r, resp);
    req_unpark_respond(s, r, resp);
}

static void on_timeout(uv_timer_t *h) { finish(h->data); }

static void cancel(srv *s, req *r) {
    fetch_wait *w = r->park;
    topic_unwait(s, &w->w);
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, free_wait);
}

/* Does any partition of the parked request now have data past its fetch offset? */
static bool has_data(srv *s, topic_waiter *tw) {
    req *r = ((fetch_wait *)tw)->r;
    kp_fetch_request *q = r->body;
    for (int32_t i = 0; i < q->topics.n; i++) {
        topic *t = known_topic(s, r, &q->topics.v[i]);
        if (!t) continue;
        for (int32_t j = 0; j < q->topics.v[i].partitions.n; j++) {
            kp_fetch_partition *fp = &q->topics.v[i].partitions.v[j];
            if (fp->partition < 0 || fp->partition >= t->nparts) continue;
            partition *p = &t->parts[fp->partition];
            if ((read_committed(r) ? topic_lso(p) : p->hw) > fp->fetch_offset) return true;
        }
    }
    return false;
}

static void wake(srv *s, topic_waiter *tw) {
    (void)s;
    finish((fetch_wait *)tw);
}

void api_fetch(srv *s, req *r) {
    kp_fetch_request *q = r->body;
    kp_fetch_response *resp;
    if (build(s, r, &resp, false) || s->stopping) {
        charge_egress(s, r, resp);
        req_respond(r, resp);
        return;
    }
    int64_t wait = q->max_wait_ms;
    if (wait > s->cfg->fetch_max_wait_cap_ms) wait = s->cfg->fetch_max_wait_cap_ms;
    fetch_wait *w = xcalloc(1, sizeof *w);
    w->s = s;
    w->r = r;
    uv_timer_init(s->loop, &w->timer);
    w->timer.data = w;
    clk_timer_start(&w->timer, on_timeout, wait);
    w->w.ready = has_data;
    w->w.wake = wake;
    topic_wait(s, &w->w);
    req_park(r, w, cancel);
}
