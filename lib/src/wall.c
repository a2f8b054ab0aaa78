// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Mapping library ns to the kernel's clocks, piece by piece.  Each anchor
 * (once a second) reads every clock against library ns and starts a new
 * segment a little ahead of now, at T: it begins where the old one is at
 * T, so the mapping never jumps, and its rate is the kernel's (measured
 * between anchors; MONOTONIC also follows adjtimex()'s frequency at once)
 * plus a slew that absorbs the error over the next second, at most
 * 500 ppm like adjtime(); a larger error takes longer.  The exceptions:
 * REALTIME and TAI step when the kernel stepped them (ahead only up to
 * the mapping: from there they slew), BOOTTIME jumps forward when the
 * kernel's did (resume), any but REALTIME and TAI jumps forward when
 * more than 1 ms behind, and any stands still when more than 1 ms ahead
 * (the TSC ran through a suspend, or jumped ahead: check_jump()) until
 * the kernel's clock is there.
 * Nothing else steps, and only REALTIME and TAI go back (by the kernel's
 * steps back, also when the mapping starts anew).  A rate is not
 * measured across a resume (BOOTTIME moved from MONOTONIC).
 *
 * Readers use a seqcount latch (two copies, see tsc.h), so they never
 * wait for the writer.  A copy holds the segment before T too: a reader
 * still on the old copy maps every ns below T exactly as the new one
 * does.  The writer checks that T is still ahead before it sends readers
 * to the new copy, and again after; if it stalled past T, it starts the
 * segments again further on, and bridges to there from the highest any
 * reader can have seen at its clock's now, rising as steeply as the
 * steepest segment in play: never lower than a copy readers still use,
 * and never standing still (behind()).  A stall between its last look
 * and the turn cannot be seen: readers of the old copy then run on past
 * T, by the old rate, and the new copy may be below them by the stall
 * times the change of rate (the whole stall where the new segment stands
 * still).  So a change goes in three steps (publish()): readers are
 * sent to the old copy through a mark per clock, which they raise to
 * what they return (only then: the fast path in tsc.h writes nothing);
 * the writer closes the marks where the old copy is at its clock's now,
 * and held reads follow a line no steeper than the new copy; then the
 * turn.  A stall there makes reads rise slower, not go back, for up to
 * HOLD_NS below the old copy; past that they run on HOLD_NS behind it,
 * and where the new segment stands still the new copy can be below
 * them by up to HOLD_NS (tsc_clock_gettime(3)).  For REALTIME and TAI
 * the marks count values without the kernel's steps back (each segment
 * carries their sum): such a step still takes them back, by that step,
 * and nothing else does.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/timex.h>
#include <unistd.h>

#include "internal.h"

static const clockid_t wall_clk[W_NR] = {
	CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
};

#define AHEAD_NS	50000ull	/* a new segment starts this far ahead */
#define SKEW_NS		1000ull		/* TSCs of CPUs agree within this (publish.c) */
#define INTERVAL_NS	1000000000ll	/* the next anchor is due after this */
#define SPAN_NS		100000000ull	/* rates are measured over at least this */
#define MAX_SLEW	((1ll << 32) / 2000)	/* 500 ppm */
#define MAX_RATE	((1ll << 32) / 10)	/* 10%: as far as tick can set the kernel's */
/* A segment's slope, 1 + (rate, or rate + slew) / 2^32, stays in [0, 2):
 * rates are clamped to MAX_RATE, slews to MAX_SLEW or to standing still
 * (-(2^32 + rate)).  The inline reads' 64-bit maths rest on it (tsc.h). */
_Static_assert(MAX_RATE + MAX_SLEW < (1ll << 32), "a segment's slope below 2");
#define JUMP_NS		1000000ll	/* behind by more: jump forward */
#define STEP_NS		20000ll		/* an offset moved by more: the kernel stepped it */
#define MARK_CLOSED	(1ull << 63)
#define MARK_OPEN	(1ull << 62)	/* | seq: open, nothing raised yet */
#define HOLD_NS		1000000ull	/* a held read stands still at most this long */
#define SLOW_GRACE_NS	200000000ull	/* an anchor this late: reads look for a jump */

static int64_t clamp(int64_t v, int64_t lim)
{
	return v > lim ? lim : v < -lim ? -lim : v;
}

/* The segment at ns; never decreasing in ns, as 2^32 + rate + slew >= 0.
 * The slew runs from s for len only: before s, the rate alone. */
static uint64_t seg_at(const struct wall_seg *g, uint64_t ns)
{
	int64_t d = (int64_t)(ns - g->s);
	/* Unsigned, as the inline reads compare: a len of 2^63 or more
	 * never ends. */
	int64_t ds = d < 0 ? 0 : (uint64_t)d < g->len ? d : (int64_t)g->len;
	__int128 r = (__int128)d * g->rate + (__int128)ds * g->slew;

	return g->b + (uint64_t)d + (uint64_t)(int64_t)(r >> 32);
}

static uint64_t map_at(const struct wall_map *m, uint64_t ns)
{
	uint64_t v, f;

	if (ns >= m->cur.s)
		return seg_at(&m->cur, ns);
	v = seg_at(&m->prev, ns);
	if (ns < m->floor_from)
		return v;
	f = seg_at(&m->floor, ns);
	return v < f ? f : v;
}

/* --- readers: lock-free (retry only if the writer published meanwhile),
 * async-signal-safe, no system call.  The fast path is inline (tsc.h);
 * this is the rest of it. */

_Static_assert(offsetof(struct tsc, wall) == offsetof(struct __tsc_head, wall),
	       "struct tsc begins with tsc.h's struct __tsc_head");

static void load_seg(struct wall_seg *d, const struct wall_seg *g)
{
	d->s = __atomic_load_n(&g->s, __ATOMIC_RELAXED);
	d->b = __atomic_load_n(&g->b, __ATOMIC_RELAXED);
	d->len = __atomic_load_n(&g->len, __ATOMIC_RELAXED);
	d->rate = __atomic_load_n(&g->rate, __ATOMIC_RELAXED);
	d->slew = __atomic_load_n(&g->slew, __ATOMIC_RELAXED);
	d->back = __atomic_load_n(&g->back, __ATOMIC_RELAXED);
}

