/*
 * admin_route: what the admin API's route files share (internal to broker/admin/). A route gets
 * one admin_call: the cluster it acts on, the HTTP request with its JSON body parsed, the path's {}
 * segments, and the response to fill. Every refusal is a 4xx JSON {"code", "message"} naming
 * the problem (http_error), which the request's log line repeats.
 */
#ifndef ADMIN_ROUTE_H
#define ADMIN_ROUTE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "http/http.h"
#include "srv.h"

#define ADMIN_MAX_ARGS 3

typedef struct admin_call {
    srv *s;                            /* the cluster's srv the call acts on */
    cluster *cluster;                  /* ... and the cluster (fleet.h); NULL without a fleet */
    const http_req *rq;
    http_resp *rs;
    json_t *body;                      /* a JSON object (an empty one when the request had no body) */
    char args[ADMIN_MAX_ARGS][256];    /* the path segments the pattern's {} stood for, decoded */
} admin_call;

typedef void (*admin_fn)(admin_call *c);

/* Answer 200 with j (released). */
void admin_ok(admin_call *c, json_t *j);
/*
 * The body holds no field but these (NULL-terminated); else 400 naming the unknown one and the
 * known ones. true when all are known.
 */
bool admin_known_fields(admin_call *c, const char *const *known);
/*
 * Field name of the body as an integer in [lo, hi]: absent gives *out = dflt and true (or 400
 * when required); another type or range gives 400 and false.
 */
bool admin_int(admin_call *c, const char *name, int64_t lo, int64_t hi, bool required, int64_t dflt, int64_t *out);
/* ... as a string (absent: *out = NULL, or 400 when required). */
bool admin_str(admin_call *c, const char *name, bool required, const char **out);
/* ... as a boolean. */
bool admin_bool(admin_call *c, const char *name, bool dflt, bool *out);
/* Wall-clock ms as RFC 3339 UTC with milliseconds, for JSON. */
json_t *admin_time(int64_t wall_ms);

/* ---- the routes, by file ---- */
/* admin_clusters.c */
void admin_get_clusters(admin_call *c);
void admin_get_cluster(admin_call *c);
/*
 * The cluster the start of id (a path after /v1/clusters/) names by its name or ARN, with *rest
 * the path after it; NULL with 404 answered when none does or it is DELETING.
 */
cluster *admin_cluster_at(admin_call *c, const char *id, const char **rest);
/* admin_state.c */
void admin_get_topics(admin_call *c);
void admin_get_topic(admin_call *c);
void admin_post_topic(admin_call *c);
void admin_delete_topic(admin_call *c);
void admin_get_groups(admin_call *c);
void admin_get_group(admin_call *c);
void admin_get_connections(admin_call *c);
void admin_post_reset(admin_call *c);
void admin_post_compaction(admin_call *c);
/* admin_iam.c */
void admin_get_iam(admin_call *c);
void admin_post_iam_rotate(admin_call *c);
void admin_post_iam_expire(admin_call *c);
void admin_post_iam_close_sessions(admin_call *c);
void admin_post_iam_reload(admin_call *c);
/* admin_brokers.c */
void admin_get_brokers(admin_call *c);
void admin_post_broker_down(admin_call *c);
void admin_post_broker_up(admin_call *c);
void admin_post_partition_leader(admin_call *c);
/* A broker (node index i) as GET /v1/brokers lists it. */
json_t *admin_broker_json(const srv *s, int i);
/* admin_listeners.c */
void admin_get_listeners(admin_call *c);
void admin_put_listener_advertised(admin_call *c);
void admin_delete_listener_advertised(admin_call *c);
/* A listener that is on, as GET /v1/listeners lists it. */
json_t *admin_listener_json(const srv *s, listener_kind k);

#endif
