/*
 * log: one line per event on stderr, with a UTC timestamp and a level; as text, or with
 * log.format=json as one JSON object per line whose fields come from the scope below.
 */
#ifndef LOG_H
#define LOG_H

#include <stdbool.h>

typedef enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_TRACE } log_level;
typedef enum log_format { LOG_TEXT, LOG_JSON } log_format;

extern log_level log_threshold;
extern log_format log_fmt;
int log_level_parse(const char *s, log_level *out); /* 0 ok, -1 unknown name */
/* file: the caller's source file, whose directory (or, in broker/ itself, name) is the component */
void log_write_at(log_level lvl, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * What a JSON line carries besides the message: the connection and the request being served
 * when the line is written. The transport and the request pipeline fill it (net.c,
 * pipeline/dispatch.c) only when log_fmt is LOG_JSON, and copy the strings, so a connection
 * closed mid-callback leaves nothing dangling.
 */
typedef struct log_scope {
    unsigned long long conn; /* 0: no connection */
    char client[128], principal[256], api[48];
    int error; /* a Kafka error code, when has_error */
    bool has_error;
} log_scope;
extern log_scope log_now;
void log_scope_clear(void);

#define log_write(lvl, ...) log_write_at(lvl, __FILE__, __VA_ARGS__)
#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_threshold >= LOG_DEBUG) log_write(LOG_DEBUG, __VA_ARGS__); } while (0)

/* "%lld partition%s", n, PLURAL_S(n): the s a count other than one takes */
#define PLURAL_S(n) ((n) == 1 ? "" : "s")

#endif
