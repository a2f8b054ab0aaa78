// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Publishing a decision to the fast path.  Readers retry while the
 * sequence count is odd or changed.  At a change the new source is
 * offset to continue from the old one's reading at that instant, taken
 * after the count went odd: every value handed out before is below it,
 * so no thread sees time go back.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

uint64_t tsc__clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t tsc__mono_raw(void)
{
	return tsc__clock_ns(CLOCK_MONOTONIC_RAW);
}

static uint64_t conv(const struct tsc_fast *f, uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * f->mult) >> f->shift);
}

/* The library's reading under state f, without the seqcount. */
static uint64_t read_state(const struct tsc_fast *f)
{
	if (f->mode == TSC_MODE_TSC)
		return conv(f, tsc__rdtsc_lfence()) + f->offset;
	return tsc__clock_ns(f->clock) + f->clock_offset;
}

uint64_t tsc__lib_now(struct tsc *t)
{
	return tsc_now_ns_ordered(t);
}

/* Offset making state nf read `at` now: one read of the new source right
 * after `at` was taken, so the step a reader sees is about that read's
 * cost (tens of microseconds for a syscall clock under QEMU TCG). */
static void continue_from(struct tsc_fast *nf, uint64_t at)
{
	if (nf->mode == TSC_MODE_TSC)
		nf->offset = at - conv(nf, tsc__rdtsc_lfence());
	else
		nf->clock_offset = at - tsc__clock_ns(nf->clock);
}

/* At open: the TSC scale anchored to CLOCK_MONOTONIC_RAW. */
static void anchor_raw(struct tsc_fast *nf)
{
	uint64_t best = UINT64_MAX, t0, t1, r;
	int i;

	if (nf->mode != TSC_MODE_TSC) {
		nf->clock_offset = nf->clock == CLOCK_MONOTONIC_RAW ? 0 :
				   tsc__mono_raw() - tsc__clock_ns(nf->clock);
		return;
	}
	for (i = 0; i < 8; i++) {
		t0 = tsc__rdtsc_lfence();
		r = tsc__mono_raw();
		t1 = tsc__rdtsc_lfence();
		if (t1 >= t0 && t1 - t0 < best) {
			best = t1 - t0;
			nf->offset = r - conv(nf, t0 + (t1 - t0) / 2);
		}
	}
}

static void store(struct tsc_fast *f, const struct tsc_fast *nf)
{
	__atomic_store_n(&f->mode, nf->mode, __ATOMIC_RELAXED);
	__atomic_store_n(&f->shift, nf->shift, __ATOMIC_RELAXED);
	__atomic_store_n(&f->rdtscp, nf->rdtscp, __ATOMIC_RELAXED);
	__atomic_store_n(&f->mult, nf->mult, __ATOMIC_RELAXED);
	__atomic_store_n(&f->offset, nf->offset, __ATOMIC_RELAXED);
	__atomic_store_n(&f->clock_offset, nf->clock_offset, __ATOMIC_RELAXED);
	__atomic_store_n(&f->clock, nf->clock, __ATOMIC_RELAXED);
}

static void fill_info(struct tsc *t, const struct decision *d)
{
	struct tsc_info *i = &t->info;

	i->usable = d->usable;
	i->rdtscp = t->sf.rdtscp_shown;
	i->kernel_series = t->df.stable.err != -ENOENT;
	i->vdso_tsc = t->sf.vdso_found;
	i->vdso_clock = t->df.cs_vdso.err ? -1 : (int)(t->df.cs_vdso.v == 1);
	i->tsc_user = t->df.tsc_user.err || t->df.tsc_user.v > 2 ? -1 : (int)t->df.tsc_user.v;
	i->prctl_tsc = t->sf.prctl_tsc;
	i->tsc_stable = t->df.stable.err || t->df.stable.v > 1 ? -1 : (int)t->df.stable.v;
	if (d->f.src) {
		i->src = d->f.src;
		i->mult = d->f.mult;
		i->shift = d->f.shift;
		i->khz = d->f.khz;
		i->khz_src = d->f.src;
		i->err_ppb = d->f.err_ppb;
	}
	i->calib_ns = t->sf.calib.took_ns;
	i->calibrated = t->sf.calib.done;
	i->vdso_raw = t->df.vdso_raw_rc;
	i->fallback_clock = t->fast.clock;
	strcpy(i->clocksource, t->df.cs_err ? "" : t->df.cs);
	i->decisions++;
}

/* Caller holds t->lock.  Returns 1 if the fast path changed. */
int tsc__publish(struct tsc *t, const struct decision *d)
{
	struct tsc_fast *f = &t->fast, nf = *f;
	bool first = t->info.decisions == 0;
	uint64_t at;

	nf.mode = d->usable ? TSC_MODE_TSC : TSC_MODE_CLOCK;
	if (d->f.src) {
		nf.mult = d->f.mult;
		nf.shift = d->f.shift;
	}
	nf.clock = t->opts.fallback == TSC_FALLBACK_MONOTONIC ?
		   CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
	nf.rdtscp = t->sf.rdtscp_exec;
	t->d = *d;
	if (!first && nf.mode == f->mode && nf.rdtscp == f->rdtscp &&
	    (nf.mode != TSC_MODE_TSC || (nf.mult == f->mult && nf.shift == f->shift))) {
		fill_info(t, d);
		return 0;
	}
	__atomic_store_n(&f->seq, f->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* odd before any read below */
	if (first) {
		anchor_raw(&nf);
	} else {
		/* The old state's reading, unless RDTSC may no longer run:
		 * then its scale's estimate from the raw clock. */
		if (f->mode == TSC_MODE_TSC && !d->rdtsc_ok)
			at = tsc__mono_raw() + t->scale_offset;
		else
			at = read_state(f);
		continue_from(&nf, at);
	}
	store(f, &nf);
	__atomic_store_n(&f->seq, f->seq + 1, __ATOMIC_RELEASE);

	fill_info(t, d);
	if (!first) {
		int64_t old = t->scale_offset;

		t->scale_offset = (int64_t)(tsc__lib_now(t) - tsc__mono_raw());
		t->info.switches++;
		t->info.last_step_ns = t->scale_offset - old;
	}
	t->info.scale_offset_ns = t->scale_offset;
	return 1;
}
