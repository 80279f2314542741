package mskmock.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What topic configs do, seen from kafka-clients (a refusal is the answer: reported in the
 * JSON, exit 0):
 * <pre>
 *   produce-at --bootstrap B --topic T --timestamp-ms TS
 *       -> {"ok": true, "offset": O} | {"ok": false, "error": "ExceptionClass: message"}
 *          one record (key "k", value "v") with that CreateTime, retries off
 *   describe-configs --bootstrap B --topic T
 *       -> {"ok": true, "configs": {"NAME": {"value", "source", "read_only", "default",
 *           "documentation", "synonyms": [[name, value, source], ...]}}}
 *   compacted-read --bootstrap B --topic T
 *       -> {"ok": true, "records": N, "latest": {"KEY": [offset, value|null]}}
 *          every partition from the beginning to the end offsets taken at the start, as Kafka
 *          Connect's KafkaBasedLog reads its config, offset and status topics
 * </pre>
 */
final class TopicSemantics {
    static final Set<String> COMMANDS = Set.of("produce-at", "describe-configs", "compacted-read");

    private TopicSemantics() {}

    static int run(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        if (!o.containsKey("bootstrap") || !o.containsKey("topic")) {
            System.err.println("usage: client produce-at|describe-configs|compacted-read --bootstrap B --topic T"
                    + " [--timestamp-ms TS]");
            return 2;
        }
        Map<String, Object> res = new LinkedHashMap<>();
        try {
            switch (args[0]) {
                case "produce-at" -> produceAt(o, res);
                case "describe-configs" -> describeConfigs(o, res);
                default -> compactedRead(o, res);
            }
            res.put("ok", true);
        } catch (ExecutionException e) {
            res.put("ok", false);
            res.put("error", e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        } catch (Exception e) {
            res.put("ok", false);
            res.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        System.out.println(AdminApis.json(res));
        System.out.flush();
        return 0;
    }

    private static void produceAt(Map<String, String> o, Map<String, Object> out) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(ProducerConfig.RETRIES_CONFIG, 0);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(o.get("topic"), 0,
                    Long.parseLong(o.get("timestamp-ms")), "k".getBytes(StandardCharsets.UTF_8),
                    "v".getBytes(StandardCharsets.UTF_8));
            RecordMetadata md = producer.send(rec).get();
            out.put("offset", md.offset());
        }
    }

    private static void describeConfigs(Map<String, String> o, Map<String, Object> out) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20000);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 20000);
        try (Admin admin = Admin.create(p)) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, o.get("topic"));
            Config c = admin.describeConfigs(List.of(r),
                    new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true)).all().get().get(r);
            Map<String, Object> configs = new TreeMap<>();
            for (ConfigEntry e : c.entries()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("value", e.value());
                m.put("source", e.source().name());
                m.put("read_only", e.isReadOnly());
                m.put("default", e.isDefault());
                m.put("documentation", e.documentation());
                List<Object> syn = new ArrayList<>();
                for (ConfigEntry.ConfigSynonym s : e.synonyms()) syn.add(List.of(s.name(), String.valueOf(s.value()), s.source().name()));
                m.put("synonyms", syn);
                configs.put(e.name(), m);
            }
            out.put("configs", configs);
        }
    }

    private static void compactedRead(Map<String, String> o, Map<String, Object> out) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(o.get("topic"), Duration.ofSeconds(20)))
                parts.add(new TopicPartition(pi.topic(), pi.partition()));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(20));
            Map<String, Object> latest = new TreeMap<>();
            long n = 0;
            long deadline = System.currentTimeMillis() + 60000;
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("did not reach the end offsets");
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    n++;
                    String key = new String(r.key(), StandardCharsets.UTF_8);
                    List<Object> v = new ArrayList<>();
                    v.add(r.offset());
                    v.add(r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    latest.put(key, v);
                }
            }
            out.put("records", n);
            out.put("latest", latest);
        }
    }
}
