/*
 * Random UUIDs (ids.h), version 4 as RFC 9562 lays it out, from the kernel's CSPRNG (getrandom,
 * the source OpenSSL's own generator seeds from). Not RAND_bytes: its first call sets up
 * OpenSSL's providers and DRBG, which touches 2 MiB of libcrypto that an idle broker without TLS
 * traffic would otherwise keep resident (issue 37); RAND_bytes remains the fallback.
 */
#include "ids.h"

#include <errno.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <sys/random.h>

void ids_uuid4(uint8_t out[16]) {
    ssize_t got;
    do got = getrandom(out, 16, 0); /* up to 256 bytes come whole once the pool is ready */
    while (got < 0 && errno == EINTR);
    if (got != 16) RAND_bytes(out, 16);
    out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);
    out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

void ids_uuid4_str(char out[37]) {
    uint8_t u[16];
    ids_uuid4(u);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}
