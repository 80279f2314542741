/*
 * Versioned schema. PRAGMA user_version holds the number of migrations
 * applied; migration N (1-based) is stor_migrations[N - 1]. Append new
 * migrations, never edit a released one: existing databases have run it.
 */
#include "stor_int.h"

#include <stdbool.h>
#include <stdio.h>

#ifndef STOR_SCHEMA_GEN
/* what the chain below makes of an empty database, made at build time (stor_schema_gen.c) */
#include "stor_schema_fresh.h"
#endif

/* Migration 19's triggers: the partition of the batch row a trigger fires for, and its neighbours. */
#define SNAP_OLD_KEY "topic_id = OLD.topic_id AND partition = OLD.partition"
#define SNAP_LOG_START "(SELECT log_start FROM partitions WHERE " SNAP_OLD_KEY ")"
#define SNAP_END "(SELECT end_offset FROM producer_snapshot_end WHERE " SNAP_OLD_KEY ")"
#define SNAP_OLDER_BATCH "EXISTS (SELECT 1 FROM batches WHERE " SNAP_OLD_KEY " AND base_offset < OLD.base_offset)"
#define SNAP_NEWER_BATCH "EXISTS (SELECT 1 FROM batches WHERE " SNAP_OLD_KEY " AND base_offset > OLD.base_offset)"

