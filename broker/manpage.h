/*
 * manpage: `mskmock --man` prints the manual page (roff) from the same key table as --help
 * and conf/mskmock.properties, so the page packagers install cannot drift from the binary.
 */
#ifndef MANPAGE_H
#define MANPAGE_H

#include <stdio.h>

void manpage_write(FILE *f, const char *revision);

#endif