/* The line held reads of clock i follow at library ns ns: from c at x
 * on, rising at 1 + r (r >= -2^32), no faster than the new copy will. */
static uint64_t hold_at(const struct wall_hold *h, uint64_t ns)
{
	uint64_t d = ns > h->x ? ns - h->x : 0;

	return h->c + d + (uint64_t)(int64_t)(((__int128)d * h->r) >> 32);
}

/* A read of clock i at library ns while the writer changes the mapping
 * (seq odd), v counted with the kernel's steps back: v, having raised
 * the clock's mark to v first if v is higher (the mark opens at
 * MARK_OPEN | seq, so that a read preempted past its publication cannot
 * raise the next one's with a value of another copy), or, once the writer has
 * closed the mark, v held to the line it drew from there (hold_at()),
 * but never more than HOLD_NS below v (a writer stalled long enough that
 * the line fell that far behind).  As __tsc_held() (publish.c).  A read
 * of a copy the writer has left since is read again (the caller looks
 * at seq after). */
static uint64_t held(struct tsc *t, int i, uint32_t seq, uint64_t ns, uint64_t v)
{
	uint64_t *mk = &t->wall_mark.v[i];
	uint64_t m = __atomic_load_n(mk, __ATOMIC_ACQUIRE), l;
	struct wall_hold h;

	for (;;) {
		if (__atomic_load_n(&t->wall.seq, __ATOMIC_RELAXED) != seq)
			return v;
		/* Another publication's mark (this read was preempted past
		 * it): raising it would hold that one's readers too high. */
		if ((m & MARK_OPEN) && (uint32_t)m != seq)
			return v;
		if (m & MARK_CLOSED) {
			h.x = __atomic_load_n(&t->wall_hold[i].x, __ATOMIC_RELAXED);
			h.c = __atomic_load_n(&t->wall_hold[i].c, __ATOMIC_RELAXED);
			h.r = __atomic_load_n(&t->wall_hold[i].r, __ATOMIC_RELAXED);
			l = hold_at(&h, ns);
			if (v <= l)
				return v;
			return v - l > HOLD_NS ? v - HOLD_NS : l;
		}
		if (!(m & MARK_OPEN) && v <= m)
			return v;
		if (__atomic_compare_exchange_n(mk, &m, v, true, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return v;
	}
}

static int clock_index(clockid_t clk)
{
	int i = __tsc_wall_index(clk);

	return i < 0 ? W_NR : i;
}

/* A forked child's handle has no watcher until a call that may start
 * one (tsc__lock()), and the wall reads are async-signal-safe: they
 * may not.  So that its mapping does not drift meanwhile, they anchor it
 * themselves once an anchor is due (slow_from sends them here), if the
 * lock is free (they never wait for it); an anchor makes only system
 * calls that are signal-safe. */
static void child_anchor(struct tsc *t)
{
	int saved = errno;	/* a handler's caller may be looking at it */

	if (!__atomic_load_n(&t->rearm, __ATOMIC_RELAXED) ||
	    tsc_now_ns(t) < __atomic_load_n(&t->anchor_next, __ATOMIC_RELAXED) ||
	    !tsc__trylock(t))
		return;
	if (__atomic_load_n(&t->rearm, __ATOMIC_RELAXED))
		tsc__reanchor(t);
	tsc__unlock(t);
	errno = saved;
}

static void load_est(struct wall_est *d, const struct wall_est *e)
{
	d->scale = __atomic_load_n(&e->scale, __ATOMIC_RELAXED);
	d->raw = __atomic_load_n(&e->raw, __ATOMIC_RELAXED);
	d->ppb = __atomic_load_n(&e->ppb, __ATOMIC_RELAXED);
	d->w = __atomic_load_n(&e->w, __ATOMIC_RELAXED);
	d->slow_at = __atomic_load_n(&e->slow_at, __ATOMIC_RELAXED);
	d->tsc = __atomic_load_n(&e->tsc, __ATOMIC_RELAXED);
}

/* Where library ns should be by CLOCK_MONOTONIC_RAW now (raw), at the
 * top of what they may have drifted from the anchor on. */
static uint64_t est_high(const struct wall_est *e, uint64_t raw)
{
	uint64_t el = raw > e->raw ? raw - e->raw : 0;

	/* At least the drift over a whole interval, so that, as long as
	 * anchors come, it rises as RAW does: a line the writer sets there
	 * is not overtaken by reads that keep to it meanwhile. */
	if (el < INTERVAL_NS + SLOW_GRACE_NS)
		el = INTERVAL_NS + SLOW_GRACE_NS;
	return raw + (uint64_t)e->scale + e->w +
	       (uint64_t)((unsigned __int128)el * e->ppb / 1000000000);
}

/* Where a read of ns maps after a jump: library ns by RAW (est_high()),
 * and after a jump ahead never below what reads of the copy mapped
 * inline (up to its slow_at). */
static uint64_t jump_at(const struct wall_est *e, uint64_t raw, uint64_t ns)
{
	uint64_t at = est_high(e, raw), lim = ns < e->slow_at ? ns : e->slow_at;

	return ns > raw + (uint64_t)e->scale && lim > at ? lim : at;
}

/* Are library ns where CLOCK_MONOTONIC_RAW says, within the jump bound
 * (1 ms, 1000 ppm since the anchor, the bracket's width)?  Read now,
 * with RAW between two reads of them (a read preempted between them
 * would look like a jump): the narrowest of 3 brackets, or the first
 * under 100 us; a wide one only widens the bound (where RAW is a slow
 * system call, as under QEMU's TCG, three in a row may be wider).  No
 * bracket in order (the line changed during each): taken as no jump.
 * If they are not, the TSC jumped since: *at is jump_at() by RAW now,
 * and the jump is recorded for the copy (seq / 2: the same copy while
 * the writer changes the mapping), so that its other reads map so too
 * without looking again: one bracket wide and the next narrow, two
 * reads of a jump near the bound would take it two ways.  Returns 2.
 * If they are, but the caller's ns is not (read before a preemption, or
 * before the writer stepped the line back into place), *at is library
 * ns now: returns 1.  Else 0: map ns. */
static int jumped_read(struct tsc *t, const struct wall_est *e, uint32_t seq,
		       uint64_t ns, uint64_t *at)
{
	uint64_t raw = 0, el, est, thr, l0 = 0, l, a, r, b, w = UINT64_MAX;
	uint64_t seen = (uint64_t)(seq >> 1) + 1;
	int i;

	if (__atomic_load_n(&t->jump_seen, __ATOMIC_RELAXED) == seen)
		goto jumped;
	for (i = 0; i < 3 && w >= 100000; i++) {
		a = tsc_now_ns(t);
		r = tsc__mono_raw();
		b = tsc_now_ns(t);
		if (b >= a && b - a < w) {
			w = b - a;
			l0 = a;
			raw = r;
		}
	}
	if (w == UINT64_MAX)
		return 0;
	l = l0 + w / 2;
	el = raw > e->raw ? raw - e->raw : 0;
	est = raw + (uint64_t)e->scale;
	thr = JUMP_NS + el / 1000 + e->w + w;
	if (l + thr >= est && l <= est + thr) {
		/* Another read saw it meanwhile: take it as that one did. */
		if (__atomic_load_n(&t->jump_seen, __ATOMIC_RELAXED) == seen)
			goto jumped;
		if (ns + thr >= est && ns <= est + thr)
			return 0;
		*at = l;
		return 1;
	}
	__atomic_store_n(&t->jump_seen, seen, __ATOMIC_RELAXED);
jumped:
	*at = jump_at(e, tsc__mono_raw(), ns);
	return 2;
}

/* The inline reads' slow path (tsc.h): clock clk at ns, or now, read in
 * the same pass as the copy, so that it is never below where that
 * copy's last segment began.  A read of now that finds library ns off
 * the copy's segment by more than the inline path takes (over 1 ms
 * below its start, or past slow_from) looks for a jump of the TSC: then
 * it maps where library ns should be (jumped_read()), and sends every
 * read here until the writer has dealt with it (slow_from 0). */
TSC_API int __tsc_wall(struct tsc *t, clockid_t clk, bool now, uint64_t ns, uint64_t *out)
{
	int i = clock_index(clk);
	const struct wall_copy *c;
	struct wall_map m;
	struct wall_est e;
	uint32_t seq, valid;
	uint64_t v, back, at, slow;
	int jr;

	if (!t || !out || i == W_NR)
		return tsc__set_errno(-EINVAL);
	child_anchor(t);
	for (;;) {
		seq = __atomic_load_n(&t->wall.seq, __ATOMIC_ACQUIRE);
		c = &t->wall.c[seq & 1];
		if (now)
			ns = tsc_now_ns_ordered(t);
		valid = __atomic_load_n(&c->valid, __ATOMIC_RELAXED);
		load_seg(&m.prev, &c->m[i].prev);
		load_seg(&m.cur, &c->m[i].cur);
		load_seg(&m.floor, &c->m[i].floor);
		m.floor_from = __atomic_load_n(&c->m[i].floor_from, __ATOMIC_RELAXED);
		load_est(&e, &t->wall_est[seq & 1]);
		slow = __atomic_load_n(&t->wall.slow_from, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&t->wall.seq, __ATOMIC_RELAXED) != seq)
			continue;
		if (!valid)
			return tsc__set_errno(-EAGAIN);
		jr = now && e.tsc && (ns + JUMP_NS < m.cur.s || ns >= slow || ns >= e.slow_at) ?
		     jumped_read(t, &e, seq, ns, &at) : 0;
		if (jr == 2 && slow)	/* not over a later anchor's: it looked again */
			__atomic_compare_exchange_n(&t->wall.slow_from, &slow, 0, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		/* RAW read after the writer began to change the mapping
		 * (seq odd, then the turn) may lie past where it holds the
		 * old copy's readers: read again, held if seq is odd. */
		if (jr) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&t->wall.seq, __ATOMIC_RELAXED) != seq)
				continue;
			ns = at;
		}
		v = map_at(&m, ns);
		if (now && (seq & 1)) {
			/* The mark counts REALTIME and TAI without their
			 * steps back. */
			back = ns >= m.cur.s ? m.cur.back : m.prev.back;
			v = held(t, i, seq, ns, v + back) - back;
			if (__atomic_load_n(&t->wall.seq, __ATOMIC_RELAXED) != seq)
				continue;
		}
		*out = v;
		return 0;
	}
}

