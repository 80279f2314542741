/*
 * kp_mirror: walks the message descriptions by field name and type (kp_mirror.h says which
 * names mean what). Everything here reads or fills structs already decoded or about to be
 * encoded; nothing touches bytes.
 */
#include "kp_mirror.h"

#include <string.h>

static bool in_range(const kp_field *f, int lo, int hi) { return f->tag < 0 && f->vmin <= hi && f->vmax >= lo; }
/* Tagged fields are skipped: none names a topic or group, and their defaults are right in an error answer. */
static bool live(const kp_field *f, int ver) { return in_range(f, ver, ver); }
static void *at(const void *base, const kp_field *f) { return (uint8_t *)base + f->off; }
static bool named(const kp_field *f, const char *n) { return !strcmp(f->name, n); }
static bool name_has(const kp_field *f, const char *part) { return strstr(f->name, part) != NULL; }

static bool str_eq(kp_str a, kp_str b) {
    return a.len >= 0 && a.len == b.len && (a.len == 0 || !memcmp(a.p, b.p, (size_t)a.len));
}

/* What a field identifies, so a response element can take it from the request element it answers. */
typedef enum key {
    K_NONE,
    K_NAME,      /* a topic's (or a config's) name */
    K_PART,
    K_TOPIC_ID,
    K_GROUP,
    K_COORD,     /* FindCoordinator's key */
    K_RES_TYPE,
    K_RES_NAME,
    K_MEMBER,
    K_INSTANCE,
    K_TXN,       /* a transactional id */
} key;

static key key_of(const kp_field *f) {
    switch (f->type) {
    case KP_STR:
        if (named(f, "name") || named(f, "topic")) return K_NAME;
        if (named(f, "group_id")) return K_GROUP;
        if (named(f, "key")) return K_COORD;
        if (named(f, "resource_name")) return K_RES_NAME;
        if (named(f, "member_id")) return K_MEMBER;
        if (named(f, "group_instance_id")) return K_INSTANCE;
        if (named(f, "transactional_id")) return K_TXN;
        return K_NONE;
    case KP_I32: return named(f, "index") || named(f, "partition") || named(f, "partition_index") ? K_PART : K_NONE;
    case KP_UUID: return named(f, "topic_id") ? K_TOPIC_ID : K_NONE;
    case KP_I8: return named(f, "resource_type") ? K_RES_TYPE : K_NONE;
    default: return K_NONE;
    }
}

/* AddPartitionsToTxn's per-partition error is partition_error_code */
static bool is_error_code(const kp_field *f) {
    return f->type == KP_I16 && (named(f, "error_code") || named(f, "partition_error_code"));
}
static bool is_error_message(const kp_field *f) { return f->type == KP_STR && named(f, "error_message"); }
static bool struct_array(const kp_field *f) { return f->type == KP_ARRAY && f->elem == KP_STRUCT; }

static const kp_field *find_r(const kp_schema *s, int lo, int hi, const char *name, uint8_t type) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (in_range(f, lo, hi) && f->type == type && named(f, name)) return f;
    }
    return NULL;
}
static const kp_field *find(const kp_schema *s, int ver, const char *name, uint8_t type) {
    return find_r(s, ver, ver, name, type);
}

static const kp_field *find_key(const kp_schema *s, int ver, key k, uint8_t type) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (live(f, ver) && f->type == type && key_of(f) == k) return f;
    }
    return NULL;
}

static const kp_field *part_key(const kp_schema *s, int ver) { return find_key(s, ver, K_PART, KP_I32); }

static bool topic_elem_r(const kp_schema *s, int lo, int hi, bool in_topic_array) {
    if (find_r(s, lo, hi, "topic", KP_STR)) return true;
    if (!find_r(s, lo, hi, "name", KP_STR) && !find_r(s, lo, hi, "topic_id", KP_UUID)) return false;
    if (in_topic_array) return true;
    for (unsigned i = 0; i < s->nfields; i++)
        if (in_range(&s->fields[i], lo, hi) && s->fields[i].type == KP_ARRAY && name_has(&s->fields[i], "partition"))
            return true;
    return false;
}
static bool topic_elem(const kp_schema *s, int ver, bool in_topic_array) { return topic_elem_r(s, ver, ver, in_topic_array); }

