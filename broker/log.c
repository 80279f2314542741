#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

log_level log_threshold = LOG_INFO;

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

void log_write(log_level lvl, const char *fmt, ...) {
    if (lvl > log_threshold) return;
    /* wall clock on purpose: log lines are read against other systems' logs */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char line[2048];
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ %-5s ", ts.tv_nsec / 1000000, names[lvl]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = m < 0 ? n : (size_t)(n + m) >= sizeof line - 1 ? (int)sizeof line - 2 : n + m;
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stderr);
}
