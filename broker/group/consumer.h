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
 * classic member list stays empty. A member subscribes by topic names, a regular expression
 * (consumer_regex.c) or both; its subscription is their union. KIP-848's online migration
 * (consumer_classic.c): a consumer-protocol member joining a classic group converts it into a
 * consumer group whose classic members carry on through JoinGroup, SyncGroup, Heartbeat and
 * LeaveGroup (members with `classic` set), and the group goes back to a classic group when its
 * last consumer-protocol member leaves (group.consumer.migration.policy).
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

/*
 * What a member speaking the classic protocol inside a consumer group sent in its JoinGroup
 * (Kafka's ConsumerGroupMemberMetadataValue.ClassicMemberMetadata).
 */
typedef struct cm_classic {
    int32_t session_timeout_ms;
    member_protocol *protocols;     /* its JoinGroup protocols, in its order */
    int nprotocols;
    bool awaiting_sync;             /* revoke_deadline_ms is its sync timeout; else its join timeout */
} cm_classic;

typedef struct cmember {
    char *id;
    char *instance_id;              /* NULL: dynamic */
    char *rack_id;                  /* NULL: none */
    char *client_id, *client_host;
    char *server_assignor;          /* NULL: the group's default */
    char **topics;                  /* the subscription: names and the regex's topics, sorted, unique */
    int ntopics;
    char *regex;                    /* SubscribedTopicRegex; NULL: none */
    char **names;                   /* SubscribedTopicNames, sorted, unique (regex set; else topics) */
    int nnames;
    int32_t epoch, prev_epoch;      /* -2: a static member that left for now */
    cm_state state;
    int32_t rebalance_timeout_ms;
    cg_parts assigned;              /* what the member owns and may use */
    cg_parts revoking;              /* what it must give up before it moves on */
    cg_parts target;                /* its part of the target assignment (assignment epoch) */
    int64_t session_deadline_ms;    /* monotonic */
    int64_t revoke_deadline_ms;     /* UNREVOKED_PARTITIONS: the rebalance timeout; 0 otherwise (classic
                                       members: their join or sync timeout, Kafka's only timers for them) */
    cm_classic *classic;            /* NULL: the consumer protocol */
} cmember;

/* The partition count of each subscribed topic when the target was last computed. */
typedef struct cg_topic_meta {
    char *topic;
    int32_t nparts;
} cg_topic_meta;

/* A regular expression of the group's members, compiled once, with the topics it resolved to. */
typedef struct cg_regex cg_regex;
typedef struct cg_resolved {
    char *pattern;
    cg_regex *re;
    char **topics;                  /* sorted */
    int ntopics;
    uint64_t generation;            /* cg_topics.generation when resolved; 0: never */
} cg_resolved;

typedef struct cgroup {
    int32_t group_epoch, assignment_epoch;
    cmember **m;                    /* in join order; changed only by cg_member_add/remove */
    int n, cap;
    cmember **by_id, **by_instance; /* the index (consumer_members.c), nslots each */
    size_t nslots;
    char **subs;                    /* the members' topics, sorted, unique, while subs_valid */
    int nsubs;
    bool subs_valid;
    int64_t deadline_floor;         /* no member's deadline is earlier (monotonic); 0: unknown yet */
    cg_topic_meta *meta;
    int nmeta;
    char *assignor;                 /* the assignor of the current target assignment */
    cg_resolved *rx;                /* one per distinct regex of the members */
    int nrx;
    bool rx_valid;                  /* rx has every member's regex and no other (false: recompile) */
} cgroup;

/*
 * What the coordinator reads of topics: the partition count (-1: no such topic) and the id; for
 * regular expressions, every topic one may match (each: not internal, and described by the
 * request's principal, as Kafka filters a regex's topics) and a generation that changes whenever
 * a topic is created or deleted, so a regex is resolved again only then.
 */
