/*
 * admin_clusters: the clusters of the process as the admin API sees them (docs/admin-api.md
 * "Clusters"). The `kafka` control plane (aws/) creates clusters beside the configured one
 * (fleet.h); a test reaches them here without the AWS API: GET /v1/clusters lists every cluster
 * with, per broker, its listeners' ports and, per listener, the bootstrap string a client dials.
 *
 * admin.c serves each route of one cluster both at its own path (the configured cluster, as
 * before clusters were several) and under /v1/clusters/{cluster}/, the same handler given that
 * cluster's srv; admin_cluster_at finds the cluster such a path names. A cluster with no srv to
 * act on (DELETING: DeleteCluster took its brokers down) is as unknown as one never created.
 */
#include <string.h>

#include "admin_route.h"
#include "fleet.h"

static json_t *cluster_json(const cluster *cl) {
    cluster_state st = cluster_state_now(cl);
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o}", "name", cl->name, "arn", cl->arn, "uuid", cl->uuid,
                          "type", cl->serverless ? "SERVERLESS" : "PROVISIONED", "state", cluster_state_name(st),
                          "configured", cl->primary, "created", admin_time(cl->created_ms));
    json_t *brokers = json_array(), *listeners = json_array(), *bootstrap = json_object();
    const srv *s = cl->s;
    if (s && st != CLUSTER_DELETING) {
        for (int i = 0; i < s->nnodes; i++) json_array_append_new(brokers, admin_broker_json(s, i));
        for (int k = 0; k < LSN_COUNT; k++) {
            if (!s->nnodes || !s->nodes[0].ports[k]) continue;
            json_t *l = admin_listener_json(s, (listener_kind)k);
            json_object_set(bootstrap, lsn_name((listener_kind)k), json_object_get(l, "bootstrap"));
            json_array_append_new(listeners, l);
        }
    }
    json_object_set_new(j, "brokers", brokers);
    json_object_set_new(j, "listeners", listeners);
    json_object_set_new(j, "bootstrap", bootstrap);
    return j;
}

void admin_get_clusters(admin_call *c) {
    json_t *a = json_array();
    fleet *f = c->s->fleet;
    for (int i = 0; f && i < f->n; i++)
        if (cluster_state_now(f->list[i]) != CLUSTER_GONE) json_array_append_new(a, cluster_json(f->list[i]));
    admin_ok(c, json_pack("{s:o}", "clusters", a));
}

void admin_get_cluster(admin_call *c) {
    if (!c->cluster) {
        http_error(c->rs, 404, "NotFound", "no cluster: the broker has none listed");
        return;
    }
    admin_ok(c, cluster_json(c->cluster));
}

/* id names cl when it begins with cl's name or ARN, whole: up to the end or a '/'. */
static size_t names(const cluster *cl, const char *id) {
    const char *const ids[] = {cl->arn, cl->name};
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(ids[i]);
        if (l && !strncmp(id, ids[i], l) && (id[l] == '/' || !id[l])) return l;
    }
    return 0;
}

cluster *admin_cluster_at(admin_call *c, const char *id, const char **rest) {
    fleet *f = c->s->fleet;
    /*
     * The path arrives percent-decoded, so an ARN's slashes are there whether the caller encoded
     * them or not; names hold no '/' or ':' (MSK's name rules) and ARNs begin with "arn:", so the
     * two never overlap.
     */
    for (int i = 0; f && i < f->n; i++) {
        cluster *cl = f->list[i];
        size_t l = names(cl, id);
        if (!l || cluster_state_now(cl) == CLUSTER_GONE) continue;
        if (!cl->s || cluster_state_now(cl) == CLUSTER_DELETING) {
            http_error(c->rs, 404, "NotFound", "cluster %s is DELETING (DeleteCluster): its brokers are gone", cl->arn);
            return NULL;
        }
        *rest = id + l;
        return cl;
    }
    /* what the caller meant as the cluster: a name is one segment, an ARN (cluster/<name>/<uuid>) three */
    int segs = strncmp(id, "arn:", 4) ? 1 : 3;
    const char *end = id;
    while (*end && (*end != '/' || --segs)) end++;
    http_error(c->rs, 404, "NotFound",
               "no cluster '%.*s' (GET /v1/clusters lists them; name one by its name or its ARN, percent-encoded or not)",
               (int)(end - id), id);
    return NULL;
}
