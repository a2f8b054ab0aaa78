// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The decision: every condition for using the TSC gives a reason, kept
 * in order.  The kernel's word comes first: the TSC is used only while
 * the kernel itself keeps time with it (and, with the tsckit series,
 * says it trusts it), so that the kernel giving up on it is something
 * the watcher sees.  Unknown or unreadable facts decide "no".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "internal.h"

void tsc__reason(struct decision *d, enum tsc_reason_kind k, const char *code,
		 const char *fmt, ...)
{
	va_list ap;

	if (d->n >= MAX_REASONS)
		return;
	d->r[d->n].kind = k;
	snprintf(d->r[d->n].code, TSC_REASON_CODE_LEN, "%s", code);
	va_start(ap, fmt);
	vsnprintf(d->r[d->n].text, TSC_REASON_LEN, fmt, ap);
	va_end(ap);
	d->n++;
}

/* The code first: a literal from the list in tsc_reasons(3), never built
 * from a value (tsc.h says why). */
#define BLOCK(code, ...) do {					\
	tsc__reason(d, TSC_REASON_BLOCK, code, __VA_ARGS__);		\
	ok = false;							\
} while (0)
#define OK(code, ...)   tsc__reason(d, TSC_REASON_OK, code, __VA_ARGS__)
#define NOTE(code, ...) tsc__reason(d, TSC_REASON_NOTE, code, __VA_ARGS__)

/* ns per tick = mult / 2^shift must describe 1 MHz .. 100 GHz. */
static uint64_t mult_khz(uint64_t mult, uint32_t shift)
{
	if (!mult || shift >= 64)
		return 0;
	return (uint64_t)(((unsigned __int128)1000000 << shift) / mult);
}

static bool plausible(uint64_t khz)
{
	return khz >= 1000 && khz <= 100000000;
}

static const char *err_text(int err)
{
	return tsc__strerr(err);
}

/* Is a file's error worth a reason?  Not when it is missing (a stock
 * kernel) or was not read (a better fact answered). */
static bool noteworthy(int err)
{
	return err && err != -ENOENT && err != TSC_NOT_READ;
}

/* tsc_open() only begins a calibration: the watcher, woken every 10 ms
 * meanwhile, measures a burst at each wake and takes the TSC once the
 * bound is 1 ppm.  Without a watcher, tsc_process_events() does the
 * same, as often as the caller calls it (tsc_fd() wakes every 10 ms
 * meanwhile): reads stay on the fallback clock until then, whoever
 * measures.  Either way the factors are then refined down to
 * REFINE_PPB from the wall anchors, once a second (the watcher's, or
 * tsc_process_events()'s): each reads CLOCK_MONOTONIC_RAW between two
 * TSC reads while the TSC is in use, the same bracket a burst takes,
 * so no burst is taken any more (the watcher takes the anchor that is
 * due before it decides, while refining: tsc_process_events()). */
#define REFINE_PPB 10

static void calibrate(struct tsc *t)
{
	struct calib *c = &t->sf.calib;

	if (!c->done) {
		tsc__calib_begin(c);
	} else if (!c->ok) {
		tsc__calib_update(c, NULL);
	} else if (c->f.err_ppb > REFINE_PPB && t->anchor_b_new) {
		tsc__calib_update(c, &t->anchor_b);
		t->anchor_b_new = false;
	}
}

bool tsc__calibrating(const struct tsc *t)
{
	return t->sf.calib.done && !t->sf.calib.ok;
}

static bool forced_calibrating(const struct tsc *t)
{
	return t->opts.force_calibrate && tsc__calibrating(t);
}

/* The kernel's factors from __vdso_tsc_to_ns(), if plausible. */
static bool vdso_factors(const struct dyn_facts *df, struct factors *f)
{
	uint64_t k = mult_khz(df->vdso_f, 32);

	if (df->vdso_f_rc || !plausible(k))
		return false;
	/* ns per 2^32 ticks, truncated: within 1 ns of it */
	*f = (struct factors){ TSC_SRC_VDSO, df->vdso_f, 32, k,
			       (1000000000 + df->vdso_f - 1) / df->vdso_f };
	return true;
}

/* The factors picked against the TSC's rate as the wall anchors measure
 * it (rate.c): a correction where they are off by more than their bound
 * plus the measurement's.  A calibration refines itself (calibrate()). */
