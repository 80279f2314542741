/*
 * libsnappy loaded with dlopen at the first snappy batch instead of linked: libsnappy is C++, so
 * linking it maps and relocates libstdc++ and libgcc_s at every start (0.9 MiB of the idle
 * broker's resident memory, issue 37), though most clients never send snappy. The one global
 * of protocol/: the library, loaded once (pthread_once, since record passes run on libuv's
 * threadpool too) and kept for the life of the process.
 */
#include "kp_snappy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The SONAME snappy has kept since 1.0 (Debian's libsnappy1v5), then the library CMake found. */
#ifndef KP_SNAPPY_LIBRARY
#define KP_SNAPPY_LIBRARY "libsnappy.so"
#endif
static const char *const candidates[] = {"libsnappy.so.1", KP_SNAPPY_LIBRARY};

/* The prototypes above must match snappy-c.h's: checked without referring to the symbols. */
#define SAME_TYPE(fn, field) _Static_assert(_Generic(&fn, __typeof__(((kp_snappy_api *)0)->field): 1, default: 0), #fn " has changed")
SAME_TYPE(snappy_compress, compress);
SAME_TYPE(snappy_uncompress, uncompress);
SAME_TYPE(snappy_max_compressed_length, max_compressed_length);
SAME_TYPE(snappy_uncompressed_length, uncompressed_length);
SAME_TYPE(snappy_validate_compressed_buffer, validate_compressed_buffer);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static kp_snappy_api api;
static const kp_snappy_api *loaded;
static char failure[768];

static void load(void) {
    size_t len = (size_t)snprintf(failure, sizeof failure, "cannot load libsnappy: ");
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        void *h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = NULL;
        if (h) {
            *(void **)&api.compress = dlsym(h, "snappy_compress");
            *(void **)&api.uncompress = dlsym(h, "snappy_uncompress");
            *(void **)&api.max_compressed_length = dlsym(h, "snappy_max_compressed_length");
            *(void **)&api.uncompressed_length = dlsym(h, "snappy_uncompressed_length");
            *(void **)&api.validate_compressed_buffer = dlsym(h, "snappy_validate_compressed_buffer");
            if (api.compress && api.uncompress && api.max_compressed_length && api.uncompressed_length &&
                api.validate_compressed_buffer) {
                loaded = &api;
                return;
            }
            e = "it lacks snappy's C functions";
            dlclose(h);
        } else {
            e = dlerror();
        }
        int w = snprintf(failure + len, sizeof failure - len, "%s%s", i ? "; " : "", e ? e : candidates[i]);
        if (w > 0) len += (size_t)w < sizeof failure - len ? (size_t)w : sizeof failure - len - 1;
    }
    char tail[] = " (snappy needs libsnappy installed: Debian's libsnappy1v5)";
    if (len + sizeof tail <= sizeof failure) snprintf(failure + len, sizeof failure - len, "%s", tail);
}

const kp_snappy_api *kp_snappy(const char **why) {
    pthread_once(&once, load);
    if (!loaded && why) *why = failure;
    return loaded;
}
