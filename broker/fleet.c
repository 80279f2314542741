/* fleet: the clusters of the process and their states; see fleet.h. */
#include "fleet.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_mem.h"

cluster_state cluster_state_now(const cluster *c) {
    int64_t now = clk_mono_ms();
    if (c->gone_at_ms) return now < c->gone_at_ms ? CLUSTER_DELETING : CLUSTER_GONE;
    return now < c->active_at_ms ? CLUSTER_CREATING : CLUSTER_ACTIVE;
}

char *cluster_spec_json(const cluster *c) {
    json_error_t je;
    json_t *info = json_loads(c->info ? c->info : "{}", 0, &je);
    json_t *j = json_pack("{s:s, s:b, s:i, s:b, s:b, s:s, s:o}", "uuid", c->uuid, "serverless", c->serverless,
                          "brokers", c->brokers, "iam", c->iam, "unauthenticated", c->unauthenticated, "kafkaVersion",
                          c->kafka_version, "info", info ? info : json_object());
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return text;
}

int cluster_from_spec(cluster *c, const char *spec) {
    json_error_t je;
    json_t *j = json_loads(spec, 0, &je), *info = NULL;
    const char *uuid = NULL, *version = NULL;
    int sl = 0, iam = 0, unauth = 0, brokers = 0;
    int rc = json_unpack(j, "{s:s, s:b, s:i, s:b, s:b, s:s, s:o}", "uuid", &uuid, "serverless", &sl, "brokers", &brokers,
                         "iam", &iam, "unauthenticated", &unauth, "kafkaVersion", &version, "info", &info);
    if (rc == 0 && brokers > 0 && strlen(uuid) < sizeof c->uuid && strlen(version) < sizeof c->kafka_version) {
        snprintf(c->uuid, sizeof c->uuid, "%s", uuid);
        snprintf(c->kafka_version, sizeof c->kafka_version, "%s", version);
        c->serverless = sl, c->iam = iam, c->unauthenticated = unauth, c->brokers = brokers;
        free(c->info);
        c->info = json_dumps(info, JSON_COMPACT);
    } else {
        rc = -1;
    }
    json_decref(j);
    return rc;
}

const char *cluster_state_name(cluster_state st) {
    static const char *const names[] = {"CREATING", "ACTIVE", "DELETING", "GONE"};
    return names[st];
}

cluster *fleet_find_arn(fleet *f, const char *arn) {
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->list[i]->arn, arn) && cluster_state_now(f->list[i]) != CLUSTER_GONE) return f->list[i];
    return NULL;
}

cluster *fleet_find_name(fleet *f, const char *account, const char *name) {
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->list[i]->name, name) && !strcmp(f->list[i]->account, account) &&
            cluster_state_now(f->list[i]) != CLUSTER_GONE)
            return f->list[i];
    return NULL;
}



void fleet_add(fleet *f, cluster *c) {
    XGROW(f->list, f->cap, f->n + 1, 4);
    c->seq = ++f->next_seq;
    f->list[f->n++] = c;
}

static void cluster_free(cluster *c) {
    free(c->info);
    free(c);
}

void fleet_sweep(fleet *f) {
    int w = 0;
    for (int i = 0; i < f->n; i++) {
        cluster *c = f->list[i];
        /* a cluster whose srv the loop still holds stays until stop has let it go */
        if (cluster_state_now(c) == CLUSTER_GONE && !c->s)
            cluster_free(c);
        else
            f->list[w++] = c;
    }
    f->n = w;
}

int fleet_created(const fleet *f, bool serverless) {
    int n = 0;
    for (int i = 0; i < f->n; i++)
        if (!f->list[i]->primary && f->list[i]->serverless == serverless && cluster_state_now(f->list[i]) != CLUSTER_GONE)
            n++;
    return n;
}

void fleet_free(fleet *f) {
    for (int i = 0; i < f->n; i++) cluster_free(f->list[i]);
    free(f->list);
    f->list = NULL;
    f->n = f->cap = 0;
}