/* --- the writer, under t->lock */

static void store_seg(struct wall_seg *d, const struct wall_seg *g)
{
	__atomic_store_n(&d->s, g->s, __ATOMIC_RELAXED);
	__atomic_store_n(&d->b, g->b, __ATOMIC_RELAXED);
	__atomic_store_n(&d->len, g->len, __ATOMIC_RELAXED);
	__atomic_store_n(&d->rate, g->rate, __ATOMIC_RELAXED);
	__atomic_store_n(&d->slew, g->slew, __ATOMIC_RELAXED);
	__atomic_store_n(&d->back, g->back, __ATOMIC_RELAXED);
}

static void store_est(struct wall_est *d, const struct wall_est *e)
{
	__atomic_store_n(&d->scale, e->scale, __ATOMIC_RELAXED);
	__atomic_store_n(&d->raw, e->raw, __ATOMIC_RELAXED);
	__atomic_store_n(&d->ppb, e->ppb, __ATOMIC_RELAXED);
	__atomic_store_n(&d->w, e->w, __ATOMIC_RELAXED);
	__atomic_store_n(&d->slow_at, e->slow_at, __ATOMIC_RELAXED);
	__atomic_store_n(&d->tsc, e->tsc, __ATOMIC_RELAXED);
}

static void store_copy(struct wall_copy *d, const struct wall_copy *n)
{
	int i;

	__atomic_store_n(&d->valid, n->valid, __ATOMIC_RELAXED);
	for (i = 0; i < W_NR; i++) {
		store_seg(&d->m[i].prev, &n->m[i].prev);
		store_seg(&d->m[i].cur, &n->m[i].cur);
		store_seg(&d->m[i].floor, &n->m[i].floor);
		__atomic_store_n(&d->m[i].floor_from, n->m[i].floor_from, __ATOMIC_RELAXED);
	}
}

