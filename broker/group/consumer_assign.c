/*
 * The pure parts of the consumer group coordinator (KIP-848), kept apart so the unit tests drive
 * them without a broker: partition sets by topic name, the server-side assignors and the
 * reconciliation of one member towards its target.
 *
 * Assignors (the client's group.remote.assignor):
 * - uniform (Kafka's default, UniformAssignor): every partition of the subscribed topics to one
 *   subscriber, counts as even as the subscriptions allow, and sticky: a member keeps what its
 *   previous target gave it unless the balance needs it elsewhere. Kafka's OptimizedUniform and
 *   UniformHeterogeneous builders reach the same balance by other steps, so the placement of a
 *   moved partition may differ from Kafka's.
 * - range (RangeAssignor): per topic, its subscribers in member id order get contiguous ranges,
 *   the first (partitions % subscribers) one more; sticky as Kafka's server-side RangeAssignor
 *   (group-coordinator's assignor/RangeAssignor.java): each member keeps the lowest of its
 *   previous target's partitions up to its quota (and one more while extra ones remain), and
 *   only the rest is handed out in ranges, so a member that leaves moves only its own partitions.
 *
 * cg_reconcile is CurrentAssignmentBuilder.build and computeNextAssignment of Apache Kafka's
 * group-coordinator (modern/consumer/CurrentAssignmentBuilder.java), state for state.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "kp_mem.h"

/* ---- partition sets ---- */

void cg_parts_free(cg_parts *p) {
    for (int i = 0; i < p->n; i++) {
        free(p->t[i].topic);
        free(p->t[i].p);
    }
    free(p->t);
    p->t = NULL;
    p->n = 0;
}

static cg_topic_parts *find_topic(const cg_parts *p, const char *topic) {
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->t[i].topic, topic) == 0) return &p->t[i];
    return NULL;
}

bool cg_parts_has(const cg_parts *p, const char *topic, int32_t partition) {
    const cg_topic_parts *t = find_topic(p, topic);
    for (int i = 0; t && i < t->n; i++)
        if (t->p[i] == partition) return true;
    return false;
}

void cg_parts_add(cg_parts *p, const char *topic, int32_t partition) {
    cg_topic_parts *t = find_topic(p, topic);
    if (!t) {
        int at = 0;
        while (at < p->n && strcmp(p->t[at].topic, topic) < 0) at++;
        p->t = xrealloc(p->t, sizeof *p->t * (size_t)(p->n + 1));
        memmove(&p->t[at + 1], &p->t[at], sizeof *p->t * (size_t)(p->n - at));
        p->n++;
        t = &p->t[at];
        *t = (cg_topic_parts){xstrdup(topic), NULL, 0};
    }
    int at = 0;
    while (at < t->n && t->p[at] < partition) at++;
    if (at < t->n && t->p[at] == partition) return;
    t->p = xrealloc(t->p, sizeof *t->p * (size_t)(t->n + 1));
    memmove(&t->p[at + 1], &t->p[at], sizeof *t->p * (size_t)(t->n - at));
    t->p[at] = partition;
    t->n++;
}

bool cg_parts_eq(const cg_parts *a, const cg_parts *b) {
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        if (strcmp(a->t[i].topic, b->t[i].topic) != 0 || a->t[i].n != b->t[i].n) return false;
        if (memcmp(a->t[i].p, b->t[i].p, sizeof(int32_t) * (size_t)a->t[i].n) != 0) return false;
    }
    return true;
}

void cg_parts_copy(cg_parts *dst, const cg_parts *src) {
    cg_parts out = {0};
    for (int i = 0; i < src->n; i++)
        for (int k = 0; k < src->t[i].n; k++) cg_parts_add(&out, src->t[i].topic, src->t[i].p[k]);
    cg_parts_free(dst);
    *dst = out;
}

int cg_parts_count(const cg_parts *p) {
    int n = 0;
    for (int i = 0; i < p->n; i++) n += p->t[i].n;
    return n;
}

/* ---- assignors ---- */

