package mskmock.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.kafka.KafkaClient;
import software.amazon.awssdk.services.kafka.model.Cluster;
import software.amazon.awssdk.services.kafka.model.CreateClusterV2Response;
import software.amazon.awssdk.services.kafka.model.DeleteClusterResponse;
import software.amazon.awssdk.services.kafka.model.GetBootstrapBrokersResponse;
import software.amazon.awssdk.services.kafka.model.NotFoundException;

/**
 * A Serverless cluster's life through the AWS SDK for Java v2 (software.amazon.awssdk:kafka over
 * the url-connection HTTP client) against mskmock's AWS listener (aws.port); issue 34,
 * docs/control-plane.md. The Java counterpart of the Node client's aws-serverless.
 * <pre>
 *   aws-serverless --endpoint URL --region R --cluster-name N [--subnet S]... [--tag K=V]...
 *       -> {"arn", "create": {"name", "type", "state"}, "created": {"polls", "states"},
 *           "describe": {"state", "type", "tags"}, "bootstrap": {"sasl_iam", "plaintext", "tls"},
 *           "listed": [{"arn", "name", "type", "state"}], "list_names": [...],
 *           "delete": {"arn", "state"}, "deleted": {"polls", "states", "status"}}
 * </pre>
 * CreateClusterV2 (serverless, SASL/IAM, one VPC config, the tags), DescribeClusterV2 polled
 * until ACTIVE, DescribeClusterV2, GetBootstrapBrokers, ListClustersV2 filtered on the name
 * (listed) and unfiltered (list_names: every cluster's name, in the answer's order),
 * DeleteCluster, DescribeClusterV2 polled until the SDK throws NotFoundException (its HTTP status
 * in deleted.status). The kafka client has no waiters (MSK's service model defines none), so the
 * polls are written here as the SDK's waiters go: a delay doubling from 100 ms to 2 s between
 * attempts, within 60 s, any state other than the pending and wanted ones an error. Static
 * credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; one attempt
 * per call (no SDK retries, so every answer is the broker's own).
 */
final class AwsServerless {
    static final String COMMAND = "aws-serverless";

    private static final long MIN_DELAY_MS = 100;
    private static final long MAX_DELAY_MS = 2000;
    private static final long MAX_WAIT_MS = 60000;
    private static final String GONE = "NotFoundException";

    private AwsServerless() {}

