/*
 * The topic-level configs (topic_config.h): one table of name, type, default (Kafka's, or the
 * broker config's), bounds, synonym and documentation, with what MSK Serverless lets users set
 * and up to what value; tcfg_check validates a value against it under topic.config.policy.
 */
#include "topic_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { C_BOOL = 1, C_STRING = 2, C_INT = 3, C_LONG = 5, C_DOUBLE = 6, C_LIST = 7 } ctype;

typedef struct tdef {
    const char *name;
    ctype type;
    const char *dflt;      /* NULL: taken from the broker config (see tcfg_default) */
    int64_t min, max;
    const char *choices;   /* allowed values, '|' separated (lists: each element) */
    bool msk_alter;        /* MSK Serverless lets users set it */
    bool msk_create_only;  /* ... but only in CreateTopics */
    int64_t msk_max;       /* MSK Serverless upper bound (0: none) */
    const char *synonym;   /* the broker config that gives its default (Kafka's name), or NULL */
    const char *doc;       /* DescribeConfigs v3+ documentation */
} tdef;

#define LMAX INT64_MAX
static const tdef defs[] = {
    {"cleanup.policy", C_LIST, "delete", 0, 0, "delete|compact", true, true, 0, "log.cleanup.policy",
     "delete: old records go by retention.ms and retention.bytes; compact: the newest record of each key is kept "
     "and older ones removed; both may be given. On MSK Serverless it can be set only when the topic is created."},
    {"compression.type", C_STRING, "producer", 0, 0, "uncompressed|zstd|lz4|snappy|gzip|producer", true, false, 0,
     "compression.type", "The codec batches are stored in: producer keeps what the producer sent, any other value "
     "recompresses each batch into that codec on append."},
    {"delete.retention.ms", C_LONG, NULL, 0, LMAX, NULL, false, false, 0, "log.cleaner.delete.retention.ms",
     "How long a tombstone of a compacted topic is kept after the compaction that first kept it, so consumers "
     "catching up see the delete."},
    {"file.delete.delay.ms", C_LONG, "60000", 0, LMAX, NULL, false, false, 0, "log.segment.delete.delay.ms",
     "How long a deleted segment file waits before removal (no files here; kept for tools)."},
    {"flush.messages", C_LONG, "9223372036854775807", 1, LMAX, NULL, false, false, 0, "log.flush.interval.messages",
     "Records between forced fsyncs (storage.sync decides here)."},
    {"flush.ms", C_LONG, "9223372036854775807", 0, LMAX, NULL, false, false, 0, "log.flush.interval.ms",
     "Time between forced fsyncs (storage.sync decides here)."},
    {"index.interval.bytes", C_INT, "4096", 0, INT32_MAX, NULL, false, false, 0, "log.index.interval.bytes",
     "Bytes between offset index entries (every batch is indexed here)."},
    {"local.retention.bytes", C_LONG, "-2", -2, LMAX, NULL, false, false, 0, "log.local.retention.bytes",
     "Tiered storage: local bytes kept (-2: retention.bytes)."},
    {"local.retention.ms", C_LONG, "-2", -2, LMAX, NULL, false, false, 0, "log.local.retention.ms",
     "Tiered storage: local time kept (-2: retention.ms)."},
    {"max.compaction.lag.ms", C_LONG, NULL, 1, LMAX, NULL, false, false, 0, "log.cleaner.max.compaction.lag.ms",
     "A compacted partition whose oldest uncompacted record is older than this is compacted whatever its dirty "
     "ratio."},
    {"max.message.bytes", C_INT, NULL, 0, INT32_MAX, NULL, true, false, 8388608, "message.max.bytes",
     "The largest record batch the topic takes, after compression; larger ones get MESSAGE_TOO_LARGE. MSK "
     "Serverless allows at most 8 MiB."},
    {"message.downconversion.enable", C_BOOL, "true", 0, 0, NULL, false, false, 0, "log.message.downconversion.enable",
     "Down-conversion for old fetch versions (Kafka 4 serves none)."},
    {"message.timestamp.after.max.ms", C_LONG, "9223372036854775807", 0, LMAX, NULL, false, false, 0,
     "log.message.timestamp.after.max.ms", "How far a CreateTime timestamp may be ahead of the broker's clock; "
     "records beyond get INVALID_TIMESTAMP."},
    {"message.timestamp.before.max.ms", C_LONG, "9223372036854775807", 0, LMAX, NULL, false, false, 0,
     "log.message.timestamp.before.max.ms", "How far a CreateTime timestamp may be behind the broker's clock; "
     "records beyond get INVALID_TIMESTAMP."},
    {"message.timestamp.difference.max.ms", C_LONG, "9223372036854775807", 0, LMAX, NULL, true, false, 0,
     "log.message.timestamp.difference.max.ms", "How far a CreateTime timestamp may be from the broker's clock, "
     "either way; records beyond get INVALID_TIMESTAMP."},
    {"message.timestamp.type", C_STRING, "CreateTime", 0, 0, "CreateTime|LogAppendTime", true, false, 0,
     "log.message.timestamp.type", "CreateTime keeps the producer's timestamps; LogAppendTime replaces them with "
     "the broker's time of append."},
    {"min.cleanable.dirty.ratio", C_DOUBLE, "0.5", 0, 1, NULL, false, false, 0, "log.cleaner.min.cleanable.ratio",
     "A compacted partition is compacted once its uncompacted bytes reach this share of it."},
    {"min.compaction.lag.ms", C_LONG, NULL, 0, LMAX, NULL, false, false, 0, "log.cleaner.min.compaction.lag.ms",
     "Records younger than this are not compacted."},
    {"min.insync.replicas", C_INT, NULL, 1, INT32_MAX, NULL, false, false, 0, "min.insync.replicas",
     "In-sync replicas a partition needs for acks=all produce; with fewer (a replication factor below it, or "
     "brokers down) acks=all gets NOT_ENOUGH_REPLICAS."},
    {"preallocate", C_BOOL, "false", 0, 0, NULL, false, false, 0, "log.preallocate",
     "Preallocate segment files (no files here)."},
    {"remote.storage.enable", C_BOOL, "false", 0, 0, NULL, false, false, 0, NULL, "Tiered storage for the topic."},
    {"retention.bytes", C_LONG, NULL, -1, LMAX, NULL, true, false, 0, "log.retention.bytes",
     "The most bytes a partition keeps before its oldest batches are deleted (-1: no limit); applies when "
     "cleanup.policy includes delete."},
    {"retention.ms", C_LONG, NULL, -1, LMAX, NULL, true, false, 0, "log.retention.ms",
     "How long records are kept before deletion (-1: forever); applies when cleanup.policy includes delete."},
    {"segment.bytes", C_INT, "1073741824", 14, INT32_MAX, NULL, false, false, 0, "log.segment.bytes",
     "Segment file size (no segments here; MSK Serverless refuses to change it)."},
    {"segment.index.bytes", C_INT, "10485760", 4, INT32_MAX, NULL, false, false, 0, "log.index.size.max.bytes",
     "Offset index size per segment (no segments here)."},
    {"segment.jitter.ms", C_LONG, "0", 0, LMAX, NULL, false, false, 0, "log.roll.jitter.ms",
     "Random jitter on segment rolls (no segments here)."},
    {"segment.ms", C_LONG, "604800000", 1, LMAX, NULL, false, false, 0, "log.roll.ms",
     "Time before a segment rolls (no segments here)."},
    {"unclean.leader.election.enable", C_BOOL, "false", 0, 0, NULL, false, false, 0,
     "unclean.leader.election.enable", "Let an out-of-sync replica become leader."},
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static const tdef *find(const char *key) {
    for (size_t i = 0; i < NDEFS; i++)
        if (strcmp(defs[i].name, key) == 0) return &defs[i];
    return NULL;
}

size_t tcfg_count(void) { return NDEFS; }

bool tcfg_read_only(const srv *s, const char *key) {
    const tdef *d = find(key);
    return s->cfg->topic_config_policy == TOPIC_POLICY_SERVERLESS && (!d || !d->msk_alter || d->msk_create_only);
}

const char *tcfg_synonym(const char *key) {
    const tdef *d = find(key);
    return d ? d->synonym : NULL;
}

const char *tcfg_doc(const char *key) {
    const tdef *d = find(key);
    return d ? d->doc : NULL;
}
const char *tcfg_name(size_t i) { return defs[i].name; }
bool tcfg_known(const char *key) { return find(key) != NULL; }
bool tcfg_sensitive(const char *key) { (void)key; return false; }

int8_t tcfg_type(const char *key) {
    const tdef *d = find(key);
    return d ? (int8_t)d->type : C_STRING;
}

const char *tcfg_default(const srv *s, const char *key, char *buf, size_t n) {
    const tdef *d = find(key);
    if (!d) return NULL;
    if (d->dflt) return d->dflt;
    int64_t v = 0;
    if (strcmp(key, "max.message.bytes") == 0) v = s->cfg->message_max_bytes;
    else if (strcmp(key, "retention.bytes") == 0) v = s->cfg->log_retention_bytes;
    else if (strcmp(key, "retention.ms") == 0) v = s->cfg->log_retention_ms;
    else if (strcmp(key, "delete.retention.ms") == 0) v = s->cfg->log_cleaner_delete_retention_ms;
    else if (strcmp(key, "min.compaction.lag.ms") == 0) v = s->cfg->log_cleaner_min_compaction_lag_ms;
    else if (strcmp(key, "max.compaction.lag.ms") == 0) v = s->cfg->log_cleaner_max_compaction_lag_ms;
    else if (strcmp(key, "min.insync.replicas") == 0) v = s->cfg->min_insync_replicas;
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

static bool in_choices(const char *choices, const char *v, size_t len) {
    for (const char *c = choices; c;) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && strncmp(c, v, n) == 0) return true;
        c = bar ? bar + 1 : NULL;
    }
    return false;
}

