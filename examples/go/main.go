// Command example creates a topic, produces 10 records and reads them back in a consumer group:
// franz-go against mskmock (or MSK). Plaintext by default; IAM=1 for TLS with SASL AWS_MSK_IAM
// (franz-go's pkg/sasl/aws, credentials from the AWS SDK's default chain). Prints one JSON line;
// exits 1 on any failure, within 60 s.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/aws"
)

const (
	count   = 10
	timeout = 60 * time.Second
)

func main() {
	iam := os.Getenv("IAM") == "1"
	bootstrap := env("BOOTSTRAP", "localhost:9092")
	if iam {
		bootstrap = env("BOOTSTRAP", "localhost:9098")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	consumed, topic, err := run(ctx, bootstrap, iam)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("not done within %s (is the broker at %s?): %w", timeout, bootstrap, err)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "example failed:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(struct {
		Lang     string `json:"lang"`
		Topic    string `json:"topic"`
		IAM      bool   `json:"iam"`
		Produced int    `json:"produced"`
		Consumed int    `json:"consumed"`
	}{"go", topic, iam, count, consumed})
	fmt.Println(string(out))
}

func run(ctx context.Context, bootstrap string, iam bool) (int, string, error) {
	topic := fmt.Sprintf("example-go-%08x", rand.Uint32())
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap)}
	if iam {
		more, err := iamOpts(ctx)
		if err != nil {
			return 0, topic, err
		}
		opts = append(opts, more...)
	}

	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, topic, err
	}
	defer cl.Close()
	// MSK Serverless creates no topic on first use. Replication factor -1 leaves it to the
	// broker: MSK Serverless allows only 3, its default.
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, -1, nil, topic); err != nil {
		return 0, topic, fmt.Errorf("create topic: %w", err)
	}
	var records []*kgo.Record
	for i := 0; i < count; i++ {
		records = append(records, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "value-%d", i)})
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return 0, topic, fmt.Errorf("produce: %w", err)
	}

	consumer, err := kgo.NewClient(append(opts,
		kgo.ConsumerGroup(topic),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)...)
	if err != nil {
		return 0, topic, err
	}
	defer consumer.Close()
	seen := map[string]bool{}
	for len(seen) < count {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err0(); err != nil {
			return len(seen), topic, fmt.Errorf("consume: %w", err)
		}
		fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		return len(seen), topic, fmt.Errorf("commit: %w", err)
	}
	return len(seen), topic, nil
}

// iamOpts: TLS trusting CA_FILE, and SASL AWS_MSK_IAM signed with the default chain's credentials
// (environment, shared config, container or instance credentials).
func iamOpts(ctx context.Context) ([]kgo.Opt, error) {
	// mskmock's local CA. Empty for MSK, whose certificates chain to the system's CAs.
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	caFile, set := os.LookupEnv("CA_FILE")
	if !set {
		caFile = "../../data/tls/ca.pem"
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no PEM certificate in %s", caFile)
		}
	}
	// pkg/sasl/aws reads the signing region from an MSK host name, else from AWS_REGION.
	if os.Getenv("AWS_REGION") == "" {
		os.Setenv("AWS_REGION", "us-east-1")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	mechanism := aws.ManagedStreamingIAM(func(ctx context.Context) (aws.Auth, error) {
		c, err := cfg.Credentials.Retrieve(ctx) // cached, and refreshed before they expire
		if err != nil {
			return aws.Auth{}, err
		}
		return aws.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken}, nil
	})
	return []kgo.Opt{
		kgo.DialTLSConfig(tc),
		kgo.SASL(mechanism),
	}, nil
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
