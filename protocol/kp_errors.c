#include "kp_errors.h"

#include <stddef.h>
#include <strings.h>

static const struct {
    int code;
    const char *name;
} names[] = {
    {-1, "UNKNOWN_SERVER_ERROR"}, {0, "NONE"}, {1, "OFFSET_OUT_OF_RANGE"}, {2, "CORRUPT_MESSAGE"},
    {3, "UNKNOWN_TOPIC_OR_PARTITION"}, {4, "INVALID_FETCH_SIZE"}, {5, "LEADER_NOT_AVAILABLE"},
    {6, "NOT_LEADER_OR_FOLLOWER"}, {7, "REQUEST_TIMED_OUT"}, {10, "MESSAGE_TOO_LARGE"},
    {12, "OFFSET_METADATA_TOO_LARGE"}, {13, "NETWORK_EXCEPTION"}, {14, "COORDINATOR_LOAD_IN_PROGRESS"},
    {15, "COORDINATOR_NOT_AVAILABLE"}, {16, "NOT_COORDINATOR"}, {17, "INVALID_TOPIC_EXCEPTION"},
    {18, "RECORD_LIST_TOO_LARGE"}, {21, "INVALID_REQUIRED_ACKS"}, {22, "ILLEGAL_GENERATION"},
    {23, "INCONSISTENT_GROUP_PROTOCOL"}, {24, "INVALID_GROUP_ID"}, {25, "UNKNOWN_MEMBER_ID"},
    {26, "INVALID_SESSION_TIMEOUT"}, {27, "REBALANCE_IN_PROGRESS"}, {28, "INVALID_COMMIT_OFFSET_SIZE"},
    {29, "TOPIC_AUTHORIZATION_FAILED"}, {30, "GROUP_AUTHORIZATION_FAILED"}, {31, "CLUSTER_AUTHORIZATION_FAILED"},
    {32, "INVALID_TIMESTAMP"}, {33, "UNSUPPORTED_SASL_MECHANISM"}, {34, "ILLEGAL_SASL_STATE"},
    {35, "UNSUPPORTED_VERSION"}, {36, "TOPIC_ALREADY_EXISTS"}, {37, "INVALID_PARTITIONS"},
    {38, "INVALID_REPLICATION_FACTOR"}, {39, "INVALID_REPLICA_ASSIGNMENT"}, {40, "INVALID_CONFIG"},
    {41, "NOT_CONTROLLER"}, {42, "INVALID_REQUEST"}, {43, "UNSUPPORTED_FOR_MESSAGE_FORMAT"},
    {44, "POLICY_VIOLATION"}, {45, "OUT_OF_ORDER_SEQUENCE_NUMBER"}, {46, "DUPLICATE_SEQUENCE_NUMBER"},
    {47, "INVALID_PRODUCER_EPOCH"}, {48, "INVALID_TXN_STATE"}, {49, "INVALID_PRODUCER_ID_MAPPING"},
    {50, "INVALID_TRANSACTION_TIMEOUT"}, {51, "CONCURRENT_TRANSACTIONS"},
    {53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}, {56, "KAFKA_STORAGE_ERROR"},
    {58, "SASL_AUTHENTICATION_FAILED"}, {59, "UNKNOWN_PRODUCER_ID"}, {68, "NON_EMPTY_GROUP"},
    {69, "GROUP_ID_NOT_FOUND"}, {74, "FENCED_LEADER_EPOCH"}, {75, "UNKNOWN_LEADER_EPOCH"},
    {76, "UNSUPPORTED_COMPRESSION_TYPE"}, {78, "OFFSET_NOT_AVAILABLE"}, {79, "MEMBER_ID_REQUIRED"},
    {81, "GROUP_MAX_SIZE_REACHED"}, {82, "FENCED_INSTANCE_ID"}, {87, "INVALID_RECORD"},
    {88, "UNSTABLE_OFFSET_COMMIT"}, {89, "THROTTLING_QUOTA_EXCEEDED"}, {90, "PRODUCER_FENCED"},
    {100, "UNKNOWN_TOPIC_ID"}, {103, "INCONSISTENT_TOPIC_ID"},
};

const char *kp_err_name(int code) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == code) return names[i].name;
    return "UNKNOWN_ERROR_CODE";
}

bool kp_err_known(int code) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == code) return true;
    return false;
}

bool kp_err_by_name(const char *name, int *code) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(names[i].name, name)) {
            *code = names[i].code;
            return true;
        }
    return false;
}
