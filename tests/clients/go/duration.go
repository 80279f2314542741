package main

// Duration mode of produce and consume (see main.go): a steady trickle of records for a
// given time, reporting every error as an event and going on, to watch what a client sees
// over session expiries, re-authentications and credential rotations.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func record(o options, i int) *kgo.Record {
	return &kgo.Record{
		Topic:     o.topic,
		Partition: int32(i % o.partitions),
		Key:       []byte(keyOf(i)),
		Value:     []byte(valueOf(i)),
		Headers: []kgo.RecordHeader{
			{Key: "idx", Value: []byte(strconv.Itoa(i))},
			{Key: "codec", Value: []byte(o.compression)},
		},
	}
}

func summary(kind string, n, errs int, extra map[string]any) map[string]any {
	endEvents()
	res := map[string]any{
		kind:             n,
		"errors":         errs,
		"disconnects":    eventCount("disconnect"),
		"connect_errors": eventCount("connect-error"),
		"tokens":         eventCount("token"),
		"logged":         eventCount("log"),
	}
	for k, v := range extra {
		res[k] = v
	}
	return res
}

func produceFor(ctx context.Context, o options) (any, error) {
	opts := append(baseOpts(o),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(codecs[o.compression]),
		kgo.DisableIdempotentWrite(),
		kgo.ProduceRequestTimeout(10*time.Second),
		kgo.RecordDeliveryTimeout(10*time.Second),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	until := time.Now().Add(o.duration)
	t0 := time.Now()
	produced, sends, errs := 0, 0, 0
	for tick := 0; time.Now().Before(until); tick++ {
		if d := time.Until(t0.Add(time.Duration(tick) * 50 * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		i := produced // a failed record is sent again: the topic keeps an unbroken sequence
		sends++
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := cl.ProduceSync(rctx, record(o, i)).FirstErr()
		cancel()
		if err != nil {
			errs++
			emit(map[string]any{"event": "error", "i": i, "message": err.Error()})
			continue
		}
		produced++
	}
	return summary("produced", produced, errs, map[string]any{"sends": sends}), nil
}

func consumeFor(ctx context.Context, o options) (any, error) {
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

	cctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	nextIndex := make([]int, o.partitions)
	counts := make([]int, o.partitions)
	for p := range nextIndex {
		nextIndex[p] = p
	}
	consumed, errs := 0, 0
	for {
		fetches := cl.PollFetches(cctx)
		failed := false
		for _, e := range fetches.Errors() {
			if errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled) {
				continue
			}
			errs++
			failed = true
			emit(map[string]any{"event": "error", "message": fmt.Sprintf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)})
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
			i := nextIndex[p]
			where := fmt.Sprintf("partition %d offset %d", p, r.Offset)
			switch {
			case r.Offset != int64(counts[p]):
				verr = fmt.Errorf("%s: expected offset %d (offsets must be consecutive from 0)", where, counts[p])
			case string(r.Key) != keyOf(i):
				verr = fmt.Errorf("%s: key %q, expected %q", where, r.Key, keyOf(i))
			case string(r.Value) != valueOf(i):
				verr = fmt.Errorf("%s: value %q, expected %q", where, r.Value, valueOf(i))
			case len(r.Headers) != 2 || r.Headers[0].Key != "idx" || string(r.Headers[0].Value) != strconv.Itoa(i):
				verr = fmt.Errorf("%s: headers %s, expected [idx=%d, codec=<codec>]", where, fmtHeaders(r.Headers), i)
			}
			if verr != nil {
				return
			}
			nextIndex[p] = i + o.partitions
			counts[p]++
			consumed++
		})
		if verr != nil {
			return nil, verr
		}
		if cctx.Err() != nil {
			break
		}
		if failed {
			time.Sleep(100 * time.Millisecond)
		}
	}
	per := map[string]int{}
	for p, n := range counts {
		per[strconv.Itoa(p)] = n
	}
	return summary("consumed", consumed, errs, map[string]any{"per_partition": per}), nil
}
