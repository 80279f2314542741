/*
 * The embedded consumer protocol: what a "consumer" group carries inside the
 * opaque JoinGroup protocols[].metadata (ConsumerProtocolSubscription) and
 * SyncGroup assignments[].assignment (ConsumerProtocolAssignment).
 *
 * Both are an int16 version followed by a never-flexible body (classic
 * encoding: int32 array counts, int16 string lengths, int32 byte lengths,
 * -1 = null only where the schema allows it), versions 0-3:
 *
 *   Subscription  v0: topics []string, user_data nullable bytes
 *                 v1: + owned_partitions [] {topic string, partitions []int32}
 *                 v2: + generation_id int32      (default -1)
 *                 v3: + rack_id nullable string  (default null)
 *   Assignment    v0-v3 (one layout): assigned_partitions [] {topic, partitions},
 *                 user_data nullable bytes
 *
 * topics, owned_partitions, assigned_partitions, partitions and the topic
 * strings are not nullable (ConsumerProtocol*.json).
 *
 * Two modes, because the brokers we emulate disagree:
 *
 * KP_CONSUMER_STRICT (MSK Serverless). The version must be >= 0. The bytes
 * are decoded with the layout of min(version, 3) and every field of that
 * layout must be present and well formed, else false with *err saying where
 * and why (MSK answers INVALID_REQUEST (42); kafkajs <= 2.2.1 declares v1
 * and sends a v0 body, which fails at owned_partitions). Bytes after the last
 * field of that layout are ignored: the forward-compatibility rule, so a v4+
 * declaration decodes as v3 plus ignored trailing bytes. A length or count
 * below -1, or -1 where the field is not nullable, is an error; a count
 * larger than the remaining bytes could hold is an error before anything is
 * allocated.
 *
 * KP_CONSUMER_LENIENT (Apache Kafka, which never rejects a JoinGroup or
 * SyncGroup for these bytes). Always returns true. Decodes what it can the
 * way the Apache broker does: the version, then the v0 prefix (topics +
 * user_data) whatever the declared version (negative included), then, for a
 * subscription declaring v1+, the later fields of min(version, 3) one by one
 * until one fails. What could not be decoded is left out:
 *   - out->decoded_version is the highest layout version whose fields were
 *     all decoded, -1 when not even the v0 prefix was;
 *   - v0 prefix failed (or no version): ntopics = -1, topics = NULL and
 *     user_data null, meaning "subscription unknown" (Kafka then treats the
 *     member as subscribed to every topic); assignment: nassigned = -1;
 *   - a later field failed: nowned = -1 (owned_partitions not decoded),
 *     generation_id -1, rack_id null as the defaults;
 *   - a negative length on a nullable field (user_data, rack_id) is read as
 *     null, as Java's generated readers do.
 * When something was left out, *err says where decoding stopped (for a debug
 * log line); otherwise err->field is NULL.
 *
 * Fields absent from the declared version get the schema defaults: nowned 0
 * (empty), generation_id -1, rack_id null.
 *
 * Strings and user_data point into p, which must outlive *out; the arrays
 * come from the arena. Nothing else is allocated. err may be NULL.
 *
 * A zero-length assignment is how Apache Kafka says "nothing assigned" (it
 * hands one to members the leader left out); it has no version, so it fails
 * here in STRICT mode: the caller decides whether to decode it at all.
 */
#ifndef KP_CONSUMER_H
#define KP_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kp.h"

#define KP_CONSUMER_MAX_VERSION 3 /* newest layout known; higher versions decode as this one */

typedef enum { KP_CONSUMER_STRICT, KP_CONSUMER_LENIENT } kp_consumer_mode;

typedef struct kp_topic_partitions {
    kp_str topic;
    int32_t n;
    int32_t *partitions;        /* host byte order, from the arena */
} kp_topic_partitions;

typedef struct kp_subscription {
    int16_t version;            /* as declared (-1 when too short to hold one) */
    int16_t decoded_version;    /* layout fully decoded: min(version, 3) on STRICT success;
                                   LENIENT: see above, -1 = nothing */
    int32_t ntopics;            /* -1: unknown (LENIENT only) */
    kp_str *topics;
    kp_bytes user_data;         /* len -1: null */
    int32_t nowned;             /* v1+; 0 when absent; -1: not decodable (LENIENT only) */
    kp_topic_partitions *owned;
    int32_t generation_id;      /* v2+, default -1 */
    kp_str rack_id;             /* v3+, default null */
} kp_subscription;

typedef struct kp_assignment {
    int16_t version;            /* as declared (-1 when too short to hold one) */
    int16_t decoded_version;    /* layout decoded: min(version, 3) (0 for a negative version in
                                   LENIENT); -1 when not decodable (LENIENT only) */
    int32_t nassigned;          /* -1: not decodable (LENIENT only) */
    kp_topic_partitions *assigned;
    kp_bytes user_data;         /* len -1: null */
} kp_assignment;

/*
 * Where decoding failed, for the broker's log line. Filled on every call
 * when err is not NULL: field NULL when nothing failed. On a STRICT failure
 * only out->version (-1 if unreadable) is meaningful, for the formatter.
 */
typedef struct kp_consumer_error {
    size_t offset;      /* byte offset in the metadata: the first byte of what failed (the
                           truncated int, or the length/count prefix found invalid); for a
                           string or bytes running past the end, the first byte of its data
                           (as kp_reader reports it) */
    const char *field;  /* "version", "topics", "user_data", "owned_partitions", "generation_id",
                           "rack_id", "assigned_partitions"; NULL: nothing failed */
    int32_t index;      /* element of that array where it failed, -1 if not inside one */
    const char *elem;   /* inside the element: "topic" or "partitions"; NULL otherwise */
    const char *reason; /* "truncated", "negative version", "negative length",
                           "negative array count", "null in a non-nullable field",
                           "null array in a non-nullable field",
                           "array count exceeds the remaining bytes", "length runs past the end" */
} kp_consumer_error;

bool kp_subscription_decode(const uint8_t *p, size_t len, kp_consumer_mode mode, kp_subscription *out,
                            kp_arena *a, kp_consumer_error *err);
bool kp_assignment_decode(const uint8_t *p, size_t len, kp_consumer_mode mode, kp_assignment *out,
                          kp_arena *a, kp_consumer_error *err);

/*
 * One sentence for a log line, snprintf-style (returns the length it needed).
 * what: "ConsumerProtocolSubscription" or "ConsumerProtocolAssignment";
 * declared_version: out->version; len: the metadata's length. E.g.
 *   ConsumerProtocolSubscription declares v1 but ends at byte 21 before owned_partitions
 *   ConsumerProtocolSubscription declares v0 but ends at byte 11 inside topics[0] (its data starts at byte 8)
 *   ConsumerProtocolSubscription declares v2 but ends at byte 27 inside generation_id (which starts at byte 25)
 *   ConsumerProtocolSubscription declares v0 but topics at byte 2 is invalid: negative array count (21 bytes in all)
 *   ConsumerProtocolSubscription declares v7 (read as v3) but ends at byte 29 before rack_id
 *   ConsumerProtocolSubscription is 1 byte, too short for its int16 version
 *   ConsumerProtocolSubscription declares invalid version -1
 */
int kp_consumer_error_format(const kp_consumer_error *e, const char *what, int16_t declared_version, size_t len,
                             char *buf, size_t n);

#endif
