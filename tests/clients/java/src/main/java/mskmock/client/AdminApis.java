package mskmock.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupsOptions;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * Admin calls whose answer a test asserts on, refusals included (a refusal is the answer, so it
 * is reported in the JSON, exit 0):
 * <pre>
 *   delete-records --bootstrap B --topic T --partition P --offset O
 *       -> {"ok": true, "low_watermark": L}
 *   describe-log-dirs --bootstrap B [--topic T]
 *       -> {"ok": true, "brokers": {"ID": {"PATH": {"error": null|E, "total_bytes": N|null,
 *           "usable_bytes": N|null, "replicas": {"T-P": {"size": S, "offset_lag": 0, "future": false}}}}}}
 *          (replicas of T only when --topic is given)
 *   list-reassignments --bootstrap B [--topic T --partition P]
 *       -> {"ok": true, "reassignments": {"T-P": [replicas], ...}}
 *   describe-groups --bootstrap B --group G      (Admin.describeConsumerGroups)
 *       -> {"ok": true, "group": G, "type": "CONSUMER"|"CLASSIC", "state": "STABLE"|...,
 *           "assignor": A, "group_epoch": N|null, "target_assignment_epoch": N|null,
 *           "members": [{"member_id", "instance_id", "client_id", "member_epoch": N|null,
 *                        "assignment": ["T-P", ...], "target_assignment": [...]|null}]}
 *   list-groups --bootstrap B [--type consumer|classic]   (Admin.listGroups, types filter)
 *       -> {"ok": true, "groups": {"G": {"type": "CONSUMER"|null, "protocol": P, "state": S|null}}}
 *   list-consumer-groups --bootstrap B [--type consumer|classic]
 *       (Admin.listConsumerGroups with ListConsumerGroupsOptions.withTypes: the groups of protocol
 *        type "consumer" only, as kafka-consumer-groups.sh --list --type lists them)
 *       -> {"ok": true, "groups": {"G": {"type": "CONSUMER"|null, "simple": B, "state": S|null}}}
 * </pre>
 * A failed call: {"ok": false, "error": "ExceptionClass: message"}. Calls time out after 20 s.
 */
final class AdminApis {
    static final Set<String> COMMANDS = Set.of("delete-records", "describe-log-dirs", "list-reassignments",
            "describe-groups", "list-groups", "list-consumer-groups");
    private static final long TIMEOUT_S = 20;

    private AdminApis() {}

    interface Call {
        void run(Admin admin, Map<String, Object> out) throws Exception;
    }