/* The writer's clock, once readers of the next copy cannot be below
 * where the current one's segments begin: re-anchored within 50 us, so
 * a sleep of at most 51 us (plus the scheduler's slack), again if a
 * signal cut it short, 100 rounds at most (then on: the readers hold).
 * False if library ns are further below: they went back, and the
 * mapping starts anew. */
static bool writer_now(struct tsc *t, uint64_t *now)
{
	uint64_t gap;
	int n;

	for (n = 0; (*now = t->wall_now(t)) < t->wall_T + SKEW_NS; n++) {
		struct timespec ts;

		gap = t->wall_T + SKEW_NS - *now;
		if (gap > AHEAD_NS + SKEW_NS)
			return false;
		if (n == 100)
			return true;	/* signals keep cutting the sleep: behind() copes */
		ts.tv_sec = (time_t)(gap / 1000000000);
		ts.tv_nsec = (long)(gap % 1000000000);
		nanosleep(&ts, NULL);
	}
	return true;
}

/* RAW's and MONOTONIC's rates against library ns, measured from the last
 * anchor at least 100 ms back; MONOTONIC's also moves with adjtimex()'s
 * frequency at once, and starts from it. */
static void rates(struct tsc *t, const struct wall_sample *x, bool first, bool resumed)
{
	int64_t dfreq = x->freq_ok && t->wfreq_ok ? x->freq - t->wfreq : 0;
	int i;

	for (i = W_RAW; i <= W_MONO; i++) {
		struct wall_track *w = &t->wt[i];
		uint64_t span = x->l[i] - w->l;

		if (first) {
			w->rate = i == W_MONO && x->freq_ok ? x->freq : 0;
			w->measured = false;
		} else if (resumed) {
			/* The span holds a suspend, or library ns changed
			 * their rate (rescale()): keep the rate, measure anew. */
			if (i == W_MONO)
				w->rate += dfreq;
		} else if (i == W_MONO && x->freq_ok && t->wfreq_ok && x->freq != w->freq) {
			/* The frequency changed within the span, which measures
			 * part of the change: the rate before, plus the change. */
			w->rate += dfreq;
		} else if (x->l[i] > w->l && span >= SPAN_NS) {
			int64_t dc = (int64_t)(x->c[i] - w->c) - (int64_t)span;

			w->rate = (int64_t)((__int128)dc * (1ll << 32) / (int64_t)span);
			w->measured = true;
		} else {
			if (i == W_MONO)
				w->rate += dfreq;
			continue;	/* too close: measure from the same anchor next time */
		}
		w->rate = clamp(w->rate, MAX_RATE);
		w->l = x->l[i];
		w->c = x->c[i];
		w->freq = x->freq;
	}
	t->wfreq = x->freq;
	t->wfreq_ok = x->freq_ok;
}

/* Library ns changed their rate by 1 + k (a refinement, publish.c):
 * each measured rate against them changes by 1 / (1 + k), and a span
 * across the change measures neither (rates() measures anew).  A rate
 * not yet measured was taken as RAW's being library ns' own; where the
 * rate check has measured the TSC against RAW (rate.c), RAW's rate
 * against library ns is known from it now. */
static void rescale(struct tsc *t, int64_t k)
{
	const struct tsc_fast_state *f = &t->fast.s[t->fast.seq & 1];
	const struct factors *m = &t->rate.m.f;
	int64_t raw = 0;
	int i;

	if (m->src && f->mode == TSC_MODE_TSC) {
		__int128 a = (__int128)tsc__rate_of(m->mult, m->shift);
		__int128 b = (__int128)tsc__rate_of(f->mult, f->shift);

		__int128 dd = a - b;

		raw = dd > b / 8 || -dd > b / 8 ? (dd > 0 ? MAX_RATE : -MAX_RATE) :
		      clamp((int64_t)(dd * (1ll << 32) / b), MAX_RATE);
	}
	for (i = W_RAW; i <= W_MONO; i++) {
		struct wall_track *w = &t->wt[i];

		if (w->measured)
			w->rate = (int64_t)((((__int128)1 << 32) + w->rate) * (1ll << 32) /
					    ((1ll << 32) + k)) - (1ll << 32);
		else
			w->rate = raw + (i == W_MONO && t->wfreq_ok ? t->wfreq : 0);
	}
}

/* The kernel's clock i at ns, extrapolated from the sample. */
static uint64_t kernel_at(const struct tsc *t, const struct wall_sample *x, int i, uint64_t ns)
{
	struct wall_seg g = { .s = x->l[i], .b = x->c[i],
			      .rate = t->wt[i == W_RAW ? W_RAW : W_MONO].rate };

	return seg_at(&g, ns);
}

/* REALTIME, BOOTTIME and TAI are MONOTONIC plus an offset that the kernel
 * changes only by a step (clock_settime(), a leap second, ADJ_TAI, sleep
 * time at resume).  Did it move by more than the readings can be off? */
static int stepped(struct tsc *t, const struct wall_sample *x, int i, bool first)
{
	struct wall_track *w = &t->wt[i];
	int64_t off = (int64_t)(x->c[i] - kernel_at(t, x, W_MONO, x->l[i]));
	uint64_t width = x->w[i] + x->w[W_MONO];
	int64_t moved = off - w->off;
	bool step = !first && llabs(moved) > STEP_NS + (int64_t)(width + w->w);

	w->off = off;
	w->w = width;
	if (!step || (i == W_BOOT && moved < 0))	/* BOOTTIME only jumps ahead */
		return 0;
	return moved > 0 ? 1 : -1;
}

