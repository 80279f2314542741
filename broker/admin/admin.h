/*
 * admin: the HTTP control plane for tests and tooling (docs/admin-api.md) on admin.port: health
 * and readiness, state, reset, IAM events, synthetic brokers down and up, fault rules and the
 * Prometheus metrics. It runs on the broker's loop through broker/http, and changes state only
 * through each subsystem's own functions, as a Kafka handler would.
 *
 * May call: every subsystem (topic, group, iam, net, storage through them). Must not be called
 * by them, except the fault-rule check (fault.h) and the metrics counters (metrics.h), which the
 * request pipeline and the subsystems consult.
 */
#ifndef ADMIN_H
#define ADMIN_H

#include <stddef.h>

#include "srv.h"

/* Bind admin.port (0: off; ports.auto: a free port). 0, or -1 with the reason in err. */
int admin_start(srv *s, char *err, size_t n);
/* The bound port (0: off). */
int admin_port(const srv *s);
void admin_close(srv *s);

#endif
