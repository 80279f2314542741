/* Random identifiers: UUIDs for topic ids, member ids and MSK-style request ids. */
#ifndef IDS_H
#define IDS_H

#include <stdint.h>

void ids_uuid4(uint8_t out[16]);
/* Canonical 36-character form plus NUL. */
void ids_uuid4_str(char out[37]);

#endif
