// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscinfo's report: text for people, JSON (stable field names, see
 * tscinfo.1) for scripts. */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "json.h"
#include "tscinfo.h"

/* The TSC's clocksources: tsc-early until the TSC is calibrated again
 * at boot, then tsc. */
static bool cs_is_tsc(const char *cs)
{
	return !strcmp(cs, "tsc") || !strcmp(cs, "tsc-early");
}

/* Clocksources whose reads the x86 vDSO serves in user space. */
static bool vdso_capable(const char *cs)
{
	return cs_is_tsc(cs) || !strcmp(cs, "kvm-clock") ||
	       !strcmp(cs, "hyperv_clocksource_tsc_page");
}

const char *gettime_kind(const struct tsc_info *i, const char **how)
{
	if (i->vdso_clock >= 0) {
		*how = "current_clocksource_vdso";
		return i->vdso_clock ? "vdso" : "syscall";
	}
	*how = "clocksource";
	if (!*i->clocksource)
		return "unknown";
	return vdso_capable(i->clocksource) ? "vdso" : "syscall";
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
const char *trap_kind(const struct tsc_info *i)
{
	if (i->prctl_tsc == PR_TSC_SIGSEGV || i->tsc_user == 2)
		return "sigsegv";
	if (i->tsc_user == 1)
		return "emulate";
	if (i->tsc_user == 0 || !i->kernel_series)
		return "no";
	return "unknown";
}

static const char *kind_word(enum tsc_reason_kind k)
{
	return k == TSC_REASON_OK ? "ok" : k == TSC_REASON_BLOCK ? "no" : "note";
}

static void khz_text(FILE *f, const struct tsc_info *i)
{
	if (!i->khz) {
		fprintf(f, "unknown\n");
		return;
	}
	fprintf(f, "%llu kHz (from %s", (unsigned long long)i->khz,
		tsc_src_name(i->khz_src));
	if (i->khz_src == TSC_SRC_CALIBRATION)
		fprintf(f, ", %llu us, error bound %.3f ppm",
			(unsigned long long)i->calib_ns / 1000, i->err_ppb / 1000.0);
	fprintf(f, ")\n");
}

void print_text(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const char *how, *kind = gettime_kind(i, &how);
	const char *trap = trap_kind(i);
	int n;

	fprintf(f, "RDTSC usable:         %s\n", i->usable ?
		"yes (TSC in use: reads cost no syscall)" : "no (falling back to clock_gettime)");
	fprintf(f, "clock_gettime:        %s (%s)\n",
		!strcmp(kind, "vdso") ? "fast: served by the vDSO" :
		!strcmp(kind, "syscall") ? "slow: a system call" : "unknown",
		!strcmp(how, "clocksource") ? "inferred from the clocksource" :
		"current_clocksource_vdso");
	fprintf(f, "TSC frequency:        ");
	khz_text(f, i);
	fprintf(f, "kernel clocksource:   %s%s\n", *i->clocksource ? i->clocksource : "unknown",
		cs_is_tsc(i->clocksource) ? " (the TSC)" : "");
	fprintf(f, "user RDTSC trapped:   %s\n",
		!strcmp(trap, "sigsegv") ? "yes: RDTSC raises SIGSEGV" :
		!strcmp(trap, "emulate") ? "yes: emulated by the kernel (slow, logged)" :
		!strcmp(trap, "no") ? (i->kernel_series ? "no (kernel.tsc_user=0)" :
				       "no (stock kernel: no trap policy)") : "unknown");
	if (i->vdso_tsc && i->vdso_raw == -ENODEV && cs_is_tsc(i->clocksource))
		fprintf(f, "                      the vDSO refuses the TSC while the clocksource is %s\n",
			i->clocksource);
	fprintf(f, "kernel tsckit series: %s\n", i->kernel_series ? "yes" : "no");
	fprintf(f, "vDSO TSC calls:       %s\n", i->vdso_tsc ? "yes" : "no");
	if (i->src)
		fprintf(f, "conversion:           ns = ticks * %llu >> %u (%s)\n",
			(unsigned long long)i->mult, i->shift, tsc_src_name(i->src));
	else
		fprintf(f, "conversion:           none\n");
	fprintf(f, "ordered reads:        %s\n", i->rdtscp ? "RDTSCP" : "LFENCE;RDTSC");
	if (r->cost.rdtsc >= 0)
		fprintf(f, "read cost:            RDTSC %.1f ns, tsc_now_ns %.1f ns, clock_gettime %.1f ns\n",
			r->cost.rdtsc, r->cost.now_ns, r->cost.clock_gettime);
	if (r->have_xcpu)
		fprintf(f, "cross-CPU check:      %u CPUs, %llu reads, %llu backward, worst %llu ticks (%llu ns) CPU %d -> %d\n",
			r->xcpu.cpus, (unsigned long long)r->xcpu.reads,
			(unsigned long long)r->xcpu.backward,
			(unsigned long long)r->xcpu.worst_ticks,
			(unsigned long long)r->xcpu.worst_ns,
			r->xcpu.worst_from_cpu, r->xcpu.worst_to_cpu);
	fprintf(f, "reasons:\n");
	for (n = 0; n < r->nreasons; n++)
		fprintf(f, "  %-4s  %s\n", kind_word(r->reasons[n].kind), r->reasons[n].text);
}

static void jint_or_null(FILE *f, int v)
{
	if (v < 0)
		fprintf(f, "null");
	else
		fprintf(f, "%d", v);
}

void print_json(FILE *f, const struct report *r)
{
	const struct tsc_info *i = &r->info;
	const char *how, *kind = gettime_kind(i, &how);
	int n;

	fprintf(f, "{\n  \"version\": ");
	json_str(f, tsc_version());
	fprintf(f, ",\n  \"sysroot\": ");
	json_str(f, r->cfg->sysroot);
	fprintf(f, ",\n  \"tsc_usable\": %s", i->usable ? "true" : "false");
	fprintf(f, ",\n  \"clock_gettime\": \"%s\",\n  \"clock_gettime_from\": \"%s\"", kind, how);
	fprintf(f, ",\n  \"tsc_khz\": ");
	if (i->khz)
		fprintf(f, "%llu", (unsigned long long)i->khz);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"tsc_khz_source\": \"%s\"", tsc_src_name(i->khz_src));
	fprintf(f, ",\n  \"error_bound_ppb\": %llu", (unsigned long long)i->err_ppb);
	fprintf(f, ",\n  \"calibrated\": %s", i->calibrated ? "true" : "false");
	fprintf(f, ",\n  \"calibration_ns\": %llu", (unsigned long long)i->calib_ns);
	fprintf(f, ",\n  \"conversion\": {\"mult\": %llu, \"shift\": %u, \"source\": \"%s\"}",
		(unsigned long long)i->mult, i->shift, tsc_src_name(i->src));
	fprintf(f, ",\n  \"clocksource\": ");
	if (*i->clocksource)
		json_str(f, i->clocksource);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"clocksource_is_tsc\": %s", cs_is_tsc(i->clocksource) ? "true" : "false");
	fprintf(f, ",\n  \"kernel_series\": %s", i->kernel_series ? "true" : "false");
	fprintf(f, ",\n  \"tsc_stable\": ");
	jint_or_null(f, i->tsc_stable);
	fprintf(f, ",\n  \"vdso_tsc_calls\": %s", i->vdso_tsc ? "true" : "false");
	fprintf(f, ",\n  \"vdso_tsc_raw\": ");
	if (i->vdso_raw == 1)
		fprintf(f, "null");
	else
		fprintf(f, "%d", i->vdso_raw);
	fprintf(f, ",\n  \"rdtsc_trapped\": \"%s\"", trap_kind(i));
	fprintf(f, ",\n  \"tsc_user\": ");
	if (i->tsc_user_value >= 0)	/* the kernel's value, also one unknown here */
		fprintf(f, "%lld", i->tsc_user_value);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"prctl_tsc\": %s", i->prctl_tsc == PR_TSC_ENABLE ? "\"enable\"" :
		i->prctl_tsc == PR_TSC_SIGSEGV ? "\"sigsegv\"" : "null");
	fprintf(f, ",\n  \"ordered_read\": \"%s\"", i->rdtscp ? "rdtscp" : "lfence-rdtsc");
	fprintf(f, ",\n  \"cost_ns\": ");
	if (r->cost.rdtsc >= 0)
		fprintf(f, "{\"rdtsc\": %.1f, \"tsc_now_ns\": %.1f, \"clock_gettime\": %.1f}",
			r->cost.rdtsc, r->cost.now_ns, r->cost.clock_gettime);
	else
		fprintf(f, "null");
	if (r->have_xcpu)
		fprintf(f, ",\n  \"cross_cpu\": {\"cpus\": %u, \"reads\": %llu, \"backward\": %llu, "
			"\"worst_ticks\": %llu, \"worst_ns\": %llu, \"from_cpu\": %d, \"to_cpu\": %d}",
			r->xcpu.cpus, (unsigned long long)r->xcpu.reads,
			(unsigned long long)r->xcpu.backward,
			(unsigned long long)r->xcpu.worst_ticks,
			(unsigned long long)r->xcpu.worst_ns,
			r->xcpu.worst_from_cpu, r->xcpu.worst_to_cpu);
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
