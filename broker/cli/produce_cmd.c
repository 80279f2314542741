/*
 * mskmock produce TOPIC: stdin's lines become records (the key before the separator with -k),
 * headers from -H on every record; batched per partition (a keyed record goes where the Java
 * client's partitioner puts it, others round-robin), one Produce per leader, idempotence off.
 * Prints how many records were acknowledged and their offsets; a refusal exits 1 with Kafka's
 * error name. A partition whose leader moved or is not known yet is retried, after reading the
 * leaders again, until the timeout, as Kafka's producers do for those errors (a topic Apache Kafka
 * has just created answers NOT_LEADER_OR_FOLLOWER for a moment).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_int.h"
#include "clock.h"
#include "format.h"
#include "kp_batch.h"
#include "kp_compress.h"
#include "kp_mem.h"
#include "kp_records.h"

#define CMD "produce"
#define FLUSH_BYTES (512 << 10) /* buffered before a Produce goes out; within every broker's message.max.bytes */

static void usage(FILE *f) {
    fprintf(f, "usage: mskmock produce TOPIC [-k KEY_SEPARATOR] [-H KEY=VALUE]... [--acks -1|0|1]\n"
               "                        [--compression none|gzip|snappy|lz4|zstd] [-p PARTITION]\n"
               "Each line of stdin is a record's value; with -k, the text before the first separator is its key.\n"
               "-H adds a header to every record. Default acks -1 (all), compression none.\n" CLI_COMMON_USAGE);
}

typedef struct part {
    int32_t leader;
    kp_record *recs;
    char **lines;   /* what recs point into */
    int32_t n, cap;
    size_t bytes;
    int64_t first, last; /* offsets acknowledged; first -1: none */
    bool tried;          /* sent in this round of flush() */
} part;

typedef struct producer {
    cli_cluster cl;
    const char *topic;
    int32_t nparts;
    part *parts;
    int16_t acks;
    int codec;
    const uint8_t *headers;
    size_t headers_len;
    size_t buffered;
    int64_t sent, acked;
    bool retry;          /* a partition's leader moved or is not known: read the leaders again */
    char err[1024];
} producer;

/*
 * The Produce partition errors that say nothing was appended and another leader (or a moment)
 * will take the records: Kafka's producers retry them after refreshing metadata. Others, which
 * may have appended (REQUEST_TIMED_OUT) or never will, end the command.
 */
static bool leader_error(int16_t e) {
    return e == KERR_NOT_LEADER_OR_FOLLOWER || e == KERR_LEADER_NOT_AVAILABLE || e == KERR_UNKNOWN_TOPIC_OR_PARTITION;
}

static void add(producer *p, int32_t pi, char *line, const char *key, int32_t key_len, const char *value,
                int32_t value_len) {
    part *t = &p->parts[pi];
    if (t->n == t->cap) {
        XGROW(t->recs, t->cap, t->n + 1, 64);
        t->lines = xrealloc(t->lines, sizeof *t->lines * (size_t)t->cap);
    }
    t->lines[t->n] = line;
    t->recs[t->n++] = (kp_record){.key = (const uint8_t *)key, .key_len = key_len, .value = (const uint8_t *)value,
                                  .value_len = value_len, .headers = p->headers, .headers_len = p->headers_len};
    t->bytes += (size_t)value_len + (key_len > 0 ? (size_t)key_len : 0) + p->headers_len + 16;
    p->buffered += (size_t)value_len + (key_len > 0 ? (size_t)key_len : 0) + p->headers_len + 16;
}

/* One v2 batch of a partition's buffered records, idempotence off (producer id -1). */
static int build_batch(producer *p, part *t, uint8_t **out, size_t *len) {
    uint8_t hdr[KP_BATCH_HEADER_SIZE] = {0};
    int64_t now = clk_now_ms();
    kp_put_i32(hdr + 12, -1); /* partition leader epoch: the broker's to set */
    hdr[16] = 2;              /* magic */
    kp_put_i64(hdr + 27, now);
    kp_put_i64(hdr + 35, now);
    kp_put_i64(hdr + 43, -1); /* producer id */
    kp_put_i16(hdr + 51, -1); /* producer epoch */
    kp_put_i32(hdr + 53, -1); /* base sequence */
    kp_batch orig = {.data = hdr, .size = sizeof hdr, .magic = 2, .base_timestamp = now, .max_timestamp = now,
                     .producer_id = -1, .producer_epoch = -1, .base_sequence = -1, .leader_epoch = -1};
    const char *why;
    if (kp_batch_rebuild(&orig, p->codec, t->recs, t->n, true, -1, out, len, &why) != 0) {
        snprintf(p->err, sizeof p->err, "cannot build a record batch: %s", why);
        return -1;
    }
    return 0;
}

