/*
 * admin_listeners: what each listener tells clients to dial. A broker in a container binds its
 * external listener on a port of the container; Docker maps it to a host port chosen only when
 * the container starts, and Metadata must name that host port or clients dial one nobody listens
 * on. Testcontainers' Kafka module solves it by writing the advertised listeners into the
 * container after the ports are known (its start script waits for that file); here the wrapper
 * sets them with one call after start, and the broker answers every later Metadata,
 * FindCoordinator and DescribeCluster with them. Nothing is stored: a restarted container has new
 * mapped ports anyway.
 *
 * A listener with SASL may only be advertised as a host its TLS certificate covers and an
 * AWS_MSK_IAM token may name (sasl_host_accepted); that set is fixed at start, so a wrapper that
 * advertises another host name sets external.advertised.host (or tls.hosts) when it creates the
 * container, and only the ports afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_route.h"
#include "iam/sasl.h"
#include "kp_mem.h"
#include "log.h"

/* The listener kind named by arg and on, or -1 (404/409 already answered). */
static int kind_arg(admin_call *c, const char *arg) {
    char names[128] = "";
    size_t l = 0;
    for (int k = 0; k < LSN_COUNT; k++) {
        if (!c->s->nnodes || !c->s->nodes[0].ports[k]) continue;
        if (!strcmp(arg, lsn_name((listener_kind)k))) return k;
        l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", lsn_name((listener_kind)k));
    }
    for (int k = 0; k < LSN_COUNT; k++)
        if (!strcmp(arg, lsn_name((listener_kind)k))) {
            http_error(c->rs, 409, "ListenerOff", "the %s listener is off (its port key is 0); listeners on: %s", arg,
                       names);
            return -1;
        }
    http_error(c->rs, 404, "NotFound", "no listener '%s' (listeners on: %s)", arg, names);
    return -1;
}

json_t *admin_listener_json(const srv *s, listener_kind k) {
    json_t *bound = json_array(), *adv = json_array();
    char boot[2048];
    size_t l = 0;
    for (int i = 0; i < s->nnodes; i++) {
        json_array_append_new(bound, json_integer(s->nodes[i].ports[k]));
        json_array_append_new(adv, json_integer(lsn_port(s, i, k)));
        if (!s->nodes[i].down && l < sizeof boot)
            l += (size_t)snprintf(boot + l, sizeof boot - l, "%s%s:%d", l ? "," : "", lsn_host(s, k), lsn_port(s, i, k));
    }
    return json_pack("{s:s, s:s, s:o, s:o, s:s, s:b}", "name", lsn_name(k), "host", lsn_host(s, k), "ports", bound,
                     "advertised_ports", adv, "bootstrap", boot, "overridden",
                     s->adv_host[k] != NULL || s->nodes[0].adv_ports[k] != 0);
}

void admin_get_listeners(admin_call *c) {
    json_t *a = json_array();
    for (int k = 0; k < LSN_COUNT; k++)
        if (c->s->nnodes && c->s->nodes[0].ports[k]) json_array_append_new(a, admin_listener_json(c->s, (listener_kind)k));
    admin_ok(c, json_pack("{s:o}", "listeners", a));
}

/* A name a client can dial: a DNS name or an address, no spaces, no port. */
static bool plausible_host(const char *h) {
    size_t n = strlen(h);
    if (!n || n > 253) return false;
    for (const char *p = h; *p; p++)
        if (!(*p == '-' || *p == '.' || *p == '_' || *p == ':' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z')))
            return false;
    return true;
}

static void log_change(const srv *s, listener_kind k, const char *what) {
    char adv[512], bound[512];
    size_t la = 0, lb = 0;
    for (int i = 0; i < s->nnodes && la < sizeof adv && lb < sizeof bound; i++) {
        la += (size_t)snprintf(adv + la, sizeof adv - la, "%s%d", i ? "," : "", lsn_port(s, i, k));
        lb += (size_t)snprintf(bound + lb, sizeof bound - lb, "%s%d", i ? "," : "", s->nodes[i].ports[k]);
    }
    log_info("admin: %s listener %s: clients are now told %s, port%s %s (bound on %s)", lsn_name(k), what,
             lsn_host(s, k), s->nnodes == 1 ? "" : "s", adv, bound);
}

void admin_put_listener_advertised(admin_call *c) {
    static const char *const known[] = {"host", "ports", NULL};
    if (!admin_known_fields(c, known)) return;
    srv *s = c->s;
    int k = kind_arg(c, c->args[0]);
    if (k < 0) return;
    const char *host;
    if (!admin_str(c, "host", false, &host)) return;
    json_t *ports = json_object_get(c->body, "ports");
    if (!host && !ports) {
        http_error(c->rs, 400, "MissingField", "give host, ports, or both (DELETE goes back to the configured ones)");
        return;
    }
    if (host && !plausible_host(host)) {
        http_error(c->rs, 400, "InvalidField", "host '%s' is not a host name or address", host);
        return;
    }
    char accepted[1024];
    if (host && lsn_sasl((listener_kind)k) && !sasl_host_accepted(s, host, accepted, sizeof accepted)) {
        http_error(c->rs, 409, "HostNotCovered",
                   "host '%s' is not one the %s listener's TLS certificate covers and IAM tokens may name (%s); set "
                   "external.advertised.host or tls.hosts to it at start, then advertise only the ports",
                   host, lsn_name((listener_kind)k), accepted);
        return;
    }
    int32_t want[CFG_MAX_BROKERS] = {0};
    if (ports) {
        if (!json_is_array(ports) || json_array_size(ports) != (size_t)s->nnodes) {
            http_error(c->rs, 400, "InvalidField", "ports must be an array of %d port%s, one per broker (broker.count)",
                       s->nnodes, s->nnodes == 1 ? "" : "s");
            return;
        }
        for (int i = 0; i < s->nnodes; i++) {
            json_t *v = json_array_get(ports, (size_t)i);
            if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535) {
                http_error(c->rs, 400, "InvalidField", "ports[%d] must be a port number (1-65535)", i);
                return;
            }
            want[i] = (int32_t)json_integer_value(v);
        }
    }
    if (host) {
        free(s->adv_host[k]);
        s->adv_host[k] = xstrdup(host);
    }
    for (int i = 0; ports && i < s->nnodes; i++) s->nodes[i].adv_ports[k] = want[i];
    log_change(s, (listener_kind)k, "advertised by the admin API");
    admin_ok(c, admin_listener_json(s, (listener_kind)k));
}

void admin_delete_listener_advertised(admin_call *c) {
    srv *s = c->s;
    int k = kind_arg(c, c->args[0]);
    if (k < 0) return;
    free(s->adv_host[k]);
    s->adv_host[k] = NULL;
    for (int i = 0; i < s->nnodes; i++) s->nodes[i].adv_ports[k] = 0;
    log_change(s, (listener_kind)k, "back to its configuration");
    admin_ok(c, admin_listener_json(s, (listener_kind)k));
}
