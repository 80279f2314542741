/*
 * arn: the one reading of an ARN's account (arn:<partition>:<service>:<region>:<account>:...), for
 * principals (identities, roles, assumed-role sessions) and resources (clusters) alike.
 */
#ifndef ARN_H
#define ARN_H

#include <stddef.h>
#include <string.h>

/* The account of an ARN (its fifth field) into out; "" and 0 when it has none or it does not fit. */
static inline size_t arn_account(const char *arn, char *out, size_t cap) {
    const char *p = arn;
    for (int i = 0; i < 4 && p; i++) p = strchr(p, ':'), p = p ? p + 1 : NULL;
    const char *e = p ? strchr(p, ':') : NULL;
    size_t l = e ? (size_t)(e - p) : 0;
    if (l >= cap) l = 0;
    if (l) memcpy(out, p, l);
    if (cap) out[l] = '\0';
    return l;
}

#endif