typedef struct cg_topics {
    int32_t (*partitions)(void *ctx, const char *name, uint8_t uuid[16]);
    void *ctx;
    void (*each)(void *ctx, void (*fn)(void *arg, const char *name), void *arg);
    uint64_t generation;
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

/*
 * The classic protocol's requests to a consumer group with members (KIP-848's online migration,
 * Kafka's classicGroupJoinToConsumerGroup and its siblings; consumer_classic.c). Each logs its
 * refusals. join answers the request itself.
 */
void cg_classic_join(srv *s, req *r, group *g, const kp_join_group_request *q, const cg_topics *topics);
int16_t cg_classic_sync(srv *s, req *r, group *g, const kp_sync_group_request *q, kp_bytes *assignment);
int16_t cg_classic_heartbeat(srv *s, req *r, group *g, int32_t generation, kp_str member_id, kp_str instance_id);
int16_t cg_classic_leave(srv *s, req *r, group *g, kp_str member_id, kp_str instance_id);
/* ConsumerProtocolAssignment bytes of parts at version (capped to 0..3), user data null. malloc'd. */
uint8_t *cg_assignment_encode(const cg_parts *parts, int16_t version, size_t *len);

/* OffsetCommit and OffsetFetch of a consumer group (ConsumerGroup.validateOffsetCommit/Fetch). */
int16_t cg_commit_check(srv *s, req *r, group *g, int32_t member_epoch, kp_str member_id);
int16_t cg_fetch_check(srv *s, req *r, group *g, int32_t member_epoch, kp_str member_id);

/* The group's timer: expired sessions and rebalance timeouts. */
int64_t cg_next_deadline(const group *g);
void cg_tick(srv *s, group *g);
void cg_free(cgroup *cg);

/*
 * The member list (consumer_members.c), unit-tested: what a heartbeat reads of the group without
 * walking its members. A member joins and goes only through add/remove, and its id or instance
 * id changes only through set_id/set_instance, which keep the index by id and by instance id;
 * remove does not free it; both mark the regexes for compiling again (rx_valid).
 * cg_subscriptions_changed: a member's topics changed, so cg_subscribed_topics (the union of
 * the members' topics, sorted) is made again when next read.
 * cg_deadline_note: a member's session or revocation deadline was set; the group's timer waits
 * for the earliest noted, and cg_deadlines_rescan (at each tick) makes that exact again.
 */
cmember *cg_member_find(const cgroup *cg, const char *id, size_t len);
cmember *cg_member_find_static(const cgroup *cg, const char *instance_id, size_t len);
void cg_member_add(cgroup *cg, cmember *m);
void cg_member_remove(cgroup *cg, cmember *m);
void cg_member_set_id(cgroup *cg, cmember *m, const char *id);
void cg_member_set_instance(cgroup *cg, cmember *m, const char *instance_id, size_t len);
void cg_members_free(cgroup *cg); /* the index and the union, not the members */
void cg_subscriptions_changed(cgroup *cg);
char *const *cg_subscribed_topics(cgroup *cg, int *n);
void cg_deadline_note(cgroup *cg, int64_t deadline_ms);
int64_t cg_deadlines_rescan(cgroup *cg);

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

/*
 * Regular expressions (consumer_regex.c), RE2/J's syntax as far as PCRE2 shares it, matched
 * against whole topic names without backtracking. compile: NULL with the reason in err when the
 * pattern is refused. match: 1, 0, or -1 when the matcher gave up (counts as no match).
 */
cg_regex *cg_regex_compile(const char *pattern, size_t len, char *err, size_t errlen);
int cg_regex_match(const cg_regex *re, const char *subject, size_t len);
int cg_regex_probe(const cg_regex *re, char *err, size_t errlen);
void cg_regex_free(cg_regex *re);

/* Persistence (consumer_store.c). */
void cg_store_save(srv *s, group *g);
int cg_store_load(srv *s);
/* Text form of partitions ("topic:0,1;other:2"), for storage and log lines. malloc'd. */
char *cg_parts_format(const cg_parts *p);
void cg_parts_parse(cg_parts *p, const char *text);

#endif
