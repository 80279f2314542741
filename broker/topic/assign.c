/*
 * Replica assignments and leader election, the way Apache Kafka's KRaft controller does them
 * (metadata/.../controller/ReplicationControlManager.java): a partition's replicas are fixed
 * when it is created, its first replica is its preferred leader, and when its leader goes the
 * first replica still up leads (none up: the partition is offline, as with
 * unclean.leader.election.enable=false).
 *
 * One mechanism for every partition: a client's assignment (CreateTopics or CreatePartitions
 * with assignments) is stored and overrides the default placement; without one the default
 * is derived (never stored), so it follows broker.count across restarts as it always has.
 * MSK Serverless documents nothing about manual assignments, so Kafka's checks hold in every
 * profile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp_errors.h"
#include "kp_mem.h"
#include "topic.h"

int32_t topic_replicas(const srv *s, const topic *t, int32_t i, int32_t out[TOPIC_MAX_REPLICAS]) {
    const partition *p = &t->parts[i];
    if (p->replicas) {
        memcpy(out, p->replicas, sizeof *out * (size_t)p->nreplicas);
        return p->nreplicas;
    }
    /* the default: rf consecutive brokers from a start spread round-robin over topics and partitions */
    int32_t rf = topic_replication_factor(s, t);
    int32_t first = (int32_t)(((uint64_t)t->id * 7 + (uint64_t)i) % (uint64_t)s->nnodes);
    for (int32_t k = 0; k < rf; k++) out[k] = (first + k) % s->nnodes;
    return rf;
}

bool topic_is_replica(const srv *s, const topic *t, int32_t i, int node) {
    int32_t r[TOPIC_MAX_REPLICAS];
    int32_t n = topic_replicas(s, t, i, r);
    for (int32_t k = 0; k < n; k++)
        if (r[k] == node) return true;
    return false;
}

int32_t topic_in_sync(const srv *s, const topic *t, int32_t i) {
    int32_t r[TOPIC_MAX_REPLICAS];
    int32_t n = topic_replicas(s, t, i, r), up = 0;
    for (int32_t k = 0; k < n; k++) up += !s->nodes[r[k]].down;
    return up;
}

int32_t topic_elect_leader(const srv *s, const topic *t, int32_t i) {
    int32_t r[TOPIC_MAX_REPLICAS];
    int32_t n = topic_replicas(s, t, i, r);
    for (int32_t k = 0; k < n; k++)
        if (!s->nodes[r[k]].down) return r[k];
    return TOPIC_NO_LEADER;
}

static int node_index(const srv *s, int32_t id) {
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].id == id) return i;
    return -1;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int16_t topic_assignment_check(const srv *s, const topic_assignment *a, int32_t rf, char *why, size_t len) {
    if (a->n <= 0) {
        snprintf(why, len, "The manual partition assignment includes an empty replica list.");
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    /* in ascending id order, as Kafka checks them, so that a message names the broker Kafka's would */
    int32_t *sorted = xmalloc(sizeof *sorted * (size_t)a->n);
    memcpy(sorted, a->ids, sizeof *sorted * (size_t)a->n);
    qsort(sorted, (size_t)a->n, sizeof *sorted, cmp_i32);
    int16_t code = 0;
    for (int32_t k = 0; k < a->n && !code; k++) {
        code = KERR_INVALID_REPLICA_ASSIGNMENT;
        if (node_index(s, sorted[k]) < 0)
            snprintf(why, len, "The manual partition assignment includes broker %d, but no such broker is registered.",
                     sorted[k]);
        else if (k > 0 && sorted[k] == sorted[k - 1])
            snprintf(why, len, "The manual partition assignment includes the broker %d more than once.", sorted[k]);
        else
            code = 0;
    }
    free(sorted);
    if (code) return code;
    if (rf > 0 && a->n != rf) {
        snprintf(why, len, "The manual partition assignment includes a partition with %d replica(s), but this is not "
                 "consistent with previous partitions, which have %d replica(s).", a->n, rf);
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    for (int32_t k = 0; k < a->n; k++)
        if (!s->nodes[node_index(s, a->ids[k])].down) return 0;
    /* a broker taken down through the admin API is registered but fenced, as a stopped Kafka broker is */
    snprintf(why, len, "All brokers specified in the manual partition assignment for partition %d are fenced or in "
             "controlled shutdown.", a->partition);
    return KERR_INVALID_REPLICA_ASSIGNMENT;
}

int16_t topic_check_create_assignments(const srv *s, const topic_assignment *a, int32_t n, char *why, size_t len) {
    for (int32_t k = 0; k < n; k++) {
        for (int32_t j = 0; j < k; j++)
            if (a[j].partition == a[k].partition) {
                snprintf(why, len, "Found multiple manual partition assignments for partition %d", a[k].partition);
                return KERR_INVALID_REPLICA_ASSIGNMENT;
            }
        int16_t code = topic_assignment_check(s, &a[k], k > 0 ? a[0].n : 0, why, len);
        if (code) return code;
    }
    /* no duplicates, so n entries all in [0, n) are exactly 0..n-1 */
    for (int32_t k = 0; k < n; k++)
        if (a[k].partition < 0 || a[k].partition >= n) {
            snprintf(why, len, "partitions should be a consecutive 0-based integer sequence");
            return KERR_INVALID_REPLICA_ASSIGNMENT;
        }
    return 0;
}

void topic_set_replicas(const srv *s, partition *p, const int32_t *ids, int32_t n) {
    int32_t *r = xrealloc(p->replicas, sizeof *r * (size_t)n);
    for (int32_t j = 0; j < n; j++) r[j] = node_index(s, ids[j]);
    p->replicas = r;
    p->nreplicas = n;
}

int topic_assign(srv *s, topic *t, int32_t from, const topic_assignment *a, int32_t n) {
    for (int32_t k = 0; k < n; k++) {
        partition *p = &t->parts[from + k];
        if (stor_replicas_put(s->st, t->id, p->index, a[k].ids, a[k].n) != 0) return -1;
        topic_set_replicas(s, p, a[k].ids, a[k].n);
        p->leader = topic_elect_leader(s, t, p->index);
    }
    return 0;
}
