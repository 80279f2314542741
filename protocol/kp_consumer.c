/*
 * The embedded consumer protocol (ConsumerProtocolSubscription and
 * ConsumerProtocolAssignment), decoded strictly (MSK Serverless) or leniently
 * (Apache Kafka). Hand-written rather than a kp_schema table because lenient
 * decoding keeps a prefix of the fields and the error must name the field
 * path (owned_partitions[0].partitions) for the log line.
 */
#include "kp_consumer.h"

#include <stdio.h>
#include <string.h>

typedef struct dec {
    kp_reader r;
    bool strict;
    kp_arena *a;
    kp_consumer_error e; /* first failure */
    /* where we are, copied into e on failure */
    const char *field;
    int32_t index;
    const char *elem;
} dec;

static void dec_init(dec *d, const uint8_t *p, size_t len, kp_consumer_mode mode, kp_arena *a) {
    memset(d, 0, sizeof(*d));
    kp_reader_init(&d->r, p, len);
    d->strict = mode == KP_CONSUMER_STRICT;
    d->a = a;
    d->e.index = -1;
    d->index = -1;
}

static void at_field(dec *d, const char *field) {
    d->field = field;
    d->index = -1;
    d->elem = NULL;
}

static bool fail(dec *d, size_t at, const char *reason) {
    if (!d->e.field) d->e = (kp_consumer_error){at, d->field, d->index, d->elem, reason};
    return false;
}

/* The reader leaves pos (and err_pos) at the start of a primitive it could not read. */
static bool rd_i16(dec *d, int16_t *v) { return kp_rd_i16(&d->r, v) || fail(d, d->r.pos, "truncated"); }
static bool rd_i32(dec *d, int32_t *v) { return kp_rd_i32(&d->r, v) || fail(d, d->r.pos, "truncated"); }

/*
 * The int32 count of a non-nullable array whose elements take at least
 * min_size bytes each. A count the remaining bytes cannot hold is refused
 * before anything is allocated for it.
 */
static bool rd_count(dec *d, size_t min_size, int32_t *n) {
    size_t at = d->r.pos;
    if (!rd_i32(d, n)) return false;
    if (*n == -1) return fail(d, at, "null array in a non-nullable field");
    if (*n < 0) return fail(d, at, "negative array count");
    if ((size_t)*n > kp_rd_left(&d->r) / min_size) return fail(d, at, "array count exceeds the remaining bytes");
    return true;
}

/*
 * The data of a string or bytes field whose length prefix (at `at`) was n.
 * -1 is null where the field is nullable; LENIENT reads any negative length
 * of a nullable field as null, as Java's generated readers do.
 */
static bool rd_data(dec *d, size_t at, int32_t n, bool nullable, kp_str *s) {
    if (n < 0) {
        if (nullable && (n == -1 || !d->strict)) {
            *s = KP_STR_NULL;
            return true;
        }
        return fail(d, at, n == -1 ? "null in a non-nullable field" : "negative length");
    }
    const uint8_t *b;
    if (!kp_rd_raw(&d->r, (size_t)n, &b)) return fail(d, d->r.pos, "length runs past the end");
    *s = (kp_str){(const char *)b, n};
    return true;
}

static bool rd_str(dec *d, bool nullable, kp_str *s) {
    size_t at = d->r.pos;
    int16_t n;
    return rd_i16(d, &n) && rd_data(d, at, n, nullable, s);
}

static bool rd_bytes(dec *d, kp_bytes *s) {
    size_t at = d->r.pos;
    int32_t n;
    return rd_i32(d, &n) && rd_data(d, at, n, true, s);
}

static void *arena_array(dec *d, int32_t n, size_t esz) {
    return n ? kp_arena_alloc(d->a, esz * (size_t)n) : NULL;
}

static bool rd_version(dec *d, int16_t *version) {
    at_field(d, "version");
    int16_t v;
    if (!rd_i16(d, &v)) return false;
    *version = v;
    if (v < 0 && d->strict) return fail(d, 0, "negative version");
    return true;
}

static bool rd_topics(dec *d, int32_t *np, kp_str **out) {
    at_field(d, "topics");
    int32_t n;
    if (!rd_count(d, 2, &n)) return false;
    kp_str *t = arena_array(d, n, sizeof(*t));
    for (int32_t i = 0; i < n; i++) {
        d->index = i;
        if (!rd_str(d, false, &t[i])) return false;
    }
    *np = n;
    *out = t;
    return true;
}

/* [] {topic string, partitions []int32}: owned_partitions and assigned_partitions */
static bool rd_topic_partitions(dec *d, const char *field, int32_t *np, kp_topic_partitions **out) {
    at_field(d, field);
    int32_t n;
    if (!rd_count(d, 2 + 4, &n)) return false;
    kp_topic_partitions *tp = arena_array(d, n, sizeof(*tp));
    for (int32_t i = 0; i < n; i++) {
        d->index = i;
        d->elem = "topic";
        if (!rd_str(d, false, &tp[i].topic)) return false;
        d->elem = "partitions";
        int32_t m;
        if (!rd_count(d, 4, &m)) return false;
        int32_t *parts = arena_array(d, m, sizeof(*parts));
        for (int32_t j = 0; j < m; j++)
            if (!rd_i32(d, &parts[j])) return false; /* cannot fail: the count was checked */
        tp[i].n = m;
        tp[i].partitions = parts;
    }
    *np = n;
    *out = tp;
    return true;
}

