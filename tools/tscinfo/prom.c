// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * --format=prometheus: the facts as metrics in the Prometheus text
 * format 0.0.4, the one node_exporter's textfile collector parses.  Not
 * OpenMetrics: that names a counter's family without "_total", has an
 * "info" type and ends with "# EOF", none of which 0.0.4 has.
 *
 * Names follow node_exporter's: a "tsc_" prefix, base units (hertz, not
 * kHz), "_total" on the counter, "_info" gauges of value 1 whose labels
 * carry the text, an enum as a state set (one series per state, the
 * current one 1).  A fact that could not be read is left out, family and
 * all: never a made-up 0.  Label values are names that stay put (a
 * clocksource, a source, a reason's code), never a measurement: a value
 * that changes from run to run would make new series at every run.
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

/* kernel.tsc_user as a state set, named as the kernel names its values
 * (tsc_user=allow|emulate|sigsegv): an enum's number as a gauge's value
 * cannot be summed or compared, a state can be matched. */
static void user_policy(FILE *f, long long v)
{
	static const char *const states[] = { "allow", "emulate", "sigsegv" };
	size_t k;

	family(f, "tsc_user_policy", "gauge", "kernel.tsc_user, the policy for user RDTSC: "
	       "allow (runs natively), emulate (trapped and emulated), sigsegv (trapped, "
	       "SIGSEGV); 1 for the current one, all 0 when the kernel gives a value "
	       "tscinfo does not know.");
	for (k = 0; k < sizeof(states) / sizeof(states[0]); k++)
		fprintf(f, "tsc_user_policy{policy=\"%s\"} %d\n", states[k], v == (long long)k);
}

static const char *kind_word(enum tsc_reason_kind k)
{
	return k == TSC_REASON_OK ? "ok" : k == TSC_REASON_BLOCK ? "no" : "note";
}

static void reasons(FILE *f, const struct report *r)
{
	int n, decide = 0;

	/* Only what decides: notes are facts for people (--json has them);
	 * as series they were most of the file. */
	for (n = 0; n < r->nreasons; n++)
		decide += r->reasons[n].kind != TSC_REASON_NOTE;
	if (!decide)
		return;
	/* The code, not the text: texts carry kHz, factors and error bounds. */
	family(f, "tsc_reason_info", "gauge",
	       "libtsc's reasons for its decision, once per kind and code; kind: ok "
	       "(a condition holds), no (it keeps the TSC from use); code: the "
	       "condition, a stable name (tsc_reasons(3), tscinfo --json has the texts).");
	for (n = 0; n < r->nreasons; n++) {
		/* Two series with the same labels are an error to the
		 * collector (it fails the file, or serves one and logs it):
		 * reasons of one kind and code (two kernel parameters) once. */
		if (r->reasons[n].kind == TSC_REASON_NOTE || reason_repeats(r->reasons, n))
			continue;
		fprintf(f, "tsc_reason_info{kind=\"%s\",code=", kind_word(r->reasons[n].kind));
		label_value(f, r->reasons[n].code);
		fprintf(f, "} 1\n");
	}
}

/* --cross-cpu: what this run's check saw, as gauges (a new check each
 * run, not a counter); left out when it measured nothing (one CPU,
 * RDTSC not allowed: tscinfo says why on stderr). */
static void xcpu(FILE *f, const struct report *r)
{
	const struct tsc_xcpu_result *x = &r->xcpu;
	uint64_t ns;

	if (!r->cfg->cross_cpu || xcpu_unmeasured(r))
		return;
	gauge(f, "tsc_cross_cpu_cpus", "CPUs the cross-CPU check (tscinfo --cross-cpu) "
	      "read the TSC on.", x->cpus);
	gauge(f, "tsc_cross_cpu_reads", "TSC reads that check made, each checked against "
	      "the last read of every other CPU.", x->reads);
	gauge(f, "tsc_cross_cpu_backward_reads", "Reads of that check that were below "
	      "the last read of another CPU: 0 when the CPUs' TSCs agree.", x->backward);
	if (x->backward && xcpu_worst_ns(r, &ns)) {
		family(f, "tsc_cross_cpu_worst_step_seconds", "gauge",
		       "The largest step back that check saw, converted by the TSC's "
		       "frequency (only when there was one).");
		fprintf(f, "tsc_cross_cpu_worst_step_seconds %.9f\n", ns / 1e9);
	}
}

void print_prometheus(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const char *how, *kind = gettime_kind(i, &r->cost, &how);

	info(f, "tsc_build_info", "The tscinfo that wrote these metrics: its libtsc's version.",
	     "version", tsc_version());
	gauge(f, "tsc_usable", "Whether libtsc reads the TSC directly (1) or falls back "
	      "to clock_gettime (0).", i->usable);
	if (!r->series_unknown)
		gauge(f, "tsc_kernel_series", "Whether the kernel has the tsckit series' files "
		      "(without them there is no tsc_stable, tsc_user_policy, "
		      "tsc_user_traps_total).", i->kernel_series);
	if (i->tsc_stable >= 0)
		gauge(f, "tsc_stable", "Whether the kernel trusts the TSC (tsc0/tsc_stable).",
		      i->tsc_stable);
	/* No clocksource here: node_exporter's own
	 * node_time_clocksource_current_info{clocksource} has it. */
	/* How it is known apart, in an _info of its own: the value's series
	 * keeps its identity when the kernel starts or stops saying it
	 * (current_clocksource_vdso), and no other _info is about it. */
	if (strcmp(kind, "unknown")) {
		gauge(f, "tsc_clock_gettime_vdso", "Whether clock_gettime() is served "
		      "by the vDSO (1) or is a system call (0).", !strcmp(kind, "vdso"));
		info(f, "tsc_clock_gettime_vdso_info", "How tsc_clock_gettime_vdso is known: "
		     "current_clocksource_vdso (the kernel says), measured (against the "
		     "system call) or clocksource (inferred from its name).",
		     "from", how);
	}
	if (r->freq.khz) {
		gauge(f, "tsc_frequency_hertz", "The TSC's frequency.",
		      r->freq.khz * 1000);
		info(f, "tsc_frequency_source_info", "Where the TSC frequency comes from: "
		     "libtsc's source (tsc_src_name(3)), or kernel-log, cpuid-15h, "
		     "cpuid-hypervisor, cpuid-16h, live-state (tscinfo(1)).", "source", r->freq.src);
	}
	if (i->tsc_user_value >= 0)
		user_policy(f, i->tsc_user_value);
	if (r->have_traps) {
		family(f, "tsc_user_traps_total", "counter",
		       "User RDTSC and RDTSCP that kernel.tsc_user trapped since boot, "
		       "emulated or answered with SIGSEGV (tsc0/user_traps).");
		fprintf(f, "tsc_user_traps_total %llu\n", (unsigned long long)r->user_traps);
	}
	reasons(f, r);
	xcpu(f, r);
}
