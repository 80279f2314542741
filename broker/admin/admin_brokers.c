/*
 * admin_brokers: what a failover looks like to clients. A broker taken down stops listening (a
 * connect is refused), its connections close, it leaves Metadata's broker list, and every
 * partition it led moves to its next replica up (topic.h's topic_elect_leader; with none up the
 * partition is offline, as Kafka leaves it without unclean leader election) with its leader
 * epoch bumped, so a client that still names the old epoch gets FENCED_LEADER_EPOCH and one
 * that sends to the old leader has no connection: both refresh their metadata, as after a real
 * failover. Its groups' coordination moves with it (group.c's grp_coordinator_for skips brokers
 * down).
 *
 * Brought back up, it listens on the same ports again and, as Kafka's preferred-leader election
 * (auto.leader.rebalance.enable, on by default in Kafka and MSK) would after a while, leads the
 * partitions it is the preferred (first) replica of again, and any offline partition it holds a
 * replica of, epochs bumped once more. Leaders and epochs are stored (topic_move_leader), so a
 * restart never goes back to an older epoch. A broker's down state is not: a restart brings
 * every broker up.
 */
#include "admin_brokers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_route.h"
#include "log.h"
#include "net/net.h"
#include "topic/topic.h"

/* The node index with id, or -1 (400/404 already answered). */
static int node_arg(admin_call *c, const char *arg) {
    char *end;
    long id = strtol(arg, &end, 10);
    if (*end || end == arg) {
        http_error(c->rs, 400, "InvalidPath", "'%s' is not a broker id", arg);
        return -1;
    }
    for (int i = 0; i < c->s->nnodes; i++)
        if (c->s->nodes[i].id == id) return i;
    char ids[256];
    size_t l = 0;
    for (int i = 0; i < c->s->nnodes && l < sizeof ids; i++)
        l += (size_t)snprintf(ids + l, sizeof ids - l, "%s%d", i ? ", " : "", c->s->nodes[i].id);
    http_error(c->rs, 404, "NotFound", "no broker %ld (brokers: %s)", id, ids);
    return -1;
}

static void move_leader(srv *s, topic *t, partition *p, int to) {
    if (topic_move_leader(s, t, p, to) != 0)
        log_warn("admin: %s-%d: the new leader could not be stored (%s); a restart may go back to an older epoch",
                 t->name, p->index, stor_errmsg(s->st));
}

static int32_t node_id_or_none(const srv *s, int i) { return i == TOPIC_NO_LEADER ? -1 : s->nodes[i].id; }

/* The next broker after i that is up, or -1. */
static int next_up(const srv *s, int i) {
    for (int k = 1; k < s->nnodes; k++)
        if (!s->nodes[(i + k) % s->nnodes].down) return (i + k) % s->nnodes;
    return -1;
}

json_t *admin_broker_json(const srv *s, int i) {
    const node *n = &s->nodes[i];
    json_t *ports = json_object();
    for (int k = 0; k < LSN_COUNT; k++)
        if (n->ports[k]) json_object_set_new(ports, lsn_name((listener_kind)k), json_integer(n->ports[k]));
    int led = 0, conns = 0;
    for (const topic *t = s->topics; t; t = t->next)
        for (int32_t p = 0; p < t->nparts; p++) led += t->parts[p].leader == i;
    for (const conn *c = s->conns; c; c = c->next) conns += c->node == i;
    return json_pack("{s:i, s:b, s:o, s:i, s:i, s:b}", "id", (int)n->id, "up", !n->down, "ports", ports,
                     "partitions_led", led, "connections", conns, "controller", srv_controller(s) == i);
}

void admin_get_brokers(admin_call *c) {
    json_t *a = json_array();
    for (int i = 0; i < c->s->nnodes; i++) json_array_append_new(a, admin_broker_json(c->s, i));
    admin_ok(c, json_pack("{s:o}", "brokers", a));
}

void admin_post_broker_down(admin_call *c) {
    static const char *const known[] = {NULL};
    if (!admin_known_fields(c, known)) return;
    srv *s = c->s;
    int i = node_arg(c, c->args[0]);
    if (i < 0) return;
    if (s->nodes[i].down) {
        admin_ok(c, admin_broker_json(s, i)); /* already down: nothing changes */
        return;
    }
    if (next_up(s, i) < 0) {
        http_error(c->rs, 409, "LastBroker", "broker %d is the last one up; taking it down would leave no cluster",
                   s->nodes[i].id);
        return;
    }
    s->nodes[i].down = true;
    int moved = 0, offline = 0;
    for (topic *t = s->topics; t; t = t->next)
        for (int32_t p = 0; p < t->nparts; p++)
            if (t->parts[p].leader == i) {
                int to = topic_elect_leader(s, t, p);
                move_leader(s, t, &t->parts[p], to);
                moved++;
                offline += to == TOPIC_NO_LEADER;
            }
    int closed = net_node_down(s, i);
    log_info("admin: broker %d taken down: listeners closed, %d connections closed, %d partition leaders moved with "
             "their leader epochs bumped%s",
             s->nodes[i].id, closed, moved, offline ? " (some are offline: no replica of theirs is up)" : "");
    json_t *j = admin_broker_json(s, i);
    json_object_set_new(j, "connections_closed", json_integer(closed));
    json_object_set_new(j, "leaders_moved", json_integer(moved));
    admin_ok(c, j);
}

