#!/usr/bin/env bash
# Builds mskbench (from the working tree) and mskmock (from a clean `git archive`
# of HEAD, so uncommitted work in the tree is never measured) into build-bench/,
# then runs one of three suites, each on several targets:
#
#   MODE=throughput (default): the same librdkafka clients, the same record count:
#     mskmock on disk (SQLite in a fresh temp dir; the default storage.sync=normal,
#     WAL), mskmock-disk-off (storage.sync=off: WAL too, no fsync, the
#     durability of Kafka's own defaults), mskmock with :memory:,
#     librdkafka's mock cluster in the bench process, and in a process of its own.
#     Also mskmock-{disk,memory}-sasl-ssl (clients on the IAM listener: SASL_SSL,
#     OAUTHBEARER) and -sasl-ssl-nodelay (the same with socket.nagle.disable=true), and
#     any mskmock target with -authz: the clients' requests decided by a 20-statement IAM
#     policy (bench/authz/policy.json, applied to the plaintext listener by
#     plaintext.principal) instead of allowed without one.
#   MODE=groups: consumer-group rebalance time (3 and 30 librdkafka consumers) and
#     500 groups x 3 members joining at once (raw driver), on mskmock-disk,
#     mskmock-memory, mock-isolated (the mock without the 500-group test: see
#     docs/benchmarks.md).
#   MODE=auth: IAM authentications per second and their latency (mskmock-disk).
#   MODE=issue37: every figure of issue 37 (performance, round two) in one run, phase by phase
#     (PHASES, default all five, in this order):
#       throughput  the throughput suite above on TARGETS (default mskmock-disk mskmock-disk-off
#                   mock-isolated kafka): CPU per record, produce/consume, latency, idle RSS, start, stop
#       txn         bench/txn_cost.py: CPU per transaction and transactions/s; mskmock default,
#                   storage.sync=off, and librdkafka's mock (TXN_ROUNDS rounds of TXNS, interleaved)
#       memory      bench/scaling.py: RSS after 50 producers' load, RSS per idle client (100 clients)
#       compaction  bench/compaction.py: a neighbour's produce p99 during a pass / before and after it, pass
#                   MB/s; mskmock default and storage.sync=off, interleaved (COMPACT_RUNS, COMPACT_MB)
#       request     bench/request_cost.py: instructions per Produce + Fetch pair (callgrind), on
#                   disk with the default storage and in memory (REQUESTS)
#     then bench/summarize.py --issue37: one table of every goal, its figure, ratio and verdict, and
#     the machine's load per phase (summary.md). Every phase waits for a quiet machine as its script
#     does (QUIET_WAIT, default 30 here). QUICK=1: RUNS=1, 50,000 records, 5-s quiet waits, one
#     round of each of the others with fewer transactions/MB/requests (~5 minutes; a smoke test of
#     the suite, not figures to quote); without it ~20 minutes on a quiet machine. The Python
#     phases need confluent-kafka: PYTHON (default .venv/bin/python, else python3).
#   Target kafka (throughput, not in the default set): Apache Kafka from Maven Central
#     (bench/kafka/fetch.sh into build-bench/kafka/), one KRaft node with the JVM options of
#     its own start script, warmed up with KAFKA_WARMUP records (default: MESSAGES) first.
#
# Runs are interleaved (run 1 of every target, then run 2, ...) so that load
# from other work on the machine spreads over all targets; before each run it
# waits up to QUIET_WAIT seconds for the machine to be quiet. Prints every
# run's table, then the medians side by side (bench/summarize.py).
#
#   bench/run.sh                      3 runs of 200000 records of 1 KiB
#   RUNS=5 MESSAGES=500000 bench/run.sh
#   TARGETS="mskmock-disk mock" bench/run.sh -- --fetch-wait-ms 10
#   TARGETS="mskmock-disk mskmock-disk-sasl-ssl" bench/run.sh
#   TARGETS="mskmock-disk mskmock-disk-off mock-isolated kafka" RUNS=5 bench/run.sh
#   MODE=groups RUNS=5 bench/run.sh
#   MODE=auth RUNS=5 bench/run.sh
#   MODE=issue37 bench/run.sh                        every issue 37 figure, side by side
#   MODE=issue37 QUICK=1 PHASES="txn request" bench/run.sh
#   MSKBENCH_REV=0d83d12 bench/run.sh                measure mskmock at another commit (default HEAD)
#   MSKBENCH_BROKER=/path/to/mskmock bench/run.sh   measure another build of mskmock
# Anything after -- goes to every mskbench run. Results: build-bench/bench-results/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
MODE="${MODE:-throughput}"
RUNS_GIVEN="${RUNS:-}" MESSAGES_GIVEN="${MESSAGES:-}" QUIET_WAIT_GIVEN="${QUIET_WAIT:-}" # QUICK=1 yields to these
RUNS="${RUNS:-3}"
MESSAGES="${MESSAGES:-200000}"
case "$MODE" in
  throughput) default_targets="mskmock-disk mskmock-disk-off mskmock-memory mock mock-isolated" ;;
  groups) default_targets="mskmock-disk mskmock-memory mock-isolated" ;;
  auth) default_targets="mskmock-disk" ;;
  issue37) default_targets="mskmock-disk mskmock-disk-off mock-isolated kafka" ;;
  *) echo "MODE must be throughput, groups, auth or issue37" >&2; exit 2 ;;
