/*
 * What Apache Kafka of each release (kafka.version) serves, as one table: per API key the version
 * range a broker of that release answers with its default configuration, and per feature the
 * range it supports and the level a new cluster finalizes. api_range narrows the handler table's
 * ranges to a row here (api.versions.min/max still win), and ApiVersions v3+ reports the
 * features. The table only narrows: an API is advertised only when mskmock has its handler, and
 * a feature level only up to what mskmock implements (the caps below).
 *
 * Sources, per release (clients/src/main/resources/common/message/<Name>Request.json, "validVersions",
 * at each tag of https://github.com/apache/kafka):
 *  - 3.6.0, 3.7.0, 3.8.0 and the 3.9 branch (3.9.0): read from the specs themselves. A version
 *    behind "latestVersionUnstable": true is not enabled by default (OffsetCommit v9 and
 *    ConsumerGroupHeartbeat in 3.6.0); "deprecatedVersions" (3.7+) only warns until 4.0.
 *  - 4.0, 4.1, 4.2: the removals of KIP-896 ("Versions 0-3 were removed in Apache Kafka 4.0,
 *    Version 4 is the new baseline" in FetchRequest.json @ 4.0.0, and likewise ListOffsets,
 *    OffsetCommit, OffsetFetch, JoinGroup, CreateTopics, DeleteTopics, OffsetForLeaderEpoch,
 *    DescribeConfigs, DescribeLogDirs; Metadata, FindCoordinator, SaslHandshake and DeleteGroups
 *    keep v0) and each release's maxima, as franz-go's pkg/kversion/kversion.go (b40, b41, b42:
 *    https://github.com/twmb/franz-go) lists them, each with the Kafka commit and KIP that bumped
 *    it, and which agrees with the specs above for 3.6-3.9. JoinGroup v0-1 came back in 4.1
 *    (KAFKA-19444). Produce v0-2 were removed in 4.0 but are still advertised (KAFKA-18659:
 *    librdkafka before 2.11.1 sends compressed batches only to a broker listing Produce v0);
 *    api_advertised_range says so.
 *  - ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848) are listed from 4.0, where the
 *    consumer protocol is GA and on by default. 3.7-3.9 advertise v0 of them but answer
 *    UNSUPPORTED_VERSION unless group.coordinator.rebalance.protocols names "consumer"
 *    (KafkaApis.handleConsumerGroupHeartbeat @ 3.9), so their columns here have none.
 *  - Features: MetadataVersion.java (the release's LATEST_PRODUCTION level, from
 *    MINIMUM_KRAFT_VERSION, 1, until 3.9; from MINIMUM_VERSION, 3.3-IV3 = 7, since 4.0),
 *    KRaftVersion.java (kraft.version 0-1 from 3.9; a static quorum finalizes 0),
 *    TransactionVersion.java and GroupVersion.java (production from 4.0: a new 4.x cluster
 *    finalizes transaction.version 2 and group.version 1), and BrokerFeatures.scala's
 *    defaultSupportedFeatures (a feature whose highest level is 0 is not listed).
 *
 * A row for a key mskmock does not serve is harmless (api_lookup decides); every key it serves
 * needs a row (tests/unit/api/test_kafka_versions.c), or that API would not follow kafka.version.
 */
#include "api.h"
#include "txn/txn.h"

typedef struct kv_range {
    int8_t lo, hi; /* hi < lo: that release does not serve the API */
} kv_range;

typedef struct kv_row {
    int16_t key;
    kv_range v[CFG_KAFKA_RELEASES];
} kv_row;

#define R(lo, hi) {lo, hi}
#define NO {0, -1}

