// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Gathering facts: once at open (CPU, vDSO; perf just after) and on every event
 * (the sysfs and procfs files that can change).  A live handle reads a
 * fact only when the better ones do not already answer (tsc_open() in
 * few system calls): /proc/cpuinfo when CPUID and the kernel do not,
 * /proc/cmdline and available_clocksource to explain a kernel that does
 * not trust the TSC, perf and cpu0/tsc_freq_khz when the kernel's own
 * factors are missing.  A sysroot, or the all_facts option, reads all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "internal.h"

/* The files that can change, kept open by a live handle (watch.c), so
 * that a re-read is one pread(); the first NPOLLED are polled. */
const char *const tsc__watched[NWATCHED] = {
	P_STABLE, P_CS, P_CS_VDSO, P_TSC_USER, P_KHZ, P_MULT, P_SHIFT,
};

/* The fd of a watched file; -ENOENT if it was missing (a kernel's
 * files do not appear later); -1 if not open. */
static int watched_fd(const struct tsc *t, const char *path)
{
	int i;

	for (i = 0; i < NWATCHED; i++)
		if (!strcmp(tsc__watched[i], path))
			return t->wfd[i];
	return -1;
}

/* Read a fact if it is needed, or whenever the handle reads them all. */
static bool wanted(const struct tsc *t, bool needed)
{
	return needed || !t->live || t->opts.all_facts;
}

/* Through the watcher's open fd if it has one: one system call. */
static int read_small(struct tsc *t, const char *path, char *b, size_t cap, size_t *len)
{
	int fd = watched_fd(t, path);

	if (fd == -ENOENT)
		return fd;
	return fd >= 0 ? tsc__read_fd(fd, b, cap, len) : tsc__read(t->root, path, b, cap, len);
}

static void read_num(struct tsc *t, const char *path, struct num *n)
{
	char b[64];
	size_t len;

	n->v = 0;
	n->err = read_small(t, path, b, sizeof(b), &len);
	if (!n->err)
		n->err = tsc__parse_u64(b, len, &n->v);
}

static uint32_t reg(const struct cpuid_set *s, uint32_t leaf, int r)
{
	const struct cpuid_leaf *l = tsc__cpuid_get(s, leaf, 0);

	return l ? l->r[r] : 0;
}

enum { EAX, EBX, ECX, EDX };

static void cpu_facts(struct tsc *t)
{
	struct static_facts *sf = &t->sf;
	struct cpuid_set live;
	const struct cpuid_set *s = &sf->cpuid;
	uint64_t a, b, c;

	/* The CPU this runs on decides what may be executed, whatever a
	 * dump says. */
	if (!tsc__cpuid_live(&live))
		sf->cpu_rdtscp_live = reg(&live, 0x80000001, EDX) & (1u << 27);
	if (t->live) {
		sf->cpuid = live;
		sf->cpuid_known = live.n > 0;
	} else {
		char *buf;
		size_t len;

		sf->cpuid_err = tsc__read_alloc(t->root, P_CPUID, &buf, &len, 1 << 16);
		if (!sf->cpuid_err) {
			sf->cpuid_err = tsc__parse_cpuid(buf, len, &sf->cpuid);
			free(buf);
		}
		sf->cpuid_known = !sf->cpuid_err;
	}
	if (!sf->cpuid_known)
		return;
	sf->cpu_tsc = reg(s, 1, EDX) & (1u << 4);
	sf->hypervisor = reg(s, 1, ECX) & (1u << 31);
	sf->cpu_rdtscp = reg(s, 0x80000001, EDX) & (1u << 27);
	sf->cpu_invariant = reg(s, 0x80000007, EDX) & (1u << 8);
	a = reg(s, 0x15, EAX);
	b = reg(s, 0x15, EBX);
	c = reg(s, 0x15, ECX);
	if (a && b && c)	/* multiply first: exact to the Hz */
		sf->cpuid15_khz = c * b / a / 1000;
	sf->cpuid16_mhz = reg(s, 0x16, EAX) & 0xffff;
	if (sf->hypervisor)
		sf->cpuid_hv_khz = reg(s, 0x40000010, EAX);
}

static void vdso_facts(struct tsc *t)
{
	struct static_facts *sf = &t->sf;
	bool live = t->live || tsc__vdso_hooked();
	const void *base = NULL;
	char *buf = NULL;
	size_t len;

	if (live)
		sf->vdso_err = tsc__vdso_live(&base, &len);
	else if (!(sf->vdso_err = tsc__read_alloc(t->root, P_VDSO, &buf, &len, 4 << 20)))
		base = buf;
	if (!sf->vdso_err)
		sf->vdso_err = tsc__vdso_parse(base, len, &sf->syms);
	sf->vdso_found = !sf->vdso_err && sf->syms.tsc_raw && sf->syms.tsc_to_ns;
	if (sf->vdso_found && live) {
		sf->vdso_tsc_raw = (vdso_tsc_raw_fn)((const char *)base + sf->syms.tsc_raw);
		sf->vdso_tsc_to_ns = (vdso_tsc_to_ns_fn)((const char *)base + sf->syms.tsc_to_ns);
	}
	free(buf);
}