/* Did BOOTTIME move ahead of MONOTONIC since the last anchor (a resume)? */
static bool resumed(const struct tsc *t, const struct wall_sample *x)
{
	const struct wall_track *w = &t->wt[W_BOOT];
	int64_t off = (int64_t)(x->c[W_BOOT] - x->c[W_MONO]) -
		      (int64_t)(x->l[W_BOOT] - x->l[W_MONO]);

	return off - w->off > STEP_NS + (int64_t)(x->w[W_BOOT] + x->w[W_MONO] + w->w);
}

/* The next segment of clock i from T: continue from the mapping, slewing
 * toward the kernel's clock, or step. */
static void plan(struct tsc *t, const struct wall_sample *x, int i, uint64_t T,
		 int step, struct wall_map *m)
{
	struct wall_seg g = { .s = T, .rate = t->wt[i == W_RAW ? W_RAW : W_MONO].rate,
			      .back = m->cur.back };
	uint64_t k = kernel_at(t, x, i, T), f = map_at(m, T);
	int64_t e = (int64_t)(k - f);

	if (i == W_MONO)
		t->info.wall_error_ns = e;
	t->wt[i].back = false;
	if (step || (e > JUMP_NS && i != W_REAL && i != W_TAI)) {
		t->info.clock_steps++;
		t->info.last_clock_step_ns = e;
	}
	if (step < 0 || (e > 0 && (step > 0 || (e > JUMP_NS && i != W_REAL && i != W_TAI)))) {
		/* Only a step back (clock_settime()) goes back; a step ahead
		 * (a resume) leaves a mapping already there to slew. */
		g.b = k;
		t->wt[i].back = e < 0;
		g.back += e < 0 ? (uint64_t)-e : 0;
	} else if (e < -JUMP_NS) {
		/* Ahead by more (the TSC ran through a suspend, or jumped
		 * ahead before a read saw it; for REALTIME and TAI, which
		 * the kernel did not step, the same): stand still until the
		 * kernel's clock is there, then go on at its rate. */
		g.b = f;
		g.slew = -((1ll << 32) + g.rate);
		g.len = (uint64_t)((__int128)-e * (1ll << 32) / ((1ll << 32) + g.rate));
	} else {
		g.b = f;
		g.slew = clamp((int64_t)((__int128)e * (1ll << 32) / INTERVAL_NS), MAX_SLEW);
		if (g.slew)
			g.len = (uint64_t)((__int128)e * (1ll << 32) / g.slew);
	}
	m->prev = m->cur;
	m->cur = g;
	m->floor_from = UINT64_MAX;
}

/* The first anchor: each clock's mapping starts at its reading. */
static void start(struct tsc *t, const struct wall_sample *x, struct wall_map *m, int i)
{
	struct wall_seg g = { .s = x->l[i], .b = x->c[i],
			      .rate = t->wt[i == W_RAW ? W_RAW : W_MONO].rate,
			      .back = m->cur.back };

	m->prev = m->cur = g;
	m->floor_from = UINT64_MAX;
}

/* The steepest any segment of a mapping runs: its rate, plus its slew
 * while that lasts. */
static int64_t steepest(const struct wall_map *m, int64_t r)
{
	const struct wall_seg *g[3] = { &m->prev, &m->cur, &m->floor };
	int k;

	for (k = 0; k < (m->floor_from == UINT64_MAX ? 2 : 3); k++)
		if (g[k]->rate + (g[k]->slew > 0 ? g[k]->slew : 0) > r)
			r = g[k]->rate + (g[k]->slew > 0 ? g[k]->slew : 0);
	return r;
}

/* The highest library ns (of the copy in use) that reads may have
 * mapped by the writer's now x: x, but after a jump ahead, reads stop
 * where jumped_read() stops them. */
static uint64_t cap_at(const struct tsc *t, uint64_t x)
{
	const struct wall_est *e = &t->jump_est;
	uint64_t hi, lim;

	if (!t->jumped_ahead)
		return x;
	hi = est_high(e, tsc__mono_raw());
	lim = x < e->slow_at ? x : e->slow_at;
	hi = hi > lim ? hi : lim;
	return hi < x ? hi : x;
}

/* After a jump ahead, below from n's segment before T is the old one
 * moved on (rebase()), below what reads mapped: the bridge starts where
 * held reads do (floor_jumped()), no lower than they are held, and
 * meets the bridge from the writer's now. */
static void bridge_jumped(const struct tsc *t, struct wall_map *m, int i)
{
	const struct wall_hold *h = &t->wall_hold[i];
	uint64_t xs = h->x > SKEW_NS ? h->x - SKEW_NS : 0, at, c;

	if (xs >= m->floor_from)
		return;
	at = seg_at(&m->floor, xs);
	c = h->c - m->floor.back;
	m->floor.b = at > c ? at : c;
	m->floor.s = xs;
	m->floor_from = xs;
}

/* Readers of the copies replaced in this anchor map ns up to the writer's
 * now (+ skew, for a CPU whose TSC is ahead).  If that reached T, where
 * their mappings and the new one part, start the new segments further
 * on, at T = now + 50 us, and until then bridge from the highest of them
 * at now, rising as steeply as the steepest of them: at every ns from now
 * on, the new copy is then at least as high as any copy readers may
 * still be using, however long the writer takes to send them to it, and
 * it never stands still (as a constant floor would, from the writer's
 * now to wherever that value lay: the flat a reader of tests/lib/wall.c
 * saw, up to 1 us after a stall).  Below now the bridge, which starts
 * at the first T, from, only ever raises the old segments (below from,
 * every copy agrees).  Not when the kernel set the clock back (REALTIME,
 * TAI): that step is the one these clocks take.  Says so. */