static void check_rate(struct tsc *t, struct decision *d)
{
	struct rate_check *r = &t->rate;
	struct factors f = d->f;
	int64_t e;
	int rc;

	if (d->f.src == TSC_SRC_CALIBRATION)
		return;
	rc = tsc__rate_check(r, &f);
	t->info.rate_error_ppb = rc ? r->error_ppb : 0;
	t->info.rate_bound_ppb = rc ? r->m.f.err_ppb : 0;
	t->info.rate_corrections = r->corrections;
	if (!rc)
		return;
	e = r->error_ppb;
	if (rc == 1) {
		NOTE("rate_check", "rate check: the factors run %s%lld.%03lld ppm off "
		     "CLOCK_MONOTONIC_RAW over %llu s, within their bound (%llu ppb) "
		     "and the measurement's (%llu ppb)", e < 0 ? "-" : "+",
		     llabs(e) / 1000, llabs(e) % 1000,
		     (unsigned long long)(r->m.took_ns / 1000000000),
		     (unsigned long long)d->f.err_ppb, (unsigned long long)r->m.f.err_ppb);
		return;
	}
	NOTE("rate_check", "rate check: the factors from %s ran %s%lld.%03lld ppm off "
	     "CLOCK_MONOTONIC_RAW, beyond their bound (%llu ppb): corrected to %llu kHz, "
	     "within %llu ppb (measured over %llu s)", tsc_src_name(d->f.src),
	     e < 0 ? "-" : "+", llabs(e) / 1000, llabs(e) % 1000,
	     (unsigned long long)d->f.err_ppb, (unsigned long long)f.khz,
	     (unsigned long long)f.err_ppb, (unsigned long long)(r->m.took_ns / 1000000000));
	d->f = f;
	d->rate_fixed = true;
}

