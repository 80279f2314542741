/*
 * Blocking Kafka connections for the CLI: dial, request/response framing through protocol/'s
 * message descriptions, ApiVersions negotiation; and the cluster as Metadata describes it, with
 * one connection per broker id opened when first needed.
 *
 * TLS and SASL (auth.h) happen in cli_conn_open: after the dial the fd is wrapped in an SSL
 * session (conn_io then reads and writes through it); after ApiVersions, SaslHandshake and
 * SaslAuthenticate go through cli_call like any request. A KIP-368 session lifetime makes
 * cli_call authenticate again before the session ends.
 */
#ifndef CLI_CONN_H
#define CLI_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kp.h"
#include "kp_errors.h"
#include "kp_msgs.h"

#define CLI_MAX_API 128
#define CLI_MAX_BROKERS 64

typedef enum { CLI_MECH_NONE, CLI_MECH_AWS_MSK_IAM, CLI_MECH_OAUTHBEARER } cli_mech;

struct cli_auth;       /* TLS context and AWS credentials, shared by a command's connections (auth.h) */
struct ssl_st;

typedef struct cli_opts {
    const char *bootstrap; /* "host:port[,host:port...]" */
    const char *client_id;
    int timeout_ms;        /* for connecting and for each answer */
    /* --security-protocol (or --tls); -1 where not given, decided by cli_cluster_open */
    int tls, sasl;
    cli_mech mech;
    const char *ca_file;   /* NULL: the system's trust store */
    const char *region;    /* --region; NULL: AWS_REGION, AWS_DEFAULT_REGION, the profile's */
    struct cli_auth *auth; /* made by cli_cluster_open when TLS or SASL is on */
} cli_opts;

/* localhost and the port of a local mskmock's plaintext (or, for TLS/SASL, IAM) listener, after $MSKMOCK_PORT_BASE. */
const char *cli_default_bootstrap(const cli_opts *o);

typedef struct cli_conn {
    int fd;
    struct ssl_st *ssl;    /* NULL on a plaintext connection */
    char host[256];
    int port;
    char addr[300];        /* host:port, for messages */
    const cli_opts *o;
    int32_t corr;
    int wait_ms;           /* added to timeout_ms for an answer the broker may hold back (JoinGroup) */
    int64_t reauth_at_ms;  /* KIP-368: authenticate again before a request sent after this (0: never) */
    int16_t api_min[CLI_MAX_API], api_max[CLI_MAX_API]; /* what the broker serves; max -1: not at all */
} cli_conn;

/* A connected socket (non-blocking, close-on-exec) to host:port within timeout_ms, or -1 with err. */
int cli_dial(const char *host, int port, int timeout_ms, char *err, size_t n);

/* Connects to host:port and negotiates versions. NULL with err filled. */
cli_conn *cli_conn_open(const cli_opts *o, const char *host, int port, char *err, size_t n);
void cli_conn_close(cli_conn *c);

/* The highest version of m both sides serve, or -1 with err filled ("... serves none we do"). */
int16_t cli_version(const cli_conn *c, const kp_msg *m, char *err, size_t n);

/*
 * Sends req (m's request at ver) and, unless resp is NULL (Produce with acks=0 gets no answer),
 * decodes the answer into resp. Everything the answer points to lives in a. 0, or -1 with err.
 */
int cli_call(cli_conn *c, const kp_msg *m, int16_t ver, const void *req, void *resp, kp_arena *a, char *err,
             size_t n);

typedef struct cli_broker {
    int32_t id;
    char host[256];
    int port;
    cli_conn *c;
} cli_broker;

typedef struct cli_cluster {
    cli_opts *o;
    cli_conn *boot;        /* the first bootstrap address that answered */
    cli_broker b[CLI_MAX_BROKERS];
    int nb;
    int32_t controller;    /* -1 when Metadata names none */
} cli_cluster;

/* Sets up TLS and SASL as o asks (auth.h), then the first bootstrap broker that answers. 0, or -1 with err. */
int cli_cluster_open(cli_cluster *cl, cli_opts *o, char *err, size_t n);
void cli_cluster_close(cli_cluster *cl);
/*
 * Metadata for one topic (topic non-NULL) or every topic, through the bootstrap connection; the
 * brokers it lists become known to cli_node. 0, or -1 with err (a transport failure only: the
 * topics' error codes are the caller's to read).
 */
int cli_metadata(cli_cluster *cl, const char *topic, kp_metadata_response *out, kp_arena *a, char *err, size_t n);
/* The connection to broker id (opened on first use). NULL with err. */
cli_conn *cli_node(cli_cluster *cl, int32_t id, char *err, size_t n);

/* "NAME" or "NAME: message" of a Kafka error, for a failure line. */
const char *cli_err_text(int16_t code, kp_str message, char *buf, size_t n);

#endif
