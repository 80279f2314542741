// mskmock, a local AWS MSK Serverless broker, as a Testcontainers module: its external
// listeners on ephemeral host ports, an IAM key and role of its own, and its CA.
//
//   const msk = await new MskMockContainer('mskmock:latest').start()
//   const kafka = new Kafka({ brokers: msk.getBootstrapServers().split(',') })
//
// No image is published: build it from the mskmock repository with
// docker build -f docker/Dockerfile -t mskmock:latest . (docs/containers.md).
import { randomInt } from 'node:crypto'
import { AbstractStartedContainer, GenericContainer, Wait, getContainerRuntimeClient } from 'testcontainers'
import { firstFileOf } from './tar.js'

export const DEFAULT_IMAGE = 'mskmock:latest'
// The external listeners bind these inside the container, broker i on port + i; Docker publishes
// each on a host port it picks and start() tells the broker which. IAM starts 100 above so the
// two ranges never meet.
export const PLAINTEXT_PORT = 19092
export const IAM_PORT = 19192
export const ADMIN_PORT = 9080
export const CREDENTIALS_PORT = 9180
// The image's own listeners use 9092-9097 and 9098 up: more brokers would collide.
export const MAX_BROKERS = 6
export const ROLE = 'testcontainers'
const IDENTITIES_PATH = '/etc/mskmock/testcontainers-identities.json'
const CA_PATH = '/data/tls/ca.pem'
const ACCOUNT = '123456789012'
const PROFILES = ['serverless', 'provisioned', 'kafka']

/** The environment variable the broker reads a configuration key from. */
export const configEnvName = (key) => 'MSKMOCK_' + key.replaceAll('.', '_').toUpperCase()

const random = (alphabet, n) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('')
const range = (base, n) => Array.from({ length: n }, (_, i) => base + i)

export class MskMockContainer extends GenericContainer {
  constructor(image = DEFAULT_IMAGE) {
    super(image)
    this.brokerCount = 1
    this.accessKeyId = 'AKIA' + random('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)
    this.secretAccessKey = random('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 40)
    // MSK makes a group's first join wait 3 s for more members; a test has one.
    this.withEnvironment({ MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS: '0' })
    this.withWaitStrategy(Wait.forHealthCheck()) // the image's HEALTHCHECK: mskmock --probe
  }

  withBrokerCount(n) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_BROKERS) {
      throw new RangeError(`broker count must be 1 to ${MAX_BROKERS}, not ${n}`)
    }
    this.brokerCount = n
    return this
  }

  /** serverless (the default), provisioned or kafka. */
  withProfile(profile) {
    if (!PROFILES.includes(profile)) throw new RangeError(`profile must be one of ${PROFILES}, not ${profile}`)
    return this.withEnvironment({ MSKMOCK_PROFILE: profile })
  }

  /** Any key of conf/mskmock.properties, e.g. withConfig('log.level', 'debug'). */
  withConfig(key, value) {
    return this.withEnvironment({ [configEnvName(key)]: String(value) })
  }

  async beforeContainerCreated() {
    // SASL tokens and the TLS certificate name the host, so it is set at creation; only the
    // ports wait until Docker has picked them.
    this.host = (await getContainerRuntimeClient()).info.containerRuntime.host
    const n = this.brokerCount
    // MSK's replication factor 3 needs 3 brokers: fewer get their count unless set.
    if (n < 3 && !('MSKMOCK_DEFAULT_REPLICATION_FACTOR' in this.environment)) {
      this.withEnvironment({ MSKMOCK_DEFAULT_REPLICATION_FACTOR: String(n) })
    }
    this.withEnvironment({
      MSKMOCK_BROKER_COUNT: String(n),
      MSKMOCK_EXTERNAL_PORT: String(PLAINTEXT_PORT),
      MSKMOCK_EXTERNAL_IAM_PORT: String(IAM_PORT),
      MSKMOCK_EXTERNAL_ADVERTISED_HOST: this.host,
      MSKMOCK_IAM_IDENTITIES_FILE: IDENTITIES_PATH,
    })
    // withEnvironment appends to the container's list, where the first of two equal names would
    // win: one entry per name, the last value set
    this.createOpts.Env = Object.entries(this.environment).map(([k, v]) => `${k}=${v}`)
    this.withExposedPorts(...range(PLAINTEXT_PORT, n), ...range(IAM_PORT, n), ADMIN_PORT, CREDENTIALS_PORT)
    this.withCopyContentToContainer([{ content: this.identities(), target: IDENTITIES_PATH, mode: 0o644 }])
  }

