// Creates a topic, produces 10 records and reads them back in a consumer group: kafkajs against
// mskmock (or MSK). Plaintext by default; IAM=1 for SASL_SSL with OAUTHBEARER tokens from AWS's
// signer (aws-msk-iam-sasl-signer-js). Prints one JSON line; exits 1 on any failure, within 60 s.
'use strict'

const crypto = require('crypto')
const fs = require('fs')
const { Kafka, Partitioners, logLevel } = require('kafkajs')
const { generateAuthToken } = require('aws-msk-iam-sasl-signer-js')

const COUNT = 10
const TIMEOUT_MS = 60000
const IAM = process.env.IAM === '1'
const BOOTSTRAP = process.env.BOOTSTRAP || (IAM ? 'localhost:9098' : 'localhost:9092')
// The region tokens are signed for: mskmock's iam.region (us-east-1 unless set), or your cluster's.
const REGION = process.env.AWS_REGION || 'us-east-1'

function kafka () {
  const config = {
    clientId: 'mskmock-example',
    brokers: BOOTSTRAP.split(','),
    logLevel: logLevel.WARN // kafkajs logs every join and commit at INFO
  }
  if (IAM) {
    // mskmock's local CA. Empty for MSK, whose certificates chain to Node's own CAs.
    const caFile = process.env.CA_FILE ?? '../../data/tls/ca.pem'
    config.ssl = caFile ? { ca: [fs.readFileSync(caFile)] } : true
    config.sasl = {
      mechanism: 'oauthbearer',
      // A new token at every (re-)authentication, signed with the credentials of the AWS SDK's
      // default chain (environment, shared config, container or instance credentials).
      oauthBearerProvider: async () => ({ value: (await generateAuthToken({ region: REGION })).token })
    }
  }
  return new Kafka(config)
}

async function main () {
  const topic = 'example-node-' + crypto.randomBytes(4).toString('hex')
  const client = kafka()

  // MSK Serverless creates no topic on first use. The replication factor is left to the broker
  // (kafkajs sends -1): MSK Serverless allows only 3, its default.
  const admin = client.admin()
  await admin.connect()
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true })
  } finally {
    await admin.disconnect()
  }

  const producer = client.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  try {
    const messages = Array.from({ length: COUNT }, (_, i) => ({ key: `key-${i}`, value: `value-${i}` }))
    await producer.send({ topic, messages })
  } finally {
    await producer.disconnect()
  }

  const consumer = client.consumer({ groupId: topic })
  const consumed = new Set()
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise((resolve, reject) => {
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error))
      consumer.run({
        eachMessage: async ({ message }) => {
          consumed.add(message.value.toString())
          if (consumed.size === COUNT) resolve()
        }
      }).catch(reject)
    })
  } finally {
    await consumer.disconnect() // commits the offsets it consumed
  }

  console.log(JSON.stringify({ lang: 'node', topic, iam: IAM, produced: COUNT, consumed: consumed.size }))
}

// kafkajs retries an unreachable broker for minutes; the example gives up sooner.
setTimeout(() => {
  console.error(`example failed: not done within ${TIMEOUT_MS / 1000} s (is the broker at ${BOOTSTRAP}?)`)
  process.exit(1)
}, TIMEOUT_MS).unref()

main().then(() => process.exit(0), (e) => {
  console.error('example failed:', e.message || e)
  process.exit(1)
})
