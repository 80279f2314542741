package io.github.mskmock.testcontainers;

import com.github.dockerjava.api.command.InspectContainerResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

/**
 * mskmock, a local AWS MSK Serverless broker, with its external listeners on ephemeral host
 * ports, an IAM key and role of its own, and its CA at hand.
 *
 * <pre>{@code
 * try (MskMockContainer msk = new MskMockContainer("mskmock:latest")) {
 *     msk.start();
 *     String bootstrap = msk.getBootstrapServers();
 * }
 * }</pre>
 *
 * No image is published: build it from the mskmock repository with
 * {@code docker build -f docker/Dockerfile -t mskmock:latest .} (docs/containers.md).
 */
public class MskMockContainer extends GenericContainer<MskMockContainer> {

    public static final String DEFAULT_IMAGE = "mskmock:latest";
    /** The external listeners bind these inside the container, broker i on port + i; Docker
     * publishes each on a host port it picks, and start() tells the broker which. IAM starts
     * 100 above so the two ranges never meet. */
    public static final int PLAINTEXT_PORT = 19092;
    public static final int IAM_PORT = 19192;
    public static final int ADMIN_PORT = 9080;
    public static final int CREDENTIALS_PORT = 9180;
    /** The image's own listeners use 9092-9097 and 9098 up: more brokers would collide. */
    public static final int MAX_BROKERS = 6;
    public static final String ROLE = "testcontainers";
    static final String IDENTITIES_PATH = "/etc/mskmock/testcontainers-identities.json";
    static final String CA_PATH = "/data/tls/ca.pem";
    static final String ACCOUNT = "123456789012";
    static final Set<String> PROFILES = Set.of("serverless", "provisioned", "kafka");

    private static final SecureRandom RANDOM = new SecureRandom();

