/* SaslHandshake (API key 17): request and response structs, versions 0-1. */
#ifndef KP_MSG_SASL_HANDSHAKE_H
#define KP_MSG_SASL_HANDSHAKE_H

#include "kp.h"

typedef struct kp_sasl_handshake_request {
    kp_str mechanism;
} kp_sasl_handshake_request;
extern const kp_schema kp_sasl_handshake_request_schema;

typedef struct kp_sasl_handshake_response {
    int16_t error_code;
    KP_ARR(kp_str) mechanisms;
} kp_sasl_handshake_response;
extern const kp_schema kp_sasl_handshake_response_schema;

extern const kp_msg kp_msg_sasl_handshake;

#endif