/* The factors, best source first.  Returns false if there are none. */
static bool pick(struct tsc *t, struct decision *d, bool may_calibrate)
{
	const struct static_facts *sf = &t->sf;
	const struct dyn_facts *df = &t->df;
	struct factors c[8], f;
	int n = 0;
	uint64_t k;

	if (!df->vdso_f_rc) {
		if (vdso_factors(df, &f)) {
			c[n++] = f;
			NOTE("vdso_tsc_to_ns",
			     "vDSO __vdso_tsc_to_ns: %llu ns per 2^32 ticks (%llu kHz)",
			     (unsigned long long)df->vdso_f, (unsigned long long)f.khz);
		} else {
			NOTE("vdso_tsc_to_ns",
			     "vDSO __vdso_tsc_to_ns factor %llu is implausible: ignored",
			     (unsigned long long)df->vdso_f);
		}
	} else if (df->vdso_f_rc != 1) {
		NOTE("vdso_tsc_to_ns", "vDSO __vdso_tsc_to_ns returned %d", df->vdso_f_rc);
	}
	if (!df->mult.err && !df->shift.err) {
		k = mult_khz(df->mult.v, df->shift.v);
		if (!plausible(k))
			NOTE("tsc_mult", "tsc0/tsc_mult %llu, tsc_shift %llu: implausible, ignored",
			     (unsigned long long)df->mult.v, (unsigned long long)df->shift.v);
		else if (!df->khz.err && (k > df->khz.v + df->khz.v / 1000 ||
					  k < df->khz.v - df->khz.v / 1000))
			NOTE("tsc_mult",
			     "tsc0/tsc_mult, tsc_shift give %llu kHz, tsc_khz says %llu: ignored",
			     (unsigned long long)k, (unsigned long long)df->khz.v);
		else
			/* From tsc_khz, as the frequencies below: their bound,
			 * though they are RAW's own while the kernel keeps
			 * time with the TSC. */
			c[n++] = (struct factors){ TSC_SRC_SYSFS_MULT, df->mult.v,
						   (uint32_t)df->shift.v, k,
						   tsc__rounding_ppb(k, df->mult.v) };
	} else if (df->mult.err != -ENOENT || df->shift.err != -ENOENT) {
		NOTE("tsc_mult", "tsc0/tsc_mult: %s, tsc_shift: %s",
		     df->mult.err ? err_text(df->mult.err) : "ok",
		     df->shift.err ? err_text(df->shift.err) : "ok");
	}
	tsc__need_perf(t, !n);
	if (sf->perf_ok)
		c[n++] = sf->perf;
	NOTE("perf", "%s", sf->perf_why);
	if (!df->khz.err) {
		if (tsc__factors_from_khz(df->khz.v, TSC_SRC_SYSFS_KHZ, &f))
			c[n++] = f;
		else
			NOTE("tsc_khz", "tsc0/tsc_khz %llu: implausible, ignored",
			     (unsigned long long)df->khz.v);
	} else if (df->khz.err != -ENOENT) {
		NOTE("tsc_khz", "tsc0/tsc_khz: %s", err_text(df->khz.err));
	}
	if (!df->cpu0_khz.err) {
		if (tsc__factors_from_khz(df->cpu0_khz.v, TSC_SRC_CPU0_KHZ, &f))
			c[n++] = f;
		else
			NOTE("cpu0_tsc_freq_khz", "cpu0/tsc_freq_khz %llu: implausible, ignored",
			     (unsigned long long)df->cpu0_khz.v);
	} else if (noteworthy(df->cpu0_khz.err)) {
		NOTE("cpu0_tsc_freq_khz", "cpu0/tsc_freq_khz: %s", err_text(df->cpu0_khz.err));
	}
	/* CPUID frequencies are what the kernel used only when it says it
	 * knew the frequency (tsc_known_freq); otherwise they are hints. */
	tsc__need_cpuinfo(t, (sf->cpuid15_khz || sf->cpuid_hv_khz) && !n);
	if (sf->cpuid15_khz) {
		NOTE("cpuid_15h", "CPUID 0x15: %llu kHz", (unsigned long long)sf->cpuid15_khz);
		if ((sf->cpuinfo & CI_KNOWN_FREQ) &&
		    tsc__factors_from_khz(sf->cpuid15_khz, TSC_SRC_CPUID_15H, &f))
			c[n++] = f;
	}
	if (sf->cpuid_hv_khz) {
		NOTE("cpuid_hypervisor", "CPUID 0x40000010 (hypervisor): %llu kHz",
		     (unsigned long long)sf->cpuid_hv_khz);
		if ((sf->cpuinfo & CI_KNOWN_FREQ) &&
		    tsc__factors_from_khz(sf->cpuid_hv_khz, TSC_SRC_CPUID_HV, &f))
			c[n++] = f;
	}
	if (sf->cpuid16_mhz)
		NOTE("cpuid_16h", "CPUID 0x16: base frequency %llu MHz (not used for conversion)",
		     (unsigned long long)sf->cpuid16_mhz);
	if ((!n || t->opts.force_calibrate) && (t->live || t->opts.force_calibrate)) {
		if (!may_calibrate) {
			NOTE("calibration",
			     "no calibration: the TSC is not used, so no factors are needed");
		} else {
			calibrate(t);
			NOTE("calibration", "%s", t->sf.calib.why);
			if (t->sf.calib.ok) {
				if (t->opts.force_calibrate)
					n = 0;
				c[n++] = t->sf.calib.f;
			}
		}
	}
	if (!n && !t->live && !t->opts.force_calibrate)
		NOTE("calibration",
		     "sysroot: no calibration unless forced (this machine is not the dump's)");
	/* perf outranks what follows it: nothing is used until it answered. */
	if (!n || sf->perf_wait) {
		memset(&d->f, 0, sizeof(d->f));
		return false;
	}
	d->f = c[0];
	check_rate(t, d);
	OK("conversion_factors", "conversion factors from %s: ns = ticks * %llu >> %u (%llu kHz)",
	   tsc_src_name(d->f.src), (unsigned long long)d->f.mult, d->f.shift,
	   (unsigned long long)d->f.khz);
	return true;
}

/* __vdso_tsc_raw() succeeds only while the kernel keeps time with a TSC
 * it trusts and does not trap user RDTSC (vdso-x86-tsc in the kernel's
 * ABI documents): the kernel's word, where a file that would say it
 * cannot be read (no /sys in a container). */
static bool vouches(const struct tsc *t)
{
	return t->sf.vdso_found && t->df.vdso_raw_rc == 0;
}

