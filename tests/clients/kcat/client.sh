#!/usr/bin/env bash
# mskmock integration-test client for kcat (Debian's kcat, librdkafka inside).
# Same CLI contract as the other clients (see tests/clients/python/client.py), except:
#  - create-topic is delegated to the Python client (kcat has no admin API);
#  - headers: kcat's -H applies one set of headers to every record of a run, so records
#    produced by kcat carry only ("codec", C); "idx" cannot be set per record. The
#    verifier accepts records without "idx" and checks it when present.
#  - per-record partitions: kcat -p takes one partition per run, so produce runs kcat once
#    per partition, with that partition's records in increasing i.
# Verification of consumed records is done by verify.py (python3, standard library only).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
py="$root/.venv/bin/python"
[[ -x "$py" ]] || py=python3

die() { echo "kcat client: $*" >&2; exit 1; }

cmd="${1:-}"; shift || true
bootstrap= topic= count= partitions= compression= idempotent=0
while (($#)); do
  case "$1" in
    --bootstrap) bootstrap="$2"; shift 2 ;;
    --topic) topic="$2"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --partitions) partitions="$2"; shift 2 ;;
    --compression) compression="$2"; shift 2 ;;
    --idempotent) idempotent=1; shift ;;
    *) die "unknown argument $1" ;;
  esac
done
[[ -n $bootstrap && -n $topic && -n $partitions ]] || die "--bootstrap, --topic and --partitions are required"

common=(-b "$bootstrap" -t "$topic" -q -X client.id=mskmock-it-kcat)

case "$cmd" in
  create-topic)
    exec "$py" "$root/tests/clients/python/client.py" create-topic \
      --bootstrap "$bootstrap" --topic "$topic" --partitions "$partitions"
    ;;
  produce)
    [[ -n $count && -n $compression ]] || die "produce needs --count and --compression"
    tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
    "$py" "$here/verify.py" gen --count "$count" --partitions "$partitions" --out "$tmp"
    extra=(-X acks=all -X compression.codec="$compression" -X linger.ms=5
           -X message.timeout.ms=60000)
    ((idempotent)) && extra+=(-X enable.idempotence=true)
    for ((p = 0; p < partitions; p++)); do
      # kcat -P exits non-zero when a record could not be delivered; -D/-K split the
      # file into records and key/value (values never contain a tab or a newline).
      kcat -P "${common[@]}" -p "$p" -K $'\t' -H "codec=$compression" "${extra[@]}" \
        -l "$tmp/p$p.txt" || die "kcat -P failed for partition $p (exit $?)"
    done
    echo "{\"produced\": $count}"
    ;;
  consume)
    [[ -n $count ]] || die "consume needs --count"
    tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
    # No group: kcat -C without -G assigns all partitions itself. %h prints headers as CSV.
    rc=0
    timeout 60 kcat -C "${common[@]}" -o beginning -c "$count" \
      -f '%p\t%o\t%k\t%s\t%h\n' > "$tmp/out.tsv" || rc=$?
    if ((rc == 124)); then
      echo "kcat client: kcat -C timed out after 60 s with $(wc -l < "$tmp/out.tsv") records" >&2
    elif ((rc != 0)); then
      die "kcat -C failed (exit $rc)"
    fi
    exec "$py" "$here/verify.py" check --count "$count" --partitions "$partitions" --in "$tmp/out.tsv"
    ;;
  *) die "usage: client.sh create-topic|produce|consume --bootstrap B --topic T ..." ;;
esac
