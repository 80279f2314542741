/* InitProducerId (API key 22) wire description; fields carry the versions they exist in. */
#include "msg_init_producer_id.h"

static const kp_field kp_init_producer_id_request_fields[] = {
    KF(KP_STR, kp_init_producer_id_request, transactional_id, 0, KV_MAX, .null_from = 0),
    KF(KP_I32, kp_init_producer_id_request, transaction_timeout_ms, 0, KV_MAX),
    KF(KP_I64, kp_init_producer_id_request, producer_id, 3, KV_MAX, .dflt = -1),
    KF(KP_I16, kp_init_producer_id_request, producer_epoch, 3, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_init_producer_id_request_schema, kp_init_producer_id_request, kp_init_producer_id_request_fields);

static const kp_field kp_init_producer_id_response_fields[] = {
    KF(KP_I32, kp_init_producer_id_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_init_producer_id_response, error_code, 0, KV_MAX),
    KF(KP_I64, kp_init_producer_id_response, producer_id, 0, KV_MAX, .dflt = -1),
    KF(KP_I16, kp_init_producer_id_response, producer_epoch, 0, KV_MAX),
};
KSCHEMA(kp_init_producer_id_response_schema, kp_init_producer_id_response, kp_init_producer_id_response_fields);

const kp_msg kp_msg_init_producer_id = {KP_MSG_ID(INIT_PRODUCER_ID), 0, 5, 2, &kp_init_producer_id_request_schema, &kp_init_producer_id_response_schema};
