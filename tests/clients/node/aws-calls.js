// aws-calls: mskmock's AWS listener (aws.port) through the AWS SDK for JavaScript v3
// (@aws-sdk/client-sts, @aws-sdk/client-kafka); issue 34, docs/control-plane.md.
//
//   aws-calls --endpoint URL --region R [--wrong-secret S]
//     -> {"caller": {...}, "clusters": [...], "describe": {...}, "bootstrap": {...}, "refused": {...}}
//
// Static credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; both
// clients pointed at --endpoint with the SDK's `endpoint` override. refused: ListClustersV2
// signed with --wrong-secret, as the SDK surfaces the error (its name and HTTP status).
'use strict'

const { STSClient, GetCallerIdentityCommand } = require('@aws-sdk/client-sts')
const { KafkaClient, ListClustersV2Command, DescribeClusterV2Command, GetBootstrapBrokersCommand } =
  require('@aws-sdk/client-kafka')

function clusterJson (c) {
  const out = { arn: c.ClusterArn, name: c.ClusterName, type: c.ClusterType, state: c.State }
  const iam = c.Serverless && c.Serverless.ClientAuthentication && c.Serverless.ClientAuthentication.Sasl &&
    c.Serverless.ClientAuthentication.Sasl.Iam
  if (iam) out.serverless_iam = Boolean(iam.Enabled)
  return out
}

async function awsCalls (opts, { need }) {
  const endpoint = need(opts, 'endpoint')
  const region = need(opts, 'region')
  const accessKeyId = process.env.AWS_ACCESS_KEY_ID
  const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY
  if (!accessKeyId || !secretAccessKey) throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are required')
  const sessionToken = process.env.AWS_SESSION_TOKEN || undefined
  // one attempt: a refusal must come back as the broker gave it, not after retries
  const config = secret => ({
    endpoint, region, maxAttempts: 1, credentials: { accessKeyId, secretAccessKey: secret, sessionToken }
  })
  const sts = new STSClient(config(secretAccessKey))
  const kafka = new KafkaClient(config(secretAccessKey))
  const res = {}

  const who = await sts.send(new GetCallerIdentityCommand({}))
  res.caller = { arn: who.Arn, account: who.Account, user_id: who.UserId }

  const list = await kafka.send(new ListClustersV2Command({}))
  res.clusters = (list.ClusterInfoList || []).map(clusterJson)
  if (!res.clusters.length) throw new Error('kafka ListClustersV2: no cluster')
  const ClusterArn = list.ClusterInfoList[0].ClusterArn

  const d = await kafka.send(new DescribeClusterV2Command({ ClusterArn }))
  res.describe = clusterJson(d.ClusterInfo)

  const bb = await kafka.send(new GetBootstrapBrokersCommand({ ClusterArn }))
  res.bootstrap = {
    sasl_iam: bb.BootstrapBrokerStringSaslIam || '',
    plaintext: bb.BootstrapBrokerString || '',
    tls: bb.BootstrapBrokerStringTls || '',
    sasl_scram: bb.BootstrapBrokerStringSaslScram || '',
    public_sasl_iam: bb.BootstrapBrokerStringPublicSaslIam || ''
  }

  if (opts['wrong-secret']) {
    const bad = new KafkaClient(config(opts['wrong-secret']))
    try {
      await bad.send(new ListClustersV2Command({}))
    } catch (e) {
      res.refused = { code: e.name, message: e.message, status: e.$metadata && e.$metadata.httpStatusCode }
    }
    if (!res.refused) throw new Error('ListClustersV2 with a wrong secret succeeded')
  }
  return res
}

module.exports = { awsCalls }
