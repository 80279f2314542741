/*
 * Produce (key 0), v0–12 (v12: transactions V2, served while transaction.version is 2). Each partition's records must be exactly one
 * magic-2 batch (Kafka 4 rejects the old formats); it is validated (CRC,
 * counts, codec, control and sequence fields), checked against
 * max.message.bytes and the idempotent-producer state (acks=all first needs
 * min.insync.replicas replicas on brokers up: NOT_ENOUGH_REPLICAS otherwise), given its offsets and
 * stored as produced. acks=1/-1 are answered only after the storage commit
 * that holds the batch; acks=0 is never answered, and a failed acks=0
 * produce closes the connection, as Kafka does. A transactional batch must
 * belong to its producer's ongoing transaction on that partition (the
 * coordinator's check, txn_verify_produce, KIP-890 part 1; from v12 the
 * coordinator adds the partition, KIP-890 part 2). Where the topic
 * asks for it, the records are checked and the batch rebuilt
 * (topic_check_records: keys of a compacted topic, the timestamp window,
 * compression.type); refused records are listed in record_errors (v8+). A batch whose record
 * pass would hold the loop more than about a millisecond is checked on libuv's threadpool
 * (topic_check_records_async) while the request is parked, which mutes its connection as
 * Kafka's does while a request is processed; the partitions after it wait, and on return the
 * topic, the partition and the transaction are checked again before the append.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "kp_batch.h"
#include "log.h"
#include "net/net.h"
#include "topic/topic.h"
#include "txn/txn.h"

/* The refused records of one partition, as the produce response's record_errors (v8+) carries them. */
typedef struct record_errors {
    req *r;
    kp_produce_partition_produce_response *out;
    const char *first; /* the first record's message, for the log line */
    int32_t cap;
} record_errors;

static void record_error(void *ctx, int32_t index, const char *msg) {
    record_errors *re = ctx;
    kp_str m = req_strf(re->r, "%s", msg);
    if (!re->first) re->first = m.p;
    if (re->r->hdr.api_version < 8) return;
    kp_produce_partition_produce_response *out = re->out;
    int32_t n = out->record_errors.n;
    if (n == re->cap) { /* doubling in the request's arena: a batch of refused records costs O(n) */
        re->cap = re->cap ? re->cap * 2 : 8;
        kp_produce_batch_index_and_error_message *v = req_alloc(re->r, sizeof(*v) * (size_t)re->cap);
        if (n) memcpy(v, out->record_errors.v, sizeof(*v) * (size_t)n);
        out->record_errors.v = v;
    }
    out->record_errors.v[n] = (kp_produce_batch_index_and_error_message){index, m};
    out->record_errors.n = n + 1;
}

/*
 * A produce on its way through its partitions, in the request's arena: where it stands (i, j),
 * what it has found so far, and, while parked, the partition whose batch a worker checks.
 */
typedef struct produce_run {
    kp_produce_response *resp;
    int32_t i, j;
    bool bad_acks, any_error, any_stored;
    int16_t txn_denied;
    int16_t tcode;          /* topic_data[i]'s refusal when t is NULL */
    topic *t;               /* topic_data[i]'s topic; looked up again after a park */
    uint8_t uuid[16];       /* t's, to find it again (a topic recreated meanwhile is another one) */
    quota_throttle throttle;
    topic_check_job *job;   /* parked: the check under way */
    kp_batch b;             /* parked: the batch checked (in r->frame) */
    record_errors re;
} produce_run;

/* The append of a batch whose records were checked (code: the check's answer). */
static int16_t produce_checked_batch(srv *s, req *r, topic *t, partition *p, kp_produce_partition_produce_data *pd,
                                     kp_produce_partition_produce_response *out, kp_batch b, int16_t code,
                                     topic_checked *checked, const char *why, const record_errors *re,
                                     bool *any_stored) {
    if (code) {
        free(checked->batch);
        req_log_refusal(r, code, "%s-%d: %s%s%s", t->name, pd->index, why, re->first ? ": " : "",
                        re->first ? re->first : "");
        if (r->hdr.api_version >= 8 && re->first) out->error_message = req_strf(r, "%s", why);
        return code;
    }
    uint8_t *buf = (uint8_t *)b.data; /* inside r->frame, which this request owns */
    kp_batch rebuilt;
    if (checked->batch) {
        size_t at = 0;
        if (kp_batch_next(checked->batch, checked->size, &at, &rebuilt, &why) != 1) abort(); /* we just built it */
        buf = checked->batch;
        b = rebuilt;
    }
    int64_t base, append_time;
    code = topic_append(s, p, buf, b.size, &b, &base, &append_time, &why);
    free(checked->batch);
    checked->batch = NULL;
    if (code) {
        if (code == KERR_MESSAGE_TOO_LARGE)
            req_log_refusal(r, code, "%s-%d: batch of %zu bytes, max.message.bytes is %lld", t->name, pd->index, b.size,
                            (long long)t->max_message_bytes);
        else
            req_log_refusal(r, code, "%s-%d: %s (producer id %lld epoch %d sequence %d)", t->name, pd->index, why,
                            (long long)b.producer_id, b.producer_epoch, b.base_sequence);
        return code;
    }
    out->base_offset = base;
    out->log_append_time_ms = append_time;
    *any_stored = true;
    return 0;
}

