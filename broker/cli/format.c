/* kcat-style -f rendering of a consumed record (format.h). */
#include "format.h"

#include <inttypes.h>

#include "kp.h"

static void put_bytes(FILE *out, const uint8_t *p, int32_t len) {
    if (p && len > 0) fwrite(p, 1, (size_t)len, out);
}

/* k=v,k=v; a section that does not parse prints as far as it does. */
static void put_headers(FILE *out, const uint8_t *p, size_t len) {
    if (!p || !len) return;
    kp_reader r;
    kp_reader_init(&r, p, len);
    int32_t count, kl, vl;
    const uint8_t *k, *v;
    if (!kp_rd_varint(&r, &count)) return;
    for (int32_t i = 0; i < count; i++) {
        if (!kp_rd_varint(&r, &kl) || kl < 0 || !kp_rd_raw(&r, (size_t)kl, &k) || !kp_rd_varint(&r, &vl)) return;
        v = NULL;
        if (vl >= 0 && !kp_rd_raw(&r, (size_t)vl, &v)) return;
        fprintf(out, "%s%.*s=", i ? "," : "", (int)kl, (const char *)k);
        put_bytes(out, v, vl);
    }
}

void cli_format(FILE *out, const char *fmt, const cli_rec *r) {
    for (const char *f = fmt; *f; f++) {
        if (*f == '\\' && f[1]) {
            char c = f[1];
            char e = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == '\\' ? '\\' : 0;
            if (e) {
                fputc(e, out);
                f++;
                continue;
            }
        } else if (*f == '%' && f[1]) {
            f++;
            switch (*f) {
            case 't': fputs(r->topic ? r->topic : "", out); continue;
            case 'p': fprintf(out, "%" PRId32, r->partition); continue;
            case 'o': fprintf(out, "%" PRId64, r->offset); continue;
            case 'T': fprintf(out, "%" PRId64, r->timestamp); continue;
            case 'k': put_bytes(out, r->key, r->key_len); continue;
            case 'v': put_bytes(out, r->value, r->value_len); continue;
            case 'K': fprintf(out, "%" PRId32, r->key ? r->key_len : -1); continue;
            case 'S': fprintf(out, "%" PRId32, r->value ? r->value_len : -1); continue;
            case 'h': put_headers(out, r->headers, r->headers_len); continue;
            case '%': fputc('%', out); continue;
            default: fputc('%', out); break; /* unknown: printed as it is */
            }
        }
        fputc(*f, out);
    }
}