static bool may_run_rdtsc(struct tsc *t, struct decision *d)
{
	const struct static_facts *sf = &t->sf;
	const struct dyn_facts *df = &t->df;
	bool ok = true;

	if (!TSC_ARCH_HAS_TSC) {
		BLOCK("arch_tsc", "this architecture has no TSC: reads are clock_gettime(%s)",
		      t->opts.fallback == TSC_FALLBACK_MONOTONIC ? "CLOCK_MONOTONIC" :
		      "CLOCK_MONOTONIC_RAW");
		return ok;
	}
	if (sf->cpuid_known) {
		if (sf->cpu_tsc)
			OK("cpuid_tsc", "CPUID: the CPU has a TSC");
		else
			BLOCK("cpuid_tsc", "CPUID: the CPU has no TSC");
	} else if (!sf->cpuinfo_err) {
		if (sf->cpuinfo & CI_TSC)
			OK("cpuid_tsc", "cpuinfo: tsc flag");
		else
			BLOCK("cpuid_tsc", "cpuinfo: no tsc flag");
	} else {
		BLOCK("cpuid_tsc",
		      "no CPUID facts and no cpuinfo flags: cannot tell whether there is a TSC");
	}
	if (sf->cpuid_err && sf->cpuid_err != -ENOENT)
		NOTE("tsckit_cpuid", "tsckit/cpuid: %s", sf->cpuid_err == -EINVAL ?
		     "not lines of six hexadecimal numbers" : err_text(sf->cpuid_err));
	if (sf->prctl_tsc == PR_TSC_SIGSEGV)
		BLOCK("prctl_tsc", "prctl(PR_GET_TSC): RDTSC raises SIGSEGV in this task");
	else if (sf->prctl_tsc == PR_TSC_ENABLE)
		OK("prctl_tsc", "prctl(PR_GET_TSC): RDTSC enabled in this task");
	/* A stock kernel has no trap policy: live, or a dump whose sysfs
	 * shows no tsc0.  Another dump does not tell (tscinfo: unknown). */
	if (df->tsc_user.err == -ENOENT &&
	    (t->live || (df->stable.err == -ENOENT && !sf->dump_no_sys)))
		NOTE("tsc_user_policy",
		     "no kernel.tsc_user (stock kernel): user RDTSC is not trapped");
	else if (df->tsc_user.err == -ENOENT)
		NOTE("tsc_user_policy", "no kernel.tsc_user in the dump%s: the dump does not "
		     "tell whether user RDTSC is trapped", sf->dump_no_sys ?
		     ", nor the sysfs that tells a stock kernel" : ", whose kernel has the series");
	else if (df->tsc_user.err && vouches(t))
		NOTE("tsc_user_policy", "kernel.tsc_user: %s (the vDSO hands out the TSC: "
		     "user RDTSC is not trapped)", err_text(df->tsc_user.err));
	else if (df->tsc_user.err)
		BLOCK("tsc_user_policy", "kernel.tsc_user: %s", err_text(df->tsc_user.err));
	else if (df->tsc_user.v == 0)
		OK("tsc_user_policy", "kernel.tsc_user=0: user RDTSC allowed");
	else if (df->tsc_user.v == 1)
		BLOCK("tsc_user_policy",
		      "kernel.tsc_user=1: every user RDTSC traps and is emulated (slow, logged)");
	else if (df->tsc_user.v == 2)
		BLOCK("tsc_user_policy", "kernel.tsc_user=2: user RDTSC raises SIGSEGV");
	else
		BLOCK("tsc_user_policy",
		      "kernel.tsc_user=%llu: unknown policy", (unsigned long long)df->tsc_user.v);
	return ok;
}

/* A stock kernel says it gave up on the TSC by leaving it out of
 * available_clocksource (it loses CLOCK_SOURCE_VALID_FOR_HRES when marked
 * unstable); the command line says whether that was asked for at boot. */
