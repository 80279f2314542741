/*
 * The log writer (log.h): one line per event on stderr, UTC timestamps with milliseconds; as
 * text, or as JSON whose "component" comes from the caller's source path and whose other fields
 * come from the request being served. Tests and users grep these lines, so the format is a
 * contract.
 */
#include "log.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

log_level log_threshold = LOG_INFO;
log_format log_fmt = LOG_TEXT;
log_scope log_now;

static const char *const names[] = {"error", "warn", "info", "debug", "trace"};

int log_level_parse(const char *s, log_level *out) {
    for (int i = 0; i <= LOG_TRACE; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            *out = (log_level)i;
            return 0;
        }
    }
    return -1;
}

void log_scope_clear(void) {
    log_now.conn = 0;
    log_now.client[0] = log_now.principal[0] = log_now.api[0] = 0;
    log_now.has_error = false;
}

/* broker/iam/sasl.c -> "iam"; broker/lifecycle.c -> "lifecycle": the subsystem that wrote the line. */
static void component(const char *file, char *out, size_t n) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *dir_end = base > file ? base - 1 : NULL;
    const char *dir = dir_end;
    while (dir && dir > file && dir[-1] != '/') dir--;
    if (dir && (size_t)(dir_end - dir) > 0 && strncmp(dir, "broker", (size_t)(dir_end - dir)) != 0) {
        snprintf(out, n, "%.*s", (int)(dir_end - dir), dir);
        return;
    }
    const char *dot = strrchr(base, '.');
    snprintf(out, n, "%.*s", (int)(dot ? dot - base : (long)strlen(base)), base);
}

static void write_json(log_level lvl, const char *file, const char *ts, const char *msg) {
    char comp[64];
    component(file, comp, sizeof comp);
    json_t *o = json_pack("{s:s, s:s, s:s}", "ts", ts, "level", names[lvl], "component", comp);
    if (log_now.conn) json_object_set_new(o, "conn", json_integer((json_int_t)log_now.conn));
    if (log_now.client[0]) json_object_set_new(o, "client", json_string(log_now.client));
    if (log_now.principal[0]) json_object_set_new(o, "principal", json_string(log_now.principal));
    if (log_now.api[0]) json_object_set_new(o, "api", json_string(log_now.api));
    if (log_now.has_error) json_object_set_new(o, "error_code", json_integer(log_now.error));
    json_t *m = json_string(msg);
    if (!m) {
        /* not UTF-8 (a client's bytes quoted in it): the line still goes out, those bytes as '?' */
        char ascii[2048];
        size_t i = 0;
        for (; msg[i] && i < sizeof ascii - 1; i++) ascii[i] = (unsigned char)msg[i] < 0x80 ? msg[i] : '?';
        ascii[i] = 0;
        m = json_string(ascii);
    }
    json_object_set_new(o, "message", m);
    char *line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    if (line) {
        fprintf(stderr, "%s\n", line);
        free(line);
    }
}

void log_write_at(log_level lvl, const char *file, const char *fmt, ...) {
    if (lvl > log_threshold) return;
    /* wall clock on purpose: log lines are read against other systems' logs */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[40];
    size_t k = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + k, sizeof stamp - k, ".%03ldZ", ts.tv_nsec / 1000000);
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_fmt == LOG_JSON)
        write_json(lvl, file, stamp, msg);
    else
        fprintf(stderr, "%s %-5s %s\n", stamp, names[lvl], msg);
}
