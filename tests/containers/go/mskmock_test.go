// A Testcontainers recipe: mskmock in a container, a franz-go client on the host.
//
//	MSKMOCK_IMAGE=mskmock:test go test -v ./...
package mskmock_test

import (
	"context"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// freePort asks the kernel for a port nothing on the host listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startMskmock runs one broker whose external listener is port on the container and on the host
// alike: Kafka clients dial the address Metadata advertises, so the two must be the same.
func startMskmock(ctx context.Context, t *testing.T, port int) string {
	image := os.Getenv("MSKMOCK_IMAGE")
	if image == "" {
		image = "mskmock:test"
	}
	p := strconv.Itoa(port)
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image: image,
			Env: map[string]string{
				"MSKMOCK_BROKER_COUNT":             "1",
				"MSKMOCK_EXTERNAL_PORT":            p,
				"MSKMOCK_EXTERNAL_ADVERTISED_HOST": "localhost",
				// topics created with replication factor -1 get 3, more than one broker has
				"MSKMOCK_DEFAULT_REPLICATION_FACTOR": "1",
				// a new group's first rebalance waits 3 s for more members; a test has one
				"MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
			},
			// a binding is kept only for an exposed port
			ExposedPorts: []string{p + "/tcp"},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{
					network.MustParsePort(p + "/tcp"): {{HostPort: p}},
				}
			},
			WaitingFor: wait.ForHealthCheck().WithStartupTimeout(30 * time.Second),
		},
		Started: true,
	})
	testcontainers.CleanupContainer(t, ctr) // terminates it when the test ends
	if err != nil {
		t.Fatal(err)
	}
	return "localhost:" + p
}

func TestProduceConsume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	broker := startMskmock(ctx, t, freePort(t))

	// MSK Serverless creates no topic on first use: create it
	const topic = "orders"
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, topic); err != nil {
		t.Fatal(err)
	}

	want := []string{"one", "two", "three"}
	for _, v := range want {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(broker),
		kgo.ConsumerGroup("orders-reader"),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var got []string
	for len(got) < len(want) {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatalf("consumed %q of %q: %v", got, want, err)
		}
		fetches.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, want) {
		t.Fatalf("consumed %q, want %q", got, want)
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
}
