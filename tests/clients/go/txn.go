package main

// txn-transform: franz-go's GroupTransactSession consume-transform-produce (exactly once).
//
//	txn-transform --bootstrap B --group G --input T --output O --transactional-id ID
//	              [--batch N] [--abort-every K] [--init-timeout S] [--timeout S]
//	    -> {"committed_txns": C, "aborted_txns": A, "records_committed": R, "records_aborted": X,
//	        "unplanned_aborts": U, "end_offsets": {"P": off}, "committed_offsets": {"P": off}}
//
// A kgo.GroupTransactSession (transactional id ID, transaction timeout 30 s) is a member of group
// G reading T with isolation level read_committed. Each poll of up to N records (default 20) is
// one transaction: Begin, every record produced synchronously to O with the same key and
// partition, the value upper-cased and the input's headers plus ("src", "<partition>:<offset>"),
// then End(TryCommit), which commits the polled offsets in the transaction (TxnOffsetCommit)
// and ends it. With --abort-every K every K-th transaction ends with End(TryAbort) instead: its
// records are already acknowledged (aborted records in O's log), franz-go rewinds the consumer
// to the group's committed offsets, and the group's committed offsets are read back
// (OffsetFetch with require_stable) and must still be those before the aborted poll. An End
// that aborts by itself (a rebalance) counts as an unplanned abort. The first offsets of every
// poll must continue the committed ones. Runs until the committed offsets reach T's end offsets
// (listed when it starts); the producer id is loaded first (InitProducerId, which needs a
// transaction coordinator) within --init-timeout S (default 10); the whole run is bounded by
// --timeout S (default 60). A failure exits 1 with the error and franz-go's last log lines.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

type txnOptions struct {
	bootstrap, group, input, output, txnID string
	batch, abortEvery                      int
	initTimeout, timeout                   time.Duration
}

// ringLogger passes franz-go's log on to base (at base's level) and keeps its last lines at
// info level and above, and the debug lines about retried requests (with the broker's error),
// to explain a failure whose error alone is only a time-out.
type ringLogger struct {
	base    kgo.Logger
	mu      sync.Mutex
	lines   []string // info and above
	retries []string // retried requests
}

func (l *ringLogger) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *ringLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level <= l.base.Level() {
		l.base.Log(level, msg, keyvals...)
	}
	if level > kgo.LogLevelInfo && msg != "retrying request" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", level, msg)
	for i := 0; i+1 < len(keyvals); i += 2 {
		fmt.Fprintf(&b, " %v=%v", keyvals[i], keyvals[i+1])
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ring := &l.lines
	if level > kgo.LogLevelInfo {
		ring = &l.retries
	}
	*ring = append(*ring, b.String())
	if len(*ring) > 6 {
		*ring = (*ring)[len(*ring)-6:]
	}
}

func (l *ringLogger) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ""
	if len(l.retries) > 0 {
		s += "\nfranz-go's last retried requests:\n  " + strings.Join(l.retries, "\n  ")
	}
	if len(l.lines) > 0 {
		s += "\nfranz-go's last log lines:\n  " + strings.Join(l.lines, "\n  ")
	}
	return s
}

func parseTxn(args []string) (txnOptions, error) {
	var o txnOptions
	fs := flag.NewFlagSet("txn-transform", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&o.bootstrap, "bootstrap", "", "comma-separated host:port list")
	fs.StringVar(&o.group, "group", "", "consumer group id")
	fs.StringVar(&o.input, "input", "", "topic to consume")
	fs.StringVar(&o.output, "output", "", "topic to produce to")
	fs.StringVar(&o.txnID, "transactional-id", "", "transactional id")
	fs.IntVar(&o.batch, "batch", 20, "records per transaction (at most)")
	fs.IntVar(&o.abortEvery, "abort-every", 0, "abort every K-th transaction (0: never)")
	initS := fs.Float64("init-timeout", 10, "seconds to load the producer id")
	totalS := fs.Float64("timeout", 60, "seconds for the whole run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for name, v := range map[string]string{"--bootstrap": o.bootstrap, "--group": o.group, "--input": o.input,
		"--output": o.output, "--transactional-id": o.txnID} {
		if v == "" {
			return o, fmt.Errorf("%s is required", name)
		}
	}
	if o.batch < 1 || o.abortEvery < 0 || *initS <= 0 || *totalS <= 0 {
		return o, errors.New("--batch must be >= 1, --abort-every >= 0, the time-outs > 0")
	}
	o.initTimeout = time.Duration(*initS * float64(time.Second))
	o.timeout = time.Duration(*totalS * float64(time.Second))
	return o, nil
}

