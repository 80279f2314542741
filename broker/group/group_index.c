/*
 * group_index: a cluster's groups by id, chained buckets on FNV-1a (hash.h's 64-bit form, for
 * in-memory tables), doubled when there are more groups than buckets. grp_find was a pass over
 * every group with a strlen each, at every request naming a group: at 500 groups of two
 * consumer-protocol members it was half of a heartbeat's instructions (docs/benchmarks.md,
 * issue 36). group.c puts a group in when it makes one and takes it out when it frees it.
 */
#include <stdlib.h>
#include <string.h>

#include "group_index.h"
#include "hash.h"
#include "kp_mem.h"
#include "srv.h"

struct grp_index {
    group **b;
    size_t nb, n;
};

static size_t bucket(size_t nb, const char *id, size_t len) { return (size_t)hash_fnv64(id, len) & (nb - 1); }

group *grp_index_find(const srv *s, const char *id, size_t len) {
    const struct grp_index *x = s->group_index;
    if (!x) return NULL;
    for (group *g = x->b[bucket(x->nb, id, len)]; g; g = g->hnext)
        if (strlen(g->id) == len && memcmp(g->id, id, len) == 0) return g;
    return NULL;
}

static void grow(struct grp_index *x, size_t nb) {
    group **b = xcalloc(nb, sizeof *b);
    for (size_t i = 0; i < x->nb; i++)
        for (group *g = x->b[i], *next; g; g = next) {
            next = g->hnext;
            size_t k = bucket(nb, g->id, strlen(g->id));
            g->hnext = b[k];
            b[k] = g;
        }
    free(x->b);
    x->b = b;
    x->nb = nb;
}

void grp_index_put(srv *s, group *g) {
    struct grp_index *x = s->group_index;
    if (!x) {
        x = s->group_index = xcalloc(1, sizeof *x);
        grow(x, 64);
    }
    if (x->n + 1 > x->nb) grow(x, x->nb * 2);
    size_t k = bucket(x->nb, g->id, strlen(g->id));
    g->hnext = x->b[k];
    x->b[k] = g;
    x->n++;
}

void grp_index_del(srv *s, group *g) {
    struct grp_index *x = s->group_index;
    if (!x) return;
    for (group **pp = &x->b[bucket(x->nb, g->id, strlen(g->id))]; *pp; pp = &(*pp)->hnext)
        if (*pp == g) {
            *pp = g->hnext;
            x->n--;
            return;
        }
}

void grp_index_free(srv *s) {
    if (!s->group_index) return;
    free(s->group_index->b);
    free(s->group_index);
    s->group_index = NULL;
}
