package mskmock.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * mskmock under Testcontainers: one synthetic broker whose external listener is published on the
 * same port on the host, so the address Metadata advertises (localhost:port) is one the host dials.
 */
class MskmockContainerTest {

    static final DockerImageName IMAGE =
            DockerImageName.parse(System.getenv().getOrDefault("MSKMOCK_IMAGE", "mskmock:test"));

    /** The container running mskmock, its external listener on host and container port {@code port}. */
    static GenericContainer<?> mskmock(int port) {
        return new GenericContainer<>(IMAGE)
                .withEnv("MSKMOCK_BROKER_COUNT", "1")
                .withEnv("MSKMOCK_DEFAULT_REPLICATION_FACTOR", "1") // serverless's 3 needs 3 brokers
                .withEnv("MSKMOCK_EXTERNAL_PORT", String.valueOf(port))
                .withEnv("MSKMOCK_EXTERNAL_ADVERTISED_HOST", "localhost")
                .withEnv("MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS", "0") // a group's first join: no 3 s wait
                // a fixed binding, not withExposedPorts(): Kafka clients dial the advertised port
                .withCreateContainerCmdModifier(cmd -> cmd
                        .withExposedPorts(ExposedPort.tcp(port))
                        .getHostConfig()
                        .withPortBindings(new PortBinding(Ports.Binding.bindPort(port), ExposedPort.tcp(port))))
                .waitingFor(Wait.forHealthcheck()); // the image's HEALTHCHECK: mskmock --probe
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Test
    @Timeout(120)
    void producesAndConsumesInAGroup() throws Exception {
        int port = freePort();
        try (GenericContainer<?> container = mskmock(port)) {
            container.start();
            String bootstrap = "localhost:" + port;
            String topic = "greetings";
            List<String> sent = List.of("one", "two", "three");

            // the serverless profile creates no topic on first use; the broker picks the replication factor
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                admin.createTopics(List.of(new NewTopic(topic, Optional.of(1), Optional.empty()))).all().get();
            }

            try (var producer = new KafkaProducer<>(Map.<String, Object>of("bootstrap.servers", bootstrap),
                    new StringSerializer(), new StringSerializer())) {
                for (String value : sent) {
                    producer.send(new ProducerRecord<>(topic, value)).get();
                }
            }

            List<String> received = new ArrayList<>();
            try (var consumer = new KafkaConsumer<>(Map.<String, Object>of(
                    "bootstrap.servers", bootstrap,
                    "group.id", "greeters",
                    "auto.offset.reset", "earliest"), new StringDeserializer(), new StringDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (received.size() < sent.size()) {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofSeconds(1))) {
                        received.add(record.value());
                    }
                }
                consumer.commitSync();
            }
            assertEquals(sent, received);
        }
    }
}