static const kv_row rows[] = {
    /* key                               3.6      3.7       3.8       3.9       4.0       4.1       4.2 */
    {KP_API_PRODUCE,                    {R(0, 9), R(0, 10), R(0, 11), R(0, 11), R(3, 12), R(3, 13), R(3, 13)}},
    {KP_API_FETCH,                      {R(0, 15), R(0, 16), R(0, 16), R(0, 17), R(4, 17), R(4, 18), R(4, 18)}},
    {KP_API_LIST_OFFSETS,               {R(0, 8), R(0, 8), R(0, 8), R(0, 9), R(1, 10), R(1, 10), R(1, 11)}},
    {KP_API_METADATA,                   {R(0, 12), R(0, 12), R(0, 12), R(0, 12), R(0, 13), R(0, 13), R(0, 13)}},
    {KP_API_OFFSET_COMMIT,              {R(0, 8), R(0, 9), R(0, 9), R(0, 9), R(2, 9), R(2, 9), R(2, 10)}},
    {KP_API_OFFSET_FETCH,               {R(0, 8), R(0, 9), R(0, 9), R(0, 9), R(1, 9), R(1, 9), R(1, 10)}},
    {KP_API_FIND_COORDINATOR,           {R(0, 4), R(0, 4), R(0, 5), R(0, 6), R(0, 6), R(0, 6), R(0, 6)}},
    {KP_API_JOIN_GROUP,                 {R(0, 9), R(0, 9), R(0, 9), R(0, 9), R(2, 9), R(0, 9), R(0, 9)}},
    {KP_API_HEARTBEAT,                  {R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(0, 4)}},
    {KP_API_LEAVE_GROUP,                {R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_SYNC_GROUP,                 {R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_DESCRIBE_GROUPS,            {R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 6), R(0, 6), R(0, 6)}},
    {KP_API_LIST_GROUPS,                {R(0, 4), R(0, 4), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_SASL_HANDSHAKE,             {R(0, 1), R(0, 1), R(0, 1), R(0, 1), R(0, 1), R(0, 1), R(0, 1)}},
    {KP_API_API_VERSIONS,               {R(0, 3), R(0, 3), R(0, 3), R(0, 4), R(0, 4), R(0, 4), R(0, 4)}},
    {KP_API_CREATE_TOPICS,              {R(0, 7), R(0, 7), R(0, 7), R(0, 7), R(2, 7), R(2, 7), R(2, 7)}},
    {KP_API_DELETE_TOPICS,              {R(0, 6), R(0, 6), R(0, 6), R(0, 6), R(1, 6), R(1, 6), R(1, 6)}},
    {KP_API_DELETE_RECORDS,             {R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2)}},
    {KP_API_INIT_PRODUCER_ID,           {R(0, 4), R(0, 4), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_OFFSET_FOR_LEADER_EPOCH,    {R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(2, 4), R(2, 4), R(2, 4)}},
    {KP_API_ADD_PARTITIONS_TO_TXN,      {R(0, 4), R(0, 4), R(0, 5), R(0, 5), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_ADD_OFFSETS_TO_TXN,         {R(0, 3), R(0, 3), R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(0, 4)}},
    {KP_API_END_TXN,                    {R(0, 3), R(0, 3), R(0, 4), R(0, 4), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_TXN_OFFSET_COMMIT,          {R(0, 3), R(0, 3), R(0, 4), R(0, 4), R(0, 5), R(0, 5), R(0, 5)}},
    {KP_API_DESCRIBE_CONFIGS,           {R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(1, 4), R(1, 4), R(1, 4)}},
    {KP_API_ALTER_CONFIGS,              {R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2)}},
    {KP_API_DESCRIBE_LOG_DIRS,          {R(0, 4), R(0, 4), R(0, 4), R(0, 4), R(1, 4), R(1, 4), R(1, 4)}},
    {KP_API_SASL_AUTHENTICATE,          {R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2)}},
    {KP_API_CREATE_PARTITIONS,          {R(0, 3), R(0, 3), R(0, 3), R(0, 3), R(0, 3), R(0, 3), R(0, 3)}},
    {KP_API_DELETE_GROUPS,              {R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2), R(0, 2)}},
    {KP_API_INCREMENTAL_ALTER_CONFIGS,  {R(0, 1), R(0, 1), R(0, 1), R(0, 1), R(0, 1), R(0, 1), R(0, 1)}},
    {KP_API_LIST_PARTITION_REASSIGNMENTS, {R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0)}},
    {KP_API_OFFSET_DELETE,              {R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0)}},
    {KP_API_DESCRIBE_CLUSTER,           {R(0, 0), R(0, 1), R(0, 1), R(0, 1), R(0, 2), R(0, 2), R(0, 2)}},
    {KP_API_DESCRIBE_TRANSACTIONS,      {R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0), R(0, 0)}},
    {KP_API_LIST_TRANSACTIONS,          {R(0, 0), R(0, 0), R(0, 1), R(0, 1), R(0, 1), R(0, 2), R(0, 2)}},
    /* KIP-848, served while group.coordinator.rebalance.protocols names consumer (api_range) */
    {KP_API_CONSUMER_GROUP_HEARTBEAT,   {NO, NO, NO, NO, R(0, 1), R(0, 1), R(0, 1)}},
    {KP_API_CONSUMER_GROUP_DESCRIBE,    {NO, NO, NO, NO, R(0, 1), R(0, 1), R(0, 1)}},
};

