/*
 * The allocation family of kp_mem.h: the program's one out-of-memory policy (log a line naming
 * the size, then abort), and the growth arithmetic every growing array shares.
 */
#include "kp_mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line to stderr, written before anything else can fail, then abort() for a core dump. */
static _Noreturn void oom(const char *what, size_t n, size_t size) {
    if (size != 1)
        fprintf(stderr, "out of memory: %s of %zu x %zu bytes failed; aborting\n", what, n, size);
    else if (n)
        fprintf(stderr, "out of memory: %s of %zu bytes failed; aborting\n", what, n);
    else
        fprintf(stderr, "out of memory: %s failed; aborting\n", what);
    fflush(stderr);
    abort();
}

void xoom(const char *what, size_t n) {
    oom(what, n, 1);
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom("malloc", n, 1);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom("calloc", n, size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom("realloc", n, 1);
    return q;
}

char *xstrdup(const char *s) {
    return xstrndup(s, SIZE_MAX);
}

char *xstrndup(const char *s, size_t n) {
    size_t len = strnlen(s, n);
    char *d = xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

size_t xgrow_cap(size_t cap, size_t need, size_t first, size_t elem) {
    size_t max = elem ? SIZE_MAX / elem : SIZE_MAX; /* the most elements a size_t can count */
    if (need > max) oom("growing an array", need, elem);
    size_t c = cap ? cap : (first ? first : 1);
    while (c < need) c = c > max / 2 ? max : c * 2;
    return c;
}
