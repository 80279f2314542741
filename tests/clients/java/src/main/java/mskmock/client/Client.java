package mskmock.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Java kafka-clients test client for mskmock integration tests.
 *
 * <p>Contract (shared with tests/clients/node and tests/clients/go): the last stdout line is
 * exactly one JSON object; any error exits non-zero with a message on stderr.
 *
 * <pre>
 *   create-topic --bootstrap B --topic T --partitions P                 -> {"created": T}
 *   produce --bootstrap B --topic T --count N --partitions P --compression C [--idempotent]
 *                                                                       -> {"produced": N}
 *   consume --bootstrap B --topic T --count N --partitions P            -> {"consumed": N,
 *                                                                           "per_partition": {...}}
 *   group-consume --bootstrap B --group G (--topic T | --pattern RE) [--assignor NAME]
 *                 [--group-protocol classic|consumer] [--instance-id ID]
 *                 [--session-timeout-ms MS] [--max-records N] [--commit sync|async|none]
 *                                                   -> JSON event lines, see {@link GroupConsume}
 *   produce-consume --bootstrap B --topic T --partitions P --duration S [--interval-ms MS]
 *                                                   -> {"produced", "acked", "consumed", "reauths",
 *                                                       "failed_reauths", "connections_created",
 *                                                       "connections_closed", "errors": [...]}
 *   delete-records | describe-log-dirs | list-reassignments | describe-groups | list-groups ...
 *                                                   -> see {@link AdminApis}
 *   txn-produce | txn-consume | txn-fence | txn-ctp | committed-offsets ...
 *                                                   -> transactions, see {@link Transactions}
 *   produce-at | describe-configs | compacted-read ... -> topic configs at work, see {@link TopicSemantics}
 *   streams-wordcount ...                           -> Kafka Streams (exactly_once_v2), JSON event
 *                                                      lines, see {@link StreamsWordCount}
 *   aws-calls --endpoint URL --region R [--wrong-secret S]
 *                                                   -> STS GetCallerIdentity, see {@link AwsCalls}
 *   aws-serverless --endpoint URL --region R --cluster-name N [--subnet S]... [--tag K=V]...
 *                                                   -> a Serverless cluster created, polled, read,
 *                                                      listed and deleted through the SDK's kafka
 *                                                      client, see {@link AwsServerless}
 * </pre>
 *
 * <p>Security options (every command), as for MSK's IAM listener:
 * <pre>
 *   --security-protocol PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL   (default PLAINTEXT)
 *   --ca FILE          PEM CA the broker certificate chains to (ssl.truststore.type=PEM)
 *   --mechanism M      AWS_MSK_IAM (aws-msk-iam-auth IAMLoginModule + IAMClientCallbackHandler),
 *                      OAUTHBEARER (aws-msk-iam-auth IAMOAuthBearerLoginCallbackHandler), or
 *                      PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 with a dummy user (for refusal tests)
 *   --region R         AWS region (system property aws.region; else AWS_REGION)
 * </pre>
 * Credentials come from the AWS SDK v2 default chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, or AWS_CONTAINER_CREDENTIALS_FULL_URI, and so on.
 *
 * <p>produce-consume keeps a producer (record i every --interval-ms, default 50) and a consumer
 * (all partitions from the beginning, every record checked as in consume) busy for S seconds,
 * then waits until every record is acknowledged and consumed. reauths, failed_reauths and the
 * connection counts are the clients' own metrics (successful-reauthentication-total, ...); any
 * failed send, poll exception or wrong record is an error, and errors exit 1 (after the JSON).
 *
 * Record i goes to partition i % P, key "key-&lt;i&gt;", value "value-&lt;i&gt;-" + "x" * (i % 50),
 * headers [("idx", "&lt;i&gt;"), ("codec", C)].
 */
public final class Client {
    private static final Set<String> CODECS = Set.of("none", "gzip", "snappy", "lz4", "zstd");

    private Client() {}