    static int run(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        List<String> subnets = new ArrayList<>();
        Map<String, String> tags = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            String k = args[i].replaceFirst("^--", ""), v = args[i + 1];
            if (k.equals("subnet")) {
                subnets.add(v);
            } else if (k.equals("tag")) {
                int eq = v.indexOf('=');
                tags.put(eq < 0 ? v : v.substring(0, eq), eq < 0 ? "" : v.substring(eq + 1));
            } else {
                o.put(k, v);
            }
        }
        String key = System.getenv("AWS_ACCESS_KEY_ID"), secret = System.getenv("AWS_SECRET_ACCESS_KEY");
        if (!o.containsKey("endpoint") || !o.containsKey("region") || !o.containsKey("cluster-name")
                || key == null || secret == null) {
            System.err.println("usage: client aws-serverless --endpoint URL --region R --cluster-name N"
                    + " [--subnet S]... [--tag K=V]... (with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set)");
            return 2;
        }
        if (subnets.isEmpty()) subnets.add("subnet-0123456789abcdef0");
        String name = o.get("cluster-name");
        String token = System.getenv("AWS_SESSION_TOKEN");
        AwsCredentials creds = token == null || token.isEmpty() ? AwsBasicCredentials.create(key, secret)
                : AwsSessionCredentials.create(key, secret, token);
        Map<String, Object> res = new LinkedHashMap<>();
        try (SdkHttpClient http = UrlConnectionHttpClient.create();
             KafkaClient kafka = KafkaClient.builder().endpointOverride(URI.create(o.get("endpoint")))
                     .region(Region.of(o.get("region"))).httpClient(http)
                     .credentialsProvider(StaticCredentialsProvider.create(creds))
                     .overrideConfiguration(b -> b.retryStrategy(AwsRetryStrategy.doNotRetry())).build()) {
            CreateClusterV2Response created = kafka.createClusterV2(r -> r.clusterName(name).tags(tags)
                    .serverless(s -> s.vpcConfigs(v -> v.subnetIds(subnets))
                            .clientAuthentication(a -> a.sasl(sasl -> sasl.iam(iam -> iam.enabled(true))))));
            String arn = created.clusterArn();
            res.put("arn", arn);
            Map<String, Object> create = new LinkedHashMap<>();
            create.put("name", created.clusterName());
            create.put("type", created.clusterTypeAsString());
            create.put("state", created.stateAsString());
            res.put("create", create);
            res.put("created", waitFor(kafka, arn, "CREATING", "ACTIVE"));

            Cluster info = kafka.describeClusterV2(r -> r.clusterArn(arn)).clusterInfo();
            Map<String, Object> describe = new LinkedHashMap<>();
            describe.put("state", info.stateAsString());
            describe.put("type", info.clusterTypeAsString());
            describe.put("tags", info.tags());
            res.put("describe", describe);

            GetBootstrapBrokersResponse bb = kafka.getBootstrapBrokers(r -> r.clusterArn(arn));
            Map<String, Object> bootstrap = new LinkedHashMap<>();
            bootstrap.put("sasl_iam", orEmpty(bb.bootstrapBrokerStringSaslIam()));
            bootstrap.put("plaintext", orEmpty(bb.bootstrapBrokerString()));
            bootstrap.put("tls", orEmpty(bb.bootstrapBrokerStringTls()));
            res.put("bootstrap", bootstrap);

            List<Object> listed = new ArrayList<>();
            for (Cluster c : kafka.listClustersV2(r -> r.clusterNameFilter(name)).clusterInfoList()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("arn", c.clusterArn());
                m.put("name", c.clusterName());
                m.put("type", c.clusterTypeAsString());
                m.put("state", c.stateAsString());
                listed.add(m);
            }
            res.put("listed", listed);
            List<Object> names = new ArrayList<>();
            for (Cluster c : kafka.listClustersV2Paginator(r -> r.maxResults(100)).clusterInfoList()) {
                names.add(c.clusterName());
            }
            res.put("list_names", names);

            DeleteClusterResponse del = kafka.deleteCluster(r -> r.clusterArn(arn));
            Map<String, Object> delete = new LinkedHashMap<>();
            delete.put("arn", del.clusterArn());
            delete.put("state", del.stateAsString());
            res.put("delete", delete);
            res.put("deleted", waitFor(kafka, arn, "DELETING", GONE));
        } catch (Exception e) {
            System.err.println("error: " + e);
            e.printStackTrace(System.err);
            return 1;
        }
        System.out.println(AdminApis.json(res));
        System.out.flush();
        return 0;
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    // Polls DescribeClusterV2 while the state is pending, until want (a state, or GONE for the
    // cluster to be gone: then "status" is the NotFoundException's HTTP status).
    private static Map<String, Object> waitFor(KafkaClient kafka, String arn, String pending, String want)
            throws InterruptedException {
        List<Object> states = new ArrayList<>();
        Integer status = null;
        long deadline = System.currentTimeMillis() + MAX_WAIT_MS;
        for (long delay = MIN_DELAY_MS; ; delay = Math.min(2 * delay, MAX_DELAY_MS)) {
            String state;
            try {
                state = kafka.describeClusterV2(r -> r.clusterArn(arn)).clusterInfo().stateAsString();
            } catch (NotFoundException e) {
                state = GONE;
                status = e.statusCode();
            }
            states.add(state);
            if (state.equals(want)) {
                Map<String, Object> res = new LinkedHashMap<>();
                res.put("polls", states.size());
                res.put("states", states);
                if (status != null) res.put("status", status);
                return res;
            }
            if (!state.equals(pending)) {
                throw new IllegalStateException("waiting for " + want + ": unexpected state " + state
                        + " (seen " + states + ")");
            }
            if (System.currentTimeMillis() + delay > deadline) {
                throw new IllegalStateException("waiting for " + want + ": still " + state + " after "
                        + MAX_WAIT_MS + " ms");
            }
            Thread.sleep(delay);
        }
    }
}
