// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Publishing a decision to the fast path: the kernel's seqcount latch
 * (see tsc.h), so a reader never waits for the writer.  Readers keep the
 * old copy until the second bump of seq, so at a change the new source is
 * offset to continue from the old one's reading, plus a forward margin:
 * the time spent reading the new source (measured by reading the old one
 * again around it) and SWITCH_MARGIN_NS for the skew between CPUs and the
 * early execution of an unordered RDTSC.  Every value handed out from the
 * old copy is then below every value of the new one, as long as the CPUs'
 * TSCs agree within the margin and the two sources do not drift apart by
 * more than it while the writer goes from reading `at` to the second bump
 * (a rate difference times that time: 500 ppm over 2 ms would).
 *
 * The old source is read again whenever RDTSC still executes, also under
 * tsc_user=1, where it traps and the kernel emulates it.  Only when it
 * would fault (tsc_user=2) is the old scale estimated from
 * CLOCK_MONOTONIC_RAW and the offset measured at the last anchor; the two
 * may have drifted apart since, so the margin grows by ESTIMATE_PPM of
 * the time since that anchor (the bound wall.c also puts on their rates).
 *
 * The takeover is the exception: when a calibration reaches its 1 ppm
 * bound (or perf answers after the open), the TSC takes over from the
 * fallback clock without a step (see
 * take_over()).  The kernel keeps time with the TSC (the decision says
 * so), so the fallback clock on any CPU is the kernel's line of that
 * CPU's TSC: the two lines can be made to meet, whatever the skew
 * between CPUs, and the new one is never behind the old.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "internal.h"

#define SWITCH_MARGIN_NS 1000
#define ESTIMATE_PPM 1000

uint64_t tsc__clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

TSC_API uint64_t __tsc_clock_ns(clockid_t clock)
{
	return tsc__clock_ns(clock);
}

uint64_t tsc__mono_raw(void)
{
	return tsc__clock_ns(CLOCK_MONOTONIC_RAW);
}

static uint64_t conv(const struct tsc_fast_state *f, uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * f->mult) >> f->shift);
}

/* The library's reading under state f, without the latch. */
static uint64_t read_state(const struct tsc_fast_state *f)
{
	if (f->mode == TSC_MODE_TSC)
		return conv(f, tsc__rdtsc_lfence()) + f->offset;
	return tsc__clock_ns(f->clock) + f->clock_offset;
}

uint64_t tsc__lib_now(struct tsc *t)
{
	return tsc_now_ns_ordered(t);
}

/* The copy readers use now; the writer's view (under t->lock). */
static struct tsc_fast_state *current(struct tsc *t)
{
	return &t->fast.s[t->fast.seq & 1];
}

/* The old scale without reading the TSC: see the top of the file. */
static uint64_t estimate(const struct tsc *t)
{
	uint64_t raw = tsc__mono_raw();

	return raw + t->scale_offset + (raw - t->last_anchor_raw) / (1000000 / ESTIMATE_PPM);
}

/* Offset making state nf continue from old's reading now, ahead by the
 * margin (see the top of the file).  Without RDTSC, old is a TSC state
 * that may no longer run: its scale's estimate. */
static void continue_from(struct tsc *t, const struct tsc_fast_state *old,
			  struct tsc_fast_state *nf, bool old_runs)
{
	uint64_t at, again, new_now;

	at = old_runs ? read_state(old) : estimate(t);
	new_now = nf->mode == TSC_MODE_TSC ? conv(nf, tsc__rdtsc_lfence()) :
					     tsc__clock_ns(nf->clock);
	again = old_runs ? read_state(old) : estimate(t);
	at += (again > at ? again - at : 0) + SWITCH_MARGIN_NS;
	if (nf->mode == TSC_MODE_TSC)
		nf->offset = at - new_now;
	else
		nf->clock_offset = at - new_now;
}

/* At open: the TSC scale anchored to CLOCK_MONOTONIC_RAW. */
static void anchor_raw(struct tsc_fast_state *nf)
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

static void store_fast(struct tsc_fast_state *f, const struct tsc_fast_state *nf)
{
	__atomic_store_n(&f->mode, nf->mode, __ATOMIC_RELAXED);
	__atomic_store_n(&f->shift, nf->shift, __ATOMIC_RELAXED);
	__atomic_store_n(&f->rdtscp, nf->rdtscp, __ATOMIC_RELAXED);
	__atomic_store_n(&f->mult, nf->mult, __ATOMIC_RELAXED);
	__atomic_store_n(&f->offset, nf->offset, __ATOMIC_RELAXED);
	__atomic_store_n(&f->clock_offset, nf->clock_offset, __ATOMIC_RELAXED);
	__atomic_store_n(&f->clock, nf->clock, __ATOMIC_RELAXED);
}

/* The seqcount latch's writer sends readers to the other copy: turn
 * (readers: copy 1), write copy 0, turn (readers: copy 0), write copy 1.
 * A reader always finds one of them whole; copy 0 may be written again
 * before the second turn.  Caller holds t->lock. */
