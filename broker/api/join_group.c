/*
 * JoinGroup (key 11), v0–9. The group coordinator (group.c) does the work:
 * MEMBER_ID_REQUIRED from v4, static members from v5, the join phase with
 * its initial delay. Under group.consumer.protocol.validation=strict (MSK
 * Serverless) every "consumer" protocol's metadata must decode at its
 * declared version, else INVALID_REQUEST.
 */
#include "api.h"
#include "group/group.h"

void api_join_group(srv *s, req *r) { grp_join(s, r); }