esac
TARGETS="${TARGETS:-$default_targets}"
QUIET_WAIT="${QUIET_WAIT:-60}"
KAFKA_DIR="${KAFKA_DIR:-build-bench/kafka}" # Kafka's jars: fetched there unless already there
if [[ $MODE == issue37 ]]; then
  PHASES="${PHASES:-throughput txn memory compaction request}"
  if [[ "${QUICK:-0}" == 1 ]]; then
    RUNS="${RUNS_GIVEN:-1}" MESSAGES="${MESSAGES_GIVEN:-50000}" QUIET_WAIT="${QUIET_WAIT_GIVEN:-5}"
    : "${TXN_ROUNDS:=1}" "${TXNS:=300}" "${TXN_WARMUP:=50}" "${MEM_RUNS:=1}" "${MEM_RECORDS:=50000}"
    : "${COMPACT_RUNS:=1}" "${COMPACT_MB:=16}" "${REQUESTS:=300}"
  else
    QUIET_WAIT="${QUIET_WAIT_GIVEN:-30}"
    : "${TXN_ROUNDS:=5}" "${TXNS:=2000}" "${TXN_WARMUP:=200}" "${MEM_RUNS:=3}" "${MEM_RECORDS:=200000}"
    : "${COMPACT_RUNS:=5}" "${COMPACT_MB:=512}" "${REQUESTS:=2000}"
  fi
  if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
  fi
  if grep -Eqw 'txn|memory|compaction' <<<"$PHASES" && ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
    echo "bench/run.sh: $PYTHON cannot import confluent_kafka (the txn, memory and compaction phases); set PYTHON" >&2
    exit 2
  fi
fi
BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
extra=()
if [[ "${1:-}" == "--" ]]; then shift; extra=("$@"); fi

# mskbench from the working tree (bench/ is what changes with the benchmark)
if ! build_log=$(cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DMSKMOCK_BENCH=ON \
  -DMSKMOCK_TESTS=OFF -DMSKMOCK_SANITIZE=OFF 2>&1 && ninja -C build-bench mskbench 2>&1); then
  echo "$build_log" | tail -30
  echo "bench/run.sh: building mskbench into build-bench/ failed" >&2
  exit 2
fi

# mskmock from a clean snapshot of HEAD: the working tree may be mid-edit
if [[ -n "${MSKBENCH_BROKER:-}" ]]; then
  bin="$MSKBENCH_BROKER"
  broker_desc="$bin (given)"
else
  rev="$(git rev-parse --short=7 "${MSKBENCH_REV:-HEAD}^{commit}")"
  snap="build-bench/snapshot-$rev"
  if [[ ! -x "$snap/build/mskmock" ]]; then
    rm -rf "$snap"
    mkdir -p "$snap/src"
    git archive "$rev" | tar -x -C "$snap/src"
    if ! build_log=$(cmake -S "$snap/src" -B "$snap/build" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
      -DMSKMOCK_TESTS=OFF -DMSKMOCK_SANITIZE=OFF -DMSKMOCK_REVISION="$rev" 2>&1 && ninja -C "$snap/build" mskmock 2>&1); then
      echo "$build_log" | tail -30
      echo "bench/run.sh: building mskmock from git archive of $rev failed" >&2
      exit 2
    fi
  fi
  bin="$snap/build/mskmock"
  broker_desc="$bin (git archive of $rev, $BUILD_TYPE)"
  if [[ -z "${MSKBENCH_REV:-}" && -n "$(git status --porcelain -- broker protocol storage CMakeLists.txt 2>/dev/null)" ]]; then
    broker_desc="$broker_desc; the working tree has uncommitted broker changes, not measured"
  fi
fi

if [[ " $TARGETS " == *" kafka "* && ( $MODE != issue37 || " $PHASES " == *" throughput "* ) ]]; then
  bench/kafka/fetch.sh "$KAFKA_DIR"
