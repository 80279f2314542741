/*
 * consumer: the consumer group protocol's coordinator (KIP-848), as Apache Kafka 4.x's
 * group-coordinator module implements it (GroupMetadataManager.consumerGroupHeartbeat,
 * modern/consumer/ConsumerGroup, CurrentAssignmentBuilder, TargetAssignmentBuilder and the
 * uniform and range assignors): a group epoch bumped whenever membership, subscriptions or the
 * subscribed topics' partitions change, a target assignment computed on the broker at that epoch
 * (the assignment epoch), and members reconciled towards it one heartbeat at a time, each member
 * getting a partition only once its previous owner has revoked it.
 *
 * A consumer group is a `group` (group.h) whose `cg` is set: the id namespace, the committed
 * offsets, the coordinator node and the group's one timer are shared with classic groups; the
 * classic member list stays empty. Subscriptions by regular expression and the online migration
 * between the classic and consumer protocols are not served (refused, logged).
 *
 * group/ sits below topic/, so what the coordinator needs of topics (partition counts, topic ids)
 * comes from the caller as a cg_topics resolver.
 */
#ifndef GROUP_CONSUMER_H
#define GROUP_CONSUMER_H

#include "group.h"

/* Partitions by topic name: topics in name order, partitions ascending, none empty. */
typedef struct cg_topic_parts {
    char *topic;
    int32_t *p;
    int n;
} cg_topic_parts;
typedef struct cg_parts {
    cg_topic_parts *t;
    int n;
} cg_parts;

/* CurrentAssignmentBuilder's member states (MemberState.java). */
typedef enum cm_state { CM_STABLE, CM_UNREVOKED_PARTITIONS, CM_UNRELEASED_PARTITIONS } cm_state;

typedef struct cmember {
    char *id;
    char *instance_id;              /* NULL: dynamic */
    char *rack_id;                  /* NULL: none */
    char *client_id, *client_host;
    char *server_assignor;          /* NULL: the group's default */
    char **topics;                  /* subscribed topic names, sorted, unique */
    int ntopics;
    int32_t epoch, prev_epoch;      /* -2: a static member that left for now */
    cm_state state;
    int32_t rebalance_timeout_ms;
    cg_parts assigned;              /* what the member owns and may use */
    cg_parts revoking;              /* what it must give up before it moves on */
    cg_parts target;                /* its part of the target assignment (assignment epoch) */
    int64_t session_deadline_ms;    /* monotonic */
    int64_t revoke_deadline_ms;     /* UNREVOKED_PARTITIONS: the rebalance timeout; 0 otherwise */
} cmember;

/* The partition count of each subscribed topic when the target was last computed. */
typedef struct cg_topic_meta {
    char *topic;
    int32_t nparts;
} cg_topic_meta;

typedef struct cgroup {
    int32_t group_epoch, assignment_epoch;
    cmember **m;                    /* in join order */
    int n, cap;
    cg_topic_meta *meta;
    int nmeta;
    char *assignor;                 /* the assignor of the current target assignment */
} cgroup;

/* What the coordinator reads of topics: the partition count (-1: no such topic) and the id. */
typedef struct cg_topics {
    int32_t (*partitions)(void *ctx, const char *name, uint8_t uuid[16]);
    void *ctx;
} cg_topics;

/* "Empty", "Assigning", "Reconciling" or "Stable" (ConsumerGroup.ConsumerGroupState). */
const char *cg_state_name(const group *g);
bool cg_enabled(const srv *s); /* group.coordinator.rebalance.protocols names consumer */

/*
 * ConsumerGroupHeartbeat. owned: the request's owned partitions by name (NULL: not sent).
 * Fills resp's error_code/error_message, member id and epoch and interval; *assignment_out is
 * the member's assignment to send (NULL: none this time). Logs every refusal.
 */
void cg_heartbeat(srv *s, req *r, const kp_consumer_group_heartbeat_request *q, const cg_parts *owned,
                  const cg_topics *topics, kp_consumer_group_heartbeat_response *resp, const cg_parts **assignment_out);

/* OffsetCommit and OffsetFetch of a consumer group (ConsumerGroup.validateOffsetCommit/Fetch). */
int16_t cg_commit_check(srv *s, req *r, group *g, int32_t member_epoch, kp_str member_id);
int16_t cg_fetch_check(srv *s, req *r, group *g, int32_t member_epoch, kp_str member_id);

/* The group's timer: expired sessions and rebalance timeouts. */
int64_t cg_next_deadline(const group *g);
void cg_tick(srv *s, group *g);
void cg_free(cgroup *cg);

/* Pure parts (consumer_assign.c), unit-tested. */
void cg_parts_free(cg_parts *p);
void cg_parts_add(cg_parts *p, const char *topic, int32_t partition);
bool cg_parts_has(const cg_parts *p, const char *topic, int32_t partition);
bool cg_parts_eq(const cg_parts *a, const cg_parts *b);
void cg_parts_copy(cg_parts *dst, const cg_parts *src);
int cg_parts_count(const cg_parts *p);
/* "uniform" or "range"; NULL when the name is neither (UNSUPPORTED_ASSIGNOR). */
const char *cg_assignor_known(const char *name, size_t len);
/* Every member's target from the subscriptions and meta, sticky to the previous targets. */
void cg_assign(const char *assignor, cmember **m, int n, const cg_topic_meta *meta, int nmeta);
/*
 * CurrentAssignmentBuilder.build: move m towards its target at target_epoch. owned: what the
 * member reports owning (NULL: not reported). owner_epoch(ctx, topic, p): the epoch of the member
 * holding the partition (assigned or pending revocation), -1 when free. Returns whether m changed.
 */
bool cg_reconcile(cmember *m, int32_t target_epoch, const cg_parts *owned,
                  int32_t (*owner_epoch)(void *ctx, const char *topic, int32_t p), void *ctx);

/* Persistence (consumer_store.c). */
void cg_store_save(srv *s, group *g);
int cg_store_load(srv *s);
/* Text form of partitions ("topic:0,1;other:2"), for storage and log lines. malloc'd. */
char *cg_parts_format(const cg_parts *p);
void cg_parts_parse(cg_parts *p, const char *text);

#endif
