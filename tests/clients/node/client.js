#!/usr/bin/env node
// kafkajs test client for mskmock integration tests.
//
// Contract (shared with tests/clients/java and tests/clients/go): the last stdout line is
// exactly one JSON object; any error exits non-zero with a message on stderr.
//
//   create-topic --bootstrap B --topic T --partitions P                 -> {"created": T}
//   produce --bootstrap B --topic T --count N --partitions P --compression C [--idempotent]
//                                                                       -> {"produced": N}
//   consume --bootstrap B --topic T --count N --partitions P            -> {"consumed": N,
//                                                                           "per_partition": {...}}
//   group-consume --bootstrap B --group G --topic T [--session-timeout-ms MS] [--max-records N]
//                 [--commit sync|async|none] [--assignor RoundRobinAssigner] [--kafkajs 2.2.4|2.2.1]
//                                                   -> JSON-line events (see groupConsume below)
//   delete-records --bootstrap B --topic T --partition P --offset O   (admin.deleteTopicRecords; O -1:
//                 the high watermark)               -> {"ok": true, "low": L, "high": H} (the partition's
//                                                      offsets afterwards), or {"ok": false, "error": E}
//   list-reassignments --bootstrap B [--topic T --partition P]
//                                                   -> {"ok": true, "topics": [...]} or {"ok": false, ...}
//   txn-transform --bootstrap B --group G --input T --output O --transactional-id ID [--batch N]
//                 [--abort-every K] [--init-timeout S] [--timeout S]
//                                                   -> transactional consume-transform-produce (txn.js)
//   aws-calls --endpoint URL --region R [--wrong-secret S]
//                                                   -> STS and kafka control-plane calls (aws-calls.js)
//   aws-serverless --endpoint URL --region R --cluster-name N
//                                                   -> create, wait, bootstrap, delete (aws-serverless.js)
//
// Record i goes to partition i % P, key "key-<i>", value "value-<i>-" + "x" * (i % 50),
// headers [("idx", "<i>"), ("codec", C)].
//
// IAM (MSK's listener; every command):
//   --security-protocol PLAINTEXT|SASL_SSL|SASL_PLAINTEXT   (default PLAINTEXT)
//   --ca FILE            PEM CA the TLS server certificate must chain to (SASL_SSL)
//   --mechanism OAUTHBEARER|AWS_MSK_IAM
//                        OAUTHBEARER: kafkajs' oauthBearerProvider calls generateAuthToken of
//                        aws-msk-iam-sasl-signer-js (a new token at every (re-)authentication);
//                        AWS_MSK_IAM: @jm18457/kafkajs-msk-iam-authentication-mechanism
//   --region R           signing region (default $AWS_REGION, else us-east-1)
//   --reauth-threshold-ms MS   kafkajs' reauthenticationThreshold (default 10000: kafkajs
//                        re-authenticates when less than this is left of the session)
// Credentials come from the AWS SDK's default chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
// [/AWS_SESSION_TOKEN], or AWS_CONTAINER_CREDENTIALS_FULL_URI (mskmock's credentials endpoint).
// Each OAUTHBEARER token is described on stderr as `signer-token {"akid":..,"x_amz_expires":..}`.
//
// Duration mode: produce|consume --duration S (instead of --count) runs for S seconds:
// produce sends one record every ~50 ms (record i as above, acks=-1, each send awaited),
// consume fetches from the earliest offset and checks every record. Both keep going after
// an error and write JSON-line events to stdout as they happen:
//   {"event":"token","t":MS,"akid":..,"x_amz_date":..,"x_amz_expires":"..","expiry_ms":..}
//   {"event":"error","t":MS,"i":I,"message":M,"type":T,"code":C}    a failed send or fetch
//   {"event":"log-error","t":MS,"message":M}                          kafkajs logged an ERROR
// and end with {"produced"|"consumed": N, "errors": E, "logged_errors": L, ...} (exit 0).
'use strict'

const fs = require('fs')

const { Kafka, CompressionTypes, CompressionCodecs, Partitioners, logLevel } = require('kafkajs')

const COMPRESSION = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