const char *cg_assignor_known(const char *name, size_t len) {
    static const char *const names[] = {"uniform", "range"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return names[i];
    return NULL;
}

static bool subscribes(const cmember *m, const char *topic) {
    for (int i = 0; i < m->ntopics; i++)
        if (strcmp(m->topics[i], topic) == 0) return true;
    return false;
}

static int by_member_id(const void *a, const void *b) {
    return strcmp((*(cmember *const *)a)->id, (*(cmember *const *)b)->id);
}

static void assign_range(cmember **m, int n, const cg_topic_meta *meta, int nmeta, cg_parts *out) {
    cmember **sorted = xmalloc(sizeof *sorted * (size_t)(n ? n : 1));
    int *idx = xmalloc(sizeof *idx * (size_t)(n ? n : 1));
    for (int t = 0; t < nmeta; t++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (subscribes(m[i], meta[t].topic)) sorted[k++] = m[i];
        if (!k) continue;
        qsort(sorted, (size_t)k, sizeof *sorted, by_member_id);
        for (int j = 0; j < k; j++)
            for (int i = 0; i < n; i++)
                if (m[i] == sorted[j]) idx[j] = i;
        int32_t np = meta[t].nparts, per = np / k, extra = np % k;
        bool *taken = xcalloc((size_t)np + 1, sizeof *taken);
        int32_t *want = xmalloc(sizeof *want * (size_t)k); /* partitions still to give; < 0: none */
        for (int j = 0; j < k; j++) {
            /* the previous target's partitions of the topic, ascending (cg_parts keeps them so) */
            const cg_topic_parts *prev = find_topic(&sorted[j]->target, meta[t].topic);
            int32_t held = 0, kept = 0;
            for (int i = 0; prev && i < prev->n; i++)
                if (prev->p[i] >= 0 && prev->p[i] < np && !taken[prev->p[i]]) held++;
            for (int i = 0; prev && i < prev->n && kept < per; i++) {
                int32_t p = prev->p[i];
                if (p < 0 || p >= np || taken[p]) continue;
                taken[p] = true;
                cg_parts_add(&out[idx[j]], meta[t].topic, p);
                kept++;
            }
            want[j] = per - held;
            if (want[j] < 0 && extra > 0) {
                /* it keeps one of the extra partitions too: the next of its own */
                for (int i = 0, seen = 0; prev && i < prev->n; i++) {
                    int32_t p = prev->p[i];
                    if (p < 0 || p >= np) continue;
                    if (seen++ == per && !taken[p]) {
                        taken[p] = true;
                        cg_parts_add(&out[idx[j]], meta[t].topic, p);
                        extra--;
                        break;
                    }
                }
                want[j] = INT32_MIN;
            }
        }
        int32_t next = 0;
        for (int j = 0; j < k; j++) {
            if (want[j] == INT32_MIN) continue;
            int32_t n_give = want[j];
            if (extra > 0) {
                n_give++;
                extra--;
            }
            for (int32_t c = 0; c < n_give; c++) {
                while (next < np && taken[next]) next++;
                if (next >= np) break;
                taken[next] = true;
                cg_parts_add(&out[idx[j]], meta[t].topic, next);
            }
        }
        free(taken);
        free(want);
    }
    free(sorted);
    free(idx);
}

typedef struct slot {
    const char *topic;
    int32_t p;
    int owner; /* member index, -1: unassigned */
} slot;

/* Give s to the eligible member with the fewest partitions (first in join order on a tie). */
static int least_loaded(cmember **m, int n, const int *count, const char *topic) {
    int best = -1;
    for (int i = 0; i < n; i++)
        if (subscribes(m[i], topic) && (best < 0 || count[i] < count[best])) best = i;
    return best;
}

static void assign_uniform(cmember **m, int n, const cg_topic_meta *meta, int nmeta, cg_parts *out) {
    int total = 0;
    for (int t = 0; t < nmeta; t++) total += meta[t].nparts;
    slot *sl = xmalloc(sizeof *sl * (size_t)(total ? total : 1));
    int *count = xcalloc((size_t)(n ? n : 1), sizeof *count);
    int k = 0;
    for (int t = 0; t < nmeta; t++)
        for (int32_t p = 0; p < meta[t].nparts; p++) {
            /* sticky: the previous target's owner keeps it while still subscribed */
            int owner = -1;
            for (int i = 0; i < n && owner < 0; i++)
                if (subscribes(m[i], meta[t].topic) && cg_parts_has(&m[i]->target, meta[t].topic, p)) owner = i;
            sl[k++] = (slot){meta[t].topic, p, owner};
            if (owner >= 0) count[owner]++;
        }
    for (int i = 0; i < k; i++)
        if (sl[i].owner < 0 && (sl[i].owner = least_loaded(m, n, count, sl[i].topic)) >= 0) count[sl[i].owner]++;
    /*
     * Balance: while a member holds two or more partitions more than another member subscribed to
     * one of them, move one (the highest-numbered, so the older, lower ones stay put). Every move
     * lowers the sum of squared counts, so this ends.
     */
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = k - 1; i >= 0; i--) {
            int from = sl[i].owner;
            if (from < 0) continue;
            int to = least_loaded(m, n, count, sl[i].topic);
            if (to >= 0 && count[from] > count[to] + 1) {
                count[from]--;
                count[to]++;
                sl[i].owner = to;
                moved = true;
            }
        }
    }
    for (int i = 0; i < k; i++)
        if (sl[i].owner >= 0) cg_parts_add(&out[sl[i].owner], sl[i].topic, sl[i].p);
    free(sl);
    free(count);
}

