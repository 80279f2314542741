package mskmock.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code group-consume}: one member of a consumer group (classic protocol), for the group tests.
 *
 * <p>Subscribes to one topic with the given assignor, auto-commit off, and prints one JSON
 * event per line on stdout, flushed at once:
 *
 * <pre>
 *   {"event":"assigned","partitions":[...],"topics":{"T":[...]},"generation":G}   after every
 *        rebalance callback that completes an assignment (also when the set is unchanged, so
 *        every rebalance is visible), and for cooperative-sticky also after an incremental
 *        revoke; always the full current set: "partitions" those of --topic, "topics" every
 *        topic's
 *   {"event":"record","t":"T","p":P,"o":OFFSET,"k":"key"}   every record handed to the program
 *   {"event":"committed","offsets":{"P":next_offset,...}}    after each successful commit
 *   {"event":"error","message":"..."}                        any client exception
 *   {"event":"closed"}                                       after a clean close
 * </pre>
 *
 * Offsets of processed records are committed after each poll batch (sync, async or none), and
 * synchronously for partitions being revoked, so a clean rebalance re-delivers nothing. Runs until
 * --max-records records were processed, stdin reaches EOF, or SIGTERM; then commits, closes (a
 * dynamic member leaves the group, a static one does not) and exits 0.
 *
 * <p>With {@code --pattern RE} instead of {@code --topic} (group.protocol=consumer only), the
 * member subscribes with {@code subscribe(SubscriptionPattern)}: the broker resolves RE (RE2/J
 * syntax, KIP-848) against the topics it has, now and as topics are created or deleted, and
 * the client never checks it itself, so a pattern the broker refuses ends the member with
 * an error event (InvalidRegularExpression from poll) and exit 1. Commits' "offsets" keys
 * are then "T-P".
 */
final class GroupConsume implements ConsumerRebalanceListener {
    private final Client.Options o;
    private final boolean cooperative;
    private final KafkaConsumer<byte[], byte[]> consumer;
    /** The current assignment, topic by topic. */
    private final TreeMap<String, TreeSet<Integer>> owned = new TreeMap<>();
    /** Next offsets of processed records that are not committed yet. */
    private final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
    /** Next offsets of every processed record (async mode commits these synchronously at close). */
    private final Map<TopicPartition, OffsetAndMetadata> processed = new HashMap<>();
    private static volatile boolean stopping;
    private int consumed;

