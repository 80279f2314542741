package mskmock.client;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * {@code streams-wordcount}: Kafka Streams WordCount with processing.guarantee=exactly_once_v2,
 * running until killed.
 *
 * <pre>
 *   streams-wordcount --bootstrap B --application-id A --input I --output O --state-dir D
 *                     [--commit-interval-ms 100] [--transaction-timeout-ms 5000]
 *                     [--session-timeout-ms 6000] [--threads 1]
 *                     [--processing-guarantee exactly_once_v2|at_least_once]
 * </pre>
 *
 * Input values are lines of text; each word (lower-cased, split on non-word characters) is
 * re-keyed (a repartition topic), counted in a persistent store (RocksDB in D, with its changelog)
 * and every new count is written to O as (String word, Long count). The record cache is off
 * (statestore.cache.max.bytes=0) and the producer sends at once (linger.ms=0, so a crash leaves
 * records of an open transaction in the log), so O gets every count 1, 2, 3, ... of every word: under
 * exactly-once, a read_committed reader sees for each word exactly 1..N, in order.
 *
 * <p>Prints one JSON event per line on stdout, flushed at once:
 * <pre>
 *   {"event":"state","from":"CREATED","to":"REBALANCING"}     every KafkaStreams state change
 *   {"event":"uncaught","thread":"...","error":"Class: message","causes":["Class", ...]}
 *                              a stream thread died; the handler answers REPLACE_THREAD
 *   {"event":"closed","clean":true|false}                     after SIGTERM: close(15 s)
 * </pre>
 * SIGKILL is the crash the tests use; SIGTERM closes cleanly. A usage error exits 2.
 */
final class StreamsWordCount {
    static final String COMMAND = "streams-wordcount";
    private static final Set<String> OPTIONS = Set.of("bootstrap", "application-id", "input", "output", "state-dir",
            "commit-interval-ms", "transaction-timeout-ms", "session-timeout-ms", "threads", "processing-guarantee");

    private StreamsWordCount() {}

    static int run(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || !OPTIONS.contains(args[i].substring(2)) || i + 1 >= args.length) {
                System.err.println("error: bad option " + args[i]);
                return usage();
            }
            o.put(args[i].substring(2), args[i + 1]);
        }
        for (String r : new String[] {"bootstrap", "application-id", "input", "output", "state-dir"}) {
            if (!o.containsKey(r)) {
                System.err.println("error: --" + r + " is required");
                return usage();
            }
        }
        int sessionMs;
        try {
            sessionMs = Integer.parseInt(o.getOrDefault("session-timeout-ms", "6000"));
            Integer.parseInt(o.getOrDefault("commit-interval-ms", "100"));
            Integer.parseInt(o.getOrDefault("transaction-timeout-ms", "5000"));
            Integer.parseInt(o.getOrDefault("threads", "1"));
        } catch (NumberFormatException e) {
            System.err.println("error: " + e.getMessage());
            return usage();
        }

        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, o.get("application-id"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        p.put(StreamsConfig.CLIENT_ID_CONFIG, "mskmock-test-streams");
        // at_least_once only to tell, by hand, a transaction problem from any other.
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG,
                o.getOrDefault("processing-guarantee", StreamsConfig.EXACTLY_ONCE_V2));
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, o.getOrDefault("commit-interval-ms", "100"));
        p.put(StreamsConfig.STATE_DIR_CONFIG, o.get("state-dir"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, o.getOrDefault("threads", "1"));
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
                o.getOrDefault("transaction-timeout-ms", "5000"));
        // Every record goes out at once rather than at the commit's flush: a crash then leaves an
        // open transaction with records in the log, which read_committed must not show.
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), "0");
        // Bounded blocking calls, so a broker that does not answer shows as an exception.
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_BLOCK_MS_CONFIG), "20000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), Integer.toString(sessionMs));
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
                Integer.toString(Math.max(100, sessionMs / 6)));
        // Also the rebalance timeout: how long a rebalance waits for members to rejoin.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG), "30000");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), "100");

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(o.get("input"), Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line == null ? new String[0]
                        : line.toLowerCase(Locale.ROOT).split("\\W+")))
                .filter((k, w) -> !w.isEmpty())
                .groupBy((k, w) -> w, Grouped.with("words", Serdes.String(), Serdes.String()))
                .count(Materialized.as("counts"))
                .toStream()
                .to(o.get("output"), Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), p);
        AtomicInteger replaced = new AtomicInteger();
        streams.setStateListener((to, from) ->
                emit("{\"event\":\"state\",\"from\":\"" + from + "\",\"to\":\"" + to + "\"}"));
        streams.setUncaughtExceptionHandler(e -> {
            replaced.incrementAndGet();
            StringBuilder causes = new StringBuilder("[");
            for (String c : Transactions.chain(e)) {
                causes.append(causes.length() > 1 ? "," : "").append(Client.jsonString(c));
            }
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            emit("{\"event\":\"uncaught\",\"thread\":" + Client.jsonString(Thread.currentThread().getName())
                    + ",\"error\":" + Client.jsonString(e.getClass().getSimpleName() + ": " + e.getMessage())
                    + ",\"root\":" + Client.jsonString(root.getClass().getSimpleName() + ": " + root.getMessage())
                    + ",\"causes\":" + causes + "]}");
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "shutdown"));
        streams.start();
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean clean = streams.close(Duration.ofSeconds(15));
        emit("{\"event\":\"closed\",\"clean\":" + clean + ",\"threads_replaced\":" + replaced.get() + "}");
        closed.countDown();
        return clean ? 0 : 1;
    }

    private static int usage() {
        System.err.println("usage: client streams-wordcount --bootstrap B --application-id A --input I --output O"
                + " --state-dir D [--commit-interval-ms 100] [--transaction-timeout-ms 5000]"
                + " [--session-timeout-ms 6000] [--threads 1] [--processing-guarantee exactly_once_v2|at_least_once]");
        return 2;
    }

    private static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
