/*
 * ApiVersions (key 18), v0–4. The ranges come from the handler table, so
 * what is advertised is what is served (but Kafka 4's Produce, KAFKA-18659). v3+ checks client_software_name and
 * version against Kafka's pattern (INVALID_REQUEST otherwise); v3+ lists the
 * features of kafka.version's release (api_fill_features). A version
 * above 4 never reaches here: req.c answers it with a v0 UNSUPPORTED_VERSION.
 */
#include "api.h"

static bool software_ok(kp_str s) {
    if (s.len <= 0) return false;
    for (int32_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        bool inner = c == '-' || c == '.';
        if (!alnum && !(inner && i > 0 && i < s.len - 1)) return false;
    }
    return true;
}

void api_api_versions(srv *s, req *r) {
    kp_api_versions_request *q = r->body;
    kp_api_versions_response *resp = req_resp(r);
    if (r->hdr.api_version >= 3 && (!software_ok(q->client_software_name) || !software_ok(q->client_software_version))) {
        req_log_refusal(r, KERR_INVALID_REQUEST, "client_software_name '%.*s' / version '%.*s' do not match [a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?",
                        q->client_software_name.len > 0 ? q->client_software_name.len : 0, q->client_software_name.p,
                        q->client_software_version.len > 0 ? q->client_software_version.len : 0,
                        q->client_software_version.p);
        resp->error_code = KERR_INVALID_REQUEST;
    }
    api_fill_versions(s, r, resp);
    api_fill_features(s, r, resp);
    req_respond(r, resp);
}
