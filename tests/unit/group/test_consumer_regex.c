/*
 * The regular expressions of consumer group subscriptions (broker/group/consumer_regex.c): whole
 * topic names as RE2/J's matches(), RE2's syntax accepted, the constructs RE2 has no part of
 * (backreferences, lookaround, atomic groups, recursion, conditionals, verbs) refused, and
 * patterns that make a backtracking matcher take exponential time answered at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "group/consumer.h"

static int match(const char *pattern, const char *name) {
    char err[200];
    cg_regex *re = cg_regex_compile(pattern, strlen(pattern), err, sizeof err);
    assert_non_null(re);
    int rc = cg_regex_match(re, name, strlen(name));
    cg_regex_free(re);
    return rc;
}

static bool refused(const char *pattern) {
    char err[200] = "";
    cg_regex *re = cg_regex_compile(pattern, strlen(pattern), err, sizeof err);
    if (re && cg_regex_probe(re, err, sizeof err) == 0) {
        cg_regex_free(re);
        return false;
    }
    cg_regex_free(re);
    assert_true(err[0] != 0); /* a reason for the error message */
    return true;
}

static void test_whole_name_matches(void **state) {
    (void)state;
    assert_int_equal(match("kip848-regex-.*", "kip848-regex-a"), 1);
    assert_int_equal(match("^kip848-regex-.*", "kip848-regex-a"), 1);
    assert_int_equal(match("regex", "kip848-regex-a"), 0); /* matches(), not find() */
    assert_int_equal(match("kip848", "kip848-regex"), 0);
    assert_int_equal(match("orders|payments", "payments"), 1);
    assert_int_equal(match("orders|payments", "orders2"), 0);
    assert_int_equal(match("t[0-9]+\\.v\\d", "t12.v3"), 1);
    assert_int_equal(match("(?i)ORDERS", "orders"), 1);
    assert_int_equal(match("(?P<x>a)(?:b)c$", "abc"), 1);
    assert_int_equal(match("a$", "a\n"), 0);
    assert_int_equal(match("(?:.*a){2}", "aab"), 0); /* the longest match is short of the end */
    assert_int_equal(match("(?:.*a){2}b", "aab"), 1);
    assert_int_equal(match("\\Q(a.b)\\E", "(a.b)"), 1);
    assert_int_equal(match("[(?=]+", "(?="), 1); /* literal inside a class */
}

static void test_non_re2_constructs_refused(void **state) {
    (void)state;
    assert_true(refused("("));
    assert_true(refused("[a-"));
    assert_true(refused("a**"));
    assert_true(refused("a(?=b)"));
    assert_true(refused("a(?!b)"));
    assert_true(refused("(?<=a)b"));
    assert_true(refused("(?<!a)b"));
    assert_true(refused("(a)\\1"));
    assert_true(refused("(?<n>a)\\k<n>"));
    assert_true(refused("(?P=n)"));
    assert_true(refused("(?>a+)b"));
    assert_true(refused("(a|(?R))"));
    assert_true(refused("(?(1)a|b)"));
    assert_true(refused("a(*SKIP)b"));
    assert_true(refused("a\\Kb"));
    assert_true(refused("a(?C1)b"));
    assert_false(refused("a(?i:b)"));
    assert_false(refused("[a-z]{1,10}"));
}

static void test_bounded(void **state) {
    (void)state;
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_true(refused(big)); /* longer than 1 KiB */
    char deep[200] = "";
    for (int i = 0; i < 90; i++) strcat(deep, "(");
    assert_true(refused(deep));
    /* exponential for a backtracking matcher, linear here */
    char name[250];
    memset(name, 'a', 248);
    name[248] = 'b';
    name[249] = 0;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(match("(a+)+$", name), 0);
        assert_int_equal(match("(a|aa)+c", name), 0);
        assert_int_equal(match("(.*a){12}", name), 0);
    }
    assert_true(match("(x+x+)+y", name) <= 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_name_matches),
        cmocka_unit_test(test_non_re2_constructs_refused),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