static void produce_checked(srv *s, void *ctx, int16_t code, topic_checked *checked, const char *why);

/* acks=all needs min.insync.replicas replicas on brokers up (checked again after a park). */
static int16_t produce_in_sync(srv *s, req *r, topic *t, int32_t index) {
    int32_t in_sync = topic_in_sync(s, t, index);
    if (((kp_produce_request *)r->body)->acks == -1 && in_sync < t->min_insync_replicas) {
        req_log_refusal(r, KERR_NOT_ENOUGH_REPLICAS, "%s-%d: %d in-sync replica(s) (replication factor %d), "
                        "min.insync.replicas is %lld: acks=all cannot be met (acks=1 can)", t->name, index,
                        in_sync, topic_replication_factor(s, t), (long long)t->min_insync_replicas);
        return KERR_NOT_ENOUGH_REPLICAS;
    }
    return 0;
}

/* PRODUCE_PARKED: the batch went to the threadpool; the request is parked. */
#define PRODUCE_PARKED (-1)

static int16_t produce_partition(srv *s, req *r, produce_run *run, kp_produce_partition_produce_data *pd,
                                 kp_produce_partition_produce_response *out) {
    topic *t = run->t;
    partition *p;
    int16_t code = api_partition_check(s, r, t, pd->index, &p);
    if (code) return code;
    out->log_start_offset = p->log_start;
    if (topic_is_internal(t->name, strlen(t->name))) {
        req_log_refusal(r, KERR_INVALID_TOPIC_EXCEPTION, "Cannot append to internal topic %s (read-only here: offsets "
                        "and transactions are kept in the database)", t->name);
        return KERR_INVALID_TOPIC_EXCEPTION;
    }
    /* before the batch is looked at, as Kafka's Partition.appendRecordsToLeader checks it */
    code = produce_in_sync(s, r, t, pd->index);
    if (code) return code;
    if (pd->records.len <= 0) {
        req_log_refusal(r, KERR_INVALID_RECORD, "%s-%d: no record batch in the request", t->name, pd->index);
        return KERR_INVALID_RECORD;
    }
    uint8_t *buf = (uint8_t *)pd->records.p; /* inside r->frame, which this request owns */
    size_t len = (size_t)pd->records.len, pos = 0;
    kp_batch b;
    const char *why = NULL;
    int rc = kp_batch_next(buf, len, &pos, &b, &why);
    if (rc < 0) {
        req_log_refusal(r, KERR_CORRUPT_MESSAGE, "%s-%d: %s", t->name, pd->index, why);
        return KERR_CORRUPT_MESSAGE;
    }
    if (pos != len) {
        req_log_refusal(r, KERR_INVALID_RECORD, "%s-%d: more than one record batch (or trailing bytes) for one partition",
                        t->name, pd->index);
        return KERR_INVALID_RECORD;
    }
    code = (int16_t)kp_batch_validate(&b, &why);
    if (code) {
        req_log_refusal(r, code, "%s-%d: %s", t->name, pd->index, why);
        return code;
    }
    if (kp_batch_codec(&b) == KP_CODEC_ZSTD && r->hdr.api_version < 7) {
        req_log_refusal(r, KERR_UNSUPPORTED_COMPRESSION_TYPE, "%s-%d: zstd needs Produce v7 or later", t->name,
                        pd->index);
        return KERR_UNSUPPORTED_COMPRESSION_TYPE;
    }
    if (b.attributes & KP_ATTR_TRANSACTIONAL) {
        /* with no transactional id the request was refused whole (has_transactional_records) */
        kp_str tid = ((kp_produce_request *)r->body)->transactional_id;
        code = txn_verify_produce(s, r, tid, b.producer_id, b.producer_epoch, t->id, p->index);
        if (code) return code;
    }
    if ((int64_t)b.size > t->max_message_bytes) {
        req_log_refusal(r, KERR_MESSAGE_TOO_LARGE, "%s-%d: batch of %zu bytes, max.message.bytes is %lld", t->name,
                        pd->index, b.size, (long long)t->max_message_bytes);
        return KERR_MESSAGE_TOO_LARGE;
    }
    run->re = (record_errors){r, out, NULL, 0};
    topic_checked checked;
    code = topic_check_records_async(s, p, &b, &checked, record_error, &run->re, &why, produce_checked, &run->job);
    if (code == TOPIC_CHECK_PENDING) {
        run->b = b;
        return PRODUCE_PARKED;
    }
    return produce_checked_batch(s, r, t, p, pd, out, b, code, &checked, why, &run->re, &run->any_stored);
}

