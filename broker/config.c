/*
 * Every configuration key in one table (config.h): type, bounds, per-profile defaults and the
 * line of documentation --help and --man print (a unit test checks that conf/mskmock.properties
 * documents every key). Reads the sources in order (properties file, MSKMOCK_* environment,
 * flags; the profile first), then cfg_finish checks what spans keys (ports, version ranges,
 * group bounds) before start-up.
 */
#include "config.h"

#include "kp.h"
#include "kp_mem.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

typedef enum { T_INT, T_BOOL, T_STR, T_ENUM } key_type;

typedef struct key_def {
    const char *name;
    key_type type;
    size_t off;
    /* defaults for serverless, provisioned, kafka; NULL means "as serverless" */
    const char *dflt[3];
    int64_t min, max;
    const char *enums; /* T_ENUM: names separated by '|', value = index */
    const char *doc;
} key_def;

#define K(n, t, m, d0, d1, d2, lo, hi, en, doc) {n, t, offsetof(config, m), {d0, d1, d2}, lo, hi, en, doc}

static const key_def keys[] = {
    K("profile", T_ENUM, profile, "serverless", NULL, NULL, 0, 0, "serverless|provisioned|kafka",
      "which product to imitate; only chooses the defaults of the other keys"),
    K("data.dir", T_STR, data_dir, "./data", NULL, NULL, 0, 0, NULL,
      "directory of the SQLite database (mskmock.db); :memory: keeps nothing. One broker per directory (it locks DIR/.lock)"),
    K("log.level", T_STR, log_level, "info", NULL, NULL, 0, 0, NULL, "error, warn, info, debug or trace"),
    K("log.format", T_ENUM, log_format, "text", NULL, NULL, 0, 0, "text|json",
      "text, or json: one object per line (ts, level, component, conn, client, principal, api, error_code, "
      "message), for log shippers"),
    K("bind.address", T_STR, bind_address, "127.0.0.1", NULL, NULL, 0, 0, NULL,
      "address the listeners bind (0.0.0.0 in containers)"),
    K("advertised.host", T_STR, advertised_host, "localhost", NULL, NULL, 0, 0, NULL,
      "host name put in Metadata for every synthetic broker"),
    K("plaintext.port", T_INT, plaintext_port, "9092", NULL, NULL, 0, 65535, NULL,
      "plaintext listener port of the first broker; broker i listens on this + i; 0: off"),
    K("iam.port", T_INT, iam_port, "9098", NULL, "0", 0, 65535, NULL,
      "TLS + SASL (IAM) listener port of the first broker, MSK's 9098; broker i listens on this + i; 0: off"),
    K("sasl.plaintext.port", T_INT, sasl_plaintext_port, "0", NULL, NULL, 0, 65535, NULL,
      "SASL (IAM) listener without TLS, first broker's port; 0: off"),
    K("external.port", T_INT, external_port, "0", NULL, NULL, 0, 65535, NULL,
      "second plaintext listener, advertised as external.advertised.host (for clients outside a container "
      "network, like bitnami/kafka's EXTERNAL listener); first broker's port, broker i on this + i; 0: off"),
    K("external.iam.port", T_INT, external_iam_port, "0", NULL, NULL, 0, 65535, NULL,
      "second TLS + SASL (IAM) listener, advertised as external.advertised.host; first broker's port; 0: off"),
    K("ports.auto", T_BOOL, ports_auto, "false", NULL, NULL, 0, 0, NULL,
      "every listener whose port is not 0 (and the credentials endpoint) binds a free port the OS picks, each on "
      "its own, for parallel tests; the ready line on stdout and ready.file say which (--ports auto)"),
    K("port.base", T_INT, port_base, "9080", NULL, NULL, 1, 65535, NULL,
      "moves every port key together, keeping their layout: each port used is its key's value - 9080 + port.base "
      "(port.base=19080: admin 19080, plaintext 19092-19094, iam 19098-19100); for a machine where another "
      "program holds 9080-9100 (--port-base N)"),
    K("admin.port", T_INT, admin_port, "9080", NULL, NULL, 0, 65535, NULL,
      "HTTP admin API and Prometheus metrics (/v1/..., /metrics; docs/admin-api.md), bound on bind.address; 0: off"),
    K("admin.token", T_STR, admin_token, "", NULL, NULL, 0, 0, NULL,
      "when set, the admin API wants 'Authorization: Bearer <token>' on everything but /v1/health and /v1/ready"),
    K("aws.port", T_INT, aws_port, "0", NULL, NULL, 0, 65535, NULL,
      "HTTP endpoint of the AWS APIs around the cluster: the kafka control plane (DescribeClusterV2, "
      "GetBootstrapBrokers, ...) and STS (GetCallerIdentity), SigV4-verified against iam.identities.file "
      "(docs/control-plane.md); bound on bind.address; 9081 is its place in the port.base layout; 0: off"),
    K("aws.cluster.transition.ms", T_INT, aws_cluster_transition_ms, "1000", NULL, NULL, 0, 3600000, NULL,
      "how long a cluster CreateClusterV2 made stays CREATING, and one DeleteCluster removed stays DELETING, before "
      "ACTIVE or gone: short, so that pollers (Terraform, waiters) are exercised; 0: at once"),
    K("aws.max.clusters", T_INT, aws_max_clusters, "10", NULL, NULL, 0, 1000, NULL,
      "clusters CreateClusterV2 may create beside the configured one (each has its own brokers, listeners and "
      "storage); one more is refused with BadRequestException"),
    K("aws.tls", T_BOOL, aws_tls, "false", NULL, NULL, 0, 0, NULL,
      "aws.port serves HTTPS instead of HTTP, with the certificate of the IAM listener (tls.cert.file, or the local "
      "CA's in <data.dir>/tls: clients trust the ready file's ca_file); the ready file's aws_url says https"),
    K("external.advertised.host", T_STR, external_advertised_host, "localhost", NULL, NULL, 0, 0, NULL,
      "host name put in Metadata for connections to the external listeners (the generated certificate covers it)"),
    K("ready.file", T_STR, ready_file, "", NULL, NULL, 0, 0, NULL,
      "file written (atomically, JSON with the pid and every bound port) once all listeners are bound and storage "
      "is open, and removed at exit; mskmock --probe reads it; empty: none"),
    K("tls.cert.file", T_STR, tls_cert_file, "", NULL, NULL, 0, 0, NULL,
      "PEM certificate (chain allowed) of the TLS listener; empty: a local CA is generated in <data.dir>/tls"),
    K("tls.key.file", T_STR, tls_key_file, "", NULL, NULL, 0, 0, NULL, "PEM key of tls.cert.file"),
    K("tls.hosts", T_STR, tls_hosts, "", NULL, NULL, 0, 0, NULL,
      "extra comma-separated host names the generated certificate covers (besides advertised.host and localhost)"),
    K("sasl.enabled.mechanisms", T_STR, sasl_enabled_mechanisms, "AWS_MSK_IAM,OAUTHBEARER", NULL, NULL, 0, 0, NULL,
      "SASL mechanisms offered in SaslHandshake"),
    K("sasl.handshake.v0.enable", T_BOOL, sasl_handshake_v0_enable, "false", "true", "true", 0, 0, NULL,
      "serve SaslHandshake v0 (raw SASL frames); MSK Serverless offers v1 only"),
    K("api.versions.min", T_STR, api_versions_min,
      "Produce=7,Fetch=10,Metadata=6,FindCoordinator=2,JoinGroup=4,Heartbeat=2,SyncGroup=2,"
      "DescribeGroups=2,ListGroups=2,CreateTopics=3,InitProducerId=1,OffsetForLeaderEpoch=2",
      "", "", 0, 0, NULL,
      "version floors, Name=version (or key=version) separated by commas: ApiVersions advertises them and a request "
      "below its floor closes the connection unanswered, as MSK Serverless does (ApiVersions below its floor gets "
      "Kafka's v0 UNSUPPORTED_VERSION answer instead); the default is MSK Serverless's 2022 ApiVersions, "
      "uncertain (see conf/mskmock.properties)"),
    K("api.versions.max", T_STR, api_versions_max, "", NULL, NULL, 0, 0, NULL,
      "version ceilings in the same form, to pin what a given MSK generation advertised; empty: what mskmock serves"),
    K("kafka.version", T_ENUM, kafka_version, "none", "3.8", "latest", 0, 0, CFG_KAFKA_VERSIONS,
      "the Apache Kafka release whose API version ranges (KIP-896's removals in 4.0 included) and ApiVersions "
      "features the provisioned and kafka profiles answer, within what mskmock serves; api.versions.min/max still "
      "win per API; latest: the newest listed; none: every version mskmock serves, no features (but transaction.version 2 when that key is 2). provisioned: 3.8, "
      "MSK's recommended version; a cluster CreateClusterV2 makes takes its kafkaVersion's. The serverless profile "
      "refuses any value but none: MSK Serverless names no Kafka version"),
    K("controller.visibility", T_ENUM, controller_visibility, "metadata", "all", "all", 0, 0, "metadata|all|none",
      "which responses name a controller: metadata (MSK Serverless: Metadata names a broker, where admin clients "
      "send CreateTopics, while DescribeCluster reports none, -1), all (Kafka), none (both -1)"),
    K("iam.region", T_STR, iam_region, "us-east-1", NULL, NULL, 0, 0, NULL,
      "the region IAM tokens must be scoped to"),
    K("iam.oauthbearer.hosts", T_STR, iam_oauthbearer_hosts,
      "kafka.{region}.amazonaws.com,kafka-serverless.{region}.amazonaws.com", NULL, NULL, 0, 0, NULL,
      "host names an OAUTHBEARER token may be signed for ({region} is replaced)"),
    K("iam.clock.skew.ms", T_INT, iam_clock_skew_ms, "300000", NULL, NULL, 0, INT32_MAX, NULL,
      "how far in the future a token's X-Amz-Date may be"),
    K("iam.identities.file", T_STR, iam_identities_file, "", NULL, NULL, 0, 0, NULL,
      "JSON file of the fake IAM identities (access keys, roles) tokens are checked against"),
    K("iam.session.cap.by.token", T_BOOL, iam_session_cap_by_token, "true", NULL, NULL, 0, 0, NULL,
      "the session lifetime also ends when the token (X-Amz-Date + X-Amz-Expires) does"),
    K("connections.max.reauth.ms", T_INT, connections_max_reauth_ms, "0", NULL, NULL, 0, INT64_MAX, NULL,
      "upper bound on a SASL session's lifetime (0: no bound but the credentials')"),
    K("iam.session.min.ms", T_INT, iam_session_min_ms, "1000", NULL, NULL, 0, INT32_MAX, NULL,
      "a session shorter than this fails with 'Session too short'"),
    K("iam.max.connects.per.second", T_INT, iam_max_connects_per_second, "100", NULL, NULL, 0, INT32_MAX, NULL,
      "new IAM authentications per second, cluster-wide; more get 'Too many connects' (0: no limit)"),
    K("iam.credentials.port", T_INT, iam_credentials_port, "0", NULL, NULL, 0, 65535, NULL,
      "HTTP port of the built-in container-credentials endpoint (GET /role/<name>); 0: off"),
    K("iam.credentials.authorization.token", T_STR, iam_credentials_authorization_token, "", NULL, NULL, 0, 0, NULL,
      "when set, the credentials endpoint serves only requests whose Authorization header is this token, as AWS "
      "SDKs send AWS_CONTAINER_AUTHORIZATION_TOKEN (401 without one, 403 with another); set it whenever the "
      "endpoint is reachable from other hosts (bind.address 0.0.0.0, a published container port)"),
    K("iam.credentials.authorization.token.file", T_STR, iam_credentials_authorization_token_file, "", NULL, NULL, 0,
      0, NULL, "file holding that token, read at start (a trailing newline is dropped), as "
      "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE is for the SDKs; not with iam.credentials.authorization.token"),
    K("iam.credentials.rotation.interval.ms", T_INT, iam_credentials_rotation_interval_ms, "21600000", NULL, NULL, 0,
      INT64_MAX, NULL, "how often each role's credentials are rotated (6 h, like ECS; 0: never)"),
    K("iam.credentials.lifetime.ms", T_INT, iam_credentials_lifetime_ms, "21600000", NULL, NULL, 1000, INT64_MAX,
      NULL, "how long issued role credentials stay valid"),
    K("iam.credentials.new.session.name", T_BOOL, iam_credentials_new_session_name, "false", NULL, NULL, 0, 0, NULL,
      "each rotation uses a new role-session name, so the principal changes (\"Cannot change principals\")"),
    K("iam.token.invalidation", T_ENUM, iam_token_invalidation, "credential-expiry", NULL, NULL, 0, 0,
      "credential-expiry|rotation|token-expiry",
      "what rotation does to tokens signed with superseded credentials: credential-expiry (MSK: valid until those "
      "credentials expire), rotation (refused from the rotation on), token-expiry (only the token's expiry counts)"),
    K("iam.authorization.default", T_ENUM, iam_authorization_default, "auto", NULL, NULL, 0, 0, "allow|deny|auto",
      "what an identity without \"policies\" may do: allow (everything), deny (nothing, as on MSK: it cannot even "
      "log in), or auto (deny as soon as the identities file gives any identity or role policies, allow when it "
      "gives none: IAM authentication without authorization)"),
    K("iam.authorization.idempotent.relaxed", T_BOOL, iam_authorization_idempotent_relaxed, "false", NULL, "true", 0,
      0, NULL,
      "InitProducerId without a transactional id passes with WriteData on any topic (Apache Kafka's KIP-679); "
      "false (MSK): it needs kafka-cluster:WriteDataIdempotently on the cluster"),
    K("iam.policy.propagation.ms", T_INT, iam_policy_propagation_ms, "0", NULL, NULL, 0, INT32_MAX, NULL,
      "policies reloaded with SIGHUP apply after this delay (MSK takes up to about a minute)"),
    K("plaintext.principal", T_STR, plaintext_principal, "", NULL, NULL, 0, 0, NULL,
      "identity (principal ARN or access key id) or role (name or ARN) whose policies apply to the plaintext "
      "listener; empty: plaintext connections are allowed everything"),
    K("msk.account.id", T_STR, msk_account_id, "123456789012", NULL, NULL, 0, 0, NULL,
      "AWS account in the cluster, topic, group and transactional-id ARNs that policies name"),
    K("msk.cluster.name", T_STR, msk_cluster_name, "mskmock", NULL, NULL, 0, 0, NULL,
      "cluster name in those ARNs: arn:aws:kafka:<iam.region>:<account>:topic/<name>/<uuid>/<topic>"),
    K("msk.cluster.uuid", T_STR, msk_cluster_uuid, "", NULL, NULL, 0, 0, NULL,
      "cluster uuid in those ARNs; empty: one is made on first start and kept in the data directory"),
    K("broker.count", T_INT, broker_count, "3", NULL, NULL, 1, CFG_MAX_BROKERS, NULL,
      "number of synthetic brokers in the one process"),
    K("broker.ids", T_STR, broker_ids, "", NULL, NULL, 0, 0, NULL,
      "comma-separated node ids, one per broker; empty: large non-contiguous ids as MSK Serverless uses "
      "(1, 2, 3... in the kafka profile)"),
    K("cluster.id", T_STR, cluster_id, "mskmock-cluster-0000000", NULL, NULL, 0, 0, NULL,
      "cluster id reported in Metadata and DescribeCluster"),
    K("socket.request.max.bytes", T_INT, socket_request_max_bytes, "104857600", NULL, NULL, 64, INT32_MAX, NULL,
      "largest request frame; a larger one closes the connection"),
    K("queued.max.request.bytes", T_INT, queued_max_request_bytes, "268435456", NULL, NULL, -1, INT64_MAX, NULL,
      "request bytes read and not yet answered, per listener kind (Kafka's key, KIP-72; Kafka's default -1 is "
      "unbounded): past it, connections sending large frames are not read until bytes are released, while small "
      "requests go on; the pool may overshoot by one frame (socket.request.max.bytes), so 256 MiB keeps a flood of "
      "100 MB frames under about 360 MB per listener kind; -1 or 0: no bound"),
    K("sasl.server.max.receive.size", T_INT, sasl_server_max_receive_size, "524288", NULL, NULL, 64, INT32_MAX,
      NULL, "largest frame on a SASL listener before the connection has authenticated; a larger one closes it "
      "before it is buffered"),
    K("socket.response.queue.max.bytes", T_INT, socket_response_queue_max_bytes, "1048576", NULL, NULL, 0,
      INT64_MAX, NULL, "unsent response bytes at which the broker stops reading a connection's requests until "
      "they have gone out (a client that never reads holds at most this much and one response)"),
    K("request.read.timeout.ms", T_INT, request_read_timeout_ms, "120000", NULL, NULL, 0, INT64_MAX, NULL,
      "a request frame (and a TLS handshake) must arrive whole within this long of its first byte, else the "
      "connection is closed (0: no limit)"),
    K("connections.max.idle.ms", T_INT, connections_max_idle_ms, "600000", NULL, NULL, 0, INT64_MAX, NULL,
      "idle connections are closed after this long (0: never)"),
    K("auto.create.topics.enable", T_BOOL, auto_create_topics_enable, "false", "false", "true", 0, 0, NULL,
      "create unknown topics on Metadata requests that allow it (MSK Serverless never does)"),
    K("num.partitions", T_INT, num_partitions, "1", NULL, NULL, 1, 100000, NULL,
      "partitions of auto-created topics and of CreateTopics with num_partitions -1"),
    K("topics.create", T_STR, topics_create, "", NULL, NULL, 0, 0, NULL,
      "topics created at start when missing (left as they are when present), as KAFKA_CREATE_TOPICS in compose "
      "files: name[:partitions[:replication factor][:compact|delete][:key=value]...], comma-separated; e.g. "
      "orders:3,events:6:compact; a bad entry stops start-up"),
    K("default.replication.factor", T_INT, default_replication_factor, "3", NULL, "1", 1, CFG_MAX_BROKERS, NULL,
      "replication factor reported for topics created with replication_factor -1"),
    K("min.insync.replicas", T_INT, min_insync_replicas, "0", NULL, "1", 0, INT32_MAX, NULL,
      "in-sync replicas a partition needs for acks=all (all) produce; fewer get NOT_ENOUGH_REPLICAS, as in Kafka; "
      "the default of every topic's min.insync.replicas. 0: from broker.count as MSK sets it by Availability "
      "Zones, 2 with three brokers or more, else 1 (1 in the kafka profile, Kafka's default)"),
    K("fetch.max.bytes", T_INT, fetch_max_bytes, "57671680", NULL, NULL, 1024, INT32_MAX, NULL,
      "most record bytes one Fetch response carries, whatever the request asks (Kafka's broker key; MSK Serverless: "
      "55 MB per request); the first batch is returned even if larger"),
    K("max.partitions", T_INT, max_partitions, "2400", "0", "0", 0, INT32_MAX, NULL,
      "partitions the cluster may hold (MSK Serverless: 2,400); CreateTopics and CreatePartitions past it get "
      "POLICY_VIOLATION; 0: no limit (one operation still makes at most 10,000, as Kafka's controller does)"),
    K("max.connections", T_INT, max_connections, "3000", "0", "0", 0, INT32_MAX, NULL,
      "client connections the broker holds at once (MSK Serverless: 3,000); past it new connections wait in the "
      "listen backlog until one closes, as Kafka's acceptor does; 0: no limit"),
    K("max.connection.creation.rate", T_INT, max_connection_creation_rate, "0", NULL, NULL, 0, INT32_MAX, NULL,
      "new connections accepted per second on all listeners together (Kafka's key); more wait in the listen "
      "backlog; 0: no limit (MSK's 100/s shows as iam.max.connects.per.second)"),
    K("quota.partition.ingress.bytes.per.second", T_INT, quota_partition_ingress_bytes, "5242880", "0", "0", 0,
      INT64_MAX, NULL, "produce bytes per second into one partition (MSK Serverless: 5 MiB/s); past it responses "
      "carry throttle_time_ms and the connection is muted that long, as Kafka's quotas do; 0: no quota"),
    K("quota.partition.egress.bytes.per.second", T_INT, quota_partition_egress_bytes, "10485760", "0", "0", 0,
      INT64_MAX, NULL, "fetch bytes per second out of one partition (MSK Serverless: 10 MiB/s); 0: no quota"),
    K("quota.cluster.ingress.bytes.per.second", T_INT, quota_cluster_ingress_bytes, "209715200", "0", "0", 0,
      INT64_MAX, NULL, "produce bytes per second into the whole cluster (MSK Serverless: 200 MiB/s); 0: no quota"),
    K("quota.cluster.egress.bytes.per.second", T_INT, quota_cluster_egress_bytes, "419430400", "0", "0", 0,
      INT64_MAX, NULL, "fetch bytes per second out of the whole cluster (MSK Serverless: 400 MiB/s); 0: no quota"),
    K("max.partition.mutations.per.5.minutes", T_INT, max_partition_mutations_per_5_minutes, "120", "0", "0", 0,
      INT32_MAX, NULL, "partitions created or deleted per 5 minutes (MSK Serverless: 120), as Kafka's controller "
      "mutation quota (KIP-599): past it CreateTopics v6+, CreatePartitions v3+ and DeleteTopics v5+ get "
      "THROTTLING_QUOTA_EXCEEDED, older versions are served and throttled; 0: no quota"),
    K("max.request.rate", T_INT, max_request_rate, "15000", "0", "0", 0, INT32_MAX, NULL,
      "requests per second the cluster serves (MSK Serverless: 15,000); past it responses carry throttle_time_ms "
      "and the connection is muted that long, as Kafka's request quota does; 0: no limit"),
    K("max.consumer.groups", T_INT, max_consumer_groups, "500", "0", "0", 0, INT32_MAX, NULL,
      "consumer groups the cluster may hold (MSK Serverless: 500); a new group past it gets "
      "GROUP_MAX_SIZE_REACHED on JoinGroup or OffsetCommit; 0: no limit"),
    K("message.max.bytes", T_INT, message_max_bytes, "1048588", NULL, NULL, 64, INT32_MAX, NULL,
      "default max.message.bytes of topics: a larger batch gets MESSAGE_TOO_LARGE"),
    K("log.retention.ms", T_INT, log_retention_ms, "604800000", NULL, NULL, -1, INT64_MAX, NULL,
      "default retention.ms of topics (-1: keep forever)"),
    K("log.retention.bytes", T_INT, log_retention_bytes, "268435456000", "-1", "-1", -1, INT64_MAX, NULL,
      "default retention.bytes of topic partitions (-1: no limit)"),
    K("log.retention.check.interval.ms", T_INT, log_retention_check_interval_ms, "300000", NULL, NULL, 10,
      INT64_MAX, NULL, "how often retention is enforced in the background"),
    K("log.cleaner.enable", T_BOOL, log_cleaner_enable, "true", NULL, NULL, 0, 0, NULL,
      "compact topics whose cleanup.policy includes compact (Kafka's log cleaner); false: they only grow"),
    K("log.cleaner.backoff.ms", T_INT, log_cleaner_backoff_ms, "15000", NULL, NULL, 10, INT64_MAX, NULL,
      "how often the cleaner looks for a compacted partition to clean when it has none"),
    K("log.cleaner.delete.retention.ms", T_INT, log_cleaner_delete_retention_ms, "86400000", NULL, NULL, 0,
      INT64_MAX, NULL, "default delete.retention.ms of topics: how long a tombstone outlives its first compaction"),
    K("log.cleaner.min.compaction.lag.ms", T_INT, log_cleaner_min_compaction_lag_ms, "0", NULL, NULL, 0, INT64_MAX,
      NULL, "default min.compaction.lag.ms of topics: records younger than this are not compacted"),
    K("log.cleaner.max.compaction.lag.ms", T_INT, log_cleaner_max_compaction_lag_ms, "9223372036854775807", NULL,
      NULL, 1, INT64_MAX, NULL, "default max.compaction.lag.ms of topics: a partition whose oldest uncompacted "
      "record is older than this is compacted whatever its dirty ratio"),
    K("log.cleaner.dedupe.buffer.size", T_INT, log_cleaner_dedupe_buffer_size, "134217728", NULL, NULL, 1048576,
      INT64_MAX, NULL, "most memory the cleaner's key map takes (24 bytes per distinct key); a pass over more keys "
      "stops where the map is full and the next pass goes on from there"),
    K("log.cleaner.io.max.bytes.per.second", T_INT, log_cleaner_io_max_bytes_per_second, "1073741824", NULL,
      "9223372036854775807", 1, INT64_MAX, NULL,
      "the cleaner's reads and writes on average at most this many bytes a second (Kafka's throttle; its "
      "default, and the kafka profile's, is unlimited): a pass at full speed delays other clients' answers more "
      "on a small machine"),
    K("log.cleaner.slice.ms", T_INT, log_cleaner_slice_ms, "2", NULL, NULL, 1, 1000, NULL,
      "the longest the cleaner holds the loop at a time: a pass runs on a worker thread and the loop swaps its "
      "result in, in steps of about 0.3 ms at most (one commit each) between which requests are "
      "served; an in-memory database's passes (no file a worker could read) run and are swapped in on the loop "
      "in slices of this long"),
    K("storage.sync", T_ENUM, storage_sync, "normal", NULL, NULL, 0, 0, "off|normal|full",
      "what is fsynced (the database is in WAL mode in all three); all survive kill -9: off (nothing synced) may corrupt on power loss, normal may lose the newest commits, full (each commit and its segment bytes synced) loses none"),
    K("storage.segment.bytes", T_INT, storage_segment_bytes, "16777216", NULL, NULL, 1048576, 1073741824, NULL,
      "record batches are appended to per-partition segment files next to the database (mskmock.db.segments); a "
      "segment is closed (and synced, unless storage.sync=off; with normal off the loop, about 40 s later) once the next batch would take it past this size, "
      "and deleted when retention, compaction or deletion leaves no batch in it"),
    K("storage.startup.check.ms", T_INT, storage_startup_check_ms, "3000", NULL, NULL, 0, INT64_MAX, NULL,
      "at start-up, check the database's structure (PRAGMA quick_check) for at most this long and refuse to "
      "start on damage (0: no check)"),
    K("storage.verify", T_ENUM, storage_verify, "start", NULL, NULL, 0, 0, "off|start|full",
      "segment files against the index: start (before start-up, each file the index names exists and holds its "
      "rows, the rows do not overlap, and each file's newest batch reads back with its CRC; a mismatch refuses to "
      "start, naming the file), full (every batch's CRC at start, and every batch a Fetch serves is checked first: "
      "one that fails is answered KAFKA_STORAGE_ERROR for its partition, logged, never sent), off (neither)"),
    K("storage.min.free.bytes", T_INT, storage_min_free_bytes, "67108864", NULL, NULL, 0, INT64_MAX, NULL,
      "produce is refused with KAFKA_STORAGE_ERROR while less than this would stay free for the database (free disk "
      "plus its free pages); the rest is kept for deletes, retention and metadata (0: no check)"),
    K("fetch.max.wait.cap.ms", T_INT, fetch_max_wait_cap_ms, "30000", NULL, NULL, 0, INT32_MAX, NULL,
      "upper bound on how long a Fetch long poll is parked, whatever max_wait_ms asks"),
    K("topic.config.policy", T_ENUM, topic_config_policy, "serverless", "kafka", "kafka", 0, 0, "serverless|kafka",
      "serverless: only the 7 topic configs MSK Serverless allows may be set (cleanup.policy only at creation), "
      "others get INVALID_CONFIG; kafka: every topic config Kafka knows"),
    K("group.min.session.timeout.ms", T_INT, group_min_session_timeout_ms, "6000", NULL, NULL, 0, INT32_MAX, NULL,
      "JoinGroup with a shorter session timeout gets INVALID_SESSION_TIMEOUT"),
    K("group.max.session.timeout.ms", T_INT, group_max_session_timeout_ms, "1800000", NULL, NULL, 0, INT32_MAX, NULL,
      "JoinGroup with a longer session timeout gets INVALID_SESSION_TIMEOUT"),
    K("group.initial.rebalance.delay.ms", T_INT, group_initial_rebalance_delay_ms, "3000", NULL, NULL, 0, INT32_MAX,
      NULL, "how long the first rebalance of an empty group waits for more members (tests usually set 0)"),
    K("group.max.size", T_INT, group_max_size, "2147483647", NULL, NULL, 1, INT32_MAX, NULL,
      "members per group; one more gets GROUP_MAX_SIZE_REACHED"),
    K("offset.metadata.max.bytes", T_INT, offset_metadata_max_bytes, "4096", NULL, NULL, 0, INT32_MAX, NULL,
      "longest commit metadata; longer gets OFFSET_METADATA_TOO_LARGE"),
    K("offsets.topic.num.partitions", T_INT, offsets_topic_num_partitions, "0", "50", "50", 0, 10000, NULL,
      "partitions of __consumer_offsets, listed in Metadata as an internal topic as Apache Kafka (and so MSK "
      "Provisioned) lists it; read-only and without records, since offsets live in SQLite; 0: not listed (the "
      "serverless profile: no public source shows MSK Serverless listing it)"),
    K("transaction.state.log.num.partitions", T_INT, transaction_state_log_num_partitions, "0", "50", "50", 0, 10000,
      NULL, "partitions of __transaction_state, listed like __consumer_offsets once a transactional producer has "
      "looked for its coordinator, as Kafka creates it then; 0: not listed"),
    K("offsets.retention.minutes", T_INT, offsets_retention_minutes, "10080", NULL, NULL, 1, INT32_MAX, NULL,
      "committed offsets of a group that stayed empty this long are removed"),
    K("offsets.retention.check.interval.ms", T_INT, offsets_retention_check_interval_ms, "600000", NULL, NULL, 10,
      INT64_MAX, NULL, "how often expired offsets are looked for"),
    K("transaction.max.timeout.ms", T_INT, transaction_max_timeout_ms, "900000", NULL, NULL, 1, INT32_MAX, NULL,
      "InitProducerId with a transaction.timeout.ms above this (or not above 0) gets INVALID_TRANSACTION_TIMEOUT"),
    K("transactional.id.expiration.ms", T_INT, transactional_id_expiration_ms, "604800000", NULL, NULL, 1, INT32_MAX,
      NULL, "a transactional id with no transaction for this long is forgotten (its producer id and epoch)"),
    K("transaction.abort.timed.out.transaction.cleanup.interval.ms", T_INT, transaction_abort_check_interval_ms,
      "10000", NULL, NULL, 1, INT32_MAX, NULL,
      "how often transactions open past their transaction.timeout.ms are looked for; each is aborted and its "
      "producer fenced (epoch + 1)"),
    K("transaction.remove.expired.transaction.cleanup.interval.ms", T_INT, transaction_expire_check_interval_ms,
      "3600000", NULL, NULL, 1, INT32_MAX, NULL,
      "how often transactional ids past transactional.id.expiration.ms are looked for"),
    K("transaction.version", T_INT, transaction_version, "1", "2", "2", 0, 2, NULL,
      "the highest transaction.version feature level finalized in ApiVersions (Kafka's broker-side name); 2 is "
      "transactions V2 (KIP-890 part 2: Produce v12, EndTxn v5 and TxnOffsetCommit v5, an epoch bump at every "
      "EndTxn). With a kafka.version, its release's level up to this (4.x finalizes 2, 3.x has no such feature); "
      "without one (serverless), 2 lists the feature alone. Below 2, those APIs are capped at v11, v4 and v4 and "
      "clients keep V1. serverless: 1 (no public evidence that MSK Serverless serves V2)"),
    K("transaction.marker.delay.ms", T_INT, transaction_marker_delay_ms, "0", NULL, NULL, 0, INT32_MAX, NULL,
      "test knob (not Kafka's): EndTxn is answered once PrepareCommit/PrepareAbort is stored, and the markers "
      "follow one partition per this many ms, so a crash can be placed between them; 0: the decision, every "
      "marker and the completion are stored in one commit before the answer"),
    K("group.consumer.protocol.validation", T_ENUM, group_consumer_protocol_validation, "strict", "lenient", "lenient",
      0, 0, "strict|lenient",
      "strict (MSK Serverless): JoinGroup/SyncGroup whose consumer-protocol bytes do not decode at their declared "
      "version get INVALID_REQUEST; lenient (Apache Kafka): the bytes are opaque"),
    K("group.configs.enable", T_BOOL, group_configs_enable, "false", NULL, "true", 0, 0, NULL,
      "DescribeConfigs, IncrementalAlterConfigs and AlterConfigs serve GROUP resources (type 32: KIP-848's group "
      "configs, Kafka 3.8+); false (MSK Serverless, whose API set predates them): INVALID_REQUEST, as a broker "
      "without them answers"),
    K("group.coordinator.rebalance.protocols", T_STR, group_coordinator_rebalance_protocols, "classic",
      "classic,consumer", "classic,consumer", 0, 0, NULL,
      "the group protocols served (Kafka's key): classic, and consumer for KIP-848's ConsumerGroupHeartbeat and "
      "ConsumerGroupDescribe where kafka.version is 4.0+ (MSK Provisioned on 4.x serves them; MSK Serverless is not "
      "known to)"),
    K("group.consumer.max.size", T_INT, group_consumer_max_size, "2147483647", NULL, NULL, 1, INT32_MAX, NULL,
      "members a consumer group (KIP-848) may hold; a member past it gets GROUP_MAX_SIZE_REACHED"),
    K("group.consumer.migration.policy", T_ENUM, group_consumer_migration_policy, "bidirectional", NULL, NULL, 0, 0,
      "bidirectional|upgrade|downgrade|disabled",
      "the online migration of a group with members between the classic and consumer protocols (Kafka's key, 4.x "
      "default): upgrade lets a consumer-protocol member join a classic group, which becomes a consumer group whose "
      "classic members carry on; downgrade turns it back into a classic group when its last consumer-protocol "
      "member leaves; empty groups change type whatever the policy"),
    K("group.consumer.session.timeout.ms", T_INT, group_consumer_session_timeout_ms, "45000", NULL, NULL, 1,
      INT32_MAX, NULL, "default consumer.session.timeout.ms of a group (KIP-848 consumer groups)"),
    K("group.consumer.min.session.timeout.ms", T_INT, group_consumer_min_session_timeout_ms, "45000", NULL, NULL, 1,
      INT32_MAX, NULL, "a group's consumer.session.timeout.ms below this gets INVALID_CONFIG"),
    K("group.consumer.max.session.timeout.ms", T_INT, group_consumer_max_session_timeout_ms, "60000", NULL, NULL, 1,
      INT32_MAX, NULL, "a group's consumer.session.timeout.ms above this gets INVALID_CONFIG"),
    K("group.consumer.heartbeat.interval.ms", T_INT, group_consumer_heartbeat_interval_ms, "5000", NULL, NULL, 1,
      INT32_MAX, NULL, "default consumer.heartbeat.interval.ms of a group (KIP-848 consumer groups)"),
    K("group.consumer.min.heartbeat.interval.ms", T_INT, group_consumer_min_heartbeat_interval_ms, "5000", NULL, NULL,
      1, INT32_MAX, NULL, "a group's consumer.heartbeat.interval.ms below this gets INVALID_CONFIG"),
    K("group.consumer.max.heartbeat.interval.ms", T_INT, group_consumer_max_heartbeat_interval_ms, "15000", NULL, NULL,
      1, INT32_MAX, NULL, "a group's consumer.heartbeat.interval.ms above this gets INVALID_CONFIG"),
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const profile_names[] = {"serverless", "provisioned", "kafka"};
static const char *const kafka_version_names[] = {"none", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "latest"};
_Static_assert(sizeof kafka_version_names / sizeof kafka_version_names[0] == KAFKA_VERSION_LATEST + 1,
               "kafka_version_names follows cfg_kafka_version");

const char *cfg_kafka_version_name(int64_t v) {
    return v >= 0 && v <= KAFKA_VERSION_LATEST ? kafka_version_names[v] : "?";
}

const char *cfg_profile_name(cfg_profile p) { return profile_names[p]; }

int cfg_profile_parse(const char *s, cfg_profile *out) {
    for (int i = 0; i < 3; i++)
        if (strcmp(s, profile_names[i]) == 0) {
            *out = (cfg_profile)i;
            return 0;
        }
    return -1;
}

size_t cfg_key_count(void) { return NKEYS; }
cfg_key_info cfg_key_at(size_t i) {
    cfg_key_info k = {keys[i].name, keys[i].doc, {keys[i].dflt[0], keys[i].dflt[1], keys[i].dflt[2]}};
    for (int p = 1; p < 3; p++)
        if (!k.dflt[p]) k.dflt[p] = k.dflt[0];
    return k;
}

static const key_def *find_key(const char *name) {
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0) return &keys[i];
    return NULL;
}

