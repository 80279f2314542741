package mskmock.containers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.mskmock.testcontainers.MskMockContainer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Java Testcontainers module as a user would use it: one line starts mskmock on ephemeral host ports. */
class MskMockContainerTest {

    static final String IMAGE = System.getenv().getOrDefault("MSKMOCK_IMAGE", "mskmock:test");
    static MskMockContainer msk;

    @BeforeAll
    static void start() {
        msk = new MskMockContainer(IMAGE);
        msk.start();
    }

    @AfterAll
    static void stop() {
        if (msk != null) {
            msk.stop();
        }
    }

    static int portOf(String bootstrap) {
        return Integer.parseInt(bootstrap.substring(bootstrap.lastIndexOf(':') + 1));
    }

    static String get(String url) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url + ": " + r.body());
        return r.body();
    }

    @Test
    void portsAreDockerPickedAndAdvertised() throws Exception {
        int plain = portOf(msk.getBootstrapServers());
        int iam = portOf(msk.getIamBootstrapServers());
        // nothing bound them: Docker picked the host ports, never the container's own
        assertNotEquals(MskMockContainer.PLAINTEXT_PORT, plain);
        assertNotEquals(MskMockContainer.IAM_PORT, iam);
        String listeners = get(msk.getAdminUrl() + "/v1/listeners");
        for (var l : Map.of("external", plain, "external_iam", iam).entrySet()) {
            assertTrue(Pattern.compile("\"name\":\"" + l.getKey() + "\"[^}]*\"advertised_ports\":\\[" + l.getValue() + "\\]")
                    .matcher(listeners).find(), listeners);
        }
    }

    @Test
    @Timeout(120)
    void plaintextRoundTrip() throws Exception {
        roundTrip(Map.of("bootstrap.servers", msk.getBootstrapServers()), "plain");
    }

    @Test
    @Timeout(120)
    void iamRoundTrip() throws Exception {
        // aws-msk-iam-auth reads the AWS SDK's default chain: system properties come first after env
        System.setProperty("aws.accessKeyId", msk.getAccessKeyId());
        System.setProperty("aws.secretAccessKey", msk.getSecretAccessKey());
        System.setProperty("aws.region", msk.getRegion());
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("bootstrap.servers", msk.getIamBootstrapServers());
        cfg.put("security.protocol", "SASL_SSL");
        cfg.put("sasl.mechanism", "OAUTHBEARER");
        cfg.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
        cfg.put("sasl.login.callback.handler.class", "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler");
        cfg.put("sasl.client.callback.handler.class", "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler");
        cfg.put("ssl.truststore.type", "PEM");
        cfg.put("ssl.truststore.certificates", msk.getCaPem());
        roundTrip(cfg, "iam");
    }

    @Test
    void credentialsUriServesTheRole() throws Exception {
        assertTrue(get(msk.getCredentialsUri()).contains("\"AccessKeyId\":\"ASIA"));
    }

    @Test
    void configAndProfileBecomeEnvironment() {
        MskMockContainer c = new MskMockContainer(IMAGE).withProfile("provisioned").withConfig("log.level", "debug");
        assertEquals("provisioned", c.getEnvMap().get("MSKMOCK_PROFILE"));
        assertEquals("debug", c.getEnvMap().get("MSKMOCK_LOG_LEVEL"));
        assertThrows(IllegalArgumentException.class, () -> c.withProfile("dedicated"));
    }

    /** Creates a topic, produces three records and reads them back in a consumer group. */
    static void roundTrip(Map<String, Object> cfg, String name) throws Exception {
        List<String> sent = List.of("one", "two", "three");
        try (Admin admin = Admin.create(cfg)) {
            // the broker picks the replication factor: the module's 1 for one broker
            admin.createTopics(List.of(new NewTopic(name, Optional.of(1), Optional.empty()))).all().get();
        }
        try (var producer = new KafkaProducer<>(cfg, new StringSerializer(), new StringSerializer())) {
            for (String value : sent) {
                producer.send(new ProducerRecord<>(name, value)).get();
            }
        }
        Map<String, Object> consumerCfg = new HashMap<>(cfg);
        consumerCfg.put("group.id", name + "-readers");
        consumerCfg.put("auto.offset.reset", "earliest");
        List<String> received = new ArrayList<>();
        try (var consumer = new KafkaConsumer<>(consumerCfg, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(name));
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