fi
KAFKA_DIR="$(cd "$KAFKA_DIR" 2>/dev/null && pwd || echo "$KAFKA_DIR")"

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

# mskbench arguments of a target in the current MODE.
target_args() {
  local t="$1" storage=() security=() client=() authz=()
  case "$t" in
    mskmock-memory*) storage=(--data-dir :memory:) ;;
    mskmock-disk-off*) storage=(--broker-set storage.sync=off) ;;
  esac
  case "$t" in
    *-sasl-ssl*) security=(--security sasl_ssl) ;;
  esac
  case "$t" in
    *-nodelay) client=(--client-set socket.nagle.disable=true) ;;
  esac
  case "$t" in
    *-authz) authz=(--broker-set "iam.identities.file=$root/bench/authz/identities.json"
                    --broker-set "plaintext.principal=arn:aws:iam::123456789012:user/bench") ;;
  esac
  # MSK's quotas (serverless: 5 MiB/s into a partition, 15,000 requests/s) would measure the quota, not
  # mskmock, and its version floors refuse the Metadata v4 of Debian's librdkafka 2.0.2, which mskbench
  # links; a revision older than a key (MSKBENCH_REV) does not know it, and has no such limit
  quotas_off=()
  help="$("$bin" --help 2>&1)" # once, into a variable: grep -q in a pipe would SIGPIPE it under pipefail
  for key in quota.partition.ingress.bytes.per.second quota.partition.egress.bytes.per.second \
             quota.cluster.ingress.bytes.per.second quota.cluster.egress.bytes.per.second max.request.rate \
             api.versions.min; do
    if grep -q "^  $key " <<<"$help"; then
      if [[ $key == api.versions.min ]]; then quotas_off+=(--broker-set "$key="); else quotas_off+=(--broker-set "$key=0"); fi
    fi
  done
  local mode="$MODE"
  if [[ $mode == issue37 ]]; then mode=throughput; fi # its throughput phase is the throughput suite
  case "$mode:$t" in
    throughput:mskmock-disk* | throughput:mskmock-memory*)
      args=(mskmock --binary "$bin" "${storage[@]}" "${security[@]}" "${client[@]}" "${authz[@]}"
            "${quotas_off[@]}" --messages "$MESSAGES") ;;
    throughput:mock) args=(mock --messages "$MESSAGES") ;;
    throughput:kafka) args=(kafka --kafka-libs "$KAFKA_DIR/libs" --kafka-start "$root/bench/kafka/start.sh"
                            --brokers 1 --warmup "${KAFKA_WARMUP:-$MESSAGES}" --messages "$MESSAGES") ;;
    throughput:mock-isolated) args=(mock --isolated --messages "$MESSAGES") ;;
    # the scale phase's 500 groups come after phase 1's: past MSK's cap of 500 (max.consumer.groups)
    groups:mskmock-disk | groups:mskmock-memory)
      args=(groups --target mskmock --binary "$bin" "${storage[@]}" "${quotas_off[@]}" --broker-set max.consumer.groups=0) ;;
    # 1500 raw members overwhelm the mock (accept queue of 5, a follower's SyncGroup after the
    # leader's gets INVALID_REQUEST): run it by hand, see docs/benchmarks.md
    groups:mock | groups:mock-isolated) args=(groups --target "$t" --scale-groups 0) ;;
    auth:mskmock-disk | auth:mskmock-memory) args=(auth --binary "$bin" "${storage[@]}" "${quotas_off[@]}") ;;
    *) echo "unknown target $t for MODE=$MODE" >&2; exit 2 ;;
  esac
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), build $BUILD_TYPE"
echo "mskmock: $broker_desc ($("$bin" --version 2>/dev/null || echo '?')), librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?'), mode $MODE"
echo "results: $out"
echo "mskmock: $broker_desc" >"$out/broker.txt"

run_throughput() {
for ((i = 1; i <= RUNS; i++)); do
  for target in $TARGETS; do
    target_args "$target"
    busy=$(wait_quiet)
    echo
    echo "=== $target run $i/$RUNS (machine busy before: $busy cores) ==="
    log="$out/$target-$i.txt"
    status=0
    build-bench/bench/mskbench "${args[@]}" ${extra[@]+"${extra[@]}"} >"$log" 2>"$out/$target-$i.stderr" || status=$?
    grep -v '^{' "$log" || true
    if [[ -s "$out/$target-$i.stderr" ]]; then sed 's/^/  stderr: /' "$out/$target-$i.stderr" | head -20; fi
    if ! grep '^{' "$log" | sed "s/^{/{\"label\":\"$target\",\"run\":$i,\"busy_before\":$busy,\"exit\":$status,/" >>"$jsonl"; then
      echo "{\"label\":\"$target\",\"run\":$i,\"exit\":$status,\"error\":\"no result line\"}" >>"$jsonl"
      echo "  mskbench exited with $status and printed no result line"
    fi
  done
done
}

