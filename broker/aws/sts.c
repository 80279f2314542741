/*
 * sts: the STS calls SDKs and tools make on their own, in STS's query protocol
 * (https://docs.aws.amazon.com/STS/latest/APIReference/): the parameters form-encoded in the
 * body of a POST to / (or in the query string), the answer XML. Served: GetCallerIdentity
 * (`aws sts get-caller-identity`, Terraform's provider at start) and AssumeRole of the roles in
 * the identities file, whose credentials the IAM listeners and this endpoint then accept (they
 * are added to the same store); sts:AssumeRole on the role's ARN is decided by the caller's
 * policies when it has some, their Conditions evaluated (aws_authz.c). Other actions are refused as unknown ones are, with a log line
 * naming those STS has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_authz.h"
#include "aws_call.h"
#include "hash.h"
#include "clock.h"
#include "iam/authz.h"
#include "iam/iam_policy.h"
#include "iam/iam_store.h"
#include "iam/sasl.h"
#include "kp_mem.h"

#define STS_NS "https://sts.amazonaws.com/doc/2011-06-15/"
#define STS_VERSION "2011-06-15"

/* A parameter from the form body, else from the query string. */
static bool param(const aws_call *c, const char *name, char *out, size_t cap) {
    return http_query_get(c->rq->body, name, out, cap) || http_query_get(c->rq->query, name, out, cap);
}

static void xml_ok(aws_call *c, const char *body) {
    free(c->rs->body);
    c->rs->body = xstrdup(body);
    c->rs->len = strlen(body);
    c->rs->status = 200;
    c->rs->content_type = "text/xml";
}

/*
 * IAM's unique id of the caller: AIDA... for a user, AROA...:<session> for an assumed role
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids).
 * mskmock has no such ids in the identities file: a stable one is made from the ARN.
 */
static void user_id(const char *principal, char *out, size_t cap) {
    static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const char *ar = strstr(principal, ":assumed-role/");
    size_t base_len = strlen(principal);
    const char *session = NULL;
    if (ar) {
        const char *role = ar + strlen(":assumed-role/");
        session = strchr(role, '/');
        base_len = session ? (size_t)(session - principal) : base_len;
    }
    uint64_t h = hash_fnv64(principal, base_len);
    char id[22];
    memcpy(id, ar ? "AROA" : "AIDA", 4);
    for (int i = 0; i < 17; i++, h = h * 31 + 7) id[4 + i] = b32[(h >> 59) & 31];
    id[21] = '\0';
    snprintf(out, cap, "%s%s%s", id, session ? ":" : "", session ? session + 1 : "");
}

static void get_caller_identity(aws_call *c) {
    char uid[160];
    user_id(c->principal, uid, sizeof uid);
    char body[1024];
    snprintf(body, sizeof body,
             "<GetCallerIdentityResponse xmlns=\"" STS_NS "\">\n  <GetCallerIdentityResult>\n"
             "    <Arn>%s</Arn>\n    <UserId>%s</UserId>\n    <Account>%s</Account>\n"
             "  </GetCallerIdentityResult>\n  <ResponseMetadata>\n    <RequestId>%s</RequestId>\n"
             "  </ResponseMetadata>\n</GetCallerIdentityResponse>\n",
             c->principal, uid, c->account, c->request_id);
    xml_ok(c, body);
    snprintf(c->rs->detail, sizeof c->rs->detail, "GetCallerIdentity");
}

/* AssumeRole's DurationSeconds floor, and its default (https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html) */
#define STS_MIN_DURATION_S 900
#define STS_DEFAULT_DURATION_S 3600
/*
 * AssumeRole credentials held at once (they are kept until an hour after they expire, up to 13 h):
 * a client calling AssumeRole in a loop is throttled, as STS throttles, rather than growing the
 * broker without bound. STS's own answer: 400 Throttling "Rate exceeded".
 */
#define STS_MAX_ASSUMED 10000

static bool session_name_ok(const char *s) {
    size_t n = strlen(s);
    if (n < 2 || n > 64) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("+=,.@_-", *s)))
            return false;
    return true;
}

