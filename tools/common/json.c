// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The JSON string writer of tscinfo and tscbench. */
#include "json.h"
#include "utf8.h"

/* A control byte as \u00XX; one that starts no UTF-8 sequence as U+FFFD. */
static void json_odd(FILE *f, unsigned char c, bool ctl)
{
	if (ctl)
		fprintf(f, "\\u%04x", c);
	else
		fputs("\\ufffd", f);
}

/* A JSON string, valid UTF-8 whatever the bytes: a byte that does not
 * start a well-formed sequence becomes U+FFFD. */
void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	utf8_quoted(f, s, json_odd);
}