static const char *const stor_migrations[] = {
    /* 1: topics and their record batches. */
    /*
     * topics: id is the rowid every child row refers to; name and uuid are
     * the Kafka names for it. partitions mirrors COUNT(*) of the partitions
     * rows so a topic reads back in one row.
     */
    "CREATE TABLE topics ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  uuid BLOB NOT NULL CHECK (length(uuid) = 16),"
    "  partitions INTEGER NOT NULL CHECK (partitions >= 0),"
    "  created_ms INTEGER NOT NULL"
    ");"
    /* topic_configs: only overrides; defaults come from the broker's profile. */
    "CREATE TABLE topic_configs ("
    "  topic_id INTEGER NOT NULL REFERENCES topics (id) ON DELETE CASCADE,"
    "  key TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  PRIMARY KEY (topic_id, key)"
    ") WITHOUT ROWID;"
    /*
     * partitions: log_start moves forward with retention and DeleteRecords.
     * bytes is SUM(batches.size), kept by the triggers below so that
     * retention.bytes checks do not scan the partition.
     * next_offset is not stored: it is 1 + the newest batch's last_offset.
     */
    "CREATE TABLE partitions ("
    "  topic_id INTEGER NOT NULL REFERENCES topics (id) ON DELETE CASCADE,"
    "  partition INTEGER NOT NULL CHECK (partition >= 0),"
    "  log_start INTEGER NOT NULL DEFAULT 0 CHECK (log_start >= 0),"
    "  bytes INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (topic_id, partition)"
    ") WITHOUT ROWID;"
    /*
     * batches: one row per record batch, data kept byte for byte as served to
     * fetches. A rowid table rather than WITHOUT ROWID because data is large
     * (KBs to MBs) and WITHOUT ROWID b-trees handle big rows poorly; data is
     * the last column so metadata reads never touch its overflow pages.
     * Batches of a partition never overlap, so base_offset order is also
     * last_offset order: reads seek on the primary key (see stor_sql.c).
     * producer_id is -1 for batches of non-idempotent producers.
     */
    "CREATE TABLE batches ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  base_offset INTEGER NOT NULL CHECK (base_offset >= 0),"
    "  last_offset INTEGER NOT NULL CHECK (last_offset >= base_offset),"
    "  max_timestamp INTEGER NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  producer_epoch INTEGER NOT NULL,"
    "  base_sequence INTEGER NOT NULL,"
    "  last_sequence INTEGER NOT NULL,"
    "  records_count INTEGER NOT NULL CHECK (records_count >= 0),"
    "  size INTEGER NOT NULL CHECK (size >= 0),"
    "  data BLOB NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, base_offset),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ");"
    /* ListOffsets by time and MAX_TIMESTAMP: covering, so neither reads batch rows while searching. */
    "CREATE INDEX batches_time ON batches (topic_id, partition, max_timestamp, base_offset);"
    /* Idempotent producer state at start-up (replaced by migration 2). */
    "CREATE INDEX batches_producer ON batches (topic_id, partition, producer_id, base_offset)"
    "  WHERE producer_id >= 0;"
    "CREATE TRIGGER batches_bytes_add AFTER INSERT ON batches BEGIN"
    "  UPDATE partitions SET bytes = bytes + NEW.size"
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition;"
    " END;"
    "CREATE TRIGGER batches_bytes_sub AFTER DELETE ON batches BEGIN"
    "  UPDATE partitions SET bytes = bytes - OLD.size"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition;"
    " END;",

    /*
     * 2: the producer index covers every batch. As a partial index (WHERE
     * producer_id >= 0) SQLite 3.40 confuses the index condition with the
     * seek bounds and walks a partition's batches instead of skipping from
     * producer to producer; and producers are idempotent by default since
     * Kafka 3.0, so leaving the others out saved little.
     */
    "DROP INDEX batches_producer;"
    "CREATE INDEX batches_producer ON batches (topic_id, partition, producer_id, base_offset);",

    /*
     * 3: consumer groups: committed offsets, group state and members.
     * IF NOT EXISTS: a real version-2 database has none of these tables, but
     * one whose user_version was lowered by hand (test_upgrade_from_version_1
     * in test_stor_basic.c reverts only migration 2) already has them.
     */
    /*
     * offsets: keyed by topic name, as Kafka commits them, and independent of
     * groups rows: simple groups commit without ever having one, and a group
     * that dies keeps its offsets until they expire or DeleteGroups runs.
     * expire_ms is -1 unless an OffsetCommit v2-v4 set a retention time.
     * No index on topic: only topic deletion looks offsets up by topic, and
     * scanning the (small) table then is cheaper overall than maintaining a
     * second b-tree on every commit.
     */
    "CREATE TABLE IF NOT EXISTS offsets ("
    "  group_id TEXT NOT NULL,"
    "  topic TEXT NOT NULL,"
    "  partition INTEGER NOT NULL CHECK (partition >= 0),"
    "  \"offset\" INTEGER NOT NULL,"
    "  leader_epoch INTEGER NOT NULL,"
    "  metadata TEXT NOT NULL,"
    "  commit_ms INTEGER NOT NULL,"
    "  expire_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (group_id, topic, partition)"
    ") WITHOUT ROWID;"
    /* groups: state is the coordinator's enum, stored as is; NULL protocol and leader mean none. */
    "CREATE TABLE IF NOT EXISTS groups ("
    "  group_id TEXT PRIMARY KEY NOT NULL,"
    "  protocol_type TEXT,"
    "  protocol_name TEXT,"
    "  generation INTEGER NOT NULL,"
    "  leader TEXT,"
    "  state INTEGER NOT NULL,"
    "  state_ms INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    /*
     * group_members: rewritten whole by each save. A rowid table because
     * metadata and assignment can be large (a subscription to many topics, an
     * assignment of many partitions); the blobs come last. position keeps
     * the order the coordinator saved them in (JoinGroup hands the leader
     * the members in that order); its UNIQUE index also serves the load.
     */
    "CREATE TABLE IF NOT EXISTS group_members ("
    "  group_id TEXT NOT NULL REFERENCES groups (group_id) ON DELETE CASCADE,"
    "  member_id TEXT NOT NULL,"
    "  position INTEGER NOT NULL CHECK (position >= 0),"
    "  instance_id TEXT,"
    "  client_id TEXT NOT NULL,"
    "  client_host TEXT NOT NULL,"
    "  session_timeout_ms INTEGER NOT NULL,"
    "  rebalance_timeout_ms INTEGER NOT NULL,"
    "  metadata BLOB NOT NULL,"
    "  assignment BLOB NOT NULL,"
    "  PRIMARY KEY (group_id, member_id),"
    "  UNIQUE (group_id, position)"
    ");",

    /*
     * 4: settings that belong to the data directory rather than to the config, such as
     * the generated cluster uuid of the IAM resource ARNs (it must not change across
     * restarts, or the policies written for it stop matching).
     */
    "CREATE TABLE IF NOT EXISTS settings ("
    "  key TEXT PRIMARY KEY NOT NULL,"
    "  value TEXT NOT NULL"
    ") WITHOUT ROWID;",

    /*
     * 5: partitions whose leadership moved from their preferred broker (the admin API's broker
     * down and leader moves): the leader's node id and the leader epoch, so a restart never
     * hands clients an epoch older than one they saw (the Java client ignores such metadata).
     * A table of its own rather than columns of partitions: most partitions never move, and
     * CREATE TABLE IF NOT EXISTS stays idempotent like migrations 3 and 4.
     */
    "CREATE TABLE IF NOT EXISTS partition_leaders ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  leader INTEGER NOT NULL,"
    "  leader_epoch INTEGER NOT NULL CHECK (leader_epoch >= 0),"
    "  PRIMARY KEY (topic_id, partition),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;",

    /*
     * 6: transactions. IF NOT EXISTS keeps it idempotent like migrations 3 to 5.
     * txns and its three member tables are the coordinator's state (Kafka's
     * __transaction_state): a deleted txns row takes its members with it.
     */
    "CREATE TABLE IF NOT EXISTS txns ("
    "  transactional_id TEXT PRIMARY KEY NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  prev_producer_id INTEGER NOT NULL,"
    "  producer_epoch INTEGER NOT NULL,"
    "  last_producer_epoch INTEGER NOT NULL,"
    "  timeout_ms INTEGER NOT NULL,"
    "  state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 5),"
    "  start_ms INTEGER NOT NULL,"
    "  update_ms INTEGER NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS txn_partitions ("
    "  transactional_id TEXT NOT NULL REFERENCES txns ON DELETE CASCADE,"
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  PRIMARY KEY (transactional_id, topic_id, partition),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    /* Deleting a topic cascades here by partition: without it each partition row deleted scans the table. */
    "CREATE INDEX IF NOT EXISTS txn_partitions_partition ON txn_partitions (topic_id, partition);"
    "CREATE TABLE IF NOT EXISTS txn_groups ("
    "  transactional_id TEXT NOT NULL REFERENCES txns ON DELETE CASCADE,"
    "  group_id TEXT NOT NULL,"
    "  PRIMARY KEY (transactional_id, group_id)"
    ") WITHOUT ROWID;"
    /*
     * txn_offsets: TxnOffsetCommit's pending offsets, keyed by topic name like offsets.
     * superseded: a plain OffsetCommit of the partition came later, so COMMIT must not
     * overwrite it (Kafka compares their positions in __consumer_offsets).
     * Unlike offsets (migration 3), both look-ups other than by id get an index: every
     * plain OffsetCommit supersedes by (group, topic, partition), and the table holds only
     * pending offsets, so the indexes stay small.
     */
    "CREATE TABLE IF NOT EXISTS txn_offsets ("
    "  transactional_id TEXT NOT NULL REFERENCES txns ON DELETE CASCADE,"
    "  producer_id INTEGER NOT NULL,"
    "  group_id TEXT NOT NULL,"
    "  topic TEXT NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  \"offset\" INTEGER NOT NULL,"
    "  leader_epoch INTEGER NOT NULL,"
    "  metadata TEXT NOT NULL,"
    "  commit_ms INTEGER NOT NULL,"
    "  superseded INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (transactional_id, group_id, topic, partition)"
    ") WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS txn_offsets_group ON txn_offsets (group_id, topic, partition);"
    "CREATE INDEX IF NOT EXISTS txn_offsets_topic ON txn_offsets (topic);"
    /*
     * Each partition's transaction index, changed in the same commit as the batch or marker
     * that changes it. txn_open: the first offset of each producer's undecided transaction.
     * txn_aborted: Kafka's .txnindex, by the ABORT marker's offset (last_offset); lso is the
     * last stable offset when the abort was decided.
     */
    "CREATE TABLE IF NOT EXISTS txn_open ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  first_offset INTEGER NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, producer_id),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS txn_aborted ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  last_offset INTEGER NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  first_offset INTEGER NOT NULL,"
    "  lso INTEGER NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, last_offset),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;",

    /*
     * 7: log compaction and the replication factor a topic was created with, in tables of
     * their own so that the migration stays idempotent like 3 to 6 (ALTER TABLE is not).
     * partition_cleaned: the log cleaner's checkpoint (Kafka's cleaner-offset-checkpoint):
     * offsets below it were compacted, the bytes past it are the dirty part; no row: 0. The
     * cleaner rewrites a batch in place (fewer records, same offsets), so the byte count
     * follows updates too. topic_replication: what CreateTopics asked for, which Metadata
     * lists; no row (topics made before this migration): the broker's default.
     */
    "CREATE TABLE IF NOT EXISTS partition_cleaned ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  cleaned_to INTEGER NOT NULL,"
    "  PRIMARY KEY (topic_id, partition),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS topic_replication ("
    "  topic_id INTEGER PRIMARY KEY REFERENCES topics (id) ON DELETE CASCADE,"
    "  replication_factor INTEGER NOT NULL"
    ");"
    "CREATE TRIGGER IF NOT EXISTS batches_bytes_update AFTER UPDATE OF size ON batches BEGIN"
    "  UPDATE partitions SET bytes = bytes - OLD.size + NEW.size"
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition;"
    " END;",

    /*
     * 8: record bytes in segment files (stor_segments.c). A batch row with seg NULL keeps its
     * bytes in data, as every row before this migration does; otherwise data is empty and the
     * bytes are at pos in segment seg. The new columns follow data, so reading them from an
     * old row walks its overflow pages; only the read path and the start-up check select them.
     * The columns are added by stor_added_columns (ALTER TABLE has no IF NOT EXISTS, and every
     * migration stays idempotent). segments: per partition and file, the rows pointing into
     * it (live), the end of the newest of them (used: bytes past it were never committed) and
     * how much of it is known to be on disk (synced).
     */
    "CREATE TABLE IF NOT EXISTS segments ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  id INTEGER NOT NULL,"
    "  live INTEGER NOT NULL DEFAULT 0,"
    "  used INTEGER NOT NULL DEFAULT 0,"
    "  synced INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (topic_id, partition, id),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    /* segments no row points into any more: what the sweep after a commit looks for */
    "CREATE INDEX IF NOT EXISTS segments_dead ON segments (topic_id, partition, id) WHERE live <= 0;"
    "CREATE TRIGGER IF NOT EXISTS batches_seg_add AFTER INSERT ON batches WHEN NEW.seg IS NOT NULL BEGIN"
    "  UPDATE segments SET live = live + 1, used = max(used, NEW.pos + NEW.size)"
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition AND id = NEW.seg;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS batches_seg_del AFTER DELETE ON batches WHEN OLD.seg IS NOT NULL BEGIN"
    "  UPDATE segments SET live = live - 1"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND id = OLD.seg;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS batches_seg_move AFTER UPDATE OF seg, pos ON batches BEGIN"
    "  UPDATE segments SET live = live - 1"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND id = OLD.seg;"
    "  UPDATE segments SET live = live + 1, used = max(used, NEW.pos + NEW.size)"
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition AND id = NEW.seg;"
    " END;",

    /*
     * 9: replica assignments and group configs, in tables of their own (idempotent like 3 to 8).
     * partition_replicas: an assignment a client gave (CreateTopics, CreatePartitions), node ids
     * comma-separated with the preferred leader first; no row: the broker's default placement,
     * which is derived rather than stored, so a changed broker.count re-places those partitions.
     * group_configs: KIP-848's group configs (consumer.session.timeout.ms, ...): only
     * overrides, keyed by group id alone, since Kafka keeps them whether or not the group exists.
     */
    "CREATE TABLE IF NOT EXISTS partition_replicas ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  replicas TEXT NOT NULL CHECK (replicas <> ''),"
    "  PRIMARY KEY (topic_id, partition),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS group_configs ("
    "  group_id TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  PRIMARY KEY (group_id, key)"
    ") WITHOUT ROWID;",
    /*
     * 10: what the `kafka` control plane keeps on a cluster, keyed by the cluster's ARN, which is
     * how MSK addresses them. cluster_tags: TagResource's (AWS's tag rules are the caller's to
     * check). cluster_policies: PutClusterPolicy's document, as sent, and its version.
     */
    "CREATE TABLE IF NOT EXISTS cluster_tags ("
    "  arn TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  PRIMARY KEY (arn, key)"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS cluster_policies ("
    "  arn TEXT NOT NULL PRIMARY KEY,"
    "  policy TEXT NOT NULL,"
    "  version TEXT NOT NULL"
    ") WITHOUT ROWID;",
    /*
     * 11: the clusters the `kafka` control plane created (CreateClusterV2) beside the configured
     * one, kept in the configured cluster's database so they come back at restart: the ARN, the
     * name (unique, as MSK's are per account and region), and their description as JSON.
     */
    "CREATE TABLE IF NOT EXISTS clusters ("
    "  arn TEXT NOT NULL PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  spec TEXT NOT NULL,"
    "  created_ms INTEGER NOT NULL"
    ") WITHOUT ROWID;",
    /*
     * 12: consumer groups of the KIP-848 protocol beside the classic ones (their offsets are in
     * offsets, shared): the group and assignment epochs, the assignor and the subscribed topics'
     * partition counts ("topic:count,..."), and per member its epochs, reconciliation state,
     * subscription and the assigned, revoking and target partitions ("topic:0,1;topic2:3").
     */
    "CREATE TABLE IF NOT EXISTS consumer_groups ("
    "  group_id TEXT NOT NULL PRIMARY KEY,"
    "  group_epoch INTEGER NOT NULL,"
    "  assignment_epoch INTEGER NOT NULL,"
    "  assignor TEXT,"
    "  topics TEXT NOT NULL"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS consumer_group_members ("
    "  group_id TEXT NOT NULL REFERENCES consumer_groups (group_id) ON DELETE CASCADE,"
    "  member_id TEXT NOT NULL,"
    "  position INTEGER NOT NULL,"
    "  instance_id TEXT,"
    "  rack_id TEXT,"
    "  client_id TEXT NOT NULL,"
    "  client_host TEXT NOT NULL,"
    "  server_assignor TEXT,"
    "  topics TEXT NOT NULL,"
    "  member_epoch INTEGER NOT NULL,"
    "  previous_epoch INTEGER NOT NULL,"
    "  state INTEGER NOT NULL,"
    "  rebalance_timeout_ms INTEGER NOT NULL,"
    "  assigned TEXT NOT NULL,"
    "  revoking TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  PRIMARY KEY (group_id, member_id)"
    ") WITHOUT ROWID;",

    /*
     * 13: transactions V2 (KIP-890 part 2), Kafka's TransactionLogValue tagged fields: the
     * transaction version the id's client used (2: every EndTxn bumps the epoch) and the producer
     * id an exhausted epoch rotates to once the markers are written (-1: none). Both are columns
     * stor_added_columns adds to txns; the statement itself only keeps the list one per version.
     */
    "SELECT 1;",

    /*
     * 14: consumer group members subscribed by regular expression (KIP-848's
     * SubscribedTopicRegex): the regex, and the topic names the member gave beside it (topics
     * stays the whole subscription). Columns stor_added_columns adds to consumer_group_members.
     */
    "SELECT 1;",

    /*
     * 15: KIP-848's online migration: members of a consumer group that speak the classic protocol,
     * with their JoinGroup's session timeout and protocols (names and embedded metadata), as
     * Kafka's ConsumerGroupMemberMetadataValue.ClassicMemberMetadata; both NULL for a member on the
     * consumer protocol. Columns stor_added_columns adds to consumer_group_members.
     */
    "SELECT 1;",

    /*
     * 16: a transaction's partitions in its txns row (the column stor_added_columns adds,
     * "topic_id:partition" separated by spaces; NULL for none) instead of a txn_partitions row
     * each. The row is rewritten at every change of the transaction anyway; the rows of their
     * own and their index cost each transaction about three WAL pages. The rows of an open transaction move into the
     * column; txn_partitions stays, empty and unused, so that migration 6 and salvage still name
     * it and this one can run again (it moves only what is there, into rows that have no list).
     */
    STOR_TXN_PARTS_INTO_ROWS,

    /*
     * 17: the sparse time index (stor_time_index.c) replaces batches_time, which took a b-tree
     * entry per batch: batch_times holds an entry (the partition's largest max timestamp so
     * far, the batch's base offset) about every 4 KiB of log, as Kafka's time index does. Built
     * from the existing rows; IF NOT EXISTS, OR IGNORE and IF EXISTS keep it idempotent.
     */
    "CREATE TABLE IF NOT EXISTS batch_times ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  max_timestamp INTEGER NOT NULL,"
    "  base_offset INTEGER NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, max_timestamp, base_offset),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;" STOR_TIME_INDEX_BUILD "DROP INDEX IF EXISTS batches_time;",

    /*
     * 18: idempotent producer state without a per-batch index. batches_producer cost every
     * stored batch a b-tree insert of its own (about 10% of a transaction's instructions, issue 37);
     * instead, as Kafka's ProducerStateManager writes a producer-state snapshot and replays only
     * the log after it (Apache Kafka storage/src/main/java/org/apache/kafka/storage/internals/log/
     * ProducerStateManager.java, UnifiedLog
     * loadProducerState), producer_snapshot holds per partition and producer what start-up
     * needs (its newest data batches and a newest marker, stor_producers.c) as of
     * producer_snapshot_end.end_offset, and start-up reads the batches from there on. Both are
     * derived from batches, so a snapshot that no longer matches them is dropped: the triggers
     * below drop a partition's snapshot when a batch it covers is deleted or rewritten
     * (retention, DeleteRecords, compaction, truncation), and the next load folds the whole
     * partition, as it would with no snapshot at all (a database upgraded from before this).
     */
    "DROP INDEX IF EXISTS batches_producer;"
    "CREATE TABLE IF NOT EXISTS producer_snapshot ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  batches BLOB NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, producer_id),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS producer_snapshot_end ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  end_offset INTEGER NOT NULL,"
    "  PRIMARY KEY (topic_id, partition),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    "CREATE TRIGGER IF NOT EXISTS producer_snapshot_drop_deleted AFTER DELETE ON batches"
    "  WHEN OLD.base_offset < (SELECT end_offset FROM producer_snapshot_end"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition) BEGIN"
    "  DELETE FROM producer_snapshot WHERE topic_id = OLD.topic_id AND partition = OLD.partition;"
    "  DELETE FROM producer_snapshot_end WHERE topic_id = OLD.topic_id AND partition = OLD.partition;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS producer_snapshot_drop_rewritten AFTER UPDATE OF max_timestamp, records_count"
    "  ON batches WHEN OLD.base_offset < (SELECT end_offset FROM producer_snapshot_end"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition) BEGIN"
    "  DELETE FROM producer_snapshot WHERE topic_id = OLD.topic_id AND partition = OLD.partition;"
    "  DELETE FROM producer_snapshot_end WHERE topic_id = OLD.topic_id AND partition = OLD.partition;"
    " END;",

    /*
     * 19: a removal trims the producer snapshot instead of dropping it. With 18's triggers any
     * covered batch deleted or rewritten dropped the partition's snapshot, so retention,
     * DeleteRecords and compaction on a busy partition made the next snapshot (or start-up) fold
     * the partition from its first batch, on the loop. Kafka trims instead: when the log start
     * moves it drops the producers whose newest offset is below it and keeps the rest (Apache
     * Kafka ProducerStateManager.onLogStartOffsetIncremented, truncateHead, isProducerRetained).
     * Each snapshot row now carries the base offset of the oldest batch its blob holds
     * (first_offset) and the producer's newest covered offset (last_offset), and the state
     * stays what a fold of the remaining rows says (stor_producers.c):
     * - the log start moving (retention, DeleteRecords: stor_batches.c, below the new log start,
     *   where the trigger does nothing, one look-up per removed row as before) drops the rows of
     *   the producers whose newest covered batch went; the load skips a kept row's entries below
     *   the partition's first batch (which covers a cleaned first batch too);
     * - a removal from the middle (compaction) of a batch the producer's row holds, or of the
     *   partition's newest batch (the truncation of an uncommitted tail, whose offsets are
     *   appended again), still drops the partition's snapshot: only a fold knows what takes its
     *   place; a removal of a batch no row holds (older, not idempotent, a marker not newest)
     *   changes nothing the load hands on;
     * - a rewrite (compaction: max_timestamp, records_count, which the blob stores) of a batch a
     *   row holds marks the row stale, and the load reads those two columns of its batches back.
     * The rows of 18 lack the offsets: both tables start empty, and the first load folds.
     */
    "DROP TRIGGER IF EXISTS producer_snapshot_drop_deleted;"
    "DROP TRIGGER IF EXISTS producer_snapshot_drop_rewritten;"
    "DROP TRIGGER IF EXISTS producer_snapshot_drop_held;"
    "DROP TRIGGER IF EXISTS producer_snapshot_stale;"
    "DROP TABLE IF EXISTS producer_snapshot;"
    "DELETE FROM producer_snapshot_end;"
    "CREATE TABLE producer_snapshot ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  first_offset INTEGER NOT NULL,"
    "  last_offset INTEGER NOT NULL,"
    "  stale INTEGER NOT NULL DEFAULT 0,"
    "  batches BLOB NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, producer_id),"
    "  FOREIGN KEY (topic_id, partition) REFERENCES partitions (topic_id, partition) ON DELETE CASCADE"
    ") WITHOUT ROWID;"
    "CREATE TRIGGER producer_snapshot_drop_held AFTER DELETE ON batches"
    "  WHEN OLD.last_offset >= " SNAP_LOG_START " AND OLD.base_offset < " SNAP_END " AND (NOT " SNAP_NEWER_BATCH
    "   OR (OLD.producer_id >= 0 AND " SNAP_OLDER_BATCH " AND EXISTS (SELECT 1 FROM producer_snapshot WHERE "
    SNAP_OLD_KEY "   AND producer_id = OLD.producer_id AND OLD.base_offset >= first_offset"
    "   AND (OLD.base_sequence >= 0 OR OLD.last_offset >= last_offset)))) BEGIN"
    "  DELETE FROM producer_snapshot WHERE " SNAP_OLD_KEY ";"
    "  DELETE FROM producer_snapshot_end WHERE " SNAP_OLD_KEY ";"
    " END;"
    "CREATE TRIGGER producer_snapshot_stale AFTER UPDATE OF max_timestamp, records_count ON batches"
    "  WHEN OLD.producer_id >= 0 AND (NEW.max_timestamp IS NOT OLD.max_timestamp"
    "   OR NEW.records_count IS NOT OLD.records_count) BEGIN"
    "  UPDATE producer_snapshot SET stale = 1 WHERE " SNAP_OLD_KEY " AND producer_id = OLD.producer_id"
    "   AND OLD.base_offset >= first_offset AND OLD.last_offset <= last_offset AND stale = 0;"
    " END;",

    /*
     * 20: open transactions as producer state, not a row each. txn_open cost every transaction
     * an insert and a delete per partition (about 34k instructions of 522k, issue 37, and their
     * b-tree pages in two commits' WAL). Kafka keeps a transaction's first offset in the
     * producer's state (ProducerStateEntry.currentTxnFirstOffset, in ProducerStateManager's
     * snapshots) and replays the log past the snapshot to find the ones begun since. Here
     * batches.txn (added above: 1 for a transactional data batch, NULL otherwise, which takes
     * no payload byte) lets the fold past the snapshot see a transaction begin, and
     * producer_snapshot.txn_first holds the open one's first offset as of the snapshot
     * (stor_producers.c). The existing open transactions move over: their data batches are
     * marked, and the snapshot rows of partitions whose snapshot covers the first offset get it
     * (a producer without a row, its batches trimmed, gets a row of its own); a snapshot that
     * ends below it finds the marked batches in its tail. IF NOT EXISTS keeps it idempotent like
     * 3 to 7 (a database set back to an older version has no txn_open any more).
     */
    "CREATE TABLE IF NOT EXISTS txn_open ("
    "  topic_id INTEGER NOT NULL,"
    "  partition INTEGER NOT NULL,"
    "  producer_id INTEGER NOT NULL,"
    "  first_offset INTEGER NOT NULL,"
    "  PRIMARY KEY (topic_id, partition, producer_id)"
    ") WITHOUT ROWID;"
    "UPDATE batches SET txn = 1 WHERE rowid IN (SELECT b.rowid FROM txn_open o JOIN batches b"
    "  ON b.topic_id = o.topic_id AND b.partition = o.partition AND b.base_offset >= o.first_offset"
    "  WHERE b.producer_id = o.producer_id AND b.base_sequence >= 0);"
    "INSERT INTO producer_snapshot (topic_id, partition, producer_id, first_offset, last_offset, batches, txn_first)"
    "  SELECT o.topic_id, o.partition, o.producer_id, o.first_offset, o.first_offset, x'', o.first_offset"
    "  FROM txn_open o JOIN producer_snapshot_end e ON e.topic_id = o.topic_id AND e.partition = o.partition"
    "  WHERE e.end_offset > o.first_offset"
    "  ON CONFLICT (topic_id, partition, producer_id) DO UPDATE SET txn_first = excluded.txn_first;"
    "DROP TABLE txn_open;",

    /*
     * 21: partitions.bytes no longer follows every appended row. Migration 1's trigger updated
     * the partitions row for each batch row inserted: ~10k instructions a row and a b-tree page
     * in the WAL at every commit, for a sum read only by retention.bytes, DescribeLogDirs and the
     * cleaner. Now bytes is SUM(size) of the partition's rows below bytes_end (the column is
     * added by stor_added_columns), and the rows at or past it are summed by the readers
     * (stor_sql.c, STOR_PARTITION_BYTES). The producer snapshot folds them in every 4,096
     * batches and at a clean stop (STOR_PARTITION_BYTES_FOLD), so a reader sums at most the
     * rows since, and a start after kill -9 reads nothing more: the sum below bytes_end is
     * committed with the rows it counts. Removals and rewrites still adjust bytes by trigger,
     * only for rows below bytes_end; a removal of a partition's newest rows (a tail that failed
     * its check) lowers bytes_end to where its offsets will be appended again (stor_segments.c).
     * Upgraded partitions count every row already.
     */
    "DROP TRIGGER IF EXISTS batches_bytes_add;"
    "DROP TRIGGER IF EXISTS batches_bytes_sub;"
    "DROP TRIGGER IF EXISTS batches_bytes_update;"
    "UPDATE partitions SET bytes_end = coalesce((SELECT b.last_offset + 1 FROM batches b"
    "  WHERE b.topic_id = partitions.topic_id AND b.partition = partitions.partition"
    "  ORDER BY b.base_offset DESC LIMIT 1), 0);"
    "CREATE TRIGGER batches_bytes_sub AFTER DELETE ON batches BEGIN"
    "  UPDATE partitions SET bytes = bytes - OLD.size"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND OLD.base_offset < bytes_end;"
    " END;"
    "CREATE TRIGGER batches_bytes_update AFTER UPDATE OF size ON batches BEGIN"
    "  UPDATE partitions SET bytes = bytes - OLD.size + NEW.size"
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition AND OLD.base_offset < bytes_end;"
    " END;",

    /*
     * 22: segments.live and segments.used no longer follow every appended row. Migration 8's
     * batches_seg_add updated the segment's row for each batch row inserted: ~14k instructions
     * a row (the row and the partial index segments_dead on live). Now both count the rows
     * below partitions.bytes_end only, as partitions.bytes does (migration 21): the producer
     * snapshot's commit folds the rows past it in with the same commit that moves bytes_end
     * (stor_part_fold: one scan of those rows), a start folds what a kill -9 left
     * unfolded before it cuts any segment to its used (stor_recover), and the readers in
     * between (where the next append goes after a rollback, the sweep of dead segments,
     * salvage's rebuild) look at the rows past bytes_end as well. Deletes and moves keep their
     * triggers for rows below bytes_end only. Every row is folded here first: migration 21
     * left rows past bytes_end that batches_seg_add had already counted.
     */
    "UPDATE partitions SET bytes = bytes + (SELECT coalesce(sum(b.size), 0) FROM batches b"
    "  WHERE b.topic_id = partitions.topic_id AND b.partition = partitions.partition"
    "  AND b.base_offset >= partitions.bytes_end),"
    " bytes_end = max(bytes_end, coalesce((SELECT b.last_offset + 1 FROM batches b"
    "  WHERE b.topic_id = partitions.topic_id AND b.partition = partitions.partition"
    "  ORDER BY b.base_offset DESC LIMIT 1), 0));"
    "DROP TRIGGER IF EXISTS batches_seg_add;"
    "DROP TRIGGER IF EXISTS batches_seg_del;"
    "DROP TRIGGER IF EXISTS batches_seg_move;"
    "CREATE TRIGGER batches_seg_del AFTER DELETE ON batches WHEN OLD.seg IS NOT NULL AND OLD.base_offset <"
    "  (SELECT p.bytes_end FROM partitions p WHERE p.topic_id = OLD.topic_id AND p.partition = OLD.partition) BEGIN"
    "  UPDATE segments SET live = live - 1"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND id = OLD.seg;"
    " END;"
    "CREATE TRIGGER batches_seg_move AFTER UPDATE OF seg, pos ON batches WHEN OLD.base_offset <"
    "  (SELECT p.bytes_end FROM partitions p WHERE p.topic_id = OLD.topic_id AND p.partition = OLD.partition) BEGIN"
    "  UPDATE segments SET live = live - 1"
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND id = OLD.seg;"
    "  UPDATE segments SET live = live + 1, used = max(used, NEW.pos + NEW.size)"
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition AND id = NEW.seg;"
    " END;",
};

