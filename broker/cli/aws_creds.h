/*
 * AWS credentials and region for the CLI's IAM authentication, found where the AWS SDKs look,
 * in their order: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN),
 * the shared files (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, then AWS_CONFIG_FILE or
 * ~/.aws/config; profile AWS_PROFILE, else "default"), then the container endpoint
 * (AWS_CONTAINER_CREDENTIALS_FULL_URI, or AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on
 * 169.254.170.2, with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or _TOKEN). Not followed: profiles
 * that assume a role, SSO, credential_process, web identity and EC2 instance metadata; a profile
 * that names one of them is refused by name rather than skipped.
 */
#ifndef CLI_AWS_CREDS_H
#define CLI_AWS_CREDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cli_aws_creds {
    char access_key_id[128];
    char secret_access_key[1024];
    char session_token[8192]; /* empty for a long-term key */
    int64_t expiry_ms;        /* -1: does not expire */
    char source[2400];        /* where they came from, for messages */
} cli_aws_creds;

/* The first source that holds credentials. 0, or -1 with err naming each source looked at. */
int cli_aws_creds_resolve(cli_aws_creds *out, int timeout_ms, char *err, size_t n);

/* flag (--region), else AWS_REGION, AWS_DEFAULT_REGION, the profile's region in the config file.
 * 0, or -1 with err. */
int cli_aws_region(const char *flag, char *out, size_t cap, char *err, size_t n);

/* "http://HOST[:PORT]/PATH" split; whether the SDKs would call HOST over plain HTTP (loopback,
 * the ECS and EKS link-local addresses). Exposed for the unit tests. 0, or -1 with err. */
int cli_container_url(const char *url, char *host, size_t hcap, int *port, char *path, size_t pcap, char *err,
                      size_t n);

#endif