void cg_assign(const char *assignor, cmember **m, int n, const cg_topic_meta *meta, int nmeta) {
    cg_parts *out = xcalloc((size_t)(n ? n : 1), sizeof *out);
    if (assignor && strcmp(assignor, "range") == 0)
        assign_range(m, n, meta, nmeta, out);
    else
        assign_uniform(m, n, meta, nmeta, out);
    for (int i = 0; i < n; i++) {
        cg_parts_free(&m[i]->target);
        m[i]->target = out[i];
    }
    free(out);
}

/* ---- reconciliation (CurrentAssignmentBuilder) ---- */

/* ownsRevokedPartitions: whether the member still reports owning any of these (not reported: yes). */
static bool owns_any(const cg_parts *owned, const cg_parts *revoking) {
    if (!owned) return true;
    for (int i = 0; i < owned->n; i++)
        for (int k = 0; k < owned->t[i].n; k++)
            if (cg_parts_has(revoking, owned->t[i].topic, owned->t[i].p[k])) return true;
    return false;
}

static void set_epoch(cmember *m, int32_t epoch) {
    if (m->epoch == epoch) return; /* updateMemberEpoch: the previous epoch moves only with a change */
    m->prev_epoch = m->epoch;
    m->epoch = epoch;
}

static bool next_assignment(cmember *m, int32_t epoch, int32_t target_epoch, const cg_parts *owned,
                            int32_t (*owner_epoch)(void *, const char *, int32_t), void *ctx) {
    cg_parts assigned = {0}, revoking = {0}, pending = {0};
    bool unreleased = false;
    /* topics of the current assignment and of the target */
    for (int pass = 0; pass < 2; pass++) {
        const cg_parts *src = pass ? &m->target : &m->assigned;
        for (int i = 0; i < src->n; i++)
            for (int k = 0; k < src->t[i].n; k++) {
                const char *t = src->t[i].topic;
                int32_t p = src->t[i].p[k];
                bool in_target = cg_parts_has(&m->target, t, p), held = cg_parts_has(&m->assigned, t, p);
                if (held && in_target)
                    cg_parts_add(&assigned, t, p);
                else if (held)
                    cg_parts_add(&revoking, t, p);
                else if (owner_epoch(ctx, t, p) != -1)
                    unreleased = true; /* someone else still holds it */
                else
                    cg_parts_add(&pending, t, p);
            }
    }
    cmember before = *m;
    cg_parts old_assigned = {0}, old_revoking = {0};
    cg_parts_copy(&old_assigned, &m->assigned);
    cg_parts_copy(&old_revoking, &m->revoking);
    if (revoking.n && owns_any(owned, &revoking)) {
        m->state = CM_UNREVOKED_PARTITIONS;
        set_epoch(m, epoch);
        cg_parts_free(&m->assigned);
        m->assigned = assigned;
        cg_parts_free(&m->revoking);
        m->revoking = revoking;
        cg_parts_free(&pending);
    } else {
        for (int i = 0; i < pending.n; i++)
            for (int k = 0; k < pending.t[i].n; k++) cg_parts_add(&assigned, pending.t[i].topic, pending.t[i].p[k]);
        m->state = unreleased ? CM_UNRELEASED_PARTITIONS : CM_STABLE;
        set_epoch(m, target_epoch);
        cg_parts_free(&m->assigned);
        m->assigned = assigned;
        cg_parts_free(&m->revoking);
        cg_parts_free(&revoking);
        cg_parts_free(&pending);
    }
    bool changed = before.state != m->state || before.epoch != m->epoch || !cg_parts_eq(&old_assigned, &m->assigned) ||
                   !cg_parts_eq(&old_revoking, &m->revoking);
    cg_parts_free(&old_assigned);
    cg_parts_free(&old_revoking);
    return changed;
}

bool cg_reconcile(cmember *m, int32_t target_epoch, const cg_parts *owned,
                  int32_t (*owner_epoch)(void *ctx, const char *topic, int32_t p), void *ctx) {
    switch (m->state) {
    case CM_STABLE:
        if (m->epoch == target_epoch) return false;
        return next_assignment(m, m->epoch, target_epoch, owned, owner_epoch, ctx);
    case CM_UNREVOKED_PARTITIONS:
        if (owns_any(owned, &m->revoking)) return false;
        return next_assignment(m, m->epoch + 1, target_epoch, owned, owner_epoch, ctx);
    case CM_UNRELEASED_PARTITIONS:
        return next_assignment(m, m->epoch, target_epoch, owned, owner_epoch, ctx);
    }
    return false;
}
