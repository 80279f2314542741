// Package mskmock runs mskmock, a local AWS MSK Serverless broker, as a Testcontainers module:
// its external listeners on ephemeral host ports, an IAM key and role of its own, and its CA.
//
//	ctr, err := mskmock.Run(ctx, "mskmock:latest")
//	testcontainers.CleanupContainer(t, ctr)
//	brokers, err := ctr.Brokers(ctx)
//
// No image is published: build it from the mskmock repository with
// docker build -f docker/Dockerfile -t mskmock:latest . (docs/containers.md).
package mskmock

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	DefaultImage = "mskmock:latest"
	// The external listeners bind these inside the container, broker i on port + i; Docker
	// publishes each on a host port it picks and Run tells the broker which. IAM starts 100
	// above so the two ranges never meet.
	PlaintextPort   = 19092
	IAMPort         = 19192
	AdminPort       = 9080
	CredentialsPort = 9180
	// The image's own listeners use 9092-9097 and 9098 up: more brokers would collide.
	MaxBrokers = 6
	// Role is the role whose credentials CredentialsURI serves.
	Role = "testcontainers"

	identitiesPath = "/etc/mskmock/testcontainers-identities.json"
	caPath         = "/data/tls/ca.pem"
	account        = "123456789012"
)

// Container is a started mskmock.
type Container struct {
	*testcontainers.DockerContainer
	host            string
	brokers         int
	accessKeyID     string
	secretAccessKey string
	region          string
	caPEM           []byte
}

type options struct{ brokers int }

// Option is a setting of this module only; it passes through Run's customizers untouched.
type Option func(*options) error

// Customize is a no-op: Run reads Options before building the request.
func (Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithBrokerCount runs n synthetic brokers (1 to MaxBrokers; default 1).
func WithBrokerCount(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxBrokers {
			return fmt.Errorf("mskmock: broker count must be 1 to %d, not %d", MaxBrokers, n)
		}
		o.brokers = n
		return nil
	}
}

// WithProfile picks the product mskmock imitates: serverless (default), provisioned or kafka.
func WithProfile(profile string) testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		switch profile {
		case "serverless", "provisioned", "kafka":
			return testcontainers.WithEnv(map[string]string{"MSKMOCK_PROFILE": profile})(req)
		}
		return fmt.Errorf("mskmock: profile must be serverless, provisioned or kafka, not %q", profile)
	}
}

// ConfigEnvName is the environment variable the broker reads a configuration key from.
func ConfigEnvName(key string) string {
	return "MSKMOCK_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// WithConfig sets any key of conf/mskmock.properties, e.g. WithConfig("log.level", "debug").
func WithConfig(key, value string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{ConfigEnvName(key): value})
}

// Run starts mskmock from img and returns once it is healthy and advertises the mapped ports.
// opts are this module's Options and any testcontainers customizer (WithEnv and the like).
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	settings := options{brokers: 1}
	for _, opt := range opts {
		if o, ok := opt.(Option); ok {
			if err := o(&settings); err != nil {
				return nil, err
			}
		}
	}
	// SASL tokens and the TLS certificate name the host, so it is set at creation; only the
	// ports wait until Docker has picked them.
	host, err := daemonHost(ctx)
	if err != nil {
		return nil, err
	}
	c := &Container{host: host, brokers: settings.brokers, region: "us-east-1",
		accessKeyID:     "AKIA" + random("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		secretAccessKey: random("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 40),
	}
	identities, err := c.identities()
	if err != nil {
		return nil, err
	}
	exposed := []string{portName(AdminPort), portName(CredentialsPort)}
	for i := 0; i < c.brokers; i++ {
		exposed = append(exposed, portName(PlaintextPort+i), portName(IAMPort+i))
	}

	all := append([]testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(exposed...),
		testcontainers.WithFiles(testcontainers.ContainerFile{Reader: bytes.NewReader(identities),
			ContainerFilePath: identitiesPath, FileMode: 0o644}),
		testcontainers.WithWaitStrategy(wait.ForHealthCheck().WithStartupTimeout(60 * time.Second)),
	}, opts...)
	all = append(all,
		testcontainers.CustomizeRequestOption(func(req *testcontainers.GenericContainerRequest) error {
			if req.Env == nil {
				req.Env = map[string]string{}
			}
			c.defaults(req.Env)
			if v, ok := req.Env["MSKMOCK_IAM_REGION"]; ok {
				c.region = v
			}
			return nil
		}),
		testcontainers.WithEnv(map[string]string{
			"MSKMOCK_BROKER_COUNT":             strconv.Itoa(c.brokers),
			"MSKMOCK_EXTERNAL_PORT":            strconv.Itoa(PlaintextPort),
			"MSKMOCK_EXTERNAL_IAM_PORT":        strconv.Itoa(IAMPort),
			"MSKMOCK_EXTERNAL_ADVERTISED_HOST": host,
			"MSKMOCK_IAM_IDENTITIES_FILE":      identitiesPath,
		}),
		testcontainers.WithAdditionalLifecycleHooks(testcontainers.ContainerLifecycleHooks{
			PostReadies: []testcontainers.ContainerHook{c.ready},
		}),
	)
	ctr, err := testcontainers.Run(ctx, img, all...)
	if ctr != nil {
		c.DockerContainer = ctr
	}
	if err != nil {
		return c, fmt.Errorf("mskmock: %w", err)
	}
	return c, nil
}

