package main

// group-consume: franz-go as a member of a consumer group, classic or KIP-848.
//
//	group-consume --bootstrap B --group G --topic T [--assignor NAME] [--instance-id ID]
//	              [--group-protocol classic|consumer]
//	              [--session-timeout-ms MS] [--max-records N] [--commit sync|async|none]
//
// NAME is the balancer: range, roundrobin, sticky or cooperative-sticky (the default, as in
// franz-go). With --group-protocol consumer the broker assigns (kgo.ServerSideBalancer, franz-go
// v1.22+) and NAME is the server assignor: uniform (the default; franz-go sends it for its
// sticky balancers) or range (its range balancer); the session timeout and heartbeat interval
// are then the broker's. franz-go falls back to the classic protocol by itself when the broker
// does not advertise ConsumerGroupHeartbeat v1, so a test checks the group's type on the broker.
// ID makes a static member (KIP-345). Auto-commit is off; the offsets of each polled
// batch are committed before the next poll (sync), or the commit is issued and the next poll
// does not wait for it (async), or nothing is committed (none). Partitions without a committed
// offset start at the earliest offset. One JSON object per stdout line, written as it happens:
//
//	{"event":"assigned","partitions":[...],"generation":G}  the full sorted assignment after
//	                                             every change (G: the group generation, -1 when
//	                                             the member is not in one)
//	{"event":"record","p":P,"o":OFFSET,"k":KEY}  every record
//	{"event":"committed","offsets":{"P":NEXT}}   after each successful commit
//	{"event":"error","message":M,"code":C,"type":T}  client errors (code and name of the
//	                                             Kafka error when there is one)
//	{"event":"closed"}                           after a clean close (left the group; a static
//	                                             member does not send LeaveGroup, as in Kafka)
//
// Runs until N records are consumed, stdin reaches EOF, or SIGTERM/SIGINT; then leaves the group
// and exits 0.
//
// BlockRebalanceOnPoll keeps a rebalance from running between a poll and its commit, so a
// partition is never committed by a member that no longer owns it and, with clean hand-overs,
// no record is delivered twice.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type groupOptions struct {
	bootstrap      string
	group          string
	topic          string
	assignor       string
	instanceID     string
	sessionTimeout time.Duration
	maxRecords     int
	commit         string
	protocol       string
}

var balancers = map[string]func() kgo.GroupBalancer{
	"range":              kgo.RangeBalancer,
	"roundrobin":         kgo.RoundRobinBalancer,
	"sticky":             kgo.StickyBalancer,
	"cooperative-sticky": kgo.CooperativeStickyBalancer,
}

// The balancer that makes franz-go ask for each server assignor (consumer_group_848.go).
var serverAssignors = map[string]func() kgo.GroupBalancer{
	"uniform": kgo.CooperativeStickyBalancer,
	"range":   kgo.RangeBalancer,
}

func parseGroup(args []string) (groupOptions, error) {
	var o groupOptions
	var sessionMs int
	fs := flag.NewFlagSet("group-consume", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&o.bootstrap, "bootstrap", "", "comma-separated host:port list")
	fs.StringVar(&o.group, "group", "", "consumer group id")
	fs.StringVar(&o.topic, "topic", "", "topic to subscribe to")
	fs.StringVar(&o.assignor, "assignor", "", "range, roundrobin, sticky or cooperative-sticky (classic); uniform or range (consumer)")
	fs.StringVar(&o.protocol, "group-protocol", "classic", "classic or consumer (KIP-848)")
	fs.StringVar(&o.instanceID, "instance-id", "", "group.instance.id (static membership)")
	fs.IntVar(&sessionMs, "session-timeout-ms", 10000, "group session timeout")
	fs.IntVar(&o.maxRecords, "max-records", 0, "stop after this many records (0: no limit)")
	fs.StringVar(&o.commit, "commit", "sync", "sync (commit after each batch), async or none")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.bootstrap == "" || o.group == "" || o.topic == "" {
		return o, errors.New("--bootstrap, --group and --topic are required")
	}
	switch o.protocol {
	case "classic":
		if o.assignor == "" {
			o.assignor = "cooperative-sticky"
		}
		if _, ok := balancers[o.assignor]; !ok {
			return o, fmt.Errorf("--assignor must be one of range, roundrobin, sticky, cooperative-sticky (got %q)", o.assignor)
		}
	case "consumer":
		if o.assignor == "" {
			o.assignor = "uniform"
		}
		if _, ok := serverAssignors[o.assignor]; !ok {
			return o, fmt.Errorf("--assignor must be uniform or range with --group-protocol consumer (got %q)", o.assignor)
		}
	default:
		return o, fmt.Errorf("--group-protocol must be classic or consumer (got %q)", o.protocol)
	}
	if sessionMs < 1 {
		return o, errors.New("--session-timeout-ms must be >= 1")
	}
	if o.maxRecords < 0 {
		return o, errors.New("--max-records must be >= 0")
	}
	if o.commit != "sync" && o.commit != "async" && o.commit != "none" {
		return o, fmt.Errorf("--commit must be sync, async or none (got %q)", o.commit)
	}
	o.sessionTimeout = time.Duration(sessionMs) * time.Millisecond
	return o, nil
}

