/*
 * consumer_int: what consumer.c, consumer_classic.c and group.c share inside group/ for KIP-848's
 * online migration between the classic and consumer protocols (Apache Kafka 4.x's
 * GroupMetadataManager.convertToConsumerGroup / convertToClassicGroup and the classic requests a
 * consumer group serves). Not a public header: nothing outside group/ includes it.
 */
#ifndef GROUP_CONSUMER_INT_H
#define GROUP_CONSUMER_INT_H

#include "consumer.h"

/* consumer.c: members */
cmember *cg_member_by_id(const cgroup *cg, kp_str id);
cmember *cg_member_by_instance(const cgroup *cg, kp_str instance);
cmember *cg_member_new(const char *id);
void cg_member_free(cmember *m);
void cg_member_append(cgroup *cg, cmember *m);
/* SubscribedTopicNames from a list (empty names dropped); whether they changed. */
bool cg_member_set_names(cmember *m, const kp_str *v, int n);
/*
 * consumerGroupFenceMember: the member goes and the group epoch moves, or, when it was the last
 * member on the consumer protocol and the policy allows, the group becomes a classic group.
 * Returns true when it did (g->cg is then NULL and the classic group saved).
 */
bool cg_fence(srv *s, group *g, cmember *m, const char *why);
/*
 * The member's subscription resolved (fresh: a regex the request compiled), the subscribed
 * topics' partitions read, the group epoch bumped when either changed (or is_new), and the target
 * assignment computed when the group epoch is ahead. Whether anything changed.
 */
bool cg_settle(srv *s, group *g, cmember *m, const cg_topics *topics, cg_regex **fresh, bool is_new);
/* CurrentAssignmentBuilder towards the target at the assignment epoch; whether m changed. */
bool cg_member_reconcile(group *g, cmember *m, const cg_parts *owned);
/* ConsumerGroup.currentPartitionEpoch: the epoch of the member holding it, -1 when free. */
int32_t cg_partition_epoch(const cgroup *cg, const char *topic, int32_t p);
void cg_sync_state(group *g);

/* consumer_classic.c */
/*
 * validateOnlineUpgrade and convertToConsumerGroup: the classic group with members g becomes a
 * consumer group whose members keep their assignment. false (nothing changed, the reason logged)
 * when the policy, the protocol type, the size or the members' embedded protocol forbid it.
 */
bool cg_upgrade(srv *s, group *g);
/* validateOnlineDowngradeWithFencedMember then convertToClassicGroup; true when g is classic now. */
bool cg_maybe_downgrade(srv *s, group *g, cmember *leaving);
void cg_classic_free(cm_classic *c);

/* group.c: the classic side of a conversion */
/* Every classic member goes (parked requests answered with err), and its classic state row. */
void grp_classic_release(srv *s, group *g, int16_t err);
/* g (its cg already gone) takes these classic members, Stable at generation, its protocol selected. */
void grp_classic_adopt(srv *s, group *g, member *members, int n, int32_t generation);
/* Saved as it is, then a rebalance: members learn of it on their next Heartbeat. */
void grp_classic_rebalance(srv *s, group *g, const char *reason);

#endif