static int16_t invalid(char *why, size_t n, const char *fmt, const char *key, const char *value) {
    snprintf(why, n, fmt, value, key);
    return 40; /* INVALID_CONFIG */
}

static int16_t check_value(const tdef *d, const char *value, char *why, size_t n) {
    const char *bad = "Invalid value %s for configuration %s";
    switch (d->type) {
    case C_BOOL:
        if (strcmp(value, "true") && strcmp(value, "false"))
            return invalid(why, n, "Invalid value %s for configuration %s: Expected value to be either true or false",
                           d->name, value);
        return 0;
    case C_INT:
    case C_LONG: {
        errno = 0;
        char *end;
        long long x = strtoll(value, &end, 10);
        if (errno || end == value || *end || x < d->min || x > d->max ||
            (d->type == C_INT && (x < INT32_MIN || x > INT32_MAX)))
            return invalid(why, n, bad, d->name, value);
        return 0;
    }
    case C_DOUBLE: {
        char *end;
        double x = strtod(value, &end);
        if (end == value || *end || x < (double)d->min || x > (double)d->max) return invalid(why, n, bad, d->name, value);
        return 0;
    }
    case C_STRING:
        if (d->choices && !in_choices(d->choices, value, strlen(value))) return invalid(why, n, bad, d->name, value);
        return 0;
    case C_LIST:
        for (const char *p = value; *p;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            while (len && *p == ' ') p++, len--;
            while (len && p[len - 1] == ' ') len--;
            if (!in_choices(d->choices, p, len)) return invalid(why, n, bad, d->name, value);
            p = comma ? comma + 1 : p + strlen(p);
        }
        return 0;
    }
    return 0;
}

