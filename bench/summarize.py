#!/usr/bin/env python3
"""Medians of mskbench runs, side by side: bench/summarize.py results.jsonl

Reads the JSON lines that bench/run.sh collected (one per run, with a "label"
naming the target) and prints a Markdown table of the median of each figure,
with the smallest and largest run in brackets when the runs disagree.

    bench/summarize.py --issue37 DIR

reads a results directory of `MODE=issue37 bench/run.sh` instead and prints every goal of issue 37
(performance, round two) with its figure per target, the ratio the goal is stated in and whether
it is met, then the machine's load per phase, then the
throughput phase's medians as above. Each phase's file is optional (PHASES chooses them):
results.jsonl (mskbench), txn.jsonl (bench/txn_cost.py), memory.jsonl (bench/scaling.py),
compaction.jsonl (bench/compaction.py), request.jsonl (bench/request_cost.py --json),
phases.jsonl (run.sh: each phase's start, end and load).
"""
import json
import os
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
    ("produce_p1_broker_cpu_s", "broker CPU, produce 1 partition (s)", 1, "{:.3f}"),
    ("produce_p8_broker_cpu_s", "broker CPU, produce 8 partitions (s)", 1, "{:.3f}"),
    ("consume_p8_broker_cpu_s", "broker CPU, consume 8 partitions (s)", 1, "{:.3f}"),
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


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def stats(vals):
    """(median, min, max) of the numbers among vals, or None."""
    vals = [v for v in vals if isinstance(v, (int, float)) and v == v]
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals)


def cell(st, fmt):
    if st is None:
        return "-"
    med, lo, hi = (fmt.format(v) for v in st)
    return med if lo == hi else f"{med} [{lo}–{hi}]"


def ratio(a, b):
    if a is None or b is None or not b[0]:
        return None
    return a[0] / b[0]


# The issue's outside run (its first table): what "no regression" in consume throughput, start-up
# and stop is measured against, mskmock default at 1 / 8 partitions. Another machine and day: a
# ratio against it says more about the machine than about mskmock when it is near 1.
ISSUE_CONSUME_P1, ISSUE_CONSUME_P8 = 995e3, 988e3


