/*
 * pipeline: the steps every Kafka request passes between the transport and its handler (header,
 * gates, body, quotas and faults; dispatch.c). lifecycle.c sets srv.dispatch to pipeline_dispatch at
 * start-up; the transport (net.c) calls it for each frame.
 */
#ifndef PIPELINE_H
#define PIPELINE_H

#include "net/req.h"

/* Decode r->frame and run its handler (or refuse it). false: the connection must close. */
bool pipeline_dispatch(srv *s, req *r);

#endif
