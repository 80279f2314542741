/*
 * MSK Serverless's throughput quotas: per partition (ingress 5 MiB/s, egress 10 MiB/s) and per
 * cluster (200 and 400 MiB/s). MSK's wire behaviour on a breach is not public, so this is Apache
 * Kafka's (KIP-13, KIP-219): the request is served, its response carries throttle_time_ms, and
 * the broker reads nothing more from that connection for that long (net.c), whether or not the
 * client honours the field.
 *
 * Each account is a leaky bucket: charged the bytes, drained at the quota's rate, and allowed
 * one second of the rate as burst (Kafka measures the rate over 11 one-second samples, so it lets
 * through more at once). Past the burst, the throttle time is how long draining the excess takes
 * at the quota's rate, which is what Kafka's formula gives for a steady rate. A fetch response
 * larger than the burst goes out whole when its accounts are empty (quota_egress_idle), its
 * excess owed as throttle time: else it would be refused on every try.
 */
#include <math.h>

#include "clock.h"
#include "kp_errors.h"
#include "rate.h"
#include "topic.h"

/* Charges one account and keeps in th the longest throttle so far, with the quota that set it. */
static void charge_into(quota_throttle *th, rate_bucket *b, const char *key, int64_t rate, const partition *p,
                        int64_t bytes, int64_t now) {
    int64_t ms = rate_charge(b, rate, bytes, now);
    if (ms <= th->ms) return;
    *th = (quota_throttle){rate_clamp_ms(ms), key, rate, p};
}

void quota_produced(srv *s, partition *p, int64_t bytes, quota_throttle *th) {
    int64_t now = clk_mono_ms();
    if (p)
        charge_into(th, &p->quota_in, "quota.partition.ingress.bytes.per.second",
                    s->cfg->quota_partition_ingress_bytes, p, bytes, now);
    charge_into(th, &s->quota_in, "quota.cluster.ingress.bytes.per.second", s->cfg->quota_cluster_ingress_bytes,
                NULL, bytes, now);
}

void quota_fetched(srv *s, partition *p, int64_t bytes, quota_throttle *th) {
    int64_t now = clk_mono_ms();
    charge_into(th, &p->quota_out, "quota.partition.egress.bytes.per.second", s->cfg->quota_partition_egress_bytes,
                p, bytes, now);
    charge_into(th, &s->quota_out, "quota.cluster.egress.bytes.per.second", s->cfg->quota_cluster_egress_bytes,
                NULL, bytes, now);
}

const char *quota_throttle_why(const quota_throttle *th, char *buf, size_t n) {
    /* every produce and fetch asks, throttled or not: nothing to format for the usual answer */
    if (!th->key) return "no quota";
    if (th->p) {
        snprintf(buf, n, "%s=%lld on %s-%d", th->key, (long long)th->rate, th->p->topic->name, th->p->index);
    } else {
        snprintf(buf, n, "%s=%lld", th->key, (long long)th->rate);
    }
    return buf;
}

/* The account holds nothing once drained to now (or its quota is off). */
static bool drained(const rate_bucket *b, int64_t rate, int64_t now) {
    return rate <= 0 || !b->at_ms || b->level - (double)(now - b->at_ms) * (double)rate / 1000.0 <= 0;
}

bool quota_egress_idle(srv *s, partition *p) {
    int64_t now = clk_mono_ms();
    return drained(&p->quota_out, s->cfg->quota_partition_egress_bytes, now) &&
           drained(&s->quota_out, s->cfg->quota_cluster_egress_bytes, now);
}

void quota_unfetched(srv *s, partition *p, int64_t bytes) {
    if (s->cfg->quota_partition_egress_bytes > 0) p->quota_out.level = fmax(0, p->quota_out.level - (double)bytes);
    if (s->cfg->quota_cluster_egress_bytes > 0) s->quota_out.level = fmax(0, s->quota_out.level - (double)bytes);
}

/*
 * Partition mutations (KIP-599's controller mutation quota; MSK Serverless: 120 partitions
 * created or deleted per 5 minutes). The account drains max.partition.mutations.per.5.minutes
 * over five minutes and may hold that many. As Kafka does, a request is taken while the account
 * is not already over (so one request may take it over), and refused while it is.
 */
#define MUTATION_WINDOW_MS (5 * 60 * 1000)

int16_t quota_mutations(srv *s, int64_t n, bool refusable, int32_t *throttle) {
    int64_t cap = s->cfg->max_partition_mutations_per_5_minutes;
    if (cap <= 0 || n <= 0) return 0;
    rate_bucket *b = &s->quota_mutations;
    int64_t now = clk_mono_ms();
    double rate = (double)cap * 1000.0 / MUTATION_WINDOW_MS; /* per second */
    b->level = fmax(0, b->level - (b->at_ms ? (double)(now - b->at_ms) * rate / 1000.0 : 0));
    b->at_ms = now;
    bool over = b->level >= (double)cap;
    if (!(over && refusable)) b->level += (double)n;
    double excess = b->level - (double)cap;
    if (excess > 0 || over) {
        int64_t ms = (int64_t)ceil(fmax(excess, 1) * 1000.0 / rate);
        if (ms > *throttle) *throttle = rate_clamp_ms(ms);
    }
    return over && refusable ? KERR_THROTTLING_QUOTA_EXCEEDED : 0;
}