  identities() {
    return JSON.stringify({
      identities: [{ access_key_id: this.accessKeyId, secret_access_key: this.secretAccessKey,
        principal: `arn:aws:iam::${ACCOUNT}:user/testcontainers` }],
      roles: [{ name: ROLE, arn: `arn:aws:iam::${ACCOUNT}:role/${ROLE}`, session_name: ROLE }],
    })
  }

  async start() {
    const started = await super.start() // returns once the health check passed
    const msk = new StartedMskMockContainer(started, {
      host: this.host,
      brokerCount: this.brokerCount,
      accessKeyId: this.accessKeyId,
      secretAccessKey: this.secretAccessKey,
      region: this.environment.MSKMOCK_IAM_REGION ?? 'us-east-1',
    })
    try {
      await msk.advertise('external', PLAINTEXT_PORT)
      await msk.advertise('external_iam', IAM_PORT)
      msk.caPem = (await firstFileOf(await started.copyArchiveFromContainer(CA_PATH))).toString()
    } catch (err) {
      await started.stop()
      throw err
    }
    return msk
  }
}

export class StartedMskMockContainer extends AbstractStartedContainer {
  constructor(started, details) {
    super(started)
    this.details = details
    this.caPem = undefined
  }

  mappedPorts(base) {
    return range(base, this.details.brokerCount).map((p) => this.getMappedPort(p))
  }

  /** Tells the broker the mapped ports: Metadata and FindCoordinator name them from now on. */
  async advertise(listener, base) {
    const ports = this.mappedPorts(base)
    const res = await fetch(`${this.getAdminUrl()}/v1/listeners/${listener}/advertised`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ports }),
      signal: AbortSignal.timeout(10_000),
    })
    if (!res.ok) throw new Error(`mskmock refused to advertise ${listener} as ${ports}: ${res.status} ${await res.text()}`)
  }

  bootstrap(base) {
    return this.mappedPorts(base).map((p) => `${this.details.host}:${p}`).join(',')
  }

  /** Plaintext, no authentication: "host:port" per broker, comma-separated. */
  getBootstrapServers() {
    return this.bootstrap(PLAINTEXT_PORT)
  }

  /** SASL_SSL (OAUTHBEARER or AWS_MSK_IAM); trust getCaPem(). */
  getIamBootstrapServers() {
    return this.bootstrap(IAM_PORT)
  }

  getAdminUrl() {
    return `http://${this.details.host}:${this.getMappedPort(ADMIN_PORT)}`
  }

  /** The CA the broker's generated certificate chains to, PEM (kafkajs: ssl: { ca: [pem] }). */
  getCaPem() {
    return this.caPem
  }

  /** The region IAM tokens must be signed for (iam.region). */
  getRegion() {
    return this.details.region
  }

  /** A long-term key the broker accepts, allowed everything (it has no policies). */
  getAccessKeyId() {
    return this.details.accessKeyId
  }

  getSecretAccessKey() {
    return this.details.secretAccessKey
  }

  /** For AWS_CONTAINER_CREDENTIALS_FULL_URI: the role's temporary credentials, rotated as on ECS.
   * AWS SDKs take a plain-HTTP full URI only on loopback (or ECS's and EKS's link-local
   * addresses), so it serves where the Docker host is localhost. */
  getCredentialsUri() {
    return `http://${this.details.host}:${this.getMappedPort(CREDENTIALS_PORT)}/role/${ROLE}`
  }
}
