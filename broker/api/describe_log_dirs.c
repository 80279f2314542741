/*
 * DescribeLogDirs (key 35), v0–4, in the kafka profile only: MSK Serverless refuses it (UIs
 * such as kafka-ui and AKHQ then show the cluster offline: kafka-ui #3331, akhq #1112),
 * Apache Kafka answers it and topic-size dashboards read it. mskmock keeps one SQLite file, so
 * each synthetic broker reports one made-up directory, <data.dir>/broker-<id>, holding the
 * partitions it leads with their stored bytes; the volume figures (v4) are data.dir's file
 * system. Replicas other than the leader are not listed: their bytes do not exist.
 * IAM: kafka-cluster:DescribeCluster (Kafka's DESCRIBE on CLUSTER); a denial is an empty list,
 * with CLUSTER_AUTHORIZATION_FAILED at the top from v3.
 */
#include <string.h>
#include <sys/statvfs.h>

#include "api.h"
#include "net/net.h"
#include "topic/topic.h"

/* Whether the request's entry for the topic (NULL: every partition) names partition i. */
static bool asked(const kp_describe_log_dirs_topic *qt, int32_t i) {
    if (!qt) return true;
    for (int32_t k = 0; k < qt->partitions.n; k++)
        if (qt->partitions.v[k] == i) return true;
    return false;
}

/* The partitions of t this broker leads that the request asks for; -1 when storage fails. */
static int fill_topic(srv *s, req *r, topic *t, const kp_describe_log_dirs_topic *qt,
                      kp_describe_log_dirs_result_topic *out) {
    out->name = kp_str_c(t->name);
    REQ_ARR(r, out->partitions, t->nparts);
    int32_t n = 0;
    for (int32_t i = 0; i < t->nparts; i++) {
        if (t->parts[i].leader != r->c->node || !asked(qt, i)) continue;
        int64_t bytes = stor_partition_bytes(s->st, t->id, i);
        if (bytes < 0) return -1;
        out->partitions.v[n++] = (kp_describe_log_dirs_partition){i, bytes, 0, false};
    }
    out->partitions.n = n;
    return n;
}

/* Every topic (request topics null) or the ones named; unknown names are left out, as Kafka does. */
static int fill_topics(srv *s, req *r, const kp_describe_log_dirs_request *q, kp_describe_log_dirs_result *res) {
    bool all = q->topics.n < 0;
    REQ_ARR(r, res->topics, all ? s->ntopics : q->topics.n);
    int32_t n = 0;
    int got = 0;
    for (topic *t = all ? s->topics : NULL; t && got >= 0; t = t->next)
        if ((got = fill_topic(s, r, t, NULL, &res->topics.v[n])) > 0) n++;
    for (int32_t k = 0; !all && k < q->topics.n && got >= 0; k++) {
        const kp_describe_log_dirs_topic *qt = &q->topics.v[k];
        topic *t = qt->topic.len > 0 ? topic_find(s, qt->topic.p, (size_t)qt->topic.len) : NULL;
        if (t && (got = fill_topic(s, r, t, qt, &res->topics.v[n])) > 0) n++;
    }
    res->topics.n = n;
    return got < 0 ? -1 : 0;
}

/* The file system of data.dir (KIP-827's total and usable bytes); -1 when there is none. */
static void volume(const srv *s, kp_describe_log_dirs_result *res) {
    struct statvfs v;
    if (strcmp(s->cfg->data_dir, ":memory:") == 0 || statvfs(s->cfg->data_dir, &v) != 0) return;
    res->total_bytes = (int64_t)v.f_blocks * (int64_t)v.f_frsize;
    res->usable_bytes = (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

void api_describe_log_dirs(srv *s, req *r) {
    kp_describe_log_dirs_request *q = r->body;
    kp_describe_log_dirs_response *resp = req_resp(r);
    resp->error_code = api_authz(s, r, IAM_RES_CLUSTER, KP_STR_NULL);
    if (resp->error_code) {
        req_respond(r, resp);
        return;
    }
    REQ_ARR(r, resp->results, 1);
    kp_describe_log_dirs_result *res = &resp->results.v[0];
    kp_defaults(&kp_describe_log_dirs_result_schema, r->hdr.api_version, res);
    res->log_dir = req_strf(r, "%s/broker-%d", s->cfg->data_dir, s->nodes[r->c->node].id);
    volume(s, res);
    if (fill_topics(s, r, q, res) != 0) {
        /* what Kafka reports for a directory it cannot read */
        res->error_code = KERR_KAFKA_STORAGE_ERROR;
        res->topics.n = 0;
        req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "reading partition sizes failed: %s", stor_errmsg(s->st));
    }
    req_respond(r, resp);
}
