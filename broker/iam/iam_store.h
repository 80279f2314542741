/*
 * iam_store: the fake AWS identities IAM tokens are checked against, and
 * the credential rotation that reproduces the "disconnects every six hours on
 * ECS" class of bugs.
 *
 * Two kinds of identity come from iam.identities.file (JSON):
 *   - long-term keys: a fixed access key id and secret (optionally a session
 *     token and an expiry), each with a principal ARN;
 *   - roles: mskmock issues them temporary credentials (ASIA... key, secret,
 *     session token, expiry = issue time + iam.credentials.lifetime.ms) and
 *     rotates them every iam.credentials.rotation.interval.ms, as the ECS and
 *     EKS credential endpoints do. The built-in credentials endpoint
 *     (iam.credentials.port) serves a role's current credentials in the
 *     container-credentials JSON format, so an unmodified AWS SDK in the
 *     client signs with them.
 *
 * Superseded credentials stay known: what happens to tokens they signed is
 * iam.token.invalidation (credential-expiry, the MSK behaviour: valid until
 * those credentials expire; rotation: refused from the moment they were
 * superseded; token-expiry: only the token's own expiry counts).
 *
 * File format:
 *   {
 *     "identities": [
 *       {"access_key_id": "AKIA...", "secret_access_key": "...",
 *        "session_token": null, "expiration": null,
 *        "principal": "arn:aws:iam::123456789012:user/alice"}
 *     ],
 *     "roles": [
 *       {"name": "app", "arn": "arn:aws:iam::123456789012:role/app",
 *        "session_name": "app-session", "max_session_duration": 3600,
 *        "policies": [{"Version": "2012-10-17", "Statement": [...]}, "app-policy.json"]}
 *     ]
 *   }
 * "policies" (identities and roles alike): IAM policy documents, inline or as paths to
 * .json files relative to this file (iam_policy.h says what is accepted). Without it the
 * identity is allowed everything, unless iam.authorization.default=deny.
 * A role's principal is arn:aws:sts::<account>:assumed-role/<role name>/<session
 * name>; with iam.credentials.new.session.name=true each rotation uses a new
 * session name (reproduces "Cannot change principals").
 * "max_session_duration" (optional, seconds, 3600-43200, default 3600): IAM's
 * MaxSessionDuration, the longest DurationSeconds STS AssumeRole (aws/sts.c) grants.
 */
/* Named iam_cred, not iam_credential: iam_token.h uses that name for its lookup result. */
#ifndef IAM_STORE_H
#define IAM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct iam_store iam_store;

typedef struct iam_cred {
    const char *access_key_id;
    const char *secret_access_key;
    const char *session_token;   /* NULL for long-term keys */
    int64_t expiry_ms;           /* -1: never */
    int64_t superseded_ms;       /* when rotation replaced it, -1: current */
    const char *principal;       /* ARN */
    const char *role;            /* role name, NULL for long-term keys */
    const struct iam_policy *policy; /* NULL: no "policies" (allowed everything) */
} iam_cred;

typedef enum iam_invalidation {
    IAM_INVALIDATE_CREDENTIAL_EXPIRY,
    IAM_INVALIDATE_ROTATION,
    IAM_INVALIDATE_TOKEN_EXPIRY,
} iam_invalidation;

/*
 * iam.authorization.default: what an identity without "policies" may do. AUTO is MSK's rule
 * where it can be told apart from a test setup: nothing, as on MSK (an IAM identity with no
 * policy granting kafka-cluster:Connect cannot even log in), as soon as the identities file
 * gives any identity or role policies; everything when no entry has any (IAM authentication
 * without authorization, convenient in tests).
 */
enum { IAM_AUTHZ_DEFAULT_ALLOW, IAM_AUTHZ_DEFAULT_DENY, IAM_AUTHZ_DEFAULT_AUTO };

typedef struct iam_store_settings {
    const char *file;              /* NULL or "": no identities (every token is refused) */
    int64_t rotation_interval_ms;  /* 0: never rotate */
    int64_t lifetime_ms;           /* validity of issued role credentials */
    bool new_session_name;         /* new role-session name at each rotation */
    int64_t authz_default;         /* IAM_AUTHZ_DEFAULT_*: DENY: no "policies" means an empty set */
} iam_store_settings;

/*
 * Validation at open (every error names the file, the entry and the field, e.g.
 * "identities.json: identities[2]: access_key_id missing"; unknown keys are refused so
 * typos surface): access_key_id 1-128 letters and digits, unique across the file;
 * secret_access_key and session_token printable ASCII; expiration ISO-8601 UTC
 * ("2026-12-31T00:00:00Z", optional fraction); principal and arn start with "arn:aws";
 * a role's arn is arn:<partition>:iam::<account>:role/[<path>/]<role name> and its
 * principal uses that role name; name is what the credentials endpoint serves
 * (/role/<name>), unique, [A-Za-z0-9+=,.@_-]{1,64}; session_name [A-Za-z0-9+=,.@_-]{2,64},
 * default "mskmock". rotation_interval_ms must be >= 0 and lifetime_ms > 0.
 *
 * Issued credentials: "ASIA" + 16 characters of A-Z2-7 (as real keys), a 40-character secret and
 * a 200-character session token (base64 alphabet), all from RAND_bytes; expiry = issue time
 * + lifetime_ms rounded down to a whole second (STS reports whole seconds). With
 * new_session_name the n-th rotation uses the session name "<session_name>-<n>".
 *
 * Pointers returned by iam_store_lookup/iam_store_current stay valid until that credential
 * is forgotten by iam_store_rotate_due (superseded credentials whose expiry passed more than
 * IAM_FORGET_AFTER_MS ago) or the store is freed: do not keep them across a rotation.
 * Long-term keys and a role's current credentials are never forgotten.
 */