// defaults fills in what a test wants unless the caller set it (the env map is the request's).
func (c *Container) defaults(env map[string]string) {
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	// MSK makes a group's first join wait 3 s for more members; a test has one.
	set("MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
	// MSK's replication factor 3 needs 3 brokers.
	if c.brokers < 3 {
		set("MSKMOCK_DEFAULT_REPLICATION_FACTOR", strconv.Itoa(c.brokers))
	}
}

// ready runs once the health check passed: clients are told the mapped ports from then on.
func (c *Container) ready(ctx context.Context, ctr testcontainers.Container) error {
	for listener, base := range map[string]int{"external": PlaintextPort, "external_iam": IAMPort} {
		ports, err := c.mapped(ctx, ctr, base)
		if err != nil {
			return err
		}
		if err := c.advertise(ctx, ctr, listener, ports); err != nil {
			return err
		}
	}
	r, err := ctr.CopyFileFromContainer(ctx, caPath)
	if err != nil {
		return fmt.Errorf("mskmock: copy %s: %w", caPath, err)
	}
	defer r.Close()
	c.caPEM, err = io.ReadAll(r)
	return err
}

func (c *Container) advertise(ctx context.Context, ctr testcontainers.Container, listener string, ports []int) error {
	admin, err := adminURL(ctx, ctr, c.host)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string][]int{"ports": ports})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, admin+"/v1/listeners/"+listener+"/advertised", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("mskmock: admin API: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("mskmock: advertising %s as %v: %s %s", listener, ports, resp.Status, msg)
	}
	return nil
}

func (c *Container) mapped(ctx context.Context, ctr testcontainers.Container, base int) ([]int, error) {
	var ports []int
	for i := 0; i < c.brokers; i++ {
		p, err := ctr.MappedPort(ctx, portName(base+i))
		if err != nil {
			return nil, err
		}
		ports = append(ports, int(p.Num()))
	}
	return ports, nil
}

func (c *Container) bootstrap(ctx context.Context, base int) ([]string, error) {
	ports, err := c.mapped(ctx, c, base)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range ports {
		out = append(out, net.JoinHostPort(c.host, strconv.Itoa(p)))
	}
	return out, nil
}

// Brokers is the plaintext bootstrap list ("host:port", one per broker), no authentication.
func (c *Container) Brokers(ctx context.Context) ([]string, error) {
	return c.bootstrap(ctx, PlaintextPort)
}

// IAMBrokers is the SASL_SSL bootstrap list (OAUTHBEARER or AWS_MSK_IAM); trust CAPEM or TLSConfig.
func (c *Container) IAMBrokers(ctx context.Context) ([]string, error) {
	return c.bootstrap(ctx, IAMPort)
}

// AdminURL is the base URL of the admin API (docs/admin-api.md).
func (c *Container) AdminURL(ctx context.Context) (string, error) { return adminURL(ctx, c, c.host) }

// CAPEM is the CA the broker's generated certificate chains to.
func (c *Container) CAPEM() []byte { return c.caPEM }

// TLSConfig trusts CAPEM and nothing else, for the IAM listener.
func (c *Container) TLSConfig() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.caPEM) {
		return nil, errors.New("mskmock: no certificate in the CA PEM")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// Region is the region IAM tokens must be signed for (iam.region).
func (c *Container) Region() string { return c.region }

// AccessKeyID is a long-term key the broker accepts, allowed everything (it has no policies).
func (c *Container) AccessKeyID() string { return c.accessKeyID }

// SecretAccessKey belongs to AccessKeyID.
func (c *Container) SecretAccessKey() string { return c.secretAccessKey }

// CredentialsURI is for AWS_CONTAINER_CREDENTIALS_FULL_URI: Role's temporary credentials,
// rotated as on ECS. AWS SDKs take a plain-HTTP full URI only on loopback (or ECS's and EKS's
// link-local addresses), so it serves where the Docker host is localhost.
func (c *Container) CredentialsURI(ctx context.Context) (string, error) {
	p, err := c.MappedPort(ctx, portName(CredentialsPort))
	if err != nil {
		return "", err
	}
	return "http://" + net.JoinHostPort(c.host, p.Port()) + "/role/" + Role, nil
}

func (c *Container) identities() ([]byte, error) {
	return json.Marshal(map[string]any{
		"identities": []map[string]string{{"access_key_id": c.accessKeyID, "secret_access_key": c.secretAccessKey,
			"principal": "arn:aws:iam::" + account + ":user/testcontainers"}},
		"roles": []map[string]string{{"name": Role, "arn": "arn:aws:iam::" + account + ":role/" + Role,
			"session_name": Role}},
	})
}

func adminURL(ctx context.Context, ctr testcontainers.Container, host string) (string, error) {
	p, err := ctr.MappedPort(ctx, portName(AdminPort))
	if err != nil {
		return "", err
	}
	return "http://" + net.JoinHostPort(host, p.Port()), nil
}

func daemonHost(ctx context.Context) (string, error) {
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", fmt.Errorf("mskmock: docker: %w", err)
	}
	defer p.Close()
	return p.DaemonHost(ctx)
}

func portName(p int) string { return strconv.Itoa(p) + "/tcp" }

func random(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}
