// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Publishing a decision to the fast path: the kernel's seqcount latch
 * (see tsc.h), so a reader never waits for the writer.  A latch alone
 * cannot keep time from going back at a change of line: readers stay on
 * the old line until the writer's second turn, and a writer stalled
 * before it (preempted, for any time) lets them run on past where the
 * new line is, when the old one runs faster.  So a change goes in three
 * steps (open_mark(), close_mark(), put_new()):
 *
 * 1. The mark opens (0), and the first turn sends readers to the copy
 *    of the old line with seq odd.  Such a read goes through
 *    __tsc_held(): it returns its own value v, having raised the mark
 *    to v first if v is higher (a compare-and-swap).
 * 2. The writer closes the mark at c: the old line's reading now plus
 *    SWITCH_MARGIN_NS, or the mark if higher.  Every value handed out so
 *    far is at most c: reads before the turn read the old line before
 *    the writer looked (the margin is for a CPU whose TSC is ahead),
 *    reads after it raised the mark.  From then on a read of the old
 *    line is held: v while v <= c, then c, and once v passes c + HOLD_NS
 *    (the writer stalled that long) v - HOLD_NS, so that time stands
 *    still for at most HOLD_NS and then runs again, HOLD_NS behind.
 * 3. The new line is made to be, at every tick from the writer's now on,
 *    at or above the old line held at c, and the second turn sends
 *    readers to it.  Held and new line are compared tick by tick, so a
 *    reader goes from one to the other on its own CPU's TSC, whatever
 *    the skew between CPUs.
 *
 * Where the new line meets the old one:
 *  - A switch (another source, or new factors): it continues from the
 *    old one's reading plus a forward margin, the time spent reading the
 *    new source (measured by reading the old one again around it) and
 *    SWITCH_MARGIN_NS.  The old line reaches c within a few us, so the
 *    margin covers rates up to 10% apart until then.
 *  - A refinement (the same TSC, factors within 10 ppm; a rate check's
 *    correction, rate.c, within 1000 ppm): a slew.  A slower line meets
 *    the old one, plus 1 ns, at P, the tick where the old one reaches c,
 *    and lies above it before P; a faster one meets it at the writer's
 *    now and lies above it after: it steps by 1 ns plus the change of
 *    rate times the time to P.
 *  - The takeover from the fallback clock when a calibration reaches its
 *    1 ppm bound (or perf answers after the open): the TSC line through
 *    the clock's reading at the start of its bracket, plus what the two
 *    may drift apart until the clock reaches c.  The kernel keeps time
 *    with the TSC (the decision says so), so the fallback clock is the
 *    kernel's line of the TSC; but the vDSO gives a CPU whose TSC is
 *    behind the last tick's CPU the tick's time, so there a reader may
 *    go back by that skew (documented; a 1 us margin would be a step).
 * Past c, the new line stays at or above the held v - HOLD_NS as long as
 * the writer's stall times the change of rate is below HOLD_NS: 100 s
 * for a refinement, 1 s for a rate correction of 1000 ppm, 2 s for lines
 * 500 ppm apart, 12 ms against a CLOCK_MONOTONIC that NTP slews at 8%.  A longer stall can still take
 * time back, by the excess.
 *
 * The old source is read again whenever RDTSC still executes, also under
 * tsc_user=1, where it traps and the kernel emulates it.  Only when it
 * would fault (tsc_user=2) is the old scale estimated from
 * CLOCK_MONOTONIC_RAW and the offset measured at the last anchor; the two
 * may have drifted apart since, so the margin grows by ESTIMATE_PPM of
 * the time since that anchor (the bound wall.c also puts on their rates).
 *
 * Programs built with a tsc.h before 0.6 do not call __tsc_held(): their
 * reads keep the old line until the second turn, and after a stall there
 * may step back by the stall times the change of rate, also below what a
 * thread of a 0.6 program read.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "internal.h"

