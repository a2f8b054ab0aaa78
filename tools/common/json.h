// SPDX-License-Identifier: MIT OR LGPL-2.1
/* JSON output the tools share. */
#ifndef TOOLS_JSON_H
#define TOOLS_JSON_H

#include <stdio.h>

/* s as a JSON string ("\"" "\\" escaped, controls as \u00XX); NULL: null. */
void json_str(FILE *f, const char *s);

#endif
