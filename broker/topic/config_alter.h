/* Topic config changes shared by AlterConfigs and IncrementalAlterConfigs. */
#ifndef CONFIG_ALTER_H
#define CONFIG_ALTER_H

#include "net/req.h"

enum { ALTER_SET = 0, ALTER_DELETE = 1, ALTER_APPEND = 2, ALTER_SUBTRACT = 3 };

typedef struct alter_op {
    kp_str key, value;
    int8_t op;
} alter_op;

/*
 * Validate every op against the topic policy, then (unless validate_only)
 * apply them all. replace_all: legacy AlterConfigs semantics, where
 * overrides not listed are removed. Returns 0 or an error code with *msg.
 */
int16_t alter_topic_configs(srv *s, req *r, kp_str topic_name, const alter_op *ops, int32_t n, bool replace_all,
                            bool validate_only, kp_str *msg);
/* The answer for a broker resource, which MSK Serverless never lets anyone alter. */
int16_t alter_broker_configs(srv *s, req *r, kp_str name, kp_str *msg);

#endif
