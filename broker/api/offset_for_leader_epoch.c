/*
 * OffsetForLeaderEpoch (key 23), v0–4: consumers use it to detect log
 * truncation after a leader change. Every partition has had one leader
 * epoch (0) for its whole life, so epoch 0 ends at the log end offset and
 * any later epoch is unknown (-1, -1), as Kafka answers.
 */
#include "api.h"
#include "topic/topic.h"

void api_offset_for_leader_epoch(srv *s, req *r) {
    kp_offset_for_leader_epoch_request *q = r->body;
    kp_offset_for_leader_epoch_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_offset_for_leader_epoch_offset_for_leader_topic *qt = &q->topics.v[i];
        kp_offset_for_leader_epoch_offset_for_leader_topic_result *rt = &resp->topics.v[i];
        rt->topic = qt->topic;
        int16_t tcode;
        topic *t = api_topic(s, r, qt->topic, &tcode);
        REQ_ARR(r, rt->partitions, qt->partitions.n);
        for (int32_t j = 0; j < qt->partitions.n; j++) {
            kp_offset_for_leader_epoch_offset_for_leader_partition *qp = &qt->partitions.v[j];
            kp_offset_for_leader_epoch_epoch_end_offset *rp = &rt->partitions.v[j];
            kp_defaults(&kp_offset_for_leader_epoch_epoch_end_offset_schema, ver, rp);
            rp->partition = qp->partition;
            rp->leader_epoch = -1;
            rp->end_offset = -1;
            partition *p = NULL;
            int16_t code = t ? api_partition_check(s, r, t, qp->partition, &p) : tcode;
            if (!code) code = api_leader_epoch_check(r, p, qp->current_leader_epoch, false);
            rp->error_code = code;
            if (!code && qp->leader_epoch <= p->leader_epoch) {
                rp->leader_epoch = p->leader_epoch;
                rp->end_offset = p->end;
            }
        }
    }
    req_respond(r, resp);
}
