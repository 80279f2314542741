/*
 * What the group commands and `consume -g` share: the group's coordinator, committed offsets
 * (OffsetFetch, OffsetCommit), partition ends (ListOffsets), and the consumer protocol's
 * subscription and assignment bytes, which protocol/kp_consumer.h decodes and this writes
 * (no protocol/ description exists for these embedded structures).
 */
#ifndef CLI_GROUP_H
#define CLI_GROUP_H

#include <stdint.h>

#include "conn.h"
#include "kp_consumer.h"

/* One partition of a topic and what the commands learn about it. */
typedef struct cli_tp {
    char *topic;           /* malloc'd */
    int32_t partition;
    int32_t leader;        /* from Metadata; -1 unknown */
    int64_t committed;     /* -1: none */
    int64_t offset;        /* ListOffsets' answer, or what seek commits */
} cli_tp;

typedef struct cli_tps {
    cli_tp *v;
    int n, cap;
} cli_tps;

void cli_tps_add(cli_tps *s, const char *topic, int32_t len, int32_t partition);
void cli_tps_free(cli_tps *s);
/* Sorts by topic, then partition, and drops repeats. */
void cli_tps_sort(cli_tps *s);

/* FindCoordinator (key type 0) for group, retried while the coordinator loads; its connection. */
cli_conn *cli_coordinator(cli_cluster *cl, const char *group, char *err, size_t n);
/* Leaders from one Metadata request for every topic in s (-1 for a topic that is gone). 0, or -1 with err. */
int cli_tps_leaders(cli_cluster *cl, cli_tps *s, char *err, size_t n);
/* Every partition of topic (or only partition >= 0), with leaders. 0, or -1 with err. */
int cli_tps_of_topic(cli_cluster *cl, cli_tps *s, const char *topic, long partition, char *err, size_t n);
/* ListOffsets at ts (-2 earliest, -1 latest, else a time; -1 offset when no record is that
 * recent) into each tp's offset. 0, or -1 with err; !strict: a partition that fails gets -1. */
int cli_tps_list_offsets(cli_cluster *cl, cli_tps *s, int64_t ts, bool strict, char *err, size_t n);
/* OffsetFetch: committed offsets of every partition the group has one for (all=true: they are
 * added to s), or of the partitions in s. 0, or -1 with err. */
int cli_offset_fetch(cli_conn *c, const char *group, cli_tps *s, bool all, char *err, size_t n);
/* OffsetCommit of each tp's offset, for a member (generation, member id) or, with generation -1
 * and an empty member id, for a group without members, as kafka-consumer-groups resets. 0, or -1
 * with err naming the first partition refused and why (its error in *code, 0 for a transport failure). */
int cli_offset_commit(cli_conn *c, const char *group, int32_t generation, const char *member, const cli_tps *s,
                      int16_t *code, char *err, size_t n);

/* ConsumerProtocolSubscription v3 of topics (owned: the partitions held now) into w. */
void cli_subscription_write(kp_writer *w, const char *const *topics, int ntopics, const cli_tps *owned,
                            int32_t generation);
/* ConsumerProtocolAssignment v3 of the partitions in s (already sorted by topic) into w. */
void cli_assignment_write(kp_writer *w, const cli_tps *s);

#endif
