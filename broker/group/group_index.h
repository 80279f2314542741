/* The groups of a cluster by id (group_index.c), for group.c: grp_find without a pass over them. */
#ifndef GROUP_INDEX_H
#define GROUP_INDEX_H

#include "group.h"

group *grp_index_find(const srv *s, const char *id, size_t len);
void grp_index_put(srv *s, group *g);
void grp_index_del(srv *s, group *g);
void grp_index_free(srv *s);

#endif
