/*
 * aws: the HTTP listener of the AWS APIs around the cluster (aws.port): the `kafka` control
 * plane and STS, each request SigV4-verified against the identities file before a service sees
 * it (aws_call.h says how a call reaches its service). docs/control-plane.md says what is served.
 */
#ifndef AWS_H
#define AWS_H

#include <stddef.h>

#include "srv.h"

/* After sasl_init (the identities) and authz_init (the cluster's ARN). aws.port 0: nothing. */
int aws_start(srv *s, char *err, size_t n);
/* The bound port (the OS's pick under ports.auto); 0: off. */
int aws_port(const srv *s);
void aws_close(srv *s);

#endif
