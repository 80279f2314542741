package example;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Creates a topic, produces 10 records and reads them back in a consumer group: kafka-clients
 * against mskmock (or MSK). Plaintext by default; IAM=1 for SASL_SSL with AWS_MSK_IAM
 * (aws-msk-iam-auth). Prints one JSON line; exits 1 on any failure, within 60 s.
 */
public final class Main {
    static final int COUNT = 10;
    static final int TIMEOUT_S = 60;

    public static void main(String[] args) {
        boolean iam = "1".equals(System.getenv("IAM"));
        String bootstrap = env("BOOTSTRAP", iam ? "localhost:9098" : "localhost:9092");
        // The clients retry an unreachable broker for minutes; the example gives up sooner.
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TIMEOUT_S * 1000L);
            } catch (InterruptedException e) {
                return;
            }
            System.err.printf("example failed: not done within %d s (is the broker at %s?)%n",
                    TIMEOUT_S, bootstrap);
            Runtime.getRuntime().halt(1);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            run(bootstrap, iam);
        } catch (Exception e) {
            Throwable t = e instanceof ExecutionException ? e.getCause() : e;
            StringBuilder why = new StringBuilder("example failed: ").append(t);
            // "Failed to create new KafkaAdminClient" alone does not say which file is missing
            for (t = t.getCause(); t != null; t = t.getCause()) {
                why.append(" <- ").append(t);
            }
            System.err.println(why);
            System.exit(1);
        }
        System.exit(0);
    }

    static void run(String bootstrap, boolean iam) throws Exception {
        String topic = "example-java-" + UUID.randomUUID().toString().substring(0, 8);
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        if (iam) {
            common.put("security.protocol", "SASL_SSL");
            // mskmock's local CA (Kafka reads PEM trust stores since 2.7). Empty for MSK, whose
            // certificates chain to the JDK's own trust store.
            String ca = System.getenv().getOrDefault("CA_FILE", "../../data/tls/ca.pem");
            if (!ca.isEmpty()) {
                common.put("ssl.truststore.type", "PEM");
                common.put("ssl.truststore.location", ca);
            }
            common.put("sasl.mechanism", "AWS_MSK_IAM");
            common.put("sasl.jaas.config", "software.amazon.msk.auth.iam.IAMLoginModule required;");
            common.put("sasl.client.callback.handler.class",
                    "software.amazon.msk.auth.iam.IAMClientCallbackHandler");
            // AWS_MSK_IAM reads the signing region from an MSK host name; for any other name it
            // asks the AWS SDK, which finds none unless AWS_REGION (or aws.region) is set.
            if (System.getenv("AWS_REGION") == null && System.getProperty("aws.region") == null) {
                System.setProperty("aws.region", "us-east-1");
            }
        }

        // MSK Serverless creates no topic on first use. The replication factor is left to the
        // broker: MSK Serverless allows only 3, its default.
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(3), Optional.empty())))
                    .all().get(30, TimeUnit.SECONDS);
        }

        Properties p = new Properties();
        p.putAll(common);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < COUNT; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, "key-" + i, "value-" + i)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
        }

        Properties c = new Properties();
        c.putAll(common);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, topic);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Set<String> consumed = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(topic));
            while (consumed.size() < COUNT) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofSeconds(1))) {
                    consumed.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(10));
        }

        System.out.printf("{\"lang\": \"java\", \"topic\": \"%s\", \"iam\": %b, \"produced\": %d, \"consumed\": %d}%n",
                topic, iam, COUNT, consumed.size());
    }

    static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }
}