static bool behind(struct tsc *t, const struct wall_copy *old, struct wall_copy *n,
		   uint64_t from)
{
	uint64_t now = t->wall_now(t), hi, b, T, cap;
	int i;

	if (now + SKEW_NS < t->wall_T)
		return false;
	/* After a jump ahead the cap reads RAW, which may be a slow call
	 * (a guest's emulated clock): once, and before T is taken, so that
	 * T still leads the writer's next look.  Taken per clock and before,
	 * the writer found itself behind at every look, and held readers. */
	cap = cap_at(t, now);
	T = t->wall_now(t) + AHEAD_NS;
	for (i = 0; i < W_NR; i++) {
		struct wall_map *m = &n->m[i];
		const struct wall_map *o = &old->m[i];
		uint64_t done = T - m->cur.s;

		b = seg_at(&m->cur, T);
		if (!t->wt[i].back) {
			uint64_t oc = map_at(o, cap);

			hi = map_at(m, now) > oc ? map_at(m, now) : oc;
			m->floor = (struct wall_seg){ .s = now, .b = hi,
						      .rate = steepest(o, steepest(m, INT64_MIN)),
						      .back = m->prev.back };
			m->floor_from = from;
			if (t->jumped_ahead)
				bridge_jumped(t, m, i);
			if (seg_at(&m->floor, T) > b)
				b = seg_at(&m->floor, T);
			if (seg_at(&m->prev, T) > b)
				b = seg_at(&m->prev, T);
		} else {
			m->floor_from = UINT64_MAX;
		}
		m->cur.b = b;
		m->cur.len = m->cur.len > done ? m->cur.len - done : 0;
		m->cur.s = T;
	}
	t->wall_T = T;
	return true;
}

/* Step 1 of a publication: readers go to copy 1, the one being
 * replaced, through the marks (held()). */
static void open_marks(struct tsc *t)
{
	int i;

	for (i = 0; i < W_NR; i++)
		__atomic_store_n(&t->wall_mark.v[i], MARK_OPEN | (uint32_t)(t->wall.seq + 1),
				 __ATOMIC_RELAXED);
	tsc__latch_turn(&t->wall.seq);		/* readers: c[1], the marks */
}

/* The least rate (2^-32 units, slope 1 + r) of a segment, its slew
 * included while it lasts; r is never below -2^32 (slope 0: standing
 * still). */
static int64_t least_rate(const struct wall_seg *g, int64_t r)
{
	int64_t v = g->rate + (g->slew < 0 ? g->slew : 0);

	return v < r ? v : r;
}

/* Step 2: each clock's mark closes at c, the held copy h's reading at
 * the writer's now plus the skew, x (counted with the steps back), or
 * the mark if higher.  Every value handed out so far is at most c: reads
 * before the turn read no later than the writer's now (a CPU whose TSC
 * is ahead by up to the skew), reads after it raised the mark.  From
 * there held reads follow a line from c at x that rises at the least
 * rate of any segment of h or n from x on, so that n, which starts at
 * or above it (raise_to_marks()), stays at or above it.  The writer's
 * clock is read once; it tries again only as often as readers raise the
 * mark meanwhile.  No readers yet (a first mapping): nothing to hold. */
