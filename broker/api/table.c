/*
 * The handler table: the index of everything mskmock serves. ApiVersions
 * advertises exactly these ranges. Minimums stay at 0 where old librdkafka
 * probes exact versions (src/rdkafka_feature.c before 2.11.1:
 * https://github.com/confluentinc/librdkafka/issues/4948, fixed by PR #5130;
 * https://issues.apache.org/jira/browse/KAFKA-18659, why Kafka 4 still advertises
 * Produce from 0); maxima stop where our handlers stop (no Produce 12 /
 * transaction V2, no Metadata 13).
 *
 * The AZ(...) column is IAM authorization: the kafka-cluster action each API needs on each
 * resource type it touches (iam/authz.h). Handlers name the resource, never the action.
 */
#include "api.h"
#include "iam/authz.h"
#include "iam/sasl.h"

#define CLUSTER IAM_RES_CLUSTER
#define TOPIC IAM_RES_TOPIC
#define GROUP IAM_RES_GROUP
#define TXN IAM_RES_TRANSACTIONAL_ID
/* Resource types an API does not list need no action (and a check of one fails closed). */
/* The last column: whether MSK serves the API too, or only the kafka profile does. */
#define EVERY_PROFILE false
#define KAFKA_PROFILE_ONLY true
#define AZ(...) {[CLUSTER] = AUTHZ_NONE, [TOPIC] = AUTHZ_NONE, [GROUP] = AUTHZ_NONE, [TXN] = AUTHZ_NONE, __VA_ARGS__}

static const api_handler table[] = {
    {0, 0, 11, api_produce, AZ([TOPIC] = IAM_WRITE_DATA, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE},
    {1, 0, 17, api_fetch, AZ([TOPIC] = IAM_READ_DATA), EVERY_PROFILE},
    {2, 0, 10, api_list_offsets, AZ([TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE},
    {3, 0, 12, api_metadata, AZ([TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE},
    {8, 0, 9, api_offset_commit, AZ([TOPIC] = IAM_READ_DATA, [GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {9, 0, 9, api_offset_fetch, AZ([TOPIC] = IAM_DESCRIBE_TOPIC, [GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE},
    {10, 0, 6, api_find_coordinator, AZ([GROUP] = IAM_DESCRIBE_GROUP, [TXN] = IAM_DESCRIBE_TRANSACTIONAL_ID), EVERY_PROFILE},
    {11, 0, 9, api_join_group, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {12, 0, 4, api_heartbeat, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {13, 0, 5, api_leave_group, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {14, 0, 5, api_sync_group, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {15, 0, 5, api_describe_groups, AZ([GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE},
    {16, 0, 5, api_list_groups, AZ([GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE},
    {17, 0, 1, api_sasl_handshake, AZ(), EVERY_PROFILE},
    {18, 0, 4, api_api_versions, AZ(), EVERY_PROFILE},
    {19, 0, 7, api_create_topics, AZ([TOPIC] = IAM_CREATE_TOPIC), EVERY_PROFILE},
    {20, 0, 6, api_delete_topics, AZ([TOPIC] = IAM_DELETE_TOPIC), EVERY_PROFILE},
    /* MSK has no action for DeleteRecords; DeleteTopic is its name for Kafka's DELETE TOPIC, which it needs */
    {21, 0, 2, api_delete_records, AZ([TOPIC] = IAM_DELETE_TOPIC), KAFKA_PROFILE_ONLY},
    {22, 0, 5, api_init_producer_id, AZ([CLUSTER] = IAM_WRITE_DATA_IDEMPOTENTLY, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE},
    {23, 0, 4, api_offset_for_leader_epoch, AZ([TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE},
    {24, 0, 5, api_add_partitions_to_txn, AZ([TOPIC] = IAM_WRITE_DATA, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE},
    {25, 0, 4, api_add_offsets_to_txn, AZ([GROUP] = IAM_ALTER_GROUP, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE},
    {26, 0, 4, api_end_txn, AZ([TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE},
    {28, 0, 4, api_txn_offset_commit,
     AZ([TOPIC] = IAM_READ_DATA, [GROUP] = IAM_ALTER_GROUP, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE},
    /* group configs (KIP-848): MSK names no action of their own; its group actions stand for them */
    {32, 0, 4, api_describe_configs,
     AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER_DYNAMIC_CONFIGURATION, [TOPIC] = IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION,
        [GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE},
    {33, 0, 2, api_alter_configs,
     AZ([CLUSTER] = IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION, [TOPIC] = IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION,
        [GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {35, 0, 4, api_describe_log_dirs, AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER), KAFKA_PROFILE_ONLY},
    {36, 0, 2, api_sasl_authenticate, AZ(), EVERY_PROFILE},
    {37, 0, 3, api_create_partitions, AZ([TOPIC] = IAM_ALTER_TOPIC), EVERY_PROFILE},
    {42, 0, 2, api_delete_groups, AZ([GROUP] = IAM_DELETE_GROUP), EVERY_PROFILE},
    {44, 0, 1, api_incremental_alter_configs,
     AZ([CLUSTER] = IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION, [TOPIC] = IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION,
        [GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE},
    {46, 0, 0, api_list_partition_reassignments, AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER), EVERY_PROFILE},
    {47, 0, 0, api_offset_delete, AZ([TOPIC] = IAM_READ_DATA, [GROUP] = IAM_DELETE_GROUP), EVERY_PROFILE},
    {60, 0, 1, api_describe_cluster, AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER), EVERY_PROFILE},
    {65, 0, 0, api_describe_transactions, AZ([TOPIC] = IAM_DESCRIBE_TOPIC, [TXN] = IAM_DESCRIBE_TRANSACTIONAL_ID),
     EVERY_PROFILE},
    {66, 0, 1, api_list_transactions, AZ([TXN] = IAM_DESCRIBE_TRANSACTIONAL_ID), EVERY_PROFILE},
};

const api_handler *api_lookup(int16_t key) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].key == key) return &table[i];
    return NULL;
}

size_t api_count(void) { return sizeof table / sizeof table[0]; }
const api_handler *api_at(size_t i) { return &table[i]; }

void api_range(const srv *s, const api_handler *h, int16_t *vmin, int16_t *vmax) {
    const config *cfg = s->cfg;
    *vmin = h->vmin;
    *vmax = h->vmax;
    if (h->kafka_profile_only && cfg->profile != PROFILE_KAFKA) {
        *vmax = -1;
        return;
    }
    /* MSK Serverless offers SaslHandshake v1 only (raw v0 tokens are kafka-python's old way) */
    if (h->key == 17 && !cfg->sasl_handshake_v0_enable) *vmin = 1;
    /* a floor above the table's maximum (or a ceiling below its minimum) leaves nothing served */
    if (h->key >= 0 && h->key < CFG_API_KEYS) {
        if (cfg->api_floor[h->key] > *vmin) *vmin = cfg->api_floor[h->key];
        if (cfg->api_ceiling[h->key] >= 0 && cfg->api_ceiling[h->key] < *vmax) *vmax = cfg->api_ceiling[h->key];
    }
}
