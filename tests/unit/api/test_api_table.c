/*
 * One place per API: the list of protocol/kp_apis.h, the message registry, the handler table
 * (broker/api/table.c) and what people read about them agree. Each listed API has its message
 * and its row; each handler file's opening comment states the name, key and versions of its
 * row ("Produce (key 0), v0–11", "OffsetDelete (key 47), v0"); README.md's "What it serves
 * today" states the same range wherever it names an API with versions, names every served API
 * so, and names the kafka-profile-only ones in a sentence that says so. A row, a comment or a
 * README entry that drifts fails here, with the file and what differs.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"

typedef struct listed {
    int16_t key;
    const char *name, *file;
} listed;

#define LISTED_(key, E, Name, file) {KP_API_##E, #Name, #file},
static const listed apis[] = {KP_APIS(LISTED_)};
#undef LISTED_
#define N_APIS (sizeof apis / sizeof apis[0])

/* Handlers that live outside broker/api/<file>.c, and where. */
static const struct {
    int16_t key;
    const char *path;
} elsewhere[] = {
    {KP_API_SASL_HANDSHAKE, "broker/iam/sasl.c"},
    {KP_API_SASL_AUTHENTICATE, "broker/iam/sasl.c"},
};

static int bad; /* drifts found by the current test, each printed */

static void drift(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void drift(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    bad++;
}

static char *slurp(const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", MSKMOCK_SOURCE_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

static bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/*
 * A version range at p: "3", "0–11" (en dash) or "0-11". Returns the byte after it, or NULL when
 * p holds no range (a range does not run into a letter or a decimal point: "12th", "0.5").
 */
static const char *parse_range(const char *p, int *lo, int *hi) {
    char *end;
    if (*p < '0' || *p > '9') return NULL;
    *lo = *hi = (int)strtol(p, &end, 10);
    if (!strncmp(end, "\xe2\x80\x93", 3) && end[3] >= '0' && end[3] <= '9') {
        *hi = (int)strtol(end + 3, &end, 10);
    } else if (end[0] == '-' && end[1] >= '0' && end[1] <= '9') {
        *hi = (int)strtol(end + 1, &end, 10);
    }
    return alnum(*end) || (*end == '.' && end[1] >= '0' && end[1] <= '9') ? NULL : end;
}

static void test_every_listed_api_has_its_message_and_its_row(void **state) {
    (void)state;
    bad = 0;
    bool seen[KP_API_LIMIT] = {false};
    for (size_t i = 0; i < N_APIS; i++) {
        const listed *a = &apis[i];
        if (i && a->key <= apis[i - 1].key) drift("kp_apis.h: %s (key %d) is out of key order", a->name, a->key);
        seen[a->key] = true;
        const kp_msg *m = kp_msg_get(a->key);
        if (!m) {
            drift("%s (key %d): no message description", a->name, a->key);
            continue;
        }
        if (m->key != a->key || strcmp(m->name, a->name))
            drift("msg_%s.c: describes %s (key %d), the list says %s (key %d)", a->file, m->name, m->key, a->name,
                  a->key);
        if (strlen(a->name) >= KP_API_NAME_MAX) drift("%s: name longer than KP_API_NAME_MAX", a->name);
        if (kp_msg_by_name(a->name, strlen(a->name)) != m) drift("%s: kp_msg_by_name does not find it", a->name);
        assert_string_equal(kp_api_name(a->key), a->name);
        const api_handler *h = api_lookup(a->key);
        if (!h) {
            drift("broker/api/table.c: no row for %s (key %d)", a->name, a->key);
            continue;
        }
        if (h->key != a->key) drift("broker/api/table.c: the row at key %d says key %d", a->key, h->key);
        if (h->vmin > h->vmax || h->vmin < m->vmin || h->vmax > m->vmax)
            drift("broker/api/table.c: %s %d–%d, but msg_%s.c decodes %d–%d", a->name, h->vmin, h->vmax, a->file,
                  m->vmin, m->vmax);
    }
    /* keys not listed are unknown everywhere */
    for (int k = -1; k <= KP_API_LIMIT; k++) {
        if (k >= 0 && k < KP_API_LIMIT && seen[k]) continue;
        if (kp_msg_get((int16_t)k) || api_lookup((int16_t)k)) drift("key %d is not listed but known", k);
        assert_string_equal(kp_api_name((int16_t)k), "Unknown");
    }
    assert_int_equal(bad, 0);
}

/* The opening comment of broker/api/<file>.c (the line after its first), or the first comment line of elsewhere[]. */
static void check_comment(const listed *a, const api_handler *h) {
    const char *path = NULL;
    for (size_t j = 0; j < sizeof elsewhere / sizeof elsewhere[0]; j++)
        if (elsewhere[j].key == a->key) path = elsewhere[j].path;
    char own[256];
    if (!path) {
        snprintf(own, sizeof own, "broker/api/%s.c", a->file);
        path = own;
    }
    char *text = slurp(path);
    if (!text) {
        drift("%s: missing (the handler of %s)", path, a->name);
        return;
    }
    char head[128];
    snprintf(head, sizeof head, "\n * %s (key ", a->name);
    const char *p = strstr(text, head);
    if (p && path == own && (strncmp(text, "/*\n", 3) || p != text + 2)) p = NULL; /* must open the file */
    int key = -1, lo = -1, hi = -1;
    if (p) {
        char *end;
        p += strlen(head);
        key = (int)strtol(p, &end, 10);
        p = !strncmp(end, "), v", 4) ? parse_range(end + 4, &lo, &hi) : NULL;
    }
    if (!p)
        drift("%s: the opening comment does not start \" * %s (key %d), v%d–%d\"", path, a->name, a->key, h->vmin,
              h->vmax);
    else if (key != a->key || lo != h->vmin || hi != h->vmax)
        drift("%s: the comment says %s (key %d), v%d–%d; the table serves key %d, v%d–%d", path, a->name, key, lo, hi,
              a->key, h->vmin, h->vmax);
    free(text);
}

static void test_each_handler_comment_states_its_rows_range(void **state) {
    (void)state;
    bad = 0;
    for (size_t i = 0; i < N_APIS; i++) {
        const api_handler *h = api_lookup(apis[i].key);
        if (h) check_comment(&apis[i], h);
    }
    /* and every file of broker/api/ is a served API's handler, the tables or the shared checks */
    DIR *d = opendir(MSKMOCK_SOURCE_DIR "/broker/api");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 2, ".c") || !strcmp(e->d_name, "table.c") ||
            !strcmp(e->d_name, "common.c") || !strcmp(e->d_name, "kafka_versions_table.c"))
            continue;
        bool served = false;
        for (size_t i = 0; i < N_APIS; i++)
            if (strlen(apis[i].file) == n - 2 && !strncmp(e->d_name, apis[i].file, n - 2) && api_lookup(apis[i].key))
                served = true;
        if (!served) drift("broker/api/%s: no row of the table is served by it", e->d_name);
    }
    closedir(d);
    assert_int_equal(bad, 0);
}

