#!/usr/bin/env bash
# Time to first record for a newcomer: from `git clone` to a consumed record using only the
# README's commands, as written (issue 31). Clones the repository (HEAD of this checkout) into a
# fresh directory and times each step:
#   clone    git clone
#   start    the README's first command (tools/install-deps && tools/build && build/mskmock)
#            until the broker is ready (the README's --wait-ready)
#   record   the quick start's three commands: topic create, produce, consume
#   BUSY=1   first holds 9080-9100 and 9180 with another program's listeners and exports
#            MSKMOCK_PORT_BASE=19080, as the README says to on such a machine
# On a machine that already has the Debian packages, install-deps only checks; the CI's
# install-deps stage on a fresh machine gives that step's cost (docs/benchmarks.md).
#   bench/first_record.sh [WORKDIR]
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=${1:-$(mktemp -d /tmp/first-record.XXXXXX)}
mkdir -p "$work"
holder_pid=
broker_pid=
cleanup() {
  [[ -n $broker_pid ]] && kill "$broker_pid" 2>/dev/null || true
  [[ -n $holder_pid ]] && kill "$holder_pid" 2>/dev/null || true
}
trap cleanup EXIT

if [[ ${BUSY:-0} == 1 ]]; then
  # another program on the defaults: every port mskmock would take by default
  python3 - <<'EOF' &
import socket, time
held = []
for p in list(range(9080, 9101)) + [9180]:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); s.listen(); held.append(s)
    except OSError:
        pass
time.sleep(3600)
EOF
  holder_pid=$!
  sleep 0.5
  export MSKMOCK_PORT_BASE=19080
fi

now() { date +%s.%N; }
t0=$(now)
git clone -q "$src" "$work/mskmock"
cd "$work/mskmock"
t_clone=$(now)
# the README's first command, its last part in the background as a person's second shell would have it
tools/install-deps >"$work/install.log" 2>&1
t_deps=$(now)
tools/build >"$work/build.log" 2>&1
t_build=$(now)
build/mskmock --ready-file "$work/ready.json" >/dev/null 2>"$work/broker.log" &
broker_pid=$!
build/mskmock --wait-ready "$work/ready.json" --pid "$broker_pid" --log "$work/broker.log" >/dev/null
t_ready=$(now)
build/mskmock topic create orders -p 3 >/dev/null
echo hello | build/mskmock produce orders >/dev/null 2>&1
got=$(build/mskmock consume orders -n 1 2>/dev/null)
t_record=$(now)
[[ $got == hello ]] || { echo "first_record: consumed '$got', not hello" >&2; exit 1; }
kill "$broker_pid"
wait "$broker_pid" || true
broker_pid=
awk -v t0="$t0" -v c="$t_clone" -v d="$t_deps" -v b="$t_build" -v r="$t_ready" -v e="$t_record" -v busy="${BUSY:-0}" 'BEGIN {
  printf "first_record: %s ports: clone %.1f s, install-deps %.1f s, build %.1f s, start %.2f s, first record %.2f s; total %.1f s\n",
    busy == 1 ? "busy (MSKMOCK_PORT_BASE=19080)" : "default", c - t0, d - c, b - d, r - b, e - r, e - t0 }'
