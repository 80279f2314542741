/*
 * fault_errors: which Kafka errors a fault rule may put in which API's answer. A rule whose
 * error the API never returns (REBALANCE_IN_PROGRESS on Produce) would test nothing a real
 * broker can do, and clients treat such codes as fatal or ignore them, so it is refused with
 * the reason. Where an error may go is read from the response descriptions (kp_mirror); what
 * kind each error is comes from the Kafka protocol's error table.
 */
#include "fault.h"

#include <stdio.h>

#include "kp_errors.h"
#include "kp_mirror.h"
#include "kp_msgs.h"

typedef enum err_kind {
    ERR_ANY,       /* request-level trouble any API can answer */
    ERR_PARTITION, /* about a topic or partition: needs an error field in a topic or partition element */
    ERR_GROUP,     /* about a consumer group or its member */
    ERR_COORD,     /* the group or transaction coordinator */
    ERR_LISTED,    /* returned by the APIs listed with it only */
} err_kind;

static const int16_t group_apis[] = {KP_API_OFFSET_COMMIT, KP_API_OFFSET_FETCH, KP_API_FIND_COORDINATOR,
    KP_API_JOIN_GROUP, KP_API_HEARTBEAT, KP_API_LEAVE_GROUP, KP_API_SYNC_GROUP, KP_API_DESCRIBE_GROUPS,
    KP_API_LIST_GROUPS, KP_API_ADD_OFFSETS_TO_TXN, KP_API_TXN_OFFSET_COMMIT, KP_API_DELETE_GROUPS,
    KP_API_OFFSET_DELETE, -1};
static const int16_t coord_apis[] = {KP_API_OFFSET_COMMIT, KP_API_OFFSET_FETCH, KP_API_FIND_COORDINATOR,
    KP_API_JOIN_GROUP, KP_API_HEARTBEAT, KP_API_LEAVE_GROUP, KP_API_SYNC_GROUP, KP_API_DESCRIBE_GROUPS,
    KP_API_LIST_GROUPS, KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN, KP_API_ADD_OFFSETS_TO_TXN,
    KP_API_END_TXN, KP_API_TXN_OFFSET_COMMIT, KP_API_DELETE_GROUPS, KP_API_OFFSET_DELETE,
    KP_API_DESCRIBE_TRANSACTIONS, KP_API_LIST_TRANSACTIONS, -1};

typedef struct err_rule {
    int16_t code;
    err_kind kind;
    int16_t apis[10]; /* ERR_LISTED: the API keys, -1 ends */
} err_rule;