/* RDTSCP is executed only where this CPU has it (and a dump's CPU too,
 * so that a replay behaves as the dump's machine would); it is reported
 * from the facts the report describes: the dump's, for a sysroot. */
static void rdtscp_facts(struct tsc *t)
{
	struct static_facts *sf = &t->sf;
	bool dump_has = sf->cpuid_known ? sf->cpu_rdtscp :
			!sf->cpuinfo_err && (sf->cpuinfo & CI_RDTSCP);

	sf->rdtscp_exec = sf->cpu_rdtscp_live && !t->opts.no_rdtscp &&
			  (t->live ? !sf->cpuid_known || sf->cpu_rdtscp : dump_has);
	sf->rdtscp_shown = t->live ? sf->rdtscp_exec : dump_has && !t->opts.no_rdtscp;
	if (t->opts.no_rdtscp)
		sf->rdtscp_why = "option";
	else if (t->live)
		sf->rdtscp_why = "no RDTSCP on this CPU";
	else if (sf->cpuid_known || !sf->cpuinfo_err)
		sf->rdtscp_why = "no RDTSCP in the dump's CPU";
	else
		sf->rdtscp_why = "the dump has no CPUID facts and no cpuinfo flags";
}

void tsc__need_cpuinfo(struct tsc *t, bool needed)
{
	struct static_facts *sf = &t->sf;
	size_t len;
	char *buf;

	if (sf->cpuinfo_read || !wanted(t, needed))
		return;
	sf->cpuinfo_read = true;
	sf->cpuinfo_err = tsc__read_alloc(t->root, P_CPUINFO, &buf, &len, 16 << 20);
	if (!sf->cpuinfo_err) {
		sf->cpuinfo_err = tsc__parse_cpuinfo(buf, len, &sf->cpuinfo);
		free(buf);
	}
}

void tsc__need_cmdline(struct tsc *t, bool needed)
{
	struct static_facts *sf = &t->sf;
	size_t len;
	char *buf;
	int v;

	if (sf->cmdline_read || !wanted(t, needed))
		return;
	sf->cmdline_read = true;
	sf->cmdline_err = tsc__read_alloc(t->root, P_CMDLINE, &buf, &len, 1 << 16);
	if (!sf->cmdline_err) {
		v = tsc__parse_cmdline(buf, len, &sf->cmdline);
		sf->cmdline_err = v < 0 ? v : 0;
		free(buf);
	}
}

void tsc__need_perf(struct tsc *t, bool needed)
{
	struct static_facts *sf = &t->sf;

	if (sf->perf_read || !wanted(t, needed))
		return;
	/* perf_event_open() alone can take over 10 ms (it did on a stock
	 * kernel in a VM, only to say cap_user_time is 0): not in
	 * tsc_open(), but at the first event after it, unless every fact
	 * is asked for.  Until then nothing below perf is used (decide.c). */
	if (t->defer_perf && t->live && !t->opts.all_facts && !t->opts.force_fallback &&
	    !t->opts.force_calibrate) {
		sf->perf_wait = true;
		snprintf(sf->perf_why, sizeof(sf->perf_why),
			 "perf: asked after tsc_open() (by the watcher or tsc_process_events())");
		return;
	}
	sf->perf_wait = false;
	sf->perf_read = true;
	if (t->live && !t->opts.force_fallback && !t->opts.force_calibrate)
		sf->perf_ok = !tsc__perf_factors(&sf->perf, sf->perf_why,
						 sizeof(sf->perf_why));
	else
		snprintf(sf->perf_why, sizeof(sf->perf_why), "perf: not asked (%s)",
			 t->live ? "option" : "sysroot");
}

void tsc__static_facts(struct tsc *t)
{
	struct static_facts *sf = &t->sf;
	int v;

	sf->cpuinfo_err = sf->cmdline_err = TSC_NOT_READ;
	snprintf(sf->perf_why, sizeof(sf->perf_why),
		 "perf: not asked (the kernel's own factors answer)");
	cpu_facts(t);
	tsc__need_cpuinfo(t, !sf->cpuid_known);
	rdtscp_facts(t);
	tsc__need_cmdline(t, false);
	tsc__need_perf(t, false);
	sf->prctl_tsc = -1;
	if (t->live && !prctl(PR_GET_TSC, &v, 0, 0, 0))
		sf->prctl_tsc = v;
	if (!t->live) {
		char path[sizeof(t->root) + 32];
		struct stat st;

		snprintf(path, sizeof(path), "%s/sys/devices/system", t->root);
		sf->dump_no_sys = stat(path, &st) || !S_ISDIR(st.st_mode);
	}
	vdso_facts(t);
}

