#!/usr/bin/env python3
"""Medians of mskbench runs, side by side: bench/summarize.py results.jsonl

Reads the JSON lines that bench/run.sh collected (one per run, with a "label"
naming the target) and prints a Markdown table of the median of each figure,
with the smallest and largest run in brackets when the runs disagree.
"""
import json
import statistics
import sys

ROWS = [
    # (key, title, scale, format)
    ("startup_ms", "startup to first accepted connection (ms)", 1, "{:.2f}"),
    ("self_ready_ms", "  broker's own 'ready in' (ms)", 1, "{:.1f}"),
    ("idle_rss_kib", "idle RSS after start (MiB)", 1 / 1024, "{:.1f}"),
    ("idle_rss_topics_kib", "idle RSS after creating 3 topics (MiB)", 1 / 1024, "{:.1f}"),
    ("produce_p1_msgs_s", "produce, 1 partition (msg/s)", 1, "{:,.0f}"),
    ("produce_p1_mb_s", "produce, 1 partition (MB/s)", 1, "{:.0f}"),
    ("produce_p8_msgs_s", "produce, 8 partitions (msg/s)", 1, "{:,.0f}"),
    ("produce_p8_mb_s", "produce, 8 partitions (MB/s)", 1, "{:.0f}"),
    ("consume_p1_msgs_s", "consume, 1 partition (msg/s)", 1, "{:,.0f}"),
    ("consume_p1_steady_msgs_s", "  first record to last, 1 partition (msg/s)", 1, "{:,.0f}"),
    ("consume_p1_first_ms", "  time to first record, 1 partition (ms)", 1, "{:.1f}"),
    ("consume_p1_held", "  records held and read back, 1 partition", 1, "{:,.0f}"),
    ("consume_p8_msgs_s", "consume, 8 partitions (msg/s)", 1, "{:,.0f}"),
    ("consume_p8_steady_msgs_s", "  first record to last, 8 partitions (msg/s)", 1, "{:,.0f}"),
    ("consume_p8_first_ms", "  time to first record, 8 partitions (ms)", 1, "{:.1f}"),
    ("consume_p8_held", "  records held and read back, 8 partitions", 1, "{:,.0f}"),
    ("lat_p50_ms", "produce-to-consume latency p50 (ms)", 1, "{:.2f}"),
    ("lat_p99_ms", "produce-to-consume latency p99 (ms)", 1, "{:.2f}"),
    ("lat_max_ms", "produce-to-consume latency max (ms)", 1, "{:.2f}"),
    ("produce_p1_broker_peak_rss_kib", "peak RSS, produce 1 partition (MiB)", 1 / 1024, "{:.1f}"),
    ("produce_p8_broker_peak_rss_kib", "peak RSS, produce 8 partitions (MiB)", 1 / 1024, "{:.1f}"),
    ("peak_rss_kib", "peak RSS under load, whole run (MiB)", 1 / 1024, "{:.1f}"),
    ("rss_after_load_kib", "RSS after the load (MiB)", 1 / 1024, "{:.1f}"),
    ("client_peak_rss_growth_kib", "clients' peak RSS growth (MiB)", 1 / 1024, "{:.1f}"),
    ("produce_p1_broker_cpu_s", "broker CPU, produce 1 partition (s)", 1, "{:.2f}"),
    ("produce_p8_broker_cpu_s", "broker CPU, produce 8 partitions (s)", 1, "{:.2f}"),
    ("consume_p8_broker_cpu_s", "broker CPU, consume 8 partitions (s)", 1, "{:.2f}"),
    ("produce_p1_broker_write_bytes", "broker writes to storage, produce 1 partition (MB)", 1e-6, "{:.0f}"),
    ("lat_broker_write_bytes", "broker writes to storage, latency phase (MB)", 1e-6, "{:.0f}"),
    ("produce_p1_client_cpu_s", "client CPU, produce 1 partition (s)", 1, "{:.2f}"),
    ("other_cpu_s", "other processes' CPU during throughput phases (s)", 1, "{:.2f}"),
    ("stop_ms", "stop (ms)", 1, "{:.1f}"),
]


