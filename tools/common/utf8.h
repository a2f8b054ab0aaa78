// SPDX-License-Identifier: MIT OR LGPL-2.1
/* UTF-8 checks the tools' writers share: JSON strings and Prometheus
 * label values must be valid UTF-8, whatever bytes a dump holds. */
#ifndef TOOLS_UTF8_H
#define TOOLS_UTF8_H

/* Length of the well-formed UTF-8 sequence of 2 to 4 bytes at s (RFC
 * 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or 0.
 * ASCII is the caller's: this returns 0 for it too. */
int utf8_len(const unsigned char *s);

#endif
