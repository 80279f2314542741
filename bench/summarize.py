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
    for key, title, scale, fmt in ROWS:
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
            bad = [k for k in r if k.endswith(("_failed", "_dups", "_bad")) and r[k]]
            errs = [f"{k}: {r[k]}" for k in r if k.endswith("error") and r[k]]
            if r.get("exit") or bad or errs:
                problems.append(f"- {l} run {r.get('run')}: exit {r.get('exit')} {' '.join(bad)} {'; '.join(errs)}")
    if problems:
        print("\nRuns with problems:")
        print("\n".join(problems))


if __name__ == "__main__":
    main()
