/*
 * kp_first_error: the first non-zero error code of a response struct, for counting answers by
 * outcome (the broker's per-API request counters). Kafka names every error field "error_code"
 * or "<something>_error_code", so the schema alone says where to look; a plan, built once per
 * response schema, prunes it to its error fields and the structs and arrays that lead to one.
 * A produce answer's partition then has one field to look at instead of eight, arrays with no
 * error below them (record_errors) are not entered, and the walk stops at the first non-zero
 * code. Lives beside kp_set_errors (kp_mirror.c), which writes error fields the same way.
 */
#include "kp_mirror.h"
#include "kp_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PLAN_ERROR, PLAN_STRUCT, PLAN_ARRAY };

typedef struct plan_field {
    uint16_t off;
    uint8_t kind;
    int8_t vmin, vmax;
    bool tagged;                  /* exists in flexible versions only */
    uint16_t elem_size;           /* PLAN_ARRAY: of one element */
    const struct kp_error_plan *sub; /* PLAN_STRUCT, PLAN_ARRAY */
} plan_field;

struct kp_error_plan {
    struct kp_error_plan *next_alloc; /* every node below the root, freed with it */
    int n;
    plan_field f[];
};

static bool is_error_field(const char *name) {
    size_t n = strlen(name);
    return n >= 10 && !memcmp(name + n - 10, "error_code", 10);
}

/* NULL when nothing below sc is an error field. Nodes go on *all, for kp_error_plan_free. */
static kp_error_plan *plan_of(const kp_schema *sc, kp_error_plan **all) {
    kp_error_plan *p = xmalloc(sizeof *p + sizeof(plan_field) * sc->nfields);
    p->n = 0;
    for (uint16_t i = 0; i < sc->nfields; i++) {
        const kp_field *f = &sc->fields[i];
        plan_field pf = {.off = f->off, .vmin = f->vmin, .vmax = f->vmax, .tagged = f->tag >= 0};
        if (f->type == KP_I16 && is_error_field(f->name)) {
            pf.kind = PLAN_ERROR;
        } else if (f->type == KP_STRUCT || (f->type == KP_ARRAY && f->elem == KP_STRUCT)) {
            pf.sub = plan_of(f->sub, all);
            if (!pf.sub) continue;
            pf.kind = f->type == KP_STRUCT ? PLAN_STRUCT : PLAN_ARRAY;
            pf.elem_size = f->sub->size;
        } else {
            continue;
        }
        p->f[p->n++] = pf;
    }
    if (!p->n) {
        free(p);
        return NULL;
    }
    p->next_alloc = *all;
    *all = p;
    return p;
}

kp_error_plan *kp_error_plan_new(const kp_schema *resp) {
    kp_error_plan *all = NULL;
    kp_error_plan *root = plan_of(resp, &all);
    /* the root is the last node made: its next_alloc chain holds every other one */
    return root;
}

void kp_error_plan_free(kp_error_plan *p) {
    while (p) {
        kp_error_plan *next = p->next_alloc;
        free(p);
        p = next;
    }
}

int16_t kp_first_error(const kp_error_plan *plan, int ver, bool flex, const void *resp) {
    if (!plan) return 0;
    const char *p = resp;
    for (int i = 0; i < plan->n; i++) {
        const plan_field *f = &plan->f[i];
        if (ver < f->vmin || ver > f->vmax || (f->tagged && !flex)) continue;
        const char *v = p + f->off;
        int16_t e = 0;
        if (f->kind == PLAN_ERROR) {
            memcpy(&e, v, sizeof e);
        } else if (f->kind == PLAN_STRUCT) {
            e = kp_first_error(f->sub, ver, flex, v);
        } else {
            const kp_arr *a = (const kp_arr *)(const void *)v;
            for (int32_t j = 0; j < a->n && !e; j++)
                e = kp_first_error(f->sub, ver, flex, (const char *)a->v + (size_t)j * f->elem_size);
        }
        if (e) return e;
    }
    return 0;
}
