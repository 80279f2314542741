/*
 * manpage: `mskmock --man` prints the manual page (roff) from the key table --help also prints,
 * so the page packagers install (CMakeLists.txt generates it at build time) lists every key.
 */
#ifndef MANPAGE_H
#define MANPAGE_H

#include <stdio.h>

void manpage_write(FILE *f, const char *revision);

#endif
