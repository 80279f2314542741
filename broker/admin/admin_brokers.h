/* admin_brokers: synthetic brokers down and up, and leader moves (docs/admin-api.md "Brokers"). */
#ifndef ADMIN_BROKERS_H
#define ADMIN_BROKERS_H

#include "srv.h"

/* Bring every broker taken down back up (POST /v1/reset); returns how many came up. */
int admin_brokers_all_up(srv *s);

#endif
