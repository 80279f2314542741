// tfserverless.go: the terraform-serverless command, what the Terraform AWS provider's
// aws_msk_serverless_cluster does on `terraform apply` (create, then read) and on
// `terraform destroy`, call by call, through aws-sdk-go-v2's service/kafka (issue 34).
//
//	terraform-serverless apply --endpoint URL --region R --cluster-name N --subnet S...
//	                           [--security-group G]... [--tag K=V]... [--timeout S]
//	    -> {"arn": A, "create": {...}, "wait": {"polls": N, "states": [...]}, "read": {...}}
//	terraform-serverless destroy --endpoint URL --region R --arn A [--timeout S]
//	    -> {"delete": {...}, "wait": {"polls": N, "states": [..., "NotFoundException"]}}
//
// The sequence, from hashicorp/terraform-provider-aws internal/service/kafka
// (serverless_cluster.go, cluster.go; https://github.com/hashicorp/terraform-provider-aws):
//
//   - create: CreateClusterV2 with ClusterName, Serverless{ClientAuthentication: SASL/IAM
//     enabled, VpcConfigs} and the resource's tags in the same request; then waitClusterCreated:
//     DescribeClusterV2 polled while the state is CREATING (pending) until ACTIVE (target), any
//     other state an error; then the read.
//   - read: DescribeClusterV2 (a cluster without a Serverless part is "not found"; the tags are
//     the Cluster shape's, so no ListTagsForResource), then GetBootstrapBrokers for
//     bootstrap_brokers_sasl_iam (https://github.com/hashicorp/terraform-provider-aws/pull/42148).
//   - delete: DeleteCluster (NotFoundException: already gone), then waitClusterDeleted:
//     DescribeClusterV2 polled while DELETING until NotFoundException.
//
// The waits are terraform-plugin-sdk's retry.StateChangeConf with no Delay, MinTimeout or
// PollInterval: the first refresh at once, then 200 ms, 400 ms, ... doubling up to 10 s between
// refreshes; a NotFoundException while waiting for a target state is tolerated 20 times.
// "states" lists what every refresh saw (NotFoundException for the error).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kafka"
	kafkatypes "github.com/aws/aws-sdk-go-v2/service/kafka/types"
)

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// tfWait replays retry.StateChangeConf.WaitForStateContext over statusClusterState: an empty
// target waits for the cluster to be gone.
func tfWait(ctx context.Context, kc *kafka.Client, arn string, pending, target []string) (map[string]any, error) {
	in := func(s string, set []string) bool {
		for _, x := range set {
			if x == s {
				return true
			}
		}
		return false
	}
	states := []string{}
	var wait time.Duration
	notFound := 0
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("timeout while waiting for %v (states seen %v): %w", target, states, ctx.Err())
		case <-time.After(wait):
			if wait == 0 {
				wait = 100 * time.Millisecond
			}
		}
		out, err := kc.DescribeClusterV2(ctx, &kafka.DescribeClusterV2Input{ClusterArn: awssdk.String(arn)})
		var nf *kafkatypes.NotFoundException
		switch {
		case errors.As(err, &nf):
			states = append(states, "NotFoundException")
			if len(target) == 0 {
				return map[string]any{"polls": len(states), "states": states}, nil
			}
			if notFound++; notFound > 20 {
				return nil, fmt.Errorf("couldn't find resource (21 retries): %w", err)
			}
		case err != nil:
			return nil, fmt.Errorf("DescribeClusterV2: %w", err)
		default:
			state := string(out.ClusterInfo.State)
			states = append(states, state)
			if in(state, target) {
				return map[string]any{"polls": len(states), "states": states}, nil
			}
			if !in(state, pending) {
				return nil, fmt.Errorf("unexpected state '%s', wanted target '%s' (states seen %v)", state,
					strings.Join(target, ", "), states)
			}
			notFound = 0
		}
		wait *= 2
		if wait > 10*time.Second {
			wait = 10 * time.Second
		}
	}
}