static bool kernel_offers_tsc(struct tsc *t, struct decision *d)
{
	const struct static_facts *sf = &t->sf;
	const struct dyn_facts *df = &t->df;
	bool ok = true;
	int i;

	tsc__need_cmdline(t, !tsc__kernel_keeps_tsc(df));
	if (noteworthy(df->avail_err))
		NOTE("available_clocksource", "available_clocksource: %s", err_text(df->avail_err));
	else if (df->avail_err)
		;
	else if (df->avail_tsc)
		OK("available_clocksource",
		   "tsc is in available_clocksource: the kernel offers the TSC as a clocksource");
	else if (sf->cmdline.tsc_unstable)
		BLOCK("available_clocksource",
		      "the kernel marked the TSC unstable (tsc=unstable on its command line): tsc is not in available_clocksource");
	else
		BLOCK("available_clocksource",
		      "tsc is not in available_clocksource: the kernel marked the TSC unstable, or never registered it");

	for (i = 0; i < sf->cmdline.n && i < CMDLINE_MAX; i++)
		NOTE("cmdline", "kernel command line: %s: %s", sf->cmdline.param[i],
		     tsc__cmdline_meaning(sf->cmdline.param[i]));
	if (sf->cmdline.n > CMDLINE_MAX)
		NOTE("cmdline", "kernel command line: %d more tsc= and clocksource= parameters",
		     sf->cmdline.n - CMDLINE_MAX);
	if (noteworthy(sf->cmdline_err))
		NOTE("cmdline", "/proc/cmdline: %s", sf->cmdline_err == -EBADMSG ?
		     "holds a NUL byte" : err_text(sf->cmdline_err));
	return ok;
}

