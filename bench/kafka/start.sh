#!/usr/bin/env bash
# Starts one Apache Kafka node in KRaft mode (broker and controller in one JVM, as a single-node
# dev cluster is run) from the jars bench/kafka/fetch.sh put in KAFKA_LIBS, with the JVM options
# of Kafka's own kafka-server-start.sh, on 127.0.0.1:PORT (controller on PORT+1), data in DIR.
# The last step execs java, so the caller's child is the broker itself (its CPU and RSS).
#
#   bench/kafka/start.sh KAFKA_LIBS DIR PORT
set -euo pipefail
libs="$1" dir="$2" port="$3"
mkdir -p "$dir/data"
cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$((port + 1))
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$((port + 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
# kafka-run-class.sh's defaults (KAFKA_HEAP_OPTS from kafka-server-start.sh)
jvm=(-Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
     -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true)
java -cp "$libs/*" kafka.tools.StorageTool format -t "$(java -cp "$libs/*" kafka.tools.StorageTool random-uuid)" \
  -c "$dir/server.properties" >"$dir/format.log" 2>&1
exec java "${jvm[@]}" -cp "$libs/*" kafka.Kafka "$dir/server.properties"
