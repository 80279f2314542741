/* SaslAuthenticate (API key 36): request and response structs, versions 0-2. */
#ifndef KP_MSG_SASL_AUTHENTICATE_H
#define KP_MSG_SASL_AUTHENTICATE_H

#include "kp.h"

typedef struct kp_sasl_authenticate_request {
    kp_bytes auth_bytes;
} kp_sasl_authenticate_request;
extern const kp_schema kp_sasl_authenticate_request_schema;

typedef struct kp_sasl_authenticate_response {
    int16_t error_code;
    kp_str error_message;
    kp_bytes auth_bytes;
    int64_t session_lifetime_ms;
} kp_sasl_authenticate_response;
extern const kp_schema kp_sasl_authenticate_response_schema;

extern const kp_msg kp_msg_sasl_authenticate;

#endif