/*
 * Feature levels (ApiVersions v3+). lo/hi: the supported range; fin: the level a new cluster of
 * that release finalizes (0: none, and not listed). The cap is the highest level mskmock
 * implements or is told to: transaction.version up to the transaction.version key (2: KIP-890
 * part 2, broker/txn/txn_v2.c; 1 differs from 0 only in the coordinator's own log format,
 * nothing a client sees); group.version 1 means the consumer group protocol (KIP-848), claimed
 * only while ConsumerGroupHeartbeat is served (feature_cap).
 */
typedef struct kv_level {
    int8_t lo, hi, fin; /* hi < 0: the release has no such feature */
} kv_level;

#define L(lo, hi, fin) {lo, hi, fin}
#define NONE {0, -1, 0}
#define CAP_GROUP_PROTOCOL -1 /* group.version: 1 if ConsumerGroupHeartbeat is served, else 0 */
#define CAP_TRANSACTION_VERSION -2 /* transaction.version: the transaction.version key */

static const struct kv_feature {
    const char *name;
    int8_t cap;
    kv_level v[CFG_KAFKA_RELEASES];
} features[] = {
    /* name                   cap                  3.6           3.7           3.8           3.9           4.0           4.1           4.2 */
    {"metadata.version", INT8_MAX, {L(1, 14, 14), L(1, 19, 19), L(1, 20, 20), L(1, 21, 21), L(7, 25, 25), L(7, 27, 27), L(7, 29, 29)}},
    {"kraft.version", 1, {NONE, NONE, NONE, L(0, 1, 0), L(0, 1, 0), L(0, 1, 0), L(0, 1, 0)}},
    {"group.version", CAP_GROUP_PROTOCOL, {NONE, NONE, NONE, NONE, L(0, 1, 1), L(0, 1, 1), L(0, 1, 1)}},
    {"transaction.version", CAP_TRANSACTION_VERSION, {NONE, NONE, NONE, NONE, L(0, 2, 2), L(0, 2, 2), L(0, 2, 2)}},
};
#define N_FEATURES (sizeof features / sizeof features[0])

static const kv_range *row_of(int64_t version, int16_t key) {
    if (version <= KAFKA_VERSION_NONE || version > CFG_KAFKA_RELEASES) return NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].key == key) return &rows[i].v[version - 1];
    return NULL;
}

bool api_kafka_range(int64_t version, int16_t key, int16_t *lo, int16_t *hi) {
    const kv_range *r = row_of(version, key);
    if (!r) return false;
    *lo = r->lo;
    *hi = r->hi;
    return true;
}

/* KAFKA-18659: Kafka 4.x lists Produce from v0 in ApiVersions and refuses v0-2 (ApiKeys.java's
   PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION), so that librdkafka before 2.11.1 keeps compressing */
void api_advertised_range(const srv *s, const api_handler *h, int16_t *vmin, int16_t *vmax) {
    api_range(s, h, vmin, vmax);
    const config *cfg = s->cfg;
    if (h->key == KP_API_PRODUCE && cfg->kafka_version >= KAFKA_4_0 && cfg->api_floor[h->key] < 0 && *vmax >= *vmin)
        *vmin = h->vmin;
}

static int8_t feature_cap(const srv *s, const struct kv_feature *f) {
    if (f->cap == CAP_TRANSACTION_VERSION) return (int8_t)s->cfg->transaction_version;
    if (f->cap != CAP_GROUP_PROTOCOL) return f->cap;
    const api_handler *h = api_lookup(KP_API_CONSUMER_GROUP_HEARTBEAT);
    int16_t lo = 0, hi = -1;
    if (h) api_range(s, h, &lo, &hi);
    return hi >= lo ? 1 : 0;
}

/*
 * The transaction.version finalized: kafka.version's release's level up to the transaction.version
 * key; without a release (serverless), the key's level when it asks for transactions V2 (2), else
 * none listed, as before (MSK Serverless is not known to list features).
 */
