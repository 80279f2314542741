/*
 * Configuration text: every line of the input as key=value (a properties file's syntax),
 * applied with cfg_set after the defaults of a profile the first byte picks, then the
 * cross-key checks (cfg_finish). Nothing may crash, and a refusal must say why.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 8192) return 0;
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    config c = {0};
    cfg_defaults(&c, (cfg_profile)(data[0] % 3));
    char err[512];
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = 0;
        err[0] = 0;
        if (cfg_set(&c, line, eq + 1, err, sizeof err) != 0 && !err[0]) abort();
    }
    err[0] = 0;
    if (cfg_finish(&c, err, sizeof err) != 0 && !err[0]) abort();
    cfg_free(&c);
    free(text);
    return 0;
}
