// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * --format=prometheus: the facts as metrics in the Prometheus text
 * format 0.0.4, the one node_exporter's textfile collector parses.  Not
 * OpenMetrics: that names a counter's family without "_total", has an
 * "info" type and ends with "# EOF", none of which 0.0.4 has.
 *
 * Names follow node_exporter's: a "tsc_" prefix, base units (hertz, not
 * kHz), "_total" on the counter, "_info" gauges of value 1 whose labels
 * carry the text.  A fact that could not be read is left out, family and
 * all: never a made-up 0.
 */
#include <string.h>

#include "tscinfo.h"
#include "utf8.h"

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A newline as \n and other control bytes as they are, as the format
 * says; a byte that is not UTF-8 (the format requires it) becomes U+FFFD,
 * as in the JSON output. */
static void label_odd(FILE *f, unsigned char c, bool ctl)
{
	if (c == '\n')
		fputs("\\n", f);
	else if (ctl)
		fputc(c, f);
	else
		fputs("\xef\xbf\xbd", f);
}

/* A label value: backslash and double quote escaped, and label_odd(). */
static void label_value(FILE *f, const char *s)
{
	utf8_quoted(f, s, label_odd);
}

static void gauge(FILE *f, const char *name, const char *help, unsigned long long v)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %llu\n", name, v);
}

/* name{label="value"} 1 */
static void info(FILE *f, const char *name, const char *help, const char *label,
		 const char *value)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s{%s=", name, label);
	label_value(f, value);
	fprintf(f, "} 1\n");
}

static const char *kind_word(enum tsc_reason_kind k)
{
	return k == TSC_REASON_OK ? "ok" : k == TSC_REASON_BLOCK ? "no" : "note";
}

/* Two series with the same labels make the collector fail the file:
 * a reason said twice (two equal kernel parameters) is listed once. */
static bool said_before(const struct report *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (r->reasons[i].kind == r->reasons[n].kind &&
		    !strcmp(r->reasons[i].text, r->reasons[n].text))
			return true;
	return false;
}

static void reasons(FILE *f, const struct report *r)
{
	int n;

	if (!r->nreasons)
		return;
	family(f, "tsc_reason_info", "gauge",
	       "libtsc's reasons for its decision; kind: ok (a condition holds), "
	       "no (it keeps the TSC from use), note.");
	for (n = 0; n < r->nreasons; n++) {
		if (said_before(r, n))
			continue;
		fprintf(f, "tsc_reason_info{kind=\"%s\",reason=", kind_word(r->reasons[n].kind));
		label_value(f, r->reasons[n].text);
		fprintf(f, "} 1\n");
	}
}

void print_prometheus(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const char *how, *kind = gettime_kind(i, &how);

	gauge(f, "tsc_usable", "Whether libtsc reads the TSC directly (1) or falls back "
	      "to clock_gettime (0).", i->usable);
	gauge(f, "tsc_kernel_series", "Whether the kernel has the tsckit series' files "
	      "(without them there is no tsc_stable, tsc_user_policy, tsc_user_traps_total).",
	      i->kernel_series);
	if (i->tsc_stable >= 0)
		gauge(f, "tsc_stable", "Whether the kernel trusts the TSC (tsc0/tsc_stable).",
		      i->tsc_stable);
	if (*i->clocksource)
		info(f, "tsc_clocksource_info", "The kernel's current clocksource.",
		     "clocksource", i->clocksource);
	if (strcmp(kind, "unknown")) {
		family(f, "tsc_clock_gettime_vdso", "gauge", "Whether clock_gettime() is served "
		       "by the vDSO (1) or is a system call (0); from: how that is known.");
		fprintf(f, "tsc_clock_gettime_vdso{from=\"%s\"} %d\n", how, !strcmp(kind, "vdso"));
	}
	if (i->khz) {
		gauge(f, "tsc_frequency_hertz", "The TSC's frequency.",
		      i->khz * 1000);
		info(f, "tsc_frequency_source_info", "Where the TSC frequency comes from.",
		     "source", tsc_src_name(i->khz_src));
	}
	if (i->tsc_user >= 0)
		gauge(f, "tsc_user_policy", "kernel.tsc_user: 0 user RDTSC allowed, 1 trapped "
		      "and emulated, 2 trapped with SIGSEGV.", i->tsc_user);
	if (r->have_traps) {
		family(f, "tsc_user_traps_total", "counter",
		       "User RDTSC and RDTSCP that kernel.tsc_user trapped since boot, "
		       "emulated or answered with SIGSEGV (tsc0/user_traps).");
		fprintf(f, "tsc_user_traps_total %llu\n", (unsigned long long)r->user_traps);
	}
	reasons(f, r);
}
