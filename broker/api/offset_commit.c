/*
 * OffsetCommit (key 8), v0–9, with Kafka's rules (handleCommitOffsets of
 * GroupCoordinator in 3.x, validateOffsetCommit of OffsetMetadataManager in
 * 4.x): simple consumers (generation -1, no member) commit to empty or
 * unknown groups; members must name their generation; REBALANCE_IN_PROGRESS
 * while the leader's assignment is awaited. Per partition:
 * UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE. Answered after the
 * storage commit that holds the offsets.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "checked.h"
#include "clock.h"
#include "group/group.h"
#include "txn/txn.h"
#include "topic/topic.h"

void api_offset_commit(srv *s, req *r) {
    kp_offset_commit_request *q = r->body;
    kp_offset_commit_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    int32_t generation = ver >= 1 ? q->generation_id_or_member_epoch : -1;
    group *g = NULL;
    int16_t top = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    if (!top) top = grp_commit_check(s, r, q->group_id, generation, q->member_id, q->group_instance_id, &g);
    /*
     * Kafka computes currentTimeMs + retentionTimeMs in Java (expireTimestampMs of
     * OffsetMetadataManager, GroupCoordinatorAdapter.commitOffsets in 3.x), where INT64_MAX
     * wraps to a past time and the commit expires at the next sweep; in C it is undefined
     * behaviour. We saturate: the client asked to keep the offset as long as it can be kept.
     */
    int64_t expire =
        ver >= 2 && ver <= 4 && q->retention_time_ms >= 0 ? sat_add_i64(clk_now_ms(), q->retention_time_ms) : -1;
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_offset_commit_request_topic *qt = &q->topics.v[i];
        kp_offset_commit_response_topic *rt = &resp->topics.v[i];
        rt->name = qt->name;
        /* the group first, as Kafka: a refused group refuses every partition with its own code */
        int16_t denied = top ? 0 : api_authz(s, r, IAM_RES_TOPIC, qt->name);
        topic *t = qt->name.len > 0 ? topic_find(s, qt->name.p, (size_t)qt->name.len) : NULL;
        REQ_ARR(r, rt->partitions, qt->partitions.n);
        for (int32_t j = 0; j < qt->partitions.n; j++) {
            kp_offset_commit_request_partition *qp = &qt->partitions.v[j];
            kp_offset_commit_response_partition *rp = &rt->partitions.v[j];
            rp->partition_index = qp->partition_index;
            int16_t code = top ? top : denied;
            if (!code && (!t || qp->partition_index < 0 || qp->partition_index >= t->nparts)) {
                code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                req_log_refusal(r, code, "group %s: commit for unknown partition %.*s-%d", g->id,
                                qt->name.len > 0 ? qt->name.len : 0, qt->name.p, qp->partition_index);
            }
            if (!code && qp->committed_metadata.len > s->cfg->offset_metadata_max_bytes) {
                code = KERR_OFFSET_METADATA_TOO_LARGE;
                req_log_refusal(r, code, "group %s: metadata of %d bytes, offset.metadata.max.bytes=%lld", g->id,
                                qp->committed_metadata.len, (long long)s->cfg->offset_metadata_max_bytes);
            }
            rp->error_code = code;
            if (code) continue;
            grp_offset_put(s, g, t->name, qp->partition_index, qp->committed_offset,
                           ver >= 6 ? qp->committed_leader_epoch : -1, qp->committed_metadata, expire);
            txn_offsets_supersede(s, g->id, t->name, qp->partition_index); /* the later commit wins */
        }
    }
    r->commit_failed = api_offsets_commit_failed;
    req_respond_after_commit(s, r, resp);
}
