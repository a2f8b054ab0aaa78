// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscinfo's report: text for people, JSON (stable field names, see
 * tscinfo.1) for scripts. */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "json.h"
#include "tscinfo.h"

bool measured_gettime(const struct cost *c)
{
	return c && c->clock_gettime >= 0 && c->syscall > 0;
}

const char *gettime_kind(const struct tsc_info *i, const struct cost *c, const char **how)
{
	if (i->vdso_clock >= 0) {
		*how = "current_clocksource_vdso";
		return i->vdso_clock ? "vdso" : "syscall";
	}
	if (measured_gettime(c)) {
		*how = "measured";
		return gettime_vdso_by_cost(c->clock_gettime, c->syscall) ? "vdso" : "syscall";
	}
	*how = "clocksource";
	if (!*i->clocksource)
		return "unknown";
	return gettime_vdso_capable(i->clocksource) ? "vdso" : "syscall";
}

void json_u64_or_null(FILE *f, bool known, unsigned long long v)
{
	if (known)
		fprintf(f, "%llu", v);
	else
		fputs("null", f);
}

bool reason_repeats(const struct tsc_reason *rs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (rs[i].kind == rs[n].kind && !strcmp(rs[i].code, rs[n].code))
			return true;
	return false;
}

/* Is user RDTSC trapped?  no / emulate / sigsegv / unknown */
const char *trap_kind(const struct tsc_info *i, bool series_unknown)
{
	if (i->prctl_tsc == PR_TSC_SIGSEGV || i->tsc_user == 2)
		return "sigsegv";
	if (i->tsc_user == 1)
		return "emulate";
	if (i->tsc_user == 0 || (!i->kernel_series && !series_unknown))
		return "no";
	return "unknown";
}

static const char *kind_word(enum tsc_reason_kind k)
{
	return k == TSC_REASON_OK ? "ok" : k == TSC_REASON_BLOCK ? "no" : "note";
}

static void freq_text(FILE *f, const struct report *r)
{
	freq_print(f, &r->freq);
	if (r->calib_unfinished)
		fprintf(f, "                      --calibrate: no bound within 1 ppm after 2 s%s\n",
			r->info.err_ppb != UINT64_MAX && r->info.calibrated ? "" :
			" (no measurement yet)");
}

static void gettime_text(FILE *f, const struct report *r)
{
	const struct cost *c = &r->cost;
	const char *how, *kind = gettime_kind(&r->info, c, &how);

	fprintf(f, "clock_gettime:        %s",
		!strcmp(kind, "vdso") ? "fast: served by the vDSO" :
		!strcmp(kind, "syscall") ? "slow: a system call" : "unknown");
	if (measured_gettime(c))
		fprintf(f, ", %.1f ns a call (the system call: %.1f ns)", c->clock_gettime, c->syscall);
	if (!strcmp(how, "current_clocksource_vdso"))
		fprintf(f, " (current_clocksource_vdso)\n");
	else if (!strcmp(how, "measured"))
		fprintf(f, " (measured)\n");
	else if (!strcmp(kind, "unknown"))
		fprintf(f, " (no clocksource to infer it from)\n");
	else
		fprintf(f, " (inferred from the clocksource%s)\n",
			r->cfg->sysroot ? "" : "; not measured");
}

/* The reasons that keep the TSC from use, one a line, and the kernel's
 * own lines about dropping it. */
static void why_text(FILE *f, const struct report *r)
{
	const char *label = "why:                  ";
	int n;

	for (n = 0; n < r->nreasons; n++) {
		if (r->reasons[n].kind != TSC_REASON_BLOCK)
			continue;
		fprintf(f, "%s%s\n", label, r->reasons[n].text);
		label = "                      ";
	}
	label = "kernel log:           ";
	for (n = 0; n < r->ff.klog.n; n++) {
		fprintf(f, "%s%s\n", label, r->ff.klog.line[n]);
		label = "                      ";
	}
}

/* The worst cross-CPU step in ns: by libtsc's factors, else by the best
 * frequency known.  false when neither is known: libtsc's worst_ns is
 * then 0, which is no measurement. */
bool xcpu_worst_ns(const struct report *r, uint64_t *ns)
{
	uint64_t ticks = r->xcpu.worst_ticks;

	if (r->info.src && r->info.mult) {
		*ns = (uint64_t)(((unsigned __int128)ticks * r->info.mult) >> r->info.shift);
		return true;
	}
	if (r->freq.khz) {
		*ns = (uint64_t)((unsigned __int128)ticks * 1000000 / r->freq.khz);
		return true;
	}
	return false;
}

/* One CPU in the affinity set (taskset -c 0) has none to compare
 * with: its reads prove nothing across CPUs. */
