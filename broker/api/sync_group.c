/*
 * SyncGroup (key 14), v0–5: followers wait for the leader's assignment;
 * v5 checks protocol type and name. Strict validation decodes the leader's
 * ConsumerProtocolAssignment bytes as MSK Serverless does.
 */
#include "api.h"
#include "group/group.h"

void api_sync_group(srv *s, req *r) { grp_sync(s, r); }
