/*
 * kp_mirror: what a request names (topics, partitions, groups), and error answers shaped like
 * the request, derived from the message descriptions alone, so one mechanism serves every API.
 *
 * The descriptions carry no "this is a topic" marker, so field names and types stand in:
 *   - a topic element is a struct with a string "topic", or with a string "name" that sits in
 *     an array whose name holds "topic" (topics, topic_data, forgotten_topics_data) or that
 *     itself holds an array whose name holds "partition"; its "topic_id" (uuid) names it too;
 *     a resource with resource_type 2 (TOPIC) names resource_name; a string array whose name
 *     holds "topic" (DeleteTopics' topic_names) lists topic names; a null array whose name
 *     holds "topic" (Metadata, OffsetFetch, DescribeLogDirs) stands for every topic;
 *   - a partition is an int32 "index", "partition" or "partition_index" of an element, or an
 *     element of an int32 array whose name holds "partition" (OffsetFetch's partition_indexes);
 *   - a group is a string "group_id", an element of a string array whose name holds "group",
 *     or FindCoordinator's "key" / "coordinator_keys" when key_type is 0 (GROUP) or absent;
 *   - an error is an int16 "error_code", or "partition_error_code" (AddPartitionsToTxn);
 *   - a "transactional_id" string is a key an answer copies from its request (AddPartitionsToTxn
 *     v4+ results, DescribeTransactions), but names nothing a fault rule matches.
 * Arrays tagged in flexible versions are never walked: none of them names anything.
 */
#ifndef KP_MIRROR_H
#define KP_MIRROR_H

#include "kp.h"

typedef struct kp_target {
    kp_str topic;            /* len < 0: any topic (and partition is ignored) */
    const kp_uuid *topic_id; /* the topic's id when it exists, for requests that name topics by id */
    int32_t partition;       /* < 0: any partition of the topic */
} kp_target;

/*
 * Whether the request (struct s at ver) names t's topic and, when t has a partition, that
 * partition; a topic named without any partition (Metadata, CreateTopics) names all of them.
 */
bool kp_names_topic(const kp_schema *s, int ver, const void *req, const kp_target *t);
/* Whether the request names the group. */
bool kp_names_group(const kp_schema *s, int ver, const void *req, kp_str group);

/*
 * Fill resp (the response struct of the request's message at ver; its previous content is
 * ignored) as an answer refusing everything the request names with code: each response array
 * whose elements carry an error_code is given one element per element of the request array
 * it answers (the one with the same name, else the one whose elements share the most key
 * fields; a string or int32 request array fills the element's string or partition key), each
 * element gets its key fields (topic name or id, partition, group, coordinator key, resource,
 * member, transactional id) copied from the request element, every error code (above) is
 * code, and every error_message is message (unless message.len < 0). Other fields keep their
 * defaults. Arrays come from a.
 */
void kp_mirror_error(const kp_schema *req_s, const kp_schema *resp_s, int ver, const void *req, void *resp,
                     int16_t code, kp_str message, kp_arena *a);

/*
 * Set error_code (and error_message, unless message.len < 0) in an answer already built: with
 * t NULL or without a topic, every one; else only in the element of t's topic and below it (in
 * the element of its partition and below, when t has one and the answer lists it). An answer
 * with no error field in a topic element (errors per log dir, or top level only) gets them all
 * set whatever t is. Returns how many were set: 0 when the answer does not list t's topic.
 */
int kp_set_errors(const kp_schema *s, int ver, void *resp, int16_t code, kp_str message, const kp_target *t);
/*
 * Undo what an answer already built accepted: code in every error_code below the top level that
 * is still 0. Elements refused for a reason of their own keep their code, the top level and
 * error messages are left as they are. Returns how many were set.
 */
int kp_set_errors_accepted(const kp_schema *s, int ver, void *resp, int16_t code);

/* Where a response has error_code fields, in any version of vmin..vmax. */
enum {
    KP_ERRS_TOP = 1,   /* in the top-level struct */
    KP_ERRS_TOPIC = 2, /* in a topic, partition or resource element */
    KP_ERRS_OTHER = 4, /* in another element (group, member, coordinator, log dir) */
};
unsigned kp_error_places(const kp_schema *resp, int vmin, int vmax);

/*
 * The first non-zero error code of a response struct (top level or nested; 0 when none), by a
 * plan made once per response schema (kp_first_error.c). kp_error_plan_new returns NULL when
 * the schema has no error field, and kp_first_error then answers 0.
 */
typedef struct kp_error_plan kp_error_plan;
kp_error_plan *kp_error_plan_new(const kp_schema *resp);
void kp_error_plan_free(kp_error_plan *p);
int16_t kp_first_error(const kp_error_plan *p, int ver, bool flex, const void *resp);

#endif