#define STOR_MIGRATIONS_N ((int)(sizeof stor_migrations / sizeof stor_migrations[0]))

int stor_schema_latest(void) { return STOR_MIGRATIONS_N; }

#ifndef STOR_SCHEMA_GEN
_Static_assert(STOR_FRESH_SCHEMA_VERSION == STOR_MIGRATIONS_N, "stor_schema_fresh.h is older than the migrations");
#endif

static int stor_exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    stor_errf(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

static int stor_query_int(sqlite3 *db, const char *sql, int64_t *out, char *err, size_t errlen) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        stor_errf(err, errlen, "%s: %s", sql, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

/* Refuse databases that are not ours or are newer than this binary, before touching them. */
static int stor_check_owner(sqlite3 *db, int64_t version, char *err, size_t errlen) {
    int64_t app_id, objects;
    if (stor_query_int(db, "PRAGMA application_id", &app_id, err, errlen)) return -1;
    if (stor_query_int(db, "SELECT count(*) FROM sqlite_master", &objects, err, errlen)) return -1;
    bool ours = app_id == STOR_APPLICATION_ID || (app_id == 0 && version == 0 && objects == 0);
    if (!ours) {
        stor_errf(err, errlen, "not an mskmock database (application_id %lld, user_version %lld, %lld objects)",
                  (long long)app_id, (long long)version, (long long)objects);
        return -1;
    }
    if (version < 0 || version > STOR_MIGRATIONS_N) {
        stor_errf(err, errlen,
                  "database schema version %lld is newer than this mskmock understands (%d); "
                  "run a newer mskmock or use another data directory",
                  (long long)version, STOR_MIGRATIONS_N);
        return -1;
    }
    return 0;
}

/* Columns a migration adds to an existing table, each only when the table does not have it yet. */
static const struct {
    int version;
    const char *table, *column, *decl;
} stor_added_columns[] = {
    {8, "batches", "seg", "INTEGER"},
    {8, "batches", "pos", "INTEGER"},
    {13, "txns", "client_tv", "INTEGER NOT NULL DEFAULT 0"},
    {13, "txns", "next_producer_id", "INTEGER NOT NULL DEFAULT -1"},
    {14, "consumer_group_members", "regex", "TEXT"},
    {14, "consumer_group_members", "names", "TEXT"},
    {15, "consumer_group_members", "classic_session_timeout_ms", "INTEGER"},
    {15, "consumer_group_members", "classic_protocols", "BLOB"},
    {16, "txns", "partitions", "TEXT"},
    {20, "batches", "txn", "INTEGER"},
    {20, "producer_snapshot", "txn_first", "INTEGER NOT NULL DEFAULT -1"},
    {21, "partitions", "bytes_end", "INTEGER NOT NULL DEFAULT 0"},
};

static int stor_add_columns(sqlite3 *db, int version, char *err, size_t errlen) {
    for (size_t i = 0; i < sizeof stor_added_columns / sizeof *stor_added_columns; i++) {
        if (stor_added_columns[i].version != version) continue;
        char sql[256];
        int64_t has;
        snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
                 stor_added_columns[i].table, stor_added_columns[i].column);
        if (stor_query_int(db, sql, &has, err, errlen)) return -1;
        if (has) continue;
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", stor_added_columns[i].table,
                 stor_added_columns[i].column, stor_added_columns[i].decl);
        if (stor_exec(db, sql, sql, err, errlen)) return -1;
    }
    return 0;
}