static void clear(part *t) {
    for (int32_t i = 0; i < t->n; i++) free(t->lines[i]);
    t->n = 0;
    t->bytes = 0;
}

/* One Produce to the leader of every partition with records buffered. */
static int flush_leader(producer *p, int32_t leader) {
    char buf[1024];
    const kp_msg *m = &kp_msg_produce;
    kp_arena a = {0};
    int rc = -1;
    cli_conn *c = cli_node(&p->cl, leader, p->err, sizeof p->err);
    int16_t ver = c ? cli_version(c, m, p->err, sizeof p->err) : -1;
    int32_t np = 0;
    kp_produce_partition_produce_data *pd = kp_arena_alloc(&a, sizeof *pd * (size_t)p->nparts);
    uint8_t **batches = kp_arena_alloc(&a, sizeof *batches * (size_t)p->nparts);
    if (ver < 0) goto out;
    for (int32_t i = 0; i < p->nparts; i++) {
        part *t = &p->parts[i];
        if (t->leader != leader || !t->n) continue;
        t->tried = true;
        size_t len;
        if (build_batch(p, t, &batches[np], &len) != 0) goto out;
        pd[np].index = i;
        pd[np].records = (kp_bytes){(const char *)batches[np], (int32_t)len};
        np++;
    }
    kp_produce_request req;
    kp_defaults(m->req, ver, &req);
    kp_produce_topic_produce_data td;
    kp_defaults(&kp_produce_topic_produce_data_schema, ver, &td);
    td.name = kp_str_c(p->topic);
    td.partition_data.n = np;
    td.partition_data.v = pd;
    req.transactional_id = KP_STR_NULL;
    req.acks = p->acks;
    req.timeout_ms = p->cl.o->timeout_ms;
    req.topic_data.n = 1;
    req.topic_data.v = &td;
    kp_produce_response resp;
    if (cli_call(c, m, ver, &req, p->acks ? &resp : NULL, &a, p->err, sizeof p->err) != 0) goto out;
    for (int32_t i = 0; i < np; i++) p->sent += p->parts[pd[i].index].n;
    if (!p->acks) {
        for (int32_t i = 0; i < np; i++) clear(&p->parts[pd[i].index]);
        rc = 0;
        goto out;
    }
    for (int32_t i = 0; i < resp.responses.n; i++)
        for (int32_t j = 0; j < resp.responses.v[i].partition_responses.n; j++) {
            const kp_produce_partition_produce_response *r = &resp.responses.v[i].partition_responses.v[j];
            part *t = r->index >= 0 && r->index < p->nparts ? &p->parts[r->index] : NULL;
            if (!t || !t->n) continue;
            if (r->error_code) {
                snprintf(p->err, sizeof p->err, "%s partition %d: %s", p->topic, r->index,
                         cli_err_text(r->error_code, r->error_message, buf, sizeof buf));
                if (!leader_error(r->error_code)) goto out;
                p->retry = true; /* kept buffered for the next round */
                continue;
            }
            if (t->first < 0) t->first = r->base_offset;
            t->last = r->base_offset + t->n - 1;
            p->acked += t->n;
            clear(t);
        }
    for (int32_t i = 0; i < np && !p->retry; i++)
        if (p->parts[pd[i].index].n) {
            snprintf(p->err, sizeof p->err, "%s: Produce answered nothing for %s partition %d", c->addr, p->topic,
                     pd[i].index);
            goto out;
        }
    rc = 0;
out:
    for (int32_t i = 0; i < np; i++) free(batches[i]);
    kp_arena_free(&a);
    return rc;
}

static int load_leaders(producer *p);

