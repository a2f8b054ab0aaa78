// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Mapping library ns to the kernel's clocks.  Each anchor pairs a library
 * reading with the clock, taken from the narrowest of a few brackets.
 * Between anchors the mapping extrapolates with the rate measured from
 * the previous anchor, so an NTP frequency correction (up to 500 ppm)
 * does not become an error that grows for a whole second.  A clock step
 * (settimeofday, leap) restarts the rate.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

static const clockid_t wall_clk[W_NR] = {
	CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
};

#define MAX_ADJ ((int64_t)(1000ll << 32) / 1000000)	/* 1000 ppm */

static int64_t extrapolate(const struct wall_anchor *a, uint64_t ns)
{
	int64_t d = (int64_t)(ns - a->l0);

	return (int64_t)a->c0 + d + (int64_t)(((__int128)d * a->adj) >> 32);
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

/* Field by field with atomics: tsc_ns_to_clock() may be reading them. */
static void store(struct wall_anchor *w, const struct wall_anchor *a)
{
	__atomic_store_n(&w->valid, a->valid, __ATOMIC_RELAXED);
	__atomic_store_n(&w->l0, a->l0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->c0, a->c0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->adj, a->adj, __ATOMIC_RELAXED);
}

int tsc__wall_anchor(struct tsc *t, const struct wall_sample *x)
{
	struct wall_anchor nw[W_NR];
	int i;

	for (i = 0; i < W_NR; i++) {
		const struct wall_anchor *o = &t->w[i];
		struct wall_anchor *a = &nw[i];
		uint64_t span;

		a->l0 = x->l[i];
		a->c0 = x->c[i];
		a->valid = true;
		a->adj = o->valid ? o->adj : 0;
		span = a->l0 - o->l0;
		if (!o->valid || a->l0 <= o->l0)
			continue;
		if (llabs(extrapolate(o, a->l0) - (int64_t)a->c0) > 1000000) {
			a->adj = 0;	/* stepped: the old rate means nothing */
		} else if (span >= 100000000) {
			int64_t dc = (int64_t)(a->c0 - o->c0) - (int64_t)span;

			a->adj = (int64_t)((__int128)dc * (1ll << 32) / (int64_t)span);
			if (a->adj > MAX_ADJ)
				a->adj = MAX_ADJ;
			if (a->adj < -MAX_ADJ)
				a->adj = -MAX_ADJ;
		}
	}
	__atomic_store_n(&t->wseq, t->wseq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < W_NR; i++)
		store(&t->w[i], &nw[i]);
	__atomic_store_n(&t->wseq, t->wseq + 1, __ATOMIC_RELEASE);
	t->info.anchors++;
	return 0;
}

int tsc__reanchor(struct tsc *t)
{
	struct wall_sample x = { .freq_ok = false };
	int i;

	for (i = 0; i < W_NR; i++)
		measure(t, wall_clk[i], &x.l[i], &x.c[i], &x.w[i]);
	tsc__wall_anchor(t, &x);
	t->last_anchor_raw = tsc__mono_raw();
	t->scale_offset = (int64_t)(x.l[W_RAW] - x.c[W_RAW]);
	t->info.scale_offset_ns = t->scale_offset;
	return 0;
}

TSC_API int tsc_reanchor(struct tsc *t)
{
	int err;

	if (!t)
		return tsc__set_errno(-EINVAL);
	tsc__lock(t);
	err = tsc__reanchor(t);
	pthread_mutex_unlock(&t->lock);
	return err;
}

TSC_API int tsc_ns_to_clock(struct tsc *t, uint64_t ns, clockid_t clk, uint64_t *out)
{
	struct wall_anchor a;
	uint32_t seq;
	int i;

	if (!t || !out)
		return tsc__set_errno(-EINVAL);
	for (i = 0; i < W_NR && wall_clk[i] != clk; i++)
		;
	if (i == W_NR)
		return tsc__set_errno(-EINVAL);
	do {
		seq = __atomic_load_n(&t->wseq, __ATOMIC_ACQUIRE);
		a.valid = __atomic_load_n(&t->w[i].valid, __ATOMIC_RELAXED);
		a.l0 = __atomic_load_n(&t->w[i].l0, __ATOMIC_RELAXED);
		a.c0 = __atomic_load_n(&t->w[i].c0, __ATOMIC_RELAXED);
		a.adj = __atomic_load_n(&t->w[i].adj, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || __atomic_load_n(&t->wseq, __ATOMIC_RELAXED) != seq);
	if (!a.valid)
		return tsc__set_errno(-EAGAIN);
	*out = (uint64_t)extrapolate(&a, ns);
	return 0;
}

TSC_API int tsc_clock_gettime(struct tsc *t, clockid_t clk, uint64_t *out)
{
	if (!t)
		return tsc__set_errno(-EINVAL);
	return tsc_ns_to_clock(t, tsc_now_ns(t), clk, out);
}
