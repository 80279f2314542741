// A Testcontainers recipe: mskmock in a container, a kafkajs client on the host.
//
//   MSKMOCK_IMAGE=mskmock:test node --test
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { after, before, test } from 'node:test'
import { Kafka, Partitioners, logLevel } from 'kafkajs'
import { GenericContainer, Wait } from 'testcontainers'

// A port nothing on the host listens on, picked by the kernel.
const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer().once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })

let container
let kafka

before(async () => {
  // Kafka clients dial the address Metadata advertises: the external listener's
  // port must be the same in the container and on the host
  const port = await freePort()
  container = await new GenericContainer(process.env.MSKMOCK_IMAGE ?? 'mskmock:test')
    .withEnvironment({
      MSKMOCK_BROKER_COUNT: '1',
      MSKMOCK_EXTERNAL_PORT: String(port),
      MSKMOCK_EXTERNAL_ADVERTISED_HOST: 'localhost',
      // topics created with replication factor -1 get 3, more than one broker has
      MSKMOCK_DEFAULT_REPLICATION_FACTOR: '1',
      // a new group's first rebalance waits 3 s for more members; a test has one
      MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withExposedPorts({ container: port, host: port })
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(30_000)
    .start()
  kafka = new Kafka({ clientId: 'recipe', brokers: [`localhost:${port}`], logLevel: logLevel.WARN })
})

after(async () => {
  await container?.stop() // stops and removes it
})

test('produce and consume in a consumer group', { timeout: 60_000 }, async () => {
  // MSK Serverless creates no topic on first use: create it
  const topic = 'orders'
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

  const consumer = kafka.consumer({ groupId: 'orders-reader' })
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
})
