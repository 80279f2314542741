#!/usr/bin/env bash
# Builds the Java kafka-clients test client (target/client.jar, dependencies shaded in) with
# Maven from Maven Central. Idempotent: does nothing when the jar is newer than every source.
set -euo pipefail
cd "$(dirname "$0")"

jar=target/client.jar
if [[ -f $jar ]]; then
  stale=$(find pom.xml src -newer "$jar" | head -1)
  [[ -z $stale ]] && exit 0
fi
log=$(mktemp)
if ! mvn -B -q -Dstyle.color=never package >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "install.sh: mvn package failed" >&2
  exit 1
fi
rm -f "$log"
