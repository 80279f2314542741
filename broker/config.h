/*
 * config: every setting mskmock has, described once in a table (config.c)
 * with its type, bounds, documentation and per-profile default. A profile is
 * only a set of defaults; any key can be set on its own. Sources, later ones
 * winning: profile defaults, the properties file, MSKMOCK_<KEY> environment
 * variables, command-line flags. The profile is settled first, wherever it is
 * named, so it never resets keys set before it (cfg_load).
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cfg_topic_policy { TOPIC_POLICY_SERVERLESS, TOPIC_POLICY_KAFKA } cfg_topic_policy;

typedef enum cfg_validation { VALIDATION_STRICT, VALIDATION_LENIENT } cfg_validation;

/* group.consumer.migration.policy: Kafka's ConsumerGroupMigrationPolicy, in its order. */
typedef enum cfg_migration {
    MIGRATION_BIDIRECTIONAL,
    MIGRATION_UPGRADE,
    MIGRATION_DOWNGRADE,
    MIGRATION_DISABLED
} cfg_migration;

typedef enum cfg_profile { PROFILE_SERVERLESS, PROFILE_PROVISIONED, PROFILE_KAFKA } cfg_profile;
/*
 * kafka.version: the Apache Kafka release whose API ranges and features the broker answers
 * (broker/api/kafka_versions_table.c has one column per release, in this order). NONE: no
 * release, the ranges mskmock serves (the serverless profile's only value); LATEST is resolved
 * to the newest release by cfg_finish. CFG_KAFKA_VERSIONS is the key's list, in the same order.
 */
typedef enum cfg_kafka_version {
    KAFKA_VERSION_NONE,
    KAFKA_3_6,
    KAFKA_3_7,
    KAFKA_3_8,
    KAFKA_3_9,
    KAFKA_4_0,
    KAFKA_4_1,
    KAFKA_4_2,
    KAFKA_VERSION_LATEST
} cfg_kafka_version;
#define CFG_KAFKA_VERSIONS "none|3.6|3.7|3.8|3.9|4.0|4.1|4.2|latest"
#define CFG_KAFKA_RELEASES (KAFKA_VERSION_LATEST - 1) /* the releases: KAFKA_3_6 .. KAFKA_4_2 */

/* controller.visibility: which responses name a controller (broker/api/metadata.c, describe_cluster.c) */
typedef enum cfg_controller { CONTROLLER_METADATA, CONTROLLER_ALL, CONTROLLER_NONE } cfg_controller;

#define CFG_MAX_BROKERS 64
#define CFG_API_KEYS 128 /* API keys a version floor or ceiling can name: 0..127 */

/* Where the default port layout starts: admin.port 9080, plaintext.port 9092, iam.port 9098. */
#define CFG_PORT_BASE 9080

typedef struct config {
    int64_t profile;
    char *data_dir;
    char *log_level;
    int64_t log_format;
    char *bind_address;
    char *advertised_host;
    int64_t plaintext_port;
    int64_t iam_port;
    int64_t sasl_plaintext_port;
    int64_t external_port;
    int64_t external_iam_port;
    bool ports_auto;
    int64_t port_base;       /* every port key is moved by port_base - CFG_PORT_BASE (cfg_finish) */
    bool port_base_applied;
    int64_t admin_port;
    int64_t aws_port;        /* the AWS APIs' HTTP listener (broker/aws/); 0: off */
    int64_t aws_cluster_transition_ms; /* CREATING and DELETING last this long */
    int64_t aws_max_clusters;          /* clusters CreateClusterV2 may add */
    bool aws_tls;            /* aws.port serves HTTPS with the IAM listener's certificate */
    char *admin_token;
    char *external_advertised_host;
    char *ready_file;
    char *tls_cert_file;
    char *tls_key_file;
    char *tls_hosts;
    char *sasl_enabled_mechanisms;
    bool sasl_handshake_v0_enable;
    char *api_versions_min;
    char *api_versions_max;
    int64_t kafka_version; /* cfg_kafka_version; never LATEST after cfg_finish */
    int64_t controller_visibility;
    char *iam_region;
    char *iam_oauthbearer_hosts;
    int64_t iam_clock_skew_ms;
    char *iam_identities_file;
    bool iam_session_cap_by_token;
    int64_t connections_max_reauth_ms;
    int64_t iam_session_min_ms;
    int64_t iam_max_connects_per_second;
    int64_t iam_credentials_port;
    char *iam_credentials_authorization_token;
    char *iam_credentials_authorization_token_file;
    int64_t iam_credentials_rotation_interval_ms;
    int64_t iam_credentials_lifetime_ms;
    bool iam_credentials_new_session_name;
    int64_t iam_token_invalidation;
    int64_t iam_authorization_default;
    bool iam_authorization_idempotent_relaxed;
    int64_t iam_policy_propagation_ms;
    char *plaintext_principal;
    char *msk_account_id;
    char *msk_cluster_name;
    char *msk_cluster_uuid;
    int64_t broker_count;
    char *broker_ids;
    char *cluster_id;
    int64_t socket_request_max_bytes;
    int64_t queued_max_request_bytes;
    int64_t sasl_server_max_receive_size;
    int64_t socket_response_queue_max_bytes;
    int64_t request_read_timeout_ms;
    int64_t connections_max_idle_ms;
    bool auto_create_topics_enable;
    int64_t num_partitions;
    char *topics_create;
    int64_t default_replication_factor;
    int64_t min_insync_replicas; /* 0 until cfg_finish resolves it from broker.count */
    int64_t message_max_bytes;
    int64_t fetch_max_bytes;
    int64_t max_partitions;
    int64_t max_consumer_groups;
    int64_t max_connections;
    int64_t max_connection_creation_rate;
    int64_t max_partition_mutations_per_5_minutes;
    int64_t max_request_rate;
    int64_t quota_partition_ingress_bytes;
    int64_t quota_partition_egress_bytes;
    int64_t quota_cluster_ingress_bytes;
    int64_t quota_cluster_egress_bytes;
    int64_t log_retention_ms;
    int64_t log_retention_bytes;
    int64_t log_retention_check_interval_ms;
    int64_t log_cleaner_enable;
    int64_t log_cleaner_backoff_ms;
    int64_t log_cleaner_delete_retention_ms;
    int64_t log_cleaner_min_compaction_lag_ms;
    int64_t log_cleaner_max_compaction_lag_ms;
    int64_t log_cleaner_dedupe_buffer_size;
    int64_t log_cleaner_slice_ms;
    int64_t log_cleaner_io_max_bytes_per_second;
    int64_t storage_sync;
    int64_t storage_startup_check_ms;
    int64_t storage_verify; /* stor_verify_mode: off|start|full */
    int64_t storage_min_free_bytes;
    int64_t storage_segment_bytes;
    int64_t fetch_max_wait_cap_ms;
    int64_t topic_config_policy;
    int64_t group_min_session_timeout_ms;
    int64_t group_max_session_timeout_ms;
    int64_t group_initial_rebalance_delay_ms;
    int64_t group_max_size;
    int64_t offset_metadata_max_bytes;
    int64_t offsets_retention_minutes;
    int64_t offsets_topic_num_partitions;
    int64_t transaction_state_log_num_partitions;
    int64_t offsets_retention_check_interval_ms;
    int64_t group_consumer_protocol_validation;
    bool group_configs_enable;
    char *group_coordinator_rebalance_protocols;
    int64_t group_consumer_max_size;
    int64_t group_consumer_migration_policy;
    int64_t group_consumer_session_timeout_ms;
    int64_t group_consumer_min_session_timeout_ms;
    int64_t group_consumer_max_session_timeout_ms;
    int64_t group_consumer_heartbeat_interval_ms;
    int64_t group_consumer_min_heartbeat_interval_ms;
    int64_t group_consumer_max_heartbeat_interval_ms;
    int64_t transaction_max_timeout_ms;
    int64_t transactional_id_expiration_ms;
    int64_t transaction_abort_check_interval_ms;
    int64_t transaction_expire_check_interval_ms;
    int64_t transaction_marker_delay_ms;
    int64_t transaction_version;   /* the transaction.version feature finalized: 2 serves TV2 (KIP-890 part 2) */

    /* derived */
    int32_t node_ids[CFG_MAX_BROKERS];
    int16_t api_floor[CFG_API_KEYS];   /* api.versions.min per key; -1: none */
    int16_t api_ceiling[CFG_API_KEYS]; /* api.versions.max per key; -1: none */
} config;