static const err_rule rules[] = {
    {KERR_OFFSET_OUT_OF_RANGE, ERR_PARTITION, {-1}},
    {KERR_CORRUPT_MESSAGE, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_UNKNOWN_TOPIC_OR_PARTITION, ERR_PARTITION, {-1}},
    {KERR_INVALID_FETCH_SIZE, ERR_LISTED, {KP_API_FETCH, -1}},
    {KERR_LEADER_NOT_AVAILABLE, ERR_PARTITION, {-1}},
    {KERR_NOT_LEADER_OR_FOLLOWER, ERR_PARTITION, {-1}},
    {KERR_MESSAGE_TOO_LARGE, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_OFFSET_METADATA_TOO_LARGE, ERR_LISTED, {KP_API_OFFSET_COMMIT, -1}},
    {KERR_COORDINATOR_LOAD_IN_PROGRESS, ERR_COORD, {-1}},
    {KERR_COORDINATOR_NOT_AVAILABLE, ERR_COORD, {-1}},
    {KERR_NOT_COORDINATOR, ERR_COORD, {-1}},
    {KERR_INVALID_TOPIC_EXCEPTION, ERR_PARTITION, {-1}},
    {KERR_RECORD_LIST_TOO_LARGE, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_NOT_ENOUGH_REPLICAS, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_INVALID_REQUIRED_ACKS, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_ILLEGAL_GENERATION, ERR_GROUP, {-1}},
    {KERR_INCONSISTENT_GROUP_PROTOCOL, ERR_GROUP, {-1}},
    {KERR_INVALID_GROUP_ID, ERR_GROUP, {-1}},
    {KERR_UNKNOWN_MEMBER_ID, ERR_GROUP, {-1}},
    {KERR_INVALID_SESSION_TIMEOUT, ERR_GROUP, {-1}},
    {KERR_REBALANCE_IN_PROGRESS, ERR_GROUP, {-1}},
    {KERR_INVALID_COMMIT_OFFSET_SIZE, ERR_LISTED, {KP_API_OFFSET_COMMIT, -1}},
    {KERR_TOPIC_AUTHORIZATION_FAILED, ERR_PARTITION, {-1}},
    {KERR_GROUP_AUTHORIZATION_FAILED, ERR_GROUP, {-1}},
    {KERR_INVALID_TIMESTAMP, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_UNSUPPORTED_SASL_MECHANISM, ERR_LISTED, {KP_API_SASL_HANDSHAKE, -1}},
    {KERR_ILLEGAL_SASL_STATE, ERR_LISTED, {KP_API_SASL_HANDSHAKE, KP_API_SASL_AUTHENTICATE, -1}},
    {KERR_TOPIC_ALREADY_EXISTS, ERR_LISTED, {KP_API_CREATE_TOPICS, -1}},
    {KERR_INVALID_PARTITIONS, ERR_LISTED, {KP_API_CREATE_TOPICS, KP_API_CREATE_PARTITIONS, -1}},
    {KERR_INVALID_REPLICATION_FACTOR, ERR_LISTED, {KP_API_CREATE_TOPICS, -1}},
    {KERR_INVALID_REPLICA_ASSIGNMENT, ERR_LISTED, {KP_API_CREATE_TOPICS, KP_API_CREATE_PARTITIONS, -1}},
    {KERR_INVALID_CONFIG, ERR_LISTED,
     {KP_API_CREATE_TOPICS, KP_API_ALTER_CONFIGS, KP_API_INCREMENTAL_ALTER_CONFIGS, -1}},
    {KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT, ERR_LISTED, {KP_API_PRODUCE, KP_API_FETCH, KP_API_LIST_OFFSETS, -1}},
    {KERR_OUT_OF_ORDER_SEQUENCE_NUMBER, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_DUPLICATE_SEQUENCE_NUMBER, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_INVALID_PRODUCER_EPOCH, ERR_LISTED, {KP_API_PRODUCE, KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN,
     KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN, KP_API_TXN_OFFSET_COMMIT, -1}},
    {KERR_INVALID_TXN_STATE, ERR_LISTED, {KP_API_PRODUCE, KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN,
     KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN, KP_API_TXN_OFFSET_COMMIT, -1}},
    {KERR_INVALID_PRODUCER_ID_MAPPING, ERR_LISTED, {KP_API_PRODUCE, KP_API_INIT_PRODUCER_ID,
     KP_API_ADD_PARTITIONS_TO_TXN, KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN, KP_API_TXN_OFFSET_COMMIT, -1}},
    {KERR_INVALID_TRANSACTION_TIMEOUT, ERR_LISTED, {KP_API_INIT_PRODUCER_ID, -1}},
    {KERR_CONCURRENT_TRANSACTIONS, ERR_LISTED, {KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN,
     KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN, -1}},
    {KERR_TRANSACTION_COORDINATOR_FENCED, ERR_LISTED, {KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN,
     KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN, -1}},
    {KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ERR_LISTED, {KP_API_PRODUCE, KP_API_FIND_COORDINATOR,
     KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN, KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN,
     KP_API_TXN_OFFSET_COMMIT, KP_API_DESCRIBE_TRANSACTIONS, -1}},
    {KERR_OPERATION_NOT_ATTEMPTED, ERR_LISTED, {KP_API_ADD_PARTITIONS_TO_TXN, -1}},
    {KERR_KAFKA_STORAGE_ERROR, ERR_PARTITION, {-1}},
    {KERR_SASL_AUTHENTICATION_FAILED, ERR_LISTED, {KP_API_SASL_AUTHENTICATE, -1}},
    {KERR_UNKNOWN_PRODUCER_ID, ERR_LISTED, {KP_API_PRODUCE, KP_API_INIT_PRODUCER_ID, -1}},
    {KERR_NON_EMPTY_GROUP, ERR_GROUP, {-1}},
    {KERR_GROUP_ID_NOT_FOUND, ERR_GROUP, {-1}},
    {KERR_FENCED_LEADER_EPOCH, ERR_PARTITION, {-1}},
    {KERR_UNKNOWN_LEADER_EPOCH, ERR_PARTITION, {-1}},
    {KERR_UNSUPPORTED_COMPRESSION_TYPE, ERR_LISTED, {KP_API_PRODUCE, KP_API_FETCH, -1}},
    {KERR_OFFSET_NOT_AVAILABLE, ERR_PARTITION, {-1}},
    {KERR_MEMBER_ID_REQUIRED, ERR_GROUP, {-1}},
    {KERR_GROUP_MAX_SIZE_REACHED, ERR_GROUP, {-1}},
    {KERR_FENCED_INSTANCE_ID, ERR_GROUP, {-1}},
    {KERR_INVALID_RECORD, ERR_LISTED, {KP_API_PRODUCE, -1}},
    {KERR_UNSTABLE_OFFSET_COMMIT, ERR_LISTED, {KP_API_OFFSET_FETCH, -1}},
    {KERR_THROTTLING_QUOTA_EXCEEDED, ERR_LISTED, {KP_API_CREATE_TOPICS, KP_API_DELETE_TOPICS,
     KP_API_CREATE_PARTITIONS, -1}},
    {KERR_PRODUCER_FENCED, ERR_LISTED, {KP_API_PRODUCE, KP_API_INIT_PRODUCER_ID, KP_API_ADD_PARTITIONS_TO_TXN,
     KP_API_ADD_OFFSETS_TO_TXN, KP_API_END_TXN, KP_API_TXN_OFFSET_COMMIT, -1}},
    {KERR_TRANSACTIONAL_ID_NOT_FOUND, ERR_LISTED, {KP_API_DESCRIBE_TRANSACTIONS, -1}},
    {KERR_TRANSACTION_ABORTABLE, ERR_LISTED, {KP_API_PRODUCE, KP_API_ADD_PARTITIONS_TO_TXN, KP_API_TXN_OFFSET_COMMIT,
     -1}},
    {KERR_INVALID_REGULAR_EXPRESSION, ERR_LISTED, {KP_API_LIST_TRANSACTIONS, -1}},
    {KERR_UNKNOWN_TOPIC_ID, ERR_PARTITION, {-1}},
    {KERR_INCONSISTENT_TOPIC_ID, ERR_PARTITION, {-1}},
};

