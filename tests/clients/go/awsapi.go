// awsapi.go: the aws-calls command, mskmock's AWS listener (aws.port) through aws-sdk-go-v2,
// the SDK the Terraform AWS provider is built on (issue 34, docs/control-plane.md).
//
//	aws-calls --endpoint URL --region R [--wrong-secret S] [--timeout S]
//	    -> {"caller": {...}, "clusters": [...], "describe": {...}, "bootstrap": {...},
//	        "terraform_read": {...}, "refused": {...}}
//
// Credentials are static, from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN;
// both clients are pointed at --endpoint with the SDK's BaseEndpoint override.
//
// terraform_read replays what the provider's aws_msk_serverless_cluster does on read of an
// existing cluster: DescribeClusterV2 until the state is ACTIVE (waitClusterCreated in
// internal/service/kafka/wait.go), then GetBootstrapBrokers for bootstrap_brokers_sasl_iam
// (https://github.com/hashicorp/terraform-provider-aws/pull/42148).
//
// refused: with --wrong-secret, ListClustersV2 signed with that secret instead; reports the
// error code the SDK surfaces (smithy.APIError.ErrorCode) and the HTTP status.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kafka"
	kafkatypes "github.com/aws/aws-sdk-go-v2/service/kafka/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

func awsConfig(region, key, secret, token string) awssdk.Config {
	return awssdk.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, token),
		// one attempt: a refusal must come back as the broker gave it, not after retries
		RetryMaxAttempts: 1,
	}
}

func clusterJSON(c *kafkatypes.Cluster) map[string]any {
	out := map[string]any{
		"arn":   awssdk.ToString(c.ClusterArn),
		"name":  awssdk.ToString(c.ClusterName),
		"type":  string(c.ClusterType),
		"state": string(c.State),
	}
	if c.Serverless != nil && c.Serverless.ClientAuthentication != nil &&
		c.Serverless.ClientAuthentication.Sasl != nil && c.Serverless.ClientAuthentication.Sasl.Iam != nil {
		out["serverless_iam"] = awssdk.ToBool(c.Serverless.ClientAuthentication.Sasl.Iam.Enabled)
	}
	return out
}

func runAwsCalls(args []string) (any, error) {
	fs := flag.NewFlagSet("aws-calls", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	endpoint := fs.String("endpoint", "", "the broker's aws_url")
	region := fs.String("region", "", "AWS region")
	wrong := fs.String("wrong-secret", "", "also call ListClustersV2 signed with this secret")
	timeout := fs.Float64("timeout", 60, "overall deadline, seconds")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *endpoint == "" || *region == "" || fs.NArg() > 0 {
		return nil, errors.New("usage: aws-calls --endpoint URL --region R [--wrong-secret S]")
	}
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if key == "" || secret == "" {
		return nil, errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are required")
	}
	token := os.Getenv("AWS_SESSION_TOKEN")
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout*float64(time.Second)))
	defer cancel()

	cfg := awsConfig(*region, key, secret, token)
	at := func(o *kafka.Options) { o.BaseEndpoint = endpoint }
	stsc := sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = endpoint })
	kc := kafka.NewFromConfig(cfg, at)
	res := map[string]any{}

	who, err := stsc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return nil, fmt.Errorf("sts GetCallerIdentity: %w", err)
	}
	res["caller"] = map[string]any{"arn": awssdk.ToString(who.Arn), "account": awssdk.ToString(who.Account),
		"user_id": awssdk.ToString(who.UserId)}

	list, err := kc.ListClustersV2(ctx, &kafka.ListClustersV2Input{})
	if err != nil {
		return nil, fmt.Errorf("kafka ListClustersV2: %w", err)
	}
	clusters := []any{}
	for i := range list.ClusterInfoList {
		clusters = append(clusters, clusterJSON(&list.ClusterInfoList[i]))
	}
	res["clusters"] = clusters
	if len(list.ClusterInfoList) == 0 {
		return nil, errors.New("kafka ListClustersV2: no cluster")
	}
	arn := list.ClusterInfoList[0].ClusterArn

	d, err := kc.DescribeClusterV2(ctx, &kafka.DescribeClusterV2Input{ClusterArn: arn})
	if err != nil {
		return nil, fmt.Errorf("kafka DescribeClusterV2: %w", err)
	}
	res["describe"] = clusterJSON(d.ClusterInfo)

	bb, err := kc.GetBootstrapBrokers(ctx, &kafka.GetBootstrapBrokersInput{ClusterArn: arn})
	if err != nil {
		return nil, fmt.Errorf("kafka GetBootstrapBrokers: %w", err)
	}
	res["bootstrap"] = map[string]any{
		"sasl_iam":        awssdk.ToString(bb.BootstrapBrokerStringSaslIam),
		"plaintext":       awssdk.ToString(bb.BootstrapBrokerString),
		"tls":             awssdk.ToString(bb.BootstrapBrokerStringTls),
		"sasl_scram":      awssdk.ToString(bb.BootstrapBrokerStringSaslScram),
		"public_sasl_iam": awssdk.ToString(bb.BootstrapBrokerStringPublicSaslIam),
	}

	// The provider's read: poll until ACTIVE (it waits on CREATING/UPDATING), then bootstrap.
	polls := 0
	var state kafkatypes.ClusterState
	for {
		polls++
		d, err := kc.DescribeClusterV2(ctx, &kafka.DescribeClusterV2Input{ClusterArn: arn})
		if err != nil {
			return nil, fmt.Errorf("terraform read: DescribeClusterV2: %w", err)
		}
		state = d.ClusterInfo.State
		if state == kafkatypes.ClusterStateActive {
			break
		}
		if state != kafkatypes.ClusterStateCreating && state != kafkatypes.ClusterStateUpdating {
			return nil, fmt.Errorf("terraform read: cluster state %s", state)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("terraform read: still %s: %w", state, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	bb, err = kc.GetBootstrapBrokers(ctx, &kafka.GetBootstrapBrokersInput{ClusterArn: arn})
	if err != nil {
		return nil, fmt.Errorf("terraform read: GetBootstrapBrokers: %w", err)
	}
	res["terraform_read"] = map[string]any{"polls": polls, "state": string(state),
		"bootstrap_brokers_sasl_iam": awssdk.ToString(bb.BootstrapBrokerStringSaslIam)}

	if *wrong != "" {
		bad := kafka.NewFromConfig(awsConfig(*region, key, *wrong, token), at)
		_, err := bad.ListClustersV2(ctx, &kafka.ListClustersV2Input{})
		var apiErr smithy.APIError
		if err == nil || !errors.As(err, &apiErr) {
			return nil, fmt.Errorf("ListClustersV2 with a wrong secret: want an API error, got %v", err)
		}
		refused := map[string]any{"code": apiErr.ErrorCode(), "message": apiErr.ErrorMessage()}
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			refused["status"] = re.HTTPStatusCode()
		}
		res["refused"] = refused
	}
	return res, nil
}
