/*
 * fault: the admin API's fault rules (POST /v1/faults; docs/admin-api.md), consulted once per
 * Kafka request by the request pipeline (pipeline/dispatch.c) after the request is decoded and
 * authenticated, before its handler runs. A rule matches by API key (and optionally version
 * range, topic, partition, group, client id, principal, listener, synthetic broker) and then
 * answers with an error code, adds latency, closes the connection instead of answering, or drops
 * the response; for the next N matching requests, for D ms, and/or with probability p. Each rule
 * counts how often it matched and fired. Rules are tried in creation order; the first that fires
 * decides, so one request meets at most one fault.
 */
#ifndef FAULT_H
#define FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/req.h"

typedef enum fault_action {
    FAULT_NONE,
    FAULT_ERROR,   /* answer with error_code in every error field of the response */
    FAULT_LATENCY, /* hold the request latency_ms, then serve it normally */
    FAULT_CLOSE,   /* close the connection instead of answering */
    FAULT_DROP,    /* serve it, but never send the answer */
} fault_action;

typedef struct fault_hit {
    fault_action action;
    int16_t error_code;
    int32_t latency_ms;
    uint64_t rule_id;
    bool first;          /* the rule's first fire: worth an info line, later ones go to debug */
    /* the rule's topic and partition (NULL, -1: any), valid until the rule is deleted: where an
       error goes in an answer its handler built (pipeline/fault_apply.c copies them) */
    const char *topic;
    int32_t partition;
} fault_hit;

/*
 * The pipeline's check, for s->faults != NULL only (the caller tests that, so a broker without
 * rules pays nothing): true with *hit filled when a rule fires on r.
 */
bool fault_check(srv *s, req *r, fault_hit *hit);
/* Delete every rule (DELETE /v1/faults, POST /v1/reset); returns how many there were. */
int fault_clear(srv *s);
/* Every rule's memory, at exit. */
void fault_free_all(srv *s);

/*
 * Whether error code fits the API (key, versions vmin..vmax) of a rule: its answer has an error
 * field, and the error is of a kind that API returns (no group error on Produce). false with the
 * reason in why. (fault_errors.c)
 */
bool fault_error_fits(int16_t key, int16_t vmin, int16_t vmax, int16_t code, char *why, size_t n);

/* Routes (admin_route.h's admin_call) */
struct admin_call;
void fault_get_all(struct admin_call *c);
void fault_post(struct admin_call *c);
void fault_delete_all(struct admin_call *c);
void fault_get_one(struct admin_call *c);
void fault_delete_one(struct admin_call *c);

#endif
