// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Option-parsing bits the tools share: strict numbers, getopt's errors. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "opt.h"

int opt_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int opt_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || ((*s < '0' || *s > '9') && *s != '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int opt_invalid(char *err, size_t errlen, const char *opt, const char *arg,
		const char *want)
{
	snprintf(err, errlen, "invalid %s '%s': %s", opt, arg, want);
	return -1;
}

int opt_getopt_error(int c, char **argv, char *err, size_t errlen)
{
	if (c == ':')
		snprintf(err, errlen, "option '%s' requires an argument",
			 argv[optind - 1] ? argv[optind - 1] : "?");
	else if (optopt)
		snprintf(err, errlen, "invalid option -- '%c'", optopt);
	else
		snprintf(err, errlen, "unrecognized option '%s'",
			 argv[optind - 1] ? argv[optind - 1] : "?");
	return -1;
}

int opt_no_operands(int argc, char **argv, char *err, size_t errlen)
{
	if (optind >= argc)
		return 0;
	snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
	return -1;
}
