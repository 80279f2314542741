/* What the CLI's files share (README.md); nothing outside broker/cli/ includes this. */
#ifndef CLI_INT_H
#define CLI_INT_H

#include <stdio.h>

#include "conn.h"

/* Bootstrap from $MSKMOCK_CLI_BOOTSTRAP (else NULL: cli_default_bootstrap), client id mskmock-cli, 30 s per answer. */
void cli_opts_default(cli_opts *o);
/* 1 when argv[*i] was a common flag (and its value consumed), 0 when not, -1 on a missing value. */
int cli_common_flag(cli_opts *o, int argc, char **argv, int *i);
/* beginning, end, OFFSET or @TIMESTAMP_MS (consume -o, group seek --to). */
bool cli_valid_position(const char *s);
/* Prints "mskmock CMD: what" on stderr; returns 2 (bad usage). */
int cli_usage_error(const char *cmd, const char *what, const char *arg);
/* Prints "mskmock CMD: what" on stderr; returns 1 (the command failed). */
int cli_fail(const char *cmd, const char *what);

int cli_topic(int argc, char **argv);
int cli_produce(int argc, char **argv);
int cli_consume(int argc, char **argv);
int cli_group(int argc, char **argv);

#define CLI_COMMON_USAGE                                                                              \
    "common flags:\n"                                                                                 \
    "  -b, --bootstrap HOST:PORT[,...]  brokers to ask first (default: $MSKMOCK_CLI_BOOTSTRAP, else\n" \
    "                                   localhost:9092, or :9098 for TLS/SASL, both moved by\n"       \
    "                                   $MSKMOCK_PORT_BASE as the broker moves them)\n"              \
    "  --client-id ID                   the client id the brokers log (default mskmock-cli)\n"        \
    "  --request-timeout S              how long to wait for each answer (default 30)\n"              \
    "  --security-protocol P            PLAINTEXT (default), SSL, SASL_SSL or SASL_PLAINTEXT\n"       \
    "  --tls                            the same as --security-protocol SSL (SASL_SSL with a mechanism)\n" \
    "  --ca-file PEM                    CAs to trust (default: the system's; mskmock's own is\n"       \
    "                                   <data.dir>/tls/ca.pem)\n"                                     \
    "  --sasl-mechanism M               AWS_MSK_IAM or OAUTHBEARER, both IAM-signed (implies SASL_SSL);\n" \
    "                                   credentials as the AWS SDKs find them: AWS_ACCESS_KEY_ID...,\n" \
    "                                   AWS_PROFILE and ~/.aws/credentials, the container endpoint\n" \
    "  --region R                       the region tokens are signed for (default: AWS_REGION,\n"     \
    "                                   AWS_DEFAULT_REGION, the profile's region)\n"

#endif