/* Every buffered record acknowledged, retrying partitions whose leader moved until the timeout. */
static int flush(producer *p) {
    int64_t deadline = clk_mono_ms() + p->cl.o->timeout_ms;
    long delay_ms = 50;
    for (;;) {
        p->retry = false;
        for (int32_t i = 0; i < p->nparts; i++) p->parts[i].tried = false;
        for (int32_t i = 0; i < p->nparts; i++)
            if (p->parts[i].n && !p->parts[i].tried) {
                if (p->parts[i].leader < 0) { /* no leader yet: after reading the leaders again */
                    snprintf(p->err, sizeof p->err, "%s partition %d: %s", p->topic, i, kp_err_name(KERR_LEADER_NOT_AVAILABLE));
                    p->retry = true;
                } else if (flush_leader(p, p->parts[i].leader) != 0) {
                    return -1;
                }
            }
        if (!p->retry) break;
        if (clk_mono_ms() + delay_ms > deadline) return -1; /* p->err names the last refusal */
        nanosleep(&(struct timespec){delay_ms / 1000, (delay_ms % 1000) * 1000000L}, NULL);
        delay_ms = delay_ms * 2 > 1000 ? 1000 : delay_ms * 2;
        if (load_leaders(p) != 0) return -1;
    }
    p->err[0] = '\0';
    p->buffered = 0;
    return 0;
}

static void summary(const producer *p) {
    if (!p->acks) {
        printf("sent %" PRId64 " record(s) to %s with acks=0: none acknowledged\n", p->sent, p->topic);
        return;
    }
    printf("acknowledged %" PRId64 " record(s) to %s", p->acked, p->topic);
    const char *sep = ": ";
    for (int32_t i = 0; i < p->nparts; i++)
        if (p->parts[i].first >= 0) {
            printf("%spartition %d offsets %" PRId64 "-%" PRId64, sep, i, p->parts[i].first, p->parts[i].last);
            sep = ", ";
        }
    printf("\n");
}

/* The topic's partitions and leaders (only the leaders once known: the partitions stay); -1 with p->err. */
static int load_leaders(producer *p) {
    char buf[512];
    kp_arena a = {0};
    kp_metadata_response md;
    int rc = -1;
    if (cli_metadata(&p->cl, p->topic, &md, &a, p->err, sizeof p->err) != 0) goto out;
    if (md.topics.n != 1) {
        snprintf(p->err, sizeof p->err, "%s: Metadata answered %d topics for 1", p->topic, md.topics.n);
        goto out;
    }
    const kp_metadata_response_topic *t = &md.topics.v[0];
    if (t->error_code || t->partitions.n <= 0) {
        snprintf(p->err, sizeof p->err, "%s: %s", p->topic,
                 cli_err_text(t->error_code ? t->error_code : KERR_UNKNOWN_TOPIC_OR_PARTITION, KP_STR_NULL, buf, sizeof buf));
        goto out;
    }
    if (!p->parts) {
        p->nparts = t->partitions.n;
        p->parts = xcalloc((size_t)p->nparts, sizeof *p->parts);
        for (int32_t i = 0; i < p->nparts; i++) p->parts[i].leader = -1, p->parts[i].first = -1;
    }
    for (int32_t i = 0; i < t->partitions.n; i++) {
        const kp_metadata_response_partition *mp = &t->partitions.v[i];
        if (mp->partition_index >= 0 && mp->partition_index < p->nparts) p->parts[mp->partition_index].leader = mp->leader_id;
    }
    rc = 0;
out:
    kp_arena_free(&a);
    return rc;
}

static int codec_of(const char *s) {
    for (int c = KP_CODEC_NONE; c <= KP_CODEC_ZSTD; c++)
        if (!strcmp(s, kp_codec_name(c))) return c;
    return -1;
}

/* -H k=v as a record's headers section: a count, then varint-length key and value. */
static uint8_t *encode_headers(char **h, int n, size_t *len) {
    kp_writer w;
    kp_writer_init(&w, 64);
    kp_wr_varint(&w, n);
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(h[i], '=');
        kp_wr_varint(&w, (int32_t)(eq - h[i]));
        kp_wr_raw(&w, h[i], (size_t)(eq - h[i]));
        kp_wr_varint(&w, (int32_t)strlen(eq + 1));
        kp_wr_raw(&w, eq + 1, strlen(eq + 1));
    }
    *len = w.len;
    return w.buf;
}

