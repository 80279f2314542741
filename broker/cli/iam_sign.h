/*
 * MSK IAM authentication messages, signed as the AWS libraries sign them (docs/msk-behaviors.md,
 * "IAM tokens"): a SigV4 presign of GET / with host the only signed header, service
 * kafka-cluster, Action=kafka-cluster:Connect, valid for 900 s.
 *   AWS_MSK_IAM  the JSON payload of aws-msk-iam-auth, signed for the broker host dialed;
 *   OAUTHBEARER  RFC 7628's client-first message around the base64url (unpadded) presigned URL
 *                https://kafka.<region>.amazonaws.com/?..., as the aws-msk-iam-sasl-signer
 *                libraries make it (User-Agent appended after signing).
 */
#ifndef CLI_IAM_SIGN_H
#define CLI_IAM_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "aws_creds.h"
#include "conn.h"

#define CLI_IAM_EXPIRES_S 900

/* The first SASL message for mech, signed at now_ms (ms since the epoch). malloc'd with its
 * length in *len, or NULL with err. */
char *cli_iam_message(cli_mech mech, const cli_aws_creds *cr, const char *region, const char *host, int64_t now_ms,
                      size_t *len, char *err, size_t n);

#endif
