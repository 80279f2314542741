#!/usr/bin/env bash
# Builds the franz-go test client (./client) from go.mod/go.sum via the Go module proxy.
# Idempotent: does nothing when ./client is newer than every source file.
set -euo pipefail
cd "$(dirname "$0")"
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly"

if [[ -x client ]]; then
  stale=$(find . -maxdepth 1 \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer client | head -1)
  [[ -z $stale ]] && exit 0
fi
log=$(mktemp)
if ! { go mod download && go build -buildvcs=false -o client.tmp . && mv client.tmp client; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log" client.tmp
  echo "install.sh: go build failed" >&2
  exit 1
fi
rm -f "$log"