static void assume_role(aws_call *c) {
    char role_arn[2048] = "", session[128] = "", duration[32] = "";
    if (!param(c, "RoleArn", role_arn, sizeof role_arn) || !*role_arn) {
        aws_query_error(c, 400, "ValidationError", "1 validation error detected: Value null at 'roleArn' failed to "
                                                   "satisfy constraint: Member must not be null");
        return;
    }
    if (!param(c, "RoleSessionName", session, sizeof session) || !*session) {
        aws_query_error(c, 400, "ValidationError", "1 validation error detected: Value null at 'roleSessionName' "
                                                   "failed to satisfy constraint: Member must not be null");
        return;
    }
    if (!session_name_ok(session)) {
        aws_query_error(c, 400, "ValidationError",
                        "1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: "
                        "Member must satisfy regular expression pattern: [\\w+=,.@-]{2,64}",
                        session);
        return;
    }
    long long secs = STS_DEFAULT_DURATION_S;
    if (param(c, "DurationSeconds", duration, sizeof duration)) {
        char *end;
        secs = strtoll(duration, &end, 10);
        if (!*duration || *end) {
            aws_query_error(c, 400, "ValidationError", "Value '%s' for parameter DurationSeconds is invalid.", duration);
            return;
        }
        if (secs < STS_MIN_DURATION_S) {
            aws_query_error(c, 400, "ValidationError",
                            "1 validation error detected: Value '%lld' at 'durationSeconds' failed to satisfy "
                            "constraint: Member must have value greater than or equal to %d",
                            secs, STS_MIN_DURATION_S);
            return;
        }
    }
    iam_store *st = sasl_identities(c->s);
    int64_t max = iam_store_role_max_session_s(st, role_arn);
    /* the caller's policies decide, conditions evaluated in the call's context; credentials without
     * any are allowed, as on the Kafka listeners (iam.authorization.default gives them an empty set
     * when it says so). A cluster policy is about its cluster, not about roles: it has no say here. */
    iam_ctx *ctx = aws_condition_context(c, "AssumeRole", role_arn);
    iam_decision d = authz_named(c->s, c->cred, "sts:AssumeRole", role_arn, ctx);
    iam_ctx_free(ctx);
    /* AWS names the caller and the role whatever the reason: whether the role exists is not told */
    if (max < 0 || d.effect != IAM_ALLOW) {
        aws_query_error(c, 403, "AccessDenied", "User: %s is not authorized to perform: sts:AssumeRole on resource: %s",
                        c->principal, role_arn);
        snprintf(c->rs->detail, sizeof c->rs->detail, "AccessDenied: sts:AssumeRole %s%.200s on %.200s",
                 d.effect == IAM_EXPLICIT_DENY ? "denied by "
                 : d.effect == IAM_IMPLICIT_DENY ? "allowed by no statement of the caller's policies"
                                                 : "of a role not in iam.identities.file",
                 d.effect == IAM_EXPLICIT_DENY ? d.by : "", role_arn);
        return;
    }
    if (secs > max) {
        aws_query_error(c, 400, "ValidationError",
                        "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.");
        return;
    }
    if (iam_store_assumed_count(st) >= STS_MAX_ASSUMED) {
        aws_query_error(c, 400, "Throttling", "Rate exceeded");
        snprintf(c->rs->detail, sizeof c->rs->detail,
                 "Throttling: %d AssumeRole credentials are held already (each until an hour after it expires)",
                 STS_MAX_ASSUMED);
        return;
    }
    int64_t now = clk_now_ms();
    const iam_cred *cr = iam_store_assume(st, role_arn, session, secs * 1000, now);
    if (!cr) {
        aws_query_error(c, 500, "InternalFailure", "The request processing has failed because of an unknown error.");
        return;
    }
    char uid[160], when[32];
    user_id(cr->principal, uid, sizeof uid);
    time_t t = (time_t)(cr->expiry_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char body[2048];
    snprintf(body, sizeof body,
             "<AssumeRoleResponse xmlns=\"" STS_NS "\">\n  <AssumeRoleResult>\n    <AssumedRoleUser>\n"
             "      <AssumedRoleId>%s</AssumedRoleId>\n      <Arn>%s</Arn>\n    </AssumedRoleUser>\n"
             "    <Credentials>\n      <AccessKeyId>%s</AccessKeyId>\n      <SecretAccessKey>%s</SecretAccessKey>\n"
             "      <SessionToken>%s</SessionToken>\n      <Expiration>%s</Expiration>\n    </Credentials>\n"
             "  </AssumeRoleResult>\n  <ResponseMetadata>\n    <RequestId>%s</RequestId>\n  </ResponseMetadata>\n"
             "</AssumeRoleResponse>\n",
             uid, cr->principal, cr->access_key_id, cr->secret_access_key, cr->session_token, when, c->request_id);
    xml_ok(c, body);
    /* the access key id is not secret; the secret and the token never reach the log */
    snprintf(c->rs->detail, sizeof c->rs->detail, "AssumeRole role=%.100s access_key_id=%s expiration=%s",
             role_arn, cr->access_key_id, when);
}

void sts_route(aws_call *c) {
    char action[64] = "", version[32] = "";
    if (strcmp(c->rq->method, "POST") && strcmp(c->rq->method, "GET")) {
        aws_query_error(c, 400, "InvalidAction", "Could not find operation for method %s", c->rq->method);
        return;
    }
    if (!param(c, "Action", action, sizeof action) || !*action) {
        aws_query_error(c, 400, "MissingAction", "Missing Action");
        return;
    }
    if (param(c, "Version", version, sizeof version) && strcmp(version, STS_VERSION) != 0) {
        aws_query_error(c, 400, "InvalidAction", "Could not find operation %s for version %s", action, version);
        return;
    }
    if (!strcmp(action, "GetCallerIdentity")) {
        get_caller_identity(c);
        return;
    }
    if (!strcmp(action, "AssumeRole")) {
        assume_role(c);
        return;
    }
    aws_query_error(c, 400, "InvalidAction", "Could not find operation %s for version %s", action, STS_VERSION);
    if (!strcmp(action, "GetSessionToken") || !strcmp(action, "AssumeRoleWithWebIdentity") ||
        !strcmp(action, "AssumeRoleWithSAML") || !strcmp(action, "GetFederationToken") ||
        !strcmp(action, "DecodeAuthorizationMessage") || !strcmp(action, "GetAccessKeyInfo")) {
        size_t l = strlen(c->rs->detail);
        snprintf(c->rs->detail + l, sizeof c->rs->detail - l, " (sts:%s is not served by mskmock yet)", action);
    }
}
