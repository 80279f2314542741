/*
 * DescribeCluster (key 60), v0–1: the synthetic brokers with the advertised
 * host. Only the brokers endpoint type (1) exists: asking for controllers (2)
 * gets MISMATCHED_ENDPOINT_TYPE, any other type UNSUPPORTED_ENDPOINT_TYPE, as
 * from a Kafka broker (KIP-919; v0 cannot ask).
 */
#include "api.h"
#include "net/net.h"

void api_describe_cluster(srv *s, req *r) {
    kp_describe_cluster_request *q = r->body;
    kp_describe_cluster_response *resp = req_resp(r);
    resp->endpoint_type = 1;
    resp->cluster_id = kp_str_c(s->cfg->cluster_id);
    /* MSK Serverless reports no controller here (kafka-ui #3536 found describeCluster().controller() null) */
    resp->controller_id = s->cfg->controller_visibility == CONTROLLER_ALL ? s->nodes[srv_controller(s)].id : -1;
    if ((resp->error_code = api_authz(s, r, IAM_RES_CLUSTER, KP_STR_NULL))) {
        req_respond(r, resp);
        return;
    }
    if (r->hdr.api_version >= 1 && q->endpoint_type != 1) {
        bool controller = q->endpoint_type == 2;
        resp->error_code = controller ? KERR_MISMATCHED_ENDPOINT_TYPE : KERR_UNSUPPORTED_ENDPOINT_TYPE;
        resp->error_message = controller ? kp_str_c("The request was sent to an endpoint of type BROKER, but we wanted an "
                                                    "endpoint of type CONTROLLER")
                                         : req_strf(r, "Unsupported endpoint type %d", q->endpoint_type);
        req_log_refusal(r, resp->error_code, "endpoint type %d asked; only brokers (1) exist", q->endpoint_type);
        req_respond(r, resp);
        return;
    }
    REQ_ARR(r, resp->brokers, s->nnodes);
    resp->brokers.n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (!s->nodes[i].down) /* as Metadata: a broker taken down is not registered */
            resp->brokers.v[resp->brokers.n++] = (kp_describe_cluster_broker){
                s->nodes[i].id, kp_str_c(lsn_host(s, r->c->listener)), lsn_port(s, i, r->c->listener),
                KP_STR_NULL};
    if (q->include_cluster_authorized_operations)
        resp->cluster_authorized_operations = authz_operations(s, r->c, IAM_RES_CLUSTER, "", 0);
    req_respond(r, resp);
}
