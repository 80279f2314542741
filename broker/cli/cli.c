/* Dispatch and common flags of the command-line client (cli.h, README.md). */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli_int.h"

bool cli_is_command(const char *arg) {
    return arg && (!strcmp(arg, "topic") || !strcmp(arg, "produce") || !strcmp(arg, "consume"));
}

void cli_opts_default(cli_opts *o) {
    const char *env = getenv("MSKMOCK_CLI_BOOTSTRAP");
    o->bootstrap = env && *env ? env : "localhost:9092";
    o->client_id = "mskmock-cli";
    o->timeout_ms = 30000;
}

int cli_common_flag(cli_opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    const char **target = NULL;
    const char *timeout = NULL;
    if (!strcmp(a, "-b") || !strcmp(a, "--bootstrap")) target = &o->bootstrap;
    else if (!strcmp(a, "--client-id")) target = &o->client_id;
    else if (!strcmp(a, "--request-timeout")) target = &timeout;
    else return 0;
    if (*i + 1 >= argc) return -1;
    *target = argv[++*i];
    if (timeout) {
        char *end;
        double s = strtod(timeout, &end);
        if (*end || !(s > 0) || s > 3600) return -1;
        o->timeout_ms = (int)(s * 1000);
    }
    return 1;
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
    return cli_consume(argc - 1, argv + 1);
}
