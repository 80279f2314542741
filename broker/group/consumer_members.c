/*
 * consumer_members: a consumer group's member list and what the heartbeat path reads of it
 * without walking it. A profile at 1,000 members in one group (docs/benchmarks.md, issue 36)
 * put a third of the broker's CPU in three passes over every member at every heartbeat: the
 * lookup by member id, the union of the subscribed topics and the earliest deadline. Here they
 * become an index by member id and by instance id (open addressing on FNV-1a, hash.h), the
 * union kept until a member joins, leaves or changes its subscription, and a lower bound of the
 * deadlines that the group's timer waits for. Kafka's ConsumerGroup keeps its members in a
 * TimelineHashMap by id and staticMembers by instance id for the same reason.
 *
 * Every member goes in through cg_member_add and out through cg_member_remove, and its id or
 * instance id changes through cg_member_set_id / cg_member_set_instance; a change of its
 * subscription is told with cg_subscriptions_changed and a new deadline with cg_deadline_note.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "hash.h"
#include "kp_mem.h"

/* ---- the index: linear probing, at most half full, deletion by backward shift ---- */

static const char *key_of(const cmember *m, bool by_instance) { return by_instance ? m->instance_id : m->id; }

static size_t home(const char *key, size_t len, size_t mask) { return (size_t)hash_fnv64(key, len) & mask; }

static void slot_put(cmember **slots, size_t mask, cmember *m, bool by_instance) {
    const char *k = key_of(m, by_instance);
    size_t i = home(k, strlen(k), mask);
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = m;
}

static void slot_del(cmember **slots, size_t mask, const cmember *m, bool by_instance) {
    const char *k = key_of(m, by_instance);
    size_t i = home(k, strlen(k), mask);
    while (slots[i] && slots[i] != m) i = (i + 1) & mask;
    if (!slots[i]) return;
    /* Knuth's algorithm R: move back every later entry of the run that the hole would hide */
    for (size_t j = i;;) {
        slots[i] = NULL;
        for (;;) {
            j = (j + 1) & mask;
            if (!slots[j]) return;
            const char *kj = key_of(slots[j], by_instance);
            size_t h = home(kj, strlen(kj), mask);
            bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays) break;
        }
        slots[i] = slots[j];
        i = j;
    }
}

static cmember *slot_find(cmember *const *slots, size_t nslots, const char *key, size_t len, bool by_instance) {
    if (!nslots) return NULL;
    size_t mask = nslots - 1;
    for (size_t i = home(key, len, mask); slots[i]; i = (i + 1) & mask) {
        const char *k = key_of(slots[i], by_instance);
        if (strlen(k) == len && memcmp(k, key, len) == 0) return slots[i];
    }
    return NULL;
}

static void rebuild(cgroup *cg, size_t nslots) {
    free(cg->by_id);
    free(cg->by_instance);
    cg->by_id = xcalloc(nslots, sizeof *cg->by_id);
    cg->by_instance = xcalloc(nslots, sizeof *cg->by_instance);
    cg->nslots = nslots;
    for (int i = 0; i < cg->n; i++) {
        slot_put(cg->by_id, nslots - 1, cg->m[i], false);
        if (cg->m[i]->instance_id) slot_put(cg->by_instance, nslots - 1, cg->m[i], true);
    }
}

cmember *cg_member_find(const cgroup *cg, const char *id, size_t len) {
    return slot_find(cg->by_id, cg->nslots, id, len, false);
}

cmember *cg_member_find_static(const cgroup *cg, const char *instance_id, size_t len) {
    return slot_find(cg->by_instance, cg->nslots, instance_id, len, true);
}

void cg_member_add(cgroup *cg, cmember *m) {
    XGROW(cg->m, cg->cap, cg->n + 1, 8);
    cg->m[cg->n++] = m;
    if ((size_t)cg->n * 2 > cg->nslots) {
        size_t want = 16;
        while (want < (size_t)cg->n * 4) want *= 2;
        rebuild(cg, want); /* indexes m too */
    } else {
        slot_put(cg->by_id, cg->nslots - 1, m, false);
        if (m->instance_id) slot_put(cg->by_instance, cg->nslots - 1, m, true);
    }
    cg_subscriptions_changed(cg);
    cg->rx_valid = false;
}