static int set_value(config *cfg, const key_def *k, const char *v, char *err, size_t errlen) {
    void *p = (char *)cfg + k->off;
    switch (k->type) {
    case T_INT: {
        errno = 0;
        char *end;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end) {
            snprintf(err, errlen, "%s: '%s' is not an integer", k->name, v);
            return -1;
        }
        if (x < k->min || x > k->max) {
            snprintf(err, errlen, "%s: %lld is outside [%lld, %lld]", k->name, x, (long long)k->min,
                     (long long)k->max);
            return -1;
        }
        *(int64_t *)p = x;
        return 0;
    }
    case T_BOOL:
        if (strcasecmp(v, "true") == 0)
            *(bool *)p = true;
        else if (strcasecmp(v, "false") == 0)
            *(bool *)p = false;
        else {
            snprintf(err, errlen, "%s: '%s' is neither true nor false", k->name, v);
            return -1;
        }
        return 0;
    case T_STR: {
        char *d = xstrdup(v);
        free(*(char **)p);
        *(char **)p = d;
        return 0;
    }
    case T_ENUM: {
        const char *s = k->enums;
        for (int idx = 0; s; idx++) {
            const char *bar = strchr(s, '|');
            size_t n = bar ? (size_t)(bar - s) : strlen(s);
            if (strlen(v) == n && strncmp(s, v, n) == 0) {
                *(int64_t *)p = idx;
                return 0;
            }
            s = bar ? bar + 1 : NULL;
        }
        snprintf(err, errlen, "%s: '%s' is not one of %s", k->name, v, k->enums);
        return -1;
    }
    }
    return -1;
}

