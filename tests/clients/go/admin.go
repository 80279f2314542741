package main

// admin-calls: the admin calls a provisioning script makes, one after the other, each
// reported on its own (the same contract as tests/clients/java AdminCalls), through
// franz-go's kadm or Sarama's ClusterAdmin:
//
//	client admin-calls (franz|sarama) BOOTSTRAP TOPIC
//	  -> {"describe_cluster": {"ok": true, "controller": ID|null, "nodes": N},
//	      "create_topics": {...}, "create_partitions": {...}, "describe_topics": {...},
//	      "delete_topics": {...}}        (a failed call: {"ok": false, "error": "..."})

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func attempt(fn func(out map[string]any) error) map[string]any {
	out := map[string]any{}
	if err := fn(out); err != nil {
		out["ok"] = false
		out["error"] = err.Error()
	} else {
		out["ok"] = true
	}
	return out
}

func franzAdminCalls(ctx context.Context, bootstrap, topic string) (map[string]any, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RetryTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	res := map[string]any{}
	res["describe_cluster"] = attempt(func(out map[string]any) error {
		md, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return err
		}
		out["controller"] = nil
		if md.Controller >= 0 {
			out["controller"] = md.Controller
		}
		out["nodes"] = len(md.Brokers)
		return nil
	})
	res["create_topics"] = attempt(func(map[string]any) error {
		r, err := adm.CreateTopic(ctx, 2, -1, nil, topic)
		if err == nil {
			err = r.Err
		}
		return err
	})
	res["create_partitions"] = attempt(func(map[string]any) error {
		r, err := adm.UpdatePartitions(ctx, 3, topic)
		if err == nil {
			err = r.Error()
		}
		return err
	})
	res["describe_topics"] = attempt(func(out map[string]any) error {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return err
		}
		out["partitions"] = len(td[topic].Partitions)
		return td[topic].Err
	})
	res["delete_topics"] = attempt(func(map[string]any) error {
		r, err := adm.DeleteTopic(ctx, topic)
		if err == nil {
			err = r.Err
		}
		return err
	})
	return res, nil
}

func saramaAdminCalls(bootstrap, topic string) (map[string]any, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0 // MSK Serverless's era; older versions fall below its floors
	cfg.Admin.Timeout = 10 * time.Second
	cfg.Admin.Retry.Max = 2
	cfg.Metadata.Retry.Max = 2
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	adm, err := sarama.NewClusterAdmin([]string{bootstrap}, cfg)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	res := map[string]any{}
	res["describe_cluster"] = attempt(func(out map[string]any) error {
		brokers, controller, err := adm.DescribeCluster()
		if err != nil {
			return err
		}
		out["controller"] = nil
		if controller >= 0 {
			out["controller"] = controller
		}
		out["nodes"] = len(brokers)
		return nil
	})
	res["create_topics"] = attempt(func(map[string]any) error {
		return adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: -1}, false)
	})
	res["create_partitions"] = attempt(func(map[string]any) error {
		return adm.CreatePartitions(topic, 3, nil, false)
	})
	res["describe_topics"] = attempt(func(out map[string]any) error {
		md, err := adm.DescribeTopics([]string{topic})
		if err != nil {
			return err
		}
		if len(md) != 1 {
			return errors.New("no metadata for the topic")
		}
		out["partitions"] = len(md[0].Partitions)
		if md[0].Err != sarama.ErrNoError {
			return md[0].Err
		}
		return nil
	})
	res["delete_topics"] = attempt(func(map[string]any) error {
		return adm.DeleteTopic(topic)
	})
	return res, nil
}

func runAdminCalls(ctx context.Context, args []string) (any, error) {
	if len(args) != 3 {
		return nil, fmt.Errorf("usage: client admin-calls (franz|sarama) BOOTSTRAP TOPIC")
	}
	switch args[0] {
	case "franz":
		return franzAdminCalls(ctx, args[1], args[2])
	case "sarama":
		return saramaAdminCalls(args[1], args[2])
	}
	return nil, fmt.Errorf("admin-calls: unknown library %q", args[0])
}
