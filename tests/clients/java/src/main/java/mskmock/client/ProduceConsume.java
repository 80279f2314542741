package mskmock.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * produce-consume --duration S: one producer and one consumer kept busy for S seconds, for
 * KIP-368 re-authentication tests (see {@link Client}). The consumer runs on its own thread
 * (KafkaConsumer is single-threaded); its metrics are read on that thread before it closes.
 */
final class ProduceConsume {
    /** Selector metrics summed into the result (per client: producer-metrics, consumer-metrics). */
    private static final Map<String, String> METRICS = new LinkedHashMap<>();

    static {
        METRICS.put("successful-reauthentication-total", "reauths");
        METRICS.put("failed-reauthentication-total", "failed_reauths");
        METRICS.put("failed-authentication-total", "failed_authentications");
        METRICS.put("connection-creation-total", "connections_created");
        METRICS.put("connection-close-total", "connections_closed");
    }

    private ProduceConsume() {}

    private static final List<String> errors = Collections.synchronizedList(new ArrayList<>());

    private static void error(String msg) {
        System.err.println("produce-consume: " + msg);
        if (errors.size() < 100) {
            errors.add(msg);
        }
    }

    static int run(Client.Options o) throws Exception {
        Properties pp = Client.common(o);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        Properties cp = Client.common(o);
        cp.put("client.id", "mskmock-test-java-consumer");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        AtomicInteger acked = new AtomicInteger();
        AtomicInteger consumedTotal = new AtomicInteger();
        AtomicInteger target = new AtomicInteger(Integer.MAX_VALUE); // set once producing has ended
        AtomicBoolean stop = new AtomicBoolean();
        Map<String, Double> consumerMetrics = new LinkedHashMap<>();
        int[] counts = new int[o.partitions];

        Thread consumerThread = new Thread(() -> {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
                List<TopicPartition> tps = new ArrayList<>();
                for (int q = 0; q < o.partitions; q++) {
                    tps.add(new TopicPartition(o.topic, q));
                }
                consumer.assign(tps);
                consumer.seekToBeginning(tps);
                while (!stop.get() && consumedTotal.get() < target.get()) {
                    try {
                        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                            int q = r.partition();
                            int i = q + counts[q] * o.partitions;
                            try {
                                Client.verify(o, r, counts[q], i);
                            } catch (IllegalStateException e) {
                                error(e.getMessage());
                                stop.set(true);
                                break;
                            }
                            counts[q]++;
                            consumedTotal.incrementAndGet();
                        }
                    } catch (RuntimeException e) {
                        error("consumer poll: " + e);
                    }
                }
                synchronized (consumerMetrics) {
                    consumerMetrics.putAll(metrics(consumer.metrics(), "consumer-metrics"));
                }
            } catch (RuntimeException e) {
                error("consumer: " + e);
            }
        }, "consumer");
        consumerThread.start();

        Map<String, Double> producerMetrics;
        int produced = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            long start = System.nanoTime();
            long end = start + (long) (o.durationS * 1e9);
            long interval = TimeUnit.MILLISECONDS.toNanos(o.intervalMs);
            long next = start;
            while (System.nanoTime() < end && !stop.get()) {
                long now = System.nanoTime();
                if (now < next) {
                    Thread.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(next - now)));
                    continue;
                }
                final int i = produced;
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(o.topic, i % o.partitions,
                        Client.utf8(Client.keyOf(i)), Client.utf8(Client.valueOf(i)),
                        List.of(new RecordHeader("idx", Client.utf8(Integer.toString(i))),
                                new RecordHeader("codec", Client.utf8("none"))));
                try {
                    producer.send(r, (md, e) -> {
                        if (e != null) {
                            error("record " + i + " to partition " + (i % o.partitions) + ": " + e);
                        } else {
                            acked.incrementAndGet();
                        }
                    });
                } catch (RuntimeException e) {
                    error("send of record " + i + ": " + e);
                }
                produced++;
                next += interval;
            }
            producer.flush();
            producerMetrics = metrics(producer.metrics(), "producer-metrics");
        }
        target.set(acked.get());
        consumerThread.join(TimeUnit.SECONDS.toMillis(30));
        if (consumerThread.isAlive()) {
            error("consumed " + consumedTotal.get() + " of " + acked.get()
                    + " acknowledged records 30 s after the run; per partition " + Client.perPartitionJson(counts));
            stop.set(true);
            consumerThread.join(TimeUnit.SECONDS.toMillis(10));
        }
        if (acked.get() != produced) {
            error("acknowledged " + acked.get() + " of " + produced + " records");
        }

        StringBuilder sb = new StringBuilder("{");
        sb.append("\"produced\":").append(produced)
                .append(",\"acked\":").append(acked.get())
                .append(",\"consumed\":").append(consumedTotal.get());
        Map<String, Double> cm;
        synchronized (consumerMetrics) {
            cm = new LinkedHashMap<>(consumerMetrics);
        }
        for (String key : METRICS.values()) {
            double v = producerMetrics.getOrDefault(key, 0.0) + cm.getOrDefault(key, 0.0);
            sb.append(",\"").append(key).append("\":").append((long) v);
        }
        sb.append(",\"producer\":").append(json(producerMetrics));
        sb.append(",\"consumer\":").append(json(cm));
        sb.append(",\"errors\":[");
        synchronized (errors) {
            for (int k = 0; k < errors.size(); k++) {
                sb.append(k > 0 ? "," : "").append(Client.jsonString(errors.get(k)));
            }
        }
        sb.append("]}");
        System.out.println(sb);
        System.out.flush();
        return errors.isEmpty() ? 0 : 1;
    }

    private static Map<String, Double> metrics(Map<MetricName, ? extends Metric> all, String group) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (Map.Entry<MetricName, ? extends Metric> e : all.entrySet()) {
            String key = METRICS.get(e.getKey().name());
            if (key == null || !e.getKey().group().equals(group)) {
                continue;
            }
            Object v = e.getValue().metricValue();
            if (v instanceof Number) {
                out.merge(key, ((Number) v).doubleValue(), Double::sum);
            }
        }
        return out;
    }

    private static String json(Map<String, Double> m) {
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<String, Double> e : m.entrySet()) {
            sb.append(sb.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":")
                    .append(e.getValue().longValue());
        }
        return sb.append('}').toString();
    }
}
