/*
 * kafka_tags: the `kafka` control plane's TagResource, UntagResource and ListTagsForResource
 * (POST, DELETE and GET /v1/tags/{resourceArn}: botocore's kafka/2018-11-14/service-2.json) on
 * the clusters kafka_api.c knows, and the "tags" of the Cluster shape. Tags live in storage only
 * (stor_cluster_tag_*), so that they survive a restart and no copy in memory can drift from them;
 * a change is committed before it is answered.
 *
 * AWS's tag rules (https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html#tag-conventions,
 * https://docs.aws.amazon.com/msk/1.0/apireference/tags-resourcearn.html): at most 50 tags on a
 * resource, keys 1-128 and values 0-256 characters, keys starting with "aws:" reserved to AWS.
 * A request breaking one is refused whole (400 BadRequestException naming the field): nothing of
 * it is stored.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_call.h"
#include "log.h"
#include "stor.h"
#include "topic/topic.h"

#define MAX_TAGS KAFKA_MAX_TAGS
#define MAX_KEY_CHARS 128
#define MAX_VALUE_CHARS 256

/* Characters, as AWS counts tag lengths (Unicode code points), of a UTF-8 string. */
static size_t chars(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void add_tag(void *ctx, const char *key, const char *value) { json_object_set_new(ctx, key, json_string(value)); }

json_t *kafka_tags_json(srv *s, const char *arn) {
    json_t *tags = json_object();
    /* no storage: a broker state built without one (tests/fuzz/fuzz_aws.c) has no tags */
    if (s->st && stor_cluster_tags_load(s->st, arn, add_tag, tags) != 0)
        log_warn("kafka control plane: reading the tags of %s: %s", arn, stor_errmsg(s->st));
    return tags;
}

/* The tag key rules; false with the refusal answered. */
static bool key_ok(aws_call *c, const char *field, const char *key) {
    size_t n = chars(key);
    if (n < 1 || n > MAX_KEY_CHARS) {
        aws_rest_error(c, 400, "BadRequestException", field, "Tag keys must be 1 to %d characters long; got %zu.",
                       MAX_KEY_CHARS, n);
        return false;
    }
    if (!strncmp(key, "aws:", 4)) {
        aws_rest_error(c, 400, "BadRequestException", field,
                       "Tag keys starting with \"aws:\" are reserved for AWS use: %.128s.", key);
        return false;
    }
    return true;
}

/* Stores (or, value NULL, removes) keys[i] = values[i] as one change, committed; false with the refusal answered. */
static bool store(aws_call *c, const char *arn, const char *const *keys, const char *const *values, size_t n) {
    stor *st = c->s->st;
    if (!st || stor_cluster_tags_put(st, arn, keys, values, n) != 0 || topic_commit_now(c->s) != 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Storing the tags failed: %s",
                       st ? stor_errmsg(st) : "no storage");
        return false;
    }
    return true;
}

bool kafka_tags_check(aws_call *c, json_t *tags, json_t *merged, const char **keys, const char **values, size_t *n) {
    const char *field;
    json_t *v;
    *n = 0;
    json_object_foreach(tags, field, v) {
        if (!key_ok(c, "tags", field)) return false;
        if (!json_is_string(v) || chars(json_string_value(v)) > MAX_VALUE_CHARS) {
            aws_rest_error(c, 400, "BadRequestException", "tags",
                           "Tag values must be strings of 0 to %d characters; the value of %.128s is not.",
                           MAX_VALUE_CHARS, field);
            return false;
        }
        json_object_set(merged, field, v);
        if (json_object_size(merged) > MAX_TAGS || *n >= MAX_TAGS) {
            aws_rest_error(c, 400, "BadRequestException", "tags",
                           "A resource can have at most %d tags; this request would give it more.", MAX_TAGS);
            return false;
        }
        keys[*n] = field, values[*n] = json_string_value(v), (*n)++;
    }
    return true;
}

void kafka_tag_resource(aws_call *c, const char *arn) {
    if (!kafka_authorized(c, "TagResource", arn) || !kafka_known_cluster(c, arn)) return;
    json_error_t je;
    json_t *body = json_loadb(c->rq->body ? c->rq->body : "", c->rq->body_len, JSON_REJECT_DUPLICATES, &je);
    json_t *tags = json_object_get(body, "tags");
    const char *field;
    json_t *v;
    if (!json_is_object(body)) {
        aws_rest_error(c, 400, "BadRequestException", NULL, "The request body is not a JSON object: %s", je.text);
        goto out;
    }
    json_object_foreach(body, field, v) {
        if (strcmp(field, "tags")) {
            aws_rest_error(c, 400, "BadRequestException", field, "Unknown field %.64s.", field);
            goto out;
        }
    }
    if (!json_is_object(tags) || !json_object_size(tags)) {
        aws_rest_error(c, 400, "BadRequestException", "tags", "tags must be a map of 1 to %d tags.", MAX_TAGS);
        goto out;
    }
    json_t *merged = kafka_tags_json(c->s, arn);
    const char *keys[MAX_TAGS], *values[MAX_TAGS];
    size_t n = 0;
    bool ok = kafka_tags_check(c, tags, merged, keys, values, &n);
    if (ok && store(c, arn, keys, values, n)) {
        c->rs->status = 204;
        snprintf(c->rs->detail, sizeof c->rs->detail, "TagResource %zu tag(s), %zu now", n, json_object_size(merged));
    }
    json_decref(merged);
out:
    json_decref(body);
}

/* UntagResource's tagKeys, gathered one by one (http_query_each); a refusal answered stops them. */
typedef struct untag {
    aws_call *c;
    char *keys[MAX_TAGS * 2]; /* a key may be named more than once */
    size_t n;
    bool ok;
} untag;

static bool untag_key(void *ctx, const char *key) {
    untag *u = ctx;
    if (u->n == sizeof u->keys / sizeof *u->keys) {
        aws_rest_error(u->c, 400, "BadRequestException", "tagKeys", "At most %zu tagKeys in one request.", u->n);
        u->ok = false;
    } else if ((u->ok = key_ok(u->c, "tagKeys", key))) {
        u->keys[u->n++] = strdup(key);
    }
    return u->ok;
}

void kafka_untag_resource(aws_call *c, const char *arn) {
    if (!kafka_authorized(c, "UntagResource", arn) || !kafka_known_cluster(c, arn)) return;
    /* tagKeys is a list in the query string, repeated: ?tagKeys=a&tagKeys=b */
    untag u = {.c = c, .ok = true};
    http_query_each(c->rq->query, "tagKeys", untag_key, &u);
    char **keys = u.keys;
    size_t n = u.n;
    bool ok = u.ok;
    if (ok && !n) {
        aws_rest_error(c, 400, "BadRequestException", "tagKeys", "tagKeys is required.");
        ok = false;
    }
    if (ok && store(c, arn, (const char *const *)keys, NULL, n)) {
        c->rs->status = 204;
        snprintf(c->rs->detail, sizeof c->rs->detail, "UntagResource %zu key(s)", n);
    }
    for (size_t i = 0; i < n; i++) free(keys[i]);
}

void kafka_list_tags_for_resource(aws_call *c, const char *arn) {
    if (!kafka_authorized(c, "ListTagsForResource", arn) || !kafka_known_cluster(c, arn)) return;
    json_t *tags = kafka_tags_json(c->s, arn);
    size_t n = json_object_size(tags);
    http_json(c->rs, 200, json_pack("{s:o}", "tags", tags));
    snprintf(c->rs->detail, sizeof c->rs->detail, "ListTagsForResource tags=%zu", n);
}