// tfRead is resourceServerlessClusterRead: the attributes Terraform keeps in its state.
func tfRead(ctx context.Context, kc *kafka.Client, arn string) (map[string]any, error) {
	d, err := kc.DescribeClusterV2(ctx, &kafka.DescribeClusterV2Input{ClusterArn: awssdk.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("reading MSK Serverless Cluster (%s): %w", arn, err)
	}
	c := d.ClusterInfo
	if c == nil || c.Serverless == nil {
		return nil, fmt.Errorf("reading MSK Serverless Cluster (%s): empty result", arn)
	}
	bb, err := kc.GetBootstrapBrokers(ctx, &kafka.GetBootstrapBrokersInput{ClusterArn: awssdk.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("reading MSK Serverless Cluster (%s) bootstrap brokers: %w", arn, err)
	}
	read := map[string]any{
		"arn":                        awssdk.ToString(c.ClusterArn),
		"cluster_name":               awssdk.ToString(c.ClusterName),
		"state":                      string(c.State),
		"tags":                       c.Tags,
		"bootstrap_brokers_sasl_iam": awssdk.ToString(bb.BootstrapBrokerStringSaslIam),
	}
	// arn:${Partition}:kafka:${Region}:${Account}:cluster/${ClusterName}/${Uuid}
	if parts := strings.Split(awssdk.ToString(c.ClusterArn), "/"); len(parts) == 3 {
		read["cluster_uuid"] = parts[2]
	}
	if a := c.Serverless.ClientAuthentication; a != nil && a.Sasl != nil && a.Sasl.Iam != nil {
		read["client_authentication_sasl_iam"] = awssdk.ToBool(a.Sasl.Iam.Enabled)
	}
	vpcs := []any{}
	for _, v := range c.Serverless.VpcConfigs {
		vpcs = append(vpcs, map[string]any{"subnet_ids": v.SubnetIds, "security_group_ids": v.SecurityGroupIds})
	}
	read["vpc_config"] = vpcs
	return read, nil
}

func runTerraformServerless(args []string) (any, error) {
	if len(args) < 1 || (args[0] != "apply" && args[0] != "destroy") {
		return nil, errors.New("usage: terraform-serverless (apply|destroy) --endpoint URL --region R ...")
	}
	phase := args[0]
	fs := flag.NewFlagSet("terraform-serverless "+phase, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	endpoint := fs.String("endpoint", "", "the broker's aws_url")
	region := fs.String("region", "", "AWS region")
	name := fs.String("cluster-name", "", "apply: cluster_name")
	arn := fs.String("arn", "", "destroy: the resource's id (its ARN)")
	timeout := fs.Float64("timeout", 60, "overall deadline, seconds")
	var subnets, groups, tags stringList
	fs.Var(&subnets, "subnet", "apply: vpc_config.subnet_ids (repeat)")
	fs.Var(&groups, "security-group", "apply: vpc_config.security_group_ids (repeat)")
	fs.Var(&tags, "tag", "apply: tags, K=V (repeat)")
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	if *endpoint == "" || *region == "" || fs.NArg() > 0 || (phase == "apply") == (*name == "") ||
		(phase == "destroy") == (*arn == "") {
		return nil, errors.New("usage: terraform-serverless apply --endpoint URL --region R --cluster-name N --subnet S... | " +
			"destroy --endpoint URL --region R --arn A")
	}
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if key == "" || secret == "" {
		return nil, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout*float64(time.Second)))
	defer cancel()
	kc := kafka.NewFromConfig(awsConfig(*region, key, secret, os.Getenv("AWS_SESSION_TOKEN")),
		func(o *kafka.Options) { o.BaseEndpoint = endpoint })

	if phase == "destroy" {
		del, err := kc.DeleteCluster(ctx, &kafka.DeleteClusterInput{ClusterArn: arn})
		var nf *kafkatypes.NotFoundException
		if errors.As(err, &nf) {
			return map[string]any{"delete": map[string]any{"not_found": true}}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("deleting MSK Cluster (%s): %w", *arn, err)
		}
		wait, err := tfWait(ctx, kc, *arn, []string{string(kafkatypes.ClusterStateDeleting)}, nil)
		if err != nil {
			return nil, fmt.Errorf("waiting for MSK Cluster (%s) delete: %w", *arn, err)
		}
		return map[string]any{"delete": map[string]any{"arn": awssdk.ToString(del.ClusterArn), "state": string(del.State)},
			"wait": wait}, nil
	}

	tagMap := map[string]string{}
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return nil, fmt.Errorf("--tag %q: want K=V", t)
		}
		tagMap[k] = v
	}
	in := &kafka.CreateClusterV2Input{
		ClusterName: name,
		Serverless: &kafkatypes.ServerlessRequest{
			ClientAuthentication: &kafkatypes.ServerlessClientAuthentication{
				Sasl: &kafkatypes.ServerlessSasl{Iam: &kafkatypes.Iam{Enabled: awssdk.Bool(true)}},
			},
			VpcConfigs: []kafkatypes.VpcConfig{{SubnetIds: subnets, SecurityGroupIds: groups}},
		},
		Tags: tagMap,
	}
	created, err := kc.CreateClusterV2(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("creating MSK Serverless Cluster (%s): %w", *name, err)
	}
	id := awssdk.ToString(created.ClusterArn)
	wait, err := tfWait(ctx, kc, id, []string{string(kafkatypes.ClusterStateCreating)},
		[]string{string(kafkatypes.ClusterStateActive)})
	if err != nil {
		return nil, fmt.Errorf("waiting for MSK Serverless Cluster (%s) create: %w", id, err)
	}
	read, err := tfRead(ctx, kc, id)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"arn": id,
		"create": map[string]any{"name": awssdk.ToString(created.ClusterName), "type": string(created.ClusterType),
			"state": string(created.State)},
		"wait": wait,
		"read": read,
	}, nil
}
