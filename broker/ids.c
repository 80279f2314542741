/* Random UUIDs (ids.h), version 4 as RFC 9562 lays it out, from OpenSSL's CSPRNG. */
#include "ids.h"

#include <openssl/rand.h>
#include <stdio.h>

void ids_uuid4(uint8_t out[16]) {
    RAND_bytes(out, 16);
    out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);
    out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

void ids_uuid4_str(char out[37]) {
    uint8_t u[16];
    ids_uuid4(u);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}