void tsc__latch_turn(uint32_t *seq)
{
	/* The copy written last before the bump that sends readers there
	 * (the kernel's smp_wmb() before the increment). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The fallback clock's reading c + offset lies between two ordered TSC
 * reads t0 and t1 of the writer's CPU: the narrowest of 8. */
static void clock_bracket(const struct tsc_fast_state *old, struct bracket *b)
{
	struct bracket s;
	int i;

	*b = (struct bracket){ .t0 = 1 };
	for (i = 0; i < 8; i++) {
		s.t0 = tsc__rdtsc_lfence();
		s.ns = tsc__clock_ns(old->clock) + old->clock_offset;
		s.t1 = tsc__rdtsc_lfence();
		if (s.t1 >= s.t0 && (b->t1 < b->t0 || s.t1 - s.t0 < b->t1 - b->t0))
			*b = s;
	}
}

/* How far apart the fallback clock and the calibrated TSC may run, in
 * ppb: CLOCK_MONOTONIC_RAW is what the calibration measured against, to
 * its bound (plus 1 ppm); CLOCK_MONOTONIC adds NTP's frequency (from
 * adjtimex() at the last anchor; 10%, as far as tick can set it, if not
 * known) and 500 ppm for the offset it slews. */
static uint64_t takeover_ppb(const struct tsc *t, const struct tsc_fast_state *old,
			     uint64_t err_ppb)
{
	int64_t f = t->wfreq < 0 ? -t->wfreq : t->wfreq;

	if (old->clock == CLOCK_MONOTONIC_RAW)
		return err_ppb + 1000;
	return err_ppb + 1000 + 500000 +
	       (t->wfreq_ok ? (uint64_t)((__int128)f * 1000000000 >> 32) : 100000000);
}

/* The calibrated TSC takes over from the fallback clock: no switch
 * margin, but the TSC line through the clock's reading at the start of
 * its bracket, t0, plus what the two may drift apart over the next
 * ahead ns (rate bound times ahead, plus 1 ns), and the turn to the new
 * copy made before that, at P (the writer looks after it wrote the
 * copy, and measures again with twice the time if it stalled past P).
 * The clock was read at some tick x in [t0, t1], so from t0 to P the
 * new line is at or above the old one, and above by at most the time
 * from t0 to x plus the margin: readers still on the old copy read the
 * clock before the turn, below P, so no reader sees time go back, and
 * none sees a jump larger than that (a few tens of ns where
 * clock_gettime() is a vDSO call).  What it was, measured after the
 * turn, becomes last_step_ns.  A writer stalled past P 32 times running
 * (ahead 12.8 ms from the 9th on) goes ahead with the last. */
static void take_over(struct tsc *t, const struct tsc_fast_state *old,
		      struct tsc_fast_state *nf, uint64_t err_ppb)
{
	uint64_t ppb = takeover_ppb(t, old, err_ppb), ahead = 50000, m, p;
	struct bracket b;
	int tries;

	tsc__latch_turn(&t->fast.seq);		/* readers: s[1] */
	for (tries = 0; tries < 32; tries++) {
		clock_bracket(old, &b);
		if (b.t1 < b.t0) {		/* never in order: as read at t0 */
			b.t0 = b.t1 = tsc__rdtsc_lfence();
			b.ns = tsc__clock_ns(old->clock) + old->clock_offset;
		}
		m = (uint64_t)((unsigned __int128)ahead * ppb / 1000000000) + 1;
		nf->offset = b.ns + m - conv(nf, b.t0);
		p = b.t0 + (uint64_t)(((unsigned __int128)ahead << nf->shift) / nf->mult);
		store_fast(&t->fast.s[0], nf);
		if (tsc__rdtsc_lfence() < p)
			break;
		if (ahead < 10000000)
			ahead *= 2;
	}
	tsc__latch_turn(&t->fast.seq);		/* readers: s[0] */
	store_fast(&t->fast.s[1], nf);
}

/* The new line minus the old at the same tick: the old read around a
 * TSC read, the narrowest of 8 (within half its width). */
static int64_t step_at_switch(const struct tsc_fast_state *old,
			      const struct tsc_fast_state *nf)
{
	uint64_t o0, o1, x, w = UINT64_MAX;
	int64_t step = 0;
	int i;

	for (i = 0; i < 8; i++) {
		o0 = read_state(old);
		x = tsc__rdtsc_lfence();
		o1 = read_state(old);
		if (o1 >= o0 && o1 - o0 < w) {
			w = o1 - o0;
			step = (int64_t)(conv(nf, x) + nf->offset - (o0 + w / 2));
		}
	}
	return step;
}

/* The library's scale minus CLOCK_MONOTONIC_RAW: RAW read between two
 * library reads, the narrowest of 8. */
static int64_t scale_now(struct tsc *t)
{
	uint64_t l0, l1, r, w = UINT64_MAX;
	int64_t off = 0;
	int i;

	for (i = 0; i < 8; i++) {
		l0 = tsc__lib_now(t);
		r = tsc__mono_raw();
		l1 = tsc__lib_now(t);
		if (l1 >= l0 && l1 - l0 < w) {
			w = l1 - l0;
			off = (int64_t)(l0 + w / 2 - r);
		}
	}
	return off;
}

/* A refinement of the TSC's factors: the same source, within 10 ppm. */
static bool refinement(const struct tsc *t, const struct tsc_fast_state *f,
		       const struct tsc_fast_state *nf)
{
	uint64_t dm = nf->mult > f->mult ? nf->mult - f->mult : f->mult - nf->mult;

	return f->mode == TSC_MODE_TSC && nf->mode == TSC_MODE_TSC &&
	       nf->rdtscp == f->rdtscp && nf->shift == f->shift &&
	       dm <= f->mult / 100000 && tsc__rdtsc_allowed(t, &t->df);
}

/* Publish a refinement as a slew: the new line meets the old one at P, a
 * TSC reading 50 us ahead, plus 1 ns.  Readers still on the old copy
 * read below P (the writer looks again before it sends readers to the
 * new copy, and moves P on if it stalled), and from P back to the
 * writer's turn the new line lies below the old by less than 1 ns (10
 * ppm of 50 us): no reader sees time go back, none sees it jump. */
static void refine(struct tsc *t, const struct tsc_fast_state *cur,
		   struct tsc_fast_state *nf)
{
	struct tsc_fast_state old = *cur;
	uint64_t ahead = (50000ull << old.shift) / old.mult, p;

	tsc__latch_turn(&t->fast.seq);		/* readers: s[1] */
	do {
		p = tsc__rdtsc_lfence() + ahead;
		nf->offset = conv(&old, p) + old.offset - conv(nf, p) + 1;
		store_fast(&t->fast.s[0], nf);
	} while (tsc__rdtsc_lfence() >= p);
	tsc__latch_turn(&t->fast.seq);		/* readers: s[0] */
	store_fast(&t->fast.s[1], nf);
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
	/* A policy this library does not know is still the kernel's word:
	 * kept here (metrics show it as no known state). */
	i->tsc_user_value = t->df.tsc_user.err ? -1 :
			    t->df.tsc_user.v > LLONG_MAX ? LLONG_MAX : (long long)t->df.tsc_user.v;
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
	/* Calibrating, with no factors in use: the bound so far, or none yet. */
	if (tsc__calibrating(t) && !d->f.src)
		i->err_ppb = t->sf.calib.f.src ? t->sf.calib.f.err_ppb : UINT64_MAX;
	i->vdso_raw = t->df.vdso_raw_rc;
	i->fallback_clock = current(t)->clock;
	strcpy(i->clocksource, t->df.cs_err ? "" : t->df.cs);
	i->decisions++;
}

/* Caller holds t->lock.  Returns 1 if the fast path changed. */
int tsc__publish(struct tsc *t, const struct decision *d)
{
	struct tsc_fast_state *f = current(t), nf = *f, old;
	bool first = !t->published, takeover;
	int64_t step;

	nf.mode = d->usable ? TSC_MODE_TSC : TSC_MODE_CLOCK;
	if (d->f.src) {
		nf.mult = d->f.mult;
		nf.shift = d->f.shift;
	}
	nf.clock = t->opts.fallback == TSC_FALLBACK_MONOTONIC ?
		   CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
	nf.rdtscp = t->sf.rdtscp_exec;
	/* The TSC after a calibration (or perf's answer), from the fallback
	 * clock it waited on. */
	takeover = !first && t->d.calib_wait && f->mode == TSC_MODE_CLOCK &&
		   nf.mode == TSC_MODE_TSC;
	t->d = *d;
	if (!first && nf.mode == f->mode && nf.rdtscp == f->rdtscp &&
	    (nf.mode != TSC_MODE_TSC || (nf.mult == f->mult && nf.shift == f->shift))) {
		fill_info(t, d);
		return 0;
	}
	if (!first && refinement(t, f, &nf)) {
		refine(t, f, &nf);
		fill_info(t, d);
		t->info.refinements++;
		return 1;
	}
	old = *f;
	if (takeover) {
		take_over(t, &old, &nf, d->f.err_ppb);
	} else {
		if (first)
			anchor_raw(&nf);
		else
			continue_from(t, &old, &nf, old.mode != TSC_MODE_TSC ||
				      tsc__rdtsc_allowed(t, &t->df));
		tsc__latch_turn(&t->fast.seq);		/* readers: s[1] */
		store_fast(&t->fast.s[0], &nf);
		tsc__latch_turn(&t->fast.seq);		/* readers: s[0] */
		store_fast(&t->fast.s[1], &nf);
	}

	fill_info(t, d);
	t->published = true;
	if (!first) {
		step = t->scale_offset;
		t->scale_offset = scale_now(t);
		step = t->scale_offset - step;
		/* The fallback clock still runs: measure against it. */
		if (takeover)
			step = step_at_switch(&old, &nf);
		t->info.switches++;
		t->info.last_step_ns = step;
	}
	t->info.scale_offset_ns = t->scale_offset;
	return 1;
}