void cfg_defaults(config *cfg, cfg_profile prof) {
    cfg_free(cfg);
    memset(cfg, 0, sizeof(*cfg));
    char err[256];
    for (size_t i = 0; i < NKEYS; i++) {
        const char *d = keys[i].dflt[prof] ? keys[i].dflt[prof] : keys[i].dflt[0];
        if (set_value(cfg, &keys[i], d, err, sizeof err) != 0) abort(); /* a bad table is a build bug */
    }
    cfg->profile = prof;
}

int cfg_set(config *cfg, const char *key, const char *value, char *err, size_t errlen) {
    const key_def *k = find_key(key);
    if (!k) {
        snprintf(err, errlen, "unknown key '%s'", key);
        return -1;
    }
    if (strcmp(key, "profile") == 0) {
        /* the profile was settled before any key was applied (cfg_load); here it is only checked */
        cfg_profile p;
        if (cfg_profile_parse(value, &p) != 0) {
            snprintf(err, errlen, "profile: '%s' is not one of serverless|provisioned|kafka", value);
            return -1;
        }
        return 0;
    }
    return set_value(cfg, k, value, err, errlen);
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

/*
 * Every source yields key=value entries in order; one pass finds the profile, a second
 * applies the keys, so "later sources win" holds for the profile as for any key.
 */
typedef int (*entry_fn)(void *ctx, const char *key, const char *value, char *err, size_t errlen);

static int each_file_entry(const char *path, entry_fn fn, void *ctx, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char line[4096], why[512];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#' || *s == '!') continue;
        char *eq = strpbrk(s, "=:");
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected key=value", path, lineno);
            rc = -1;
            break;
        }
        *eq = 0;
        if (fn(ctx, trim(s), trim(eq + 1), why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

/*
 * MSKMOCK_ names the project's own tooling reads (tools/, tests/, docker/), which are not keys:
 * exported in a developer's shell, they must not stop the broker (issue 31: "environment
 * MSKMOCK_REVISION: unknown key 'revision'"). Every other MSKMOCK_ name must be a key, so a
 * misspelt one still stops start-up. Names as they become keys (dots for underscores).
 */
static const char *const tooling_env[] = {
    "bin",           /* the broker binary the tests run */
    "werror",        /* tools/build: warnings are errors */
    "sanitize",      /* tools/build: the ASan/UBSan build */
    "build.dir",     /* tools/build: another build directory */
    "revision",      /* tools/build, docker/: the revision --version shows */
    "image",         /* tools/run-containers: the image under test */
    "start.timeout", /* tests/integration: how long a broker may take to start */
    "test.log",      /* unit tests: the log level they show */
    "test.timeout",  /* tests/containers: each language's bound */
    "suites.dir",    /* tools/client-suites: where the clients' suites are cached */
    "cli.bootstrap", /* mskmock topic|produce|consume: the brokers to ask first */
};
#define TOOLING_ENV_PREFIX "it." /* MSKMOCK_IT_*: settings of the integration tests */

bool cfg_is_tooling_env(const char *key) {
    if (strncmp(key, TOOLING_ENV_PREFIX, strlen(TOOLING_ENV_PREFIX)) == 0) return true;
    for (size_t i = 0; i < sizeof tooling_env / sizeof tooling_env[0]; i++)
        if (strcmp(key, tooling_env[i]) == 0) return true;
    return false;
}

const char *cfg_port_taken_hint(char *buf, size_t n, const char *key, long value, bool per_broker) {
    snprintf(buf, n, "; another program holds it: move %s (now %ld%s) to %s below 32768 (the kernel's ephemeral "
             "range), move every port together with --port-base N (or MSKMOCK_PORT_BASE=N), or start with --ports auto",
             key, value, per_broker ? "; broker i listens on it + i" : "", per_broker ? "free ports" : "a free port");
    return buf;
}

static int each_env_entry(entry_fn fn, void *ctx, char *err, size_t errlen) {
    char why[512];
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "MSKMOCK_", 8) != 0) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        char key[256];
        size_t n = (size_t)(eq - *e) - 8;
        if (n >= sizeof key) continue;
        for (size_t i = 0; i < n; i++) {
            char c = (*e)[8 + i];
            key[i] = c == '_' ? '.' : (char)tolower((unsigned char)c);
        }
        key[n] = 0;
        if (cfg_is_tooling_env(key)) continue;
        if (fn(ctx, key, eq + 1, why, sizeof why) != 0) {
            snprintf(err, errlen, "environment %.*s: %s", (int)(eq - *e), *e, why);
            return -1;
        }
    }
    return 0;
}

