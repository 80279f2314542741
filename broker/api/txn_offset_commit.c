/*
 * TxnOffsetCommit (key 28), v0–5 (v5 is transactions V2, served while transaction.version is
 * 2: the group joins the transaction here, with no AddOffsetsToTxn), sent to the group's
 * coordinator: offsets a transaction consumed, held until it ends (broker/txn); a
 * COMMIT makes them the group's committed offsets, unless a plain OffsetCommit of the same
 * partition came later, and an ABORT drops them. The group must have joined the transaction
 * (AddOffsetsToTxn) and, from v3 (KIP-447), a member naming its generation must be current:
 * ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID otherwise (a zombie consumer's
 * producer cannot commit). IAM: AlterTransactionalId (53), AlterGroup (30), ReadData on each
 * topic (29).
 */
#include <stdlib.h>

#include "api.h"
#include "group/group.h"
#include "topic/topic.h"
#include "txn/txn.h"

static int16_t check_group(srv *s, req *r, const kp_txn_offset_commit_request *q, txn **t) {
    int16_t code = api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, q->transactional_id);
    if (!code) code = api_group(s, r, q->group_id);
    if (!code && q->group_id.len <= 0) {
        code = KERR_INVALID_GROUP_ID;
        req_log_refusal(r, code, "the group id is empty");
    }
    if (!code) code = txn_verify_offsets(s, r, q->transactional_id, q->producer_id, q->producer_epoch, q->group_id, t);
    if (code) return code;
    group *g;
    bool v3 = r->hdr.api_version >= 3;
    return grp_txn_commit_check(s, r, q->group_id, v3 ? q->generation_id_or_member_epoch : -1,
                                v3 ? q->member_id : kp_str_c(""), v3 ? q->group_instance_id : KP_STR_NULL, &g);
}

void api_txn_offset_commit(srv *s, req *r) {
    kp_txn_offset_commit_request *q = r->body;
    kp_txn_offset_commit_response *resp = req_resp(r);
    txn *t = NULL;
    int16_t top = check_group(s, r, q, &t);
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_txn_offset_commit_request_topic *qt = &q->topics.v[i];
        kp_txn_offset_commit_response_topic *rt = &resp->topics.v[i];
        rt->name = qt->name;
        int16_t tcode = top;
        topic *tp = top ? NULL : api_topic(s, r, qt->name, &tcode);
        REQ_ARR(r, rt->partitions, qt->partitions.n);
        for (int32_t j = 0; j < qt->partitions.n; j++) {
            kp_txn_offset_commit_request_partition *qp = &qt->partitions.v[j];
            kp_txn_offset_commit_response_partition *rp = &rt->partitions.v[j];
            rp->partition_index = qp->partition_index;
            int16_t code = tcode;
            if (!code && (qp->partition_index < 0 || qp->partition_index >= tp->nparts)) {
                code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                req_log_refusal(r, code, "%s-%d: no such partition", tp->name, qp->partition_index);
            }
            if (!code && qp->committed_metadata.len > s->cfg->offset_metadata_max_bytes) {
                code = KERR_OFFSET_METADATA_TOO_LARGE;
                req_log_refusal(r, code, "%s-%d: metadata of %d bytes, offset.metadata.max.bytes=%lld", tp->name,
                                qp->partition_index, qp->committed_metadata.len,
                                (long long)s->cfg->offset_metadata_max_bytes);
            }
            rp->error_code = code;
            if (code) continue;
            char *group = kp_str_dup(q->group_id);
            txn_offset_put(s, t, group ? group : "", tp->name, qp->partition_index, qp->committed_offset,
                           r->hdr.api_version >= 2 ? qp->committed_leader_epoch : -1, qp->committed_metadata);
            free(group);
        }
    }
    req_respond_after_commit(s, r, resp);
}
