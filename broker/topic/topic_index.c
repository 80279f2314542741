/*
 * topic_index: a cluster's topics by name, chained buckets on FNV-1a (hash.h's 64-bit form, for
 * in-memory tables), doubled when there are more topics than buckets; group_index.c's shape.
 * topic_find was a pass over every topic with a strlen each, at every Produce and Fetch (and
 * every other request naming a topic): a cost that grows with the cluster's topics (issue 37).
 * topics.c puts a topic in when it registers one and takes it out when it deletes it.
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "kp_mem.h"
#include "srv.h"
#include "topic_index.h"

struct topic_index {
    topic **b;
    size_t nb, n;
};

static size_t bucket(size_t nb, const char *name, size_t len) { return (size_t)hash_fnv64(name, len) & (nb - 1); }

topic *topic_index_find(const srv *s, const char *name, size_t len) {
    const struct topic_index *x = s->topic_index;
    if (!x) return NULL;
    for (topic *t = x->b[bucket(x->nb, name, len)]; t; t = t->hnext)
        if (strlen(t->name) == len && memcmp(t->name, name, len) == 0) return t;
    return NULL;
}

static void grow(struct topic_index *x, size_t nb) {
    topic **b = xcalloc(nb, sizeof *b);
    for (size_t i = 0; i < x->nb; i++)
        for (topic *t = x->b[i], *next; t; t = next) {
            next = t->hnext;
            size_t k = bucket(nb, t->name, strlen(t->name));
            t->hnext = b[k];
            b[k] = t;
        }
    free(x->b);
    x->b = b;
    x->nb = nb;
}

void topic_index_put(srv *s, topic *t) {
    struct topic_index *x = s->topic_index;
    if (!x) {
        x = s->topic_index = xcalloc(1, sizeof *x);
        grow(x, 64);
    }
    if (x->n + 1 > x->nb) grow(x, x->nb * 2);
    size_t k = bucket(x->nb, t->name, strlen(t->name));
    t->hnext = x->b[k];
    x->b[k] = t;
    x->n++;
}

void topic_index_del(srv *s, topic *t) {
    struct topic_index *x = s->topic_index;
    if (!x) return;
    for (topic **pp = &x->b[bucket(x->nb, t->name, strlen(t->name))]; *pp; pp = &(*pp)->hnext)
        if (*pp == t) {
            *pp = t->hnext;
            x->n--;
            return;
        }
}

void topic_index_free(srv *s) {
    if (!s->topic_index) return;
    free(s->topic_index->b);
    free(s->topic_index);
    s->topic_index = NULL;
}
