/*
 * The one out-of-memory policy of the whole program (protocol/, storage/, broker/).
 *
 * An allocation whose size is ours (a struct, a table we grow, a copy of a name) cannot fail
 * gracefully in any useful way: there is no Kafka or HTTP error that helps a client when the
 * broker itself has no memory, and every branch written for it is one nobody runs. So these
 * log one line to stderr naming the size asked for, then abort(), as Redis's zmalloc does
 * (zmalloc_default_oom in https://github.com/redis/redis/blob/unstable/src/zmalloc.c). They
 * never return NULL; a size of 0 gives a unique pointer, never NULL.
 *
 * Where a peer controls the size (a request frame, an HTTP body, decompressed output, a record
 * batch read from the network or the disk, a SASL payload) the code keeps plain malloc and
 * refuses with the Kafka or HTTP error it answers today: that failure is the peer's, not ours.
 *
 * It lives in protocol/ because that is the lowest library (kp); storage/ and broker/ link it.
 */
#ifndef KP_MEM_H
#define KP_MEM_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n); /* at most n bytes of s, NUL-terminated */

/* The same end for an allocation a library made and reported failed (OpenSSL's SSL_new):
 * what names it, n the bytes asked for (0: unknown, not printed). */
_Noreturn void xoom(const char *what, size_t n);

/* The capacity, in elements, that holds need elements: cap doubled (from first when cap is 0)
 * until it does. Logs and aborts, as on exhaustion, when need elements of elem bytes cannot be
 * counted in a size_t. */
size_t xgrow_cap(size_t cap, size_t need, size_t first, size_t elem);

/* Grows the array p of cap elements (any integer type) so that it holds at least need
 * elements, doubling its capacity (first when it is 0); new elements are not zeroed.
 * Evaluates p and cap more than once: name plain variables or members. */
#define XGROW(p, cap, need, first)                                                          \
    do {                                                                                    \
        if ((size_t)(need) > (size_t)(cap)) {                                               \
            size_t xgrow_n_ = xgrow_cap((size_t)(cap), (size_t)(need), (first), sizeof *(p)); \
            (p) = xrealloc((p), xgrow_n_ * sizeof *(p));                                    \
            (cap) = xgrow_n_;                                                               \
        }                                                                                   \
    } while (0)

#endif