static int stor_apply(sqlite3 *db, int64_t from, bool chain, char *err, size_t errlen) {
    char sql[64], what[64];
    if (from == 0) {
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d", STOR_APPLICATION_ID);
        if (stor_exec(db, sql, "set application_id", err, errlen)) return -1;
    }
#ifndef STOR_SCHEMA_GEN
    /* an empty database gets the chain's result at once: the chain re-parses the schema at every ALTER */
    if (from == 0 && !chain) {
        for (size_t i = 0; i < sizeof stor_fresh_schema / sizeof *stor_fresh_schema; i++)
            if (stor_exec(db, stor_fresh_schema[i], "create the schema", err, errlen)) return -1;
        from = STOR_MIGRATIONS_N;
    }
#else
    (void)chain;
#endif
    for (int64_t v = from; v < STOR_MIGRATIONS_N; v++) {
        snprintf(what, sizeof what, "schema migration %lld", (long long)v + 1);
        if (stor_add_columns(db, (int)v + 1, err, errlen)) return -1;
        if (stor_exec(db, stor_migrations[v], what, err, errlen)) return -1;
    }
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STOR_MIGRATIONS_N);
    return stor_exec(db, sql, "set user_version", err, errlen);
}

static int stor_migrate_as(sqlite3 *db, bool chain, int *version, char *err, size_t errlen) {
    /*
     * One IMMEDIATE transaction around check and migrations: a second process
     * opening the same file waits instead of migrating twice, and a failed
     * migration leaves the database at its old version.
     */
    if (stor_exec(db, "BEGIN IMMEDIATE", "begin migration", err, errlen)) return -1;
    int64_t v;
    int rc = stor_query_int(db, "PRAGMA user_version", &v, err, errlen);
    if (rc == 0) rc = stor_check_owner(db, v, err, errlen);
    if (rc == 0 && v < STOR_MIGRATIONS_N) rc = stor_apply(db, v, chain, err, errlen);
    if (rc == 0) rc = stor_exec(db, "COMMIT", "commit migration", err, errlen);
    if (rc) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    *version = STOR_MIGRATIONS_N;
    return 0;
}

int stor_migrate(sqlite3 *db, int *version, char *err, size_t errlen) {
    return stor_migrate_as(db, false, version, err, errlen);
}

int stor_migrate_by_chain(sqlite3 *db, int *version, char *err, size_t errlen) {
    return stor_migrate_as(db, true, version, err, errlen);
}
