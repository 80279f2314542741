/*
 * The regular expressions of KIP-848 subscriptions (ConsumerGroupHeartbeat's
 * SubscribedTopicRegex). Kafka 4.x compiles them with RE2/J and keeps a topic when
 * `pattern.matcher(topic).matches()`, the whole name (GroupMetadataManager.refreshRegularExpressions,
 * https://github.com/apache/kafka/blob/4.0/group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java).
 * RE2 guarantees time linear in the input and has no backtracking constructs; here PCRE2 gives
 * the syntax and its DFA matcher (pcre2_dfa_match, no backtracking) the same guarantee, with the
 * constructs RE2 refuses refused too: backreferences, lookaround, atomic groups, recursion and
 * subroutine calls, conditionals, backtracking verbs, callouts, \C. A pattern is bounded in
 * length and nesting, and a match in work and memory, so a hostile pattern costs little and is
 * answered INVALID_REGULAR_EXPRESSION, as Kafka answers RE2/J's PatternSyntaxException.
 * Pure: no broker state; unit-tested in tests/unit/group/test_consumer_regex.c.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "kp_mem.h"

/* RE2's default program budget is of this order; topic-name patterns are far shorter. */
/*
 * The DFA matcher's cost is bounded by the subject (a topic name: at most 249 bytes) times the
 * states it tracks at once, which its workspace caps: past it the match gives up (no match).
 * (a+)+$ against 248 a's and a b, exponential for a backtracking matcher, takes milliseconds.
 */
enum { MAX_PATTERN = 1024, MAX_NEST = 64, DFA_WORKSPACE = 20000 };

struct cg_regex {
    pcre2_code *code;
    pcre2_match_context *mctx;
    pcre2_match_data *md;
    int *ws; /* DFA_WORKSPACE */
};

/*
 * The constructs RE2 has no part of, found before PCRE2 sees them: "(?" followed by anything
 * but flags, ':' or a named group, every "(*" verb, and the escapes of backreferences, \K, \G,
 * \R, \X and \C. Character classes and \Q...\E are skipped, where these are literal.
 */
static const char *unsupported(const char *p, size_t n) {
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 >= n) return NULL; /* PCRE2 refuses the trailing backslash */
            char e = p[++i];
            if (e == 'Q') {
                const char *end = NULL;
                for (size_t k = i + 1; k + 1 < n; k++)
                    if (p[k] == '\\' && p[k + 1] == 'E') {
                        end = p + k;
                        break;
                    }
                if (!end) return NULL;
                i = (size_t)(end - p) + 1;
                continue;
            }
            if (in_class) continue;
            if ((e >= '1' && e <= '9') || e == 'g' || e == 'k') return "backreferences are not supported";
            if (e == 'K' || e == 'G' || e == 'R' || e == 'X' || e == 'C')
                return "this escape is not supported (no \\K, \\G, \\R, \\X or \\C)";
            continue;
        }
        if (in_class) {
            if (c == ']') in_class = false;
            continue;
        }
        if (c == '[') {
            in_class = true;
            /* a ']' first (or after '^') is a literal */
            if (i + 1 < n && p[i + 1] == '^') i++;
            if (i + 1 < n && p[i + 1] == ']') i++;
            continue;
        }
        if (c != '(' || i + 1 >= n) continue;
        if (p[i + 1] == '*') return "backtracking control verbs are not supported";
        if (p[i + 1] != '?') continue;
        size_t k = i + 2;
        if (k < n && p[k] == 'P' && k + 1 < n && p[k + 1] == '<') continue;        /* (?P<name>...) */
        if (k < n && p[k] == '<' && k + 1 < n && p[k + 1] != '=' && p[k + 1] != '!') continue; /* (?<name>...) */
        while (k < n && p[k] && strchr("imsxU-", p[k])) k++;                               /* (?flags) (?flags:...) */
        if (k < n && (p[k] == ':' || p[k] == ')') ) continue;
        return "lookaround, atomic groups, conditionals, recursion, comments and callouts are not supported";
    }
    return NULL;
}

cg_regex *cg_regex_compile(const char *pattern, size_t len, char *err, size_t errlen) {
    if (len > MAX_PATTERN) {
        snprintf(err, errlen, "it is longer than %d bytes", MAX_PATTERN);
        return NULL;
    }
    const char *why = unsupported(pattern, len);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) abort();
    pcre2_set_max_pattern_length(cc, MAX_PATTERN);
    pcre2_set_parens_nest_limit(cc, MAX_NEST);
    int code = 0;
    PCRE2_SIZE off = 0;
    /* anchored at both ends: RE2/J's matches() is about the whole topic name */
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, len,
                                   PCRE2_UTF | PCRE2_NEVER_BACKSLASH_C | PCRE2_ANCHORED | PCRE2_ENDANCHORED |
                                       PCRE2_DOLLAR_ENDONLY | PCRE2_NO_AUTO_CAPTURE,
                                   &code, &off, cc);
    pcre2_compile_context_free(cc);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        snprintf(err, errlen, "%s at offset %zu", (const char *)msg, (size_t)off);
        return NULL;
    }
    uint32_t backrefs = 0;
    pcre2_pattern_info(re, PCRE2_INFO_BACKREFMAX, &backrefs);
    if (backrefs) {
        pcre2_code_free(re);
        snprintf(err, errlen, "backreferences are not supported");
        return NULL;
    }
    cg_regex *x = xcalloc(1, sizeof *x);
    x->code = re;
    x->mctx = pcre2_match_context_create(NULL);
    x->md = pcre2_match_data_create(1, NULL);
    if (!x->mctx || !x->md) abort();
    x->ws = xmalloc(sizeof *x->ws * DFA_WORKSPACE);
    /* the DFA matcher's work and memory, whatever the pattern: topic names are at most 249 bytes */
    pcre2_set_match_limit(x->mctx, 100000);
    pcre2_set_depth_limit(x->mctx, 100);
    pcre2_set_heap_limit(x->mctx, 1024); /* KiB */
    return x;
}

int cg_regex_match(const cg_regex *x, const char *subject, size_t len) {
    int rc = pcre2_dfa_match(x->code, (PCRE2_SPTR)subject, len, 0, PCRE2_ENDANCHORED, x->md, x->mctx, x->ws,
                             DFA_WORKSPACE);
    /*
     * The DFA matcher of PCRE2 10.42 returns matches ending before the end despite
     * PCRE2_ENDANCHORED; the longest comes first (0: more than fit), so the whole name matched
     * when the longest ends at its end.
     */
    if (rc >= 0) return pcre2_get_ovector_pointer(x->md)[1] == len;
    if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL) return 0;
    return -1; /* a limit, or an item the DFA matcher does not serve: no match, and said so */
}

void cg_regex_free(cg_regex *x) {
    if (!x) return;
    pcre2_match_context_free(x->mctx);
    pcre2_match_data_free(x->md);
    free(x->ws);
    pcre2_code_free(x->code);
    free(x);
}

int cg_regex_probe(const cg_regex *x, char *err, size_t errlen) {
    /* one match against a name, so an item only the matcher refuses is refused at subscription */
    int rc = cg_regex_match(x, "a", 1);
    if (rc < 0) snprintf(err, errlen, "it cannot be matched without backtracking");
    return rc < 0 ? -1 : 0;
}
