/*
 * group: the classic group coordinator, as Apache Kafka implements it
 * (GroupCoordinator and GroupMetadata in 3.x's core, GroupMetadataManager and
 * ClassicGroup in 4.x's group-coordinator module): states Empty,
 * PreparingRebalance, CompletingRebalance, Stable and Dead; the join phase
 * with MEMBER_ID_REQUIRED, the initial rebalance delay and the rebalance
 * timeout; protocol selection by vote; session expiry; static membership;
 * committed offsets. Groups are spread across the synthetic brokers by group
 * id; each group has one timer armed at its earliest deadline.
 *
 * The handlers (broker/api/join_group.c, ...) decode and validate the request
 * shape; everything about group state lives here.
 */
#ifndef GROUP_H
#define GROUP_H

#include "net/req.h"

typedef enum group_state { GS_EMPTY, GS_PREPARING, GS_COMPLETING, GS_STABLE, GS_DEAD } group_state;

typedef struct member_protocol {
    char *name;
    uint8_t *meta;
    size_t len;
} member_protocol;

typedef struct member {
    char *id;
    char *instance_id;            /* NULL: dynamic member */
    char *client_id;
    char *client_host;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    member_protocol *protocols;   /* the member's preference order */
    int nprotocols;
    uint8_t *assignment;
    size_t assignment_len;
    req *join;                    /* parked JoinGroup, answered when the join phase completes */
    req *sync;                    /* parked SyncGroup, answered when the leader's assignment arrives */
    bool joined;                  /* re-sent JoinGroup in the current join phase */
    bool pending_sync;            /* has not sent SyncGroup since the last join phase */
    bool is_new;                  /* first join still parked: the new-member timeout applies */
    int64_t deadline_ms;          /* session expiry (monotonic clock) */
    struct member *next;
} member;

typedef struct pending_member {
    char *id;
    int64_t deadline_ms;
    struct pending_member *next;
} pending_member;

typedef struct committed_offset {
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;               /* NUL-terminated after its metadata_len bytes, which may hold NULs */
    int32_t metadata_len;
    int64_t commit_ms;
    int64_t expire_ms;
} committed_offset;

typedef struct group {
    char *id;
    group_state state;
    int node;                     /* the coordinator among the synthetic brokers */
    char *protocol_type;          /* NULL: none yet / simple group */
    char *protocol_name;          /* selected protocol, NULL when none */
    int32_t generation;
    char *leader;                 /* member id */
    member *members;              /* in join order */
    int nmembers;
    pending_member *pending;      /* got MEMBER_ID_REQUIRED, not back yet */
    int64_t state_ms;             /* wall clock when the state was entered */
    int64_t join_deadline_ms;     /* PreparingRebalance: the rebalance timeout */
    int64_t delay_deadline_ms;    /* initial rebalance delay, 0 when not delaying */
    int64_t delay_remaining_ms;
    bool joined_during_delay;
    int64_t sync_deadline_ms;     /* CompletingRebalance: members that never sync are removed */
    committed_offset *offsets;
    int noffsets, cap_offsets;
    uv_timer_t *timer;
    srv *srv;
    struct cgroup *cg;            /* a consumer group (KIP-848, group/consumer.h); NULL: classic */
    struct group *next;
    name_link by_id;              /* in srv.groups_by_id */
} group;

void grp_init(srv *s);
int grp_load(srv *s);               /* groups and offsets from storage */
/* A commit with offset changes failed: every group's committed offsets again from storage. */
void grp_reload_offsets(srv *s);
void grp_close_all(srv *s);
group *grp_find(srv *s, const char *id, size_t len);
int grp_coordinator_for(const srv *s, const char *id, size_t len);
const char *grp_state_name(group_state st);
/*
 * Whether a group may go from one state to another: Kafka's table of valid previous states
 * (GroupMetadata.scala in 3.x, ClassicGroupState.java in 4.x); set_state asserts it.
 */
bool grp_transition_valid(group_state from, group_state to);

/* Common first checks: the request reached the coordinator (NOT_COORDINATOR). */
int16_t grp_check_coordinator(srv *s, req *r, kp_str group_id);

struct cg_topics;
/* topics: what a classic member joining a consumer group needs of topics (group/consumer.h). */
void grp_join(srv *s, req *r, const struct cg_topics *topics);
void grp_sync(srv *s, req *r);
int16_t grp_heartbeat(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id, kp_str instance_id);
int16_t grp_leave(srv *s, req *r, group *g, kp_str member_id, kp_str instance_id);

