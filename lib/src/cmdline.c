// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Word lists the kernel writes: available_clocksource and /proc/cmdline.
 * Every byte is untrusted. */
#include <errno.h>
#include <string.h>

#include "internal.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* available_clocksource: names separated by blanks, then a newline.
 * -ENODATA: empty, -EINVAL: no newline, -EBADMSG: a byte no name has. */
int tsc__parse_has_name(const char *buf, size_t len, const char *name, bool *has)
{
	size_t i, n = strlen(name), w = 0;

	if (len == 0)
		return -ENODATA;
	if (buf[len - 1] != '\n')
		return -EINVAL;
	*has = false;
	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (is_space(c) || c == '\n') {
			if (i - w == n && n && !memcmp(buf + w, name, n))
				*has = true;
			w = i + 1;
		} else if (!tsc__name_char(c)) {
			return -EBADMSG;
		}
	}
	return 0;
}

/* One parameter [w, w + n) without its quotes, as the kernel's
 * next_arg() takes them off: "name=value" and name="value".  0 if it
 * does not fit out[cap]. */
static size_t unquote(const char *w, size_t n, char *out, size_t cap)
{
	const char *eq;
	size_t k = 0, i;

	if (n && w[0] == '"') {
		w++, n--;
		if (n && w[n - 1] == '"')
			n--;
	} else if ((eq = memchr(w, '=', n)) && eq + 1 < w + n && eq[1] == '"') {
		if (w[n - 1] == '"' && w + n - 1 > eq + 1)
			n--;
		for (i = 0; i < n && k < cap; i++)
			if (w + i != eq + 1)
				out[k++] = w[i];
		if (k >= cap)
			return 0;
		out[k] = 0;
		return k;
	}
	if (n >= cap)
		return 0;
	memcpy(out, w, n);
	out[n] = 0;
	return n;
}

/* The kernel's own parameters that say how it treats the TSC: tsc=...
 * and clocksource=..., in the order given, before any "--" (the rest is
 * init's).  As the kernel does, blanks inside double quotes do not end a
 * parameter, and the quotes around it or its value are not part of it.
 * Returns how many were found (at most CMDLINE_MAX are kept), or
 * -ENODATA / -EBADMSG. */
int tsc__parse_cmdline(const char *buf, size_t len, struct cmdline_facts *c)
{
	const char *p = buf, *end = buf + len;
	char word[sizeof(c->param[0])];

	memset(c, 0, sizeof(*c));
	if (len == 0)
		return -ENODATA;
	if (memchr(buf, 0, len))
		return -EBADMSG;
	while (p < end) {
		const char *w;
		bool quoted;
		size_t n;

		while (p < end && (is_space(*p) || *p == '\n'))
			p++;
		w = p;
		for (quoted = false; p < end && (quoted || (!is_space(*p) && *p != '\n')); p++)
			if (*p == '"')
				quoted = !quoted;
		if (p - w == 2 && !memcmp(w, "--", 2))
			break;
		n = unquote(w, p - w, word, sizeof(word));
		if (!((n > 4 && !memcmp(word, "tsc=", 4)) ||
		      (n > 12 && !memcmp(word, "clocksource=", 12))) ||
		    memchr(word, '"', n) || memchr(word, ' ', n) || memchr(word, '\n', n))
			continue;
		c->tsc_unstable |= !strcmp(word, "tsc=unstable");
		if (c->n < CMDLINE_MAX)
			memcpy(c->param[c->n], word, n + 1);
		c->n++;
	}
	return c->n < CMDLINE_MAX ? c->n : CMDLINE_MAX;
}

/* What a parameter means for the TSC, in the kernel's terms. */
const char *tsc__cmdline_meaning(const char *param)
{
	static const struct {
		const char *param, *meaning;
	} known[] = {
		{ "tsc=unstable", "the kernel marks the TSC unstable at boot" },
		{ "tsc=reliable", "the clocksource watchdog does not check the TSC" },
		{ "tsc=nowatchdog", "the clocksource watchdog does not check the TSC" },
		{ "tsc=noirqtime", "no IRQ time accounting with the TSC" },
		{ "tsc=recalibrate", "the TSC is calibrated again against the HPET or PM timer" },
		{ "tsc=watchdog", "the clocksource watchdog checks the TSC even if it is reliable" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(param, known[i].param))
			return known[i].meaning;
	if (!strncmp(param, "clocksource=", 12))
		return "the clocksource the kernel prefers, chosen at boot";
	return "not a value this library knows";
}
