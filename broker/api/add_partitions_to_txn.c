/*
 * AddPartitionsToTxn (key 24), v0–5. Clients send v0–3 (one transaction); v4+ is the broker
 * form of KIP-890 (several transactions, verify_only), which needs Kafka's ClusterAction: MSK's
 * IAM has no such action, so an IAM or SASL listener answers it CLUSTER_AUTHORIZATION_FAILED.
 * Per partition, as Kafka answers: a topic the principal may not write gets
 * TOPIC_AUTHORIZATION_FAILED, an unknown partition UNKNOWN_TOPIC_OR_PARTITION, and then every
 * other partition OPERATION_NOT_ATTEMPTED; otherwise all get the coordinator's code (broker/txn).
 * IAM: AlterTransactionalId on the id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
#include "api.h"
#include "net/net.h"
#include "topic/topic.h"
#include "txn/txn.h"

typedef KP_ARR(struct kp_add_partitions_to_txn_topic) topics_in;
typedef KP_ARR(struct kp_add_partitions_to_txn_topic_result) topics_out;

static int count_partitions(const topics_in *in) {
    int n = 0;
    for (int32_t i = 0; i < in->n; i++) n += in->v[i].partitions.n > 0 ? in->v[i].partitions.n : 0;
    return n;
}

/* One transaction: the result of each partition in out (a refusal of the whole transaction on each). */
static void add_txn(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, bool verify_only, const topics_in *in,
                       topics_out *out) {
    int n = count_partitions(in), k = 0;
    txn_partition *parts = req_alloc(r, sizeof(*parts) * (size_t)(n ? n : 1));
    REQ_ARR(r, *out, in->n);
    bool any_bad = false;
    int16_t code = api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, id);
    /* pass 1: which partitions can be added at all */
    for (int32_t i = 0; i < in->n; i++) {
        const kp_add_partitions_to_txn_topic *qt = &in->v[i];
        kp_add_partitions_to_txn_topic_result *rt = &out->v[i];
        rt->name = qt->name;
        REQ_ARR(r, rt->results_by_partition, qt->partitions.n > 0 ? qt->partitions.n : 0);
        int16_t tcode = 0;
        topic *t = code ? NULL : api_topic(s, r, qt->name, &tcode);
        for (int32_t j = 0; j < rt->results_by_partition.n; j++) {
            kp_add_partitions_to_txn_partition_result *rp = &rt->results_by_partition.v[j];
            rp->partition_index = qt->partitions.v[j];
            rp->partition_error_code = code ? code : tcode;
            if (!code && !tcode && (rp->partition_index < 0 || rp->partition_index >= t->nparts)) {
                rp->partition_error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                req_log_refusal(r, KERR_UNKNOWN_TOPIC_OR_PARTITION, "%s-%d: no such partition", t->name,
                                rp->partition_index);
            }
            if (rp->partition_error_code) any_bad = true;
            else parts[k++] = (txn_partition){t->id, rp->partition_index};
        }
    }
    if (code) return;
    if (!any_bad) {
        txn *tx;
        code = txn_check_producer(s, r, id, pid, epoch, &tx);
        if (!code) code = txn_add_partitions(s, r, tx, parts, k, verify_only);
        k = 0;
        /* verify_only: each partition says whether it is in the transaction (KIP-890) */
        for (int32_t i = 0; i < out->n; i++)
            for (int32_t j = 0; j < out->v[i].results_by_partition.n; j++) {
                kp_add_partitions_to_txn_partition_result *rp = &out->v[i].results_by_partition.v[j];
                rp->partition_error_code = code;
                if (!code && verify_only && !txn_has_partition(tx, parts[k].topic_id, parts[k].partition))
                    rp->partition_error_code = KERR_TRANSACTION_ABORTABLE;
                k++;
            }
        return;
    }
    for (int32_t i = 0; i < out->n; i++)
        for (int32_t j = 0; j < out->v[i].results_by_partition.n; j++)
            if (!out->v[i].results_by_partition.v[j].partition_error_code)
                out->v[i].results_by_partition.v[j].partition_error_code = KERR_OPERATION_NOT_ATTEMPTED;
}

void api_add_partitions_to_txn(srv *s, req *r) {
    kp_add_partitions_to_txn_request *q = r->body;
    kp_add_partitions_to_txn_response *resp = req_resp(r);
    if (r->hdr.api_version <= 3) {
        add_txn(s, r, q->v3_and_below_transactional_id, q->v3_and_below_producer_id, q->v3_and_below_producer_epoch,
                false, (topics_in *)&q->v3_and_below_topics, (topics_out *)&resp->results_by_topic_v3_and_below);
    } else if (lsn_sasl(r->c->listener)) {
        resp->error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
        req_log_refusal(r, KERR_CLUSTER_AUTHORIZATION_FAILED, "AddPartitionsToTxn v%d is the inter-broker form and "
                        "needs Kafka's ClusterAction, which MSK's IAM cannot grant", r->hdr.api_version);
    } else {
        REQ_ARR(r, resp->results_by_transaction, q->transactions.n);
        for (int32_t i = 0; i < q->transactions.n; i++) {
            kp_add_partitions_to_txn_transaction *qt = &q->transactions.v[i];
            kp_add_partitions_to_txn_result *rt = &resp->results_by_transaction.v[i];
            rt->transactional_id = qt->transactional_id;
            add_txn(s, r, qt->transactional_id, qt->producer_id, qt->producer_epoch, qt->verify_only,
                    (topics_in *)&qt->topics, (topics_out *)&rt->topic_results);
        }
    }
    req_respond_after_commit(s, r, resp);
}