// events writes one JSON object per line; writes from the poll loop and from the group's
// callbacks are serialized. os.Stdout is unbuffered, so every line is out when emit returns.
type events struct {
	mu       sync.Mutex
	assigned map[int32]bool
	shown    string // the last "assigned" list written
}

func (e *events) emit(v any) {
	b, err := jsonLine(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: encoding event:", err)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	os.Stdout.Write(b)
}

func jsonLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// change applies an assignment change (add or remove the partitions of topic) and writes the
// new full assignment if it differs from the last one written (the first call always writes).
func (e *events) change(cl *kgo.Client, topic string, m map[string][]int32, add bool) {
	e.mu.Lock()
	for _, p := range m[topic] {
		if add {
			e.assigned[p] = true
		} else {
			delete(e.assigned, p)
		}
	}
	parts := make([]int, 0, len(e.assigned))
	for p := range e.assigned {
		parts = append(parts, int(p))
	}
	sort.Ints(parts)
	key := fmt.Sprint(parts)
	if key == e.shown {
		e.mu.Unlock()
		return
	}
	e.shown = key
	e.mu.Unlock()
	_, generation := cl.GroupMetadata()
	e.emit(map[string]any{"event": "assigned", "partitions": parts, "generation": generation})
}

func (e *events) error(err error) {
	ev := map[string]any{"event": "error", "message": err.Error()}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		ev["code"] = ke.Code
		ev["type"] = ke.Message
	}
	e.emit(ev)
}

func groupConsume(o groupOptions) error {
	ev := &events{assigned: map[int32]bool{}, shown: "-"}

	// Stop on SIGTERM/SIGINT or when stdin reaches EOF (the test closes it).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()

	heartbeat := o.sessionTimeout / 3
	if heartbeat > time.Second {
		heartbeat = time.Second
	}
	opts := append(baseOpts(options{bootstrap: o.bootstrap}),
		kgo.ConsumerGroup(o.group),
		kgo.ConsumeTopics(o.topic),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			ev.change(cl, o.topic, m, true)
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			ev.change(cl, o.topic, m, false)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			ev.change(cl, o.topic, m, false)
		}),
	)
	if o.protocol == "consumer" {
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(serverAssignors[o.assignor]()))
	} else {
		opts = append(opts, kgo.Balancers(balancers[o.assignor]()),
			kgo.SessionTimeout(o.sessionTimeout), kgo.HeartbeatInterval(heartbeat))
	}
	if o.instanceID != "" {
		opts = append(opts, kgo.InstanceID(o.instanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}

	consumed := 0
	for ctx.Err() == nil && (o.maxRecords == 0 || consumed < o.maxRecords) {
		max := -1
		if o.maxRecords > 0 {
			max = o.maxRecords - consumed
		}
		fetches := cl.PollRecords(ctx, max)
		fetches.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
				return
			}
			ev.error(fmt.Errorf("%s/%d: %w", topic, p, err))
		})
		next := map[int32]kgo.EpochOffset{}
		fetches.EachRecord(func(r *kgo.Record) {
			var key any
			if r.Key != nil {
				key = string(r.Key)
			}
			ev.emit(map[string]any{"event": "record", "p": r.Partition, "o": r.Offset, "k": key})
			next[r.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
			consumed++
		})
		if len(next) > 0 && o.commit != "none" {
			commit(cl, ev, o.topic, next, o.commit == "sync")
		}
		cl.AllowRebalance()
	}

	cl.AllowRebalance()
	cl.Close() // leaves the group; OnPartitionsRevoked reports the final empty assignment
	ev.emit(map[string]any{"event": "closed"})
	return nil
}

// commit commits next (partition -> next offset) and reports it, or the error of the request
// or of any partition. A sync commit is not canceled by SIGTERM: a record reported as consumed
// is committed unless the broker refuses. An async one (franz-go's CommitOffsets) returns at
// once; a later commit or the final leave may cancel it, which is reported as an error.
func commit(cl *kgo.Client, ev *events, topic string, next map[int32]kgo.EpochOffset, sync bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	do := cl.CommitOffsets
	if sync {
		do = cl.CommitOffsetsSync
		defer cancel()
	}
	do(ctx, map[string]map[int32]kgo.EpochOffset{topic: next},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if !sync {
				defer cancel()
			}
			if err != nil {
				ev.error(fmt.Errorf("commit: %w", err))
				return
			}
			done := map[string]int64{}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil {
						ev.error(fmt.Errorf("commit %s/%d: %w", t.Topic, p.Partition, perr))
						continue
					}
					if t.Topic == topic {
						if eo, ok := next[p.Partition]; ok {
							done[strconv.Itoa(int(p.Partition))] = eo.Offset
						}
					}
				}
			}
			if len(done) > 0 {
				ev.emit(map[string]any{"event": "committed", "offsets": done})
			}
		})
}

func runGroupConsume(args []string) int {
	o, err := parseGroup(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	if err := groupConsume(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", strings.TrimSpace(err.Error()))
		return 1
	}
	return 0
}