static int each_arg_entry(const cfg_arg *args, int nargs, entry_fn fn, void *ctx, char *err, size_t errlen) {
    char why[512];
    for (int i = 0; i < nargs; i++) {
        if (fn(ctx, args[i].key, args[i].value, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s: %s", args[i].flag, why);
            return -1;
        }
    }
    return 0;
}

static int each_entry(const char *file, const cfg_arg *args, int nargs, entry_fn fn, void *ctx, char *err,
                      size_t errlen) {
    if (file && each_file_entry(file, fn, ctx, err, errlen) != 0) return -1;
    if (each_env_entry(fn, ctx, err, errlen) != 0) return -1;
    return each_arg_entry(args, nargs, fn, ctx, err, errlen);
}

static int find_profile(void *ctx, const char *key, const char *value, char *err, size_t errlen) {
    if (strcmp(key, "profile") != 0) return 0;
    if (cfg_profile_parse(value, ctx) != 0) {
        snprintf(err, errlen, "profile: '%s' is not one of serverless|provisioned|kafka", value);
        return -1;
    }
    return 0;
}

static int apply_entry(void *ctx, const char *key, const char *value, char *err, size_t errlen) {
    return cfg_set(ctx, key, value, err, errlen);
}

int cfg_load(config *cfg, const char *file, const cfg_arg *args, int nargs, char *err, size_t errlen) {
    cfg_profile prof = PROFILE_SERVERLESS;
    if (each_entry(file, args, nargs, find_profile, &prof, err, errlen) != 0) return -1;
    cfg_defaults(cfg, prof);
    return each_entry(file, args, nargs, apply_entry, cfg, err, errlen);
}

void cfg_source_keep(cfg_source *src, const char *file, const cfg_arg *args, int nargs) {
    src->file = file ? xstrdup(file) : NULL;
    src->args = xcalloc((size_t)nargs + 1, sizeof *src->args);
    src->nargs = nargs;
    for (int i = 0; i < nargs; i++)
        src->args[i] = (cfg_arg){xstrdup(args[i].flag), xstrdup(args[i].key), xstrdup(args[i].value)};
}

int cfg_load_over(config *cfg, const cfg_source *src, const cfg_arg *over, int nover, char *err, size_t errlen) {
    cfg_arg *all = xcalloc((size_t)(src->nargs + nover) + 1, sizeof *all);
    memcpy(all, src->args, (size_t)src->nargs * sizeof *all);
    memcpy(all + src->nargs, over, (size_t)nover * sizeof *all);
    int rc = cfg_load(cfg, src->file, all, src->nargs + nover, err, errlen);
    free(all);
    return rc ? rc : cfg_finish(cfg, err, errlen);
}

void cfg_source_free(cfg_source *src) {
    for (int i = 0; i < src->nargs; i++) {
        free((char *)src->args[i].flag);
        free((char *)src->args[i].key);
        free((char *)src->args[i].value);
    }
    free(src->args);
    free(src->file);
    *src = (cfg_source){0};
}

int cfg_load_file(config *cfg, const char *path, char *err, size_t errlen) {
    return each_file_entry(path, apply_entry, cfg, err, errlen);
}

/* "Name=v,Name=v" (names as Kafka's, or numeric keys) into per-key versions. */
static int parse_versions(const char *key, const char *list, int16_t *out, char *err, size_t errlen) {
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *eq = strchr(p, '=');
        const char *comma = strchr(p, ',');
        if (!comma) comma = p + strlen(p);
        if (!eq || eq > comma) {
            snprintf(err, errlen, "%s: '%.*s' is not Name=version", key, (int)(comma - p), p);
            return -1;
        }
        size_t nlen = (size_t)(eq - p);
        while (nlen && p[nlen - 1] == ' ') nlen--;
        char *end;
        long k = strtol(p, &end, 10);
        const kp_msg *m = end == p + nlen && nlen ? kp_msg_get((int16_t)(k >= 0 && k < CFG_API_KEYS ? k : -1))
                                                  : kp_msg_by_name(p, nlen);
        if (!m || m->key < 0 || m->key >= CFG_API_KEYS) {
            snprintf(err, errlen, "%s: '%.*s' is not an API mskmock knows", key, (int)nlen, p);
            return -1;
        }
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        while (*end == ' ') end++;
        if (errno || end == eq + 1 || end != comma || v < 0 || v > INT16_MAX) {
            snprintf(err, errlen, "%s: '%.*s' is not a version of %s", key, (int)(comma - eq - 1), eq + 1, m->name);
            return -1;
        }
        out[m->key] = (int16_t)v;
        p = comma;
    }
    return 0;
}