static bool kernel_trusts(struct tsc *t, struct decision *d)
{
	const struct static_facts *sf = &t->sf;
	const struct dyn_facts *df = &t->df;
	bool ok = true, series = df->stable.err != -ENOENT;
	int inv;

	if (!series && sf->dump_no_sys)
		NOTE("tsc_stable", "no /sys/devices/system/tsc/tsc0: the dump has no "
		     "/sys/devices/system, so it does not tell whether the kernel is stock");
	else if (!series)
		NOTE("tsc_stable", "no /sys/devices/system/tsc/tsc0 (stock kernel)");
	else if (df->stable.err && vouches(t))
		NOTE("tsc_stable", "tsc0/tsc_stable: %s (the vDSO vouches)",
		     err_text(df->stable.err));
	else if (df->stable.err)
		BLOCK("tsc_stable", "tsc0/tsc_stable: %s", err_text(df->stable.err));
	else if (df->stable.v == 1)
		OK("tsc_stable", "tsc0/tsc_stable=1: the kernel trusts the TSC");
	else if (df->stable.v == 0)
		BLOCK("tsc_stable", "tsc0/tsc_stable=0: the kernel marked the TSC unstable");
	else
		BLOCK("tsc_stable",
		      "tsc0/tsc_stable=%llu: neither 0 nor 1", (unsigned long long)df->stable.v);

	ok &= kernel_offers_tsc(t, d);
	if (df->cs_err && vouches(t))
		NOTE("clocksource", "current_clocksource: %s (the vDSO vouches)",
		     err_text(df->cs_err));
	else if (df->cs_err)
		BLOCK("clocksource", "current_clocksource: %s", err_text(df->cs_err));
	else if (tsc__is_tsc(df->cs))
		OK("clocksource", "current_clocksource is %s: the kernel keeps time with the TSC",
		   df->cs);
	else
		BLOCK("clocksource",
		      "current_clocksource is %s, not tsc: the kernel does not keep time with the TSC",
		      df->cs);

	if (df->cs_vdso.err == -ENOENT)
		NOTE("clocksource_vdso",
		     "no current_clocksource_vdso: cannot tell whether clock_gettime() is a syscall");
	else if (df->cs_vdso.err)
		NOTE("clocksource_vdso", "current_clocksource_vdso: %s", err_text(df->cs_vdso.err));
	else if (df->cs_vdso.v == 1)
		NOTE("clocksource_vdso",
		     "current_clocksource_vdso=1: clock_gettime() is served by the vDSO");
	else
		NOTE("clocksource_vdso",
		     "current_clocksource_vdso=%llu: clock_gettime() is a system call",
		     (unsigned long long)df->cs_vdso.v);

	if (sf->vdso_found) {
		if (df->vdso_raw_rc == 0)
			OK("vdso_tsc_raw",
			   "vDSO __vdso_tsc_raw succeeds: the kernel keeps time with a TSC it trusts");
		else if (df->vdso_raw_rc == -ENODEV)
			BLOCK("vdso_tsc_raw",
			      "vDSO __vdso_tsc_raw returned -ENODEV: the kernel is not keeping time with a TSC it trusts");
		else if (df->vdso_raw_rc == 1)
			NOTE("vdso_tsc_raw", "vDSO has __vdso_tsc_raw and __vdso_tsc_to_ns (%s)",
			     t->live ? "not called: RDTSC not allowed" : "dump: not called");
		else
			BLOCK("vdso_tsc_raw", "vDSO __vdso_tsc_raw returned %d", df->vdso_raw_rc);
	} else if (sf->vdso_err == -ENOENT) {
		NOTE("vdso", "vDSO: none found");
	} else if (sf->vdso_err) {
		NOTE("vdso", "vDSO: not parsed (%s)", err_text(sf->vdso_err));
	} else {
		NOTE("vdso_tsc_raw", "vDSO has no __vdso_tsc_raw/__vdso_tsc_to_ns (LINUX_2.6)");
	}

	inv = sf->cpuid_known ? sf->cpu_invariant : -1;
	tsc__need_cpuinfo(t, inv != 1 && !tsc__kernel_keeps_tsc(df));
	if (inv == 1)
		OK("invariant_tsc",
		   "invariant TSC (CPUID 0x80000007 EDX bit 8): constant rate, runs in deep C-states");
	else if (!sf->cpuinfo_err && (sf->cpuinfo & (CI_CONSTANT | CI_NONSTOP)) ==
		 (CI_CONSTANT | CI_NONSTOP))
		OK("invariant_tsc", "cpuinfo: constant_tsc and nonstop_tsc");
	else if (series && !df->stable.err && df->stable.v == 1)
		NOTE("invariant_tsc",
		     "no invariant TSC flag, but the kernel trusts the TSC (tsc_stable=1)");
	else if (vouches(t))
		NOTE("invariant_tsc",
		     "no invariant TSC flag, but the kernel trusts the TSC (its vDSO hands it out)");
	else if (series && df->stable.err)
		BLOCK("invariant_tsc",
		      "no invariant TSC flag, and the kernel's word on it cannot be read (tsc0/tsc_stable: %s)",
		      err_text(df->stable.err));
	else if (inv == 0 || !sf->cpuinfo_err)
		BLOCK("invariant_tsc",
		      "no invariant TSC (CPUID 0x80000007 EDX bit 8, constant_tsc + nonstop_tsc), and no kernel to vouch for it");
	else
		BLOCK("invariant_tsc",
		      "cannot tell whether the TSC is invariant: no CPUID facts, %s",
		      sf->cpuinfo_err == -ENODATA ? "no flags line in cpuinfo" : "no cpuinfo");
	if (sf->cpuinfo_err == -ENODATA)
		NOTE("cpuinfo_flags", "cpuinfo: no flags line");
	if (sf->cpuinfo & CI_RELIABLE)
		NOTE("tsc_reliable",
		     "cpuinfo: tsc_reliable (the kernel skips the clocksource watchdog)");
	if (sf->cpuinfo & CI_KNOWN_FREQ)
		NOTE("tsc_known_freq", "cpuinfo: tsc_known_freq (the kernel did not calibrate)");
	return ok;
}

/*
 * tsc_open()'s decision where the vDSO hands out the TSC: its word alone.
 * __vdso_tsc_raw() succeeds only while the kernel keeps time with a TSC
 * it trusts and user RDTSC is not trapped (vdso-x86-tsc in the kernel's
 * ABI documents), and __vdso_tsc_to_ns() gives the kernel's factors.
 * The full decision takes the same word (vouches()), so the files add
 * reasons and do not change the answer unless the kernel changed its
 * mind meanwhile; each costs a few system calls (0.2 ms in a TCG guest),
 * so they are read after the open (tsc__settle()).  false: no early
 * decision; the caller makes the full one.
 */