/* May RDTSC be executed by this task?  (Emulated reads work but trap.) */
bool tsc__rdtsc_allowed(const struct tsc *t, const struct dyn_facts *df)
{
	return t->sf.prctl_tsc != PR_TSC_SIGSEGV &&
	       !(df->tsc_user.err == 0 && df->tsc_user.v == 2);
}

/* A TSC clocksource: tsc, or tsc-early until the kernel's refined
 * calibration replaces it (the vDSO hands out either). */
bool tsc__is_tsc(const char *cs)
{
	return !strcmp(cs, "tsc") || !strcmp(cs, "tsc-early");
}

/* Does the kernel keep time with a TSC it says it trusts? */
bool tsc__kernel_keeps_tsc(const struct dyn_facts *df)
{
	return !df->stable.err && df->stable.v == 1 && !df->cs_err && tsc__is_tsc(df->cs);
}

/* The kernel's word through the vDSO, where it may run RDTSC (1: not
 * called). */
static void vdso_calls(struct tsc *t, struct dyn_facts *df)
{
	unsigned long long v;

	df->vdso_raw_rc = df->vdso_f_rc = 1;
	if (t->sf.vdso_tsc_raw && tsc__rdtsc_allowed(t, df)) {
		df->vdso_raw_rc = t->sf.vdso_tsc_raw(&v);
		df->vdso_f_rc = t->sf.vdso_tsc_to_ns(1ull << 32, CLOCK_MONOTONIC_RAW, &v);
		if (!df->vdso_f_rc)
			df->vdso_f = v;
	}
}

/* tsc_open()'s facts where the vDSO hands out the TSC: its calls, and
 * none of the files (decide.c, tsc__decide_early()). */
void tsc__early_facts(struct tsc *t, struct dyn_facts *df)
{
	memset(df, 0, sizeof(*df));
	df->stable.err = df->khz.err = df->mult.err = df->shift.err = TSC_NOT_READ;
	df->cs_vdso.err = df->tsc_user.err = df->cpu0_khz.err = TSC_NOT_READ;
	df->cs_err = df->avail_err = TSC_NOT_READ;
	vdso_calls(t, df);
}

void tsc__dyn_facts(struct tsc *t, struct dyn_facts *df)
{
	char b[64], avail[512];
	size_t len;

	memset(df, 0, sizeof(*df));
	read_num(t, P_STABLE, &df->stable);
	read_num(t, P_KHZ, &df->khz);
	read_num(t, P_MULT, &df->mult);
	read_num(t, P_SHIFT, &df->shift);
	read_num(t, P_CS_VDSO, &df->cs_vdso);
	read_num(t, P_TSC_USER, &df->tsc_user);
	df->cs_err = read_small(t, P_CS, b, sizeof(b), &len);
	if (!df->cs_err)
		df->cs_err = tsc__parse_name(b, len, df->cs, sizeof(df->cs));
	df->avail_err = TSC_NOT_READ;
	if (wanted(t, !tsc__kernel_keeps_tsc(df))) {
		df->avail_err = tsc__read(t->root, P_CS_AVAIL, avail, sizeof(avail), &len);
		if (!df->avail_err)
			df->avail_err = tsc__parse_has_name(avail, len, "tsc",
							    &df->avail_tsc);
	}
	vdso_calls(t, df);
	df->cpu0_khz.err = TSC_NOT_READ;
	if (wanted(t, df->vdso_f_rc && df->khz.err))
		read_num(t, P_CPU0_KHZ, &df->cpu0_khz);
}

/* ns = ticks * mult >> 32 from a kHz value.  A whole number of kHz is
 * off the true frequency by up to half a kHz, and mult by half a unit:
 * that is the bound (a frequency that is off by more, the wall anchors
 * find: decide.c). */
bool tsc__factors_from_khz(uint64_t khz, enum tsc_src src, struct factors *f)
{
	if (khz < 1000 || khz > 100000000)
		return false;
	f->src = src;
	f->khz = khz;
	f->shift = 32;
	f->mult = (uint64_t)((((unsigned __int128)1000000 << 32) + khz / 2) / khz);
	f->err_ppb = tsc__rounding_ppb(khz, f->mult);
	return true;
}

