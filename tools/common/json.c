// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The JSON string writer of tscinfo and tscbench. */
#include "json.h"
#include "utf8.h"

/* A JSON string, valid UTF-8 whatever the bytes: a byte that does not
 * start a well-formed sequence becomes U+FFFD. */
void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			fputc(*p++, f);
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fputs("\\ufffd", f);
			p++;
		}
	}
	fputc('"', f);
}
