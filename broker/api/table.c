/*
 * The handler table: the index of everything mskmock serves. ApiVersions
 * advertises exactly these ranges. Minimums stay at 0 where old librdkafka
 * probes exact versions (src/rdkafka_feature.c before 2.11.1:
 * https://github.com/confluentinc/librdkafka/issues/4948, fixed by PR #5130;
 * https://issues.apache.org/jira/browse/KAFKA-18659, why Kafka 4 still advertises
 * Produce from 0); maxima stop where our handlers stop (no Metadata 13). Produce 12,
 * EndTxn 5 and TxnOffsetCommit 5 are transaction version 2's: api_range caps them at 11, 4
 * and 4 unless transactions V2 is finalized (broker/api/kafka_versions_table.c).
 *
 * The AZ(...) column is IAM authorization: the kafka-cluster action each API needs on each
 * resource type it touches (iam/authz.h). Handlers name the resource, never the action.
 *
 * kafka.version narrows these ranges to what Apache Kafka of that release serves
 * (kafka_versions_table.c), as api.versions.min/max do, which win over it per API.
 *
 * The table is indexed by the API's key (kp_api_key), whose list is protocol/kp_apis.h. It
 * cannot be generated from that list: protocol/ is pure and knows nothing of handlers, IAM
 * actions or profiles, so a served API is one line there and one row here. A key listed there
 * without a row here would be decoded but not served;
 * tests/unit/api/test_api_table.c checks that every listed API has its row, and that each
 * row's range is the one its handler's opening comment and the README state.
 */
#include "api.h"
#include "iam/authz.h"
#include "group/consumer.h"
#include "iam/sasl.h"

#define CLUSTER IAM_RES_CLUSTER
#define TOPIC IAM_RES_TOPIC
#define GROUP IAM_RES_GROUP
#define TXN IAM_RES_TRANSACTIONAL_ID
/* Resource types an API does not list need no action (and a check of one fails closed). */
/* The last column: whether MSK serves the API too, or only the kafka profile does. */
#define EVERY_PROFILE false
#define KAFKA_PROFILE_ONLY true
/* ROW(ENUM, vmin, vmax, handler, IAM actions, profiles) */
#define ROW(E, lo, hi, fn, az, profile) [KP_API_##E] = {KP_API_##E, lo, hi, fn, az, profile}
#define AZ(...) {[CLUSTER] = AUTHZ_NONE, [TOPIC] = AUTHZ_NONE, [GROUP] = AUTHZ_NONE, [TXN] = AUTHZ_NONE, __VA_ARGS__}

