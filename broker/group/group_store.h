/* Groups and committed offsets in storage: what survives a restart. */
#ifndef GROUP_STORE_H
#define GROUP_STORE_H

#include "group.h"

/* Persist the group's state and members (Stable, Empty, static replacement). */
void grp_store_save(srv *s, group *g);
/* The group and its offsets. */
int grp_store_delete(srv *s, group *g);
/* The classic state row of a group that becomes a consumer group (its offsets stay). */
void grp_store_forget_classic(srv *s, group *g);

#endif