    static int run(String[] args) {
        Map<String, String> o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println("usage: client delete-records|describe-log-dirs|list-reassignments|describe-groups|list-groups|list-consumer-groups"
                    + " --bootstrap B [--topic T] [--partition P] [--offset O] [--group G] [--type consumer|classic]");
            return 2;
        }
        Call call = switch (args[0]) {
            case "delete-records" -> (admin, out) -> deleteRecords(admin, o, out);
            case "describe-log-dirs" -> (admin, out) -> describeLogDirs(admin, o.get("topic"), out);
            case "describe-groups" -> (admin, out) -> describeGroup(admin, o.get("group"), out);
            case "list-groups" -> (admin, out) -> listGroups(admin, o.get("type"), out);
            case "list-consumer-groups" -> (admin, out) -> listConsumerGroups(admin, o.get("type"), out);
            default -> (admin, out) -> listReassignments(admin, o, out);
        };
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(TIMEOUT_S));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(TIMEOUT_S));
        Map<String, Object> res = new LinkedHashMap<>();
        try (Admin admin = Admin.create(p)) {
            call.run(admin, res);
            res.put("ok", true);
        } catch (ExecutionException e) {
            res.put("ok", false);
            res.put("error", e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        } catch (Exception e) {
            res.put("ok", false);
            res.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        System.out.println(json(res));
        System.out.flush();
        return 0;
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            boolean known = Set.of("--bootstrap", "--topic", "--partition", "--offset", "--group", "--type").contains(args[i]);
            if (!known || i + 1 >= args.length) {
                throw new IllegalArgumentException("bad option " + args[i]);
            }
            o.put(args[i].substring(2), args[i + 1]);
        }
        if (!o.containsKey("bootstrap")) {
            throw new IllegalArgumentException("--bootstrap is required");
        }
        if (args[0].equals("delete-records")
                && !(o.containsKey("topic") && o.containsKey("partition") && o.containsKey("offset"))) {
            throw new IllegalArgumentException("delete-records needs --topic, --partition and --offset");
        }
        if (args[0].equals("describe-groups") && !o.containsKey("group")) {
            throw new IllegalArgumentException("describe-groups needs --group");
        }
        if (args[0].equals("list-reassignments") && o.containsKey("topic") != o.containsKey("partition")) {
            throw new IllegalArgumentException("list-reassignments takes --topic and --partition together");
        }
        return o;
    }

    private static void deleteRecords(Admin admin, Map<String, String> o, Map<String, Object> out) throws Exception {
        TopicPartition tp = new TopicPartition(o.get("topic"), Integer.parseInt(o.get("partition")));
        RecordsToDelete before = RecordsToDelete.beforeOffset(Long.parseLong(o.get("offset")));
        long low = admin.deleteRecords(Map.of(tp, before)).lowWatermarks().get(tp)
                .get(TIMEOUT_S, TimeUnit.SECONDS).lowWatermark();
        out.put("low_watermark", low);
    }

    private static void describeLogDirs(Admin admin, String topic, Map<String, Object> out) throws Exception {
        List<Integer> ids = new ArrayList<>();
        for (Node n : admin.describeCluster().nodes().get(TIMEOUT_S, TimeUnit.SECONDS)) {
            ids.add(n.id());
        }
        Map<Integer, Map<String, LogDirDescription>> all =
                admin.describeLogDirs(ids).allDescriptions().get(TIMEOUT_S, TimeUnit.SECONDS);
        Map<String, Object> brokers = new TreeMap<>();
        for (Map.Entry<Integer, Map<String, LogDirDescription>> b : all.entrySet()) {
            Map<String, Object> dirs = new TreeMap<>();
            for (Map.Entry<String, LogDirDescription> d : b.getValue().entrySet()) {
                dirs.put(d.getKey(), dir(d.getValue(), topic));
            }
            brokers.put(b.getKey().toString(), dirs);
        }
        out.put("brokers", brokers);
    }

    private static Map<String, Object> dir(LogDirDescription d, String topic) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("error", d.error() == null ? null : d.error().getClass().getSimpleName());
        m.put("total_bytes", d.totalBytes().isPresent() ? d.totalBytes().getAsLong() : null);
        m.put("usable_bytes", d.usableBytes().isPresent() ? d.usableBytes().getAsLong() : null);
        Map<String, Object> replicas = new TreeMap<>();
        for (Map.Entry<TopicPartition, ReplicaInfo> r : d.replicaInfos().entrySet()) {
            if (topic != null && !r.getKey().topic().equals(topic)) {
                continue;
            }
            Map<String, Object> info = new LinkedHashMap<>();
            info.put("size", r.getValue().size());
            info.put("offset_lag", r.getValue().offsetLag());
            info.put("future", r.getValue().isFuture());
            replicas.put(r.getKey().toString(), info);
        }
        m.put("replicas", replicas);
        return m;
    }

    private static void listReassignments(Admin admin, Map<String, String> o, Map<String, Object> out)
            throws Exception {
        Map<TopicPartition, PartitionReassignment> got = o.containsKey("topic")
                ? admin.listPartitionReassignments(Set.of(new TopicPartition(o.get("topic"),
                        Integer.parseInt(o.get("partition"))))).reassignments().get(TIMEOUT_S, TimeUnit.SECONDS)
                : admin.listPartitionReassignments().reassignments().get(TIMEOUT_S, TimeUnit.SECONDS);
        Map<String, Object> r = new TreeMap<>();
        for (Map.Entry<TopicPartition, PartitionReassignment> e : got.entrySet()) {
            r.put(e.getKey().toString(), e.getValue().replicas());
        }
        out.put("reassignments", r);
    }

    private static void describeGroup(Admin admin, String group, Map<String, Object> out) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).get(group);
        out.put("group", d.groupId());
        out.put("type", d.type().name());
        out.put("state", d.groupState().name());
        out.put("assignor", d.partitionAssignor());
        out.put("group_epoch", d.groupEpoch().orElse(null));
        out.put("target_assignment_epoch", d.targetAssignmentEpoch().orElse(null));
        List<Object> members = new ArrayList<>();
        for (MemberDescription m : d.members()) {
            Map<String, Object> mm = new LinkedHashMap<>();
            mm.put("member_id", m.consumerId());
            mm.put("instance_id", m.groupInstanceId().orElse(null));
            mm.put("client_id", m.clientId());
            mm.put("member_epoch", m.memberEpoch().orElse(null));
            mm.put("assignment", partitions(m.assignment().topicPartitions()));
            mm.put("target_assignment", m.targetAssignment()
                    .map(a -> (Object) partitions(a.topicPartitions())).orElse(null));
            members.add(mm);
        }
        out.put("members", members);
    }

    private static List<Object> partitions(Set<TopicPartition> tps) {
        List<Object> l = new ArrayList<>();
        tps.stream().map(TopicPartition::toString).sorted().forEach(l::add);
        return l;
    }

    private static void listGroups(Admin admin, String type, Map<String, Object> out) throws Exception {
        ListGroupsOptions opts = new ListGroupsOptions();
        if (type != null) {
            opts = opts.withTypes(Set.of(GroupType.parse(type)));
        }
        Map<String, Object> groups = new TreeMap<>();
        for (GroupListing g : admin.listGroups(opts).all().get(TIMEOUT_S, TimeUnit.SECONDS)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("type", g.type().map(GroupType::name).orElse(null));
            m.put("protocol", g.protocol());
            m.put("state", g.groupState().map(Enum::name).orElse(null));
            groups.put(g.groupId(), m);
        }
        out.put("groups", groups);
    }

    @SuppressWarnings("deprecation") // listConsumerGroups: deprecated for listGroups in 4.1 (KIP-1043), still served
    private static void listConsumerGroups(Admin admin, String type, Map<String, Object> out) throws Exception {
        ListConsumerGroupsOptions opts = new ListConsumerGroupsOptions();
        if (type != null) {
            opts = opts.withTypes(Set.of(GroupType.parse(type)));
        }
        Map<String, Object> groups = new TreeMap<>();
        for (ConsumerGroupListing g : admin.listConsumerGroups(opts).all().get(TIMEOUT_S, TimeUnit.SECONDS)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("type", g.type().map(GroupType::name).orElse(null));
            m.put("simple", g.isSimpleConsumerGroup());
            m.put("state", g.groupState().map(Enum::name).orElse(null));
            groups.put(g.groupId(), m);
        }
        out.put("groups", groups);
    }

    static String json(Object v) {
        if (v instanceof Map<?, ?> m) {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (b.length() > 1) b.append(", ");
                b.append(Client.jsonString(e.getKey().toString())).append(": ").append(json(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (v instanceof List<?> l) {
            StringBuilder b = new StringBuilder("[");
            for (Object x : l) {
                if (b.length() > 1) b.append(", ");
                b.append(json(x));
            }
            return b.append(']').toString();
        }
        if (v == null || v instanceof Boolean || v instanceof Number) return String.valueOf(v);
        return Client.jsonString(v.toString());
    }
}
