/* SaslHandshake (API key 17) wire description; fields carry the versions they exist in. */
#include "msg_sasl_handshake.h"

static const kp_field kp_sasl_handshake_request_fields[] = {
    KF(KP_STR, kp_sasl_handshake_request, mechanism, 0, KV_MAX),
};
KSCHEMA(kp_sasl_handshake_request_schema, kp_sasl_handshake_request, kp_sasl_handshake_request_fields);

static const kp_field kp_sasl_handshake_response_fields[] = {
    KF(KP_I16, kp_sasl_handshake_response, error_code, 0, KV_MAX),
    KFP(KP_STR, kp_sasl_handshake_response, mechanisms, 0, KV_MAX),
};
KSCHEMA(kp_sasl_handshake_response_schema, kp_sasl_handshake_response, kp_sasl_handshake_response_fields);

const kp_msg kp_msg_sasl_handshake = {KP_MSG_ID(SASL_HANDSHAKE), 0, 1, KV_NEVER, &kp_sasl_handshake_request_schema, &kp_sasl_handshake_response_schema};