    private final String accessKeyId = "AKIA" + random("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
    private final String secretAccessKey =
            random("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 40);
    private int brokerCount = 1;
    private String host;
    private String caPem;

    public MskMockContainer() {
        this(DEFAULT_IMAGE);
    }

    public MskMockContainer(String image) {
        this(DockerImageName.parse(image));
    }

    public MskMockContainer(DockerImageName image) {
        super(image);
        // MSK makes a group's first join wait 3 s for more members; a test has one.
        withEnv("MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
        waitingFor(Wait.forHealthcheck()); // the image's HEALTHCHECK: mskmock --probe
    }

    /** The environment variable the broker reads a configuration key from. */
    public static String configEnvName(String key) {
        return "MSKMOCK_" + key.replace('.', '_').toUpperCase(Locale.ROOT);
    }

    public MskMockContainer withBrokerCount(int n) {
        if (n < 1 || n > MAX_BROKERS) {
            throw new IllegalArgumentException("broker count must be 1 to " + MAX_BROKERS + ", not " + n);
        }
        brokerCount = n;
        return self();
    }

    /** serverless (the default), provisioned or kafka. */
    public MskMockContainer withProfile(String profile) {
        if (!PROFILES.contains(profile)) {
            throw new IllegalArgumentException("profile must be one of " + PROFILES + ", not " + profile);
        }
        return withEnv("MSKMOCK_PROFILE", profile);
    }

    /** Any key of conf/mskmock.properties, e.g. {@code withConfig("log.level", "debug")}. */
    public MskMockContainer withConfig(String key, String value) {
        return withEnv(configEnvName(key), value);
    }

    @Override
    protected void configure() {
        // MSK's replication factor 3 needs 3 brokers: fewer get their count unless set.
        if (brokerCount < 3 && !getEnvMap().containsKey("MSKMOCK_DEFAULT_REPLICATION_FACTOR")) {
            withEnv("MSKMOCK_DEFAULT_REPLICATION_FACTOR", String.valueOf(brokerCount));
        }
        // SASL tokens and the TLS certificate name the host, so it is set at creation; only the
        // ports wait until Docker has picked them.
        host = getHost();
        withEnv("MSKMOCK_BROKER_COUNT", String.valueOf(brokerCount));
        withEnv("MSKMOCK_EXTERNAL_PORT", String.valueOf(PLAINTEXT_PORT));
        withEnv("MSKMOCK_EXTERNAL_IAM_PORT", String.valueOf(IAM_PORT));
        withEnv("MSKMOCK_EXTERNAL_ADVERTISED_HOST", host);
        withEnv("MSKMOCK_IAM_IDENTITIES_FILE", IDENTITIES_PATH);
        for (int i = 0; i < brokerCount; i++) {
            addExposedPorts(PLAINTEXT_PORT + i, IAM_PORT + i);
        }
        addExposedPorts(ADMIN_PORT, CREDENTIALS_PORT);
        withCopyToContainer(Transferable.of(identities()), IDENTITIES_PATH);
    }

    private String identities() {
        return "{\"identities\": [{\"access_key_id\": \"" + accessKeyId + "\", \"secret_access_key\": \""
                + secretAccessKey + "\", \"principal\": \"arn:aws:iam::" + ACCOUNT + ":user/testcontainers\"}],"
                + " \"roles\": [{\"name\": \"" + ROLE + "\", \"arn\": \"arn:aws:iam::" + ACCOUNT + ":role/" + ROLE
                + "\", \"session_name\": \"" + ROLE + "\"}]}";
    }

    @Override
    protected void containerIsStarted(InspectContainerResponse info) {
        // called once the health check passed: clients get the mapped ports from now on
        advertise("external", mappedPorts(PLAINTEXT_PORT));
        advertise("external_iam", mappedPorts(IAM_PORT));
        caPem = copyFileFromContainer(CA_PATH, in -> new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }

    private List<Integer> mappedPorts(int base) {
        return IntStream.range(0, brokerCount).mapToObj(i -> getMappedPort(base + i)).collect(Collectors.toList());
    }

    private void advertise(String listener, List<Integer> ports) {
        String body = "{\"ports\": " + ports + "}";
        HttpRequest req = HttpRequest.newBuilder(URI.create(getAdminUrl() + "/v1/listeners/" + listener + "/advertised"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            HttpResponse<String> resp = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() != 200) {
                throw new IllegalStateException("mskmock refused to advertise " + listener + " as " + ports + ": "
                        + resp.statusCode() + " " + resp.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("mskmock's admin API did not answer", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while advertising " + listener, e);
        }
    }

    private String bootstrap(int base) {
        return mappedPorts(base).stream().map(p -> host + ":" + p).collect(Collectors.joining(","));
    }

    /** Plaintext, no authentication. */
    public String getBootstrapServers() {
        return bootstrap(PLAINTEXT_PORT);
    }

    /** SASL_SSL (OAUTHBEARER or AWS_MSK_IAM); trust {@link #getCaPem()}. */
    public String getIamBootstrapServers() {
        return bootstrap(IAM_PORT);
    }

    public String getAdminUrl() {
        return "http://" + host + ":" + getMappedPort(ADMIN_PORT);
    }

    /** The CA of the broker's generated certificate, PEM: kafka-clients takes it as
     * {@code ssl.truststore.type=PEM} with {@code ssl.truststore.certificates}. */
    public String getCaPem() {
        return caPem;
    }

    /** The region IAM tokens must be signed for (iam.region). */
    public String getRegion() {
        return getEnvMap().getOrDefault("MSKMOCK_IAM_REGION", "us-east-1");
    }

    /** A long-term key the broker accepts, allowed everything (it has no policies). */
    public String getAccessKeyId() {
        return accessKeyId;
    }

    public String getSecretAccessKey() {
        return secretAccessKey;
    }

    /** For AWS_CONTAINER_CREDENTIALS_FULL_URI: the role's temporary credentials, rotated as on
     * ECS. AWS SDKs take a plain-HTTP full URI only on loopback (or ECS's and EKS's link-local
     * addresses), so this serves where the Docker host is localhost. */
    public String getCredentialsUri() {
        return "http://" + host + ":" + getMappedPort(CREDENTIALS_PORT) + "/role/" + ROLE;
    }

    private static String random(String alphabet, int n) {
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            sb.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return sb.toString();
    }
}