/* The commit holding this produce failed: each partition it answered OK gets KAFKA_STORAGE_ERROR. */
static void produce_commit_failed(srv *s, req *r) {
    kp_produce_response *resp = r->resp;
    int16_t ver = r->hdr.api_version;
    int n = 0;
    for (int32_t i = 0; i < resp->responses.n; i++)
        for (int32_t j = 0; j < resp->responses.v[i].partition_responses.n; j++) {
            kp_produce_partition_produce_response *out = &resp->responses.v[i].partition_responses.v[j];
            if (out->error_code) continue;
            out->error_code = KERR_KAFKA_STORAGE_ERROR;
            out->base_offset = -1;
            out->log_append_time_ms = -1;
            if (ver >= 8) out->error_message = kp_str_c(kp_err_name(KERR_KAFKA_STORAGE_ERROR));
            n++;
        }
    if (n)
        req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "%d partition(s): the storage commit that held their batches "
                        "failed (%s); none of them was stored", n, stor_errmsg(s->st));
}

/* Kafka's hasTransactionalRecords: some partition's first batch says transactional. */
static bool has_transactional_records(const kp_produce_request *q) {
    for (int32_t i = 0; i < q->topic_data.n; i++)
        for (int32_t j = 0; j < q->topic_data.v[i].partition_data.n; j++) {
            kp_bytes rec = q->topic_data.v[i].partition_data.v[j].records;
            if (rec.len >= 23 && (((uint8_t)rec.p[22]) & KP_ATTR_TRANSACTIONAL)) return true; /* attributes at 21 */
        }
    return false;
}

static void produce_cancel(srv *s, req *r);

/* One partition's answer: its error code, and its bytes counted against the produce quotas. */
static void produce_account(srv *s, produce_run *run, kp_produce_partition_produce_data *pd,
                            kp_produce_partition_produce_response *out, int16_t code, int16_t ver) {
    /*
     * Kafka's produce quota counts the bytes a client sent, whatever became of them: a
     * batch refused (too large, corrupt, unauthorized) costs what a stored one does.
     * The partition's account only for a partition that exists; the cluster's always.
     */
    topic *t = run->t;
    if (pd->records.len > 0)
        quota_produced(s, t && pd->index >= 0 && pd->index < t->nparts ? &t->parts[pd->index] : NULL,
                       pd->records.len, &run->throttle);
    out->error_code = code;
    if (code) {
        run->any_error = true;
        out->base_offset = -1;
        if (ver >= 8 && !out->error_message.p) out->error_message = kp_str_c(kp_err_name(code));
    }
}

/* The partitions from (run->i, run->j) on, then the answer; returns early when one parks. */
static void produce_go_on(srv *s, req *r, produce_run *run) {
    kp_produce_request *q = r->body;
    kp_produce_response *resp = run->resp;
    int16_t ver = r->hdr.api_version;
    for (; run->i < q->topic_data.n; run->i++, run->j = 0) {
        kp_produce_topic_produce_data *td = &q->topic_data.v[run->i];
        kp_produce_topic_produce_response *tr = &resp->responses.v[run->i];
        if (run->j == 0) {
            tr->name = td->name;
            run->tcode = run->txn_denied;
            run->t = run->txn_denied ? NULL : api_topic(s, r, td->name, &run->tcode);
            if (run->t) memcpy(run->uuid, run->t->uuid, sizeof run->uuid);
            REQ_ARR(r, tr->partition_responses, td->partition_data.n);
        }
        for (; run->j < td->partition_data.n; run->j++) {
            kp_produce_partition_produce_data *pd = &td->partition_data.v[run->j];
            kp_produce_partition_produce_response *out = &tr->partition_responses.v[run->j];
            kp_defaults(&kp_produce_partition_produce_response_schema, ver, out);
            out->index = pd->index;
            out->base_offset = -1;
            int16_t code;
            if (run->bad_acks) {
                code = KERR_INVALID_REQUIRED_ACKS;
                req_log_refusal(r, code, "acks=%d; only -1, 0 and 1 are valid", q->acks);
            } else if (!run->t) {
                code = run->tcode;
            } else {
                code = produce_partition(s, r, run, pd, out);
                if (code == PRODUCE_PARKED) {
                    req_park(r, run, produce_cancel);
                    return;
                }
            }
            produce_account(s, run, pd, out, code, ver);
        }
    }
    char why[192];
    req_throttle(r, run->throttle.ms, kp_api_name(KP_API_PRODUCE), quota_throttle_why(&run->throttle, why, sizeof why));
    resp->throttle_time_ms = run->throttle.ms;
    if (q->acks == 0) {
        req_silent(r);
        if (run->any_error) net_close(r->c, "acks=0 produce failed (Kafka closes instead of answering)");
        return;
    }
    r->commit_failed = produce_commit_failed;
    req_respond_after_commit(s, r, resp);
}

