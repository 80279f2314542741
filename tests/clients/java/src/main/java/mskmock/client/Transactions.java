package mskmock.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka transactions (issue 15) with kafka-clients. Every command prints one JSON object on its
 * last stdout line; a failure exits 1 with "error: during PHASE: EXCEPTION" on stderr (PHASE is
 * the client call that failed: initTransactions, commitTransaction, ...), a usage error exits 2.
 * No command waits without a bound: the producer's max.block.ms (20 s) bounds initTransactions,
 * commitTransaction, abortTransaction and sendOffsetsToTransaction, and the consumers have
 * deadlines (--timeout-s).
 *
 * <pre>
 *   txn-produce --bootstrap B --topic T --transactional-id X --commit N --abort M
 *               [--records-per-txn R (10)] [--prefix S ("")] [--open 0|1]
 *               [--transaction-timeout-ms MS (60000)]
 *       initTransactions, then N committed and M aborted transactions interleaved (c0 a0 c1 a1 ...,
 *       the longer kind's rest at the end). Committed transaction t holds values S+"c-t-i", aborted
 *       ones S+"a-t-i", i = 0..R-1; record i goes to partition i % P (every partition of T), key
 *       "k-i". An aborted transaction is flushed before abortTransaction, so its records are in the
 *       log (read_uncommitted sees them). --open 1 then begins one more transaction (values
 *       S+"o-0-i"), flushes it, prints the summary and halts the JVM without ending it, leaving the
 *       transaction open for the broker's transaction timeout to abort.
 *       -> {"transactional_id": X, "partitions": P, "order": ["c-0", "a-0", ...],
 *           "committed": [values...], "aborted": [values...], "open": [values...]}
 *
 *   txn-consume --bootstrap B --topic T --isolation read_committed|read_uncommitted
 *               [--idle-ms MS (2000)] [--timeout-s S (30)] [--value-type string|long]
 *       Every partition of T from the beginning, no group, until the position of every partition
 *       has reached its end offset (for read_committed the last stable offset) and no record came
 *       for --idle-ms; or until --timeout-s, then "complete": false.
 *       -> {"isolation": I, "complete": true|false, "count": N, "values": [in partition, offset
 *           order], "records": [[p, offset, key, value], ...], "end_offsets": {"P": O},
 *           "positions": {"P": O}}
 *
 *   txn-fence --bootstrap B --topic T --transactional-id X [--records-per-txn R (10)]
 *       Producer 1 (X): initTransactions, beginTransaction, R records "f1-i", flush. Producer 2
 *       (same X): initTransactions (fences producer 1). Producer 1: commitTransaction, which must
 *       fail. Producer 2: one transaction of R records "f2-i", committed.
 *       -> {"p1_commit": "failed"|"committed", "p1_error": "ProducerFencedException"|...|null,
 *           "p1_error_chain": [class names, outermost first], "fenced": true|false,
 *           "p1_values": [...], "p2_values": [...]}
 *       ("fenced": the chain holds ProducerFencedException or InvalidProducerEpochException.)
 *
 *   txn-ctp --bootstrap B --input I --output O --group G --transactional-id X
 *           [--max-poll-records N (50)] [--idle-ms MS (2000)] [--timeout-s S (60)]
 *           [--session-timeout-ms MS (6000)] [--crash-after-txns K]
 *       Consume-transform-produce (KIP-447): initTransactions, then a read_committed consumer of
 *       group G subscribed to I; each non-empty poll is one transaction: every record (key k,
 *       value v, partition p) is sent to O as (k, "ctp:" + v) to partition p % partitions(O),
 *       sendOffsetsToTransaction(next offsets, consumer.groupMetadata()), commitTransaction.
 *       Ends when the consumer owns every partition of I, has reached their (stable) end and no
 *       record came for --idle-ms. --crash-after-txns K: after K committed transactions, the next
 *       one is sent, its offsets added and flushed, then the summary is printed with
 *       "crashed": true and the JVM halts (status 0) with the transaction open.
 *       -> {"transactions": T, "consumed": N, "produced": N, "crashed": bool,
 *           "positions": {"P": O}}
 *
 *   committed-offsets --bootstrap B --group G --topic T
 *       The group's committed offsets (requireStable: pending transactional offsets wait) and
 *       the topic's end offsets (ListOffsets latest, read_uncommitted).
 *       -> {"committed": {"P": O|null}, "end": {"P": O}}
 * </pre>
 */
final class Transactions {
    static final Set<String> COMMANDS = Set.of("txn-produce", "txn-consume", "txn-fence", "txn-ctp",
            "committed-offsets");
    static final int MAX_BLOCK_MS = 20000;

    /** The client call being made, for the error message. */
    private static volatile String phase = "start";

    private Transactions() {}

    static final class Usage extends Exception {
        Usage(String m) {
            super(m);
        }
    }

    static int run(String[] args) {
        Map<String, String> o;
        try {
            o = parse(args);
        } catch (Usage e) {
            System.err.println("error: " + e.getMessage());
            System.err.println("usage: see the comment of Transactions.java: txn-produce | txn-consume | txn-fence"
                    + " | txn-ctp | committed-offsets --bootstrap B ...");
            return 2;
        }
        try {
            Map<String, Object> out = switch (args[0]) {
                case "txn-produce" -> produce(o);
                case "txn-consume" -> consume(o);
                case "txn-fence" -> fence(o);
                case "txn-ctp" -> consumeTransformProduce(o);
                default -> committedOffsets(o);
            };
            print(out);
            return 0;
        } catch (Throwable e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            System.err.println("error: during " + phase + ": " + cause + " (chain " + chain(cause) + ")");
            cause.printStackTrace(System.err);
            return 1;
        }
    }

    // -- options ----------------------------------------------------------------------------

    private static final Map<String, Set<String>> OPTIONS = Map.of(
            "txn-produce", Set.of("bootstrap", "topic", "transactional-id", "commit", "abort", "records-per-txn",
                    "prefix", "open", "transaction-timeout-ms"),
            "txn-consume", Set.of("bootstrap", "topic", "isolation", "idle-ms", "timeout-s", "value-type"),
            "txn-fence", Set.of("bootstrap", "topic", "transactional-id", "records-per-txn"),
            "txn-ctp", Set.of("bootstrap", "input", "output", "group", "transactional-id", "max-poll-records",
                    "idle-ms", "timeout-s", "session-timeout-ms", "crash-after-txns"),
            "committed-offsets", Set.of("bootstrap", "group", "topic"));

    private static final Map<String, List<String>> REQUIRED = Map.of(
            "txn-produce", List.of("bootstrap", "topic", "transactional-id", "commit", "abort"),
            "txn-consume", List.of("bootstrap", "topic", "isolation"),
            "txn-fence", List.of("bootstrap", "topic", "transactional-id"),
            "txn-ctp", List.of("bootstrap", "input", "output", "group", "transactional-id"),
            "committed-offsets", List.of("bootstrap", "group", "topic"));

    private static Map<String, String> parse(String[] args) throws Usage {
        Set<String> known = OPTIONS.get(args[0]);
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || !known.contains(args[i].substring(2))) {
                throw new Usage("unknown option " + args[i] + " for " + args[0]);
            }
            if (i + 1 >= args.length) {
                throw new Usage("option " + args[i] + " needs a value");
            }
            o.put(args[i].substring(2), args[i + 1]);
        }
        for (String r : REQUIRED.get(args[0])) {
            if (!o.containsKey(r)) {
                throw new Usage("--" + r + " is required for " + args[0]);
            }
        }
        if (o.containsKey("isolation") && !Set.of("read_committed", "read_uncommitted").contains(o.get("isolation"))) {
            throw new Usage("--isolation must be read_committed or read_uncommitted");
        }
        if (o.containsKey("value-type") && !Set.of("string", "long").contains(o.get("value-type"))) {
            throw new Usage("--value-type must be string or long");
        }
        for (String k : List.of("commit", "abort", "records-per-txn", "open", "transaction-timeout-ms", "idle-ms",
                "timeout-s", "max-poll-records", "session-timeout-ms", "crash-after-txns")) {
            if (o.containsKey(k)) {
                try {
                    if (Integer.parseInt(o.get(k)) < 0) {
                        throw new NumberFormatException();
                    }
                } catch (NumberFormatException e) {
                    throw new Usage("--" + k + " must be a non-negative integer, got " + o.get(k));
                }
            }
        }
        return o;
    }

    private static int intOpt(Map<String, String> o, String k, int dflt) {
        return o.containsKey(k) ? Integer.parseInt(o.get(k)) : dflt;
    }

    // -- clients ----------------------------------------------------------------------------

    static KafkaProducer<String, String> producer(String bootstrap, String transactionalId, int txnTimeoutMs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "mskmock-test-java-txn");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, Integer.toString(txnTimeoutMs));
        // Bounds initTransactions, commit/abortTransaction, sendOffsetsToTransaction and send().
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Integer.toString(MAX_BLOCK_MS));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    private static int partitionCount(KafkaProducer<?, ?> producer, String topic) {
        phase = "partitionsFor(" + topic + ")";
        List<PartitionInfo> infos = producer.partitionsFor(topic);
        if (infos == null || infos.isEmpty()) {
            throw new IllegalStateException("no partitions for topic " + topic);
        }
        return infos.size();
    }

    // -- txn-produce ------------------------------------------------------------------------

    private static Map<String, Object> produce(Map<String, String> o) throws Exception {
        String topic = o.get("topic");
        String prefix = o.getOrDefault("prefix", "");
        int commits = intOpt(o, "commit", 0);
        int aborts = intOpt(o, "abort", 0);
        int perTxn = intOpt(o, "records-per-txn", 10);
        int open = intOpt(o, "open", 0);
        List<String> order = new ArrayList<>();
        List<String> committed = new ArrayList<>();
        List<String> aborted = new ArrayList<>();
        List<String> opened = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("transactional_id", o.get("transactional-id"));
        KafkaProducer<String, String> producer =
                producer(o.get("bootstrap"), o.get("transactional-id"), intOpt(o, "transaction-timeout-ms", 60000));
        try {
            int partitions = partitionCount(producer, topic);
            out.put("partitions", partitions);
            phase = "initTransactions";
            producer.initTransactions();
            int c = 0;
            int a = 0;
            while (c < commits || a < aborts) {
                if (c < commits) {
                    committed.addAll(transaction(producer, topic, partitions, prefix + "c-" + c, perTxn, true));
                    order.add("c-" + c++);
                }
                if (a < aborts) {
                    aborted.addAll(transaction(producer, topic, partitions, prefix + "a-" + a, perTxn, false));
                    order.add("a-" + a++);
                }
            }
            out.put("order", order);
            out.put("committed", committed);
            out.put("aborted", aborted);
            if (open > 0) {
                phase = "beginTransaction (left open)";
                producer.beginTransaction();
                for (int i = 0; i < perTxn; i++) {
                    String v = prefix + "o-0-" + i;
                    producer.send(new ProducerRecord<>(topic, i % partitions, "k-" + i, v));
                    opened.add(v);
                }
                phase = "flush (open transaction)";
                producer.flush();
                out.put("open", opened);
                print(out);
                // No abort, no close: the transaction stays open until the broker times it out.
                Runtime.getRuntime().halt(0);
            }
            out.put("open", opened);
            phase = "close";
            producer.close(Duration.ofSeconds(10));
            return out;
        } catch (Exception e) {
            producer.close(Duration.ZERO);
            throw e;
        }
    }

    /** One transaction of perTxn records name + "-i"; committed, or flushed and aborted. */
    private static List<String> transaction(KafkaProducer<String, String> producer, String topic, int partitions,
            String name, int perTxn, boolean commit) throws Exception {
        phase = "beginTransaction " + name;
        producer.beginTransaction();
        List<String> values = new ArrayList<>();
        List<java.util.concurrent.Future<?>> acks = new ArrayList<>();
        phase = "send " + name;
        for (int i = 0; i < perTxn; i++) {
            String v = name + "-" + i;
            acks.add(producer.send(new ProducerRecord<>(topic, i % partitions, "k-" + i, v)));
            values.add(v);
        }
        if (commit) {
            phase = "commitTransaction " + name;
            producer.commitTransaction();
        } else {
            phase = "flush " + name + " (before abortTransaction)";
            producer.flush();
            for (java.util.concurrent.Future<?> f : acks) {
                f.get(30, TimeUnit.SECONDS); // a failed send shows here, not as a silent abort
            }
            phase = "abortTransaction " + name;
            producer.abortTransaction();
        }
        return values;
    }

    // -- txn-consume ------------------------------------------------------------------------

    private static Map<String, Object> consume(Map<String, String> o) throws Exception {
        String topic = o.get("topic");
        String isolation = o.get("isolation");
        boolean longs = o.getOrDefault("value-type", "string").equals("long");
        int idleMs = intOpt(o, "idle-ms", 2000);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(intOpt(o, "timeout-s", 30));
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "mskmock-test-java-txn-consume");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<Object> values = new ArrayList<>();
        List<Object> records = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("isolation", isolation);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            phase = "partitionsFor(" + topic + ")";
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(20));
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException("no partitions for topic " + topic);
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                tps.add(new TopicPartition(topic, info.partition()));
            }
            tps.sort((x, y) -> Integer.compare(x.partition(), y.partition()));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<Integer, List<Object[]>> byPartition = new TreeMap<>();
            long lastRecord = System.nanoTime();
            boolean complete = false;
            Map<TopicPartition, Long> end = Map.of();
            while (true) {
                phase = "poll";
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    Object v = r.value() == null ? null
                            : longs ? (Object) ByteBuffer.wrap(r.value()).getLong()
                                    : new String(r.value(), StandardCharsets.UTF_8);
                    String k = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
                    byPartition.computeIfAbsent(r.partition(), q -> new ArrayList<>())
                            .add(new Object[] {r.partition(), r.offset(), k, v});
                    lastRecord = System.nanoTime();
                }
                if (batch.isEmpty()) {
                    phase = "endOffsets";
                    end = consumer.endOffsets(tps, Duration.ofSeconds(10));
                    boolean caughtUp = true;
                    for (TopicPartition tp : tps) {
                        if (consumer.position(tp, Duration.ofSeconds(10)) < end.get(tp)) {
                            caughtUp = false;
                        }
                    }
                    if (caughtUp && System.nanoTime() - lastRecord >= TimeUnit.MILLISECONDS.toNanos(idleMs)) {
                        complete = true;
                        break;
                    }
                }
                if (System.nanoTime() > deadline) {
                    break;
                }
            }
            for (List<Object[]> l : byPartition.values()) {
                for (Object[] r : l) {
                    values.add(r[3]);
                    records.add(List.of(r[0], r[1], r[2] == null ? "" : r[2], r[3] == null ? "" : r[3]));
                }
            }
            Map<String, Object> ends = new TreeMap<>();
            Map<String, Object> positions = new TreeMap<>();
            for (TopicPartition tp : tps) {
                ends.put(Integer.toString(tp.partition()), end.get(tp));
                positions.put(Integer.toString(tp.partition()), consumer.position(tp, Duration.ofSeconds(10)));
            }
            out.put("complete", complete);
            out.put("count", values.size());
            out.put("end_offsets", ends);
            out.put("positions", positions);
            out.put("values", values);
            out.put("records", records);
        }
        return out;
    }

    // -- txn-fence --------------------------------------------------------------------------

    private static Map<String, Object> fence(Map<String, String> o) throws Exception {
        String topic = o.get("topic");
        String id = o.get("transactional-id");
        int perTxn = intOpt(o, "records-per-txn", 10);
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> v1 = new ArrayList<>();
        List<String> v2 = new ArrayList<>();
        KafkaProducer<String, String> p1 = producer(o.get("bootstrap"), id, 60000);
        KafkaProducer<String, String> p2 = null;
        try {
            int partitions = partitionCount(p1, topic);
            phase = "producer 1 initTransactions";
            p1.initTransactions();
            phase = "producer 1 beginTransaction";
            p1.beginTransaction();
            List<java.util.concurrent.Future<?>> acks = new ArrayList<>();
            for (int i = 0; i < perTxn; i++) {
                String v = "f1-" + i;
                acks.add(p1.send(new ProducerRecord<>(topic, i % partitions, "k-" + i, v)));
                v1.add(v);
            }
            phase = "producer 1 flush";
            p1.flush();
            for (java.util.concurrent.Future<?> f : acks) {
                f.get(30, TimeUnit.SECONDS);
            }
            p2 = producer(o.get("bootstrap"), id, 60000);
            phase = "producer 2 initTransactions (same transactional.id)";
            p2.initTransactions();
            phase = "producer 1 commitTransaction (after producer 2 initTransactions)";
            Throwable failure = null;
            try {
                p1.commitTransaction();
            } catch (Exception e) {
                failure = e;
            }
            out.put("p1_commit", failure == null ? "committed" : "failed");
            List<String> names = chain(failure);
            out.put("p1_error", failure == null ? null : fencedName(failure));
            out.put("p1_error_message", failure == null ? null : String.valueOf(failure.getMessage()));
            out.put("p1_error_chain", names);
            out.put("fenced", names.contains(ProducerFencedException.class.getSimpleName())
                    || names.contains(InvalidProducerEpochException.class.getSimpleName()));
            phase = "producer 2 beginTransaction";
            p2.beginTransaction();
            for (int i = 0; i < perTxn; i++) {
                String v = "f2-" + i;
                p2.send(new ProducerRecord<>(topic, i % partitions, "k-" + i, v));
                v2.add(v);
            }
            phase = "producer 2 commitTransaction";
            p2.commitTransaction();
            out.put("p1_values", v1);
            out.put("p2_values", v2);
            phase = "close";
            p2.close(Duration.ofSeconds(10));
            p2 = null;
            return out;
        } finally {
            p1.close(Duration.ZERO);
            if (p2 != null) {
                p2.close(Duration.ZERO);
            }
        }
    }

    /** The fencing exception's class name if the chain has one, else the outermost class name. */
    private static String fencedName(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ProducerFencedException || c instanceof InvalidProducerEpochException) {
                return c.getClass().getSimpleName();
            }
        }
        return t.getClass().getSimpleName();
    }

    static List<String> chain(Throwable t) {
        List<String> names = new ArrayList<>();
        for (Throwable c = t; c != null && names.size() < 10; c = c.getCause() == c ? null : c.getCause()) {
            names.add(c.getClass().getSimpleName());
        }
        return names;
    }

    // -- txn-ctp ----------------------------------------------------------------------------

    private static Map<String, Object> consumeTransformProduce(Map<String, String> o) throws Exception {
        String input = o.get("input");
        String output = o.get("output");
        int idleMs = intOpt(o, "idle-ms", 2000);
        int crashAfter = intOpt(o, "crash-after-txns", -1);
        int sessionMs = intOpt(o, "session-timeout-ms", 6000);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(intOpt(o, "timeout-s", 60));
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "mskmock-test-java-ctp");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, o.get("group"));
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, o.getOrDefault("max-poll-records", "50"));
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.toString(sessionMs));
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Integer.toString(Math.max(100, sessionMs / 6)));
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "30000"); // also the rebalance timeout
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<String, Object> out = new LinkedHashMap<>();
        int txns = 0;
        int consumed = 0;
        KafkaProducer<String, String> producer = producer(o.get("bootstrap"), o.get("transactional-id"), 60000);
        KafkaConsumer<byte[], byte[]> consumer = null;
        try {
            int outPartitions = partitionCount(producer, output);
            // Before the consumer fetches its offsets: this fences an earlier instance with the same
            // transactional.id and ends its open transaction, so its pending offsets become stable.
            phase = "initTransactions";
            producer.initTransactions();
            consumer = new KafkaConsumer<>(p);
            phase = "partitionsFor(" + input + ")";
            int inPartitions = consumer.partitionsFor(input, Duration.ofSeconds(20)).size();
            consumer.subscribe(List.of(input));
            long lastRecord = System.nanoTime();
            while (true) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("txn-ctp: not done within --timeout-s after " + txns
                            + " transactions, " + consumed + " records; assignment " + consumer.assignment());
                }
                phase = "poll";
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                if (batch.isEmpty()) {
                    Set<TopicPartition> owned = consumer.assignment();
                    if (owned.size() == inPartitions
                            && System.nanoTime() - lastRecord >= TimeUnit.MILLISECONDS.toNanos(idleMs)) {
                        phase = "endOffsets";
                        Map<TopicPartition, Long> end = consumer.endOffsets(owned, Duration.ofSeconds(10));
                        boolean caughtUp = true;
                        for (TopicPartition tp : owned) {
                            caughtUp &= consumer.position(tp, Duration.ofSeconds(10)) >= end.get(tp);
                        }
                        if (caughtUp) {
                            break;
                        }
                    }
                    continue;
                }
                lastRecord = System.nanoTime();
                phase = "beginTransaction " + txns;
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                phase = "send (transaction " + txns + ")";
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    String k = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
                    String v = "ctp:" + (r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8));
                    producer.send(new ProducerRecord<>(output, r.partition() % outPartitions, k, v));
                    next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                phase = "sendOffsetsToTransaction (transaction " + txns + ")";
                producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
                if (txns == crashAfter) {
                    phase = "flush (transaction " + txns + ", before the crash)";
                    producer.flush();
                    out.put("transactions", txns);
                    out.put("consumed", consumed);
                    out.put("produced", consumed);
                    out.put("crashed", true);
                    out.put("open_transaction_records", batch.count());
                    print(out);
                    Runtime.getRuntime().halt(0);
                }
                phase = "commitTransaction " + txns;
                producer.commitTransaction();
                txns++;
                consumed += batch.count();
            }
            Map<String, Object> positions = new TreeMap<>();
            for (TopicPartition tp : consumer.assignment()) {
                positions.put(Integer.toString(tp.partition()), consumer.position(tp));
            }
            out.put("transactions", txns);
            out.put("consumed", consumed);
            out.put("produced", consumed);
            out.put("crashed", false);
            out.put("positions", positions);
            phase = "close";
            consumer.close(Duration.ofSeconds(10));
            consumer = null;
            producer.close(Duration.ofSeconds(10));
            producer = null;
            return out;
        } finally {
            if (consumer != null) {
                consumer.close(Duration.ZERO);
            }
            if (producer != null) {
                producer.close(Duration.ZERO);
            }
        }
    }

    // -- committed-offsets ------------------------------------------------------------------

    private static Map<String, Object> committedOffsets(Map<String, String> o) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        String topic = o.get("topic");
        Map<String, Object> out = new LinkedHashMap<>();
        try (Admin admin = Admin.create(p)) {
            phase = "describeTopics";
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS)
                    .get(topic);
            Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
            for (var info : d.partitions()) {
                specs.put(new TopicPartition(topic, info.partition()), OffsetSpec.latest());
            }
            phase = "listConsumerGroupOffsets (requireStable)";
            Map<TopicPartition, OffsetAndMetadata> committed = admin
                    .listConsumerGroupOffsets(o.get("group"), new ListConsumerGroupOffsetsOptions().requireStable(true))
                    .partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            phase = "listOffsets latest";
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends =
                    admin.listOffsets(specs).all().get(20, TimeUnit.SECONDS);
            Map<String, Object> c = new TreeMap<>();
            Map<String, Object> e = new TreeMap<>();
            for (TopicPartition tp : specs.keySet()) {
                OffsetAndMetadata om = committed.get(tp);
                c.put(Integer.toString(tp.partition()), om == null ? null : om.offset());
                e.put(Integer.toString(tp.partition()), ends.get(tp).offset());
            }
            out.put("committed", c);
            out.put("end", e);
        }
        return out;
    }

    static void print(Map<String, Object> out) {
        System.out.println(AdminApis.json(out));
        System.out.flush();
    }
}
