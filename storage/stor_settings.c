/* Settings kept with the data rather than in the config (schema migration 3). */
#include "stor_int.h"

#include <string.h>

int stor_setting_get(stor *s, const char *key, char *buf, size_t n) {
    sqlite3_stmt *st = stor_stmt(s, STOR_SETTING_GET);
    if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC)) return stor_fail(s, "bind setting");
    int rc = sqlite3_step(st), ret = 0;
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        size_t len = v ? strlen(v) : 0;
        if (!v || len >= n) ret = stor_failf(s, "setting %s: damaged or longer than %zu bytes", key, n - 1);
        else memcpy(buf, v, len + 1), ret = 1;
    } else if (rc != SQLITE_DONE) {
        ret = stor_fail(s, "read setting");
    }
    sqlite3_reset(st);
    return ret;
}

int stor_setting_put(stor *s, const char *key, const char *value) {
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_SETTING_PUT);
    if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC))
        return stor_fail(s, "bind setting");
    return stor_step_done(s, st, "write setting");
}
