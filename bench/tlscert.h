/*
 * tlscert: a throw-away CA and server certificate (EC P-256, like mskmock's
 * own local CA) for mskmock runs that keep no data directory (:memory:),
 * where the broker's generated CA never reaches a file the clients could
 * trust. Writes <dir>/ca.pem, <dir>/server.pem (SANs 127.0.0.1, localhost)
 * and <dir>/server.key; returns 0, or -1 with a reason.
 */
#ifndef TLSCERT_H
#define TLSCERT_H

#include <stddef.h>

int tlscert_make(const char *dir, char *err, size_t n);

#endif
