package mskmock.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Commit metadata as kafka-clients sends it: a Java string, which may hold U+0000 (librdkafka's
 * test 0099 commits "Hello\0world!"). argv cannot carry a NUL, so the metadata comes as hex.
 * <pre>
 *   commit-metadata --bootstrap B --topic T --group G --metadata-hex H
 *       -> {"ok": true, "plain": HEX, "transactional": HEX}
 *          OffsetCommit of T-0 at 7 with the metadata, read back with committed(); then a
 *          transaction (one record to T-0, sendOffsetsToTransaction of T-1 at 9 with the same
 *          metadata) committed, T-1 read back. HEX: the UTF-8 bytes of the metadata read back.
 * </pre>
 */
final class OffsetMetadata {
    static final Set<String> COMMANDS = Set.of("commit-metadata");

    private OffsetMetadata() {}

    static int run(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        for (String k : new String[] {"bootstrap", "topic", "group", "metadata-hex"}) {
            if (!o.containsKey(k)) {
                System.err.println("usage: client commit-metadata --bootstrap B --topic T --group G --metadata-hex H");
                return 2;
            }
        }
        String metadata = new String(HexFormat.of().parseHex(o.get("metadata-hex")), StandardCharsets.UTF_8);
        Map<String, Object> res = new LinkedHashMap<>();
        try {
            TopicPartition p0 = new TopicPartition(o.get("topic"), 0), p1 = new TopicPartition(o.get("topic"), 1);
            try (KafkaConsumer<byte[], byte[]> c = consumer(o)) {
                c.commitSync(Map.of(p0, new OffsetAndMetadata(7, metadata)), Duration.ofSeconds(30));
                res.put("plain", hex(c.committed(Set.of(p0), Duration.ofSeconds(30)).get(p0)));
                try (KafkaProducer<byte[], byte[]> p = producer(o)) {
                    p.initTransactions();
                    p.beginTransaction();
                    p.send(new ProducerRecord<>(o.get("topic"), 0, null, "v".getBytes(StandardCharsets.UTF_8)));
                    p.sendOffsetsToTransaction(Map.of(p1, new OffsetAndMetadata(9, metadata)), c.groupMetadata());
                    p.commitTransaction();
                }
                res.put("transactional", hex(c.committed(Set.of(p1), Duration.ofSeconds(30)).get(p1)));
            }
            res.put("ok", true);
        } catch (Exception e) {
            res.put("ok", false);
            res.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        System.out.println(AdminApis.json(res));
        System.out.flush();
        return 0;
    }

    private static String hex(OffsetAndMetadata om) {
        return om == null ? null : HexFormat.of().formatHex(om.metadata().getBytes(StandardCharsets.UTF_8));
    }

    private static KafkaConsumer<byte[], byte[]> consumer(Map<String, String> o) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, o.get("group"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    private static KafkaProducer<byte[], byte[]> producer(Map<String, String> o) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, o.get("group") + "-txn");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }
}