/* A topic element names t's topic, by name or by id. */
static bool topic_match(const kp_schema *s, int ver, const void *e, const kp_target *t) {
    const kp_field *f = find(s, ver, "topic", KP_STR);
    if (!f) f = find(s, ver, "name", KP_STR);
    if (f && str_eq(*(const kp_str *)at(e, f), t->topic)) return true;
    const kp_field *g = t->topic_id ? find(s, ver, "topic_id", KP_UUID) : NULL;
    if (!g) return false;
    static const kp_uuid zero;
    const kp_uuid *id = at(e, g);
    return memcmp(id, &zero, sizeof zero) != 0 && !memcmp(id, t->topic_id, sizeof *id);
}

/* A resource element (DescribeConfigs, AlterConfigs) naming t's topic. */
static bool resource_match(const kp_schema *s, int ver, const void *e, const kp_target *t) {
    const kp_field *rt = find(s, ver, "resource_type", KP_I8), *rn = find(s, ver, "resource_name", KP_STR);
    return rt && rn && *(const int8_t *)at(e, rt) == 2 && str_eq(*(const kp_str *)at(e, rn), t->topic);
}

/* 1: element e of a topic names partition p; 0: it names other partitions only; -1: it names none. */
static int names_partition(const kp_schema *s, int ver, const void *e, int32_t p) {
    int r = -1;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!live(f, ver) || f->type != KP_ARRAY) continue;
        const kp_arr *a = at(e, f);
        if (a->n <= 0) continue;
        if (f->elem == KP_I32 && name_has(f, "partition")) {
            r = 0;
            for (int32_t j = 0; j < a->n; j++)
                if (((const int32_t *)a->v)[j] == p) return 1;
        } else if (f->elem == KP_STRUCT) {
            const kp_field *k = part_key(f->sub, ver);
            if (!k) continue;
            r = 0;
            for (int32_t j = 0; j < a->n; j++)
                if (*(const int32_t *)at((const uint8_t *)a->v + f->sub->size * (size_t)j, k) == p) return 1;
        }
    }
    return r;
}

static bool names_topic(const kp_schema *s, int ver, const void *p, const kp_target *t, bool in_topic_array) {
    if (topic_elem(s, ver, in_topic_array)) {
        if (!topic_match(s, ver, p, t)) return false;
        return t->partition < 0 || names_partition(s, ver, p, t->partition) != 0;
    }
    if (resource_match(s, ver, p, t)) return true;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!live(f, ver) || f->type != KP_ARRAY) continue;
        const kp_arr *a = at(p, f);
        bool topical = name_has(f, "topic");
        if (a->n < 0) {
            if (topical) return true; /* null topics: every topic */
            continue;
        }
        for (int32_t j = 0; j < a->n; j++) {
            const uint8_t *e = (const uint8_t *)a->v + kp_type_size(f->elem, f->sub) * (size_t)j;
            if (f->elem == KP_STRUCT ? names_topic(f->sub, ver, e, t, topical)
                                     : f->elem == KP_STR && topical && str_eq(*(const kp_str *)e, t->topic))
                return true;
        }
    }
    return false;
}

bool kp_names_topic(const kp_schema *s, int ver, const void *req, const kp_target *t) {
    return t->topic.len < 0 || names_topic(s, ver, req, t, false);
}

bool kp_names_group(const kp_schema *s, int ver, const void *req, kp_str group) {
    const kp_field *kt = find(s, ver, "key_type", KP_I8);
    bool group_keys = !kt || *(const int8_t *)at(req, kt) == 0;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!live(f, ver)) continue;
        if (f->type == KP_STR) {
            if ((named(f, "group_id") || (named(f, "key") && group_keys)) && str_eq(*(const kp_str *)at(req, f), group))
                return true;
            continue;
        }
        if (f->type != KP_ARRAY) continue;
        const kp_arr *a = at(req, f);
        bool strings = f->elem == KP_STR && (name_has(f, "group") || (named(f, "coordinator_keys") && group_keys));
        for (int32_t j = 0; j < a->n; j++) {
            const uint8_t *e = (const uint8_t *)a->v + kp_type_size(f->elem, f->sub) * (size_t)j;
            if (strings ? str_eq(*(const kp_str *)e, group)
                        : f->elem == KP_STRUCT && kp_names_group(f->sub, ver, e, group))
                return true;
        }
    }
    return false;
}

/* ---- error answers ---- */

typedef struct fill {
    int ver;
    int16_t code;
    kp_str message;
    kp_arena *a;
    bool keep_refusals; /* an error_code already set stays */
} fill;

