/*
 * admin_iam: the IAM events a test makes happen on demand (docs/admin-api.md "IAM"): rotate a
 * role's credentials now, expire a credential, close or expire the sessions of a principal,
 * reload the identities file; and what identities exist. Secrets and session tokens never
 * appear in an answer: only access key ids, principals, roles and times.
 */
#include <stdio.h>
#include <string.h>

#include "admin_route.h"
#include "clock.h"
#include "iam/authz.h"
#include "iam/iam_store.h"
#include "iam/sasl.h"
#include "log.h"
#include "net/net.h"

static json_t *cred_json(const iam_cred *cr) {
    json_t *j = json_pack("{s:s, s:s}", "access_key_id", cr->access_key_id, "principal", cr->principal);
    json_object_set_new(j, "role", cr->role ? json_string(cr->role) : json_null());
    json_object_set_new(j, "expiration", cr->expiry_ms >= 0 ? admin_time(cr->expiry_ms) : json_null());
    json_object_set_new(j, "superseded_at", cr->superseded_ms >= 0 ? admin_time(cr->superseded_ms) : json_null());
    return j;
}

void admin_get_iam(admin_call *c) {
    iam_store *st = sasl_identities(c->s);
    json_t *roles = json_array(), *creds = json_array();
    for (size_t i = 0; i < iam_store_role_count(st); i++) {
        const char *name = iam_store_role_name(st, i);
        const iam_cred *cur = iam_store_current(st, name);
        json_t *r = json_pack("{s:s, s:s}", "name", name, "arn", iam_store_role_arn(st, name));
        json_object_set_new(r, "current", cur ? cred_json(cur) : json_null());
        json_array_append_new(roles, r);
    }
    for (size_t i = 0; i < iam_store_count(st); i++) json_array_append_new(creds, cred_json(iam_store_at(st, i)));
    int64_t next = iam_store_next_rotation(st);
    json_t *j = json_pack("{s:o, s:o}", "roles", roles, "credentials", creds);
    json_object_set_new(j, "next_rotation", next >= 0 ? admin_time(next) : json_null());
    admin_ok(c, j);
}

void admin_post_iam_rotate(admin_call *c) {
    static const char *const known[] = {NULL};
    if (!admin_known_fields(c, known)) return;
    const char *role = c->args[0];
    if (sasl_rotate_role(c->s, role) != 0) {
        http_error(c->rs, 404, "NotFound", "no role '%s' in iam.identities.file", role);
        return;
    }
    const iam_cred *cur = iam_store_current(sasl_identities(c->s), role);
    snprintf(c->rs->detail, sizeof c->rs->detail, "role=%.64s rotated to %.64s", role, cur->access_key_id);
    admin_ok(c, json_pack("{s:s, s:o}", "role", role, "current", cred_json(cur)));
}

void admin_post_iam_expire(admin_call *c) {
    static const char *const known[] = {NULL};
    if (!admin_known_fields(c, known)) return;
    const char *akid = c->args[0];
    bool rotated;
    int ended = sasl_expire_credential(c->s, akid, &rotated);
    if (ended < 0) {
        http_error(c->rs, 404, "NotFound", "no credentials with access key id '%s'", akid);
        return;
    }
    snprintf(c->rs->detail, sizeof c->rs->detail, "access_key_id=%.128s expired, %d sessions ended", akid, ended);
    admin_ok(c, json_pack("{s:s, s:i, s:b}", "access_key_id", akid, "sessions_ended", ended, "role_rotated", rotated));
}

/* A connection's principal ("IAM.<arn>" once authenticated) against what the caller named. */
static bool principal_is(const conn *k, const char *p) {
    if (!k->principal) return false;
    const char *have = k->principal;
    return !strcmp(have, p) || (!strncmp(have, "IAM.", 4) && !strcmp(have + 4, p));
}

void admin_post_iam_close_sessions(admin_call *c) {
    static const char *const known[] = {"principal", "mode", NULL};
    const char *principal, *mode;
    if (!admin_known_fields(c, known) || !admin_str(c, "principal", true, &principal) ||
        !admin_str(c, "mode", false, &mode))
        return;
    bool expire = mode && !strcmp(mode, "expire");
    if (mode && !expire && strcmp(mode, "close") != 0) {
        http_error(c->rs, 400, "InvalidField", "mode is 'close' (the default: connections close now) or 'expire' "
                                               "(sessions end at their next request, as at session expiry)");
        return;
    }
    int n = 0;
    int64_t now = clk_now_ms();
    char why[96];
    snprintf(why, sizeof why, "admin API: sessions of the principal %s", expire ? "expired" : "closed");
    for (conn *k = c->s->conns, *next; k; k = next) {
        next = k->next;
        if (k->closing || !principal_is(k, principal)) continue;
        n++;
        if (expire) {
            k->session_expiry_ms = now;
            log_info("conn=%llu principal=%s: session expired by the admin API; it ends at the next request",
                     (unsigned long long)k->id, k->principal);
        } else {
            net_close(k, why);
        }
    }
    snprintf(c->rs->detail, sizeof c->rs->detail, "%d sessions %s", n, expire ? "expired" : "closed");
    admin_ok(c, json_pack("{s:s, s:s, s:i}", "principal", principal, "mode", expire ? "expire" : "close", "sessions", n));
}

void admin_post_iam_reload(admin_call *c) {
    static const char *const known[] = {NULL};
    if (!admin_known_fields(c, known)) return;
    char err[1024];
    if (authz_reload(c->s, "admin API", err, sizeof err) != 0) {
        http_error(c->rs, 409, "ReloadRefused", "%s; the current policies stay", err);
        return;
    }
    admin_ok(c, json_pack("{s:s, s:s, s:I}", "status", "reloaded", "file", c->s->cfg->iam_identities_file,
                          "applies_in_ms", (json_int_t)c->s->cfg->iam_policy_propagation_ms));
}
