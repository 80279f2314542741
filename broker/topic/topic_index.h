/* The topics of a cluster by name (topic_index.c), for topics.c: topic_find without a pass over them. */
#ifndef TOPIC_INDEX_H
#define TOPIC_INDEX_H

#include <stddef.h>

#include "topic.h"

topic *topic_index_find(const srv *s, const char *name, size_t len);
void topic_index_put(srv *s, topic *t);
void topic_index_del(srv *s, topic *t);

#endif
