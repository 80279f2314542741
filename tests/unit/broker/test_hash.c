/*
 * hash.h: FNV-1a against the reference values of its authors
 * (http://www.isthe.com/chongo/tech/comp/fnv/, test vectors). The 32-bit form chooses the
 * coordinator of every group and transactional id, which clients remember across a restart:
 * a change here moves them all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hash.h"

static void test_fnv32_reference_values(void **state) {
    (void)state;
    assert_int_equal(hash_fnv32("", 0), 0x811c9dc5u);
    assert_int_equal(hash_fnv32("a", 1), 0xe40c292cu);
    assert_int_equal(hash_fnv32("foobar", 6), 0xbf9cf968u);
    /* bytes above 0x7f count as unsigned, as they did before this header */
    assert_int_equal(hash_fnv32("\xff", 1), (0x811c9dc5u ^ 0xffu) * 16777619u);
}

static void test_fnv64_reference_values(void **state) {
    (void)state;
    assert_true(hash_fnv64("", 0) == 0xcbf29ce484222325ull);
    assert_true(hash_fnv64("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(hash_fnv64("foobar", 6) == 0x85944171f73967e8ull);
    assert_true(hash_fnv64_from(hash_fnv64("foo", 3), "bar", 3) == hash_fnv64("foobar", 6));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv32_reference_values),
        cmocka_unit_test(test_fnv64_reference_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
