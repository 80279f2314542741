/*
 * The pure parts of the command-line client (broker/cli): kcat-style -f rendering of a
 * consumed record, and the Java partitioner's murmur2 (vectors from Kafka's UtilsTest).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/format.h"

static char *render(const char *fmt, const cli_rec *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cli_format(f, fmt, r);
    fclose(f);
    return buf;
}

/* count 2: "a"="1", "b"=null (varint zigzag: 2 -> 4, 1 -> 2, -1 -> 1) */
static const uint8_t headers[] = {4, 2, 'a', 2, '1', 2, 'b', 1};

static cli_rec sample(void) {
    return (cli_rec){.topic = "orders", .partition = 2, .offset = 41, .timestamp = 1700000000123,
                     .key = (const uint8_t *)"k1", .key_len = 2, .value = (const uint8_t *)"hello", .value_len = 5,
                     .headers = headers, .headers_len = sizeof headers};
}

static void test_every_placeholder(void **state) {
    (void)state;
    cli_rec r = sample();
    char *s = render("%t/%p@%o %T %k=%v (%K,%S) [%h] 100%%\\n", &r);
    assert_string_equal(s, "orders/2@41 1700000000123 k1=hello (2,5) [a=1,b=] 100%\n");
    free(s);
}

static void test_default_is_value_and_newline(void **state) {
    (void)state;
    cli_rec r = sample();
    char *s = render("%v\\n", &r);
    assert_string_equal(s, "hello\n");
    free(s);
}

static void test_null_key_and_value_print_empty_with_length_minus_one(void **state) {
    (void)state;
    cli_rec r = sample();
    r.key = NULL, r.key_len = -1, r.value = NULL, r.value_len = -1, r.headers = NULL, r.headers_len = 0;
    char *s = render("[%k][%v][%h] %K %S", &r);
    assert_string_equal(s, "[][][] -1 -1");
    free(s);
}

static void test_escapes_and_unknown_sequences_are_kept(void **state) {
    (void)state;
    cli_rec r = sample();
    char *s = render("a\\tb\\\\c %q %", &r);
    assert_string_equal(s, "a\tb\\c %q %");
    free(s);
}

static void test_values_with_binary_bytes_are_written_whole(void **state) {
    (void)state;
    cli_rec r = sample();
    static const uint8_t v[] = {'x', 0, 'y'};
    r.value = v, r.value_len = 3;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_format(f, "%v", &r);
    fclose(f);
    assert_int_equal(len, 3);
    assert_memory_equal(buf, v, 3);
    free(buf);
}

static void test_truncated_headers_print_what_parses(void **state) {
    (void)state;
    cli_rec r = sample();
    static const uint8_t cut[] = {4, 2, 'a', 2, '1', 2, 'b', 8, 'z'}; /* "b"'s value says 4 bytes, 1 follows */
    r.headers = cut, r.headers_len = sizeof cut;
    char *s = render("%h", &r);
    assert_string_equal(s, "a=1");
    free(s);
}

static void test_murmur2_matches_kafka(void **state) {
    (void)state;
    static const struct {
        const char *in;
        int32_t out;
    } v[] = {
        {"21", -973932308},
        {"foobar", -790332482},
        {"a-little-bit-long-string", -985981536},
        {"a-little-bit-longer-string", -1486304829},
        {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
        {"abc", 479470107},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_int_equal(cli_murmur2((const uint8_t *)v[i].in, strlen(v[i].in)), v[i].out);
    int32_t p = cli_key_partition((const uint8_t *)"21", 2, 7);
    assert_int_equal(p, (int32_t)((uint32_t)-973932308 & 0x7fffffff) % 7);
    assert_int_equal(cli_key_partition((const uint8_t *)"x", 1, 0), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_placeholder),
        cmocka_unit_test(test_default_is_value_and_newline),
        cmocka_unit_test(test_null_key_and_value_print_empty_with_length_minus_one),
        cmocka_unit_test(test_escapes_and_unknown_sequences_are_kept),
        cmocka_unit_test(test_values_with_binary_bytes_are_written_whole),
        cmocka_unit_test(test_truncated_headers_print_what_parses),
        cmocka_unit_test(test_murmur2_matches_kafka),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
