/* Handlers, one file each (broker/api/<file>.c, indexed by table.c), and the checks they share (common.c). */
#ifndef API_H
#define API_H

#include "iam/authz.h"
#include "net/req.h"

typedef void (*api_fn)(srv *s, req *r);

typedef struct api_handler {
    int16_t key;
    int16_t vmin, vmax;      /* advertised and served */
    api_fn fn;
    /* the IAM action (iam/authz.h) it needs on a cluster, topic, group, transactional id; AUTHZ_NONE: none */
    int8_t authz[4];
    bool kafka_profile_only; /* MSK does not serve it: advertised and served in the kafka profile only */
} api_handler;

/* The one table of what mskmock serves, by key (NULL: not served); ApiVersions is computed from it. */
const api_handler *api_lookup(int16_t key);
/*
 * The range served under the active configuration: the table's, narrowed by api.versions.min and
 * api.versions.max and SaslHandshake v0's switch; *vmax < *vmin when the API is not served at all.
 */
void api_range(const srv *s, const api_handler *h, int16_t *vmin, int16_t *vmax);
/*
 * The range ApiVersions lists: api_range's, but for Kafka 4.x's Produce, listed from v0 though
 * v0-2 are refused (KAFKA-18659, kafka_versions_table.c).
 */
void api_advertised_range(const srv *s, const api_handler *h, int16_t *vmin, int16_t *vmax);
/*
 * The range Apache Kafka of a release (kafka.version, config.h) serves of an API
 * (kafka_versions_table.c): false when the version is none or the table has no row for the key;
 * *hi < *lo when that release does not serve it.
 */
bool api_kafka_range(int64_t version, int16_t key, int16_t *lo, int16_t *hi);
/* Whether api_range's floor (or ceiling) of h is kafka.version's, for the refusal's log line. */
bool api_bound_by_kafka_version(const srv *s, const api_handler *h, bool floor);

/*
 * One handler per API of protocol/kp_apis.h's list, named for its file: api_<file>(), in
 * broker/api/<file>.c (SaslHandshake and SaslAuthenticate: iam/sasl.c). The table (table.c)
 * says which are served.
 */
#define API_HANDLER_DECL_(key, E, Name, file) void api_##file(srv *s, req *r);
KP_APIS(API_HANDLER_DECL_)
#undef API_HANDLER_DECL_

/*
 * Where a partition request may be served: the partition must exist
 * (UNKNOWN_TOPIC_OR_PARTITION) and be led by the node the connection reached
 * (NOT_LEADER_OR_FOLLOWER), as Kafka answers. Logs the refusal. Returns 0 or
 * the error code.
 */
int16_t api_partition_check(srv *s, req *r, topic *t, int32_t index, partition **out);

/*
 * The client's current_leader_epoch (Fetch v9+, ListOffsets v4+,
 * OffsetForLeaderEpoch v2+) against the partition's: -1 means "not given";
 * newer than ours is UNKNOWN_LEADER_EPOCH, older FENCED_LEADER_EPOCH. Logs
 * the refusal unless quiet.
 */
int16_t api_leader_epoch_check(req *r, const partition *p, int32_t client_epoch, bool quiet);

/*
 * IAM authorization of one resource the request names (iam/authz.h; the action comes from
 * the handler table): 0, or the error code of the denial, logged. A null name counts as "".
 */
int16_t api_authz(srv *s, req *r, iam_resource_type type, kp_str name);

/*
 * The topic a request names, once the principal may act on it: NULL with *code
 * TOPIC_AUTHORIZATION_FAILED (a topic it may not see is not said to exist, as in Kafka) or
 * UNKNOWN_TOPIC_OR_PARTITION, each logged.
 */
topic *api_topic(srv *s, req *r, kp_str name, int16_t *code);

/*
 * A config resource (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs): topic (2), broker
 * (4, the cluster's) or, with group.configs.enable, group (32).
 */
int16_t api_authz_config(srv *s, req *r, int8_t resource_type, kp_str name);
/* Why a config resource type is not served, for the refusal line ("" when nothing more is known). */
const char *api_config_type_note(const srv *s, int8_t resource_type);

/*
 * One resource of AlterConfigs (replace_all: the legacy full replace, every op ALTER_SET) or
 * IncrementalAlterConfigs: authorized (api_authz_config), then altered by the owner of its type
 * (topic/config_alter.h, group/group.h), or INVALID_REQUEST for a type not served, logged.
 * Returns 0 or the error code; *msg is the error message, null unless refused.
 */
struct alter_op;
int16_t api_alter_config_resource(srv *s, req *r, int8_t resource_type, kp_str name, const struct alter_op *ops,
                                  int32_t n, bool replace_all, bool validate_only, kp_str *msg);

/* A group the request names: GROUP_AUTHORIZATION_FAILED, else NOT_COORDINATOR if another node leads it, else 0. */
int16_t api_group(srv *s, req *r, kp_str group_id);

/*
 * The partition mutation quota (topic/quota.c) for n partitions of `topic` created or deleted:
 * 0, or THROTTLING_QUOTA_EXCEEDED (logged) when the version can carry it (refusable) and the
 * quota is used up. *throttle keeps the longest wait seen; api_mutations_done puts it in the
 * response and, for versions that cannot carry the error, mutes the connection as Kafka does.
 */
int16_t api_mutations(srv *s, req *r, const char *topic, int64_t n, bool refusable, int32_t *throttle);
void api_mutations_done(req *r, bool refusable, int32_t throttle, int32_t *resp_throttle);

/*
 * OffsetCommit's and OffsetDelete's req.commit_failed: the storage commit holding their offset
 * changes failed, so each partition that was accepted gets NOT_COORDINATOR, as Kafka answers
 * when its append to __consumer_offsets fails with a storage error (the client finds the
 * coordinator again and retries); the partitions refused for their own reasons keep their codes.
 */
void api_offsets_commit_failed(srv *s, req *r);

/* Every served API with its range under the active configuration (ApiVersions, and its v0 fallback). */
void api_fill_versions(srv *s, req *r, kp_api_versions_response *resp);
/* transaction.version (kafka_versions_table.c): Produce, EndTxn and TxnOffsetCommit capped at their
   last V1 versions unless transactions V2 is finalized. */
void api_txn_version_cap(const srv *s, int16_t key, int16_t *vmax);
/* ApiVersions v3+: the features (metadata.version, group.version, ...) of kafka.version's release,
   capped at what mskmock implements (kafka_versions_table.c); none without a kafka.version. */
void api_fill_features(srv *s, req *r, kp_api_versions_response *resp);

#endif
