// The Node.js Testcontainers module (docker/testcontainers/node) as a user would use it: one line
// starts mskmock on ephemeral host ports, then kafkajs round trips in plaintext and over
// SASL_SSL with the official MSK IAM signer.
//
//   MSKMOCK_IMAGE=mskmock:test node --test
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { IAM_PORT, MskMockContainer, PLAINTEXT_PORT } from '@mskmock/testcontainers'
import { generateAuthTokenFromCredentialsProvider } from 'aws-msk-iam-sasl-signer-js'
import { Kafka, Partitioners, logLevel } from 'kafkajs'

const image = process.env.MSKMOCK_IMAGE ?? 'mskmock:test'
let msk

before(async () => {
  msk = await new MskMockContainer(image).start()
})

after(async () => {
  await msk?.stop() // stops and removes it
})

const portOf = (bootstrap) => Number(bootstrap.split(':').pop())

const getJson = async (url) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) })
  assert.equal(res.status, 200, url)
  return res.json()
}

test('ports are Docker-picked and advertised', async () => {
  const plain = portOf(msk.getBootstrapServers())
  const iam = portOf(msk.getIamBootstrapServers())
  // nothing bound them: Docker picked the host ports, never the container's own
  assert.notEqual(plain, PLAINTEXT_PORT)
  assert.notEqual(iam, IAM_PORT)
  const { listeners } = await getJson(`${msk.getAdminUrl()}/v1/listeners`)
  const advertised = Object.fromEntries(listeners.map((l) => [l.name, l.advertised_ports]))
  assert.deepEqual(advertised.external, [plain])
  assert.deepEqual(advertised.external_iam, [iam])
})

test('plaintext round trip', { timeout: 60_000 }, async () => {
  await roundTrip(new Kafka({ clientId: 'plain', brokers: msk.getBootstrapServers().split(','), logLevel: logLevel.WARN }), 'plain')
})

test('IAM round trip', { timeout: 60_000 }, async () => {
  const credentials = { accessKeyId: msk.getAccessKeyId(), secretAccessKey: msk.getSecretAccessKey() }
  const kafka = new Kafka({
    clientId: 'iam',
    brokers: msk.getIamBootstrapServers().split(','),
    ssl: { ca: [msk.getCaPem()] },
    sasl: {
      mechanism: 'oauthbearer',
      // a new token at every (re-)authentication, as the signer's README shows
      oauthBearerProvider: async () => {
        const { token } = await generateAuthTokenFromCredentialsProvider({
          region: msk.getRegion(),
          awsCredentialsProvider: async () => credentials,
        })
        return { value: token }
      },
    },
    logLevel: logLevel.WARN,
  })
  await roundTrip(kafka, 'iam')
})

test('the credentials URI serves the role', async () => {
  const creds = await getJson(msk.getCredentialsUri())
  assert.match(creds.AccessKeyId, /^ASIA/)
  assert.ok(creds.Token)
})

test('profile and config become environment; bad values are refused', () => {
  const c = new MskMockContainer(image).withProfile('provisioned').withConfig('log.level', 'debug')
  assert.equal(c.environment.MSKMOCK_PROFILE, 'provisioned')
  assert.equal(c.environment.MSKMOCK_LOG_LEVEL, 'debug')
  assert.throws(() => c.withProfile('dedicated'), RangeError)
  assert.throws(() => c.withBrokerCount(7), RangeError)
})

// Creates a topic, produces three records and reads them back in a consumer group.
async function roundTrip(kafka, topic) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true }), true)
  } finally {
    await admin.disconnect()
  }

  const want = ['one', 'two', 'three']
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  try {
    await producer.send({ topic, messages: want.map((value) => ({ value })) })
  } finally {
    await producer.disconnect()
  }

  const consumer = kafka.consumer({ groupId: `${topic}-readers` })
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    const got = []
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${got.length} of ${want.length} in 30 s`)), 30_000)
      const eachMessage = async ({ message }) => {
        got.push(message.value.toString())
        if (got.length === want.length) resolve(clearTimeout(timer))
      }
      consumer.run({ eachMessage }).catch(reject)
    })
    assert.deepEqual(got, want)
  } finally {
    await consumer.disconnect() // leaves the group
  }
}