/* Up again: listening, and leading the partitions it is preferred leader of. -1 with err. */
static int bring_up(srv *s, int i, int *moved, char *err, size_t n) {
    if (net_node_up(s, i, err, n) != 0) return -1;
    s->nodes[i].down = false;
    *moved = 0;
    for (topic *t = s->topics; t; t = t->next)
        for (int32_t p = 0; p < t->nparts; p++) {
            partition *pp = &t->parts[p];
            int32_t replicas[TOPIC_MAX_REPLICAS];
            topic_replicas(s, t, p, replicas);
            bool preferred = replicas[0] == i && pp->leader != i;
            bool revived = pp->leader == TOPIC_NO_LEADER && topic_is_replica(s, t, p, i);
            if (preferred || revived) {
                move_leader(s, t, pp, i);
                (*moved)++;
            }
        }
    log_info("admin: broker %d back up: listening again; leads its %d preferred partitions again, leader epochs bumped",
             s->nodes[i].id, *moved);
    return 0;
}

void admin_post_broker_up(admin_call *c) {
    static const char *const known[] = {NULL};
    if (!admin_known_fields(c, known)) return;
    int i = node_arg(c, c->args[0]);
    if (i < 0) return;
    int moved = 0;
    char err[256];
    if (c->s->nodes[i].down && bring_up(c->s, i, &moved, err, sizeof err) != 0) {
        http_error(c->rs, 409, "NotReady", "%s", err);
        return;
    }
    json_t *j = admin_broker_json(c->s, i);
    json_object_set_new(j, "leaders_moved", json_integer(moved));
    admin_ok(c, j);
}

int admin_brokers_all_up(srv *s) {
    int up = 0, moved;
    char err[256];
    for (int i = 0; i < s->nnodes; i++) {
        if (!s->nodes[i].down) continue;
        if (bring_up(s, i, &moved, err, sizeof err) == 0)
            up++;
        else
            log_warn("admin: reset: broker %d stays down: %s", s->nodes[i].id, err);
    }
    return up;
}

void admin_post_partition_leader(admin_call *c) {
    static const char *const known[] = {"broker", NULL};
    int64_t id;
    if (!admin_known_fields(c, known) || !admin_int(c, "broker", 0, INT32_MAX, true, 0, &id)) return;
    srv *s = c->s;
    topic *t = topic_find(s, c->args[0], strlen(c->args[0]));
    if (!t) {
        http_error(c->rs, 404, "NotFound", "no topic '%s'", c->args[0]);
        return;
    }
    char *end;
    long p = strtol(c->args[1], &end, 10);
    if (*end || end == c->args[1] || p < 0 || p >= t->nparts) {
        http_error(c->rs, 404, "NotFound", "topic %s has no partition '%s' (it has %d)", t->name, c->args[1],
                   (int)t->nparts);
        return;
    }
    int to = -1;
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].id == id) to = i;
    if (to < 0) {
        http_error(c->rs, 400, "InvalidField", "no broker %lld", (long long)id);
        return;
    }
    if (s->nodes[to].down) {
        http_error(c->rs, 409, "BrokerDown", "broker %lld is down; it cannot lead", (long long)id);
        return;
    }
    if (!topic_is_replica(s, t, (int32_t)p, to)) { /* Kafka elects leaders among a partition's replicas only */
        int32_t replicas[TOPIC_MAX_REPLICAS];
        int32_t n = topic_replicas(s, t, (int32_t)p, replicas);
        char ids[TOPIC_MAX_REPLICAS * 12] = "";
        size_t l = 0;
        for (int32_t k = 0; k < n && l < sizeof ids; k++)
            l += (size_t)snprintf(ids + l, sizeof ids - l, "%s%d", k ? ", " : "", s->nodes[replicas[k]].id);
        http_error(c->rs, 409, "NotAReplica", "broker %lld holds no replica of %s-%ld (its replicas: %s)", (long long)id,
                   t->name, p, ids);
        return;
    }
    partition *pp = &t->parts[p];
    int from = pp->leader;
    move_leader(s, t, pp, to);
    if (from != to)
        log_info("admin: %s-%ld leader moved from broker %d to %d, leader epoch now %d", t->name, p,
                 node_id_or_none(s, from), s->nodes[to].id, pp->leader_epoch);
    admin_ok(c, json_pack("{s:s, s:i, s:i, s:i, s:i}", "topic", t->name, "partition", (int)p, "leader",
                          (int)s->nodes[to].id, "previous_leader", (int)node_id_or_none(s, from), "leader_epoch",
                          (int)pp->leader_epoch));
}
