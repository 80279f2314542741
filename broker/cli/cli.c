/* Dispatch and common flags of the command-line client (cli.h, README.md). */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_int.h"

bool cli_is_command(const char *arg) {
    return arg && (!strcmp(arg, "topic") || !strcmp(arg, "produce") || !strcmp(arg, "consume") || !strcmp(arg, "group"));
}

void cli_opts_default(cli_opts *o) {
    const char *env = getenv("MSKMOCK_CLI_BOOTSTRAP");
    o->bootstrap = env && *env ? env : NULL; /* NULL: the local broker's (cli_default_bootstrap) */
    o->client_id = "mskmock-cli";
    o->timeout_ms = 30000;
    o->tls = o->sasl = -1;
    o->mech = CLI_MECH_NONE;
    o->ca_file = o->region = NULL;
    o->auth = NULL;
}

/*
 * A local mskmock on its defaults: the plaintext listener (9092), or the IAM one (9098) when the
 * connection is TLS or SASL, both moved by MSKMOCK_PORT_BASE as the broker moves them (port.base),
 * so one exported variable points the broker and this client at the same ports.
 */
static char default_bootstrap[64];
const char *cli_default_bootstrap(const cli_opts *o) {
    const char *b = getenv("MSKMOCK_PORT_BASE");
    char *end = NULL;
    long base = b && *b ? strtol(b, &end, 10) : 9080;
    if (end && (*end || base < 1 || base > 65535 - 100)) base = 9080; /* the broker refuses it anyway */
    snprintf(default_bootstrap, sizeof default_bootstrap, "localhost:%ld", (o->tls || o->sasl ? 9098 : 9092) - 9080 + base);
    return default_bootstrap;
}

/* --security-protocol as Kafka's clients name them; -1 for another name. */
static int security_protocol(cli_opts *o, const char *v) {
    static const char *const names[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(v, names[i])) {
            o->tls = i & 1;
            o->sasl = i >> 1;
            return 0;
        }
    return -1;
}

int cli_common_flag(cli_opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    const char **target = NULL;
    const char *timeout = NULL, *proto = NULL, *mech = NULL;
    if (!strcmp(a, "--tls")) {
        o->tls = 1;
        return 1;
    }
    if (!strcmp(a, "-b") || !strcmp(a, "--bootstrap")) target = &o->bootstrap;
    else if (!strcmp(a, "--client-id")) target = &o->client_id;
    else if (!strcmp(a, "--request-timeout")) target = &timeout;
    else if (!strcmp(a, "--security-protocol")) target = &proto;
    else if (!strcmp(a, "--sasl-mechanism")) target = &mech;
    else if (!strcmp(a, "--ca-file")) target = &o->ca_file;
    else if (!strcmp(a, "--region")) target = &o->region;
    else return 0;
    if (*i + 1 >= argc || !*argv[*i + 1]) return -1;
    *target = argv[++*i];
    if (proto && security_protocol(o, proto) != 0) return -1;
    if (mech) {
        if (!strcasecmp(mech, "AWS_MSK_IAM")) o->mech = CLI_MECH_AWS_MSK_IAM;
        else if (!strcasecmp(mech, "OAUTHBEARER")) o->mech = CLI_MECH_OAUTHBEARER;
        else return -1;
    }
    if (timeout) {
        char *end;
        double s = strtod(timeout, &end);
        if (*end || !(s > 0) || s > 3600) return -1;
        o->timeout_ms = (int)(s * 1000);
    }
    return 1;
}

bool cli_valid_position(const char *s) {
    if (!strcmp(s, "beginning") || !strcmp(s, "end")) return true;
    if (*s == '@') s++;
    if (!*s) return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    return !*end && v >= 0;
}

int cli_usage_error(const char *cmd, const char *what, const char *arg) {
    fprintf(stderr, "mskmock %s: %s%s (mskmock %s --help shows the usage)\n", cmd, what, arg ? arg : "", cmd);
    return 2;
}

int cli_fail(const char *cmd, const char *what) {
    fprintf(stderr, "mskmock %s: %s\n", cmd, what);
    return 1;
}

int cli_main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN); /* `mskmock consume ... | head` ends on EPIPE, not a signal */
    const char *cmd = argv[1];
    if (!strcmp(cmd, "topic")) return cli_topic(argc - 1, argv + 1);
    if (!strcmp(cmd, "produce")) return cli_produce(argc - 1, argv + 1);
    if (!strcmp(cmd, "group")) return cli_group(argc - 1, argv + 1);
    return cli_consume(argc - 1, argv + 1);
}
