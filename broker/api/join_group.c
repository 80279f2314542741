/*
 * JoinGroup (key 11), v0–9. The group coordinator (group.c) does the work:
 * MEMBER_ID_REQUIRED from v4, static members from v5, the join phase with
 * its initial delay. Under group.consumer.protocol.validation=strict (MSK
 * Serverless) every "consumer" protocol's metadata must decode at its
 * declared version, else INVALID_REQUEST. A consumer group with members takes
 * the member in through KIP-848's online migration (group/consumer_classic.c).
 */
#include <string.h>

#include "api.h"
#include "group/consumer.h"
#include "topic/topic.h"

/* What a classic member joining a consumer group needs of topics: partition counts (no regex). */
static int32_t partitions_of(void *ctx, const char *name, uint8_t uuid[16]) {
    topic *t = topic_find(ctx, name, strlen(name));
    if (!t) return -1;
    memcpy(uuid, t->uuid, 16);
    return t->nparts;
}

void api_join_group(srv *s, req *r) {
    kp_join_group_request *q = r->body;
    int16_t code = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    if (!code) {
        /* the generation as ConsumerGroupHeartbeat's: a regex of the group is resolved again only when topics changed */
        cg_topics topics = {partitions_of, s, NULL, s->topics_generation + 1};
        grp_join(s, r, &topics);
        return;
    }
    kp_join_group_response *resp = req_resp(r);
    resp->error_code = code;
    resp->generation_id = -1;
    resp->leader = resp->member_id = kp_str_c("");
    req_respond(r, resp);
}