static int set_here(const kp_schema *s, void *p, const fill *x) {
    int n = 0;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!live(f, x->ver)) continue;
        if (is_error_code(f)) {
            if (x->keep_refusals && *(const int16_t *)at(p, f)) continue;
            *(int16_t *)at(p, f) = x->code;
            n++;
        } else if (is_error_message(f) && x->message.len >= 0) {
            *(kp_str *)at(p, f) = x->message;
        }
    }
    return n;
}

static bool carries_error(const kp_schema *s, int ver) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (live(f, ver) && (is_error_code(f) || (struct_array(f) && carries_error(f->sub, ver)))) return true;
    }
    return false;
}

/* The key a response element takes from an element of a request's string or int32 array. */
static const kp_field *scalar_key(const kp_schema *s, int ver, uint8_t type) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!live(f, ver) || f->type != type) continue;
        key k = key_of(f);
        if (type == KP_STR && (k == K_NAME || k == K_GROUP || k == K_COORD || k == K_RES_NAME || k == K_TXN)) return f;
        if (type == KP_I32 && k == K_PART) return f;
    }
    return NULL;
}

/* How well request array q answers to response array r: shared keys, and a large bonus for the same name. */
static int answer_score(const kp_field *q, const kp_field *r, int ver) {
    int score = 0;
    if (q->elem == KP_STRUCT) {
        for (unsigned i = 0; i < r->sub->nfields; i++) {
            const kp_field *f = &r->sub->fields[i];
            key k = live(f, ver) ? key_of(f) : K_NONE;
            if (k != K_NONE && find_key(q->sub, ver, k, f->type)) score++;
        }
    } else if (q->elem == KP_STR || (q->elem == KP_I32 && name_has(q, "partition"))) {
        score = scalar_key(r->sub, ver, q->elem) != NULL;
    }
    return score ? score + (named(q, r->name) ? 100 : 0) : 0;
}

/* The request array a response array answers; ties go to the first declared (Fetch: topics, not forgotten ones). */
static const kp_field *answered_by(const kp_schema *qs, int ver, const kp_field *r) {
    const kp_field *best = NULL;
    int best_score = 0;
    for (unsigned i = 0; i < qs->nfields; i++) {
        const kp_field *q = &qs->fields[i];
        if (!live(q, ver) || q->type != KP_ARRAY) continue;
        int sc = answer_score(q, r, ver);
        if (sc > best_score) {
            best = q;
            best_score = sc;
        }
    }
    return best;
}

static void mirror_struct(const kp_schema *qs, const void *q, const kp_schema *rs, void *r, const fill *x);

static void mirror_array(const kp_field *qf, const kp_arr *in, const kp_field *rf, kp_arr *out, const fill *x) {
    int32_t n = in->n > 0 ? in->n : 0;
    size_t rsz = rf->sub->size, qsz = kp_type_size(qf->elem, qf->sub);
    out->n = n;
    out->v = n ? kp_arena_alloc(x->a, rsz * (size_t)n) : NULL;
    const kp_field *k = qf->elem == KP_STRUCT ? NULL : scalar_key(rf->sub, x->ver, qf->elem);
    for (int32_t i = 0; i < n; i++) {
        void *e = (uint8_t *)out->v + rsz * (size_t)i;
        const uint8_t *qe = (const uint8_t *)in->v + qsz * (size_t)i;
        kp_defaults(rf->sub, x->ver, e);
        if (qf->elem == KP_STRUCT) {
            mirror_struct(qf->sub, qe, rf->sub, e, x);
        } else {
            mirror_struct(NULL, NULL, rf->sub, e, x);
            if (k) memcpy(at(e, k), qe, kp_type_size(k->type, NULL));
        }
    }
}

/* qs NULL: an element answering a string or int32 (no request struct to copy from). */
static void mirror_struct(const kp_schema *qs, const void *q, const kp_schema *rs, void *r, const fill *x) {
    set_here(rs, r, x);
    if (!qs) return;
    for (unsigned i = 0; i < rs->nfields; i++) {
        const kp_field *f = &rs->fields[i];
        if (!live(f, x->ver) || is_error_code(f) || is_error_message(f)) continue;
        if (struct_array(f)) {
            if (!carries_error(f->sub, x->ver)) continue; /* Metadata's brokers, Produce's record errors */
            const kp_field *qa = answered_by(qs, x->ver, f);
            if (qa) mirror_array(qa, at(q, qa), f, at(r, f), x);
            continue;
        }
        key k = key_of(f);
        const kp_field *from = k != K_NONE ? find_key(qs, x->ver, k, f->type) : NULL;
        if (from) memcpy(at(r, f), at(q, from), kp_type_size(f->type, NULL));
    }
}