static int8_t transaction_version(const srv *s) {
    int64_t v = s->cfg->kafka_version;
    if (v <= KAFKA_VERSION_NONE || v > CFG_KAFKA_RELEASES) return s->cfg->transaction_version >= 2 ? 2 : 0;
    for (size_t i = 0; i < N_FEATURES; i++)
        if (features[i].cap == CAP_TRANSACTION_VERSION) {
            int8_t fin = features[i].v[v - 1].fin, cap = feature_cap(s, &features[i]);
            return fin < cap ? fin : cap;
        }
    return 0;
}

/*
 * Transactions V2 (KIP-890 part 2): Kafka's producer uses it when a broker finalizes
 * transaction.version 2 (TransactionManager.maybeUpdateTransactionV2Enabled), then sends Produce
 * v12, EndTxn v5 and TxnOffsetCommit v5. Kafka 4.x advertises those whatever is finalized;
 * mskmock caps them at the last V1 versions unless V2 is finalized, so a client that reads the
 * ranges rather than the feature stays on V1 too. The coordinator keys its behaviour on each
 * request's version (broker/txn), as Kafka's does.
 */
void api_txn_version_cap(const srv *s, int16_t key, int16_t *vmax) {
    if (transaction_version(s) >= 2) return;
    /* the last versions before transactions V2 (ProduceRequest.json, EndTxnRequest.json, TxnOffsetCommitRequest.json) */
    int16_t v1_max = key == KP_API_PRODUCE ? 11 : key == KP_API_END_TXN || key == KP_API_TXN_OFFSET_COMMIT ? 4 : -1;
    if (v1_max >= 0 && *vmax > v1_max) *vmax = v1_max;
}

/*
 * Kafka's finalized-features epoch is the metadata offset of the last feature change; here the
 * transaction coordinator's epoch, which rises at every start, so a client reading the features
 * after a restart with other settings takes them. It must not stay -1: the Java producer takes
 * finalized features only from an epoch above the -1 it starts with, and would never use V2.
 */
static void features_epoch(srv *s, kp_api_versions_response *resp) {
    if (resp->finalized_features.n > 0) resp->finalized_features_epoch = txn_coordinator_epoch(s);
}

void api_fill_features(srv *s, req *r, kp_api_versions_response *resp) {
    int64_t v = s->cfg->kafka_version;
    if (r->hdr.api_version < 3) return;
    if ((v <= KAFKA_VERSION_NONE || v > CFG_KAFKA_RELEASES) && transaction_version(s) >= 2) {
        /* serverless with transaction.version=2: that feature alone (its lowest level is 0: v4+ only, KAFKA-17492) */
        REQ_ARR(r, resp->supported_features, r->hdr.api_version >= 4 ? 1 : 0);
        if (r->hdr.api_version >= 4)
            resp->supported_features.v[0] = (kp_api_versions_supported_feature_key){kp_str_c("transaction.version"), 0, 2};
        REQ_ARR(r, resp->finalized_features, 1);
        resp->finalized_features.v[0] = (kp_api_versions_finalized_feature_key){kp_str_c("transaction.version"), 2, 2};
        features_epoch(s, resp);
        return;
    }
    if (v <= KAFKA_VERSION_NONE || v > CFG_KAFKA_RELEASES) return;
    REQ_ARR(r, resp->supported_features, N_FEATURES);
    REQ_ARR(r, resp->finalized_features, N_FEATURES);
    int32_t ns = 0, nf = 0;
    for (size_t i = 0; i < N_FEATURES; i++) {
        const kv_level *l = &features[i].v[v - 1];
        int8_t cap = feature_cap(s, &features[i]);
        int8_t hi = l->hi < cap ? l->hi : cap, fin = l->fin < cap ? l->fin : cap;
        /* Kafka lists no feature whose highest level is 0, and to ApiVersions v3 none whose lowest
           is (KAFKA-17492: older clients fail to parse it; ApiVersionsResponse.java @ 3.9) */
        if (hi > 0 && hi >= l->lo && (l->lo > 0 || r->hdr.api_version >= 4))
            resp->supported_features.v[ns++] =
                (kp_api_versions_supported_feature_key){kp_str_c(features[i].name), l->lo, hi};
        if (fin > 0)
            resp->finalized_features.v[nf++] = (kp_api_versions_finalized_feature_key){kp_str_c(features[i].name), fin, fin};
    }
    resp->supported_features.n = ns;
    resp->finalized_features.n = nf;
    features_epoch(s, resp);
}
