/*
 * req_fault: what the request pipeline (req.c) does when a fault rule of the admin API
 * (admin/fault.h) fires on a request. Internal to net/.
 */
#ifndef REQ_FAULT_H
#define REQ_FAULT_H

#include "admin/fault.h"
#include "req.h"

/*
 * Instead of running h->fn: close (returns false), answer with the rule's error, hold the
 * request latency_ms and then run it, or run it and drop its answer. true: the connection goes on.
 */
bool req_fault(srv *s, req *r, const api_handler *h, const fault_hit *hit);
/* An answer its handler built, about to be encoded: the rule's error written over it (r->fault). */
void req_fault_overwrite(req *r, const kp_msg *m, int16_t ver, void *resp);

#endif
