#!/usr/bin/env bash
# Installs the kafkajs test client's dependencies (npm ci from the committed package-lock.json).
# Idempotent: does nothing when node_modules already matches package.json, the lock file and
# this Node.
set -euo pipefail
cd "$(dirname "$0")"

stamp=node_modules/.mskmock-install-stamp
want="$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1) node-$(node --version)"
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi

# kafkajs-lz4 (lz4) and @kafkajs/zstd (cppzst) compile native addons with node-gyp; cppzst's
# binding.gyp asks for C++11 but Node >= 20's headers need C++17.
export CXXFLAGS="${CXXFLAGS:-} -std=c++17"
log=$(mktemp)
if ! npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "install.sh: npm ci failed" >&2
  exit 1
fi
rm -f "$log"
node -e "require('kafkajs'); require('kafkajs-2.2.1'); require('kafkajs-snappy'); require('kafkajs-lz4'); require('@kafkajs/zstd'); require('aws-msk-iam-sasl-signer-js'); require('@jm18457/kafkajs-msk-iam-authentication-mechanism'); require('@aws-sdk/client-kafka'); require('@aws-sdk/client-sts')"
echo "$want" >"$stamp"