/* Fill cfg with the defaults of the profile. */
void cfg_defaults(config *cfg, cfg_profile p);
/* Apply one key=value; returns 0 or -1 with a reason in err. "profile" is only checked here. */
int cfg_set(config *cfg, const char *key, const char *value, char *err, size_t errlen);
/* Apply a properties file; on error err holds "file:line: reason". */
int cfg_load_file(config *cfg, const char *path, char *err, size_t errlen);

/* A key=value from the command line; flag names it in errors ("--set", "--data-dir"). */
typedef struct cfg_arg {
    const char *flag;
    const char *key;
    const char *value;
} cfg_arg;
/*
 * The whole configuration: the properties file (may be NULL), then MSKMOCK_<KEY> variables,
 * then the command line's keys in order; later sources win. The profile is settled first
 * (the last one given anywhere) and its defaults applied before any key, so naming it after
 * other keys resets none of them.
 */
int cfg_load(config *cfg, const char *file, const cfg_arg *args, int nargs, char *err, size_t errlen);
/* Check cross-key rules and compute derived values. */
int cfg_finish(config *cfg, char *err, size_t errlen);
void cfg_free(config *cfg);

/*
 * Where a configuration came from (the file and the command line's keys), kept so that a cluster
 * the control plane creates is configured as the configured one was, with its own keys over it
 * (its profile, name, ports): a profile is a set of defaults, and the user's keys still win.
 */
typedef struct cfg_source {
    char *file;
    cfg_arg *args;
    int nargs;
} cfg_source;
void cfg_source_keep(cfg_source *src, const char *file, const cfg_arg *args, int nargs);
/* cfg_load and cfg_finish of src with over[] after its keys. */
int cfg_load_over(config *cfg, const cfg_source *src, const cfg_arg *over, int nover, char *err, size_t errlen);
void cfg_source_free(cfg_source *src);

/* For documentation checks and --help: the key table. */
typedef struct cfg_key_info {
    const char *name;
    const char *doc;
    const char *dflt[3]; /* the default in each profile (serverless, provisioned, kafka) */
} cfg_key_info;
size_t cfg_key_count(void);
cfg_key_info cfg_key_at(size_t i);
const char *cfg_profile_name(cfg_profile p);
/* "3.6", "4.0", ... as kafka.version spells it; "none" for KAFKA_VERSION_NONE. */
const char *cfg_kafka_version_name(int64_t v);
int cfg_profile_parse(const char *s, cfg_profile *out);

/*
 * For a port another program holds: which key moves it, as "; another program holds it: move
 * <key> (now <value>) to free ports below 32768 ..., or start with --ports auto". per_broker:
 * broker i listens on the key's port + i.
 */
const char *cfg_port_taken_hint(char *buf, size_t n, const char *key, long value, bool per_broker);

/* Whether an environment name, as a key ("build.dir"), is one the project's tooling reads, not a key. */
bool cfg_is_tooling_env(const char *key);

#endif
