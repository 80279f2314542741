/*
 * OffsetFetch (key 9), v0–9: committed offsets whatever the group's state;
 * a partition without a commit gets offset -1. Topics null (v2+) means every
 * committed offset of the group. v1 puts group-level errors on each
 * partition; v2–7 also at top level; v8+ fetches several groups at once.
 * require_stable (v7+, KIP-447): a partition whose offset waits in an open
 * transaction gets UNSTABLE_OFFSET_COMMIT and offset -1, which the client
 * retries until the transaction ends.
 */
#include <string.h>

#include "api.h"
#include "group/consumer.h"
#include "group/group.h"
#include "net/net.h"
#include "txn/txn.h"

typedef struct fetch_topic_in {
    kp_str name;
    int32_t n;        /* -1: every committed partition */
    int32_t *parts;
} fetch_topic_in;

typedef struct fetch_part_out {
    int32_t partition_index;
    int64_t committed_offset;
    int32_t committed_leader_epoch;
    kp_str metadata;
    int16_t error_code;
} fetch_part_out;

/*
 * Both response layouts (v0–7 topics and v8+ groups[].topics) have the same
 * partition fields in the same order, so one filler serves both.
 */
static void fill_partition(req *r, group *g, kp_str topic, int32_t index, int16_t err, fetch_part_out *out) {
    out->partition_index = index;
    out->committed_offset = -1;
    out->committed_leader_epoch = -1;
    out->metadata = kp_str_c("");
    out->error_code = err;
    if (err || !g) return;
    kp_offset_fetch_request *q = r->body;
    if (r->hdr.api_version >= 7 && q->require_stable &&
        txn_offset_pending(r->c->s, g->id, topic.p, topic.len > 0 ? (size_t)topic.len : 0, index)) {
        out->error_code = KERR_UNSTABLE_OFFSET_COMMIT;
        req_log_refusal(r, KERR_UNSTABLE_OFFSET_COMMIT, "group %s: the offset of %.*s-%d waits for an open "
                        "transaction (require_stable)", g->id, topic.len > 0 ? topic.len : 0, topic.p, index);
        return;
    }
    committed_offset *o = grp_offset_get(g, topic.p, (size_t)topic.len, index);
    if (!o) return;
    out->committed_offset = o->offset;
    out->committed_leader_epoch = o->leader_epoch;
    /* its bytes may hold NULs: copied by length, never as a C string */
    char *md = req_alloc(r, (size_t)o->metadata_len + 1);
    memcpy(md, o->metadata, (size_t)o->metadata_len);
    out->metadata = (kp_str){md, o->metadata_len};
}

/* Distinct topics of the group's commits, for "all topics" fetches. */
static int32_t committed_topics(req *r, group *g, kp_str **out) {
    *out = req_alloc(r, sizeof(kp_str) * (size_t)(g ? g->noffsets + 1 : 1));
    int32_t n = 0;
    for (int i = 0; g && i < g->noffsets; i++) {
        bool seen = false;
        for (int32_t k = 0; k < n && !seen; k++) seen = kp_str_eq((*out)[k], g->offsets[i].topic);
        if (!seen) (*out)[n++] = kp_str_c(g->offsets[i].topic);
    }
    return n;
}

typedef KP_ARR(struct kp_offset_fetch_response_topic) topics_out;

/*
 * group_err: the group may not be read (nothing of it is shown); part_err: the code each
 * partition carries (v0-1 put group errors there). Topics the principal may not describe:
 * left out of "all topics", TOPIC_AUTHORIZATION_FAILED when named.
 */
