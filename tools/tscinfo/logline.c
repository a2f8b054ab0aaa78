// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * --format=log: the state as one line, "tscinfo: EVENT key=value ...",
 * for logs and the journal (tscinfo-watch.service): journald keeps each
 * line as one MESSAGE, and grep or a logfmt parser takes it apart.  The
 * prefix and the keys are stable (tscinfo.1); a fact that could not be
 * read is left out, as in the metrics.
 */
#include <string.h>

#include "tscinfo.h"
#include "utf8.h"

/* Control and non-UTF-8 bytes as \xHH, so that a line stays one line. */
static void log_odd(FILE *f, unsigned char c, bool ctl)
{
	(void)ctl;
	fprintf(f, "\\x%02x", c);
}

/* A value as it is when it is a plain word, else in double quotes with
 * '"' and '\' escaped and other control or non-UTF-8 bytes as \xHH. */
static void value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool plain = *p != 0;

	for (; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || strchr("_.,:/+-", *p);
	if (plain)
		fputs(s, f);
	else
		utf8_quoted(f, s, log_odd);
}

static void kv(FILE *f, const char *key, const char *v)
{
	fprintf(f, " %s=", key);
	value(f, v);
}

static void kv_num(FILE *f, const char *key, long long v)
{
	fprintf(f, " %s=%lld", key, v);
}

/* The reasons that keep the TSC from use, joined with sep: their texts,
 * or their codes, each once (stable words to match on, where the texts
 * carry numbers). */
static void blocking(FILE *f, const char *key, const struct tsc_reason *rs, int n,
		     bool codes)
{
	char buf[64 * TSC_REASON_LEN] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < n && len < sizeof(buf); i++) {
		if (rs[i].kind != TSC_REASON_BLOCK || (codes && reason_repeats(rs, i)))
			continue;
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s",
				len ? (codes ? "," : "; ") : "", codes ? rs[i].code : rs[i].text);
	}
	if (*buf)
		kv(f, key, buf);
}

void print_log(FILE *f, const char *event, const struct tsc_info *i, const struct freq *fr,
	       const struct cost *c, const struct tsc_reason *rs, int nreasons, bool stepped)
{
	const char *how;

	fprintf(f, "tscinfo: %s", event);
	kv_num(f, "usable", i->usable);
	if (i->tsc_stable >= 0)
		kv_num(f, "tsc_stable", i->tsc_stable);
	if (*i->clocksource)
		kv(f, "clocksource", i->clocksource);
	if (strcmp(gettime_kind(i, c, &how), "unknown"))
		kv(f, "clock_gettime", gettime_kind(i, c, &how));
	if (i->tsc_user_value >= 0)
		kv_num(f, "tsc_user", i->tsc_user_value);
	if (fr->khz) {
		kv_num(f, "khz", (long long)fr->khz);
		kv(f, "khz_source", fr->src);
	}
	if (i->src) {
		kv(f, "conversion", tsc_src_name(i->src));
		kv_num(f, "mult", (long long)i->mult);
		kv_num(f, "shift", i->shift);
	}
	if (stepped)
		kv_num(f, "step_ns", i->last_step_ns);
	/* why_codes came in 0.5.0: last, so that the keys before keep their order. */
	blocking(f, "why", rs, nreasons, false);
	blocking(f, "why_codes", rs, nreasons, true);
	fputc('\n', f);
}
