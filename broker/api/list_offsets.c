/*
 * ListOffsets (key 2), v0–10: latest (-1, the high watermark; under
 * read_committed, v2+, the last stable offset, as Kafka answers), earliest
 * (-2, log start), max timestamp (-3, v7+), earliest local (-4, v8+, same as
 * earliest: there is no tiered storage), latest tiered (-5, v9+: none, so
 * -1), and by timestamp. Timestamp lookups have batch granularity: the first
 * batch whose max timestamp reaches the target, as Kafka's time index,
 * below the same bound as latest.
 * v0 answers with old_style_offsets.
 */
#include "api.h"
#include "topic/topic.h"

static int16_t lookup(srv *s, req *r, topic *t, partition *p, int64_t ts, int64_t *offset, int64_t *out_ts) {
    *out_ts = -1;
    *offset = -1;
    int16_t ver = r->hdr.api_version;
    bool committed = ver >= 2 && ((kp_list_offsets_request *)r->body)->isolation_level == 1;
    int64_t fetchable = committed ? topic_lso(p) : p->hw;
    if (ts == -1) {
        *offset = fetchable;
    } else if (ts == -2 || (ts == -4 && ver >= 8)) {
        *offset = p->log_start;
    } else if (ts == -3 && ver >= 7) {
        if (stor_max_timestamp(s->st, t->id, p->index, offset, out_ts) < 0) return KERR_KAFKA_STORAGE_ERROR;
        if (*offset >= fetchable) *offset = -1, *out_ts = -1;
    } else if (ts == -5 && ver >= 9) {
        /* nothing is tiered */
    } else if (ts >= 0) {
        int rc = stor_offset_for_time(s->st, t->id, p->index, ts, offset, out_ts);
        if (rc < 0) return KERR_KAFKA_STORAGE_ERROR;
        if (rc == 0 || *offset >= fetchable) *offset = -1, *out_ts = -1;
    } else {
        req_log_refusal(r, KERR_INVALID_REQUEST, "%s-%d: timestamp %lld is not valid at v%d", t->name, p->index,
                        (long long)ts, ver);
        return KERR_INVALID_REQUEST;
    }
    return 0;
}

void api_list_offsets(srv *s, req *r) {
    kp_list_offsets_request *q = r->body;
    kp_list_offsets_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_list_offsets_topic *qt = &q->topics.v[i];
        kp_list_offsets_topic_response *rt = &resp->topics.v[i];
        rt->name = qt->name;
        int16_t tcode;
        topic *t = api_topic(s, r, qt->name, &tcode);
        REQ_ARR(r, rt->partitions, qt->partitions.n);
        for (int32_t j = 0; j < qt->partitions.n; j++) {
            kp_list_offsets_partition *qp = &qt->partitions.v[j];
            kp_list_offsets_partition_response *rp = &rt->partitions.v[j];
            kp_defaults(&kp_list_offsets_partition_response_schema, ver, rp);
            rp->partition_index = qp->partition_index;
            rp->timestamp = -1;
            rp->offset = -1;
            partition *p = NULL;
            int16_t code = t ? api_partition_check(s, r, t, qp->partition_index, &p) : tcode;
            if (!code) code = api_leader_epoch_check(r, p, qp->current_leader_epoch, false);
            if (!code) code = lookup(s, r, t, p, qp->timestamp, &rp->offset, &rp->timestamp);
            rp->error_code = code;
            if (p) rp->leader_epoch = p->leader_epoch;
            if (ver == 0) {
                bool none = code || rp->offset < 0 || qp->max_num_offsets <= 0;
                REQ_ARR(r, rp->old_style_offsets, none ? 0 : 1);
                if (!none) rp->old_style_offsets.v[0] = rp->offset;
            }
        }
    }
    req_respond(r, resp);
}