static bool listed(const int16_t *apis, int16_t key) {
    for (; *apis >= 0; apis++)
        if (*apis == key) return true;
    return false;
}

/* "OffsetCommit, OffsetFetch, ..." */
static void api_names(const int16_t *apis, char *out, size_t n) {
    size_t l = 0;
    out[0] = '\0';
    for (; *apis >= 0 && l < n; apis++)
        l += (size_t)snprintf(out + l, n - l, "%s%s", l ? ", " : "", kp_api_name(*apis));
}

bool fault_error_fits(int16_t key, int16_t vmin, int16_t vmax, int16_t code, char *why, size_t n) {
    const kp_msg *m = kp_msg_get(key);
    unsigned places = m ? kp_error_places(m->resp, vmin, vmax) : 0;
    if (!places) {
        snprintf(why, n, "%s v%d-%d answers carry no error_code, so an error cannot be injected; use latency_ms, "
                 "close or drop", kp_api_name(key), vmin, vmax);
        return false;
    }
    const err_rule *r = NULL;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0] && !r; i++)
        if (rules[i].code == code) r = &rules[i];
    if (!r) return true; /* ERR_ANY: UNKNOWN_SERVER_ERROR, REQUEST_TIMED_OUT, NETWORK_EXCEPTION, ... */
    char list[512];
    switch (r->kind) {
    case ERR_ANY: return true;
    case ERR_PARTITION:
        if (places & KP_ERRS_TOPIC) return true;
        snprintf(why, n, "%s is a topic or partition error, and %s answers have no error field for a topic or "
                 "partition", kp_err_name(code), kp_api_name(key));
        return false;
    case ERR_GROUP:
    case ERR_COORD: {
        const int16_t *apis = r->kind == ERR_GROUP ? group_apis : coord_apis;
        if (listed(apis, key)) return true;
        api_names(apis, list, sizeof list);
        snprintf(why, n, "%s is a %s error; %s never returns it (those that do: %s)", kp_err_name(code),
                 r->kind == ERR_GROUP ? "consumer group" : "coordinator", kp_api_name(key), list);
        return false;
    }
    case ERR_LISTED:
        if (listed(r->apis, key)) return true;
        api_names(r->apis, list, sizeof list);
        snprintf(why, n, "%s is returned by %s only, not by %s", kp_err_name(code), list, kp_api_name(key));
        return false;
    }
    return true;
}
