/* Every Kafka message mskmock can decode and encode. */
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
#include "msg_offset_for_leader_epoch.h"
#include "msg_describe_configs.h"
#include "msg_alter_configs.h"
#include "msg_sasl_authenticate.h"
#include "msg_create_partitions.h"
#include "msg_delete_groups.h"
#include "msg_incremental_alter_configs.h"
#include "msg_offset_delete.h"
#include "msg_describe_cluster.h"

#endif
