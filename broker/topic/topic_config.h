/*
 * topic_config: the topic-level configs Kafka knows, their defaults, how to
 * validate a value, and which ones MSK Serverless lets users set.
 */
#ifndef TOPIC_CONFIG_H
#define TOPIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srv.h"

size_t tcfg_count(void);
const char *tcfg_name(size_t i);
bool tcfg_known(const char *key);
bool tcfg_sensitive(const char *key);
/* The default (no override) value, as DescribeConfigs reports it. */
const char *tcfg_default(const srv *s, const char *key, char *buf, size_t n);
/*
 * What MSK Serverless refuses to change under the serverless policy (DescribeConfigs read_only):
 * every config but the six it lets users alter; cleanup.policy once the topic exists.
 */
bool tcfg_read_only(const srv *s, const char *key);
/* The broker config whose value is the key's default (Kafka's synonym), or NULL. */
const char *tcfg_synonym(const char *key);
/* One line on what the config does, for DescribeConfigs v3+. */
const char *tcfg_doc(const char *key);
/* Kafka's config type name for DescribeConfigs v3+: 1 BOOLEAN, 2 STRING, 3 INT, 4 SHORT, 5 LONG, 6 DOUBLE, 7 LIST */
int8_t tcfg_type(const char *key);
/*
 * Check that key may be set to value (value NULL: reset to default) under the
 * active policy. creating: inside CreateTopics. Returns 0, or a Kafka error
 * code (INVALID_CONFIG 40) with the message clients see in why.
 */
int16_t tcfg_check(const srv *s, const char *key, const char *value, bool creating, char *why, size_t n);

#endif