int cli_produce(int argc, char **argv) {
    static producer p;
    cli_opts o;
    cli_opts_default(&o);
    const char *sep = NULL;
    long partition = -1;
    char **hdrs = xcalloc((size_t)argc + 1, sizeof *hdrs);
    int nh = 0, rc = 2;
    p.acks = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int k = cli_common_flag(&o, argc, argv, &i);
        if (k < 0) {
            rc = cli_usage_error(CMD, "a bad or missing value after ", a);
            goto out;
        }
        if (k) continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-k") || !strcmp(a, "--key-separator")) {
            if (!v || !*v) {
                rc = cli_usage_error(CMD, "-k needs a separator", NULL);
                goto out;
            }
            sep = v;
        } else if (!strcmp(a, "-H") || !strcmp(a, "--header")) {
            if (!v || !strchr(v, '=') || v[0] == '=') {
                rc = cli_usage_error(CMD, "-H needs KEY=VALUE", NULL);
                goto out;
            }
            hdrs[nh++] = argv[i + 1];
        } else if (!strcmp(a, "--acks")) {
            if (!v || (strcmp(v, "-1") && strcmp(v, "0") && strcmp(v, "1") && strcmp(v, "all"))) {
                rc = cli_usage_error(CMD, "--acks takes -1 (all), 0 or 1", NULL);
                goto out;
            }
            p.acks = (int16_t)(!strcmp(v, "all") ? -1 : atoi(v));
        } else if (!strcmp(a, "--compression") || !strcmp(a, "-z")) {
            if (!v || (p.codec = codec_of(v)) < 0) {
                rc = cli_usage_error(CMD, "--compression takes none, gzip, snappy, lz4 or zstd", NULL);
                goto out;
            }
        } else if (!strcmp(a, "-p") || !strcmp(a, "--partition")) {
            char *end;
            partition = v ? strtol(v, &end, 10) : -1;
            if (!v || *end || !*v || partition < 0 || partition > INT32_MAX) {
                rc = cli_usage_error(CMD, "-p needs a partition number", NULL);
                goto out;
            }
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error(CMD, "unknown flag ", a);
            goto out;
        } else if (!p.topic) {
            p.topic = a;
            continue;
        } else {
            rc = cli_usage_error(CMD, "unexpected argument ", a);
            goto out;
        }
        i++;
    }
    if (!p.topic) {
        usage(stderr);
        goto out;
    }
    uint8_t *headers = nh ? encode_headers(hdrs, nh, &p.headers_len) : NULL;
    p.headers = headers;
    rc = 1;
    if (cli_cluster_open(&p.cl, &o, p.err, sizeof p.err) != 0) {
        cli_fail(CMD, p.err);
        free(headers);
        goto out;
    }
    if (load_leaders(&p) != 0) goto fail;
    if (partition >= p.nparts) {
        snprintf(p.err, sizeof p.err, "%s partition %ld: %s (the topic has %d partitions)", p.topic, partition,
                 kp_err_name(KERR_UNKNOWN_TOPIC_OR_PARTITION), p.nparts);
        goto fail;
    }
    for (int32_t i = 0; i < p.nparts; i++)
        if ((partition < 0 || i == partition) && p.parts[i].leader < 0) {
            snprintf(p.err, sizeof p.err, "%s partition %d: %s", p.topic, i, kp_err_name(KERR_LEADER_NOT_AVAILABLE));
            goto fail;
        }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint32_t rr = 0;
    size_t seplen = sep ? strlen(sep) : 0;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (len > INT32_MAX / 2) continue;
        const char *key = NULL, *value = line;
        int32_t key_len = -1, value_len = (int32_t)len;
        if (sep) {
            const char *s = strstr(line, sep);
            if (s) {
                key = line;
                key_len = (int32_t)(s - line);
                value = s + seplen;
                value_len = (int32_t)(len - key_len - (ssize_t)seplen);
            }
        }
        int32_t pi = partition >= 0 ? (int32_t)partition
                     : key ? cli_key_partition((const uint8_t *)key, (size_t)key_len, p.nparts)
                           : (int32_t)(rr++ % (uint32_t)p.nparts);
        add(&p, pi, line, key, key_len, value, value_len);
        line = NULL; /* the record owns it now */
        cap = 0;
        if (p.buffered >= FLUSH_BYTES && flush(&p) != 0) break;
    }
    free(line);
    if (!*p.err && flush(&p) == 0) rc = 0;
fail:
    if (p.acked || p.sent) summary(&p);
    if (rc) cli_fail(CMD, p.err);
    for (int32_t i = 0; p.parts && i < p.nparts; i++) {
        clear(&p.parts[i]);
        free(p.parts[i].recs);
        free(p.parts[i].lines);
    }
    free(p.parts);
    free(headers);
    cli_cluster_close(&p.cl);
out:
    free(hdrs);
    return rc;
}
