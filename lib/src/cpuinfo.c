// SPDX-License-Identifier: MIT OR LGPL-2.1
/* /proc/cpuinfo: the TSC flags that every CPU has. */
#include <errno.h>
#include <string.h>

#include "internal.h"

static const struct {
	const char *name;
	unsigned int bit;
} flag_names[] = {
	{ "tsc", CI_TSC }, { "constant_tsc", CI_CONSTANT },
	{ "nonstop_tsc", CI_NONSTOP }, { "tsc_known_freq", CI_KNOWN_FREQ },
	{ "tsc_reliable", CI_RELIABLE }, { "rdtscp", CI_RDTSCP },
	{ "hypervisor", CI_HYPERVISOR },
};

static unsigned int word_bit(const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flag_names); i++)
		if (strlen(flag_names[i].name) == n &&
		    !memcmp(flag_names[i].name, w, n))
			return flag_names[i].bit;
	return 0;
}

/* The value of a "flags<blanks>: ..." line as a bit set, or -1 if the
 * line [p, e) is not a flags line. */
static long line_flags(const char *p, const char *e)
{
	unsigned int bits = 0;

	if (e - p < 5 || memcmp(p, "flags", 5))
		return -1;
	p += 5;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	if (p == e || *p != ':')
		return -1;
	p++;
	while (p < e) {
		const char *w;

		while (p < e && *p == ' ')
			p++;
		w = p;
		while (p < e && *p != ' ')
			p++;
		if (p > w)
			bits |= word_bit(w, p - w);
	}
	return bits;
}

int tsc__parse_cpuinfo(const char *buf, size_t len, unsigned int *flags)
{
	const char *p = buf, *end = buf + len;
	unsigned int all = ~0u;
	int lines = 0;

	while (p < end) {
		const char *e = memchr(p, '\n', end - p);
		long f;

		if (!e)
			e = end;
		f = line_flags(p, e);
		if (f >= 0) {
			all &= f;
			lines++;
		}
		p = e + 1;
	}
	if (!lines)
		return -ENODATA;
	*flags = all;
	return 0;
}
