/*
 * fault_apply: what the request pipeline does when a fault rule of the admin API (admin/fault.h)
 * fires on a request. Internal to pipeline/.
 */
#ifndef FAULT_APPLY_H
#define FAULT_APPLY_H

#include "admin/fault.h"
#include "api/api.h"

/*
 * Instead of running h->fn: close (returns false), answer with the rule's error, hold the
 * request latency_ms and then run it, or run it and drop its answer. true: the connection goes on.
 */
bool fault_apply(srv *s, req *r, const api_handler *h, const fault_hit *hit);

#endif