#define SWITCH_MARGIN_NS 1000
#define ESTIMATE_PPM 1000
#define MARK_CLOSED (1ull << 63)
#define HOLD_NS 1000000		/* a read stands still at most this long */

/* The writer's ordered TSC read; a test may put it ahead of the readers'
 * (t->skew: their CPUs' TSCs are behind the writer's). */
static uint64_t wtsc(const struct tsc *t)
{
	return tsc__rdtsc_lfence() + t->skew;
}

static uint64_t conv(const struct tsc_fast_state *f, uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * f->mult) >> f->shift);
}

/* The library's reading under state f, without the latch. */
static uint64_t read_state(const struct tsc *t, const struct tsc_fast_state *f)
{
	if (f->mode == TSC_MODE_TSC)
		return conv(f, wtsc(t)) + f->offset;
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

/* The old line's reading now.  Without RDTSC, old is a TSC state that
 * may no longer run: its scale's estimate. */
static uint64_t old_now(struct tsc *t, const struct tsc_fast_state *old, bool old_runs)
{
	return old_runs ? read_state(t, old) : estimate(t);
}

/* Offset making state nf continue from old's reading now, ahead by the
 * margin (see the top of the file). */
static void continue_from(struct tsc *t, const struct tsc_fast_state *old,
			  struct tsc_fast_state *nf, bool old_runs)
{
	uint64_t at, again, new_now;

	at = old_now(t, old, old_runs);
	new_now = nf->mode == TSC_MODE_TSC ? conv(nf, wtsc(t)) :
					     tsc__clock_ns(nf->clock);
	again = old_now(t, old, old_runs);
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

/* A turn of the fast path's latch (a test may stall the writer first: t->stall). */
static void turn(struct tsc *t)
{
	if (t->stall)
		t->stall(t);
	tsc__latch_turn(&t->fast.seq);
}

/* Step 1 (see the top of the file): readers of the old line go
 * through the mark. */
static void open_mark(struct tsc *t)
{
	__atomic_store_n(&t->mark.v, 0, __ATOMIC_RELAXED);
	turn(t);				/* readers: s[1], the mark */
	if (t->stall)				/* a test: stalled with the mark open */
		t->stall(t);
}

/* Step 2: the mark closes at c, the old line's reading now plus the
 * margin, or the mark if higher.  The line is read once: the writer
 * tries again only as often as readers raise the mark meanwhile. */
static uint64_t close_mark(struct tsc *t, const struct tsc_fast_state *old, bool old_runs)
{
	uint64_t h = __atomic_load_n(&t->mark.v, __ATOMIC_ACQUIRE), c;
	uint64_t c0 = old_now(t, old, old_runs) + SWITCH_MARGIN_NS;

	do
		c = h > c0 ? h : c0;
	while (!__atomic_compare_exchange_n(&t->mark.v, &h, c | MARK_CLOSED, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return c;
}

/* Step 3: readers go to the new line, and the other copy gets it. */
static void put_new(struct tsc *t, const struct tsc_fast_state *nf)
{
	store_fast(&t->fast.s[0], nf);
	turn(t);				/* readers: s[0] */
	store_fast(&t->fast.s[1], nf);
}

TSC_API uint64_t __tsc_held(const struct tsc *ct, uint32_t seq, uint64_t ns)
{
	struct tsc *t = (struct tsc *)ct;
	uint64_t h = __atomic_load_n(&t->mark.v, __ATOMIC_ACQUIRE), c;

	for (;;) {
		/* A read of a copy the writer has left since: read again. */
		if (__atomic_load_n(&t->fast.seq, __ATOMIC_RELAXED) != seq)
			return ns;
		if (h & MARK_CLOSED) {		/* held: see the top of the file */
			c = h & ~MARK_CLOSED;
			if (ns <= c)
				return ns;
			return ns - c > HOLD_NS ? ns - HOLD_NS : c;
		}
		if (ns <= h)
			return ns;
		if (__atomic_compare_exchange_n(&t->mark.v, &h, ns, true, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return ns;
	}
}

/* The fallback clock's reading c + offset lies between two ordered TSC
 * reads t0 and t1 of the writer's CPU: the narrowest of 8. */
static void clock_bracket(const struct tsc *t, const struct tsc_fast_state *old,
			  struct bracket *b)
{
	struct bracket s;
	int i;

	*b = (struct bracket){ .t0 = 1 };
	for (i = 0; i < 8; i++) {
		s.t0 = wtsc(t);
		s.ns = tsc__clock_ns(old->clock) + old->clock_offset;
		s.t1 = wtsc(t);
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
 * its bracket, t0, plus what the two may drift apart until the clock
 * reaches c, where readers of the old copy are held (rate bound times
 * that, plus 1 ns).  The clock was read at some tick x in [t0, t1], so
 * from t0 until the clock reaches c the new line is at or above it, and
 * above by at most the time from t0 to x plus that drift: a few tens of
 * ns where clock_gettime() is a vDSO call.  What it was, measured after
 * the turn, becomes last_step_ns. */
static void take_over(struct tsc *t, const struct tsc_fast_state *old,
		      struct tsc_fast_state *nf, uint64_t err_ppb, uint64_t c)
{
	uint64_t ppb = takeover_ppb(t, old, err_ppb), m;
	struct bracket b;

	clock_bracket(t, old, &b);
	if (b.t1 < b.t0) {		/* never in order: as read at t0 */
		b.t0 = b.t1 = wtsc(t);
		b.ns = tsc__clock_ns(old->clock) + old->clock_offset;
	}
	m = (uint64_t)((unsigned __int128)(c > b.ns ? c - b.ns : 0) * ppb / 1000000000) + 1;
	nf->offset = b.ns + m - conv(nf, b.t0);
}

/* The new line minus the old at the same tick: the old read around a
 * TSC read, the narrowest of 8 (within half its width). */
static int64_t step_at_switch(const struct tsc *t, const struct tsc_fast_state *old,
			      const struct tsc_fast_state *nf)
{
	uint64_t o0, o1, x, w = UINT64_MAX;
	int64_t step = 0;
	int i;

	for (i = 0; i < 8; i++) {
		o0 = read_state(t, old);
		x = wtsc(t);
		o1 = read_state(t, old);
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

/* ns per 2^64 ticks: the rate of a state's factors, whatever its shift. */
static unsigned __int128 rate_of(const struct tsc_fast_state *f)
{
	return tsc__rate_of(f->mult, f->shift);
}

/* A refinement of the TSC's factors: the same source, within 10 ppm, or
 * a rate check's correction (or its end), within 1000 ppm. */
static bool refinement(const struct tsc *t, const struct tsc_fast_state *f,
		       const struct tsc_fast_state *nf, bool rate_fix)
{
	unsigned __int128 a = rate_of(f), b = rate_of(nf), d = a > b ? a - b : b - a;

	return f->mode == TSC_MODE_TSC && nf->mode == TSC_MODE_TSC &&
	       nf->rdtscp == f->rdtscp && d <= a / (rate_fix ? 1000 : 100000) &&
	       t->d.rdtsc_allowed;
}

/* A refinement as a slew (see the top of the file): a slower line
 * meets the old one, plus 1 ns, at P, the tick where the old one
 * reaches c, and lies above it before P; a faster one meets it at the
 * writer's now, and lies above it after.  Either way it is, tick by
 * tick from the writer's now on, at or above the old line held at c,
 * and above it by no more than 1 ns plus the change of rate (10 ppm,
 * 1000 for a rate correction) times the time to P. */
static void refine(struct tsc *t, const struct tsc_fast_state *old, struct tsc_fast_state *nf,
		   uint64_t c)
{
	uint64_t now = wtsc(t), at = conv(old, now) + old->offset, p = now;

	if (rate_of(nf) < rate_of(old) && c > at)	/* ticks to c, rounded up */
		p += (uint64_t)((((unsigned __int128)(c - at) << old->shift) + old->mult - 1) /
				old->mult);
	nf->offset = conv(old, p) + old->offset - conv(nf, p) + 1;
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
	if (d->calibrating && !d->f.src)
		i->err_ppb = t->sf.calib.f.src ? t->sf.calib.f.err_ppb : UINT64_MAX;
	i->vdso_raw = t->df.vdso_raw_rc;
	i->fallback_clock = current(t)->clock;
	strcpy(i->clocksource, t->df.cs_err ? "" : t->df.cs);
	i->decisions++;
}

/* The TSC jumped back (wall.c found library ns by far behind
 * CLOCK_MONOTONIC_RAW): the line steps forward by ns, so that it runs
 * on from where it was, through the mark as at a switch: a read is
 * never below one made before (but those made since the jump, which
 * went back with the TSC).  Caller holds t->lock. */
void tsc__step(struct tsc *t, uint64_t ns)
{
	struct tsc_fast_state old = *current(t), nf = old;

	if (old.mode != TSC_MODE_TSC)
		return;
	nf.offset += ns;
	open_mark(t);
	close_mark(t, &old, true);
	put_new(t, &nf);
}

/* The inline wall reads load mode and shift as one 64-bit word (tsc.h). */
_Static_assert(offsetof(struct tsc_fast_state, shift) == offsetof(struct tsc_fast_state, mode) + 4 &&
	       offsetof(struct tsc_fast_state, mode) % 8 == 0 &&
	       offsetof(struct tsc_fast, s) % 8 == 0 && sizeof(struct tsc_fast_state) % 8 == 0,
	       "mode and shift: one aligned 64-bit word");

/* The same factors with shift 32 where that is exact: the inline reads
 * take a constant shift as one instruction (tsc.h, __tsc_mul()). */
static void shift_32(struct tsc_fast_state *f)
{
	while (f->shift < 32 && f->mult < (1ull << 63)) {
		f->mult <<= 1;
		f->shift++;
	}
}

/* Caller holds t->lock.  Returns 1 if the fast path changed. */
int tsc__publish(struct tsc *t, const struct decision *d)
{
	struct tsc_fast_state *f = current(t), nf = *f, old;
	bool first = !t->published, takeover, refined = false, old_runs;
	bool rate_fix = d->rate_fixed || t->d.rate_fixed;
	uint64_t c;
	int64_t step;

	nf.mode = d->usable ? TSC_MODE_TSC : TSC_MODE_CLOCK;
	if (d->f.src) {
		nf.mult = d->f.mult;
		nf.shift = d->f.shift;
		shift_32(&nf);
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
	old = *f;
	if (first) {			/* no reader yet */
		anchor_raw(&nf);
		store_fast(&t->fast.s[0], &nf);
		store_fast(&t->fast.s[1], &nf);
	} else {
		refined = refinement(t, f, &nf, rate_fix);
		old_runs = old.mode != TSC_MODE_TSC || d->rdtsc_allowed;
		open_mark(t);
		c = close_mark(t, &old, old_runs);
		if (refined) {
			refine(t, &old, &nf, c);
			/* The wall mapping's rates are against library ns:
			 * they change with them (wall.c). */
			t->rescale += (int64_t)(((__int128)rate_of(&nf) - (__int128)rate_of(&old)) *
						(1ll << 32) / (__int128)rate_of(&old));
		}
		else if (takeover)
			take_over(t, &old, &nf, d->f.err_ppb, c);
		else
			continue_from(t, &old, &nf, old_runs);
		put_new(t, &nf);
	}
	fill_info(t, d);
	if (refined) {
		t->info.refinements++;
		return 1;
	}
	t->published = true;
	if (!first) {
		step = t->scale_offset;
		t->scale_offset = scale_now(t);
		step = t->scale_offset - step;
		/* The fallback clock still runs: measure against it. */
		if (takeover)
			step = step_at_switch(t, &old, &nf);
		t->info.switches++;
		t->info.last_step_ns = step;
	}
	t->info.scale_offset_ns = t->scale_offset;
	return 1;
}