def issue37(d):
    tp = read_jsonl(os.path.join(d, "results.jsonl"))
    txn = read_jsonl(os.path.join(d, "txn.jsonl"))
    mem = read_jsonl(os.path.join(d, "memory.jsonl"))
    comp = read_jsonl(os.path.join(d, "compaction.jsonl"))
    req = read_jsonl(os.path.join(d, "request.jsonl"))
    phases = read_jsonl(os.path.join(d, "phases.jsonl"))

    def tpv(label, key, scale=1.0):
        return stats([r[key] * scale / (r.get("messages") or 1) if scale != 1.0 else r[key]
                      for r in tp if r.get("label") == label and isinstance(r.get(key), (int, float))
                      and r[key] >= 0 and not r.get("exit")])

    def per100k(label, key):
        return tpv(label, key, 1e5)

    def rowsv(rows, label, key, **match):
        out = []
        for r in rows:
            if r.get("label") != label or any(r.get(k) != v for k, v in match.items()):
                continue
            v = r
            for part in key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            out.append(v)
        return stats(out)

    cols = ["mskmock default", "mskmock `off`", "librdkafka mock", "Kafka 4.4 warm"]
    tp_labels = ["mskmock-disk", "mskmock-disk-off", "mock-isolated", "kafka"]
    lines = []

    def verdict(ok):
        return "-" if ok is None else ("**met**" if ok else "**not met**")

    def row(goal, figure, cells, how, ok):
        lines.append(f"| {goal} | {figure} | " + " | ".join(cells) + f" | {how} | {verdict(ok)} |")

    def xfmt(r):
        return "-" if r is None else f"{r:.2f}×"

    # goal 1: broker CPU per 100k produced, default vs the mock (<= 1.5x) and vs warm Kafka (<= 1/3)
    for p in ("1", "8"):
        v = [per100k(l, f"produce_p{p}_broker_cpu_s") for l in tp_labels]
        rm, rk = ratio(v[0], v[2]), ratio(v[0], v[3])
        ok = None if rm is None and rk is None else (rm is None or rm <= 1.5) and (rk is None or rk <= 1 / 3)
        row("1", f"broker CPU per 100k produced, {p} partition{'s' if p != '1' else ''} (s)",
            [cell(x, "{:.4f}") for x in v], f"{xfmt(rm)} mock (≤ 1.5×); {xfmt(rk)} Kafka (≤ 0.33×)", ok)
    # goal 2: transactions, default vs the mock
    tl = ["default", "off", "mock", None]
    v = [rowsv(txn, l, "broker_cpu_us_per_txn") if l else None for l in tl]
    r = ratio(v[0], v[2])
    row("2", "broker CPU per transaction (µs)", [cell(x, "{:.0f}") for x in v],
        f"{xfmt(r)} mock (≤ 1.5×)", None if r is None else r <= 1.5)
    v = [rowsv(txn, l, "txn_per_s") if l else None for l in tl]
    r = ratio(v[0], v[2])
    row("2", "transactions/s (10 records over 3 partitions)", [cell(x, "{:.0f}") for x in v],
        f"{xfmt(r)} mock (≥ 1×)", None if r is None else r >= 1)
    # goal 3: memory
    v = [tpv(l, "idle_rss_kib") for l in tp_labels]
    v = [None if x is None else tuple(y / 1024 for y in x) for x in v]
    row("3", "idle RSS after start (MiB)", [cell(x, "{:.1f}") for x in v], "default ≤ 8 MiB",
        None if v[0] is None else v[0][0] <= 8)
    per = stats([r.get("rss_per_idle_client_kib") for r in mem if "idle_clients" in r])
    n = next((r["idle_clients"] for r in mem if "idle_clients" in r), "?")
    row("3", f"RSS per idle connected client, {n} clients (KiB)", [cell(per, "{:.1f}"), "-", "-", "-"],
        "default ≤ 100 KiB", None if per is None else per[0] <= 100)
    p50 = stats([r.get("rss_after_kib", 0) / 1024 for r in mem if r.get("producers") == 50])
    recs = next((r.get("records") for r in mem if r.get("producers") == 50), None)
    row("3", "RSS after 50 producers' load (MiB)" + (f", {recs:,} records" if recs else ""),
        [cell(p50, "{:.1f}"), "-", "-", "-"], "default < 60 MiB", None if p50 is None else p50[0] < 60)
    # goal 4: compaction
    cl = ["default", "off", None, None]
    # the baseline is the records of a window before the pass and one after it together (bench/compaction.py
    # since 2026-12-07); runs from before that have the window after it only
    key = "p99_ratio_baseline" if any(r.get("p99_ratio_baseline") for r in comp) else "p99_ratio"
    v = [rowsv(comp, l, key, measure="latency") if l else None for l in cl]
    row("4", "neighbour's produce p99 during a pass / " +
        ("before and after it" if key == "p99_ratio_baseline" else "after it"), [cell(x, "{:.2f}") for x in v],
        "default ≤ 1.2", None if v[0] is None else v[0][0] <= 1.2)
    for w in ("before", "during", "after"):
        if not any(r.get(w) for r in comp):
            continue
        v = [rowsv(comp, l, f"{w}.p99_ms", measure="latency") if l else None for l in cl]
        row("4", f"  neighbour's p99 {w} a pass (ms)", [cell(x, "{:.2f}") for x in v], "", None)
    v = [rowsv(comp, l, "mb_per_s", measure="throughput", codec="none") if l else None for l in cl]
    row("4", "compaction pass throughput, uncompressed (MB/s)", [cell(x, "{:.0f}") for x in v],
        "default ≥ 300 MB/s", None if v[0] is None else v[0][0] >= 300)
    # goal 5: latency, consume, start, stop
    v = [tpv(l, "lat_p99_ms") for l in tp_labels]
    row("5", "produce-to-consume latency p99 at 1k msg/s (ms)", [cell(x, "{:.2f}") for x in v],
        "default ≤ 1 ms", None if v[0] is None else v[0][0] <= 1)
    for p, ref in (("1", ISSUE_CONSUME_P1), ("8", ISSUE_CONSUME_P8)):
        v = [tpv(l, f"consume_p{p}_msgs_s") for l in tp_labels]
        r = None if v[0] is None else v[0][0] / ref
        row("5", f"consume, {p} partition{'s' if p != '1' else ''} (msg/s)", [cell(x, "{:,.0f}") for x in v],
            f"{xfmt(r)} the issue's outside run ({ref / 1e3:.0f}k; no regression)", None if r is None else r >= 1)
    for key, title in (("startup_ms", "start to first accepted connection (ms)"), ("stop_ms", "stop after the load (ms)")):
        v = [tpv(l, key) for l in tp_labels]
        row("5", title, [cell(x, "{:.1f}") for x in v], "default ≤ 20 ms", None if v[0] is None else v[0][0] <= 20)
    # goal 6: the per-request path's instructions (no threshold: the figure is the goal)
    for r in req:
        o = r.get("options") or {}
        where = "on disk, storage.sync=%s" % o.get("sync", "normal") if o.get("data") == "disk" else "in memory"
        row("6", f"instructions per Produce + Fetch request pair, {where} (callgrind, {r.get('name')})",
            [f"{r['instructions_per_pair']:,}", "-", "-", "-"], "measured", None)

    print("## Issue 37's goals\n")
    print("| goal | figure | " + " | ".join(cols) + " | ratio (goal) | verdict |")
    print("|---|---|" + "---|" * len(cols) + "---|---|")
    print("\n".join(lines))
    print("\nMedians [min–max] over the runs; a verdict reads the median of mskmock default.")
    msgs = sorted({r.get("messages") for r in tp if r.get("messages")})
    ticks = [r for r in tp if r.get("cpu_clock") != "ns"]
    if msgs and ticks:  # runs before 2026-12-07 read /proc/PID/stat; since, the kernel's CPU clock (ns)
        print("mskbench read broker CPU from /proc in 10-ms ticks in %d of these runs: at %s records a phase, "
              "CPU per 100k is to ±%s s there." % (len(ticks), " / ".join(f"{m:,}" for m in msgs),
                                                   " / ".join(f"{1e3 / m:.3f}" for m in msgs)))
    elif msgs:
        print("Broker CPU is the kernel's CPU clock of the broker's process (every thread, to the nanosecond).")
    print("Not measured: transactions on Kafka (bench/txn_throughput.py, whose measure_txns txn_cost.py runs, "
          "has no Kafka target); compaction on the mock (it has none) and on Kafka; the per-request "
          "instructions of any target but mskmock (callgrind runs the broker binary).")

    if phases:
        busy = {"throughput": [r.get("busy_before") for r in tp], "txn": [r.get("busy_cores_before") for r in txn],
                "memory": [r.get("busy_cores_before") for r in mem],
                "compaction": [r.get("busy_cores_before") for r in comp]}
        print("\n## The machine's load per phase\n")
        print("| phase | from – to (UTC) | minutes | load average (1 min) at start / end | busy cores before, at start "
              "| busy cores before each run, other than the bench |")
        print("|---|---|---|---|---|---|")
        for p in phases:
            print("| %s | %s – %s | %.1f | %s / %s | %s | %s |" % (
                p["phase"], p.get("start", "?"), p.get("end", "?"), p.get("seconds", 0) / 60,
                p.get("loadavg_start", "?"), p.get("loadavg_end", "?"), p.get("busy_start", "?"),
                cell(stats(busy.get(p["phase"], [])), "{:.2f}")))
    if tp:
        print("\n## Throughput phase (bench/mskbench), every figure\n")
        sys.stdout.flush()
        medians(os.path.join(d, "results.jsonl"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--issue37":
        issue37(sys.argv[2])
        return
    medians(sys.argv[1])


def medians(path):
    runs = {}
    order = []
    for line in open(path):
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