const char *xcpu_unmeasured(const struct report *r)
{
	if (!r->have_xcpu)
		return r->xcpu_err == ENODEV ? "RDTSC may not be executed in this process" :
		       strerror(r->xcpu_err);
	if (r->xcpu.cpus < 2)
		return "one CPU in this process's affinity set, no other to compare it with";
	return NULL;
}

/* --cross-cpu: what was seen, or why nothing was. */
static void xcpu_text(FILE *f, const struct report *r)
{
	const struct tsc_xcpu_result *x = &r->xcpu;
	uint64_t ns;

	if (!r->cfg->cross_cpu)
		return;
	fprintf(f, "cross-CPU check:      ");
	if (xcpu_unmeasured(r)) {
		fprintf(f, "not measured: %s\n", xcpu_unmeasured(r));
		return;
	}
	fprintf(f, "%u CPUs, %llu reads, ", x->cpus, (unsigned long long)x->reads);
	if (!x->backward) {
		fprintf(f, "none went back\n");
		return;
	}
	fprintf(f, "%llu backward, worst %llu ticks", (unsigned long long)x->backward,
		(unsigned long long)x->worst_ticks);
	if (xcpu_worst_ns(r, &ns))
		fprintf(f, " (%llu ns)", (unsigned long long)ns);
	else
		fprintf(f, " (ns unknown: no frequency)");
	if (x->worst_from_cpu >= 0 && x->worst_to_cpu >= 0)
		fprintf(f, ", CPU %d -> %d\n", x->worst_from_cpu, x->worst_to_cpu);
	else
		fprintf(f, ", CPUs unknown\n");
}

static const char *usable_text(const struct report *r)
{
	if (r->info.usable)
		return "yes (TSC in use: reads cost no syscall)";
	if (r->dump_cannot_tell)
		return "no, as far as this dump tells: the machine it came from may have had "
		       "factors that a dump does not keep (perf, a calibration)";
	return "no (falling back to clock_gettime)";
}

/* --calibrate: the report ends with what the calibration measured, the
 * figure and its bound, or why there is none. */
static void calib_text(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const char *why = "libtsc made no calibration";
	uint64_t khz;
	int n;

	if (!r->cfg->calibrate)
		return;
	fprintf(f, "calibrated:           ");
	if (i->src != TSC_SRC_CALIBRATION || !i->mult || i->err_ppb == UINT64_MAX) {
		/* libtsc's note says only that no factors are needed then. */
		if (!strcmp(trap_kind(i, r->series_unknown), "sigsegv"))
			why = "RDTSC may not be executed in this process";
		else
			for (n = 0; n < r->nreasons; n++)
				if (!strcmp(r->reasons[n].code, "calibration"))
					why = r->reasons[n].text;
		fprintf(f, "not measured: %s\n", why);
		return;
	}
	/* The factors' own rate: what every read is converted with. */
	if (i->khz && i->khz_src == TSC_SRC_CALIBRATION)
		khz = i->khz;
	else
		khz = (uint64_t)((((unsigned __int128)1000000 << i->shift) + i->mult / 2) / i->mult);
	fprintf(f, "%llu kHz +/- %.1f kHz (error bound %.3f ppm, over %llu ms%s)\n",
		(unsigned long long)khz, khz * (i->err_ppb / 1e9), i->err_ppb / 1000.0,
		(unsigned long long)(i->calib_ns + 500000) / 1000000,
		r->calib_unfinished ? "; not within 1 ppm after 2 s" : "");
}