/* MSK Serverless hands out ids like these (seen in the wild: 41, 46, 96, 106, 153). */
static const int32_t msk_ids[] = {41, 96, 153, 46, 106, 201, 77, 130, 188, 63};

/* The consumer-group defaults within their bounds and the heartbeat inside the session, as Kafka's
   GroupCoordinatorConfig requires at start-up: otherwise no group config could ever be valid. */
static int check_group_consumer_bounds(const config *cfg, char *err, size_t errlen) {
    const struct {
        const char *lo, *hi;
        int64_t a, b;
        bool strict;
    } rules[] = {
        {"group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms",
         cfg->group_consumer_min_session_timeout_ms, cfg->group_consumer_max_session_timeout_ms, false},
        {"group.consumer.min.session.timeout.ms", "group.consumer.session.timeout.ms",
         cfg->group_consumer_min_session_timeout_ms, cfg->group_consumer_session_timeout_ms, false},
        {"group.consumer.session.timeout.ms", "group.consumer.max.session.timeout.ms",
         cfg->group_consumer_session_timeout_ms, cfg->group_consumer_max_session_timeout_ms, false},
        {"group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
         cfg->group_consumer_min_heartbeat_interval_ms, cfg->group_consumer_max_heartbeat_interval_ms, false},
        {"group.consumer.min.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms",
         cfg->group_consumer_min_heartbeat_interval_ms, cfg->group_consumer_heartbeat_interval_ms, false},
        {"group.consumer.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
         cfg->group_consumer_heartbeat_interval_ms, cfg->group_consumer_max_heartbeat_interval_ms, false},
        {"group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms",
         cfg->group_consumer_heartbeat_interval_ms, cfg->group_consumer_session_timeout_ms, true},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].a > rules[i].b || (rules[i].strict && rules[i].a == rules[i].b)) {
            snprintf(err, errlen, "%s (%lld) must be %s %s (%lld)", rules[i].lo, (long long)rules[i].a,
                     rules[i].strict ? "less than" : "at most", rules[i].hi, (long long)rules[i].b);
            return -1;
        }
    /* group.coordinator.rebalance.protocols: Kafka's GroupCoordinatorConfig requires classic among them */
    const char *v = cfg->group_coordinator_rebalance_protocols ? cfg->group_coordinator_rebalance_protocols : "";
    bool classic = false;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        const char *w = p;
        size_t wn = n;
        while (wn && *w == ' ') w++, wn--;
        while (wn && w[wn - 1] == ' ') wn--;
        if (wn == 7 && strncmp(w, "classic", 7) == 0) classic = true;
        else if (!(wn == 8 && strncmp(w, "consumer", 8) == 0)) {
            snprintf(err, errlen, "group.coordinator.rebalance.protocols: unknown protocol '%.*s' (classic, consumer)",
                     (int)wn, w);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    if (!classic) {
        snprintf(err, errlen, "group.coordinator.rebalance.protocols must contain classic (got '%s')", v);
        return -1;
    }
    return 0;
}