    static final class Options {
        String command;
        String bootstrap;
        String topic;
        int count = -1;
        int partitions = 0;
        String compression;
        boolean idempotent;
        // group-consume
        String group;
        String assignor = "range";
        String groupProtocol = "classic";
        String instanceId;
        int sessionTimeoutMs = -1;
        int maxRecords = -1;
        String commit = "sync";
        String pattern;
        // security
        String securityProtocol = "PLAINTEXT";
        String ca;
        String mechanism;
        String region;
        // produce-consume
        double durationS = -1;
        int intervalMs = 50;
    }

    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        // Must be set before kafka-clients creates its first logger. slf4j-simple logs to stderr.
        String level = System.getenv("KAFKA_CLIENT_LOG_LEVEL");
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", level != null ? level : "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        if (args.length > 0 && AdminApis.COMMANDS.contains(args[0])) {
            System.exit(AdminApis.run(args));
        }
        if (args.length > 0 && Transactions.COMMANDS.contains(args[0])) {
            System.exit(Transactions.run(args));
        }
        if (args.length > 0 && TopicSemantics.COMMANDS.contains(args[0])) {
            System.exit(TopicSemantics.run(args));
        }
        if (args.length > 0 && OffsetMetadata.COMMANDS.contains(args[0])) {
            System.exit(OffsetMetadata.run(args));
        }
        if (args.length > 0 && args[0].equals(AwsCalls.COMMAND)) {
            System.exit(AwsCalls.run(args));
        }
        if (args.length > 0 && args[0].equals(AwsServerless.COMMAND)) {
            System.exit(AwsServerless.run(args));
        }
        if (args.length > 0 && args[0].equals(StreamsWordCount.COMMAND)) {
            System.exit(StreamsWordCount.run(args));
        }
        int rc;
        try {
            Options o = parse(args);
            if (o.region != null) {
                // Read by the AWS SDK's default region chain before AWS_REGION.
                System.setProperty("aws.region", o.region);
            }
            if (o.command.equals("group-consume")) {
                System.exit(GroupConsume.run(o));
            }
            if (o.command.equals("produce-consume")) {
                System.exit(ProduceConsume.run(o));
            }
            String json;
            switch (o.command) {
                case "create-topic":
                    json = createTopic(o);
                    break;
                case "produce":
                    json = produce(o);
                    break;
                default:
                    json = consume(o);
                    break;
            }
            System.out.println(json);
            System.out.flush();
            rc = 0;
        } catch (UsageException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println("usage: client (create-topic|produce|consume) --bootstrap B --topic T"
                    + " [--partitions P] [--count N] [--compression C] [--idempotent]\n"
                    + "       client produce-consume --bootstrap B --topic T --partitions P --duration S"
                    + " [--interval-ms MS]\n"
                    + "       every command: [--security-protocol P] [--ca FILE] [--mechanism M] [--region R]\n"
                    + "       client group-consume --bootstrap B --group G (--topic T | --pattern RE) [--assignor NAME] [--group-protocol classic|consumer]"
                    + " [--instance-id ID] [--session-timeout-ms MS] [--max-records N]"
                    + " [--commit sync|async|none]");
            rc = 2;
        } catch (Throwable e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            System.err.println("error: " + cause);
            cause.printStackTrace(System.err);
            rc = 1;
        }
        System.exit(rc);
    }

    static Options parse(String[] args) throws UsageException {
        if (args.length == 0) {
            throw new UsageException("missing command");
        }
        Options o = new Options();
        o.command = args[0];
        if (!Set.of("create-topic", "produce", "consume", "group-consume", "produce-consume").contains(o.command)) {
            throw new UsageException("unknown command " + o.command);
        }
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--idempotent")) {
                o.idempotent = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new UsageException("option " + a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--bootstrap":
                    o.bootstrap = v;
                    break;
                case "--topic":
                    o.topic = v;
                    break;
                case "--count":
                    o.count = parseInt(a, v);
                    break;
                case "--partitions":
                    o.partitions = parseInt(a, v);
                    break;
                case "--compression":
                    o.compression = v;
                    break;
                case "--group":
                    o.group = v;
                    break;
                case "--assignor":
                    o.assignor = v;
                    break;
                case "--group-protocol":
                    o.groupProtocol = v;
                    break;
                case "--instance-id":
                    o.instanceId = v;
                    break;
                case "--session-timeout-ms":
                    o.sessionTimeoutMs = parseInt(a, v);
                    break;
                case "--max-records":
                    o.maxRecords = parseInt(a, v);
                    break;
                case "--commit":
                    o.commit = v;
                    break;
                case "--pattern":
                    o.pattern = v;
                    break;
                case "--security-protocol":
                    o.securityProtocol = v;
                    break;
                case "--ca":
                    o.ca = v;
                    break;
                case "--mechanism":
                    o.mechanism = v;
                    break;
                case "--region":
                    o.region = v;
                    break;
                case "--duration":
                    try {
                        o.durationS = Double.parseDouble(v);
                    } catch (NumberFormatException e) {
                        throw new UsageException("--duration must be a number of seconds, got " + v);
                    }
                    break;
                case "--interval-ms":
                    o.intervalMs = parseInt(a, v);
                    break;
                default:
                    throw new UsageException("unknown option " + a);
            }
        }
        if (o.bootstrap == null || (o.topic == null && o.pattern == null)) {
            throw new UsageException("--bootstrap and --topic are required");
        }
        if (o.pattern != null && (o.topic != null || !o.command.equals("group-consume"))) {
            throw new UsageException("--pattern goes with group-consume, instead of --topic");
        }
        if (!Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL").contains(o.securityProtocol)) {
            throw new UsageException("--security-protocol must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL");
        }
        boolean sasl = o.securityProtocol.startsWith("SASL_");
        if (sasl != (o.mechanism != null)) {
            throw new UsageException("--mechanism goes with --security-protocol SASL_SSL or SASL_PLAINTEXT");
        }
        if (o.mechanism != null && !Set.of("AWS_MSK_IAM", "OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
                .contains(o.mechanism)) {
            throw new UsageException("--mechanism must be one of AWS_MSK_IAM, OAUTHBEARER, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512");
        }
        if (o.command.equals("produce-consume")) {
            if (o.durationS <= 0 || o.partitions < 1 || o.intervalMs < 1) {
                throw new UsageException("produce-consume needs --duration > 0, --partitions >= 1, --interval-ms >= 1");
            }
            return o;
        }
        if (o.command.equals("group-consume")) {
            if (o.group == null) {
                throw new UsageException("--group is required");
            }
            if (!Set.of("classic", "consumer").contains(o.groupProtocol)) {
                throw new UsageException("--group-protocol must be classic or consumer");
            }
            if (o.pattern != null && !o.groupProtocol.equals("consumer")) {
                // SubscriptionPattern is resolved by the broker (KIP-848): the classic protocol has none
                throw new UsageException("--pattern needs --group-protocol consumer");
            }
            if (o.groupProtocol.equals("consumer")) {
                if (!Set.of("uniform", "range").contains(o.assignor)) {
                    throw new UsageException("--assignor must be uniform or range with --group-protocol consumer");
                }
            } else if (GroupConsume.assignorClass(o.assignor) == null) {
                throw new UsageException("--assignor must be one of range, roundrobin, sticky, cooperative-sticky");
            }
            if (!Set.of("sync", "async", "none").contains(o.commit)) {
                throw new UsageException("--commit must be one of sync, async, none");
            }
            return o;
        }
        if (o.partitions < 1) {
            throw new UsageException("--partitions must be >= 1");
        }
        if (!o.command.equals("create-topic") && o.count < 0) {
            throw new UsageException("--count is required");
        }
        if (o.command.equals("produce") && !CODECS.contains(String.valueOf(o.compression))) {
            throw new UsageException("--compression must be one of none, gzip, snappy, lz4, zstd");
        }
        return o;
    }

    private static int parseInt(String name, String v) throws UsageException {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new UsageException(name + " must be an integer, got " + v);
        }
    }

    static String keyOf(int i) {
        return "key-" + i;
    }

    static String valueOf(int i) {
        return "value-" + i + "-" + "x".repeat(i % 50);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    static Properties common(Options o) {
        Properties p = new Properties();
        p.put("bootstrap.servers", o.bootstrap);
        p.put("client.id", "mskmock-test-java");
        addSecurity(o, p);
        return p;
    }

    /** security.protocol, the PEM trust store and the SASL mechanism's login configuration. */
    static void addSecurity(Options o, Properties p) {
        p.put("security.protocol", o.securityProtocol);
        if (o.ca != null && o.securityProtocol.endsWith("SSL")) {
            p.put("ssl.truststore.type", "PEM");
            p.put("ssl.truststore.location", o.ca);
        }
        if (o.mechanism == null) {
            return;
        }
        p.put("sasl.mechanism", o.mechanism);
        switch (o.mechanism) {
            case "AWS_MSK_IAM":
                p.put("sasl.jaas.config", "software.amazon.msk.auth.iam.IAMLoginModule required;");
                p.put("sasl.client.callback.handler.class", "software.amazon.msk.auth.iam.IAMClientCallbackHandler");
                break;
            case "OAUTHBEARER":
                p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
                p.put("sasl.login.callback.handler.class",
                        "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler");
                p.put("sasl.client.callback.handler.class",
                        "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler");
                break;
            case "PLAIN":
                p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required"
                        + " username=\"mskmock-it\" password=\"not-a-password\";");
                break;
            default: // SCRAM-SHA-256, SCRAM-SHA-512
                p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required"
                        + " username=\"mskmock-it\" password=\"not-a-password\";");
                break;
        }
    }

    static String createTopic(Options o) throws Exception {
        Properties p = common(o);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        try (Admin admin = Admin.create(p)) {
            // Empty replication factor: the broker chooses (MSK Serverless fixes it at 3).
            NewTopic t = new NewTopic(o.topic, Optional.of(o.partitions), Optional.empty());
            admin.createTopics(List.of(t)).all().get(60, TimeUnit.SECONDS);
        }
        return "{\"created\":" + jsonString(o.topic) + "}";
    }

    static String produce(Options o) throws Exception {
        Properties p = common(o);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, o.compression);
        // Idempotence is on by default since Kafka 3.0: set it explicitly either way.
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(o.idempotent));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        AtomicReference<Exception> firstError = new AtomicReference<>();
        AtomicInteger acked = new AtomicInteger();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < o.count; i++) {
                List<Header> headers = List.of(
                        new RecordHeader("idx", utf8(Integer.toString(i))),
                        new RecordHeader("codec", utf8(o.compression)));
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(
                        o.topic, i % o.partitions, utf8(keyOf(i)), utf8(valueOf(i)), headers);
                final int idx = i;
                producer.send(r, (md, e) -> {
                    if (e != null) {
                        firstError.compareAndSet(null,
                                new RuntimeException("record " + idx + " to partition " + (idx % o.partitions)
                                        + ": " + e, e));
                    } else {
                        acked.incrementAndGet();
                    }
                });
            }
            producer.flush();
        }
        if (firstError.get() != null) {
            throw firstError.get();
        }
        if (acked.get() != o.count) {
            throw new IllegalStateException("only " + acked.get() + " of " + o.count + " records acknowledged");
        }
        return "{\"produced\":" + o.count + "}";
    }

    static String consume(Options o) throws Exception {
        Properties p = common(o);
        // No group.id: manual assignment only, nothing committed; group-consume is the group path.
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "500");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int[] counts = new int[o.partitions];
        int[] nextIndex = new int[o.partitions]; // next i expected in partition p: p, p+P, ...
        int[] expectedIn = new int[o.partitions];
        for (int q = 0; q < o.partitions; q++) {
            nextIndex[q] = q;
            expectedIn[q] = o.count > q ? (o.count - 1 - q) / o.partitions + 1 : 0;
        }
        int consumed = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<PartitionInfo> infos = consumer.partitionsFor(o.topic, Duration.ofSeconds(30));
            if (infos == null || infos.size() != o.partitions) {
                throw new IllegalStateException("metadata reports " + (infos == null ? 0 : infos.size())
                        + " partitions for " + o.topic + ", expected " + o.partitions);
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (int q = 0; q < o.partitions; q++) {
                tps.add(new TopicPartition(o.topic, q));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            while (consumed < o.count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("timed out after 60 s with " + consumed + "/" + o.count
                            + " records, per partition " + perPartitionJson(counts));
                }
                ConsumerRecords<byte[], byte[]> records =
                        consumer.poll(Duration.ofNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(500))));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    int q = r.partition();
                    if (!r.topic().equals(o.topic) || q < 0 || q >= o.partitions) {
                        throw new IllegalStateException("record from unexpected " + r.topic() + "/" + q);
                    }
                    if (counts[q] >= expectedIn[q]) {
                        continue; // N read in all; ignore any extra records
                    }
                    verify(o, r, counts[q], nextIndex[q]);
                    nextIndex[q] += o.partitions;
                    counts[q]++;
                    consumed++;
                }
            }
        }
        return "{\"consumed\":" + consumed + ",\"per_partition\":" + perPartitionJson(counts) + "}";
    }

    static void verify(Options o, ConsumerRecord<byte[], byte[]> r, long expectedOffset, int i) {
        String where = "partition " + r.partition() + " offset " + r.offset();
        if (r.offset() != expectedOffset) {
            throw new IllegalStateException(where + ": expected offset " + expectedOffset
                    + " (offsets must be consecutive from 0)");
        }
        if (!keyOf(i).equals(str(r.key()))) {
            throw new IllegalStateException(where + ": key " + str(r.key()) + ", expected " + keyOf(i));
        }
        if (!valueOf(i).equals(str(r.value()))) {
            throw new IllegalStateException(where + ": value " + str(r.value()) + ", expected " + valueOf(i));
        }
        Header[] hs = r.headers().toArray();
        if (hs.length != 2 || !hs[0].key().equals("idx") || !Integer.toString(i).equals(str(hs[0].value()))
                || !hs[1].key().equals("codec") || !CODECS.contains(str(hs[1].value()))) {
            StringBuilder sb = new StringBuilder("[");
            for (Header h : hs) {
                sb.append(sb.length() > 1 ? ", " : "").append(h.key()).append('=').append(str(h.value()));
            }
            throw new IllegalStateException(where + ": headers " + sb + "], expected [idx=" + i + ", codec=<codec>]");
        }
    }

    static String perPartitionJson(int[] counts) {
        StringBuilder sb = new StringBuilder("{");
        for (int q = 0; q < counts.length; q++) {
            sb.append(q > 0 ? "," : "").append('"').append(q).append("\":").append(counts[q]);
        }
        return sb.append('}').toString();
    }

    static String jsonString(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }
}
