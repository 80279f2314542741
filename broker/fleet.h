/*
 * fleet: every cluster of the process. The configured cluster exists from start (the primary);
 * the `kafka` control plane (aws/) creates others with CreateClusterV2 and removes them with
 * DeleteCluster, each a whole srv of its own (brokers and listeners, storage under
 * data.dir/clusters/<uuid>, topics, groups, transactions, quotas, profile) on the one loop.
 *
 * A cluster is a value here: its description (what DescribeClusterV2 says of it) and, while it
 * serves, its srv. A deleted cluster stays listed as DELETING until its deadline, without an srv.
 * States follow the monotonic clock (CREATING until active_at, DELETING until gone_at), so a
 * cluster costs no timer to change state. Core: state and lookups; creating and destroying a
 * srv are hooks lifecycle.c registers, since aws/ is below it.
 */
#ifndef FLEET_H
#define FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "arn.h"
#include "config.h"

typedef struct srv srv;

typedef enum cluster_state { CLUSTER_CREATING, CLUSTER_ACTIVE, CLUSTER_DELETING, CLUSTER_GONE } cluster_state;

#define CLUSTER_NAME_MAX 64

typedef struct cluster {
    char arn[448];
    char name[CLUSTER_NAME_MAX + 1];
    char account[16];        /* the account it belongs to (its creator's; msk.account.id for the configured one) */
    char uuid[48];
    bool serverless;
    int brokers;             /* provisioned: numberOfBrokerNodes (serverless: the profile's broker.count) */
    bool iam;                /* client authentication: SASL/IAM (the IAM listener) */
    bool unauthenticated;    /* client authentication: unauthenticated (the plaintext listener) */
    char kafka_version[24];  /* provisioned; "" for serverless */
    char *info;              /* JSON: the Cluster shape's "serverless" or "provisioned" object, as created */
    int64_t created_ms;      /* wall clock */
    int64_t active_at_ms;    /* monotonic: CREATING before it */
    int64_t gone_at_ms;      /* monotonic; 0: not deleted */
    bool primary;
    uint64_t seq;            /* its place in creation order (fleet_add), which list pages follow */
    srv *s;                  /* NULL once deleted */
} cluster;

typedef struct fleet {
    uv_loop_t *loop;
    cluster **list;          /* the primary first, then by creation */
    int n, cap;
    uint64_t next_seq;
    cfg_source src;          /* the configuration's sources: a created cluster's is loaded from them */
    uv_prepare_t prepare;    /* once per iteration, every cluster (lifecycle.c) */
    uv_timer_t housekeeping; /* once a second, every cluster */
    /*
     * Hooks lifecycle.c registers: start a srv for c (c->s set; on failure nothing is left and the
     * reason is in err) and take one down (its connections closed, its storage removed once the
     * loop has let go of its handles).
     */
    int (*start)(struct fleet *f, cluster *c, char *err, size_t n);
    void (*stop)(struct fleet *f, cluster *c);
    /* A cluster was created or deleted (the ready file lists the clusters that serve); NULL: none. */
    void (*changed)(struct fleet *f);
} fleet;

cluster_state cluster_state_now(const cluster *c);
/* The description a created cluster is kept as (storage's clusters.spec), and back: 0, or -1 when damaged. */
char *cluster_spec_json(const cluster *c);
int cluster_from_spec(cluster *c, const char *spec);
const char *cluster_state_name(cluster_state st);
/* The cluster an ARN names (not yet gone), or NULL. */
cluster *fleet_find_arn(fleet *f, const char *arn);
/* The account's cluster of that name that is not yet gone, or NULL (names are unique per account, as MSK's). */
cluster *fleet_find_name(fleet *f, const char *account, const char *name);

/* Takes c (fleet_free frees it). */
void fleet_add(fleet *f, cluster *c);
/* Clusters whose DELETING is over leave the list. */
void fleet_sweep(fleet *f);
/* The clusters that count against a quota: not gone, created by the control plane. */
int fleet_created(const fleet *f, bool serverless);
void fleet_free(fleet *f);

#endif
