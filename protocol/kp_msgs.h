/*
 * Every Kafka message mskmock can decode and encode: one header per API of kp_apis.h's list
 * (the preprocessor cannot generate #include lines, so a new API adds its header here too; a
 * handler that uses its structs fails to compile until it does).
 */
#ifndef KP_MSGS_H
#define KP_MSGS_H

#include "msg_produce.h"
#include "msg_fetch.h"
#include "msg_list_offsets.h"
#include "msg_metadata.h"
#include "msg_offset_commit.h"
#include "msg_offset_fetch.h"
#include "msg_find_coordinator.h"
#include "msg_join_group.h"
#include "msg_heartbeat.h"
#include "msg_leave_group.h"
#include "msg_sync_group.h"
#include "msg_describe_groups.h"
#include "msg_list_groups.h"
#include "msg_sasl_handshake.h"
#include "msg_api_versions.h"
#include "msg_create_topics.h"
#include "msg_delete_topics.h"
#include "msg_delete_records.h"
#include "msg_init_producer_id.h"
#include "msg_add_partitions_to_txn.h"
#include "msg_add_offsets_to_txn.h"
#include "msg_end_txn.h"
#include "msg_txn_offset_commit.h"
#include "msg_offset_for_leader_epoch.h"
#include "msg_describe_configs.h"
#include "msg_alter_configs.h"
#include "msg_describe_log_dirs.h"
#include "msg_sasl_authenticate.h"
#include "msg_create_partitions.h"
#include "msg_delete_groups.h"
#include "msg_incremental_alter_configs.h"
#include "msg_list_partition_reassignments.h"
#include "msg_offset_delete.h"
#include "msg_describe_cluster.h"
#include "msg_describe_transactions.h"
#include "msg_list_transactions.h"
#include "msg_consumer_group_heartbeat.h"
#include "msg_consumer_group_describe.h"

#endif