static void test_the_readme_states_each_served_range(void **state) {
    (void)state;
    bad = 0;
    char *text = slurp("README.md");
    assert_non_null(text);
    static const char start[] = "\n## What it serves today\n";
    char *from = strstr(text, start);
    assert_non_null(from);
    char *to = strstr(from + 1, "\n## ");
    if (to) *to = '\0';
    for (size_t i = 0; i < N_APIS; i++) {
        const listed *a = &apis[i];
        const api_handler *h = api_lookup(a->key);
        size_t n = strlen(a->name);
        int mentions = 0;
        for (const char *p = from; (p = strstr(p, a->name)); p += n) {
            int lo, hi;
            if (alnum(p[-1]) || p[n] != ' ' || !parse_range(p + n + 1, &lo, &hi)) continue; /* not "Name 0–3" */
            mentions++;
            if (!h) {
                drift("README.md: \"%s %d–%d\", but the table does not serve %s", a->name, lo, hi, a->name);
                continue;
            }
            if (lo != h->vmin || hi != h->vmax)
                drift("README.md: \"%s %d–%d\", the table serves %d–%d", a->name, lo, hi, h->vmin, h->vmax);
            if (h->kafka_profile_only) {
                /* the sentence naming it says so */
                const char *sentence = p;
                while (sentence > from && strncmp(sentence, ". ", 2) && strncmp(sentence, ".\n", 2) &&
                       strncmp(sentence, "\n\n", 2))
                    sentence--;
                char *copy = strndup(sentence, (size_t)(p - sentence));
                if (!strstr(copy, "`kafka` profile"))
                    drift("README.md: %s is served in the kafka profile only; the sentence naming it does not say so",
                          a->name);
                free(copy);
            }
        }
        if (h && !mentions) drift("README.md: \"What it serves today\" never states %s %d–%d", a->name, h->vmin, h->vmax);
    }
    free(text);
    assert_int_equal(bad, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_listed_api_has_its_message_and_its_row),
        cmocka_unit_test(test_each_handler_comment_states_its_rows_range),
        cmocka_unit_test(test_the_readme_states_each_served_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
