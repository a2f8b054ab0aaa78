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

/* --cross-cpu, after every other key: cross_cpu=ok (no read went back),
 * backward (and the worst step), or not_measured and why. */
static void xcpu_keys(FILE *f, const struct report *r)
{
	const struct tsc_xcpu_result *x = &r->xcpu;
	uint64_t ns;

	if (!r->cfg->cross_cpu)
		return;
	if (xcpu_unmeasured(r)) {
		kv(f, "cross_cpu", "not_measured");
		kv(f, "cross_cpu_why", xcpu_unmeasured(r));
		return;
	}
	kv(f, "cross_cpu", x->backward ? "backward" : "ok");
	kv_num(f, "cross_cpu_cpus", x->cpus);
	kv_num(f, "cross_cpu_reads", (long long)x->reads);
	kv_num(f, "cross_cpu_backward", (long long)x->backward);
	if (!x->backward)
		return;
	kv_num(f, "cross_cpu_worst_ticks", (long long)x->worst_ticks);
	if (xcpu_worst_ns(r, &ns))
		kv_num(f, "cross_cpu_worst_ns", (long long)ns);
	if (x->worst_from_cpu >= 0 && x->worst_to_cpu >= 0) {
		kv_num(f, "cross_cpu_from", x->worst_from_cpu);
		kv_num(f, "cross_cpu_to", x->worst_to_cpu);
	}
}

static void log_line(FILE *f, const char *event, const struct tsc_info *i, const struct freq *fr,
		     const struct cost *c, const struct tsc_reason *rs, int nreasons,
		     bool stepped, const struct report *r)
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
	if (r)
		xcpu_keys(f, r);
	fputc('\n', f);
}

void print_log(FILE *f, const char *event, const struct tsc_info *i, const struct freq *fr,
	       const struct cost *c, const struct tsc_reason *rs, int nreasons, bool stepped)
{
	log_line(f, event, i, fr, c, rs, nreasons, stepped, NULL);
}

void print_log_report(FILE *f, const struct report *r)
{
	log_line(f, "state", &r->info, &r->freq, &r->cost, r->reasons, r->nreasons, false, r);
}