void print_text(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const char *trap = trap_kind(i, r->series_unknown);
	int n;

	fprintf(f, "RDTSC usable:         %s\n", usable_text(r));
	if (r->captured.have && r->captured.usable != i->usable)
		fprintf(f, "at capture, live:     %s%s%s (tsckit/live-state: a dump does not "
			"keep perf's factors or a calibration)\n",
			r->captured.usable ? "yes" : "no",
			*r->captured.conversion ? ", factors from " : "",
			freq_src_words(r->captured.conversion) ?
			freq_src_words(r->captured.conversion) : r->captured.conversion);
	why_text(f, r);
	gettime_text(f, r);
	fprintf(f, "TSC frequency:        ");
	freq_text(f, r);
	fprintf(f, "kernel clocksource:   %s%s\n", *i->clocksource ? i->clocksource : "unknown",
		cs_is_tsc(i->clocksource) ? " (the TSC)" : "");
	fprintf(f, "user RDTSC trapped:   %s\n",
		!strcmp(trap, "sigsegv") ? "yes: RDTSC raises SIGSEGV" :
		!strcmp(trap, "emulate") ? "yes: emulated by the kernel (slow, logged)" :
		!strcmp(trap, "no") ? (i->kernel_series ? "no (kernel.tsc_user=0)" :
				       "no (stock kernel: no trap policy)") :
		r->series_unknown ? "unknown (the dump has no kernel.tsc_user, nor the sysfs "
		"that tells a stock kernel)" : "unknown");
	if (i->vdso_tsc && i->vdso_raw == -ENODEV && cs_is_tsc(i->clocksource))
		fprintf(f, "                      the vDSO refuses the TSC while the clocksource is %s\n",
			i->clocksource);
	fprintf(f, "kernel tsckit series: %s\n", i->kernel_series ? "yes" :
		r->series_unknown ? "unknown (the dump has no /sys/devices/system)" : "no");
	if (r->vdso_unknown)
		fprintf(f, "vDSO TSC calls:       unknown (%s)\n",
			!strcmp(r->vdso_why, "vDSO: none found") ? "the dump has no vDSO image" :
			r->vdso_why);
	else
		fprintf(f, "vDSO TSC calls:       %s\n", i->vdso_tsc ? "yes" : "no");
	if (i->src)
		fprintf(f, "conversion:           ns = ticks * %llu >> %u (from %s)\n",
			(unsigned long long)i->mult, i->shift, src_words(i->src));
	else
		fprintf(f, "conversion:           none (no conversion factors)\n");
	fprintf(f, "ordered reads:        %s\n",
		!TSC_ARCH_HAS_TSC ? "none (no TSC on this architecture)" :
		i->rdtscp ? "RDTSCP" : "LFENCE;RDTSC");
	if (r->cost.rdtsc >= 0)
		fprintf(f, "read cost:            RDTSC %.1f ns, tsc_now_ns %.1f ns\n",
			r->cost.rdtsc, r->cost.now_ns);
	xcpu_text(f, r);
	/* The notes (facts that decide nothing) only when asked for. */
	fprintf(f, "reasons:%s\n", r->cfg->verbose ? "" : " (--verbose: with the notes)");
	for (n = 0; n < r->nreasons; n++)
		if (r->cfg->verbose || r->reasons[n].kind != TSC_REASON_NOTE)
			fprintf(f, "  %-4s  %s\n", kind_word(r->reasons[n].kind), r->reasons[n].text);
	if (r->cfg->verbose && !r->ff.klog.read)
		fprintf(f, "  note  kernel log: %s\n", r->ff.klog.err == -ENOENT && r->cfg->sysroot ?
			"not in the dump" : r->ff.klog.err == -EPERM ?
			"needs root or CAP_SYSLOG (kernel.dmesg_restrict)" : strerror(-r->ff.klog.err));
	calib_text(f, r);
}

static void jint_or_null(FILE *f, int v)
{
	if (v < 0)
		fprintf(f, "null");
	else
		fprintf(f, "%d", v);
}

static void jcost(FILE *f, const char *key, double v)
{
	fprintf(f, "%s", key);
	if (v >= 0)
		fprintf(f, "%.1f", v);
	else
		fprintf(f, "null");
}

