// The Go Testcontainers module (docker/testcontainers/go) as a user would use it: one line
// starts mskmock on ephemeral host ports, then franz-go round trips in plaintext and over
// SASL_SSL with the official MSK IAM signer.
//
//	MSKMOCK_IMAGE=mskmock:test go test -v ./...
package mskmock_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	signer "github.com/aws/aws-msk-iam-sasl-signer-go/signer"
	"github.com/aws/aws-sdk-go-v2/credentials"
	mskmock "github.com/mskmock/mskmock/docker/testcontainers/go"
	"github.com/testcontainers/testcontainers-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

func image() string {
	if img := os.Getenv("MSKMOCK_IMAGE"); img != "" {
		return img
	}
	return "mskmock:test"
}

func TestMskMock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	msk, err := mskmock.Run(ctx, image())
	testcontainers.CleanupContainer(t, msk) // terminates it when the test ends
	if err != nil {
		t.Fatal(err)
	}
	plain, err := msk.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	iam, err := msk.IAMBrokers(ctx)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ports are Docker's and advertised", func(t *testing.T) {
		advertised := listeners(ctx, t, msk)
		for _, l := range []struct {
			name      string
			bootstrap []string
			inside    int
		}{{"external", plain, mskmock.PlaintextPort}, {"external_iam", iam, mskmock.IAMPort}} {
			port := portOf(t, l.bootstrap[0])
			// nothing bound it: Docker picked the host port, never the container's own
			if port == l.inside {
				t.Errorf("%s: host port %d is the container's", l.name, port)
			}
			if !slices.Equal(advertised[l.name], []int{port}) {
				t.Errorf("%s: broker advertises %v, mapped %d", l.name, advertised[l.name], port)
			}
		}
	})

	t.Run("plaintext round trip", func(t *testing.T) {
		roundTrip(ctx, t, "plain", kgo.SeedBrokers(plain...))
	})

	t.Run("IAM round trip", func(t *testing.T) {
		tlsCfg, err := msk.TLSConfig()
		if err != nil {
			t.Fatal(err)
		}
		creds := credentials.NewStaticCredentialsProvider(msk.AccessKeyID(), msk.SecretAccessKey(), "")
		// a new token at every (re-)authentication, as the signer's README shows
		token := oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
			tok, _, err := signer.GenerateAuthTokenFromCredentialsProvider(ctx, msk.Region(), creds)
			return oauth.Auth{Token: tok}, err
		})
		roundTrip(ctx, t, "iam", kgo.SeedBrokers(iam...), kgo.DialTLSConfig(tlsCfg), kgo.SASL(token))
	})

	t.Run("credentials URI serves the role", func(t *testing.T) {
		uri, err := msk.CredentialsURI(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var creds struct{ AccessKeyId, Token string }
		getJSON(ctx, t, uri, &creds)
		if !strings.HasPrefix(creds.AccessKeyId, "ASIA") || creds.Token == "" {
			t.Fatalf("%s served %+v", uri, creds)
		}
	})
}

func TestOptionsAreChecked(t *testing.T) {
	ctx := context.Background()
	if _, err := mskmock.Run(ctx, image(), mskmock.WithBrokerCount(7)); err == nil {
		t.Error("7 brokers accepted")
	}
	if _, err := mskmock.Run(ctx, image(), mskmock.WithProfile("dedicated")); err == nil {
		t.Error("profile dedicated accepted")
	}
	if got := mskmock.ConfigEnvName("log.level"); got != "MSKMOCK_LOG_LEVEL" {
		t.Errorf("ConfigEnvName: %s", got)
	}
}

// roundTrip creates a topic, produces three records and reads them back in a consumer group.
func roundTrip(ctx context.Context, t *testing.T, topic string, opts ...kgo.Opt) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// replication factor -1: the broker's default, the module's 1 for one broker
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, topic); err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two", "three"}
	for _, v := range want {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumer, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(topic+"-readers"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
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

func listeners(ctx context.Context, t *testing.T, msk *mskmock.Container) map[string][]int {
	admin, err := msk.AdminURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Listeners []struct {
			Name            string
			AdvertisedPorts []int `json:"advertised_ports"`
		}
	}
	getJSON(ctx, t, admin+"/v1/listeners", &body)
	out := map[string][]int{}
	for _, l := range body.Listeners {
		out[l.Name] = l.AdvertisedPorts
	}
	return out
}

func getJSON(ctx context.Context, t *testing.T, url string, v any) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func portOf(t *testing.T, hostPort string) int {
	_, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}
