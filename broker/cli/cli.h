/*
 * The command-line Kafka client in the mskmock binary (README.md): `mskmock topic|produce|consume`.
 * main.c hands over argv before any broker flag is parsed.
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>

/* Whether argv[1] names a client command. */
bool cli_is_command(const char *arg);
/* Runs the command argv[1]; the process's exit status (0 ok, 1 failed, 2 bad usage). */
int cli_main(int argc, char **argv);

#endif