/* The list of alterable configs, in MSK's own wording. */
static const char msk_alterable[] =
    "[compression.type, max.message.bytes, message.timestamp.difference.max.ms, message.timestamp.type, "
    "retention.bytes, retention.ms]";

int16_t tcfg_check(const srv *s, const char *key, const char *value, bool creating, char *why, size_t n) {
    const tdef *d = find(key);
    if (!d) {
        snprintf(why, n, "Unknown topic config name: %s", key);
        return 40;
    }
    if (s->cfg->topic_config_policy == TOPIC_POLICY_SERVERLESS &&
        (!d->msk_alter || (d->msk_create_only && !creating))) {
        snprintf(why, n,
                 "Amazon MSK Serverless can't alter topic configuration %s. Only the following topic configurations "
                 "are alterable: %s. For all topic configurations, MSK Serverless uses defaults that follow best "
                 "practices.",
                 key, msk_alterable);
        return 40;
    }
    if (!value) return 0;
    int16_t code = check_value(d, value, why, n);
    if (code) return code;
    if (s->cfg->topic_config_policy == TOPIC_POLICY_SERVERLESS && d->msk_max &&
        strtoll(value, NULL, 10) > d->msk_max) {
        snprintf(why, n, "Invalid value %s for configuration %s: MSK Serverless allows at most %lld", value, key,
                 (long long)d->msk_max);
        return 40;
    }
    return 0;
}
