/*
 * The storage tests' fixture: a fresh database file in its own temp dir,
 * opened through stor_open, removed with its WAL and shared-memory files at
 * teardown. Header-only: each test program includes it once.
 */
#ifndef STOR_FIXTURE_H
#define STOR_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "stor.h"

typedef struct fx {
    char dir[64];
    char path[128];
    stor *s;
    stor_sync sync;
    int64_t topic; /* for fixtures that create one */
} fx;

static void fx_open(fx *f) {
    char err[512] = "";
    if (stor_open(&f->s, f->path, f->sync, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
}

static void fx_reopen(fx *f) {
    stor_close(f->s);
    f->s = NULL;
    fx_open(f);
}

/* A fixture with its store open, in /tmp/<name>.<random>; NULL if the temp dir cannot be made. */
static fx *fx_new(const char *name, stor_sync sync) {
    fx *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    snprintf(f->dir, sizeof f->dir, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(f->dir)) {
        free(f);
        return NULL;
    }
    snprintf(f->path, sizeof f->path, "%s/mskmock.db", f->dir);
    f->sync = sync;
    fx_open(f);
    return f;
}

/* fx_new with a topic "t" of the given partition count, committed. */
static inline fx *fx_new_with_topic(const char *name, stor_sync sync, int32_t partitions) {
    fx *f = fx_new(name, sync);
    if (!f) return NULL;
    stor_topic t = {.name = "t", .partitions = partitions, .created_ms = 1};
    if (stor_topic_create(f->s, &t) != 0 || stor_commit(f->s) != 0) fail_msg("topic: %s", stor_errmsg(f->s));
    f->topic = t.id;
    return f;
}

static int fx_teardown(void **state) {
    fx *f = *state;
    stor_close(f->s);
    char p[160];
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", f->path, suffix[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

#endif
