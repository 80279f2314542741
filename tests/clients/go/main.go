// Command client is the franz-go test client for mskmock integration tests.
//
// Contract (shared with tests/clients/node and tests/clients/java): the last stdout line is
// exactly one JSON object; any error exits non-zero with a message on stderr.
//
//	create-topic --bootstrap B --topic T --partitions P                 -> {"created": T}
//	produce --bootstrap B --topic T --count N --partitions P --compression C [--idempotent]
//	                                                                    -> {"produced": N}
//	consume --bootstrap B --topic T --count N --partitions P            -> {"consumed": N,
//	                                                                        "per_partition": {...}}
//	list-topics --bootstrap B                                           -> {"topics": [names, sorted]}
//	group-consume --bootstrap B --group G --topic T [--assignor NAME] [--instance-id ID]
//	              [--group-protocol classic|consumer]
//	              [--session-timeout-ms MS] [--max-records N] [--commit sync|async|none]
//	                                                      -> JSON-line events (see group.go)
//	kafka-go --bootstrap B --topic T --group G   -> segmentio/kafka-go's paths (see kafkago.go)
//	txn-transform --bootstrap B --group G --input T --output O --transactional-id ID
//	              [--batch N] [--abort-every K] [--init-timeout S] [--timeout S]
//	                                                      -> GroupTransactSession (see txn.go)
//	group-config --bootstrap B --group G [--set K=V]... [--delete K]...
//	                                                      -> a group's configs (see groupconfig.go)
//	aws-calls --endpoint URL --region R [--wrong-secret S]
//	                                 -> STS and kafka control-plane calls (see awsapi.go)
//	terraform-serverless apply|destroy --endpoint URL --region R ...
//	                                 -> aws_msk_serverless_cluster's calls (see tfserverless.go)
//
// Record i goes to partition i % P, key "key-<i>", value "value-<i>-" + "x" * (i % 50),
// headers [("idx", "<i>"), ("codec", C)].
//
// IAM: --security-protocol, --ca, --mechanism, --region, --token-cache (see iam.go).
//
// Duration mode: produce|consume --duration S (instead of --count) runs for S seconds:
// produce sends one record every ~50 ms (synchronously, acks=-1; a failed send is reported
// and the same record is sent again at the next tick, so the topic holds an unbroken
// sequence), consume reads from the earliest offset and checks every record. Both keep going
// after errors and write JSON-line events to stdout as they happen, each with "t" (Unix ms):
//
//	{"event":"error","i":I,"message":M}          a failed send, or a fetch error
//	{"event":"token",...} {"event":"credentials",...}   what was signed with (iam.go)
//	{"event":"connect"|"disconnect"|"connect-error","node":N}
//	{"event":"log","level":"WARN"|"ERROR","message":M,...}   franz-go's warnings and errors
//
// and end with {"produced"|"consumed": N, "errors": E, "disconnects": D, ...} (exit 0).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type options struct {
	bootstrap   string
	topic       string
	count       int
	partitions  int
	compression string
	idempotent  bool
	duration    time.Duration
	iam         iamOptions
	iamKgo      []kgo.Opt
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

var codecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"gzip":   kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
}

func keyOf(i int) string   { return "key-" + strconv.Itoa(i) }
func valueOf(i int) string { return "value-" + strconv.Itoa(i) + "-" + strings.Repeat("x", i%50) }

func parse(cmd string, args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&o.bootstrap, "bootstrap", "", "comma-separated host:port list")
	fs.StringVar(&o.topic, "topic", "", "topic name")
	fs.IntVar(&o.count, "count", -1, "number of records")
	fs.IntVar(&o.partitions, "partitions", 0, "number of partitions")
	fs.StringVar(&o.compression, "compression", "", "none, gzip, snappy, lz4 or zstd")
	fs.BoolVar(&o.idempotent, "idempotent", false, "use the idempotent producer")
	durationS := fs.Float64("duration", 0, "produce/consume: run this many seconds (instead of --count)")
	addIAMFlags(fs, &o.iam)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := o.iam.check(); err != nil {
		return o, err
	}
	if *durationS != 0 {
		if cmd != "produce" && cmd != "consume" {
			return o, errors.New("--duration is for produce and consume")
		}
		if *durationS < 0 || o.count >= 0 {
			return o, errors.New("--duration must be > 0 and excludes --count")
		}
		o.duration = time.Duration(*durationS * float64(time.Second))
		if o.compression == "" {
			o.compression = "none"
		}
		eventsOn = true
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.bootstrap == "" {
		return o, errors.New("--bootstrap is required")
	}
	if cmd == "list-topics" {
		if o.topic != "" || o.partitions != 0 || o.count >= 0 {
			return o, errors.New("list-topics takes no --topic, --partitions or --count")
		}
	} else if o.topic == "" {
		return o, errors.New("--topic is required")
	} else if o.partitions < 1 {
		return o, errors.New("--partitions must be >= 1")
	}
	if (cmd == "produce" || cmd == "consume") && o.count < 0 && o.duration == 0 {
		return o, errors.New("--count is required")
	}
	if cmd == "produce" {
		if _, ok := codecs[o.compression]; !ok {
			return o, fmt.Errorf("--compression must be one of none, gzip, snappy, lz4, zstd (got %q)", o.compression)
		}
	}
	var err error
	if o.iamKgo, err = iamOpts(context.Background(), o.iam); err != nil {
		return o, err
	}
	return o, nil
}

