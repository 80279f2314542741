// aws-serverless: a Serverless cluster's life through the AWS SDK for JavaScript v3
// (@aws-sdk/client-kafka) against mskmock's AWS listener (aws.port); issue 34,
// docs/control-plane.md.
//
//   aws-serverless --endpoint URL --region R --cluster-name N [--subnet S] [--tag K=V]
//     -> {"arn": A, "create": {...}, "created": {"polls": N, "states": [...]}, "bootstrap": {...},
//         "delete": {...}, "deleted": {"polls": N, "states": [..., "NotFoundException"]}}
//
// CreateClusterV2 (serverless, SASL/IAM, one VPC config, tags), DescribeClusterV2 polled until
// ACTIVE, GetBootstrapBrokers, DeleteCluster, DescribeClusterV2 polled until NotFoundException.
// client-kafka has no waiters (MSK's model defines none), so the polls are written here the way
// the SDK's waiters (@smithy/util-waiter) go: a delay that doubles from minDelay to maxDelay
// between attempts, within maxWaitTime, any state other than the pending and wanted ones an error.
// Static credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
'use strict'

const {
  KafkaClient, CreateClusterV2Command, DescribeClusterV2Command, GetBootstrapBrokersCommand, DeleteClusterCommand
} = require('@aws-sdk/client-kafka')

const MIN_DELAY_MS = 100
const MAX_DELAY_MS = 2000
const MAX_WAIT_MS = 60000

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// Polls DescribeClusterV2 while the state is `pending`, until `want` (a state, or
// 'NotFoundException' for the cluster to be gone).
async function waitFor (kafka, ClusterArn, pending, want) {
  const states = []
  const deadline = Date.now() + MAX_WAIT_MS
  for (let delay = MIN_DELAY_MS; ; delay = Math.min(2 * delay, MAX_DELAY_MS)) {
    let state
    try {
      state = (await kafka.send(new DescribeClusterV2Command({ ClusterArn }))).ClusterInfo.State
    } catch (e) {
      if (e.name !== 'NotFoundException') throw e
      state = 'NotFoundException'
    }
    states.push(state)
    if (state === want) return { polls: states.length, states }
    if (state !== pending) throw new Error(`waiting for ${want}: unexpected state ${state} (seen ${states})`)
    if (Date.now() + delay > deadline) throw new Error(`waiting for ${want}: still ${state} after ${MAX_WAIT_MS} ms`)
    await sleep(delay)
  }
}

async function awsServerless (opts, { need }) {
  const endpoint = need(opts, 'endpoint')
  const region = need(opts, 'region')
  const ClusterName = need(opts, 'cluster-name')
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY
  if (!accessKeyId || !secretAccessKey) throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are required')
  const sessionToken = process.env.AWS_SESSION_TOKEN || undefined
  const kafka = new KafkaClient({
    endpoint, region, maxAttempts: 1, credentials: { accessKeyId, secretAccessKey, sessionToken }
  })
  const Tags = {}
  if (opts.tag) {
    const [k, ...v] = opts.tag.split('=')
    Tags[k] = v.join('=')
  }

  const created = await kafka.send(new CreateClusterV2Command({
    ClusterName,
    Serverless: {
      VpcConfigs: [{ SubnetIds: [opts.subnet || 'subnet-0123456789abcdef0'] }],
      ClientAuthentication: { Sasl: { Iam: { Enabled: true } } }
    },
    Tags
  }))
  const ClusterArn = created.ClusterArn
  const res = {
    arn: ClusterArn,
    create: { name: created.ClusterName, type: created.ClusterType, state: created.State }
  }
  res.created = await waitFor(kafka, ClusterArn, 'CREATING', 'ACTIVE')

  const d = await kafka.send(new DescribeClusterV2Command({ ClusterArn }))
  res.describe = { state: d.ClusterInfo.State, type: d.ClusterInfo.ClusterType, tags: d.ClusterInfo.Tags || {} }
  const bb = await kafka.send(new GetBootstrapBrokersCommand({ ClusterArn }))
  res.bootstrap = { sasl_iam: bb.BootstrapBrokerStringSaslIam || '', plaintext: bb.BootstrapBrokerString || '' }

  const del = await kafka.send(new DeleteClusterCommand({ ClusterArn }))
  res.delete = { arn: del.ClusterArn, state: del.State }
  res.deleted = await waitFor(kafka, ClusterArn, 'DELETING', 'NotFoundException')
  return res
}

module.exports = { awsServerless }