static const api_handler table[KP_API_LIMIT] = {
    ROW(PRODUCE, 0, 12, api_produce, AZ([TOPIC] = IAM_WRITE_DATA, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(FETCH, 0, 17, api_fetch, AZ([TOPIC] = IAM_READ_DATA), EVERY_PROFILE),
    ROW(LIST_OFFSETS, 0, 10, api_list_offsets, AZ([TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE),
    ROW(METADATA, 0, 12, api_metadata, AZ([TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE),
    ROW(OFFSET_COMMIT, 0, 9, api_offset_commit, AZ([TOPIC] = IAM_READ_DATA, [GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(OFFSET_FETCH, 0, 9, api_offset_fetch,
        AZ([TOPIC] = IAM_DESCRIBE_TOPIC, [GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE),
    ROW(FIND_COORDINATOR, 0, 6, api_find_coordinator,
        AZ([GROUP] = IAM_DESCRIBE_GROUP, [TXN] = IAM_DESCRIBE_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(JOIN_GROUP, 0, 9, api_join_group, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(HEARTBEAT, 0, 4, api_heartbeat, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(LEAVE_GROUP, 0, 5, api_leave_group, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(SYNC_GROUP, 0, 5, api_sync_group, AZ([GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(DESCRIBE_GROUPS, 0, 5, api_describe_groups, AZ([GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE),
    ROW(LIST_GROUPS, 0, 5, api_list_groups, AZ([GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE),
    ROW(SASL_HANDSHAKE, 0, 1, api_sasl_handshake, AZ(), EVERY_PROFILE),
    ROW(API_VERSIONS, 0, 4, api_api_versions, AZ(), EVERY_PROFILE),
    ROW(CREATE_TOPICS, 0, 7, api_create_topics, AZ([TOPIC] = IAM_CREATE_TOPIC), EVERY_PROFILE),
    ROW(DELETE_TOPICS, 0, 6, api_delete_topics, AZ([TOPIC] = IAM_DELETE_TOPIC), EVERY_PROFILE),
    /* MSK has no action for DeleteRecords; DeleteTopic is its name for Kafka's DELETE TOPIC, which it needs */
    ROW(DELETE_RECORDS, 0, 2, api_delete_records, AZ([TOPIC] = IAM_DELETE_TOPIC), KAFKA_PROFILE_ONLY),
    ROW(INIT_PRODUCER_ID, 0, 5, api_init_producer_id,
        AZ([CLUSTER] = IAM_WRITE_DATA_IDEMPOTENTLY, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(OFFSET_FOR_LEADER_EPOCH, 0, 4, api_offset_for_leader_epoch, AZ([TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE),
    ROW(ADD_PARTITIONS_TO_TXN, 0, 5, api_add_partitions_to_txn,
        AZ([TOPIC] = IAM_WRITE_DATA, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(ADD_OFFSETS_TO_TXN, 0, 4, api_add_offsets_to_txn,
        AZ([GROUP] = IAM_ALTER_GROUP, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(END_TXN, 0, 5, api_end_txn, AZ([TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(TXN_OFFSET_COMMIT, 0, 5, api_txn_offset_commit,
        AZ([TOPIC] = IAM_READ_DATA, [GROUP] = IAM_ALTER_GROUP, [TXN] = IAM_ALTER_TRANSACTIONAL_ID), EVERY_PROFILE),
    /* group configs (KIP-848): MSK names no action of their own; its group actions stand for them */
    ROW(DESCRIBE_CONFIGS, 0, 4, api_describe_configs,
        AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER_DYNAMIC_CONFIGURATION, [TOPIC] = IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION,
           [GROUP] = IAM_DESCRIBE_GROUP), EVERY_PROFILE),
    ROW(ALTER_CONFIGS, 0, 2, api_alter_configs,
        AZ([CLUSTER] = IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION, [TOPIC] = IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION,
           [GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(DESCRIBE_LOG_DIRS, 0, 4, api_describe_log_dirs, AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER), KAFKA_PROFILE_ONLY),
    ROW(SASL_AUTHENTICATE, 0, 2, api_sasl_authenticate, AZ(), EVERY_PROFILE),
    ROW(CREATE_PARTITIONS, 0, 3, api_create_partitions, AZ([TOPIC] = IAM_ALTER_TOPIC), EVERY_PROFILE),
    ROW(DELETE_GROUPS, 0, 2, api_delete_groups, AZ([GROUP] = IAM_DELETE_GROUP), EVERY_PROFILE),
    ROW(INCREMENTAL_ALTER_CONFIGS, 0, 1, api_incremental_alter_configs,
        AZ([CLUSTER] = IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION, [TOPIC] = IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION,
           [GROUP] = IAM_ALTER_GROUP), EVERY_PROFILE),
    ROW(LIST_PARTITION_REASSIGNMENTS, 0, 0, api_list_partition_reassignments,
        AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER), EVERY_PROFILE),
    ROW(OFFSET_DELETE, 0, 0, api_offset_delete, AZ([TOPIC] = IAM_READ_DATA, [GROUP] = IAM_DELETE_GROUP), EVERY_PROFILE),
    ROW(DESCRIBE_CLUSTER, 0, 1, api_describe_cluster, AZ([CLUSTER] = IAM_DESCRIBE_CLUSTER), EVERY_PROFILE),
    ROW(DESCRIBE_TRANSACTIONS, 0, 0, api_describe_transactions,
        AZ([TOPIC] = IAM_DESCRIBE_TOPIC, [TXN] = IAM_DESCRIBE_TRANSACTIONAL_ID), EVERY_PROFILE),
    ROW(LIST_TRANSACTIONS, 0, 1, api_list_transactions, AZ([TXN] = IAM_DESCRIBE_TRANSACTIONAL_ID), EVERY_PROFILE),
    /* KIP-848: as their classic counterparts (Heartbeat, DescribeGroups), and the subscribed topics described */
    ROW(CONSUMER_GROUP_HEARTBEAT, 0, 1, api_consumer_group_heartbeat,
        AZ([GROUP] = IAM_ALTER_GROUP, [TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE),
    ROW(CONSUMER_GROUP_DESCRIBE, 0, 1, api_consumer_group_describe,
        AZ([GROUP] = IAM_DESCRIBE_GROUP, [TOPIC] = IAM_DESCRIBE_TOPIC), EVERY_PROFILE),
};

const api_handler *api_lookup(int16_t key) {
    return key >= 0 && key < KP_API_LIMIT && table[key].fn ? &table[key] : NULL;
}

void api_range(const srv *s, const api_handler *h, int16_t *vmin, int16_t *vmax) {
    const config *cfg = s->cfg;
    *vmin = h->vmin;
    *vmax = h->vmax;
    if (h->kafka_profile_only && cfg->profile != PROFILE_KAFKA) {
        *vmax = -1;
        return;
    }
    /* KIP-848's APIs are served where group.coordinator.rebalance.protocols names consumer */
    if ((h->key == KP_API_CONSUMER_GROUP_HEARTBEAT || h->key == KP_API_CONSUMER_GROUP_DESCRIBE) &&
        !cg_enabled(s)) {
        *vmax = -1;
        return;
    }
    /* MSK Serverless offers SaslHandshake v1 only (raw v0 tokens are kafka-python's old way) */
    if (h->key == KP_API_SASL_HANDSHAKE && !cfg->sasl_handshake_v0_enable) *vmin = 1;
    /* kafka.version's range (kafka_versions_table.c), each bound of it unless api.versions.min/max names the API */
    int16_t floor = -1, ceiling = -1, klo, khi;
    if (h->key >= 0 && h->key < CFG_API_KEYS) floor = cfg->api_floor[h->key], ceiling = cfg->api_ceiling[h->key];
    if (api_kafka_range(cfg->kafka_version, h->key, &klo, &khi)) {
        if (floor < 0) floor = klo;
        if (ceiling < 0) ceiling = khi >= klo ? khi : -2; /* not served by that release: nothing */
    }
    /* Produce 12, EndTxn 5, TxnOffsetCommit 5 only with transactions V2 finalized */
    api_txn_version_cap(s, h->key, vmax);
    /* a floor above the table's maximum (or a ceiling below its minimum) leaves nothing served */
    if (floor > *vmin) *vmin = floor;
    if (ceiling == -2) *vmax = -1;
    if (ceiling >= 0 && ceiling < *vmax) *vmax = ceiling;
}

bool api_bound_by_kafka_version(const srv *s, const api_handler *h, bool floor) {
    const config *cfg = s->cfg;
    int16_t klo, khi;
    if (h->key < 0 || h->key >= CFG_API_KEYS || !api_kafka_range(cfg->kafka_version, h->key, &klo, &khi)) return false;
    return floor ? cfg->api_floor[h->key] < 0 && klo > h->vmin : cfg->api_ceiling[h->key] < 0 && khi < h->vmax;
}