void kp_mirror_error(const kp_schema *req_s, const kp_schema *resp_s, int ver, const void *req, void *resp,
                     int16_t code, kp_str message, kp_arena *a) {
    fill x = {ver, code, message, a, false};
    kp_defaults(resp_s, ver, resp);
    mirror_struct(req_s, req, resp_s, resp, &x);
}

typedef enum depth { ABOVE_TOPIC, IN_TOPIC, IN_PARTITION } depth;

static int set_errors(const kp_schema *s, void *p, const fill *x, const kp_target *t, depth d, bool in_topic_array) {
    if (t && d == ABOVE_TOPIC) {
        if (topic_elem(s, x->ver, in_topic_array)) {
            if (!topic_match(s, x->ver, p, t)) return 0;
            d = IN_TOPIC;
        } else if (find(s, x->ver, "resource_name", KP_STR)) {
            if (!resource_match(s, x->ver, p, t)) return 0;
            d = IN_PARTITION; /* a resource is the whole topic */
        }
    }
    if (t && d == IN_TOPIC && t->partition >= 0) {
        const kp_field *k = part_key(s, x->ver);
        if (k) {
            if (*(const int32_t *)at(p, k) != t->partition) return 0;
            d = IN_PARTITION;
        }
    }
    int n = !t || d == IN_PARTITION || (d == IN_TOPIC && t->partition < 0) ? set_here(s, p, x) : 0;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!live(f, x->ver) || !struct_array(f)) continue;
        const kp_arr *a = at(p, f);
        for (int32_t j = 0; j < a->n; j++)
            n += set_errors(f->sub, (uint8_t *)a->v + f->sub->size * (size_t)j, x, t, d, name_has(f, "topic"));
    }
    return n;
}

static unsigned places(const kp_schema *s, int lo, int hi, unsigned level);

int kp_set_errors(const kp_schema *s, int ver, void *resp, int16_t code, kp_str message, const kp_target *t) {
    fill x = {ver, code, message, NULL, false};
    /* where the answer has no error field at a topic (log dirs, top level only), the error goes everywhere */
    if (!t || t->topic.len < 0 || !(places(s, ver, ver, KP_ERRS_TOP) & KP_ERRS_TOPIC))
        return set_errors(s, resp, &x, NULL, ABOVE_TOPIC, false);
    int n = set_errors(s, resp, &x, t, ABOVE_TOPIC, false);
    if (!n && t->partition >= 0) {
        /* the answer does not list that partition: the whole topic */
        kp_target whole = *t;
        whole.partition = -1;
        n = set_errors(s, resp, &x, &whole, ABOVE_TOPIC, false);
    }
    /* 0 when the answer does not list the topic (a Metadata for every topic, without it) */
    return n;
}

int kp_set_errors_accepted(const kp_schema *s, int ver, void *resp, int16_t code) {
    fill x = {ver, code, KP_STR_NULL, NULL, true};
    int n = 0;
    for (unsigned i = 0; i < s->nfields; i++) { /* below the top level only */
        const kp_field *f = &s->fields[i];
        if (!live(f, ver) || !struct_array(f)) continue;
        const kp_arr *a = at(resp, f);
        for (int32_t j = 0; j < a->n; j++)
            n += set_errors(f->sub, (uint8_t *)a->v + f->sub->size * (size_t)j, &x, NULL, ABOVE_TOPIC, false);
    }
    return n;
}

static unsigned places(const kp_schema *s, int lo, int hi, unsigned level) {
    unsigned m = 0;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (!in_range(f, lo, hi)) continue;
        if (is_error_code(f)) m |= level;
        if (!struct_array(f)) continue;
        const kp_schema *e = f->sub;
        bool topical = level == KP_ERRS_TOPIC || topic_elem_r(e, lo, hi, name_has(f, "topic")) ||
                       find_r(e, lo, hi, "resource_name", KP_STR) || find_r(e, lo, hi, "index", KP_I32) ||
                       find_r(e, lo, hi, "partition", KP_I32) || find_r(e, lo, hi, "partition_index", KP_I32);
        m |= places(e, lo, hi, topical ? KP_ERRS_TOPIC : KP_ERRS_OTHER);
    }
    return m;
}

unsigned kp_error_places(const kp_schema *resp, int vmin, int vmax) { return places(resp, vmin, vmax, KP_ERRS_TOP); }
