// kafkajs transactional consume-transform-produce (client.js dispatches txn-transform here).
//
//   txn-transform --bootstrap B --group G --input T --output O --transactional-id ID
//                 [--batch N] [--abort-every K] [--init-timeout S] [--timeout S]
//     -> {"committed_txns": C, "aborted_txns": A, "records_committed": R, "records_aborted": X,
//         "end_offsets": {"P": off}, "committed_offsets": {"P": off}}
//
// A kafkajs consumer of group G (autoCommit off, eachBatch) reads T. kafkajs consumers read
// committed by default (isolationLevel READ_COMMITTED unless readUncommitted: true), so nothing
// is set for that. Each fetched batch of a partition is cut into chunks of up to N records
// (default 20); each chunk is one transaction of a transactional producer (transactionalId ID,
// idempotent, maxInFlightRequests 1, transactionTimeout 30 s): producer.transaction(),
// transaction.send() of every record to O with the same key and partition, the value
// upper-cased and the input's headers plus src = "<partition>:<offset>",
// transaction.sendOffsets({consumerGroupId: G, topics: [{topic: T, partitions: [{partition,
// offset: next}]}]}), transaction.commit(), and only then resolveOffset. With --abort-every K
// every K-th transaction calls transaction.abort() instead (its records were acknowledged, so
// they are aborted records in O's log); the group's committed offsets are read back
// (admin.fetchOffsets) and must still be those before the chunk, and the consumer seeks back to
// the chunk's first offset, which is processed again in a later transaction. The first offset
// of every chunk must continue the committed ones. Runs until the committed offsets reach T's
// end offsets (admin.fetchTopicOffsets when it starts). The producer id (InitProducerId with
// the transactional id, at the first producer.transaction()) is loaded before consuming, within
// --init-timeout S (default 10); the whole run is bounded by --timeout S (default 60).
'use strict'

function seconds(opts, name, dflt) {
  const s = opts[name] === undefined ? String(dflt) : opts[name]
  if (!/^\d+(\.\d+)?$/.test(s) || Number(s) <= 0) throw new Error(`--${name} must be a number of seconds > 0`)
  return Number(s) * 1000
}

function withTimeout(promise, ms, what) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function describeError(e) {
  let text = `${e && e.name ? e.name : 'Error'}: ${e && e.message ? e.message : e}`
  for (let c = e && e.cause, n = 0; c && n < 3; c = c.cause, n++) text += ` (caused by ${c.name}: ${c.message})`
  if (e && e.type) text += ` [${e.type}${e.code !== undefined ? ` ${e.code}` : ''}]`
  return text
}

