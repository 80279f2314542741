/* TxnOffsetCommit (API key 28) wire description; fields carry the versions they exist in. */
#include "msg_txn_offset_commit.h"

static const kp_field kp_txn_offset_commit_request_partition_fields[] = {
    KF(KP_I32, kp_txn_offset_commit_request_partition, partition_index, 0, KV_MAX),
    KF(KP_I64, kp_txn_offset_commit_request_partition, committed_offset, 0, KV_MAX),
    KF(KP_I32, kp_txn_offset_commit_request_partition, committed_leader_epoch, 2, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_txn_offset_commit_request_partition, committed_metadata, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_txn_offset_commit_request_partition_schema, kp_txn_offset_commit_request_partition, kp_txn_offset_commit_request_partition_fields);

static const kp_field kp_txn_offset_commit_request_topic_fields[] = {
    KF(KP_STR, kp_txn_offset_commit_request_topic, name, 0, 5),
    KFA(kp_txn_offset_commit_request_topic, partitions, 0, KV_MAX, kp_txn_offset_commit_request_partition_schema),
};
KSCHEMA(kp_txn_offset_commit_request_topic_schema, kp_txn_offset_commit_request_topic, kp_txn_offset_commit_request_topic_fields);

static const kp_field kp_txn_offset_commit_request_fields[] = {
    KF(KP_STR, kp_txn_offset_commit_request, transactional_id, 0, KV_MAX),
    KF(KP_STR, kp_txn_offset_commit_request, group_id, 0, KV_MAX),
    KF(KP_I64, kp_txn_offset_commit_request, producer_id, 0, KV_MAX),
    KF(KP_I16, kp_txn_offset_commit_request, producer_epoch, 0, KV_MAX),
    KF(KP_I32, kp_txn_offset_commit_request, generation_id_or_member_epoch, 3, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_txn_offset_commit_request, member_id, 3, KV_MAX),
    KF(KP_STR, kp_txn_offset_commit_request, group_instance_id, 3, KV_MAX, .null_from = 3, .dflt = -1),
    KFA(kp_txn_offset_commit_request, topics, 0, KV_MAX, kp_txn_offset_commit_request_topic_schema),
};
KSCHEMA(kp_txn_offset_commit_request_schema, kp_txn_offset_commit_request, kp_txn_offset_commit_request_fields);

static const kp_field kp_txn_offset_commit_response_partition_fields[] = {
    KF(KP_I32, kp_txn_offset_commit_response_partition, partition_index, 0, KV_MAX),
    KF(KP_I16, kp_txn_offset_commit_response_partition, error_code, 0, KV_MAX),
};
KSCHEMA(kp_txn_offset_commit_response_partition_schema, kp_txn_offset_commit_response_partition, kp_txn_offset_commit_response_partition_fields);

static const kp_field kp_txn_offset_commit_response_topic_fields[] = {
    KF(KP_STR, kp_txn_offset_commit_response_topic, name, 0, 5),
    KFA(kp_txn_offset_commit_response_topic, partitions, 0, KV_MAX, kp_txn_offset_commit_response_partition_schema),
};
KSCHEMA(kp_txn_offset_commit_response_topic_schema, kp_txn_offset_commit_response_topic, kp_txn_offset_commit_response_topic_fields);

static const kp_field kp_txn_offset_commit_response_fields[] = {
    KF(KP_I32, kp_txn_offset_commit_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_txn_offset_commit_response, topics, 0, KV_MAX, kp_txn_offset_commit_response_topic_schema),
};
KSCHEMA(kp_txn_offset_commit_response_schema, kp_txn_offset_commit_response, kp_txn_offset_commit_response_fields);

const kp_msg kp_msg_txn_offset_commit = {KP_MSG_ID(TXN_OFFSET_COMMIT), 0, 5, 3, &kp_txn_offset_commit_request_schema, &kp_txn_offset_commit_response_schema};