/* port.base: every port key that is on moves by the same amount, the layout kept. */
static int apply_port_base(config *cfg, char *err, size_t errlen) {
    if (cfg->port_base_applied || cfg->port_base == CFG_PORT_BASE) return 0;
    cfg->port_base_applied = true;
    struct {
        const char *name;
        int64_t *port;
    } keys[] = {{"plaintext.port", &cfg->plaintext_port},       {"iam.port", &cfg->iam_port},
                {"sasl.plaintext.port", &cfg->sasl_plaintext_port}, {"external.port", &cfg->external_port},
                {"external.iam.port", &cfg->external_iam_port},   {"admin.port", &cfg->admin_port},
                {"aws.port", &cfg->aws_port},
                {"iam.credentials.port", &cfg->iam_credentials_port}};
    int64_t shift = cfg->port_base - CFG_PORT_BASE;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!*keys[i].port) continue; /* off stays off */
        int64_t moved = *keys[i].port + shift;
        if (moved < 1 || moved > 65535) {
            snprintf(err, errlen, "port.base %lld moves %s %lld to %lld, outside 1-65535", (long long)cfg->port_base,
                     keys[i].name, (long long)*keys[i].port, (long long)moved);
            return -1;
        }
        *keys[i].port = moved;
    }
    return 0;
}