// kafkajs implements only gzip itself; the other codecs come from separate packages. Each is
// registered on its own so that one that fails to load (native build) only breaks its codec;
// kafkajs then fails with "Compression type N not supported" when it is needed.
const codecLoadErrors = {}
function registerCodecs(CompressionCodecs) {
  const loaders = {
    snappy: () => require('kafkajs-snappy'),
    lz4: () => {
      const LZ4Codec = require('kafkajs-lz4')
      return new LZ4Codec().codec
    },
    zstd: () => require('@kafkajs/zstd')(),
  }
  for (const [name, load] of Object.entries(loaders)) {
    try {
      CompressionCodecs[COMPRESSION[name]] = load()
    } catch (e) {
      codecLoadErrors[name] = e.message
    }
  }
}

function parseArgs(argv) {
  const [command, ...rest] = argv
  const opts = { command }
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${JSON.stringify(a)}`)
    const name = a.slice(2)
    if (name === 'idempotent') {
      opts.idempotent = true
      continue
    }
    if (i + 1 >= rest.length) throw new Error(`option --${name} needs a value`)
    opts[name] = rest[++i]
  }
  return opts
}

function need(opts, name) {
  if (opts[name] === undefined) throw new Error(`missing --${name}`)
  return opts[name]
}

function needInt(opts, name, min) {
  const s = need(opts, name)
  if (!/^\d+$/.test(s) || Number(s) < min) throw new Error(`--${name} must be an integer >= ${min}`)
  return Number(s)
}

// kafkajs' console logger writes to stdout; send everything to stderr so that stdout carries
// only the result line.
const loggedErrors = []
let eventsOn = false // duration mode: events on stdout as they happen
const stderrLogCreator = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  // Retries are bounded on purpose (a test must fail rather than retry forever).
  if (message === 'Limiting retries for the idempotent producer may invalidate EoS guarantees') return
  process.stderr.write(`[${new Date().toISOString()} kafkajs ${label}] ${namespace}: ${message} ${JSON.stringify(extra)}\n`)
  if (label === 'ERROR') {
    const text = `${namespace}: ${message}${extra.error ? ` (${extra.error})` : ''}`
    loggedErrors.push(text)
    if (eventsOn) emit({ event: 'log-error', t: Date.now(), message: text })
  }
}

// ---- IAM: TLS, SASL mechanism, region ----

const PROTOCOLS = ['PLAINTEXT', 'SASL_SSL', 'SASL_PLAINTEXT']

// What a token says about itself: the presigned URL's access key, date and X-Amz-Expires.
function describeToken(token, expiryTime) {
  const url = new URL(Buffer.from(token, 'base64url').toString('utf8'))
  const q = url.searchParams
  return {
    akid: (q.get('X-Amz-Credential') || '').split('/')[0],
    x_amz_date: q.get('X-Amz-Date'),
    x_amz_expires: q.get('X-Amz-Expires'),
    session_token: q.has('X-Amz-Security-Token'),
    host: url.host,
    expiry_ms: expiryTime,
  }
}

function securityConfig(opts) {
  const proto = opts['security-protocol'] || 'PLAINTEXT'
  if (!PROTOCOLS.includes(proto)) throw new Error(`--security-protocol must be one of ${PROTOCOLS.join(', ')}`)
  if (proto === 'PLAINTEXT') {
    if (opts.mechanism !== undefined) throw new Error('--mechanism needs --security-protocol SASL_SSL or SASL_PLAINTEXT')
    return {}
  }
  const cfg = {}
  if (proto === 'SASL_SSL') cfg.ssl = opts.ca ? { ca: [fs.readFileSync(opts.ca)] } : true
  else if (opts.ca !== undefined) throw new Error('--ca needs --security-protocol SASL_SSL')
  const region = opts.region || process.env.AWS_REGION || 'us-east-1'
  const mech = need(opts, 'mechanism')
  if (mech === 'OAUTHBEARER') {
    const { generateAuthToken } = require('aws-msk-iam-sasl-signer-js')
    cfg.sasl = {
      mechanism: 'oauthbearer',
      // As the signer's README shows: a new token from the default credential chain each time
      // kafkajs (re-)authenticates.
      oauthBearerProvider: async () => {
        const { token, expiryTime } = await generateAuthToken({ region })
        const d = describeToken(token, expiryTime)
        process.stderr.write(`signer-token ${JSON.stringify({ t: Date.now(), ...d })}\n`)
        if (eventsOn) emit({ event: 'token', t: Date.now(), ...d })
        return { value: token }
      },
    }
  } else if (mech === 'AWS_MSK_IAM') {
    const { createMechanism } = require('@jm18457/kafkajs-msk-iam-authentication-mechanism')
    cfg.sasl = createMechanism({ region })
  } else {
    throw new Error(`--mechanism must be OAUTHBEARER or AWS_MSK_IAM (got ${mech})`)
  }
  return cfg
}

function makeKafka(opts, KafkaClass = Kafka) {
  return new KafkaClass({
    clientId: 'mskmock-test-kafkajs',
    brokers: need(opts, 'bootstrap').split(','),
    connectionTimeout: 5000,
    requestTimeout: 30000,
    logLevel: process.env.KAFKAJS_LOG_LEVEL ? Number(process.env.KAFKAJS_LOG_LEVEL) : logLevel.WARN,
    logCreator: stderrLogCreator,
    retry: { retries: 5 },
    ...(opts['reauth-threshold-ms'] !== undefined
      ? { reauthenticationThreshold: needInt(opts, 'reauth-threshold-ms', 0) }
      : {}),
    ...securityConfig(opts),
  })
}

const keyOf = i => `key-${i}`
const valueOf = i => `value-${i}-${'x'.repeat(i % 50)}`

async function createTopic(opts) {
  const topic = need(opts, 'topic')
  const partitions = needInt(opts, 'partitions', 1)
  const admin = makeKafka(opts).admin()
  await admin.connect()
  try {
    // replicationFactor -1: let the broker choose (MSK Serverless fixes it at 3).
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: -1 }],
      waitForLeaders: true,
      timeout: 30000,
    })
    if (!created) throw new Error(`topic ${topic} already exists (TOPIC_ALREADY_EXISTS)`)
  } finally {
    await admin.disconnect()
  }
  return { created: topic }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function durationMs(opts) {
  const s = need(opts, 'duration')
  if (!/^\d+(\.\d+)?$/.test(s) || Number(s) <= 0) throw new Error('--duration must be a number of seconds > 0')
  if (opts.count !== undefined) throw new Error('--duration and --count exclude each other')
  eventsOn = true
  return Number(s) * 1000
}

// produce --duration S: one record every ~50 ms, each send awaited; a failed send is reported
// and the same record is sent again at the next tick.
async function produceFor(opts) {
  const topic = need(opts, 'topic')
  const partitions = needInt(opts, 'partitions', 1)
  const codec = opts.compression || 'none'
  if (!(codec in COMPRESSION)) throw new Error(`unknown --compression ${codec}`)
  const until = Date.now() + durationMs(opts)
  const producer = makeKafka(opts).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  })
  let produced = 0
  let errors = 0
  let sends = 0
  const t0 = Date.now()
  await producer.connect()
  try {
    // i = produced: a record whose send failed is sent again at the next tick, so the
    // topic holds an unbroken sequence for consume to check
    for (let tick = 0; Date.now() < until; tick++) {
      const due = t0 + tick * 50
      if (due > Date.now()) await sleep(due - Date.now())
      const i = produced
      sends++
      try {
        const res = await producer.send({
          topic,
          acks: -1,
          timeout: 30000,
          compression: COMPRESSION[codec],
          messages: [{ partition: i % partitions, key: keyOf(i), value: valueOf(i), headers: { idx: String(i), codec } }],
        })
        for (const r of res) {
          if (r.errorCode !== 0) throw new Error(`produce to ${r.topicName}/${r.partition}: error code ${r.errorCode}`)
        }
        produced++
      } catch (e) {
        errors++
        emit(errorEvent(e, { t: Date.now(), i }))
      }
    }
  } finally {
    await producer.disconnect()
  }
  return { produced, sends, errors, logged_errors: loggedErrors.length }
}

async function produce(opts) {
  if (opts.duration !== undefined) return produceFor(opts)
  const topic = need(opts, 'topic')
  const count = needInt(opts, 'count', 0)
  const partitions = needInt(opts, 'partitions', 1)
  const codec = need(opts, 'compression')
  if (!(codec in COMPRESSION)) throw new Error(`unknown --compression ${codec}`)
  if (codecLoadErrors[codec]) throw new Error(`codec ${codec} failed to load: ${codecLoadErrors[codec]}`)

  const producer = makeKafka(opts).producer({
    // Every record names its partition; the partitioner is never consulted.
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    idempotent: !!opts.idempotent,
    // kafkajs requires maxInFlightRequests 1 for idempotence to keep ordering.
    maxInFlightRequests: opts.idempotent ? 1 : undefined,
  })
  await producer.connect()
  try {
    // Send in chunks so each partition receives several record batches (several produce
    // requests, several sequence ranges for the idempotent producer).
    const chunk = 250
    for (let start = 0; start < count; start += chunk) {
      const messages = []
      for (let i = start; i < Math.min(count, start + chunk); i++) {
        messages.push({
          partition: i % partitions,
          key: keyOf(i),
          value: valueOf(i),
          headers: { idx: String(i), codec },
        })
      }
      const res = await producer.send({
        topic,
        messages,
        acks: -1,
        timeout: 30000,
        compression: COMPRESSION[codec],
      })
      for (const r of res) {
        if (r.errorCode !== 0) throw new Error(`produce to ${r.topicName}/${r.partition}: error code ${r.errorCode}`)
      }
    }
  } finally {
    await producer.disconnect()
  }
  return { produced: count }
}

function headerString(headers, name) {
  const v = headers[name]
  if (v === undefined) return undefined
  if (Array.isArray(v)) throw new Error(`header ${name} appears ${v.length} times`)
  return v.toString()
}

// kafkajs has no public consumer without a consumer group: its Consumer always joins a group
// (JoinGroup/SyncGroup/OffsetFetch) before fetching, while consume reads without one
// (group-consume below is the group consumer). So consume drives kafkajs' own internal
// Cluster/Broker objects directly (the same code path its consumer uses for ListOffsets and
// Fetch): refresh metadata, ListOffsets(earliest) per partition, then Fetch from each
// partition's leader until N records are read. These are internals of kafkajs 2.2.4, which
// package.json pins exactly.
async function consume(opts) {
  const topic = need(opts, 'topic')
  const timed = opts.duration !== undefined
  const until = timed ? Date.now() + durationMs(opts) : 0
  const count = timed ? Infinity : needInt(opts, 'count', 0)
  const partitions = needInt(opts, 'partitions', 1)
  const deadline = Date.now() + 60000
  let errors = 0

  const kafka = makeKafka(opts)
  const createClusterSym = Object.getOwnPropertySymbols(kafka).find(
    s => s.description === 'private:Kafka:createCluster'
  )
  if (!createClusterSym) throw new Error('kafkajs internals changed: no private:Kafka:createCluster')
  const cluster = kafka[createClusterSym]({
    metadataMaxAge: 300000,
    allowAutoTopicCreation: false,
    isolationLevel: 1, // READ_COMMITTED, the Java consumer's default too
  })

  await cluster.connect()
  try {
    await cluster.addTargetTopic(topic)
    const known = cluster.findTopicPartitionMetadata(topic).length
    if (known !== partitions) throw new Error(`metadata reports ${known} partitions for ${topic}, expected ${partitions}`)

    const all = Array.from({ length: partitions }, (_, p) => p)
    const [earliest] = await cluster.fetchTopicsOffset([
      { topic, fromBeginning: true, partitions: all.map(p => ({ partition: p })) },
    ])
    const nextOffset = {}
    const expectedOffset = {}
    const perPartition = {}
    const nextIndex = {} // next expected i in each partition: p, p+P, p+2P, ...
    for (const p of all) {
      perPartition[String(p)] = 0
      nextIndex[p] = p
      expectedOffset[p] = 0
    }
    for (const { partition, offset } of earliest.partitions) {
      if (String(offset) !== '0') throw new Error(`partition ${partition}: earliest offset ${offset}, expected 0`)
      nextOffset[partition] = String(offset)
    }
    for (const p of all) if (nextOffset[p] === undefined) throw new Error(`no earliest offset for partition ${p}`)

    const expectedIn = p => (count > p ? Math.floor((count - 1 - p) / partitions) + 1 : 0)
    let consumed = 0
    while (timed ? Date.now() < until : consumed < count) {
      if (!timed && Date.now() > deadline) {
        throw new Error(`timed out after 60 s with ${consumed}/${count} records: ${JSON.stringify(perPartition)}`)
      }
      const pending = all.filter(p => perPartition[String(p)] < expectedIn(p))
      const byLeader = cluster.findLeaderForPartitions(topic, pending)
      const round = Promise.all(
        Object.entries(byLeader).map(async ([nodeId, parts]) => {
          const broker = await cluster.findBroker({ nodeId })
          const { responses } = await broker.fetch({
            isolationLevel: 1,
            maxWaitTime: 500,
            minBytes: 1,
            maxBytes: 10485760,
            topics: [
              {
                topic,
                partitions: parts.map(p => ({ partition: p, fetchOffset: nextOffset[p], maxBytes: 1048576 })),
              },
            ],
          })
          for (const { topicName, partitions: pds } of responses) {
            if (topicName !== topic) throw new Error(`fetch returned unrequested topic ${topicName}`)
            for (const pd of pds) {
              const p = pd.partition
              if (!parts.includes(p)) throw new Error(`fetch returned unrequested partition ${p}`)
              if (pd.errorCode !== 0) throw new Error(`fetch ${topic}/${p}: error code ${pd.errorCode}`)
              const fetched = BigInt(nextOffset[p])
              for (const m of pd.messages) {
                const off = BigInt(m.offset)
                if (off < fetched) continue // earlier records of a batch that starts before fetchOffset
                if (perPartition[String(p)] >= expectedIn(p)) break // read N in all; ignore any extra
                if (m.isControlRecord) throw new Error(`unexpected control record at ${p}@${off}`)
                const i = nextIndex[p]
                const where = `partition ${p} offset ${off}`
                if (off !== BigInt(expectedOffset[p])) {
                  throw new Error(`${where}: expected offset ${expectedOffset[p]} (offsets must be consecutive from 0)`)
                }
                const key = m.key == null ? null : m.key.toString()
                const value = m.value == null ? null : m.value.toString()
                if (key !== keyOf(i)) throw new Error(`${where}: key ${JSON.stringify(key)}, expected ${keyOf(i)}`)
                if (value !== valueOf(i)) throw new Error(`${where}: value ${JSON.stringify(value)}, expected ${JSON.stringify(valueOf(i))}`)
                const names = Object.keys(m.headers || {})
                if (names.length !== 2 || !names.includes('idx') || !names.includes('codec')) {
                  throw new Error(`${where}: headers ${JSON.stringify(names)}, expected [idx, codec]`)
                }
                if (headerString(m.headers, 'idx') !== String(i)) {
                  throw new Error(`${where}: header idx ${headerString(m.headers, 'idx')}, expected ${i}`)
                }
                const hcodec = headerString(m.headers, 'codec')
                if (!(hcodec in COMPRESSION)) throw new Error(`${where}: header codec ${JSON.stringify(hcodec)}`)
                nextIndex[p] = i + partitions
                expectedOffset[p] += 1
                nextOffset[p] = String(off + 1n)
                perPartition[String(p)] += 1
                consumed += 1
              }
            }
          }
        })
      )
      if (!timed) {
        await round
        continue
      }
      // Duration mode: a failed fetch is reported and retried; a wrong record still fails.
      try {
        await round
      } catch (e) {
        if (/^partition \d+ offset|unexpected control record|unrequested/.test(e.message)) throw e
        errors++
        emit(errorEvent(e, { t: Date.now() }))
        await sleep(200)
      }
    }
    if (timed) return { consumed, per_partition: perPartition, errors, logged_errors: loggedErrors.length }
    return { consumed, per_partition: perPartition }
  } finally {
    await cluster.disconnect()
  }
}

// group-consume: a kafkajs consumer in group G subscribed to T (from the earliest offset when
// nothing is committed), with kafkajs' only assigner, RoundRobinAssigner. Auto-commit is off;
// each batch's offsets are committed (OffsetCommit) before the next batch (sync), or the commit
// is sent without waiting for it (async), or nothing is committed (none). kafkajs has no static
// membership, so --instance-id is refused.
// --kafkajs picks the kafkajs release: 2.2.4 (package "kafkajs") or 2.2.1 (package
// "kafkajs-2.2.1", an npm alias), whose RoundRobinAssigner declares ConsumerProtocolSubscription
// v1 but writes the v0 body (kafkajs #1449; MSK Serverless answers JoinGroup with
// INVALID_REQUEST). One JSON object per stdout line, written as it happens (stdout is a pipe or
// file, which Node writes synchronously):
//
//   {"event":"assigned","partitions":[...]}       full sorted assignment, first join and changes
//   {"event":"record","p":P,"o":OFFSET,"k":KEY}   every record
//   {"event":"committed","offsets":{"P":NEXT}}    after each successful commit
//   {"event":"error","message":M,"type":T,"code":C,"restart":R}   a consumer crash (type and
//                                                 code of the Kafka error when there is one;
//                                                 restart: whether kafkajs restarts it), or a
//                                                 failed commit
//   {"event":"closed"}                            after a clean close (LeaveGroup sent)
//
// Runs until N records are consumed, stdin reaches EOF, or SIGTERM/SIGINT, then disconnects
// (leaving the group) and exits 0. A crash kafkajs does not restart from ends the program with
// the error event and exit status 1.
const KAFKAJS_PACKAGES = { '2.2.4': 'kafkajs', '2.2.1': 'kafkajs-2.2.1' }

function emit(event) {
  process.stdout.write(JSON.stringify(event) + '\n')
}

// The Kafka error (type, code) behind a kafkajs error, which may wrap it in .cause.
function errorEvent(err, extra = {}) {
  const event = { event: 'error', message: String((err && err.message) || err) }
  for (let e = err, depth = 0; e && depth < 10; e = e.cause, depth++) {
    if (e.type !== undefined || e.code !== undefined) {
      if (e.type !== undefined) event.type = e.type
      if (e.code !== undefined) event.code = e.code
      if (e !== err) event.message += ` (caused by ${e.name}: ${e.message})`
      break
    }
  }
  if (err && err.name) event.name = err.name
  return { ...event, ...extra }
}

async function groupConsume(opts) {
  const version = opts.kafkajs || '2.2.4'
  const pkg = KAFKAJS_PACKAGES[version]
  if (!pkg) throw new Error(`--kafkajs must be one of ${Object.keys(KAFKAJS_PACKAGES).join(', ')}`)
  const kjs = require(pkg)
  const installed = require(`${pkg}/package.json`).version
  if (installed !== version) throw new Error(`package ${pkg} is kafkajs ${installed}, expected ${version}`)
  if (kjs.CompressionCodecs !== CompressionCodecs) registerCodecs(kjs.CompressionCodecs)

  const groupId = need(opts, 'group')
  const topic = need(opts, 'topic')
  const assignor = opts.assignor || 'RoundRobinAssigner'
  if (assignor !== 'RoundRobinAssigner' && assignor !== 'roundrobin') {
    throw new Error(`--assignor: kafkajs has only RoundRobinAssigner (got ${assignor})`)
  }
  const sessionTimeout = opts['session-timeout-ms'] === undefined ? 10000 : needInt(opts, 'session-timeout-ms', 1)
  const maxRecords = opts['max-records'] === undefined ? 0 : needInt(opts, 'max-records', 0)
  const commitMode = opts.commit || 'sync'
  if (!['sync', 'async', 'none'].includes(commitMode)) throw new Error(`--commit must be sync, async or none (got ${commitMode})`)
  if (opts['instance-id'] !== undefined) throw new Error('--instance-id: kafkajs has no static membership (group.instance.id)')

  const consumer = makeKafka(opts, kjs.Kafka).consumer({
    groupId,
    sessionTimeout,
    heartbeatInterval: Math.max(100, Math.min(1000, Math.floor(sessionTimeout / 3))),
    maxWaitTimeInMs: 500, // a long poll no longer than this keeps heartbeats and rebalances quick
    allowAutoTopicCreation: false,
    partitionAssigners: [kjs.PartitionAssigners.roundRobin],
  })

  let settle
  const finished = new Promise((resolve, reject) => (settle = { resolve, reject }))
  let stopping = false
  let started = Promise.resolve()
  const stop = () => {
    if (stopping) return
    stopping = true
    // Let a join in progress finish (or crash) first: kafkajs only leaves a group it has joined.
    started
      .catch(() => {})
      .then(() => consumer.disconnect())
      .then(() => settle.resolve(), settle.reject)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  process.stdin.on('end', stop)
  process.stdin.on('error', stop)
  process.stdin.resume()

  let shown = null
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const partitions = [...(payload.memberAssignment[topic] || [])].sort((a, b) => a - b)
    const key = JSON.stringify(partitions)
    if (key !== shown) {
      shown = key
      emit({ event: 'assigned', partitions })
    }
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    // kafkajs has already disconnected the consumer; with restart it starts over by itself.
    emit(errorEvent(payload.error, { restart: payload.restart }))
    if (!payload.restart && !stopping) {
      stopping = true
      settle.reject(new Error(`consumer crashed and kafkajs does not restart it: ${payload.error.message}`))
    }
  })

  let consumed = 0
  const eachBatch = async ({ batch, resolveOffset, isRunning, isStale }) => {
    const p = batch.partition
    let last = null
    for (const m of batch.messages) {
      if (stopping || (maxRecords > 0 && consumed >= maxRecords) || !isRunning() || isStale()) break
      emit({ event: 'record', p, o: Number(m.offset), k: m.key == null ? null : m.key.toString() })
      resolveOffset(m.offset)
      last = m.offset
      consumed += 1
      if (maxRecords > 0 && consumed >= maxRecords) {
        setImmediate(stop) // disconnect waits for this eachBatch to return
        break
      }
    }
    if (last === null || commitMode === 'none') return
    const next = (BigInt(last) + 1n).toString()
    const committing = consumer.commitOffsets([{ topic, partition: p, offset: next }]).then(
      () => emit({ event: 'committed', offsets: { [p]: Number(next) } }),
      e => {
        emit(errorEvent(e, { during: 'commit' }))
        throw e
      }
    )
    if (commitMode === 'sync') await committing
    else committing.catch(() => {}) // async: reported above, not retried
  }

  started = (async () => {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch })
  })()
  started.catch(e => {
    if (!stopping) {
      stopping = true
      emit(errorEvent(e))
      settle.reject(e)
    }
  })
  await finished
  return { event: 'closed' }
}

// Admin calls a test asserts on, failures included: {"ok": false, "error": "<name>: <message>"}.
async function withAdmin(opts, fn) {
  const admin = makeKafka(opts).admin()
  await admin.connect()
  try {
    return { ok: true, ...(await fn(admin)) }
  } catch (e) {
    const inner = e.partitions ? e.partitions.map(p => `${p.error.type || p.error.name}`).join(',') : ''
    return { ok: false, error: `${e.name}: ${e.message}${inner ? ` [${inner}]` : ''}` }
  } finally {
    await admin.disconnect()
  }
}

async function deleteRecords(opts) {
  const topic = need(opts, 'topic')
  const partition = needInt(opts, 'partition', 0)
  const offset = need(opts, 'offset')
  return withAdmin(opts, async admin => {
    // deleteTopicRecords looks the leaders up in the metadata the client already has
    await admin.fetchTopicMetadata({ topics: [topic] })
    await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset }] })
    const offsets = await admin.fetchTopicOffsets(topic)
    const p = offsets.find(o => o.partition === partition)
    return { low: Number(p.low), high: Number(p.high) }
  })
}

async function listReassignments(opts) {
  const topics = opts.topic ? [{ topic: opts.topic, partitions: [needInt(opts, 'partition', 0)] }] : undefined
  return withAdmin(opts, async admin => {
    const res = await admin.listPartitionReassignments(topics ? { topics } : {})
    return { topics: res.topics }
  })
}

async function main() {
  registerCodecs(CompressionCodecs)
  const opts = parseArgs(process.argv.slice(2))
  const commands = {
    'create-topic': createTopic,
    produce,
    consume,
    'group-consume': groupConsume,
    'delete-records': deleteRecords,
    'list-reassignments': listReassignments,
    'txn-transform': o => require('./txn').txnTransform(o, { makeKafka, need, needInt, Partitioners }),
    'aws-calls': o => require('./aws-calls').awsCalls(o, { need }),
    'aws-serverless': o => require('./aws-serverless').awsServerless(o, { need }),
  }
  const run = commands[opts.command]
  if (!run) {
    throw new Error('usage: client (create-topic|produce|consume|group-consume|delete-records|list-reassignments|txn-transform|aws-calls|aws-serverless)' +
      ' --bootstrap B --topic T ...')
  }
  const result = await run(opts)
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().then(
  () => process.exit(0),
  err => {
    process.stderr.write(`error: ${err && err.stack ? err.stack : err}\n`)
    // KafkaJSAggregateError ("Topic creation errors") carries the per-resource errors, whose
    // messages (e.g. TOPIC_AUTHORIZATION_FAILED's) its stack does not show.
    for (const e of (err && Array.isArray(err.errors) ? err.errors : [])) {
      process.stderr.write(`  caused by: ${e && e.type ? e.type + ': ' : ''}${e && e.message ? e.message : e}\n`)
    }
    process.exit(1)
  }
)