/* Offsets. */
int16_t grp_commit_check(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id, kp_str instance_id,
                         group **out);
/*
 * The same for TxnOffsetCommit (KIP-447, Kafka's validateOffsetCommit for transactions): no
 * REBALANCE_IN_PROGRESS, and a commit without member or generation is taken in any state.
 */
int16_t grp_txn_commit_check(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id,
                             kp_str instance_id, group **out);
/* Commit an offset; metadata is copied with its length (a null one is stored as "", as Kafka does). */
void grp_offset_put(srv *s, group *g, const char *topic, int32_t partition, int64_t offset, int32_t leader_epoch,
                    kp_str metadata, int64_t expire_ms);
committed_offset *grp_offset_get(group *g, const char *topic, size_t topic_len, int32_t partition);
void grp_offset_remove(srv *s, group *g, size_t index);
group *grp_get_or_create(srv *s, const char *id, size_t len);
/* max.consumer.groups: whether g (NULL: a group not yet known) may come to hold something; logs a refusal. */
bool grp_room(srv *s, req *r, const group *g, kp_str id);
/* The group's state as DescribeGroups and ListGroups name it, and its type ("classic" or "consumer"). */
const char *grp_state_label(const group *g);
const char *grp_type(const group *g);
/* Members of either kind. */
int grp_member_count(const group *g);
int grp_delete(srv *s, group *g);
void grp_forget_topic(srv *s, const char *topic);
void grp_rearm(group *g);
/* Handle every deadline that has passed (the group's timer calls it; tests call it after clk_advance). */
void grp_tick(group *g);
/*
 * The earliest deadline the group's timer waits for (monotonic ms), INT64_MAX when none. After
 * grp_tick it is always in the future: a deadline that is due is acted on, not waited for again.
 */
int64_t grp_next_deadline(const group *g);
/* Offset retention (KIP-211): run from housekeeping. */
void grp_expire_offsets(srv *s);

/*
 * Group configs (group_config.c): KIP-848's per-group settings, Kafka 4.0's GroupConfig set, for
 * any group id whether or not the group exists: its overrides, else the broker's defaults.
 */
const char *grp_config_name(size_t i); /* the i-th config, in Kafka's order; NULL past the last */
int8_t grp_config_type(const char *key); /* DescribeConfigs' config_type: 3 INT, 2 STRING (0: unknown key) */
const char *grp_config_doc(const char *key);
/* The group's value of key (NULL for an unknown key), the default written into buf when not overridden. */
const char *grp_config_value(const srv *s, const char *group_id, size_t len, const char *key, bool *is_default,
                             char *buf, size_t n);
/* What a KIP-848 coordinator reads for a group. */
typedef struct grp_consumer_settings {
    int32_t session_timeout_ms;    /* consumer.session.timeout.ms */
    int32_t heartbeat_interval_ms; /* consumer.heartbeat.interval.ms */
} grp_consumer_settings;
grp_consumer_settings grp_consumer_settings_of(const srv *s, const char *group_id, size_t len);
/* The group's overrides (admin API): fn(ctx, key, value) for each. */
void grp_config_overrides(const srv *s, const char *group_id, void (*fn)(void *ctx, const char *key, const char *value),
                          void *ctx);

enum { GRP_CONFIG_SET = 0, GRP_CONFIG_DELETE = 1, GRP_CONFIG_APPEND = 2, GRP_CONFIG_SUBTRACT = 3 };
typedef struct grp_config_op {
    kp_str key, value;
    int8_t op; /* GRP_CONFIG_*: IncrementalAlterConfigs' operation (AlterConfigs: SET) */
} grp_config_op;
/*
 * IncrementalAlterConfigs (replace false) or AlterConfigs (replace true: what ops do not name
 * goes back to its default) on one group, checked as Kafka's controller checks the result
 * (GroupConfig.validate: known names, types, the broker's bounds), then stored unless
 * validate_only. 0, or the error code with Kafka's message in *msg and one refusal line.
 */
int16_t grp_config_alter(srv *s, req *r, kp_str group_id, const grp_config_op *ops, int32_t n, bool replace,
                         bool validate_only, kp_str *msg);
int grp_configs_load(srv *s);
int grp_configs_clear(srv *s); /* every group's overrides (a reset of the admin API); part of the open commit */
void grp_configs_free(srv *s);

#endif
