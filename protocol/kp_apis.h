/*
 * The one list of the Kafka APIs mskmock can decode and encode: key, enumerator, the name
 * Apache Kafka gives it (clients/src/main/java/org/apache/kafka/common/protocol/ApiKeys.java,
 * whose names log lines, metrics, fault rules and api.versions.min/max use), and the file
 * name of its description (protocol/msg_<file>.c, which defines kp_msg_<file>).
 *
 * Everything keyed by API is generated from it: the kp_api_key enum, the names, the message
 * registry (kp_msgs.c) and the handler prototypes (broker/api/api.h). Adding an API is one line
 * here, its msg_<file>.c/.h, and in broker/ its handler file and its row of the handler table
 * (broker/api/README.md). Keys an API is not listed under are unknown to mskmock ("Unknown"
 * in log lines); the order is the keys' order.
 *
 * X(key, ENUM, Name, file)
 */
#ifndef KP_APIS_H
#define KP_APIS_H

#define KP_APIS(X)                                                           \
    X(0, PRODUCE, Produce, produce)                                          \
    X(1, FETCH, Fetch, fetch)                                                \
    X(2, LIST_OFFSETS, ListOffsets, list_offsets)                            \
    X(3, METADATA, Metadata, metadata)                                       \
    X(8, OFFSET_COMMIT, OffsetCommit, offset_commit)                         \
    X(9, OFFSET_FETCH, OffsetFetch, offset_fetch)                            \
    X(10, FIND_COORDINATOR, FindCoordinator, find_coordinator)               \
    X(11, JOIN_GROUP, JoinGroup, join_group)                                 \
    X(12, HEARTBEAT, Heartbeat, heartbeat)                                   \
    X(13, LEAVE_GROUP, LeaveGroup, leave_group)                              \
    X(14, SYNC_GROUP, SyncGroup, sync_group)                                 \
    X(15, DESCRIBE_GROUPS, DescribeGroups, describe_groups)                  \
    X(16, LIST_GROUPS, ListGroups, list_groups)                              \
    X(17, SASL_HANDSHAKE, SaslHandshake, sasl_handshake)                     \
    X(18, API_VERSIONS, ApiVersions, api_versions)                           \
    X(19, CREATE_TOPICS, CreateTopics, create_topics)                        \
    X(20, DELETE_TOPICS, DeleteTopics, delete_topics)                        \
    X(21, DELETE_RECORDS, DeleteRecords, delete_records)                     \
    X(22, INIT_PRODUCER_ID, InitProducerId, init_producer_id)                \
    X(23, OFFSET_FOR_LEADER_EPOCH, OffsetForLeaderEpoch, offset_for_leader_epoch) \
    X(24, ADD_PARTITIONS_TO_TXN, AddPartitionsToTxn, add_partitions_to_txn)  \
    X(25, ADD_OFFSETS_TO_TXN, AddOffsetsToTxn, add_offsets_to_txn)           \
    X(26, END_TXN, EndTxn, end_txn)                                          \
    X(28, TXN_OFFSET_COMMIT, TxnOffsetCommit, txn_offset_commit)             \
    X(32, DESCRIBE_CONFIGS, DescribeConfigs, describe_configs)               \
    X(33, ALTER_CONFIGS, AlterConfigs, alter_configs)                        \
    X(35, DESCRIBE_LOG_DIRS, DescribeLogDirs, describe_log_dirs)             \
    X(36, SASL_AUTHENTICATE, SaslAuthenticate, sasl_authenticate)            \
    X(37, CREATE_PARTITIONS, CreatePartitions, create_partitions)            \
    X(42, DELETE_GROUPS, DeleteGroups, delete_groups)                        \
    X(44, INCREMENTAL_ALTER_CONFIGS, IncrementalAlterConfigs, incremental_alter_configs) \
    X(46, LIST_PARTITION_REASSIGNMENTS, ListPartitionReassignments, list_partition_reassignments) \
    X(47, OFFSET_DELETE, OffsetDelete, offset_delete)                        \
    X(60, DESCRIBE_CLUSTER, DescribeCluster, describe_cluster)               \
    X(65, DESCRIBE_TRANSACTIONS, DescribeTransactions, describe_transactions) \
    X(66, LIST_TRANSACTIONS, ListTransactions, list_transactions)           \
    X(68, CONSUMER_GROUP_HEARTBEAT, ConsumerGroupHeartbeat, consumer_group_heartbeat) \
    X(69, CONSUMER_GROUP_DESCRIBE, ConsumerGroupDescribe, consumer_group_describe)

#define KP_API_ENUMERATOR_(key, E, Name, file) KP_API_##E = key,
typedef enum kp_api_key { KP_APIS(KP_API_ENUMERATOR_) } kp_api_key;
#undef KP_API_ENUMERATOR_

/*
 * One more than the largest key listed: the size of an array indexed by key. (The size of a
 * union of char[key + 1], one member per API, is the largest of them.)
 */
#define KP_API_LIMIT_MEMBER_(key, E, Name, file) char m_##E[(key) + 1];
union kp_api_limit_ { KP_APIS(KP_API_LIMIT_MEMBER_) };
#undef KP_API_LIMIT_MEMBER_
#define KP_API_LIMIT ((int)sizeof(union kp_api_limit_))

/* Kafka's name of each listed API by key, "" for keys not listed. */
#define KP_API_NAME_MAX 32
extern const char kp_api_names[KP_API_LIMIT][KP_API_NAME_MAX];

/*
 * The key and name a message description (protocol/msg_<file>.c) starts with, taken from the
 * list: `const kp_msg kp_msg_produce = {KP_MSG_ID(PRODUCE), 0, 11, ...}`.
 */
#define KP_MSG_ID(E) KP_API_##E, kp_api_names[KP_API_##E]

#endif
