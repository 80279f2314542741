/*
 * lifecycle: the broker's start-up in dependency order, the loop's recurring callbacks and
 * shutdown (lifecycle.c). The top of the broker with main.c: it may call every subsystem, and
 * only main calls it.
 */
#ifndef LIFECYCLE_H
#define LIFECYCLE_H

#include "fleet.h"
#include "srv.h"

/*
 * The configured cluster (the primary of f, whose src the caller kept): open storage, load every
 * subsystem, listen, then start the clusters the control plane created before; -1 with the
 * reason in err.
 */
int srv_init(srv *s, uv_loop_t *loop, config *cfg, fleet *f, char *err, size_t errlen);
void srv_close(srv *s);   /* stop listening and close connections (the primary's: every cluster's) */
void srv_free(srv *s);    /* after the loop ended (the primary's: every cluster's) */

#endif
