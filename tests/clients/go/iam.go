package main

// IAM options (MSK's listener), for create-topic, produce and consume:
//
//	--security-protocol PLAINTEXT|SASL_SSL|SASL_PLAINTEXT   (default PLAINTEXT)
//	--ca FILE           PEM CA the broker's TLS certificate must chain to (SASL_SSL)
//	--mechanism OAUTHBEARER|AWS_MSK_IAM
//	    OAUTHBEARER: franz-go's pkg/sasl/oauth with a token from
//	        github.com/aws/aws-msk-iam-sasl-signer-go, asked for at every (re-)authentication
//	        (signer.GenerateAuthTokenFromCredentialsProvider over a fresh default-chain config,
//	        which is what signer.GenerateAuthToken does, plus a record of the credentials used)
//	    AWS_MSK_IAM: franz-go's pkg/sasl/aws; credentials from one aws-sdk-go-v2 default config
//	        loaded at start (cfg.Credentials.Retrieve at every authentication: the SDK's cache)
//	--region R          signing region (default $AWS_REGION, else us-east-1); for AWS_MSK_IAM
//	                    it is put in AWS_REGION, where franz-go looks when the broker host
//	                    names no region
//	--token-cache       OAUTHBEARER: keep the signer's token and hand it out again until 80 % of
//	                    the lifetime the signer advertised has passed, as librdkafka (and the
//	                    Java client's login refresh) do; without it every authentication signs
//	                    anew, as franz-go's own examples do
//
// Credentials come from the AWS default chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
// [/AWS_SESSION_TOKEN], or AWS_CONTAINER_CREDENTIALS_FULL_URI (mskmock's credentials endpoint).
// Every OAUTHBEARER token is described on stderr (`signer-token {...}`) and, in duration mode,
// as a {"event":"token"} line on stdout.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	signer "github.com/aws/aws-msk-iam-sasl-signer-go/signer"
	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	saslaws "github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

type iamOptions struct {
	securityProtocol string
	ca               string
	mechanism        string
	region           string
	tokenCache       bool
}

func addIAMFlags(fs *flag.FlagSet, o *iamOptions) {
	fs.StringVar(&o.securityProtocol, "security-protocol", "PLAINTEXT", "PLAINTEXT, SASL_SSL or SASL_PLAINTEXT")
	fs.StringVar(&o.ca, "ca", "", "PEM CA file for SASL_SSL")
	fs.StringVar(&o.mechanism, "mechanism", "", "OAUTHBEARER or AWS_MSK_IAM")
	fs.StringVar(&o.region, "region", "", "signing region (default $AWS_REGION, else us-east-1)")
	fs.BoolVar(&o.tokenCache, "token-cache", false, "OAUTHBEARER: reuse the token until 80% of its advertised lifetime")
}

func (o *iamOptions) check() error {
	switch o.securityProtocol {
	case "PLAINTEXT":
		if o.mechanism != "" || o.ca != "" {
			return errors.New("--mechanism and --ca need --security-protocol SASL_SSL or SASL_PLAINTEXT")
		}
		return nil
	case "SASL_SSL":
	case "SASL_PLAINTEXT":
		if o.ca != "" {
			return errors.New("--ca needs --security-protocol SASL_SSL")
		}
	default:
		return fmt.Errorf("--security-protocol must be PLAINTEXT, SASL_SSL or SASL_PLAINTEXT (got %q)", o.securityProtocol)
	}
	if o.mechanism != "OAUTHBEARER" && o.mechanism != "AWS_MSK_IAM" {
		return fmt.Errorf("--mechanism must be OAUTHBEARER or AWS_MSK_IAM (got %q)", o.mechanism)
	}
	if o.tokenCache && o.mechanism != "OAUTHBEARER" {
		return errors.New("--token-cache is for OAUTHBEARER")
	}
	if o.region == "" {
		o.region = os.Getenv("AWS_REGION")
	}
	if o.region == "" {
		o.region = "us-east-1"
	}
	return nil
}

// iamOpts: the TLS and SASL client options for o.
func iamOpts(ctx context.Context, o iamOptions) ([]kgo.Opt, error) {
	if o.securityProtocol == "PLAINTEXT" || o.securityProtocol == "" {
		return nil, nil
	}
	var opts []kgo.Opt
	if tc, err := tlsConfig(o); err != nil {
		return nil, err
	} else if tc != nil {
		// franz-go sets ServerName to the dialled host (an IP here: checked against IP SANs).
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	var mech sasl.Mechanism
	switch o.mechanism {
	case "OAUTHBEARER":
		mech = oauth.Oauth(newTokenSource(o).auth)
	case "AWS_MSK_IAM":
		if err := os.Setenv("AWS_REGION", o.region); err != nil {
			return nil, err
		}
		cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(o.region))
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
		}
		mech = saslaws.ManagedStreamingIAM(func(ctx context.Context) (saslaws.Auth, error) {
			c, err := cfg.Credentials.Retrieve(ctx)
			if err != nil {
				return saslaws.Auth{}, fmt.Errorf("aws credentials: %w", err)
			}
			emitCreds(c)
			return saslaws.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken}, nil
		})
	}
	opts = append(opts, kgo.SASL(mech))
	return opts, nil
}

