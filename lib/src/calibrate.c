// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Calibration against CLOCK_MONOTONIC_RAW.  Each sample brackets one
 * clock_gettime() between two ordered TSC reads; the clock was read
 * somewhere inside the bracket, so half its width bounds the error of
 * that sample.  The narrowest bracket of a burst is kept at the start;
 * later bursts measure the rate over the whole interval since, so the
 * bound falls as 1/t: under 1 ppm within tens of ms where a bracket is
 * tens of ns wide, and on from there as the watcher refines it.  Once
 * the TSC is in use, the refinements take no bursts of their own: each
 * wall anchor reads CLOCK_MONOTONIC_RAW between two ordered TSC reads,
 * the narrowest of 8, which is such a bracket (wall.c, decide.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void best(struct bracket *b, int n)
{
	struct bracket s;
	int i;

	*b = (struct bracket){ 0 };
	for (i = 0; i < n; i++) {
		s.t0 = tsc__rdtsc_lfence();
		s.ns = tsc__mono_raw();
		s.t1 = tsc__rdtsc_lfence();
		if (s.t1 < s.t0)
			continue;
		if (i == 0 || b->t1 < b->t0 || s.t1 - s.t0 < b->t1 - b->t0)
			*b = s;
	}
}

#define PPB_GOAL 1000

static void say(struct calib *c, const char *tail)
{
	snprintf(c->why, sizeof(c->why),
		 "calibration: %llu kHz over %llu us, error bound %llu.%03llu ppm%s",
		 (unsigned long long)c->f.khz, (unsigned long long)c->took_ns / 1000,
		 (unsigned long long)c->f.err_ppb / 1000,
		 (unsigned long long)c->f.err_ppb % 1000, tail);
}

/* The first bracket: the start of every later measurement. */
void tsc__calib_begin(struct calib *c)
{
	struct bracket a;

	best(&a, 32);
	tsc__calib_from(c, &a);
}

/* A measurement that starts from bracket a (the rate check's, rate.c). */
void tsc__calib_from(struct calib *c, const struct bracket *a)
{
	memset(c, 0, sizeof(*c));
	c->done = true;
	c->a = *a;
	c->start_ns = c->a.ns;
	snprintf(c->why, sizeof(c->why), "calibration: started");
}

/* One more bracket, the narrowest of a burst or the one given (an
 * anchor's): the factors over the interval since the first bracket,
 * kept if their bound is lower than the last one's.  The bound is the
 * two brackets' half-widths over the interval, whichever took them.
 * Returns 1 if they improved, 0 if not, -EIO if TSC or clock did not
 * advance, -ERANGE if the rate is implausible. */
int tsc__calib_update(struct calib *c, const struct bracket *given)
{
	const struct bracket *a = &c->a;
	struct bracket b;
	uint64_t d, n, w, err_ppb, khz;
	unsigned __int128 m;

	if (given) {
		b = *given;
	} else {
		best(&b, 8);
		c->bursts++;
	}
	if (b.t1 < b.t0 || b.ns <= a->ns || b.t0 <= a->t1)
		return -EIO;
	d = (b.t0 + (b.t1 - b.t0) / 2) - (a->t0 + (a->t1 - a->t0) / 2);
	n = b.ns - a->ns;
	w = (a->t1 - a->t0) / 2 + (b.t1 - b.t0) / 2 + 1;
	err_ppb = (uint64_t)(((unsigned __int128)w * 1000000000 + d - 1) / d);
	/* ns per 2^32 ticks, as the kernel's vDSO factor is given. */
	m = ((unsigned __int128)n << 32) / d;
	khz = (uint64_t)((unsigned __int128)d * 1000000 / n);
	if (khz < 1000 || khz > 100000000 || !m || m >> 63) {
		snprintf(c->why, sizeof(c->why), "calibration: implausible %llu kHz",
			 (unsigned long long)khz);
		return -ERANGE;
	}
	if (c->f.src && err_ppb >= c->f.err_ppb)
		return 0;
	c->f = (struct factors){ TSC_SRC_CALIBRATION, (uint64_t)m, 32, khz, err_ppb };
	c->took_ns = n;
	c->ok = c->ok || err_ppb <= PPB_GOAL;
	say(c, c->ok ? "" : " (used from 1 ppm on)");
	return 1;
}
