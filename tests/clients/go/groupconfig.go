package main

// group-config: a group's configs (KIP-848, resource type 32) through franz-go's kmsg, as
// franz-go's own integration tests reach them (kadm has no helper for groups):
//
//	client group-config --bootstrap B --group G [--set K=V]... [--delete K]... [--validate-only]
//	  -> {"alter": {"error_code": C, "error_message": M} | null,
//	      "describe": {"error_code": C, "error_message": M,
//	                   "configs": {NAME: {"value": V, "source": S, "type": T}}}}
//
// With --set or --delete, one IncrementalAlterConfigs first; then DescribeConfigs of the group.
// The broker's error codes are reported, not raised: tests assert on them.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func runGroupConfig(args []string) (any, error) {
	fs := flag.NewFlagSet("group-config", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	bootstrap := fs.String("bootstrap", "", "comma-separated host:port list")
	group := fs.String("group", "", "group id")
	validateOnly := fs.Bool("validate-only", false, "IncrementalAlterConfigs with validate_only")
	var sets, deletes multiFlag
	fs.Var(&sets, "set", "KEY=VALUE to SET (repeatable)")
	fs.Var(&deletes, "delete", "KEY to DELETE (repeatable)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *bootstrap == "" || fs.NArg() > 0 {
		return nil, errors.New("usage: client group-config --bootstrap B --group G [--set K=V]... [--delete K]...")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*bootstrap, ",")...), kgo.ClientID("mskmock-test-franz-go"),
		kgo.RetryTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	out := map[string]any{"alter": nil}
	if len(sets)+len(deletes) > 0 {
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
		res.ResourceName = *group
		for _, s := range sets {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil, fmt.Errorf("--set %q: want KEY=VALUE", s)
			}
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(v)
			res.Configs = append(res.Configs, c)
		}
		for _, k := range deletes {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op = k, kmsg.IncrementalAlterConfigOpDelete
			res.Configs = append(res.Configs, c)
		}
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Resources = append(req.Resources, res)
		req.ValidateOnly = *validateOnly
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("IncrementalAlterConfigs: %w", err)
		}
		if len(resp.Resources) != 1 {
			return nil, fmt.Errorf("IncrementalAlterConfigs: %d resources in the answer", len(resp.Resources))
		}
		r := resp.Resources[0]
		out["alter"] = map[string]any{"error_code": r.ErrorCode, "error_message": strOrNil(r.ErrorMessage)}
	}

	dres := kmsg.NewDescribeConfigsRequestResource()
	dres.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	dres.ResourceName = *group
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	dreq.Resources = append(dreq.Resources, dres)
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("DescribeConfigs: %w", err)
	}
	if len(dresp.Resources) != 1 {
		return nil, fmt.Errorf("DescribeConfigs: %d resources in the answer", len(dresp.Resources))
	}
	d := dresp.Resources[0]
	configs := map[string]any{}
	for _, c := range d.Configs {
		configs[c.Name] = map[string]any{"value": strOrNil(c.Value), "source": int8(c.Source), "type": int8(c.ConfigType)}
	}
	out["describe"] = map[string]any{"error_code": d.ErrorCode, "error_message": strOrNil(d.ErrorMessage),
		"configs": configs}
	return out, nil
}