#define IAM_FORGET_AFTER_MS 3600000

/* Load the file and issue the roles' first credentials at now_ms. -1 with a reason naming the file and entry. */
int iam_store_open(iam_store **out, const iam_store_settings *set, int64_t now_ms, char *err, size_t n);
void iam_store_free(iam_store *st);

/* Find a credential (current or superseded) by access key id; NULL when unknown. */
const iam_cred *iam_store_lookup(const iam_store *st, const char *access_key_id);

/* The role's current credentials; NULL when no such role. */
const iam_cred *iam_store_current(const iam_store *st, const char *role);

/*
 * Rotate every role whose credentials are due at now_ms (issue new ones,
 * mark the old ones superseded) and forget credentials that expired long
 * ago. Returns the number of roles rotated. The caller runs it from a timer
 * and logs each rotation.
 */
int iam_store_rotate_due(iam_store *st, int64_t now_ms);
/*
 * Rotate one role now (the admin API's "rotate now"): new credentials, the old ones superseded
 * at now_ms, the next scheduled rotation an interval from now. -1: no such role, or no random bytes.
 */
int iam_store_rotate_role(iam_store *st, const char *role, int64_t now_ms);
/*
 * Expire a credential (current or superseded, role or long-term key) at now_ms. A role's current
 * credentials are then rotated (*rotated), so the credentials endpoint serves valid ones again.
 * NULL when the key is unknown.
 */
const iam_cred *iam_store_expire(iam_store *st, const char *access_key_id, int64_t now_ms, bool *rotated);
/*
 * STS AssumeRole: new temporary credentials ("ASIA..." as rotation issues them) of the role whose
 * ARN is role_arn, for the principal arn:<partition>:sts::<account>:assumed-role/<role>/<session_name>,
 * with the role's policies, expiring duration_ms from now_ms (down to a whole second). They are
 * never rotated nor superseded; like superseded credentials they are forgotten
 * IAM_FORGET_AFTER_MS after they expire. The caller checks duration_ms against
 * iam_store_role_max_session_s. NULL: no such role, a session name outside
 * [A-Za-z0-9+=,.@_-]{2,64}, or no random bytes.
 */
const iam_cred *iam_store_assume(iam_store *st, const char *role_arn, const char *session_name, int64_t duration_ms,
                                 int64_t now_ms);
/* AssumeRole credentials held (not yet forgotten): the caller bounds them (aws/sts.c). */
size_t iam_store_assumed_count(const iam_store *st);
/* A role's max_session_duration in seconds (IAM's MaxSessionDuration), by its ARN; -1: no such role. */
#define IAM_ROLE_MAX_SESSION_DEFAULT_S 3600
int64_t iam_store_role_max_session_s(const iam_store *st, const char *role_arn);
/* The i-th known credential (i < iam_store_count), for listings. */
const iam_cred *iam_store_at(const iam_store *st, size_t i);
/* When the next rotation is due (ms, wall clock), or -1. */
int64_t iam_store_next_rotation(const iam_store *st);

/* Credentials known (long-term keys, current and superseded role credentials). */
size_t iam_store_count(const iam_store *st);

/* Roles, in file order: their names, and a role's ARN (NULL when no such role). */
size_t iam_store_role_count(const iam_store *st);
const char *iam_store_role_name(const iam_store *st, size_t i);
const char *iam_store_role_arn(const iam_store *st, const char *role);

/*
 * Reload: take the policies of from's identities (by access key id) and roles (by name)
 * into st, whose credentials, rotations and sessions stay as they are. Identities or roles
 * only one of them has are listed in note (they take effect at the next start). Returns how
 * many identities and roles got from's policies; from is left without them.
 */
/* What an entry without "policies" may do in this store: ALLOW or DENY (AUTO resolved at load). */
int iam_store_authz_default(const iam_store *st);
/* Whether the file gave any identity or role "policies" (what AUTO decides by). */
bool iam_store_has_policies(const iam_store *st);
int iam_store_take_policies(iam_store *st, iam_store *from, char *note, size_t n);

/*
 * The policies of an identity named by its principal ARN or access key id, or of a role by
 * its name or ARN (plaintext.principal). *found says whether it exists; *principal is its ARN.
 */
const struct iam_policy *iam_store_policy_of(const iam_store *st, const char *name, const char **principal,
                                             bool *found);

#endif
