#include "api.h"

#include "net.h"

int16_t api_partition_check(srv *s, req *r, topic *t, int32_t index, partition **out) {
    *out = NULL;
    if (!t) return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (index < 0 || index >= t->nparts) {
        req_log_refusal(r, KERR_UNKNOWN_TOPIC_OR_PARTITION, "topic %s has %d partitions, asked for partition %d",
                        t->name, t->nparts, index);
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    partition *p = &t->parts[index];
    if (p->leader != r->c->node) {
        req_log_refusal(r, KERR_NOT_LEADER_OR_FOLLOWER, "%s-%d is led by node %d, the request reached node %d",
                        t->name, index, s->nodes[p->leader].id, s->nodes[r->c->node].id);
        return KERR_NOT_LEADER_OR_FOLLOWER;
    }
    *out = p;
    return 0;
}