    private GroupConsume(Client.Options o) {
        this.o = o;
        boolean kip848 = o.groupProtocol.equals("consumer");
        // KIP-848 reconciles incrementally: the listener sees what is added and revoked, as with cooperative-sticky
        this.cooperative = kip848 || o.assignor.equals("cooperative-sticky");
        Properties p = new Properties();
        p.put("bootstrap.servers", o.bootstrap);
        p.put("client.id", "mskmock-test-java");
        Client.addSecurity(o, p);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, o.group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, o.groupProtocol);
        if (kip848) {
            // the broker assigns (group.remote.assignor); session and heartbeat come from the broker too
            p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, o.assignor);
        } else {
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass(o.assignor));
        }
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
        // Also the JoinGroup rebalance timeout: bounds how long a rebalance can wait for a member.
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "60000");
        if (o.instanceId != null) {
            p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, o.instanceId);
        }
        if (o.sessionTimeoutMs > 0 && !kip848) {
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.toString(o.sessionTimeoutMs));
            // Frequent heartbeats: members learn of a rebalance within about a second.
            int hb = Math.max(100, Math.min(1000, o.sessionTimeoutMs / 6));
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Integer.toString(hb));
        }
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.consumer = new KafkaConsumer<>(p);
    }

    static String assignorClass(String name) {
        switch (name) {
            case "range":
                return RangeAssignor.class.getName();
            case "roundrobin":
                return RoundRobinAssignor.class.getName();
            case "sticky":
                return StickyAssignor.class.getName();
            case "cooperative-sticky":
                return CooperativeStickyAssignor.class.getName();
            default:
                return null;
        }
    }

    /** Runs the command; returns the exit status. */
    static int run(Client.Options o) {
        installStopTriggers();
        GroupConsume g = new GroupConsume(o);
        return g.loop();
    }

    @SuppressWarnings("restriction")
    private static void installStopTriggers() {
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), sig -> stopping = true);
        Thread stdin = new Thread(() -> {
            byte[] buf = new byte[256];
            InputStream in = System.in;
            try {
                while (in.read(buf) >= 0) {
                    // Anything written to stdin is ignored; EOF means stop.
                }
            } catch (IOException e) {
                // Treat a broken stdin like EOF.
            }
            stopping = true;
        }, "stdin-watch");
        stdin.setDaemon(true);
        stdin.start();
    }

    private boolean done() {
        return stopping || (o.maxRecords >= 0 && consumed >= o.maxRecords);
    }

    private int loop() {
        int rc = 0;
        try {
            if (o.pattern != null) {
                consumer.subscribe(new SubscriptionPattern(o.pattern), this);
            } else {
                consumer.subscribe(List.of(o.topic), this);
            }
            while (!done()) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(200));
                } catch (RetriableException e) {
                    error("poll", e);
                    continue;
                } catch (KafkaException e) {
                    error("poll", e);
                    rc = 1;
                    break;
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    if (o.maxRecords >= 0 && consumed >= o.maxRecords) {
                        break; // the rest of the batch is neither processed nor committed
                    }
                    emit("{\"event\":\"record\",\"t\":" + Client.jsonString(r.topic()) + ",\"p\":" + r.partition() + ",\"o\":" + r.offset() + ",\"k\":"
                            + (r.key() == null ? "null"
                                    : Client.jsonString(new String(r.key(), StandardCharsets.UTF_8)))
                            + "}");
                    consumed++;
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    OffsetAndMetadata next = new OffsetAndMetadata(r.offset() + 1);
                    pending.put(tp, next);
                    processed.put(tp, next);
                }
                commitPending(o.commit.equals("async"));
            }
            if (rc == 0) {
                if (o.commit.equals("async")) {
                    // In-flight async commits may still fail: commit everything owned once more.
                    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : processed.entrySet()) {
                        if (owns(e.getKey())) {
                            pending.put(e.getKey(), e.getValue());
                        }
                    }
                }
                commitPending(false);
            }
        } catch (KafkaException e) {
            error("group-consume", e);
            rc = 1;
        } finally {
            try {
                consumer.close(Duration.ofSeconds(30));
            } catch (KafkaException e) {
                error("close", e);
                rc = 1;
            }
        }
        if (rc == 0) {
            emit("{\"event\":\"closed\"}");
        }
        return rc;
    }

    /** Commits the pending offsets; a failed sync commit keeps them for the next attempt. */
    private void commitPending(boolean async) {
        if (o.commit.equals("none") || pending.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> batch = new HashMap<>(pending);
        if (async) {
            pending.clear();
            consumer.commitAsync(batch, (offsets, e) -> {
                if (e != null) {
                    error("commitAsync", e);
                } else {
                    committed(offsets);
                }
            });
            return;
        }
        try {
            consumer.commitSync(batch, Duration.ofSeconds(30));
        } catch (RetriableException | RebalanceInProgressException e) {
            error("commitSync", e); // retried after the next poll
            return;
        } catch (KafkaException e) {
            error("commitSync", e); // e.g. CommitFailedException: the partitions went elsewhere
            pending.keySet().removeAll(batch.keySet());
            return;
        }
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : batch.entrySet()) {
            pending.remove(e.getKey(), e.getValue());
        }
        committed(batch);
    }

    private void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        TreeMap<String, Long> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            TopicPartition tp = e.getKey();
            sorted.put(o.pattern != null ? tp.toString() : Integer.toString(tp.partition()), e.getValue().offset());
        }
        StringBuilder sb = new StringBuilder("{\"event\":\"committed\",\"offsets\":{");
        boolean first = true;
        for (Map.Entry<String, Long> e : sorted.entrySet()) {
            sb.append(first ? "" : ",").append('"').append(e.getKey()).append("\":").append(e.getValue());
            first = false;
        }
        emit(sb.append("}}").toString());
    }

    // -- ConsumerRebalanceListener (runs inside poll/close on this thread) ----------------------

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        // Commit what was processed from these partitions before another member gets them.
        Map<TopicPartition, OffsetAndMetadata> keep = new HashMap<>(pending);
        pending.keySet().retainAll(partitions);
        commitPending(false);
        keep.keySet().removeAll(partitions);
        pending.clear();
        pending.putAll(keep);
        for (TopicPartition tp : partitions) {
            disown(tp);
        }
        if (cooperative && !partitions.isEmpty()) {
            assigned();
        }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            owned.computeIfAbsent(tp.topic(), t -> new TreeSet<>()).add(tp.partition());
        }
        assigned();
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        pending.keySet().removeAll(partitions);
        for (TopicPartition tp : partitions) {
            disown(tp);
        }
        emit("{\"event\":\"error\",\"message\":" + Client.jsonString("partitions lost: " + partitions) + "}");
        assigned();
    }

    private boolean owns(TopicPartition tp) {
        TreeSet<Integer> ps = owned.get(tp.topic());
        return ps != null && ps.contains(tp.partition());
    }

    private void disown(TopicPartition tp) {
        TreeSet<Integer> ps = owned.get(tp.topic());
        if (ps != null && ps.remove(tp.partition()) && ps.isEmpty()) {
            owned.remove(tp.topic());
        }
    }

    private static void appendList(StringBuilder sb, Collection<Integer> ps) {
        sb.append('[');
        boolean first = true;
        for (int q : ps) {
            sb.append(first ? "" : ",").append(q);
            first = false;
        }
        sb.append(']');
    }

    private void assigned() {
        StringBuilder sb = new StringBuilder("{\"event\":\"assigned\",\"partitions\":");
        appendList(sb, o.topic == null ? List.of() : owned.getOrDefault(o.topic, new TreeSet<>()));
        sb.append(",\"topics\":{");
        boolean first = true;
        for (Map.Entry<String, TreeSet<Integer>> e : owned.entrySet()) {
            sb.append(first ? "" : ",").append(Client.jsonString(e.getKey())).append(':');
            appendList(sb, e.getValue());
            first = false;
        }
        sb.append('}');
        try {
            sb.append(",\"generation\":").append(consumer.groupMetadata().generationId());
        } catch (RuntimeException e) {
            // No generation to show.
        }
        emit(sb.append('}').toString());
    }

    private void error(String where, Throwable e) {
        emit("{\"event\":\"error\",\"message\":" + Client.jsonString(where + ": " + e) + "}");
    }

    private static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
