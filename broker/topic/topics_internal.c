/*
 * Kafka's internal topics, as clients see them. Apache Kafka (and so MSK Provisioned) lists
 * __consumer_offsets in Metadata with is_internal set, and __transaction_state once a
 * transactional producer has looked for its coordinator; clients rely on it (franz-go's regex
 * consumer skips internal topics; its test suite waits for __consumer_offsets to appear). Here
 * they are ordinary topic rows with Kafka's partition counts and configs, but read-only and
 * empty: offsets and transactions live in SQLite, not in records. Producing to them or deleting
 * their records is refused as Kafka refuses it (ReplicaManager: "Cannot append to internal
 * topic"), with INVALID_TOPIC_EXCEPTION.
 */
#include <string.h>

#include "log.h"
#include "topic.h"

bool topic_is_internal(const char *name, size_t len) {
    return (len == strlen(TOPIC_OFFSETS) && memcmp(name, TOPIC_OFFSETS, len) == 0) ||
           (len == strlen(TOPIC_TXN_STATE) && memcmp(name, TOPIC_TXN_STATE, len) == 0);
}

int topic_internal_ensure(srv *s, const char *name) {
    bool offsets = strcmp(name, TOPIC_OFFSETS) == 0;
    int64_t parts = offsets ? s->cfg->offsets_topic_num_partitions : s->cfg->transaction_state_log_num_partitions;
    if (parts <= 0 || topic_find(s, name, strlen(name))) return 0;
    /* Kafka's defaults for both: offsets.topic.replication.factor and transaction.state.log.replication.factor
     * are 3 (here at most the broker count, where Kafka would refuse to create them), segments of 100 MiB, and the
     * transaction log's min.insync.replicas of 2 */
    topic_override ov[] = {{"cleanup.policy", "compact"},
                           {"compression.type", "producer"},
                           {"segment.bytes", "104857600"},
                           {"min.insync.replicas", "2"}};
    int nov = offsets ? 3 : 4;
    int16_t rf = (int16_t)(s->nnodes < 3 ? s->nnodes : 3);
    const char *why = NULL;
    if (!topic_create(s, name, (int32_t)parts, rf, ov, nov, &why)) {
        log_warn("internal topic %s not created: %s", name, why ? why : "storage failed");
        return -1;
    }
    log_info("created internal topic %s: %lld partitions, replication factor %d (read-only: mskmock keeps %s in its "
             "database, not in records)", name, (long long)parts, rf, offsets ? "offsets" : "transactions");
    return 0;
}