static int layout_of(int16_t version) {
    if (version < 0) return 0; /* LENIENT only: the v0 prefix, as the Apache broker reads it */
    return version > KP_CONSUMER_MAX_VERSION ? KP_CONSUMER_MAX_VERSION : version;
}

/* Fills o field by field; stops at the first failure, leaving the rest at their defaults. */
static bool subscription_fields(dec *d, kp_subscription *o) {
    if (!rd_version(d, &o->version)) return false;
    int layout = layout_of(o->version);

    /* v0 prefix: kept only as a whole */
    int32_t ntopics;
    kp_str *topics;
    kp_bytes user_data;
    if (!rd_topics(d, &ntopics, &topics)) return false;
    at_field(d, "user_data");
    if (!rd_bytes(d, &user_data)) return false;
    o->ntopics = ntopics;
    o->topics = topics;
    o->user_data = user_data;
    o->decoded_version = 0;
    if (layout < 1) return true;

    o->nowned = -1;
    if (!rd_topic_partitions(d, "owned_partitions", &o->nowned, &o->owned)) return false;
    o->decoded_version = 1;
    if (layout < 2) return true;

    at_field(d, "generation_id");
    if (!rd_i32(d, &o->generation_id)) return false;
    o->decoded_version = 2;
    if (layout < 3) return true;

    at_field(d, "rack_id");
    if (!rd_str(d, true, &o->rack_id)) return false;
    o->decoded_version = 3;
    /* anything after the newest layout we know is a later version's: ignored */
    return true;
}

bool kp_subscription_decode(const uint8_t *p, size_t len, kp_consumer_mode mode, kp_subscription *out,
                            kp_arena *a, kp_consumer_error *err) {
    dec d;
    dec_init(&d, p, len, mode, a);
    *out = (kp_subscription){
        .version = -1,
        .decoded_version = -1,
        .ntopics = -1,
        .user_data = KP_STR_NULL,
        .generation_id = -1,
        .rack_id = KP_STR_NULL,
    };
    bool ok = subscription_fields(&d, out);
    if (err) *err = d.e;
    return ok || !d.strict;
}

static bool assignment_fields(dec *d, kp_assignment *o) {
    if (!rd_version(d, &o->version)) return false;
    /* one layout for v0-v3 */
    int32_t n;
    kp_topic_partitions *tp;
    kp_bytes user_data;
    if (!rd_topic_partitions(d, "assigned_partitions", &n, &tp)) return false;
    at_field(d, "user_data");
    if (!rd_bytes(d, &user_data)) return false;
    o->nassigned = n;
    o->assigned = tp;
    o->user_data = user_data;
    o->decoded_version = (int16_t)layout_of(o->version);
    return true;
}

bool kp_assignment_decode(const uint8_t *p, size_t len, kp_consumer_mode mode, kp_assignment *out, kp_arena *a,
                          kp_consumer_error *err) {
    dec d;
    dec_init(&d, p, len, mode, a);
    *out = (kp_assignment){.version = -1, .decoded_version = -1, .nassigned = -1, .user_data = KP_STR_NULL};
    bool ok = assignment_fields(&d, out);
    if (err) *err = d.e;
    return ok || !d.strict;
}

int kp_consumer_error_format(const kp_consumer_error *e, const char *what, int16_t declared_version, size_t len,
                             char *buf, size_t n) {
    if (!e || !e->field) return snprintf(buf, n, "%s decoded without error", what);
    const char *reason = e->reason ? e->reason : "invalid";

    if (strcmp(e->field, "version") == 0) {
        if (strcmp(reason, "truncated") == 0)
            return snprintf(buf, n, "%s is %zu byte%s, too short for its int16 version", what, len,
                            len == 1 ? "" : "s");
        return snprintf(buf, n, "%s declares invalid version %d", what, declared_version);
    }

    char name[128];
    const char *dot = e->elem ? "." : "", *elem = e->elem ? e->elem : "";
    if (e->index >= 0)
        snprintf(name, sizeof name, "%s[%d]%s%s", e->field, (int)e->index, dot, elem);
    else
        snprintf(name, sizeof name, "%s%s%s", e->field, dot, elem);

    char ver[48];
    if (declared_version > KP_CONSUMER_MAX_VERSION)
        snprintf(ver, sizeof ver, "v%d (read as v%d)", declared_version, KP_CONSUMER_MAX_VERSION);
    else
        snprintf(ver, sizeof ver, "v%d", declared_version);

    if (strcmp(reason, "truncated") == 0) {
        if (e->offset >= len)
            return snprintf(buf, n, "%s declares %s but ends at byte %zu before %s", what, ver, len, name);
        return snprintf(buf, n, "%s declares %s but ends at byte %zu inside %s (which starts at byte %zu)", what, ver,
                        len, name, e->offset);
    }
    if (strcmp(reason, "length runs past the end") == 0)
        return snprintf(buf, n, "%s declares %s but ends at byte %zu inside %s (its data starts at byte %zu)", what,
                        ver, len, name, e->offset);
    return snprintf(buf, n, "%s declares %s but %s at byte %zu is invalid: %s (%zu bytes in all)", what, ver, name,
                    e->offset, reason, len);
}