bool tsc__decide_early(struct tsc *t, struct decision *d)
{
	const struct dyn_facts *df = &t->df;
	struct factors f;
	bool ok = true;

	if (!TSC_ARCH_HAS_TSC || !t->sf.cpuid_known || !t->sf.cpu_tsc ||
	    (df->vdso_raw_rc == 0 && !vdso_factors(df, &f)) ||
	    (df->vdso_raw_rc != 0 && df->vdso_raw_rc != -ENODEV))
		return false;
	memset(d, 0, sizeof(*d));
	OK("cpuid_tsc", "CPUID: the CPU has a TSC");
	if (df->vdso_raw_rc == -ENODEV) {
		BLOCK("vdso_tsc_raw",
		      "vDSO __vdso_tsc_raw returned -ENODEV: the kernel is not keeping time with a TSC it trusts, or traps user RDTSC");
	} else {
		OK("vdso_tsc_raw",
		   "vDSO __vdso_tsc_raw succeeds: the kernel keeps time with a TSC it trusts");
		d->f = f;
		OK("conversion_factors",
		   "conversion factors from %s: ns = ticks * %llu >> %u (%llu kHz)",
		   tsc_src_name(d->f.src), (unsigned long long)d->f.mult, d->f.shift,
		   (unsigned long long)d->f.khz);
	}
	d->usable = d->rdtsc_ok = ok;
	d->calibrating = tsc__calibrating(t);
	d->rdtsc_allowed = tsc__rdtsc_allowed(t, df);
	return true;
}

void tsc__decide(struct tsc *t, struct decision *d)
{
	bool run, need, ok = true;

	memset(d, 0, sizeof(*d));
	if (t->opts.force_fallback)
		BLOCK("fallback_forced", "fallback forced by option");
	run = may_run_rdtsc(t, d);
	ok &= run;
	ok &= kernel_trusts(t, d);
	/* A calibration costs tens of milliseconds: only when the factors
	 * would be used, or when asked for. */
	need = ok && run && !t->opts.force_fallback;
	ok &= pick(t, d, need || (run && t->opts.force_calibrate));
	if (!d->f.src && need && t->sf.perf_wait) {
		BLOCK("perf_wait",
		      "waiting for the perf mmap page, asked after tsc_open() (perf_event_open() may take milliseconds)");
		d->calib_wait = true;
	} else if (!d->f.src && need && tsc__calibrating(t)) {
		BLOCK("calibrating",
		      "calibrating: the TSC is used once the error bound is at most 1 ppm");
		d->calib_wait = true;
	} else if (!d->f.src && need) {
		BLOCK("conversion_factors",
		      "no conversion factors: no kernel factors, no frequency, no calibration");
	} else if (!d->f.src && !forced_calibrating(t)) {
		NOTE("conversion_factors",
		     "no conversion factors: none known, and none needed while the TSC is not used");
	}
	/* A forced calibration goes on whether or not its factors are used
	 * (another source's may be, or none while the TSC is not): without
	 * a watcher, the caller calls tsc_process_events() while this says
	 * so, as while the TSC waits for factors. */
	if (forced_calibrating(t) && !d->calib_wait)
		NOTE("calibrating",
		     "calibrating: as asked (force_calibrate), until the error bound is at most 1 ppm%s",
		     d->f.src ? "; other factors are used meanwhile" : "");
#if TSC_ARCH_HAS_TSC
	if (t->sf.rdtscp_shown)
		NOTE("ordered_read", "ordered reads: RDTSCP");
	else
		NOTE("ordered_read", "ordered reads: LFENCE;RDTSC (%s)", t->sf.rdtscp_why);
#endif
	if (t->watch_err)
		NOTE("watcher",
		     "cannot follow the kernel on its own (%s): %s", strerror(-t->watch_err),
		     t->epfd >= 0 ? "no watcher thread; poll tsc_fd() and call tsc_process_events()" :
		     "no fds; this decision stays until tsc_process_events() is called");
	/* Only a watcher or tsc_process_events() gets it to the TSC. */
	if (d->calib_wait && (t->opts.no_watcher || t->watch_err))
		NOTE("calibration_by_caller",
		     "no watcher: reads stay on the fallback clock until calls of "
		     "tsc_process_events() %s", t->epfd >= 0 || !t->watch_err ?
		     "(tsc_fd() wakes every 10 ms meanwhile) take the TSC" :
		     "(no fd to poll: call it now and then) take the TSC");
	if (*t->watch_why)
		NOTE("watcher_settings", "%s", t->watch_why);
	d->usable = ok;
	d->rdtsc_ok = run;
	d->calibrating = tsc__calibrating(t);
	d->rdtsc_allowed = tsc__rdtsc_allowed(t, &t->df);
}