// tlsConfig: the client's TLS settings for SASL_SSL (trusting --ca when given), nil otherwise.
func tlsConfig(o iamOptions) (*tls.Config, error) {
	if o.securityProtocol != "SASL_SSL" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.ca != "" {
		pem, err := os.ReadFile(o.ca)
		if err != nil {
			return nil, fmt.Errorf("--ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca %s: no PEM certificate in it", o.ca)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// tokenSource signs OAUTHBEARER tokens with the Go signer, optionally caching them.
type tokenSource struct {
	o       iamOptions
	mu      sync.Mutex
	token   string
	refresh time.Time
}

func newTokenSource(o iamOptions) *tokenSource { return &tokenSource{o: o} }

// recordingProvider passes the default chain's credentials through and reports which ones were used.
type recordingProvider struct{ p awssdk.CredentialsProvider }

func (r recordingProvider) Retrieve(ctx context.Context) (awssdk.Credentials, error) {
	c, err := r.p.Retrieve(ctx)
	if err == nil {
		emitCreds(c)
	}
	return c, err
}

func emitCreds(c awssdk.Credentials) {
	ev := map[string]any{"event": "credentials", "t": nowMs(), "akid": c.AccessKeyID, "source": c.Source}
	if c.CanExpire {
		ev["sdk_expires_ms"] = c.Expires.UnixMilli() // after the SDK cache's expiry window
	}
	note(ev)
}

func (s *tokenSource) auth(ctx context.Context) (oauth.Auth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.o.tokenCache && s.token != "" && time.Now().Before(s.refresh) {
		return oauth.Auth{Token: s.token}, nil
	}
	// What signer.GenerateAuthToken does (a new default config, so no credential cache across
	// calls), with the provider wrapped to report the credentials it signed with.
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(s.o.region))
	if err != nil {
		return oauth.Auth{}, fmt.Errorf("aws config: %w", err)
	}
	token, expiryMs, err := signer.GenerateAuthTokenFromCredentialsProvider(ctx, s.o.region, recordingProvider{cfg.Credentials})
	if err != nil {
		return oauth.Auth{}, err
	}
	now := time.Now()
	ev := describeToken(token, expiryMs)
	note(ev)
	if s.o.tokenCache {
		s.token = token
		life := time.UnixMilli(expiryMs).Sub(now)
		s.refresh = now.Add(life * 8 / 10)
	}
	return oauth.Auth{Token: token}, nil
}

func describeToken(token string, expiryMs int64) map[string]any {
	ev := map[string]any{"event": "token", "t": nowMs(), "expiry_ms": expiryMs}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		ev["decode_error"] = err.Error()
		return ev
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		ev["decode_error"] = err.Error()
		return ev
	}
	q := u.Query()
	ev["akid"] = strings.SplitN(q.Get("X-Amz-Credential"), "/", 2)[0]
	ev["x_amz_date"] = q.Get("X-Amz-Date")
	ev["x_amz_expires"] = q.Get("X-Amz-Expires")
	ev["session_token"] = q.Has("X-Amz-Security-Token")
	ev["host"] = u.Host
	return ev
}

func nowMs() int64 { return time.Now().UnixMilli() }

// ---- events (duration mode) ----

var (
	eventsMu sync.Mutex
	eventsOn bool // duration mode: JSON-line events on stdout as they happen
	closing  bool // the run is over: the client's own disconnects are not events
	counts   = map[string]int{}
)

// endEvents: what follows (closing the client) is not reported.
func endEvents() {
	eventsMu.Lock()
	defer eventsMu.Unlock()
	closing = true
}

// note writes a token/credentials event: to stderr always, to stdout in duration mode.
func note(ev map[string]any) {
	b, _ := jsonMarshal(ev)
	fmt.Fprintf(os.Stderr, "signer-%s %s\n", ev["event"], b)
	emit(ev)
}

func emit(ev map[string]any) {
	eventsMu.Lock()
	defer eventsMu.Unlock()
	if closing {
		return
	}
	if name, ok := ev["event"].(string); ok {
		counts[name]++
	}
	if !eventsOn {
		return
	}
	if _, ok := ev["t"]; !ok {
		ev["t"] = nowMs()
	}
	b, _ := jsonMarshal(ev)
	os.Stdout.Write(append(b, '\n'))
}

func eventCount(name string) int {
	eventsMu.Lock()
	defer eventsMu.Unlock()
	return counts[name]
}

// eventLogger: franz-go's log to stderr (as kgo.BasicLogger), and warnings and errors as events.
type eventLogger struct{ base kgo.Logger }

func (l eventLogger) Level() kgo.LogLevel { return l.base.Level() }
func (l eventLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	l.base.Log(level, msg, keyvals...)
	if level > kgo.LogLevelWarn {
		return
	}
	ev := map[string]any{"event": "log", "level": level.String(), "message": msg}
	for i := 0; i+1 < len(keyvals); i += 2 {
		if k, ok := keyvals[i].(string); ok {
			ev[k] = fmt.Sprint(keyvals[i+1])
		}
	}
	emit(ev)
}

// connHooks: connects, failed connects and disconnects as events.
type connHooks struct{}

func (connHooks) OnBrokerConnect(meta kgo.BrokerMetadata, dial time.Duration, _ net.Conn, err error) {
	if err != nil {
		emit(map[string]any{"event": "connect-error", "node": meta.NodeID, "message": err.Error()})
		return
	}
	emit(map[string]any{"event": "connect", "node": meta.NodeID})
}

func (connHooks) OnBrokerDisconnect(meta kgo.BrokerMetadata, _ net.Conn) {
	emit(map[string]any{"event": "disconnect", "node": meta.NodeID})
}
