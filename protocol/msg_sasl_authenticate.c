/* SaslAuthenticate (API key 36) wire description; fields carry the versions they exist in. */
#include "msg_sasl_authenticate.h"

static const kp_field kp_sasl_authenticate_request_fields[] = {
    KF(KP_BYTES, kp_sasl_authenticate_request, auth_bytes, 0, KV_MAX),
};
KSCHEMA(kp_sasl_authenticate_request_schema, kp_sasl_authenticate_request, kp_sasl_authenticate_request_fields);

static const kp_field kp_sasl_authenticate_response_fields[] = {
    KF(KP_I16, kp_sasl_authenticate_response, error_code, 0, KV_MAX),
    KF(KP_STR, kp_sasl_authenticate_response, error_message, 0, KV_MAX, .null_from = 0),
    KF(KP_BYTES, kp_sasl_authenticate_response, auth_bytes, 0, KV_MAX),
    KF(KP_I64, kp_sasl_authenticate_response, session_lifetime_ms, 1, KV_MAX),
};
KSCHEMA(kp_sasl_authenticate_response_schema, kp_sasl_authenticate_response, kp_sasl_authenticate_response_fields);

const kp_msg kp_msg_sasl_authenticate = {KP_MSG_ID(SASL_AUTHENTICATE), 0, 2, 2, &kp_sasl_authenticate_request_schema, &kp_sasl_authenticate_response_schema};