func baseOpts(o options) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...),
		kgo.ClientID("mskmock-test-franz-go"),
		kgo.WithLogger(eventLogger{kgo.BasicLogger(os.Stderr, logLevel(), func() string {
			return time.Now().UTC().Format("2006-01-02T15:04:05.000Z ")
		})}),
		kgo.DialTimeout(5 * time.Second),
		kgo.WithHooks(connHooks{}),
	}
	return append(opts, o.iamKgo...)
}

func logLevel() kgo.LogLevel {
	switch os.Getenv("FRANZ_LOG_LEVEL") {
	case "debug":
		return kgo.LogLevelDebug
	case "info":
		return kgo.LogLevelInfo
	case "error":
		return kgo.LogLevelError
	}
	return kgo.LogLevelWarn
}

func createTopic(ctx context.Context, o options) (any, error) {
	cl, err := kgo.NewClient(baseOpts(o)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// Replication factor -1: let the broker choose (MSK Serverless fixes it at 3).
	resp, err := adm.CreateTopic(ctx, int32(o.partitions), -1, nil, o.topic)
	if err != nil {
		if resp.ErrMessage != "" {
			return nil, fmt.Errorf("create topic %s: %w (%s)", o.topic, err, resp.ErrMessage)
		}
		return nil, fmt.Errorf("create topic %s: %w", o.topic, err)
	}
	if resp.NumPartitions != -1 && resp.NumPartitions != int32(o.partitions) {
		return nil, fmt.Errorf("create topic %s: response says %d partitions, asked for %d", o.topic, resp.NumPartitions, o.partitions)
	}
	// Wait until metadata shows every partition with a leader, as kafkajs does.
	for {
		md, err := adm.Metadata(ctx, o.topic)
		if err == nil {
			td, ok := md.Topics[o.topic]
			if ok && td.Err == nil && len(td.Partitions) == o.partitions {
				ready := true
				for _, p := range td.Partitions {
					if p.Err != nil || p.Leader < 0 {
						ready = false
					}
				}
				if ready {
					return map[string]any{"created": o.topic}, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("topic %s created but its partitions got no leaders in time (last metadata error: %v)", o.topic, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// listTopics asks for the metadata of all topics, as `kafka-topics --list` does; the broker
// answers with the topics the principal may describe.
func listTopics(ctx context.Context, o options) (any, error) {
	cl, err := kgo.NewClient(baseOpts(o)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	if err := topics.Error(); err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	return map[string]any{"topics": topics.Names()}, nil
}

func produce(ctx context.Context, o options) (any, error) {
	if o.duration > 0 {
		return produceFor(ctx, o)
	}
	opts := append(baseOpts(o),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(codecs[o.compression]),
		kgo.ProducerBatchMaxBytes(16<<10), // several batches per partition
		kgo.ProduceRequestTimeout(30*time.Second),
		kgo.RecordDeliveryTimeout(60*time.Second),
	)
	if !o.idempotent {
		// franz-go's producer is idempotent by default.
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	var (
		mu       sync.Mutex
		firstErr error
		acked    int
	)
	for i := 0; i < o.count; i++ {
		r := &kgo.Record{
			Topic:     o.topic,
			Partition: int32(i % o.partitions),
			Key:       []byte(keyOf(i)),
			Value:     []byte(valueOf(i)),
			Headers: []kgo.RecordHeader{
				{Key: "idx", Value: []byte(strconv.Itoa(i))},
				{Key: "codec", Value: []byte(o.compression)},
			},
		}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("produce %s partition %d (key %s): %w", r.Topic, r.Partition, r.Key, err)
				}
				return
			}
			acked++
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return nil, firstErr
	}
	if acked != o.count {
		return nil, fmt.Errorf("only %d of %d records acknowledged", acked, o.count)
	}
	return map[string]any{"produced": o.count}, nil
}

func consume(ctx context.Context, o options) (any, error) {
	if o.duration > 0 {
		return consumeFor(ctx, o)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	// No consumer group: every partition is assigned directly, starting at the earliest offset.
	assign := map[int32]kgo.Offset{}
	for p := 0; p < o.partitions; p++ {
		assign[int32(p)] = kgo.NewOffset().AtStart()
	}
	opts := append(baseOpts(o),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.topic: assign}),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	// franz-go silently retries an unknown topic until the deadline; check metadata first so
	// a missing topic or a wrong partition count fails at once with a clear message.
	md, err := kadm.NewClient(cl).Metadata(ctx, o.topic)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[o.topic]
	if !ok {
		return nil, fmt.Errorf("metadata response lacks topic %s", o.topic)
	}
	if td.Err != nil {
		return nil, fmt.Errorf("metadata for %s: %w", o.topic, td.Err)
	}
	if len(td.Partitions) != o.partitions {
		return nil, fmt.Errorf("metadata reports %d partitions for %s, expected %d", len(td.Partitions), o.topic, o.partitions)
	}

	expectedIn := func(p int) int {
		if o.count <= p {
			return 0
		}
		return (o.count-1-p)/o.partitions + 1
	}
	nextIndex := make([]int, o.partitions) // next i expected in partition p: p, p+P, ...
	counts := make([]int, o.partitions)
	for p := range nextIndex {
		nextIndex[p] = p
	}
	consumed := 0
	for consumed < o.count {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("timed out after 60 s with %d/%d records, per partition %v", consumed, o.count, counts)
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			e := errs[0]
			return nil, fmt.Errorf("fetch %s/%d: %w", e.Topic, e.Partition, e.Err)
		}
		var verr error
		fetches.EachRecord(func(r *kgo.Record) {
			if verr != nil {
				return
			}
			p := int(r.Partition)
			if r.Topic != o.topic || p < 0 || p >= o.partitions {
				verr = fmt.Errorf("record from unexpected %s/%d", r.Topic, p)
				return
			}
			if counts[p] >= expectedIn(p) {
				return // N read in all; ignore any extra records
			}
			where := fmt.Sprintf("partition %d offset %d", p, r.Offset)
			i := nextIndex[p]
			if r.Offset != int64(counts[p]) {
				verr = fmt.Errorf("%s: expected offset %d (offsets must be consecutive from 0)", where, counts[p])
				return
			}
			if string(r.Key) != keyOf(i) {
				verr = fmt.Errorf("%s: key %q, expected %q", where, r.Key, keyOf(i))
				return
			}
			if string(r.Value) != valueOf(i) {
				verr = fmt.Errorf("%s: value %q, expected %q", where, r.Value, valueOf(i))
				return
			}
			if len(r.Headers) != 2 || r.Headers[0].Key != "idx" || string(r.Headers[0].Value) != strconv.Itoa(i) ||
				r.Headers[1].Key != "codec" {
				verr = fmt.Errorf("%s: headers %s, expected [idx=%d, codec=<codec>]", where, fmtHeaders(r.Headers), i)
				return
			}
			if _, ok := codecs[string(r.Headers[1].Value)]; !ok {
				verr = fmt.Errorf("%s: header codec %q is no known codec", where, r.Headers[1].Value)
				return
			}
			nextIndex[p] = i + o.partitions
			counts[p]++
			consumed++
		})
		if verr != nil {
			return nil, verr
		}
	}
	per := map[string]int{}
	for p, n := range counts {
		per[strconv.Itoa(p)] = n
	}
	return map[string]any{"consumed": consumed, "per_partition": per}, nil
}

func fmtHeaders(hs []kgo.RecordHeader) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s=%q", h.Key, h.Value)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client (create-topic|produce|consume|list-topics|group-consume|admin-calls|kafka-go|txn-transform|group-config|aws-calls|terraform-serverless) --bootstrap B --topic T ...")
		os.Exit(2)
	}
	cmd := os.Args[1]
	if cmd == "group-consume" {
		// Runs until told to stop, so without the overall deadline below.
		os.Exit(runGroupConsume(os.Args[2:]))
	}
	if cmd == "txn-transform" {
		os.Exit(runTxnTransform(os.Args[2:])) // bounded by its own --timeout
	}
	if cmd == "admin-calls" || cmd == "kafka-go" || cmd == "group-config" || cmd == "aws-calls" ||
		cmd == "terraform-serverless" {
		var res any
		var err error
		if cmd == "aws-calls" {
			res, err = runAwsCalls(os.Args[2:]) // bounded by its own --timeout
		} else if cmd == "terraform-serverless" {
			res, err = runTerraformServerless(os.Args[2:]) // bounded by its own --timeout
		} else if cmd == "kafka-go" {
			res, err = runKafkaGo(os.Args[2:]) // each step bounded by its own --timeout
		} else if cmd == "group-config" {
			res, err = runGroupConfig(os.Args[2:]) // bounded by its own deadline
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
			res, err = runAdminCalls(ctx, os.Args[2:])
			cancel()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		out, _ := json.Marshal(res)
		fmt.Println(string(out))
		return
	}
	commands := map[string]func(context.Context, options) (any, error){
		"create-topic": createTopic,
		"produce":      produce,
		"consume":      consume,
		"list-topics":  listTopics,
	}
	run, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown command %q; usage: client (create-topic|produce|consume|list-topics|group-consume|admin-calls|kafka-go|txn-transform|group-config|aws-calls|terraform-serverless) ...\n", cmd)
		os.Exit(2)
	}
	o, err := parse(cmd, os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	// Overall bound so a broker that never answers cannot hang the test run.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second+2*o.duration)
	defer cancel()
	res, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	out, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