int cfg_finish(config *cfg, char *err, size_t errlen) {
    int n = (int)cfg->broker_count;
    if (apply_port_base(cfg, err, errlen) != 0) return -1;
    for (int k = 0; k < CFG_API_KEYS; k++) {
        cfg->api_floor[k] = -1;
        cfg->api_ceiling[k] = -1;
    }
    if (parse_versions("api.versions.min", cfg->api_versions_min, cfg->api_floor, err, errlen) != 0 ||
        parse_versions("api.versions.max", cfg->api_versions_max, cfg->api_ceiling, err, errlen) != 0)
        return -1;
    const struct {
        const char *name;
        int64_t port;
    } ports[] = {{"plaintext.port", cfg->plaintext_port},
                 {"iam.port", cfg->iam_port},
                 {"sasl.plaintext.port", cfg->sasl_plaintext_port},
                 {"external.port", cfg->external_port},
                 {"external.iam.port", cfg->external_iam_port}};
    for (int i = 0; i < (int)(sizeof ports / sizeof ports[0]) && !cfg->ports_auto; i++) {
        if (ports[i].port && ports[i].port + n - 1 > 65535) {
            snprintf(err, errlen, "%s: %lld + broker.count %d runs past port 65535", ports[i].name,
                     (long long)ports[i].port, n);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (ports[i].port && ports[j].port && ports[i].port < ports[j].port + n && ports[j].port < ports[i].port + n) {
                snprintf(err, errlen, "%s %lld and %s %lld overlap for broker.count %d", ports[j].name,
                         (long long)ports[j].port, ports[i].name, (long long)ports[i].port, n);
                return -1;
            }
    }
    if (check_group_consumer_bounds(cfg, err, errlen) != 0) return -1;
    /* MSK Serverless lets no one choose a Kafka version and says of none that it runs it: its ranges are its own */
    if (cfg->profile == PROFILE_SERVERLESS && cfg->kafka_version != KAFKA_VERSION_NONE) {
        snprintf(err, errlen, "kafka.version: the serverless profile has none (MSK Serverless names no Kafka version; "
                 "api.versions.min/max pin its ranges); use it with profile=provisioned or kafka");
        return -1;
    }
    if (cfg->kafka_version == KAFKA_VERSION_LATEST) cfg->kafka_version = KAFKA_VERSION_LATEST - 1;
    /* https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html */
    if (cfg->min_insync_replicas == 0) cfg->min_insync_replicas = n >= 3 ? 2 : 1;
    if (!*cfg->broker_ids) {
        for (int i = 0; i < n; i++) {
            int base = (int)(sizeof msk_ids / sizeof msk_ids[0]);
            cfg->node_ids[i] = cfg->profile == PROFILE_KAFKA ? i + 1 : msk_ids[i % base] + 1000 * (i / base);
        }
        return 0;
    }
    const char *s = cfg->broker_ids;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
            snprintf(err, errlen, "broker.ids: '%s' is not a list of %d node ids", cfg->broker_ids, n);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (cfg->node_ids[j] == v) {
                snprintf(err, errlen, "broker.ids: node id %ld appears twice", v);
                return -1;
            }
        cfg->node_ids[i] = (int32_t)v;
        s = *end ? end + 1 : end;
        if (!*end && i + 1 < n) {
            snprintf(err, errlen, "broker.ids: %d ids for broker.count %d", i + 1, n);
            return -1;
        }
    }
    if (*s) {
        snprintf(err, errlen, "broker.ids: more ids than broker.count %d", n);
        return -1;
    }
    return 0;
}

void cfg_free(config *cfg) {
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].type == T_STR) {
            char **p = (char **)((char *)cfg + keys[i].off);
            free(*p);
            *p = NULL;
        }
}
