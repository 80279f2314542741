/* InitProducerId (API key 22): request and response structs, versions 0-5. */
#ifndef KP_MSG_INIT_PRODUCER_ID_H
#define KP_MSG_INIT_PRODUCER_ID_H

#include "kp.h"

typedef struct kp_init_producer_id_request {
    kp_str transactional_id;
    int32_t transaction_timeout_ms;
    int64_t producer_id;
    int16_t producer_epoch;
} kp_init_producer_id_request;
extern const kp_schema kp_init_producer_id_request_schema;

typedef struct kp_init_producer_id_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    int64_t producer_id;
    int16_t producer_epoch;
} kp_init_producer_id_response;
extern const kp_schema kp_init_producer_id_response_schema;

extern const kp_msg kp_msg_init_producer_id;

#endif
