package mskmock.client;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;

/**
 * The admin calls a provisioning script makes, one after the other, each reported on its own:
 * <pre>
 *   java -cp client.jar mskmock.client.AdminCalls BOOTSTRAP TOPIC
 *     -> {"describe_cluster": {"ok": true, "controller": ID|null, "nodes": N},
 *         "create_topics": {"ok": true}, "create_partitions": {...}, "describe_topics": {...},
 *         "delete_topics": {...}}      (a failed call: {"ok": false, "error": "..."})
 * </pre>
 * Calls time out after 15 s, so a broker that leaves the client without a node to send to
 * (no controller in Metadata) shows as timeouts rather than a hung test.
 */
public final class AdminCalls {
    private AdminCalls() {}

    interface Call {
        void run(Map<String, Object> out) throws Exception;
    }

    private static Map<String, Object> attempt(Call c) {
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            c.run(out);
            out.put("ok", true);
        } catch (ExecutionException e) {
            out.put("ok", false);
            out.put("error", e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        } catch (Exception e) {
            out.put("ok", false);
            out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: AdminCalls BOOTSTRAP TOPIC");
            System.exit(2);
        }
        String topic = args[1];
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        Map<String, Object> res = new LinkedHashMap<>();
        try (Admin admin = Admin.create(p)) {
            res.put("describe_cluster", attempt(out -> {
                DescribeClusterResult d = admin.describeCluster();
                Node c = d.controller().get(15, TimeUnit.SECONDS);
                out.put("controller", c == null ? null : c.id());
                out.put("nodes", d.nodes().get(15, TimeUnit.SECONDS).size());
            }));
            res.put("create_topics", attempt(out ->
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) -1))).all().get(20, TimeUnit.SECONDS)));
            res.put("create_partitions", attempt(out ->
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get(20, TimeUnit.SECONDS)));
            res.put("describe_topics", attempt(out -> out.put("partitions",
                admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS)
                    .get(topic).partitions().size())));
            res.put("delete_topics", attempt(out ->
                admin.deleteTopics(List.of(topic)).all().get(20, TimeUnit.SECONDS)));
        }
        System.out.println(AdminApis.json(res));
    }
}
