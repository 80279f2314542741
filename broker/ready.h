/*
 * ready: the ready file (ready.file) that says the broker serves, and `mskmock --probe`,
 * the health check that reads it. Containers use the probe as their HEALTHCHECK and test
 * harnesses wait for the file, so neither needs curl, nc or a fixed sleep.
 */
#ifndef READY_H
#define READY_H

#include <stddef.h>

#include "srv.h"

/*
 * Writes cfg->ready_file (if set) atomically: JSON with the pid, the version, the
 * advertised hosts and every bound port. Called once every listener is bound and storage is
 * open. Returns -1 with err filled if the file cannot be written.
 */
int ready_write(const srv *s, char *err, size_t errlen);
/* Prints "mskmock ready <the same JSON on one line>" on stdout (the log is on stderr). */
void ready_announce(const srv *s);
/* Removes it at exit, or a stale one at start-up, so a file present means "serving now". */
void ready_remove(const config *cfg);

/*
 * The health check: sends ApiVersions to Kafka listeners (over TLS on the TLS ones; a TCP
 * connect for the credentials endpoint), each within timeout_ms: an answer proves the event
 * loop serves, not only that the kernel accepts. With ready.file set, the file must exist and
 * the first broker's listeners are asked (the file says all were bound); without it, every
 * listener the configuration names. Prints one line saying what was checked or what failed
 * and returns 0 when all answered, 1 otherwise.
 */
int ready_probe(const config *cfg, int timeout_ms);

/*
 * mskmock --wait-ready FILE [--pid PID] [--log LOG] [--timeout S]: waits until the broker that
 * writes FILE serves (its pid runs and its listeners answer ApiVersions), and fails at once,
 * with LOG's last lines, when PID (the broker just started) exits first: a broker that died at
 * start or lost its ports to another program is not waited for until the timeout, and a file
 * left by a killed broker, or written by another pid than PID, never counts as ready.
 * Returns 0 ready, 1 not.
 */
int ready_wait(const char *file, long pid, const char *log_file, int timeout_ms);

#endif
