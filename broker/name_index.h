/*
 * name_index: things a cluster finds by name (its topics, its consumer groups), in chained
 * buckets on FNV-1a (hash.h's 64-bit form), doubled when there are more entries than buckets.
 * Intrusive: the owner embeds a name_link and keeps the name it points to for as long as it is
 * in the index, so putting one in allocates nothing but the buckets.
 */
#ifndef NAME_INDEX_H
#define NAME_INDEX_H

#include <stddef.h>

typedef struct name_link {
    struct name_link *next; /* in its bucket */
    const char *name;       /* the owner's */
    size_t len;
} name_link;

typedef struct name_index {
    name_link **b;
    size_t nb, n;
} name_index;

/* The owner of type T whose name_link member M is l (NULL for NULL). */
#define NAME_OWNER(l, T, M) ((l) ? (T *)(void *)((char *)(l) - offsetof(T, M)) : (T *)NULL)

name_link *name_index_find(const name_index *x, const char *name, size_t len);
/* l takes name (NUL-terminated, the owner's) and goes in; a name already in is not looked for. */
void name_index_put(name_index *x, name_link *l, const char *name);
void name_index_del(name_index *x, name_link *l);
void name_index_free(name_index *x);

#endif