# The JSON lines of a script's output ($1) into $2, each with the fields $3 (JSON, no braces) first.
keep_json() {
  grep '^{' "$1" | sed "s/^{/{$3,/" >>"$2" || true
}

# Runs one phase of MODE=issue37, with its start, end and the machine's load into phases.jsonl.
run_phase() {
  local phase="$1" t0 s0 l0 b0 status=0
  t0=$(date -u +%H:%M:%S) s0=$(date +%s) l0=$(cut -d' ' -f1 /proc/loadavg) b0=$(busy_cores)
  echo
  echo "=== phase $phase (load average $l0, $b0 busy cores) ==="
  case "$phase" in
    throughput) run_throughput ;;
    txn)
      "$PYTHON" bench/txn_cost.py --targets "default=$bin,off=$bin:storage.sync=off,mock" --rounds "$TXN_ROUNDS" \
        --txns "$TXNS" --warmup "$TXN_WARMUP" --quiet-wait "$QUIET_WAIT" >"$out/txn.txt" 2>"$out/txn.stderr" || status=$?
      cat "$out/txn.txt"
      keep_json "$out/txn.txt" "$out/txn.jsonl" "\"exit\":$status" ;;
    memory)
      "$PYTHON" bench/scaling.py --binary "$bin" --runs "$MEM_RUNS" --records "$MEM_RECORDS" --topics 1 --producers 50 \
        --idle-clients 100 --quiet-wait "$QUIET_WAIT" >"$out/memory.txt" 2>"$out/memory.stderr" || status=$?
      cat "$out/memory.txt"
      keep_json "$out/memory.txt" "$out/memory.jsonl" "\"records\":$MEM_RECORDS,\"exit\":$status" ;;
    compaction)
      # interleaved: run 1 of default, of off, run 2 ...
      local r label sets
      for ((r = 1; r <= COMPACT_RUNS; r++)); do
        for label in default off; do
          sets=(); if [[ $label == off ]]; then sets=(--set storage.sync=off); fi
          status=0
          "$PYTHON" bench/compaction.py --binary "$bin" --runs 1 --mb "$COMPACT_MB" --codecs none --slice-ms 2 --warmup 2 \
            --quiet-wait "$QUIET_WAIT" "${sets[@]}" >"$out/compaction-$label-$r.txt" 2>"$out/compaction-$label-$r.stderr" \
            || status=$?
          echo "--- compaction, $label, run $r/$COMPACT_RUNS (exit $status)"
          grep -v '^{' "$out/compaction-$label-$r.txt" | sed '/^$/d' || true
          keep_json "$out/compaction-$label-$r.txt" "$out/compaction.jsonl" "\"label\":\"$label\",\"round\":$r,\"exit\":$status"
        done
      done ;;
    request)
      "$PYTHON" bench/request_cost.py --requests "$REQUESTS" --json "default=$bin:data=disk" "memory=$bin" \
        >"$out/request.txt" 2>"$out/request.stderr" || status=$?
      grep -v '^{' "$out/request.txt" || true
      keep_json "$out/request.txt" "$out/request.jsonl" "\"exit\":$status" ;;
    *) echo "unknown phase $phase (PHASES: throughput txn memory compaction request)" >&2; exit 2 ;;
  esac
  if [[ -s "$out/$phase.stderr" && $status != 0 ]]; then tail -20 "$out/$phase.stderr" | sed 's/^/  stderr: /'; fi
  printf '{"phase":"%s","start":"%s","end":"%s","seconds":%d,"loadavg_start":%s,"loadavg_end":%s,"busy_start":%s,"exit":%d}\n' \
    "$phase" "$t0" "$(date -u +%H:%M:%S)" $(($(date +%s) - s0)) "$l0" "$(cut -d' ' -f1 /proc/loadavg)" "$b0" "$status" \
    >>"$out/phases.jsonl"
}

if [[ $MODE == issue37 ]]; then
  echo "phases: $PHASES; python: $PYTHON; quiet wait $QUIET_WAIT s"
  for phase in $PHASES; do run_phase "$phase"; done
  echo
  python3 bench/summarize.py --issue37 "$out" | tee "$out/summary.md"
  exit 0
fi
run_throughput

echo
if command -v python3 >/dev/null; then
  python3 bench/summarize.py "$jsonl" | tee "$out/summary.md"
else
  echo "python3 not found: the runs are in $jsonl"
fi
