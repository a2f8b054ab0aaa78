// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Option-parsing bits the tools share: strict numbers with range checks
 * and getopt_long's errors, as messages for "<prog>: <message>". */
#ifndef TOOLS_OPT_H
#define TOOLS_OPT_H

#include <stddef.h>

/* A decimal integer in [min, max], digits only: 0, or -1. */
int opt_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out);
/* A decimal number (fractions allowed) in [min, max]: 0, or -1. */
int opt_double(const char *s, double min, double max, double *out);
/* "invalid <opt> '<arg>': <want>" in err; returns -1. */
int opt_invalid(char *err, size_t errlen, const char *opt, const char *arg,
		const char *want);
/* getopt_long (opterr 0, ":" first) returned ':' or '?': the message; -1. */
int opt_getopt_error(int c, char **argv, char *err, size_t errlen);
/* No operands may follow the options: 0, or -1 and a message. */
int opt_no_operands(int argc, char **argv, char *err, size_t errlen);

#endif
