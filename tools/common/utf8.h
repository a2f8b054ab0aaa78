// SPDX-License-Identifier: MIT OR LGPL-2.1
/* UTF-8 checks the tools' writers share: JSON strings and Prometheus
 * label values must be valid UTF-8, whatever bytes a dump holds. */
#ifndef TOOLS_UTF8_H
#define TOOLS_UTF8_H

#include <stdbool.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence of 2 to 4 bytes at s (RFC
 * 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or 0.
 * ASCII is the caller's: this returns 0 for it too. */
int utf8_len(const unsigned char *s);

/* s in double quotes with '"' and '\' escaped and valid UTF-8 kept; each
 * other byte (a control byte, ctl true, or one that starts no well-formed
 * sequence) is written by odd(), the part each format spells its own way
 * (JSON, Prometheus labels, log values). */
void utf8_quoted(FILE *f, const char *s, void (*odd)(FILE *f, unsigned char c, bool ctl));

#endif
