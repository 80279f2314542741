#!/usr/bin/env bash
# Fetches Apache Kafka (the broker, kafka_2.13, and its tools) with every runtime dependency from
# Maven Central into DEST/libs, for bench/kafka/start.sh. Idempotent: does nothing when DEST/libs
# holds the version pom.xml names.
#
#   bench/kafka/fetch.sh DEST
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="$(mkdir -p "$1" && cd "$1" && pwd)"  # absolute: mvn resolves paths from the pom's directory
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
log4j=$(sed -n 's:.*<log4j.version>\(.*\)</log4j.version>.*:\1:p' "$here/pom.xml")
if [[ -f "$dest/libs/kafka_2.13-$version.jar" && -f "$dest/libs/log4j-slf4j-impl-$log4j.jar" ]]; then exit 0; fi
rm -rf "$dest/libs"
mkdir -p "$dest"
mvn -B -q -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dest/libs" -DincludeScope=runtime
echo "$dest/libs: Apache Kafka $version, $(ls "$dest/libs" | wc -l) jars"