/*
 * The threadpool checked the parked partition's batch: the topic (deleted or recreated
 * meanwhile), the partition (its count, its leader, its in-sync replicas) and the transaction (ended or fenced
 * meanwhile) are checked again, then the batch is appended as one checked inline would be and
 * the request goes on with its next partition. Its connection closed meanwhile: produce_cancel
 * ran and this is never called.
 */
static void produce_checked(srv *s, void *ctx, int16_t code, topic_checked *checked, const char *why) {
    record_errors *re = ctx;
    req *r = re->r;
    produce_run *run = r->park;
    run->job = NULL;
    if (code && !why) why = kp_err_name(code);
    if (s->fatal_exit) { /* the loop stops without answering anything (srv_fail_stop) */
        free(checked->batch);
        return;
    }
    r->park = NULL;
    r->park_cancel = NULL;
    req_set_state(r, REQ_QUEUED);
    kp_produce_request *q = r->body;
    kp_produce_topic_produce_data *td = &q->topic_data.v[run->i];
    kp_produce_partition_produce_data *pd = &td->partition_data.v[run->j];
    kp_produce_partition_produce_response *out = &run->resp->responses.v[run->i].partition_responses.v[run->j];
    run->t = topic_find_uuid(s, run->uuid);
    partition *p = NULL;
    int16_t c = 0;
    if (!run->t) {
        c = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        req_log_refusal(r, c, "topic '%.*s' was deleted while its batch was checked", td->name.len > 0 ? td->name.len : 0,
                        td->name.p);
    } else {
        c = api_partition_check(s, r, run->t, pd->index, &p);
        if (!c) c = produce_in_sync(s, r, run->t, pd->index);
        if (!c && (run->b.attributes & KP_ATTR_TRANSACTIONAL))
            c = txn_verify_produce(s, r, q->transactional_id, run->b.producer_id, run->b.producer_epoch, run->t->id,
                                   p->index);
    }
    if (c) {
        free(checked->batch);
        out->record_errors.n = 0;
    } else {
        c = produce_checked_batch(s, r, run->t, p, pd, out, run->b, code, checked, why, re, &run->any_stored);
    }
    produce_account(s, run, pd, out, c, r->hdr.api_version);
    run->j++;
    log_scope saved = log_now;
    if (log_fmt == LOG_JSON) {
        net_log_scope(r->c);
        snprintf(log_now.api, sizeof log_now.api, "%s", r->msg->name);
    }
    produce_go_on(s, r, run);
    log_now = saved;
    net_pump_later(r->c);
}

/* The connection closed while the batch was in the threadpool: the result is dropped there. */
static void produce_cancel(srv *s, req *r) {
    (void)s;
    produce_run *run = r->park;
    if (run && run->job) topic_check_cancel(run->job);
    if (run) run->job = NULL;
}

void api_produce(srv *s, req *r) {
    kp_produce_request *q = r->body;
    produce_run *run = req_alloc(r, sizeof *run);
    memset(run, 0, sizeof *run);
    run->resp = req_resp(r);
    run->bad_acks = q->acks != 0 && q->acks != 1 && q->acks != -1;
    /*
     * a transactional produce needs its transactional id, authorized; without it, or with
     * transactional records but no id, every partition gets 53 (KafkaApis.handleProduceRequest)
     */
    run->txn_denied = q->transactional_id.p ? api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, q->transactional_id) : 0;
    if (!q->transactional_id.p && has_transactional_records(q)) {
        run->txn_denied = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        req_log_refusal(r, run->txn_denied, "transactional record batches in a produce request without a "
                        "transactional id: every partition is refused");
    }
    REQ_ARR(r, run->resp->responses, q->topic_data.n);
    produce_go_on(s, r, run);
}
