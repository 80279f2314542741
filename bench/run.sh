#!/usr/bin/env bash
# Builds mskmock and mskbench into build-bench/ and measures, with the same
# librdkafka clients and the same record count, four targets:
#   mskmock on disk (SQLite in a fresh temp dir), mskmock with :memory:,
#   librdkafka's mock cluster in the bench process, and in a process of its own.
# Runs are interleaved (run 1 of every target, then run 2, ...) so that load
# from other work on the machine spreads over all targets; before each run it
# waits up to QUIET_WAIT seconds for the machine to be quiet. Prints every
# run's table, then the medians side by side (bench/summarize.py).
#
#   bench/run.sh                      3 runs of 200000 records of 1 KiB
#   RUNS=5 MESSAGES=500000 bench/run.sh
#   TARGETS="mskmock-disk mock" bench/run.sh -- --fetch-wait-ms 10
#   MSKBENCH_BROKER=/path/to/mskmock bench/run.sh   measure another build of mskmock
# Anything after -- goes to every mskbench run. Results: build-bench/bench-results/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
RUNS="${RUNS:-3}"
MESSAGES="${MESSAGES:-200000}"
TARGETS="${TARGETS:-mskmock-disk mskmock-memory mock mock-isolated}"
QUIET_WAIT="${QUIET_WAIT:-60}"
BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
extra=()
if [[ "${1:-}" == "--" ]]; then shift; extra=("$@"); fi

bin="${MSKBENCH_BROKER:-build-bench/mskmock}"
targets=(mskbench)
[[ -n "${MSKBENCH_BROKER:-}" ]] || targets+=(mskmock)
if ! build_log=$(cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DMSKMOCK_BENCH=ON \
  -DMSKMOCK_TESTS=OFF -DMSKMOCK_SANITIZE=OFF 2>&1 && ninja -C build-bench "${targets[@]}" 2>&1); then
  echo "$build_log" | tail -30
  echo "bench/run.sh: building ${targets[*]} into build-bench/ failed" >&2
  exit 2
fi

out="build-bench/bench-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
jsonl="$out/results.jsonl"
: >"$jsonl"

# Busy fraction of the machine (in cores) from /proc/stat over one second.
busy_cores() {
  local a b
  a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
  sleep 1
  b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
  awk -v a="$a" -v b="$b" -v n="$(nproc)" 'BEGIN{split(a,x," ");split(b,y," ");
    t=y[2]-x[2]; if (t<=0) {print 0; exit} printf "%.2f", n*(y[1]-x[1])/t}'
}

wait_quiet() {
  local waited=0 busy
  while :; do
    busy=$(busy_cores)
    if awk -v b="$busy" 'BEGIN{exit !(b < 0.15)}' || (( waited >= QUIET_WAIT )); then break; fi
    waited=$((waited + 1))
  done
  echo "$busy"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), build $BUILD_TYPE"
echo "mskmock: $bin ($("$bin" --version 2>/dev/null || echo '?')), librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?')"
echo "results: $out"
for ((i = 1; i <= RUNS; i++)); do
  for target in $TARGETS; do
    case "$target" in
      mskmock-disk) args=(mskmock --binary "$bin") ;;
      mskmock-memory) args=(mskmock --binary "$bin" --data-dir :memory:) ;;
      mock) args=(mock) ;;
      mock-isolated) args=(mock --isolated) ;;
      *) echo "unknown target $target" >&2; exit 2 ;;
    esac
    busy=$(wait_quiet)
    echo
    echo "=== $target run $i/$RUNS (machine busy before: $busy cores) ==="
    log="$out/$target-$i.txt"
    status=0
    build-bench/bench/mskbench "${args[@]}" --messages "$MESSAGES" ${extra[@]+"${extra[@]}"} >"$log" 2>"$out/$target-$i.stderr" || status=$?
    grep -v '^{' "$log" || true
    if [[ -s "$out/$target-$i.stderr" ]]; then sed 's/^/  stderr: /' "$out/$target-$i.stderr" | head -20; fi
    if ! grep '^{' "$log" | sed "s/^{/{\"label\":\"$target\",\"run\":$i,\"busy_before\":$busy,\"exit\":$status,/" >>"$jsonl"; then
      echo "{\"label\":\"$target\",\"run\":$i,\"exit\":$status,\"error\":\"no result line\"}" >>"$jsonl"
      echo "  mskbench exited with $status and printed no result line"
    fi
  done
done

echo
if command -v python3 >/dev/null; then
  python3 bench/summarize.py "$jsonl" | tee "$out/summary.md"
else
  echo "python3 not found: the runs are in $jsonl"
fi
