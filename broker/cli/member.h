/*
 * A member of a consumer group for `mskmock consume -g`: JoinGroup with the consumer protocol
 * (a ConsumerProtocolSubscription v3 for one topic, the "range" assignor, which every Kafka
 * client offers), SyncGroup (the leader assigns with range), Heartbeat, OffsetCommit of what
 * was printed, LeaveGroup. Eager rebalancing: on REBALANCE_IN_PROGRESS the caller commits
 * and joins again.
 */
#ifndef CLI_MEMBER_H
#define CLI_MEMBER_H

#include "group.h"

typedef struct cli_member {
    cli_cluster *cl;
    const char *group, *topic;
    cli_conn *coord;
    char member_id[512];
    int32_t generation;
    int64_t next_heartbeat_ms;
    cli_tps assigned;       /* partitions of topic assigned to this member, with leaders */
} cli_member;

/* Joins (or joins again) and syncs; assigned holds the partitions this member now reads. 0, or -1 with err. */
int cli_member_join(cli_member *m, char *err, size_t n);
/* A heartbeat when one is due. 0 nothing to do, 1 the group rebalances (commit, then join
 * again), -1 failed with err. */
int cli_member_heartbeat(cli_member *m, char *err, size_t n);
/* Commits each tp's offset as this member. 0, 1 when the group moved on (join again), -1 failed. */
int cli_member_commit(cli_member *m, const cli_tps *positions, char *err, size_t n);
/* LeaveGroup, best effort, and frees what m holds. */
void cli_member_leave(cli_member *m);

#endif
