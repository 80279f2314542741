/*
 * Text of every statement stor prepares at open. Hot-path statements are
 * written so SQLite can seek an index (test_query_plans in
 * tests/unit/storage/test_stor_batches.c checks that none of them scans or sorts).
 */
#include "stor_int.h"

#define BATCH_KEY "topic_id = ?1 AND partition = ?2"
/*
 * A partition's SUM(batches.size): the sum kept below bytes_end plus the rows past it, at most
 * those appended since the last producer snapshot (schema migration 21).
 */
#define PART_BYTES                                                                                           \
    "(p.bytes + (SELECT coalesce(sum(b.size), 0) FROM batches b WHERE b.topic_id = p.topic_id"               \
    " AND b.partition = p.partition AND b.base_offset >= p.bytes_end))"

const char *const stor_stmt_sql[STOR_STMT_COUNT] = {
    [STOR_BEGIN] = "BEGIN IMMEDIATE",
    [STOR_COMMIT] = "COMMIT",
    [STOR_ROLLBACK] = "ROLLBACK",
    [STOR_SAVEPOINT] = "SAVEPOINT stor_op",
    [STOR_RELEASE] = "RELEASE stor_op",
    [STOR_ROLLBACK_TO] = "ROLLBACK TO stor_op",

    [STOR_TOPIC_INSERT] = "INSERT INTO topics (id, name, uuid, partitions, created_ms) VALUES (?5, ?1, ?2, ?3, ?4)",
    /* Partitions, configs and batches go with it (ON DELETE CASCADE). */
    [STOR_TOPIC_DELETE] = "DELETE FROM topics WHERE id = ?1",
    [STOR_TOPIC_PARTITIONS_GET] = "SELECT partitions FROM topics WHERE id = ?1",
    [STOR_TOPIC_PARTITIONS_SET] = "UPDATE topics SET partitions = ?2 WHERE id = ?1",
    [STOR_PARTITION_INSERT] = "INSERT INTO partitions (topic_id, partition, log_start) VALUES (?1, ?2, 0)",
    [STOR_CONFIG_UPSERT] = "INSERT INTO topic_configs (topic_id, key, value) VALUES (?1, ?2, ?3)"
                           " ON CONFLICT (topic_id, key) DO UPDATE SET value = excluded.value",
    [STOR_CONFIG_DELETE] = "DELETE FROM topic_configs WHERE topic_id = ?1 AND key = ?2",

    [STOR_LOAD_TOPICS] = "SELECT t.id, t.name, t.uuid, t.partitions, t.created_ms, coalesce(r.replication_factor, 0)"
                         " FROM topics t LEFT JOIN topic_replication r ON r.topic_id = t.id ORDER BY t.id",
    [STOR_LOAD_CONFIGS] = "SELECT topic_id, key, value FROM topic_configs ORDER BY topic_id, key",
    [STOR_LOAD_PARTITIONS] = "SELECT p.topic_id, p.partition, p.log_start,"
                             " (SELECT b.last_offset FROM batches b"
                             "   WHERE b.topic_id = p.topic_id AND b.partition = p.partition"
                             "   ORDER BY b.base_offset DESC LIMIT 1)"
                             " FROM partitions p ORDER BY p.topic_id, p.partition",

    [STOR_BATCH_INSERT] = "INSERT INTO batches (topic_id, partition, " STOR_META_COLS ", size, data, seg, pos, txn)"
                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    [STOR_BATCH_LAST] = "SELECT last_offset FROM batches WHERE " BATCH_KEY " ORDER BY base_offset DESC LIMIT 1",
    /*
     * "last_offset >= from" alone cannot seek the primary key. Batches do not
     * overlap, so every wanted batch starts at or after the batch holding
     * from (the last one starting <= from): seek there, and let the
     * last_offset filter drop that one batch if from falls past its end.
     */
    [STOR_BATCH_READ] = "SELECT " STOR_META_COLS ", rowid, size, seg, pos FROM batches"
                        " WHERE " BATCH_KEY " AND base_offset < ?4 AND last_offset >= ?3"
                        "   AND base_offset >= coalesce((SELECT base_offset FROM batches"
                        "     WHERE " BATCH_KEY " AND base_offset <= ?3 ORDER BY base_offset DESC LIMIT 1), ?3)"
                        " ORDER BY base_offset",
    /* The sparse time index (stor_time_index.c); its primary key orders entries by time, then offset. */
    [STOR_TIME_INSERT] = "INSERT OR IGNORE INTO batch_times (topic_id, partition, max_timestamp, base_offset)"
                         " VALUES (?1, ?2, ?3, ?4)",
    [STOR_TIME_LAST] = "SELECT max_timestamp, base_offset FROM batch_times WHERE " BATCH_KEY
                       " ORDER BY max_timestamp DESC, base_offset DESC LIMIT 1",
    [STOR_TIME_TAIL] = "SELECT max(max_timestamp), coalesce(sum(size), 0) FROM batches WHERE " BATCH_KEY
                       " AND base_offset > ?3",
    /* the last entry below the target: no batch up to its offset reaches the target */
    [STOR_TIME_FLOOR] = "SELECT base_offset FROM batch_times WHERE " BATCH_KEY " AND max_timestamp < ?3"
                        " ORDER BY max_timestamp DESC, base_offset DESC LIMIT 1",
    /* from there the batch rows, on the primary key, to the first that reaches it (about 4 KiB of log) */
    [STOR_TIME_SCAN] = "SELECT base_offset, last_offset, max_timestamp FROM batches WHERE " BATCH_KEY
                       " AND base_offset > ?3 AND max_timestamp >= ?4 ORDER BY base_offset LIMIT 1",
    /*
     * Entries grow with the offset, so those below the log start are the first ones in key
     * order: the bound (the first entry at or past it) keeps the delete to them and its ties.
     */
    [STOR_TIME_TRIM] = "DELETE FROM batch_times WHERE " BATCH_KEY " AND base_offset < ?3 AND max_timestamp <="
                       " coalesce((SELECT max_timestamp FROM batch_times WHERE " BATCH_KEY " AND base_offset >= ?3"
                       "   ORDER BY max_timestamp, base_offset LIMIT 1), 9223372036854775807)",
    [STOR_TIME_BATCH_TS] = "SELECT max_timestamp FROM batches WHERE " BATCH_KEY " AND base_offset = ?3",
    /* rare (see stor_time_raise): walks the partition's entries below the new timestamp */
    [STOR_TIME_RAISE] = "UPDATE batch_times SET max_timestamp = ?4 WHERE " BATCH_KEY " AND base_offset >= ?3"
                        " AND max_timestamp < ?4",
    [STOR_PARTITION_BYTES] = "SELECT " PART_BYTES " FROM partitions p WHERE p.topic_id = ?1 AND p.partition = ?2",
    /*
     * The producer snapshot's commit counts the rows past bytes_end in (migrations 21 and 22):
     * one scan of them (at most the batches since the last snapshot), then the partition's row
     * and the row of each segment they name, each updated once.
     */
    [STOR_FOLD_ROWS] = "SELECT b.seg, b.pos + b.size, b.size, b.last_offset FROM batches b WHERE b.topic_id = ?1"
                       " AND b.partition = ?2 AND b.base_offset >= (SELECT p.bytes_end FROM partitions p"
                       " WHERE p.topic_id = ?1 AND p.partition = ?2) ORDER BY b.base_offset",
    [STOR_PARTITION_BYTES_FOLD] = "UPDATE partitions SET bytes = bytes + ?3, bytes_end = max(bytes_end, ?4) WHERE " BATCH_KEY,
    [STOR_SEGMENTS_FOLD] = "UPDATE segments SET live = live + ?4, used = max(used, ?5) WHERE " BATCH_KEY " AND id = ?3",
    /* what STOR_BATCH_DELETE_BELOW removes */
    [STOR_BYTES_BELOW] = "SELECT coalesce(sum(size), 0) FROM batches WHERE " BATCH_KEY " AND base_offset < ?3 AND last_offset < ?3",
    /* base_offset < ?3 is implied by last_offset < ?3; stating it lets the delete seek the primary key. */
    [STOR_BATCH_DELETE_BELOW] = "DELETE FROM batches WHERE " BATCH_KEY " AND base_offset < ?3 AND last_offset < ?3",
    [STOR_LOG_START_UPDATE] = "UPDATE partitions SET log_start = max(log_start, ?3) WHERE " BATCH_KEY,
    [STOR_OLDEST_BATCH] = "SELECT " STOR_META_COLS " FROM batches WHERE " BATCH_KEY " ORDER BY base_offset LIMIT 1",

    [STOR_PRODUCER_PARTITIONS] = "SELECT topic_id, partition FROM partitions ORDER BY topic_id, partition",
    /* the producer snapshot (migration 18, stor_producers.c) and the batches after it */
    [STOR_PRODUCER_SNAP_END] = "SELECT end_offset FROM producer_snapshot_end WHERE " BATCH_KEY,
    [STOR_PRODUCER_SNAP_LOAD] = "SELECT producer_id, batches, stale, txn_first FROM producer_snapshot WHERE " BATCH_KEY
                                " ORDER BY producer_id",
    [STOR_PRODUCER_TAIL] = "SELECT " STOR_META_COLS ", txn FROM batches WHERE " BATCH_KEY " AND base_offset >= ?3"
                           " ORDER BY base_offset",
    [STOR_PRODUCER_SNAP_PUT] = "INSERT OR REPLACE INTO producer_snapshot (topic_id, partition, producer_id,"
                               " first_offset, last_offset, stale, batches, txn_first) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7)",
    /* the log start moved: the producers whose newest covered batch went (Kafka's truncateHead) */
    [STOR_PRODUCER_SNAP_TRIM] = "DELETE FROM producer_snapshot WHERE " BATCH_KEY " AND last_offset < ?3"
                                " AND txn_first < 0",
    [STOR_PRODUCER_SNAP_DEL] = "DELETE FROM producer_snapshot WHERE " BATCH_KEY " AND producer_id = ?3",
    /* the snapshot's entries below the partition's first batch were removed from its head */
    [STOR_PRODUCER_HEAD] = "SELECT base_offset FROM batches WHERE " BATCH_KEY " ORDER BY base_offset LIMIT 1",
    /* a stale row's batch, rewritten by compaction since the snapshot */
    [STOR_PRODUCER_BATCH_AT] = "SELECT max_timestamp, records_count FROM batches WHERE " BATCH_KEY
                               " AND base_offset = ?3",
    [STOR_PRODUCER_SNAP_END_PUT] = "INSERT OR REPLACE INTO producer_snapshot_end (topic_id, partition, end_offset)"
                                   " VALUES (?1, ?2, ?3)",

    [STOR_OFFSET_UPSERT] = "INSERT INTO offsets (group_id, topic, partition, \"offset\", leader_epoch, metadata,"
                           " commit_ms, expire_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                           " ON CONFLICT (group_id, topic, partition) DO UPDATE SET"
                           " \"offset\" = excluded.\"offset\", leader_epoch = excluded.leader_epoch,"
                           " metadata = excluded.metadata, commit_ms = excluded.commit_ms,"
                           " expire_ms = excluded.expire_ms",
    [STOR_OFFSET_DELETE] = "DELETE FROM offsets WHERE group_id = ?1 AND topic = ?2 AND partition = ?3",
    [STOR_OFFSETS_DELETE_GROUP] = "DELETE FROM offsets WHERE group_id = ?1",
    /* Scans offsets: topic deletion is rare, see migration 3. */
    [STOR_OFFSETS_DELETE_TOPIC] = "DELETE FROM offsets WHERE topic = ?1",
    [STOR_LOAD_OFFSETS] = "SELECT group_id, topic, partition, \"offset\", leader_epoch, metadata, commit_ms, expire_ms"
                          " FROM offsets ORDER BY group_id, topic, partition",

    /* An upsert, not INSERT OR REPLACE: replacing would delete the row and cascade to its members. */
    [STOR_GROUP_UPSERT] = "INSERT INTO groups (group_id, protocol_type, protocol_name, generation, leader, state,"
                          " state_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                          " ON CONFLICT (group_id) DO UPDATE SET protocol_type = excluded.protocol_type,"
                          " protocol_name = excluded.protocol_name, generation = excluded.generation,"
                          " leader = excluded.leader, state = excluded.state, state_ms = excluded.state_ms",
    /* Members go with it (ON DELETE CASCADE); offsets stay. */
    [STOR_GROUP_DELETE] = "DELETE FROM groups WHERE group_id = ?1",
    [STOR_MEMBERS_DELETE] = "DELETE FROM group_members WHERE group_id = ?1",
    [STOR_MEMBER_INSERT] = "INSERT INTO group_members (group_id, member_id, position, instance_id, client_id,"
                           " client_host, session_timeout_ms, rebalance_timeout_ms, metadata, assignment)"
                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [STOR_LOAD_GROUPS] = "SELECT group_id, protocol_type, protocol_name, generation, leader, state, state_ms"
                         " FROM groups ORDER BY group_id",
    [STOR_LOAD_MEMBERS] = "SELECT member_id, instance_id, client_id, client_host, session_timeout_ms,"
                          " rebalance_timeout_ms, metadata, assignment FROM group_members"
                          " WHERE group_id = ?1 ORDER BY position",
    [STOR_SETTING_GET] = "SELECT value FROM settings WHERE key = ?1",
    [STOR_SETTING_PUT] = "INSERT INTO settings (key, value) VALUES (?1, ?2)"
                         " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    [STOR_LEADER_PUT] = "INSERT INTO partition_leaders (topic_id, partition, leader, leader_epoch) VALUES (?1, ?2, ?3, ?4)"
                        " ON CONFLICT (topic_id, partition) DO UPDATE SET leader = excluded.leader,"
                        " leader_epoch = excluded.leader_epoch",
    [STOR_LOAD_LEADERS] = "SELECT topic_id, partition, leader, leader_epoch FROM partition_leaders",

    /*
     * The id's row exists from its InitProducerId on, so every later change is this UPDATE (one
     * seek); the upsert below is for the first. An upsert of an existing row builds and seeks
     * the INSERT's record before it runs the UPDATE anyway.
     */
    [STOR_TXNS_UPDATE] = "UPDATE txns SET producer_id = ?2, prev_producer_id = ?3, producer_epoch = ?4,"
                         " last_producer_epoch = ?5, timeout_ms = ?6, state = ?7, start_ms = ?8, update_ms = ?9,"
                         " client_tv = ?10, next_producer_id = ?11, partitions = ?12 WHERE transactional_id = ?1",
    /* An upsert, not INSERT OR REPLACE: replacing would delete the row and cascade to its members. */
    [STOR_TXNS_UPSERT] = "INSERT INTO txns (transactional_id, producer_id, prev_producer_id, producer_epoch,"
                         " last_producer_epoch, timeout_ms, state, start_ms, update_ms, client_tv, next_producer_id,"
                         " partitions)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                         " ON CONFLICT (transactional_id) DO UPDATE SET producer_id = excluded.producer_id,"
                         " prev_producer_id = excluded.prev_producer_id, producer_epoch = excluded.producer_epoch,"
                         " last_producer_epoch = excluded.last_producer_epoch, timeout_ms = excluded.timeout_ms,"
                         " state = excluded.state, start_ms = excluded.start_ms, update_ms = excluded.update_ms,"
                         " client_tv = excluded.client_tv, next_producer_id = excluded.next_producer_id,"
                         " partitions = excluded.partitions",
    /* Groups and pending offsets go with it (ON DELETE CASCADE); its partitions are in the row. */
    [STOR_TXNS_DELETE] = "DELETE FROM txns WHERE transactional_id = ?1",
    /*
     * Which member tables hold rows of the id. Each clear below is a multi-row DELETE of a
     * WITHOUT ROWID table, which SQLite runs in two passes through an ephemeral table (its keys
     * first): several times the cost of this look-up, paid even when nothing matches.
     */
    [STOR_TXN_MEMBERS_PROBE] = "SELECT EXISTS (SELECT 1 FROM txn_groups WHERE transactional_id = ?1),"
                               " EXISTS (SELECT 1 FROM txn_offsets WHERE transactional_id = ?1)",
    [STOR_TXN_GROUP_INSERT] = "INSERT INTO txn_groups (transactional_id, group_id) VALUES (?1, ?2)"
                              " ON CONFLICT DO NOTHING",
    [STOR_TXN_GROUP_CLEAR] = "DELETE FROM txn_groups WHERE transactional_id = ?1",
    /* A later TxnOffsetCommit is newer than any plain commit before it: it is pending again. */
    [STOR_TXN_OFFSET_UPSERT] = "INSERT INTO txn_offsets (transactional_id, producer_id, group_id, topic, partition,"
                               " \"offset\", leader_epoch, metadata, commit_ms, superseded)"
                               " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0)"
                               " ON CONFLICT (transactional_id, group_id, topic, partition) DO UPDATE SET"
                               " producer_id = excluded.producer_id, \"offset\" = excluded.\"offset\","
                               " leader_epoch = excluded.leader_epoch, metadata = excluded.metadata,"
                               " commit_ms = excluded.commit_ms, superseded = 0",
    [STOR_TXN_OFFSET_CLEAR] = "DELETE FROM txn_offsets WHERE transactional_id = ?1",
    /* superseded = 0 in the filter: a repeat changes no row, so it adds no write kind (stor_txns.c). */
    [STOR_TXN_OFFSET_SUPERSEDE] = "UPDATE txn_offsets SET superseded = 1"
                                  " WHERE group_id = ?1 AND topic = ?2 AND partition = ?3 AND superseded = 0",
    [STOR_TXN_OFFSET_DELETE_GROUP] = "DELETE FROM txn_offsets WHERE group_id = ?1",
    [STOR_TXN_OFFSET_DELETE_TOPIC] = "DELETE FROM txn_offsets WHERE topic = ?1",
    [STOR_TXN_OFFSET_DELETE_ONE] = "DELETE FROM txn_offsets WHERE group_id = ?1 AND topic = ?2 AND partition = ?3",
    [STOR_LOAD_TXNS] = "SELECT transactional_id, producer_id, prev_producer_id, producer_epoch, last_producer_epoch,"
                       " timeout_ms, state, start_ms, update_ms, client_tv, next_producer_id, partitions FROM txns"
                       " ORDER BY transactional_id",
    [STOR_LOAD_TXN_GROUPS] = "SELECT group_id FROM txn_groups WHERE transactional_id = ?1 ORDER BY group_id",
    [STOR_LOAD_TXN_OFFSETS] = "SELECT producer_id, group_id, topic, partition, \"offset\", leader_epoch, metadata,"
                              " commit_ms, superseded FROM txn_offsets WHERE transactional_id = ?1"
                              " ORDER BY group_id, topic, partition",

    [STOR_TXN_ABORTED_INSERT] = "INSERT INTO txn_aborted (topic_id, partition, last_offset, producer_id,"
                                " first_offset, lso) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [STOR_TXN_ABORTED_READ] = "SELECT producer_id, first_offset, last_offset, lso FROM txn_aborted"
                              " WHERE " BATCH_KEY " AND last_offset >= ?3 ORDER BY last_offset",
    /* One seek per partition rather than a walk over every entry (GROUP BY would read them all). */
    [STOR_TXN_ABORTED_LAST] = "SELECT p.topic_id, p.partition, (SELECT a.last_offset FROM txn_aborted a"
                              "   WHERE a.topic_id = p.topic_id AND a.partition = p.partition"
                              "   ORDER BY a.last_offset DESC LIMIT 1)"
                              " FROM partitions p ORDER BY p.topic_id, p.partition",
    [STOR_TXN_ABORTED_DELETE_BELOW] = "DELETE FROM txn_aborted WHERE " BATCH_KEY " AND last_offset < ?3",

    /* The log cleaner (stor_compact.c): a batch rewritten in place keeps its offsets and producer columns. */
    [STOR_BATCH_REPLACE] = "UPDATE batches SET max_timestamp = ?4, records_count = ?5, size = ?6, data = ?7, seg = ?8,"
                           " pos = ?9"
                           " WHERE " BATCH_KEY " AND base_offset = ?3",
    [STOR_BATCH_DELETE_ONE] = "DELETE FROM batches WHERE " BATCH_KEY " AND base_offset = ?3",
    [STOR_CLEAN_STATE] = "SELECT coalesce((SELECT cleaned_to FROM partition_cleaned WHERE " BATCH_KEY "), 0), " PART_BYTES
                         " FROM partitions p WHERE p.topic_id = ?1 AND p.partition = ?2",
    /* the dirty part: its bytes and its oldest batch's newest record (max.compaction.lag.ms) */
    [STOR_CLEAN_DIRTY] = "SELECT coalesce(sum(size), 0), (SELECT max_timestamp FROM batches WHERE " BATCH_KEY
                         " AND base_offset >= ?3 ORDER BY base_offset LIMIT 1)"
                         " FROM batches WHERE " BATCH_KEY " AND base_offset >= ?3",
    [STOR_CLEANED_SET] = "INSERT INTO partition_cleaned (topic_id, partition, cleaned_to) VALUES (?1, ?2, ?3)"
                         " ON CONFLICT (topic_id, partition) DO UPDATE SET cleaned_to = excluded.cleaned_to",
    [STOR_TOPIC_RF_INSERT] = "INSERT INTO topic_replication (topic_id, replication_factor) VALUES (?1, ?2)",
    [STOR_REPLICAS_PUT] = "INSERT INTO partition_replicas (topic_id, partition, replicas) VALUES (?1, ?2, ?3)"
                          " ON CONFLICT (topic_id, partition) DO UPDATE SET replicas = excluded.replicas",
    [STOR_LOAD_REPLICAS] = "SELECT topic_id, partition, replicas FROM partition_replicas ORDER BY topic_id, partition",

    [STOR_GROUP_CONFIG_UPSERT] = "INSERT INTO group_configs (group_id, key, value) VALUES (?1, ?2, ?3)"
                                 " ON CONFLICT (group_id, key) DO UPDATE SET value = excluded.value",
    [STOR_GROUP_CONFIG_DELETE] = "DELETE FROM group_configs WHERE group_id = ?1 AND key = ?2",
    [STOR_GROUP_CONFIGS_CLEAR] = "DELETE FROM group_configs",
    [STOR_LOAD_GROUP_CONFIGS] = "SELECT group_id, key, value FROM group_configs ORDER BY group_id, key",

    [STOR_CLUSTER_TAG_UPSERT] = "INSERT INTO cluster_tags (arn, key, value) VALUES (?1, ?2, ?3)"
                                " ON CONFLICT (arn, key) DO UPDATE SET value = excluded.value",
    [STOR_CLUSTER_TAG_DELETE] = "DELETE FROM cluster_tags WHERE arn = ?1 AND key = ?2",
    [STOR_CLUSTER_TAGS_DELETE] = "DELETE FROM cluster_tags WHERE arn = ?1",
    [STOR_LOAD_CLUSTER_TAGS] = "SELECT key, value FROM cluster_tags WHERE arn = ?1 ORDER BY key",
    [STOR_CLUSTER_POLICY_PUT] = "INSERT INTO cluster_policies (arn, policy, version) VALUES (?1, ?2, ?3)"
                                " ON CONFLICT (arn) DO UPDATE SET policy = excluded.policy, version = excluded.version",
    [STOR_CLUSTER_POLICY_GET] = "SELECT policy, version FROM cluster_policies WHERE arn = ?1",
    [STOR_CLUSTER_POLICY_DELETE] = "DELETE FROM cluster_policies WHERE arn = ?1",
    [STOR_CLUSTER_PUT] = "INSERT INTO clusters (arn, name, spec, created_ms) VALUES (?1, ?2, ?3, ?4)",
    [STOR_CLUSTER_DELETE] = "DELETE FROM clusters WHERE arn = ?1",
    [STOR_LOAD_CLUSTERS] = "SELECT arn, name, spec, created_ms FROM clusters ORDER BY created_ms, name",

    /* consumer groups (KIP-848): an upsert, as for classic groups, so the members do not cascade away */
    [STOR_CGROUP_UPSERT] = "INSERT INTO consumer_groups (group_id, group_epoch, assignment_epoch, assignor, topics)"
                           " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (group_id) DO UPDATE SET"
                           " group_epoch = excluded.group_epoch, assignment_epoch = excluded.assignment_epoch,"
                           " assignor = excluded.assignor, topics = excluded.topics",
    [STOR_CGROUP_DELETE] = "DELETE FROM consumer_groups WHERE group_id = ?1",
    [STOR_CMEMBERS_DELETE] = "DELETE FROM consumer_group_members WHERE group_id = ?1",
    [STOR_CMEMBER_INSERT] = "INSERT INTO consumer_group_members (group_id, member_id, position, instance_id, rack_id,"
                            " client_id, client_host, server_assignor, topics, member_epoch, previous_epoch, state,"
                            " rebalance_timeout_ms, assigned, revoking, target, regex, names,"
                            " classic_session_timeout_ms, classic_protocols)"
                            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
                            " ?19, ?20)",
    [STOR_LOAD_CGROUPS] = "SELECT group_id, group_epoch, assignment_epoch, assignor, topics FROM consumer_groups"
                          " ORDER BY group_id",
    [STOR_LOAD_CMEMBERS] = "SELECT member_id, instance_id, rack_id, client_id, client_host, server_assignor, topics,"
                           " member_epoch, previous_epoch, state, rebalance_timeout_ms, assigned, revoking, target,"
                           " regex, names, classic_session_timeout_ms, classic_protocols FROM consumer_group_members"
                           " WHERE group_id = ?1 ORDER BY position",
};
