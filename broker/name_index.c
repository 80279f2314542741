/*
 * name_index (name_index.h). Came from two copies, one per kind: a cluster's groups by id (a
 * pass over every group at each request naming one was half a heartbeat's instructions at 500
 * groups, issue 36) and its topics by name (a pass with a strlen per topic at every Produce and
 * Fetch, issue 37).
 */
#include "name_index.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "kp_mem.h"

static size_t bucket(size_t nb, const char *name, size_t len) { return (size_t)hash_fnv64(name, len) & (nb - 1); }

name_link *name_index_find(const name_index *x, const char *name, size_t len) {
    if (!x->nb) return NULL;
    for (name_link *l = x->b[bucket(x->nb, name, len)]; l; l = l->next)
        if (l->len == len && memcmp(l->name, name, len) == 0) return l;
    return NULL;
}

static void grow(name_index *x, size_t nb) {
    name_link **b = xcalloc(nb, sizeof *b);
    for (size_t i = 0; i < x->nb; i++)
        for (name_link *l = x->b[i], *next; l; l = next) {
            next = l->next;
            size_t k = bucket(nb, l->name, l->len);
            l->next = b[k];
            b[k] = l;
        }
    free(x->b);
    x->b = b;
    x->nb = nb;
}

void name_index_put(name_index *x, name_link *l, const char *name) {
    if (!x->nb) grow(x, 64);
    if (x->n + 1 > x->nb) grow(x, x->nb * 2);
    l->name = name;
    l->len = strlen(name);
    size_t k = bucket(x->nb, l->name, l->len);
    l->next = x->b[k];
    x->b[k] = l;
    x->n++;
}

void name_index_del(name_index *x, name_link *l) {
    if (!x->nb) return;
    for (name_link **pp = &x->b[bucket(x->nb, l->name, l->len)]; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            x->n--;
            return;
        }
}

void name_index_free(name_index *x) {
    free(x->b);
    *x = (name_index){0};
}
