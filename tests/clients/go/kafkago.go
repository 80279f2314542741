package main

// kafka-go: what segmentio/kafka-go does against the broker, each step reported on its own,
// so a test can see which of its request paths a profile lets through (kafka-go #967, #1156):
//
//	client kafka-go --bootstrap B --topic T --group G [--count N] [--timeout S]
//	                [--security-protocol SASL_SSL --ca FILE --mechanism AWS_MSK_IAM [--region R]]
//	  -> {"kafka_go": VERSION,
//	      "write": {"ok": true, "produced": N},          Writer: the Transport's request path
//	      "read_partition": {"ok": true, "consumed": N},  Reader on partition 0 from the start:
//	                                                      the Conn path
//	      "read_group": {"ok": true, "consumed": N}}      Reader with GroupID: the group path
//	  a step that fails: {"ok": false, "error": "...", "logged": [first errors kafka-go logged]}
//
// The topic must exist with one partition. A step that cannot finish in --timeout seconds
// fails with the errors kafka-go logged while it retried (its Reader retries forever).
//
// IAM: kafka-go's own AWS_MSK_IAM mechanism (the separate module sasl/aws_msk_iam_v2, signing
// with aws-sdk-go-v2's v4 signer), over TLS with the given CA; credentials from the default
// chain, reported as `signer-credentials` lines on stderr (see iam.go). kafka-go has no
// OAUTHBEARER mechanism.

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/aws_msk_iam_v2"
)

const kafkaGoClientID = "mskmock-test-kafka-go"

// kafkaGoConn: how kafka-go reaches the broker (plaintext when both are nil).
type kafkaGoConn struct {
	tls  *tls.Config
	sasl sasl.Mechanism
}

func newKafkaGoConn(ctx context.Context, o iamOptions) (kafkaGoConn, error) {
	if o.securityProtocol == "PLAINTEXT" {
		return kafkaGoConn{}, nil
	}
	if o.mechanism != "AWS_MSK_IAM" {
		return kafkaGoConn{}, errors.New("kafka-go has no OAUTHBEARER mechanism: use --mechanism AWS_MSK_IAM")
	}
	tc, err := tlsConfig(o)
	if err != nil {
		return kafkaGoConn{}, err
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(o.region))
	if err != nil {
		return kafkaGoConn{}, fmt.Errorf("aws config: %w", err)
	}
	cfg.Credentials = recordingProvider{cfg.Credentials}
	return kafkaGoConn{tls: tc, sasl: aws_msk_iam_v2.NewMechanism(cfg)}, nil
}

// errorLog keeps the first errors kafka-go logs, which are all a caller sees of a retry loop.
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *errorLog) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < 5 {
		l.lines = append(l.lines, fmt.Sprintf(format, args...))
	}
}

func (l *errorLog) failed(err error) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"ok": false, "error": err.Error(), "logged": append([]string{}, l.lines...)}
}

func kafkaGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/segmentio/kafka-go" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func kafkaGoWrite(ctx context.Context, kc kafkaGoConn, bootstrap, topic string, n int) map[string]any {
	w := &kafka.Writer{
		Addr:         kafka.TCP(bootstrap),
		Topic:        topic,
		Balancer:     &kafka.LeastBytes{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 10 * time.Millisecond,
		Transport:    &kafka.Transport{ClientID: kafkaGoClientID, TLS: kc.tls, SASL: kc.sasl},
	}
	defer w.Close()
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(keyOf(i)), Value: []byte(valueOf(i))}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return map[string]any{"ok": false, "error": err.Error()}
	}
	return map[string]any{"ok": true, "produced": n}
}

// kafkaGoRead reads n records through a Reader (GroupID empty: partition 0 from the start).
func kafkaGoRead(ctx context.Context, kc kafkaGoConn, bootstrap, topic, group string, n int) map[string]any {
	logged := &errorLog{}
	cfg := kafka.ReaderConfig{
		Brokers: []string{bootstrap},
		Topic:   topic,
		GroupID: group,
		Dialer: &kafka.Dialer{ClientID: kafkaGoClientID, Timeout: 5 * time.Second, TLS: kc.tls,
			SASLMechanism: kc.sasl},
		MaxWait:     500 * time.Millisecond,
		ErrorLogger: logged,
	}
	if group != "" {
		cfg.StartOffset = kafka.FirstOffset
	}
	r := kafka.NewReader(cfg)
	defer r.Close()
	if group == "" {
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			return logged.failed(err)
		}
	}
	for i := 0; i < n; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return logged.failed(fmt.Errorf("after %d records: %w", i, err))
		}
		if string(m.Value) != valueOf(i) {
			return logged.failed(fmt.Errorf("record %d at offset %d is %q, expected %q", i, m.Offset, m.Value, valueOf(i)))
		}
	}
	return map[string]any{"ok": true, "consumed": n}
}

func runKafkaGo(args []string) (map[string]any, error) {
	fs := flag.NewFlagSet("kafka-go", flag.ContinueOnError)
	bootstrap := fs.String("bootstrap", "", "host:port")
	topic := fs.String("topic", "", "an existing topic with one partition")
	group := fs.String("group", "", "consumer group for the group read")
	count := fs.Int("count", 10, "records to write and read")
	timeoutS := fs.Float64("timeout", 15, "seconds each step may take")
	var iam iamOptions
	addIAMFlags(fs, &iam)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *bootstrap == "" || *topic == "" || *group == "" || fs.NArg() > 0 {
		return nil, errors.New("usage: client kafka-go --bootstrap B --topic T --group G [--count N] [--timeout S]")
	}
	if err := iam.check(); err != nil {
		return nil, err
	}
	kc, err := newKafkaGoConn(context.Background(), iam)
	if err != nil {
		return nil, err
	}
	step := func(fn func(ctx context.Context) map[string]any) map[string]any {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeoutS*float64(time.Second)))
		defer cancel()
		return fn(ctx)
	}
	out := map[string]any{"kafka_go": kafkaGoVersion()}
	out["write"] = step(func(ctx context.Context) map[string]any { return kafkaGoWrite(ctx, kc, *bootstrap, *topic, *count) })
	out["read_partition"] = step(func(ctx context.Context) map[string]any {
		return kafkaGoRead(ctx, kc, *bootstrap, *topic, "", *count)
	})
	out["read_group"] = step(func(ctx context.Context) map[string]any {
		return kafkaGoRead(ctx, kc, *bootstrap, *topic, *group, *count)
	})
	return out, nil
}
