/* log: one line per event on stderr, with a UTC timestamp and a level. */
#ifndef LOG_H
#define LOG_H

typedef enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_TRACE } log_level;

extern log_level log_threshold;
int log_level_parse(const char *s, log_level *out); /* 0 ok, -1 unknown name */
void log_write(log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__)
#define log_debug(...) do { if (log_threshold >= LOG_DEBUG) log_write(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
