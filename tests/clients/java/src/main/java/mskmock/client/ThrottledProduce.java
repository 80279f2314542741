package mskmock.client;

import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produces BYTES bytes (records of 10 KiB) to partition 0 of TOPIC as fast as the broker lets it,
 * and reports what the producer's own metrics say about broker throttling:
 * <pre>
 *   java -cp client.jar mskmock.client.ThrottledProduce BOOTSTRAP TOPIC BYTES
 *     -> {"bytes": N, "seconds": S, "produce_throttle_time_avg": MS, "produce_throttle_time_max": MS}
 * </pre>
 * The metrics are read before the producer closes, from the "producer-metrics" group.
 */
public final class ThrottledProduce {
    private ThrottledProduce() {}

    private static double metric(KafkaProducer<?, ?> p, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : p.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) {
                Object v = e.getValue().metricValue();
                return v instanceof Double d ? d : Double.NaN;
            }
        }
        return Double.NaN;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ThrottledProduce BOOTSTRAP TOPIC BYTES");
            System.exit(2);
        }
        long total = Long.parseLong(args[2]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
        byte[] value = new byte[10 * 1024];
        long sent = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.partitionsFor(args[1]); // connected, metadata known: the clock times producing only
            long t0 = System.nanoTime();
            while (sent < total) {
                producer.send(new ProducerRecord<>(args[1], 0, null, value));
                sent += value.length;
            }
            producer.flush();
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf("{\"bytes\": %d, \"seconds\": %.3f, \"produce_throttle_time_avg\": %.3f, "
                + "\"produce_throttle_time_max\": %.3f}%n", sent, secs,
                metric(producer, "produce-throttle-time-avg"), metric(producer, "produce-throttle-time-max"));
        }
    }
}