void cg_member_remove(cgroup *cg, cmember *m) {
    for (int i = 0; i < cg->n; i++)
        if (cg->m[i] == m) {
            /* join order is kept: the assignors break ties by it */
            memmove(&cg->m[i], &cg->m[i + 1], sizeof *cg->m * (size_t)(cg->n - i - 1));
            cg->n--;
            slot_del(cg->by_id, cg->nslots - 1, m, false);
            if (m->instance_id) slot_del(cg->by_instance, cg->nslots - 1, m, true);
            cg_subscriptions_changed(cg);
            cg->rx_valid = false;
            return;
        }
}

void cg_member_set_id(cgroup *cg, cmember *m, const char *id) {
    if (cg->nslots) slot_del(cg->by_id, cg->nslots - 1, m, false);
    free(m->id);
    m->id = xstrdup(id);
    if (cg->nslots) slot_put(cg->by_id, cg->nslots - 1, m, false);
}

void cg_member_set_instance(cgroup *cg, cmember *m, const char *instance_id, size_t len) {
    if (m->instance_id && strlen(m->instance_id) == len && memcmp(m->instance_id, instance_id, len) == 0) return;
    if (m->instance_id && cg->nslots) slot_del(cg->by_instance, cg->nslots - 1, m, true);
    free(m->instance_id);
    m->instance_id = xmalloc(len + 1);
    memcpy(m->instance_id, instance_id, len);
    m->instance_id[len] = 0;
    if (cg->nslots) slot_put(cg->by_instance, cg->nslots - 1, m, true);
}

void cg_members_free(cgroup *cg) {
    free(cg->by_id);
    free(cg->by_instance);
    cg->by_id = cg->by_instance = NULL;
    cg->nslots = 0;
    for (int i = 0; i < cg->nsubs; i++) free(cg->subs[i]);
    free(cg->subs);
    cg->subs = NULL;
    cg->nsubs = 0;
    cg->subs_valid = false;
}

/* ---- the subscribed topics of the group ---- */

void cg_subscriptions_changed(cgroup *cg) { cg->subs_valid = false; }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *const *cg_subscribed_topics(cgroup *cg, int *n) {
    if (!cg->subs_valid) {
        for (int i = 0; i < cg->nsubs; i++) free(cg->subs[i]);
        free(cg->subs);
        int total = 0;
        for (int i = 0; i < cg->n; i++) total += cg->m[i]->ntopics;
        char **t = xcalloc((size_t)total + 1, sizeof *t);
        int k = 0;
        for (int i = 0; i < cg->n; i++)
            for (int j = 0; j < cg->m[i]->ntopics; j++) t[k++] = cg->m[i]->topics[j];
        if (k > 1) qsort(t, (size_t)k, sizeof *t, cmp_str);
        int u = 0;
        for (int i = 0; i < k; i++)
            if (!u || strcmp(t[u - 1], t[i]) != 0) t[u++] = t[i];
        for (int i = 0; i < u; i++) t[i] = xstrdup(t[i]); /* the group's own: members come and go */
        cg->subs = t;
        cg->nsubs = u;
        cg->subs_valid = true;
    }
    *n = cg->nsubs;
    return cg->subs;
}

/* ---- deadlines ---- */

void cg_deadline_note(cgroup *cg, int64_t deadline_ms) {
    if (deadline_ms && deadline_ms < cg->deadline_floor) cg->deadline_floor = deadline_ms;
}

int64_t cg_deadlines_rescan(cgroup *cg) {
    int64_t next = INT64_MAX;
    for (int i = 0; i < cg->n; i++) {
        const cmember *m = cg->m[i];
        if (m->session_deadline_ms && m->session_deadline_ms < next) next = m->session_deadline_ms;
        if (m->revoke_deadline_ms && m->revoke_deadline_ms < next) next = m->revoke_deadline_ms;
    }
    cg->deadline_floor = next;
    return next;
}
