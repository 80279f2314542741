/* Registry of message descriptions by API key. */
#include "kp_msgs.h"

#include <string.h>
#include <strings.h>

static const kp_msg *const all[] = {
    &kp_msg_produce,
    &kp_msg_fetch,
    &kp_msg_list_offsets,
    &kp_msg_metadata,
    &kp_msg_offset_commit,
    &kp_msg_offset_fetch,
    &kp_msg_find_coordinator,
    &kp_msg_join_group,
    &kp_msg_heartbeat,
    &kp_msg_leave_group,
    &kp_msg_sync_group,
    &kp_msg_describe_groups,
    &kp_msg_list_groups,
    &kp_msg_sasl_handshake,
    &kp_msg_api_versions,
    &kp_msg_create_topics,
    &kp_msg_delete_topics,
    &kp_msg_delete_records,
    &kp_msg_init_producer_id,
    &kp_msg_add_partitions_to_txn,
    &kp_msg_add_offsets_to_txn,
    &kp_msg_end_txn,
    &kp_msg_txn_offset_commit,
    &kp_msg_offset_for_leader_epoch,
    &kp_msg_describe_configs,
    &kp_msg_alter_configs,
    &kp_msg_describe_log_dirs,
    &kp_msg_sasl_authenticate,
    &kp_msg_create_partitions,
    &kp_msg_delete_groups,
    &kp_msg_incremental_alter_configs,
    &kp_msg_list_partition_reassignments,
    &kp_msg_offset_delete,
    &kp_msg_describe_cluster,
    &kp_msg_describe_transactions,
    &kp_msg_list_transactions,
};

const kp_msg *kp_msg_get(int16_t key) {
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i]->key == key) return all[i];
    return NULL;
}

const char *kp_api_name(int16_t key) {
    const kp_msg *m = kp_msg_get(key);
    return m ? m->name : "Unknown";
}

const kp_msg *kp_msg_by_name(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (strlen(all[i]->name) == len && !strncasecmp(all[i]->name, name, len)) return all[i];
    return NULL;
}