static void fetch_group(srv *s, req *r, kp_str group_id, const fetch_topic_in *in, int32_t ntopics, int16_t group_err,
                        int16_t part_err, topics_out *out) {
    group *g = group_err ? NULL : grp_find(s, group_id.p ? group_id.p : "", group_id.len > 0 ? (size_t)group_id.len : 0);
    if (ntopics < 0) {
        kp_str *names;
        int32_t all = committed_topics(r, g, &names), n = 0;
        for (int32_t i = 0; i < all; i++)
            if (authz_allowed(s, r->c, IAM_DESCRIBE_TOPIC, names[i].p, (size_t)names[i].len)) names[n++] = names[i];
        REQ_ARR(r, (*out), n);
        for (int32_t i = 0; i < n; i++) {
            out->v[i].name = names[i];
            int32_t k = 0;
            for (int j = 0; j < g->noffsets; j++) k += kp_str_eq(names[i], g->offsets[j].topic);
            REQ_ARR(r, out->v[i].partitions, k);
            k = 0;
            for (int j = 0; j < g->noffsets; j++)
                if (kp_str_eq(names[i], g->offsets[j].topic))
                    fill_partition(r, g, names[i], g->offsets[j].partition, 0,
                                   (fetch_part_out *)&out->v[i].partitions.v[k++]);
        }
        return;
    }
    REQ_ARR(r, (*out), ntopics);
    for (int32_t i = 0; i < ntopics; i++) {
        out->v[i].name = in[i].name;
        int16_t err = part_err ? part_err : api_authz(s, r, IAM_RES_TOPIC, in[i].name);
        REQ_ARR(r, out->v[i].partitions, in[i].n);
        for (int32_t j = 0; j < in[i].n; j++)
            fill_partition(r, g, in[i].name, in[i].parts[j], err, (fetch_part_out *)&out->v[i].partitions.v[j]);
    }
}

void api_offset_fetch(srv *s, req *r) {
    kp_offset_fetch_request *q = r->body;
    kp_offset_fetch_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    _Static_assert(sizeof(fetch_part_out) == sizeof(kp_offset_fetch_response_partition), "layouts differ");
    _Static_assert(sizeof(fetch_part_out) == sizeof(kp_offset_fetch_response_partitions), "layouts differ");
    _Static_assert(sizeof(kp_offset_fetch_response_topic) == sizeof(kp_offset_fetch_response_topics), "layouts differ");
    if (ver < 8) {
        int32_t n = q->topics.n;
        fetch_topic_in *in = req_alloc(r, sizeof(*in) * (size_t)(n > 0 ? n : 1));
        for (int32_t i = 0; i < n; i++)
            in[i] = (fetch_topic_in){q->topics.v[i].name, q->topics.v[i].partition_indexes.n,
                                     q->topics.v[i].partition_indexes.v};
        int16_t err = api_group(s, r, q->group_id);
        fetch_group(s, r, q->group_id, in, n, err == KERR_GROUP_AUTHORIZATION_FAILED ? err : 0, ver >= 2 ? 0 : err,
                    (topics_out *)&resp->topics);
        resp->error_code = err;
        req_respond(r, resp);
        return;
    }
    REQ_ARR(r, resp->groups, q->groups.n);
    for (int32_t i = 0; i < q->groups.n; i++) {
        kp_offset_fetch_request_group *qg = &q->groups.v[i];
        kp_offset_fetch_response_group *rg = &resp->groups.v[i];
        rg->group_id = qg->group_id;
        int32_t n = qg->topics.n;
        fetch_topic_in *in = req_alloc(r, sizeof(*in) * (size_t)(n > 0 ? n : 1));
        for (int32_t k = 0; k < n; k++)
            in[k] = (fetch_topic_in){qg->topics.v[k].name, qg->topics.v[k].partition_indexes.n,
                                     qg->topics.v[k].partition_indexes.v};
        rg->error_code = api_group(s, r, qg->group_id);
        if (!rg->error_code && ver >= 9) {
            /* v9 (KIP-848): a consumer group's member fetches at its current epoch */
            group *g = grp_find(s, qg->group_id.p ? qg->group_id.p : "", qg->group_id.len > 0 ? (size_t)qg->group_id.len : 0);
            if (g && g->cg) rg->error_code = cg_fetch_check(s, r, g, qg->member_epoch, qg->member_id);
        }
        if (rg->error_code) {
            rg->topics.n = 0;
            continue;
        }
        fetch_group(s, r, qg->group_id, in, n, 0, 0, (topics_out *)&rg->topics);
    }
    req_respond(r, resp);
}
