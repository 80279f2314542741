/*
 * kp_mem: the one out-of-memory policy (log the size, abort) and the shared growth of arrays.
 * Exhaustion is real, not simulated: a child process asks for more than any machine has and
 * must die of SIGABRT after one line on stderr naming the size.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "kp_mem.h"

/* Under AddressSanitizer a too-large request must reach us as NULL, as it does from glibc,
 * instead of ASan's own report (https://github.com/google/sanitizers/wiki/AddressSanitizerFlags). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static void test_grow_doubles_from_first(void **state) {
    (void)state;
    int *v = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        XGROW(v, cap, n + 1, 8);
        assert_true(cap >= n + 1);
        v[n++] = i;
        if (i == 0) assert_int_equal(cap, 8);
        if (i == 8) assert_int_equal(cap, 16);
    }
    assert_int_equal(cap, 1024); /* 8 doubled seven times */
    for (int i = 0; i < n; i++) assert_int_equal(v[i], i); /* contents survive each move */
    free(v);
}

static void test_grow_to_a_need_far_beyond(void **state) {
    (void)state;
    char *p = NULL;
    size_t cap = 0;
    XGROW(p, cap, 100, 16); /* from nothing past several doublings at once */
    assert_int_equal(cap, 128);
    char *before = p;
    XGROW(p, cap, 128, 16); /* enough already: nothing moves */
    assert_ptr_equal(p, before);
    assert_int_equal(cap, 128);
    XGROW(p, cap, 129, 16);
    assert_int_equal(cap, 256);
    free(p);
}

static void test_grow_cap_arithmetic(void **state) {
    (void)state;
    assert_int_equal(xgrow_cap(0, 1, 4, 8), 4);
    assert_int_equal(xgrow_cap(0, 5, 4, 8), 8);
    assert_int_equal(xgrow_cap(3, 4, 4, 8), 6); /* doubles what it has, not the first */
    assert_int_equal(xgrow_cap(0, 1, 0, 8), 1); /* no first: one */
    /* near the top it stops at the most elements a size_t can count, not past it */
    size_t max = SIZE_MAX / 16;
    assert_int_equal(xgrow_cap(max / 2 + 1, max, 1, 16), max);
}

static void test_strings(void **state) {
    (void)state;
    char *a = xstrdup("topic-a");
    assert_string_equal(a, "topic-a");
    char *b = xstrndup("topic-a", 5);
    assert_string_equal(b, "topic");
    char *c = xstrndup("ab", 10); /* stops at the NUL, reads no further */
    assert_string_equal(c, "ab");
    free(a);
    free(b);
    free(c);
}

static void test_zero_sizes_are_not_null(void **state) {
    (void)state;
    void *p = xmalloc(0), *q = xcalloc(0, 8);
    assert_non_null(p);
    assert_non_null(q);
    p = xrealloc(p, 0); /* glibc's realloc(p, 0) frees and gives NULL; ours never does */
    assert_non_null(p);
    free(p);
    free(q);
}

/* Runs f in a child with stderr captured; true when it died of SIGABRT having written want. */
static bool dies_saying(void (*f)(void), const char *want) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}); /* the abort is expected: no core file */
        dup2(fds[1], 2);
        close(fds[0]);
        f();
        _exit(0);
    }
    close(fds[1]);
    char buf[512];
    size_t len = 0;
    ssize_t got;
    while (len < sizeof buf - 1 && (got = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)got;
    buf[len] = 0;
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!strstr(buf, want)) fprintf(stderr, "child wrote: %s\n", buf);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(buf, want) != NULL;
}

static void ask_malloc(void) { free(xmalloc(SIZE_MAX - 4096)); }
static void ask_calloc(void) { free(xcalloc(SIZE_MAX / 2, 4)); }
static void ask_realloc(void) { free(xrealloc(NULL, SIZE_MAX - 4096)); }
static void ask_grow(void) {
    long *v = NULL;
    size_t cap = 0;
    XGROW(v, cap, SIZE_MAX / 2, 8);
    free(v);
}

static void test_exhaustion_logs_the_size_and_aborts(void **state) {
    (void)state;
    char want[128];
    snprintf(want, sizeof want, "out of memory: malloc of %zu bytes failed; aborting\n", SIZE_MAX - 4096);
    assert_true(dies_saying(ask_malloc, want));
    snprintf(want, sizeof want, "out of memory: calloc of %zu x 4 bytes failed; aborting\n", SIZE_MAX / 2);
    assert_true(dies_saying(ask_calloc, want));
    snprintf(want, sizeof want, "out of memory: realloc of %zu bytes failed; aborting\n", SIZE_MAX - 4096);
    assert_true(dies_saying(ask_realloc, want));
    snprintf(want, sizeof want, "out of memory: growing an array of %zu x 8 bytes failed; aborting\n", SIZE_MAX / 2);
    assert_true(dies_saying(ask_grow, want));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles_from_first),
        cmocka_unit_test(test_grow_to_a_need_far_beyond),
        cmocka_unit_test(test_grow_cap_arithmetic),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_zero_sizes_are_not_null),
        cmocka_unit_test(test_exhaustion_logs_the_size_and_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
