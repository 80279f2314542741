/*
 * lifecycle: the broker's start-up in dependency order, the loop's recurring callbacks and
 * shutdown (lifecycle.c). The top of the broker with main.c: it may call every subsystem, and
 * only main calls it.
 */
#ifndef LIFECYCLE_H
#define LIFECYCLE_H

#include "srv.h"

/* Open storage, load every subsystem, listen; -1 with the reason in err. */
int srv_init(srv *s, uv_loop_t *loop, config *cfg, char *err, size_t errlen);
void srv_close(srv *s);   /* stop listening and close connections */
void srv_free(srv *s);    /* after the loop ended */

#endif