func runTxnTransform(args []string) int {
	o, err := parseTxn(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	logger := &ringLogger{base: kgo.BasicLogger(os.Stderr, logLevel(), func() string {
		return time.Now().UTC().Format("2006-01-02T15:04:05.000Z ")
	})}
	res, err := txnTransform(o, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v%s\n", err, logger.tail())
		return 1
	}
	out, _ := jsonMarshal(res)
	fmt.Println(string(out))
	return 0
}

func txnTransform(o txnOptions, logger *ringLogger) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	common := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...),
		kgo.ClientID("mskmock-test-franz-go"),
		kgo.WithLogger(logger),
		kgo.DialTimeout(5 * time.Second),
	}

	// Where the input ends, and where the group starts.
	admCl, err := kgo.NewClient(common...)
	if err != nil {
		return nil, err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ends, err := adm.ListEndOffsets(ctx, o.input)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", o.input, err)
	}
	end := map[int32]int64{}
	var listErr error
	ends.Each(func(lo kadm.ListedOffset) {
		if lo.Err != nil && listErr == nil {
			listErr = fmt.Errorf("end offset of %s/%d: %w", lo.Topic, lo.Partition, lo.Err)
		}
		end[lo.Partition] = lo.Offset
	})
	if listErr != nil {
		return nil, listErr
	}
	if len(end) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", o.input)
	}
	committedOffsets := func() (map[int32]int64, error) {
		got := map[int32]int64{}
		resps, err := adm.FetchOffsets(kadm.RequireStable(ctx), o.group)
		if errors.Is(err, kerr.GroupIDNotFound) {
			return got, nil // some brokers say so for a group that never committed
		}
		if err != nil {
			return nil, err
		}
		for p, r := range resps[o.input] {
			if r.Err != nil {
				return nil, fmt.Errorf("partition %d: %w", p, r.Err)
			}
			if r.At >= 0 {
				got[p] = r.At
			}
		}
		return got, nil
	}
	next, err := committedOffsets()
	if err != nil {
		return nil, fmt.Errorf("committed offsets of group %s: %w", o.group, err)
	}
	for p := range end {
		if _, ok := next[p]; !ok {
			next[p] = 0
		}
	}

	sess, err := kgo.NewGroupTransactSession(append(common,
		kgo.TransactionalID(o.txnID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumerGroup(o.group),
		kgo.ConsumeTopics(o.input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(time.Second),
	)...)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Close leaves the group, which waits for a join in progress: bounded, so that a broker
		// that holds a JoinGroup (or never answers) cannot keep the process alive.
		closed := make(chan struct{})
		go func() { sess.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			fmt.Fprintln(os.Stderr, "closing the session took over 5 s; exiting without waiting for it")
		}
	}()

	t0 := time.Now()
	initCtx, initCancel := context.WithTimeout(ctx, o.initTimeout)
	id, epoch, err := sess.Client().ProducerID(initCtx)
	initCancel()
	if err != nil {
		return nil, fmt.Errorf("loading the producer id (InitProducerId, transactional id %s) failed after %.1f s: %w",
			o.txnID, time.Since(t0).Seconds(), err)
	}
	fmt.Fprintf(os.Stderr, "producer id %d epoch %d\n", id, epoch)

	done := func() bool {
		for p, e := range end {
			if next[p] < e {
				return false
			}
		}
		return true
	}
	var committedTxns, abortedTxns, unplanned, recordsCommitted, recordsAborted, txnNo int
	for !done() {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("timed out after %s: committed offsets %v, end offsets %v, %d transactions committed, %d aborted",
				o.timeout, next, end, committedTxns, abortedTxns)
		}
		pollCtx, pollCancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fetches := sess.PollRecords(pollCtx, o.batch)
		pollCancel()
		var fetchErr error
		fetches.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return // the poll's own time-out
			}
			if fetchErr == nil {
				fetchErr = fmt.Errorf("fetch %s/%d: %w", t, p, err)
			}
		})
		if fetchErr != nil {
			return nil, fetchErr
		}
		recs := fetches.Records()
		if len(recs) == 0 {
			continue
		}
		first, last := map[int32]int64{}, map[int32]int64{}
		for _, r := range recs {
			if r.Topic != o.input {
				return nil, fmt.Errorf("record from unexpected topic %s", r.Topic)
			}
			if f, ok := first[r.Partition]; !ok {
				first[r.Partition] = r.Offset
				if r.Offset != next[r.Partition] {
					return nil, fmt.Errorf("partition %d: polled from offset %d, but the committed offset is %d (records skipped or repeated)",
						r.Partition, r.Offset, next[r.Partition])
				}
			} else if r.Offset != last[r.Partition]+1 {
				return nil, fmt.Errorf("partition %d: offset %d follows %d (first %d)", r.Partition, r.Offset, last[r.Partition], f)
			}
			last[r.Partition] = r.Offset
		}

		txnNo++
		abort := o.abortEvery > 0 && txnNo%o.abortEvery == 0
		if err := sess.Begin(); err != nil {
			return nil, fmt.Errorf("begin transaction #%d: %w", txnNo, err)
		}
		out := make([]*kgo.Record, 0, len(recs))
		for _, r := range recs {
			hs := append(append([]kgo.RecordHeader{}, r.Headers...),
				kgo.RecordHeader{Key: "src", Value: []byte(strconv.Itoa(int(r.Partition)) + ":" + strconv.FormatInt(r.Offset, 10))})
			out = append(out, &kgo.Record{Topic: o.output, Partition: r.Partition, Key: r.Key,
				Value: bytes.ToUpper(r.Value), Headers: hs})
		}
		if err := sess.ProduceSync(ctx, out...).FirstErr(); err != nil {
			return nil, fmt.Errorf("produce in transaction #%d: %w", txnNo, err)
		}
		committed, err := sess.End(ctx, kgo.TransactionEndTry(!abort))
		if err != nil {
			return nil, fmt.Errorf("end transaction #%d (commit %v): %w", txnNo, !abort, err)
		}
		switch {
		case abort && committed:
			return nil, fmt.Errorf("transaction #%d: End(TryAbort) says it committed", txnNo)
		case committed:
			committedTxns++
			recordsCommitted += len(recs)
			for p, off := range last {
				next[p] = off + 1
			}
		default:
			abortedTxns++
			recordsAborted += len(recs)
			if !abort {
				unplanned++
				fmt.Fprintf(os.Stderr, "transaction #%d aborted by franz-go (rebalance?)\n", txnNo)
			}
			got, err := committedOffsets()
			if err != nil {
				return nil, fmt.Errorf("committed offsets after aborting transaction #%d: %w", txnNo, err)
			}
			for p := range first {
				if got[p] != next[p] {
					return nil, fmt.Errorf("after aborting transaction #%d the committed offset of partition %d is %d, expected %d",
						txnNo, p, got[p], next[p])
				}
			}
		}
	}
	str := func(m map[int32]int64) map[string]int64 {
		s := map[string]int64{}
		for p, v := range m {
			s[strconv.Itoa(int(p))] = v
		}
		return s
	}
	return map[string]any{
		"committed_txns": committedTxns, "aborted_txns": abortedTxns, "unplanned_aborts": unplanned,
		"records_committed": recordsCommitted, "records_aborted": recordsAborted,
		"end_offsets": str(end), "committed_offsets": str(next),
	}, nil
}