async function txnTransform(opts, h) {
  const groupId = h.need(opts, 'group')
  const input = h.need(opts, 'input')
  const output = h.need(opts, 'output')
  const transactionalId = h.need(opts, 'transactional-id')
  const batchSize = opts.batch === undefined ? 20 : h.needInt(opts, 'batch', 1)
  const abortEvery = opts['abort-every'] === undefined ? 0 : h.needInt(opts, 'abort-every', 0)
  const initTimeoutMs = seconds(opts, 'init-timeout', 10)
  const timeoutMs = seconds(opts, 'timeout', 60)
  const started = Date.now()

  const kafka = h.makeKafka(opts)
  const admin = kafka.admin()
  const producer = kafka.producer({
    transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: 30000,
    createPartitioner: h.Partitioners.DefaultPartitioner,
  })
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: 10000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
    // isolationLevel: READ_COMMITTED is kafkajs' default
  })

  let failure = null
  let stopping = false
  let settle
  const finished = new Promise((resolve, reject) => (settle = { resolve, reject }))
  const fail = e => {
    if (failure) return
    failure = e
    stop()
  }
  let consumerRunning = Promise.resolve()
  function stop() {
    if (stopping) return
    stopping = true
    consumerRunning
      .catch(() => {})
      .then(() => consumer.disconnect())
      .catch(() => {})
      .then(() => (failure ? settle.reject(failure) : settle.resolve()))
  }

  const next = {} // partition -> next offset, as committed by the group
  const end = {}
  const counts = { committed_txns: 0, aborted_txns: 0, records_committed: 0, records_aborted: 0 }
  let txnNo = 0
  const done = () => Object.keys(end).every(p => next[p] >= end[p])
  const committedOffsets = async () => {
    const got = {}
    let res
    try {
      res = await admin.fetchOffsets({ groupId, topics: [input] })
    } catch (e) {
      if (e.type === 'GROUP_ID_NOT_FOUND') return got // some brokers say so for a group that never committed
      throw e
    }
    for (const t of res) {
      for (const p of t.partitions) got[p.partition] = Number(p.offset) >= 0 ? Number(p.offset) : 0
    }
    return got
  }

  const deadline = setTimeout(
    () =>
      fail(
        new Error(
          `timed out after ${timeoutMs / 1000} s: committed offsets ${JSON.stringify(next)}, end offsets ` +
            `${JSON.stringify(end)}, ${counts.committed_txns} transactions committed, ${counts.aborted_txns} aborted`
        )
      ),
    timeoutMs
  )

  finished.catch(() => {}) // awaited below; a failure during the set-up must not go unhandled
  const setUp = async () => {
    await admin.connect()
    for (const o of await admin.fetchTopicOffsets(input)) end[o.partition] = Number(o.high)
    if (Object.keys(end).length === 0) throw new Error(`topic ${input} has no partitions`)
    const start = await committedOffsets()
    for (const p of Object.keys(end)) next[p] = start[p] || 0

    await producer.connect()
    const t0 = Date.now()
    try {
      // The first transaction() sends InitProducerId with the transactional id; an empty
      // transaction aborts without a request.
      const first = await withTimeout(producer.transaction(), initTimeoutMs, 'producer.transaction() (InitProducerId)')
      await first.abort()
    } catch (e) {
      throw new Error(
        `loading the producer id (transactional id ${transactionalId}) failed after ` +
          `${((Date.now() - t0) / 1000).toFixed(1)} s: ${describeError(e)}`
      )
    }

    const eachBatch = async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      const p = batch.partition
      try {
        let msgs = batch.messages.filter(m => Number(m.offset) >= next[p])
        if (msgs.length === 0) return
        if (Number(msgs[0].offset) !== next[p]) {
          if (isStale()) return // a seek is pending: kafkajs fetches again from there
          throw new Error(
            `partition ${p}: fetched from offset ${msgs[0].offset}, but the committed offset is ${next[p]} ` +
              '(records skipped)'
          )
        }
        for (let i = 0; i < msgs.length; i += batchSize) {
          if (stopping || !isRunning() || isStale()) return
          const chunk = msgs.slice(i, i + batchSize)
          chunk.forEach((m, k) => {
            if (Number(m.offset) !== next[p] + k) {
              throw new Error(`partition ${p}: offset ${m.offset} where ${next[p] + k} was expected`)
            }
          })
          const firstOffset = Number(chunk[0].offset)
          const lastOffset = Number(chunk[chunk.length - 1].offset)
          txnNo += 1
          const no = txnNo
          const abort = abortEvery > 0 && no % abortEvery === 0
          const txn = await producer.transaction()
          try {
            await txn.send({
              topic: output,
              acks: -1,
              messages: chunk.map(m => ({
                key: m.key,
                value: m.value == null ? null : Buffer.from(m.value.toString('utf8').toUpperCase()),
                partition: p,
                headers: { ...(m.headers || {}), src: `${p}:${m.offset}` },
              })),
            })
            await txn.sendOffsets({
              consumerGroupId: groupId,
              topics: [{ topic: input, partitions: [{ partition: p, offset: String(lastOffset + 1) }] }],
            })
            if (abort) {
              await txn.abort()
            } else {
              await txn.commit()
            }
          } catch (e) {
            if (txn.isActive()) await txn.abort().catch(() => {})
            throw new Error(`transaction #${no} (${abort ? 'abort' : 'commit'}): ${describeError(e)}`)
          }
          if (abort) {
            counts.aborted_txns += 1
            counts.records_aborted += chunk.length
            const got = await committedOffsets()
            if ((got[p] || 0) !== firstOffset) {
              throw new Error(
                `after aborting transaction #${no} the committed offset of partition ${p} is ${got[p]}, expected ${firstOffset}`
              )
            }
            consumer.seek({ topic: input, partition: p, offset: String(firstOffset) })
            return
          }
          counts.committed_txns += 1
          counts.records_committed += chunk.length
          next[p] = lastOffset + 1
          resolveOffset(String(lastOffset))
          await heartbeat()
          if (done()) {
            setImmediate(stop) // disconnect waits for this eachBatch to return
            return
          }
        }
      } catch (e) {
        fail(e)
      }
    }

    if (done()) {
      stop()
    } else {
      consumerRunning = (async () => {
        await consumer.connect()
        await consumer.subscribe({ topic: input, fromBeginning: true })
        await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch })
      })()
      consumerRunning.catch(fail)
      consumer.on(consumer.events.CRASH, ({ payload }) => fail(payload.error))
    }
  }

  try {
    // The deadline (or a failure) settles `finished` also while the set-up still waits.
    await Promise.race([setUp().then(() => finished), finished])
  } finally {
    clearTimeout(deadline)
    await Promise.allSettled([producer.disconnect(), admin.disconnect()])
  }
  if (!done()) throw new Error(`stopped with committed offsets ${JSON.stringify(next)}, end ${JSON.stringify(end)}`)
  process.stderr.write(`txn-transform done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  return {
    ...counts,
    end_offsets: end,
    committed_offsets: next,
  }
}

module.exports = { txnTransform }