void print_json(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const struct cost *c = &r->cost;
	const char *how, *kind = gettime_kind(i, c, &how);
	bool bound = i->src == TSC_SRC_CALIBRATION && i->err_ppb != UINT64_MAX;
	int n;

	fprintf(f, "{\n  \"version\": ");
	json_str(f, tsc_version());
	fprintf(f, ",\n  \"sysroot\": ");
	json_str(f, r->cfg->sysroot);
	fprintf(f, ",\n  \"tsc_usable\": %s", i->usable ? "true" : "false");
	fprintf(f, ",\n  \"dump_cannot_tell\": %s", r->dump_cannot_tell ? "true" : "false");
	fprintf(f, ",\n  \"captured_live\": ");
	if (r->captured.have) {
		fprintf(f, "{\"tsc_usable\": %s, \"conversion\": ",
			r->captured.usable ? "true" : "false");
		json_str(f, *r->captured.conversion ? r->captured.conversion : NULL);
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"clock_gettime\": ");
	json_str(f, strcmp(kind, "unknown") ? kind : NULL);
	fprintf(f, ",\n  \"clock_gettime_from\": ");
	json_str(f, strcmp(kind, "unknown") ? how : NULL);
	fprintf(f, ",\n  \"tsc_khz\": ");
	json_u64_or_null(f, r->freq.khz, r->freq.khz);
	fprintf(f, ",\n  \"tsc_khz_source\": ");
	json_str(f, r->freq.src);
	fprintf(f, ",\n  \"tsc_khz_detail\": ");
	json_str(f, r->freq.how);
	fprintf(f, ",\n  \"error_bound_ppb\": ");
	json_u64_or_null(f, bound, i->err_ppb);
	fprintf(f, ",\n  \"calibrated\": %s", i->calibrated ? "true" : "false");
	fprintf(f, ",\n  \"calibration_ns\": ");
	json_u64_or_null(f, i->calib_ns, i->calib_ns);
	fprintf(f, ",\n  \"conversion\": ");
	if (i->src)
		fprintf(f, "{\"mult\": %llu, \"shift\": %u, \"source\": \"%s\"}",
			(unsigned long long)i->mult, i->shift, tsc_src_name(i->src));
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"clocksource\": ");
	json_str(f, *i->clocksource ? i->clocksource : NULL);
	fprintf(f, ",\n  \"clocksource_is_tsc\": %s", !*i->clocksource ? "null" :
		cs_is_tsc(i->clocksource) ? "true" : "false");
	fprintf(f, ",\n  \"kernel_series\": %s", i->kernel_series ? "true" :
		r->series_unknown ? "null" : "false");
	fprintf(f, ",\n  \"tsc_stable\": ");
	jint_or_null(f, i->tsc_stable);
	fprintf(f, ",\n  \"vdso_tsc_calls\": %s", r->vdso_unknown ? "null" :
		i->vdso_tsc ? "true" : "false");
	fprintf(f, ",\n  \"vdso_tsc_raw\": ");
	if (i->vdso_raw == 1)
		fprintf(f, "null");
	else
		fprintf(f, "%d", i->vdso_raw);
	fprintf(f, ",\n  \"rdtsc_trapped\": ");
	json_str(f, strcmp(trap_kind(i, r->series_unknown), "unknown") ?
		 trap_kind(i, r->series_unknown) : NULL);
	fprintf(f, ",\n  \"tsc_user\": ");
	if (i->tsc_user_value >= 0)	/* the kernel's value, also one unknown here */
		fprintf(f, "%lld", i->tsc_user_value);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"prctl_tsc\": %s", i->prctl_tsc == PR_TSC_ENABLE ? "\"enable\"" :
		i->prctl_tsc == PR_TSC_SIGSEGV ? "\"sigsegv\"" : "null");
	fprintf(f, ",\n  \"ordered_read\": \"%s\"", i->rdtscp ? "rdtscp" : "lfence-rdtsc");
	fprintf(f, ",\n  \"cost_ns\": ");
	if (c->rdtsc >= 0 || c->clock_gettime >= 0) {
		jcost(f, "{\"rdtsc\": ", c->rdtsc);
		jcost(f, ", \"tsc_now_ns\": ", c->now_ns);
		jcost(f, ", \"clock_gettime\": ", c->clock_gettime);
		jcost(f, ", \"clock_gettime_syscall\": ", c->syscall);
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	if (r->have_xcpu && r->xcpu.cpus >= 2) {
		bool back = r->xcpu.backward;
		uint64_t ns = 0;

		fprintf(f, ",\n  \"cross_cpu\": {\"cpus\": %u, \"reads\": %llu, \"backward\": %llu, "
			"\"worst_ticks\": ", r->xcpu.cpus, (unsigned long long)r->xcpu.reads,
			(unsigned long long)r->xcpu.backward);
		json_u64_or_null(f, back, r->xcpu.worst_ticks);
		fprintf(f, ", \"worst_ns\": ");
		json_u64_or_null(f, back && xcpu_worst_ns(r, &ns), ns);
		fprintf(f, ", \"from_cpu\": ");
		json_u64_or_null(f, back && r->xcpu.worst_from_cpu >= 0,
				 (unsigned long long)r->xcpu.worst_from_cpu);
		fprintf(f, ", \"to_cpu\": ");
		json_u64_or_null(f, back && r->xcpu.worst_to_cpu >= 0,
				 (unsigned long long)r->xcpu.worst_to_cpu);
		fprintf(f, "}");
	} else if (r->cfg->cross_cpu) {
		/* not run, or one CPU: nothing to compare (cross_cpu_why says which) */
		fprintf(f, ",\n  \"cross_cpu\": null");
	}
	if (r->cfg->cross_cpu) {
		fprintf(f, ",\n  \"cross_cpu_why\": ");
		json_str(f, xcpu_unmeasured(r));
	}
	fprintf(f, ",\n  \"kernel_log\": ");
	if (r->ff.klog.read) {
		fprintf(f, "{\"tsc_khz_line\": ");
		json_str(f, r->ff.klog.khz ? r->ff.klog.khz_line : NULL);
		fprintf(f, ", \"tsc_unstable\": [");
		for (n = 0; n < r->ff.klog.n; n++) {
			fprintf(f, "%s", n ? ", " : "");
			json_str(f, r->ff.klog.line[n]);
		}
		fprintf(f, "]}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"reasons\": [");
	for (n = 0; n < r->nreasons; n++) {
		fprintf(f, "%s\n    {\"kind\": \"%s\", \"code\": ", n ? "," : "",
			kind_word(r->reasons[n].kind));
		json_str(f, r->reasons[n].code);
		fprintf(f, ", \"text\": ");
		json_str(f, r->reasons[n].text);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
}