GROUP_ROWS = [
    ("rebal_n3_ms", "rebalance, 3 consumers: last subscribe() to all assigned (ms)", 1, "{:,.0f}"),
    ("rebal_n3_from_first_ms", "  from the first subscribe() (ms)", 1, "{:,.0f}"),
    ("rebal_n3_assigns", "  assign callbacks, all consumers", 1, "{:.0f}"),
    ("rebal_n30_ms", "rebalance, 30 consumers: last subscribe() to all assigned (ms)", 1, "{:,.0f}"),
    ("rebal_n30_from_first_ms", "  from the first subscribe() (ms)", 1, "{:,.0f}"),
    ("rebal_n30_assigns", "  assign callbacks, all consumers", 1, "{:.0f}"),
    ("rebal_n30_broker_cpu_s", "  broker CPU (s)", 1, "{:.2f}"),
    ("scale_stable_ms", "500 groups x 3: first JoinGroup to all Stable (ms)", 1, "{:,.1f}"),
    ("scale_group_p50_ms", "  per group, p50 (ms)", 1, "{:,.1f}"),
    ("scale_group_p99_ms", "  per group, p99 (ms)", 1, "{:,.1f}"),
    ("scale_multi_gen_groups", "  groups Stable only after generation 1", 1, "{:.0f}"),
    ("scale_joins", "  JoinGroup requests", 1, "{:.0f}"),
    ("scale_broker_cpu_s", "  broker CPU (s)", 1, "{:.2f}"),
    ("scale_verified", "  DescribeGroups: Stable with 3 members", 1, "{:.0f}"),
    ("scale_connect_ms", "  opening the 1500 connections (ms)", 1, "{:.1f}"),
    ("scale_rss_before_kib", "  broker RSS before (MiB)", 1 / 1024, "{:.1f}"),
    ("scale_rss_conns_kib", "  broker RSS, 1500 idle connections (MiB)", 1 / 1024, "{:.1f}"),
    ("scale_rss_stable_kib", "  broker RSS, all groups Stable (MiB)", 1 / 1024, "{:.1f}"),
    ("other_cpu_s", "other processes' CPU during the run (s)", 1, "{:.2f}"),
    ("wall_s", "run wall time (s)", 1, "{:.1f}"),
]

AUTH_CONFIGS = [
    ("plain_apiversions", "no auth, connect + ApiVersions, plaintext"),
    ("tls_apiversions", "no auth, connect + TLS + ApiVersions"),
    ("oauth_sasl", "OAUTHBEARER, no TLS"),
    ("iam_sasl", "AWS_MSK_IAM, no TLS"),
    ("oauth_tls", "OAUTHBEARER, TLS"),
    ("iam_tls", "AWS_MSK_IAM, TLS"),
]
AUTH_ROWS = []
for _k, _t in AUTH_CONFIGS:
    AUTH_ROWS += [
        (f"{_k}_per_core_s", f"{_t}: per broker core (/s)", 1, "{:,.0f}"),
        (f"{_k}_broker_us", f"  broker CPU each (us)", 1, "{:.1f}"),
        (f"{_k}_rate_s", f"  reached, {{conns}} in flight (/s)", 1, "{:,.0f}"),
        (f"{_k}_broker_busy", f"  broker busy (share of a core)", 1, "{:.2f}"),
        (f"{_k}_lat_p50_ms", f"  one at a time, p50 (ms)", 1, "{:.3f}"),
        (f"{_k}_lat_p99_ms", f"  one at a time, p99 (ms)", 1, "{:.3f}"),
        (f"{_k}_other_cpu_s", f"  other processes' CPU (s)", 1, "{:.2f}"),
    ]


def rows_for(runs):
    benches = {r.get("bench") for rs in runs.values() for r in rs}
    if benches == {"mskbench-groups"}:
        return GROUP_ROWS
    if benches == {"mskbench-auth"}:
        conns = {r.get("auth_conns") for rs in runs.values() for r in rs}
        c = conns.pop() if len(conns) == 1 else "?"
        return [(k, t.replace("{conns}", str(c)), sc, f) for k, t, sc, f in AUTH_ROWS]
    return ROWS


def main():
    runs = {}
    order = []
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        label = r.get("label", r.get("target"))
        if label not in runs:
            runs[label] = []
            order.append(label)
        runs[label].append(r)

    print("| figure | " + " | ".join(f"{l} ({len(runs[l])} runs)" for l in order) + " |")
    print("|---|" + "---|" * len(order))
    for key, title, scale, fmt in rows_for(runs):
        cells = []
        for l in order:
            vals = [r[key] * scale for r in runs[l] if isinstance(r.get(key), (int, float)) and r[key] >= 0]
            if not vals:
                cells.append("-")
                continue
            med = fmt.format(statistics.median(vals))
            lo, hi = fmt.format(min(vals)), fmt.format(max(vals))
            cells.append(med if lo == hi else f"{med} [{lo}–{hi}]")
        if all(c == "-" for c in cells):
            continue
        print(f"| {title} | " + " | ".join(cells) + " |")

    problems = []
    for l in order:
        for r in runs[l]:
            bad = [k for k in r if k.endswith(("_failed", "_dups", "_bad", "_conflicts", "_errors")) and r[k]]
            errs = [f"{k}: {r[k]}" for k in r if k.endswith("error") and r[k]]
            if r.get("exit") or bad or errs:
                problems.append(f"- {l} run {r.get('run')}: exit {r.get('exit')} {' '.join(bad)} {'; '.join(errs)}")
    if problems:
        print("\nRuns with problems:")
        print("\n".join(problems))


if __name__ == "__main__":
    main()