static void close_marks(struct tsc *t, const struct wall_copy *h, const struct wall_copy *n)
{
	uint64_t x = t->wall_now(t) + SKEW_NS, c0, c, m;
	uint64_t cap = cap_at(t, x);	/* after a jump ahead: jumped_read() */
	int i;

	for (i = 0; i < W_NR; i++) {
		const struct wall_map *g = &h->m[i];
		struct wall_hold *hd = &t->wall_hold[i];
		int64_t r = least_rate(&n->m[i].cur, least_rate(&g->cur, INT64_MAX));

		if (x < g->cur.s)
			r = least_rate(&g->prev, r);
		if (g->floor_from != UINT64_MAX && x < g->cur.s)
			r = least_rate(&g->floor, r);
		if (r < -(1ll << 32))
			r = -(1ll << 32);
		c0 = h->valid ? map_at(g, cap) + (cap >= g->cur.s ? g->cur.back : g->prev.back) : 0;
		m = __atomic_load_n(&t->wall_mark.v[i], __ATOMIC_ACQUIRE);
		for (;;) {
			uint64_t xc = x;

			c = !(m & MARK_OPEN) && m > c0 ? m : c0;
			/* Readers raised the mark past the held copy at x (the
			 * writer was preempted after it looked): the line
			 * begins where that copy reaches c, or before (at its
			 * steepest), so that it is no higher than need be. */
			if (c > c0 && h->valid)
				xc += (uint64_t)((unsigned __int128)(c - c0) << 32) /
				      (uint64_t)((1ll << 32) + steepest(g, 0));
			/* Readers take the line once they see the mark closed. */
			__atomic_store_n(&hd->x, xc, __ATOMIC_RELAXED);
			__atomic_store_n(&hd->c, c, __ATOMIC_RELAXED);
			__atomic_store_n(&hd->r, r, __ATOMIC_RELAXED);
			if (__atomic_compare_exchange_n(&t->wall_mark.v[i], &m, c | MARK_CLOSED,
							false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				break;
		}
	}
}

/* After a jump ahead, n's segment before T is the old one moved on
 * (rebase()), below what reads mapped meanwhile; reads of n are of now,
 * from the writer's clock (less the skew) on: from there, n is at least
 * the line held reads follow, from where they are held (c, the highest
 * value handed out), and its last segment no lower.  Not where behind()
 * bridged already. */
static void floor_jumped(const struct tsc *t, struct wall_map *m, int i)
{
	const struct wall_hold *h = &t->wall_hold[i];
	uint64_t xs = h->x > SKEW_NS ? h->x - SKEW_NS : 0, y;
	int64_t d;

	if (m->floor_from == UINT64_MAX) {
		m->floor = (struct wall_seg){ .s = xs, .b = h->c - m->cur.back, .rate = h->r,
					      .back = m->cur.back };
		m->floor_from = xs;
	}
	y = m->cur.s > xs ? m->cur.s : xs;
	d = (int64_t)(seg_at(&m->floor, y) - seg_at(&m->cur, y));
	if (d > 0)
		m->cur.b += (uint64_t)d;
}

/* Step 3, before readers are sent to n: each clock's last segment is,
 * from where the line held reads follow begins (or its own start, if
 * later) on, no lower than that line (counted with the steps back), and
 * rises at least as fast, so that no held read is above n there.  Below
 * it held reads are the held copy's own, and n is at or above that copy
 * from the writer's now on (it is that copy below n's T, and behind()
 * bridges when the writer is past T).  Normally a no-op: n's segments
 * start ahead of the writer's clock plus skew, where the held copy is
 * above the line already; this raises one only where the writer cannot
 * see why (a mark raised from further ahead than the skew). */
static void raise_to_marks(const struct tsc *t, struct wall_copy *n)
{
	int i;

	for (i = 0; i < W_NR; i++) {
		struct wall_seg *g = &n->m[i].cur;
		uint64_t y = g->s > t->wall_hold[i].x ? g->s : t->wall_hold[i].x;
		int64_t d = (int64_t)(hold_at(&t->wall_hold[i], y) - (seg_at(g, y) + g->back));

		if (d > 0)
			g->b += (uint64_t)d;
		if (t->jumped_ahead)
			floor_jumped(t, &n->m[i], i);
	}
}

/* Publish n in place of the copy readers use, old (NULL: the mapping
 * starts anew), whose readers may be anywhere below the writer's clock,
 * in three steps, as publish.c changes the line: readers are sent to
 * the old copy through the marks, which close where the old copy is at
 * the writer's now; n is rewritten for as long as the writer finds it
 * stalled past n's T (behind()); then readers are sent to n.  A stall
 * after that last look is caught by the marks: held readers stand
 * still, at most HOLD_NS, then run on HOLD_NS behind, and n is at or
 * above them as long as the stall times the change of rate is below
 * HOLD_NS (1 s for rates 1000 ppm apart; 1 ms where n stands still).  A
 * stall caught afterwards starts the segments again further on, from
 * no lower than the copies before handed out. */
static void publish(struct tsc *t, const struct wall_copy *old, struct wall_copy *n)
{
	uint64_t from = t->wall_T;
	bool again;

	do {
		open_marks(t);				/* readers: c[1] */
		close_marks(t, &t->wall.c[1], n);
		do {
			raise_to_marks(t, n);
			store_copy(&t->wall.c[0], n);
			store_est(&t->wall_est[0], &t->est);
		} while (old && behind(t, old, n, from));
		if (t->wall_stall)			/* a test: after the last look */
			t->wall_stall(t);
		tsc__latch_turn(&t->wall.seq);		/* readers: c[0] */
		store_copy(&t->wall.c[1], n);
		store_est(&t->wall_est[1], &t->est);
		again = old && behind(t, old, n, from);
	} while (again);
}

/* Library ns jumped ahead by r: the mapping moves on with them, so that
 * it maps them where it mapped them before the jump. */
static void rebase(struct wall_copy *n, uint64_t r)
{
	int i;

	for (i = 0; i < W_NR; i++) {
		struct wall_map *m = &n->m[i];

		m->prev.s += r;
		m->cur.s += r;
		m->floor.s += r;
		if (m->floor_from != UINT64_MAX)
			m->floor_from += r;
	}
}

int tsc__wall_anchor(struct tsc *t, const struct wall_sample *x)
{
	struct wall_copy old = t->wall.c[t->wall.seq & 1], n = old;
	bool first = !old.valid, rescaled;
	uint64_t T;
	int i;

	if (t->rebase && !first)
		rebase(&n, (uint64_t)t->rebase);
	if (!writer_now(t, &T)) {
		first = true;		/* library ns went back: start anew */
		t->wall_T = 0;
		t->info.clock_steps++;
	}
	T += AHEAD_NS;
	/* A mapping that starts anew takes REALTIME and TAI to the kernel's:
	 * where that is below the old mapping, a step back (the mark holds
	 * the other clocks). */
	for (i = W_REAL; first && old.valid && i < W_NR; i += W_TAI - W_REAL) {
		uint64_t f = map_at(&old.m[i], x->l[i]);

		if (f > x->c[i])
			n.m[i].cur.back += f - x->c[i];
	}
	rescaled = t->rescale != 0 || t->rebase;	/* rates: measure anew */
	t->rebase = 0;
	if (rescaled && !first)
		rescale(t, t->rescale);
	t->rescale = 0;
	rates(t, x, first, !first && (rescaled || resumed(t, x)));
	for (i = 0; i < W_NR; i++) {
		int step = i >= W_REAL ? stepped(t, x, i, first) : 0;

		if (first)
			start(t, x, &n.m[i], i);
		else
			plan(t, x, i, T, step, &n.m[i]);
	}
	n.valid = 1;
	if (!first)
		t->wall_T = T;
	publish(t, first ? NULL : &old, &n);
	t->info.anchors++;
	return 0;
}

static void measure(struct tsc *t, clockid_t clk, uint64_t *l, uint64_t *c, uint64_t *w)
{
	uint64_t l0, l1, cn;
	int i;

	*w = UINT64_MAX;
	for (i = 0; i < 5; i++) {
		l0 = tsc_now_ns_ordered(t);
		cn = tsc__clock_ns(clk);
		l1 = tsc_now_ns_ordered(t);
		if (l1 >= l0 && l1 - l0 < *w) {
			*w = l1 - l0;
			*l = l0 + (l1 - l0) / 2;
			*c = cn;
		}
	}
}

/* CLOCK_MONOTONIC_RAW while the TSC is in use: read between two ordered
 * TSC reads, the narrowest of 8, and the library's ns from the same
 * ticks (the state cannot change: the caller holds the lock every
 * publisher takes).  The bracket is also the calibration's next one
 * (decide.c): the refinements take no readings of their own; and the
 * rate check's (rate.c), once tsc__reanchor() looked for a jump. */
static void measure_raw_tsc(struct tsc *t, uint64_t *l, uint64_t *c, uint64_t *w)
{
	struct bracket b = { 0 }, s;
	int i;

	for (i = 0; i < 8; i++) {
		s.t0 = tsc__rdtsc_lfence();
		s.ns = tsc__mono_raw();
		s.t1 = tsc__rdtsc_lfence();
		if (s.t1 >= s.t0 && (!b.t1 || s.t1 - s.t0 < b.t1 - b.t0))
			b = s;
	}
	if (!b.t1) {		/* TSC reads never in order: as any clock */
		measure(t, CLOCK_MONOTONIC_RAW, l, c, w);
		return;
	}
	*l = tsc_ticks_to_ns(t, b.t0 + (b.t1 - b.t0) / 2);
	*w = tsc_ticks_to_ns(t, b.t1) - tsc_ticks_to_ns(t, b.t0);
	*c = b.ns;
	t->anchor_b = b;
	t->anchor_b_new = true;
}

/* adjtimex()'s frequency and tick as a rate in 2^-32 units: MONOTONIC's
 * rate against CLOCK_MONOTONIC_RAW, but for the offset being slewed. */
static bool ntp_freq(int64_t *rate)
{
	struct timex tx = { .modes = 0 };
	int64_t hz = sysconf(_SC_CLK_TCK), usec = 1000000 / (hz > 0 ? hz : 100);

	if (adjtimex(&tx) < 0)
		return false;
	*rate = (int64_t)tx.freq * 65536 / 1000000 +
		(int64_t)((__int128)(tx.tick - usec) * (1ll << 32) / usec);
	return true;
}

static void measure_all(struct tsc *t, struct wall_sample *x)
{
	int i;

	for (i = 0; i < W_NR; i++)
		if (i == W_RAW && tsc_in_use(t))
			measure_raw_tsc(t, &x->l[i], &x->c[i], &x->w[i]);
		else
			measure(t, wall_clk[i], &x->l[i], &x->c[i], &x->w[i]);
}

/* Did the TSC jump since the last anchor?  Library ns minus RAW moved by
 * more than 1 ms, 1000 ppm of the time since, and both widths (no
 * factors are that far off: rate.c corrects them).  Back: the line
 * steps forward to where it should be, at the top of its drift
 * (est_high(), as readers that saw the jump mapped), and the anchor is
 * measured again.  Ahead: the line stays (reads of it went ahead), and
 * the mapping moves on with it (rebase()), from no lower than reads
 * mapped meanwhile (cap_at()).  Either way the rate is measured anew. */
static void check_jump(struct tsc *t, struct wall_sample *x)
{
	int64_t d = (int64_t)(x->l[W_RAW] - x->c[W_RAW]) - t->scale_offset, err;
	uint64_t el = x->c[W_RAW] - t->last_anchor_raw, thr;

	if (!t->est.tsc || !tsc_in_use(t) || !t->last_anchor_raw)
		return;
	/* The factors in use may run off RAW by what the rate check
	 * measured up to the last anchor (not across this one); until it
	 * has, by up to 10% (MAX_RATE: a frequency far off). */
	if (!tsc__rate_error(&t->rate, &t->d.f, &err))
		err = 100000000;
	thr = JUMP_NS + el / 1000 + x->w[W_RAW] + t->est.w +
	      (uint64_t)((unsigned __int128)el * (uint64_t)llabs(err) / 1000000000);
	if ((uint64_t)llabs(d) <= thr)
		return;
	t->info.tsc_jumps++;
	t->info.last_tsc_jump_ns = d;
	tsc__rate_restart(&t->rate);
	if (d < 0) {
		/* To where reads that saw the jump map (jumped_read()), by
		 * RAW at the bracket's end: c may have been read at its
		 * start. */
		tsc__step(t, est_high(&t->est, x->c[W_RAW] + x->w[W_RAW] / 2) - x->l[W_RAW]);
		measure_all(t, x);
		return;
	}
	t->jump_est = t->est;
	t->jump_est.scale = t->scale_offset;
	t->jumped_ahead = true;
	t->rebase = d;
}

int tsc__reanchor(struct tsc *t)
{
	struct wall_sample x = { .freq_ok = false };
	bool watched = !t->opts.no_watcher && !__atomic_load_n(&t->rearm, __ATOMIC_RELAXED);
	uint64_t slow;

	if (!tsc_in_use(t))
		tsc__rate_reset(&t->rate);	/* measured only while in use */
	measure_all(t, &x);
	check_jump(t, &x);
	if (tsc_in_use(t))	/* the bracket measure_raw_tsc() took, after the check */
		tsc__rate_bracket(&t->rate, &t->anchor_b);
	x.freq_ok = ntp_freq(&x.freq);
	/* With a watcher, reads past when the next anchor is due, and a
	 * grace, look for a jump ahead; a forked child's anchor themselves
	 * (child_anchor()); others never go out of line. */
	slow = watched ? x.l[W_RAW] + INTERVAL_NS + SLOW_GRACE_NS :
	       __atomic_load_n(&t->rearm, __ATOMIC_RELAXED) ? x.l[W_RAW] + INTERVAL_NS :
	       UINT64_MAX;
	t->est = (struct wall_est){ .scale = (int64_t)(x.l[W_RAW] - x.c[W_RAW]),
				    .raw = x.c[W_RAW], .w = x.w[W_RAW],
				    .ppb = t->d.f.err_ppb + 1000, .slow_at = slow,
				    .tsc = tsc_in_use(t) };
	tsc__wall_anchor(t, &x);
	t->jumped_ahead = false;
	__atomic_store_n(&t->anchor_next, x.l[W_RAW] + INTERVAL_NS, __ATOMIC_RELAXED);
	__atomic_store_n(&t->wall.slow_from, slow, __ATOMIC_RELAXED);
	t->last_anchor_raw = tsc__mono_raw();
	t->scale_offset = (int64_t)(x.l[W_RAW] - x.c[W_RAW]);
	t->info.scale_offset_ns = t->scale_offset;
	return 0;
}
