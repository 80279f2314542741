/* prometheus: the admin API's GET /metrics route (prometheus.c). Internal to admin/. */
#ifndef PROMETHEUS_H
#define PROMETHEUS_H

struct admin_call;
void metrics_get(struct admin_call *c);

#endif
