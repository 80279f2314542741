/*
 * ListOffsets (key 2), v0–10: latest (-1, the high watermark; under
 * read_committed, v2+, the last stable offset, as Kafka answers), earliest
 * (-2, log start), max timestamp (-3, v7+: the first record with the largest
 * timestamp), earliest local (-4, v8+, same as earliest: there is no tiered
 * storage), latest tiered (-5, v9+: none, so -1), and by timestamp: the
 * first record at or past the log start whose timestamp reaches it, below
 * the same bound as latest (topic/time_lookup.c). Lookups by time answer
 * the leader epoch of the batch holding the record, as Kafka does.
 * v0 answers with old_style_offsets.
 */
#include "api.h"
#include "topic/topic.h"

static int16_t lookup(srv *s, req *r, topic *t, partition *p, int64_t ts, kp_list_offsets_partition_response *rp) {
    rp->timestamp = -1;
    rp->offset = -1;
    int16_t ver = r->hdr.api_version;
    bool committed = ver >= 2 && ((kp_list_offsets_request *)r->body)->isolation_level == 1;
    int64_t fetchable = committed ? topic_lso(p) : p->hw;
    topic_time_hit hit;
    int found = 0;
    if (ts == -1) {
        rp->offset = fetchable;
    } else if (ts == -2 || (ts == -4 && ver >= 8)) {
        rp->offset = p->log_start;
    } else if (ts == -3 && ver >= 7) {
        found = topic_offset_of_max_timestamp(s, p, fetchable, &hit);
    } else if (ts == -5 && ver >= 9) {
        /* nothing is tiered */
    } else if (ts >= 0) {
        found = topic_offset_for_time(s, p, ts, fetchable, &hit);
    } else {
        req_log_refusal(r, KERR_INVALID_REQUEST, "%s-%d: timestamp %lld is not valid at v%d", t->name, p->index,
                        (long long)ts, ver);
        return KERR_INVALID_REQUEST;
    }
    if (found < 0) {
        req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "%s-%d: the lookup of timestamp %lld could not read the log",
                        t->name, p->index, (long long)ts);
        return KERR_KAFKA_STORAGE_ERROR;
    }
    if (found) {
        rp->offset = hit.offset;
        rp->timestamp = hit.timestamp;
        rp->leader_epoch = hit.leader_epoch;
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
            if (p) rp->leader_epoch = p->leader_epoch;
            if (!code) code = lookup(s, r, t, p, qp->timestamp, rp);
            rp->error_code = code;
            if (ver == 0) {
                bool none = code || rp->offset < 0 || qp->max_num_offsets <= 0;
                REQ_ARR(r, rp->old_style_offsets, none ? 0 : 1);
                if (!none) rp->old_style_offsets.v[0] = rp->offset;
            }
        }
    }
    req_respond(r, resp);
}
