#!/usr/bin/env node
// The admin calls a provisioning script makes, one after the other, each reported on its own
// (the same contract as tests/clients/java AdminCalls):
//   node admin-calls.js BOOTSTRAP TOPIC
//     -> {"describe_cluster": {"ok": true, "controller": ID|null, "nodes": N},
//         "create_topics": {...}, "create_partitions": {...}, "describe_topics": {...},
//         "delete_topics": {...}}          (a failed call: {"ok": false, "error": "..."})
// kafkajs sends CreateTopics, CreatePartitions and DeleteTopics to the controller Metadata
// names; retries are cut short so that a missing one shows as an error, not a hang.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

async function attempt(fn) {
  const out = {}
  try {
    await fn(out)
    out.ok = true
  } catch (e) {
    out.ok = false
    out.error = `${e.name}: ${e.message}`
  }
  return out
}

async function main() {
  const [bootstrap, topic] = process.argv.slice(2)
  if (!topic) {
    process.stderr.write('usage: admin-calls.js BOOTSTRAP TOPIC\n')
    process.exit(2)
  }
  const kafka = new Kafka({
    clientId: 'admin-calls',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1000 },
  })
  const admin = kafka.admin()
  await admin.connect()
  const res = {}
  res.describe_cluster = await attempt(async (out) => {
    const d = await admin.describeCluster()
    out.controller = d.controller == null || d.controller < 0 ? null : d.controller
    out.nodes = d.brokers.length
  })
  res.create_topics = await attempt(async () => {
    const created = await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true })
    if (!created) throw new Error('createTopics returned false (the topic existed)')
  })
  res.create_partitions = await attempt(async () => {
    await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] })
  })
  res.describe_topics = await attempt(async (out) => {
    const md = await admin.fetchTopicMetadata({ topics: [topic] })
    out.partitions = md.topics[0].partitions.length
  })
  res.delete_topics = await attempt(async () => {
    await admin.deleteTopics({ topics: [topic] })
  })
  await admin.disconnect()
  process.stdout.write(JSON.stringify(res) + '\n')
}

main().catch((e) => {
  process.stderr.write(`error: ${e.stack || e}\n`)
  process.exit(1)
})
