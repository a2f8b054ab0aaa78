// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Calibration against CLOCK_MONOTONIC_RAW.  Each sample brackets one
 * clock_gettime() between two ordered TSC reads; the clock was read
 * somewhere inside the bracket, so half its width bounds the error of
 * that sample.  The narrowest bracket of a burst is kept at the start;
 * at the end bursts repeat until the bound over the elapsed interval is
 * below 1 ppm or the time is up.
 */
#include <errno.h>
#include <stdio.h>

#include "internal.h"

struct bracket {
	uint64_t t0, t1, ns;
};

static void best(struct bracket *b, int n)
{
	struct bracket s;
	int i;

	b->t1 = b->t0 = 0;
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

int tsc__calibrate(struct tsc *t, struct calib *c, uint64_t max_ns)
{
	struct bracket a = { 0 }, b = { 0 };
	uint64_t start = tsc__mono_raw(), d, n, w, err_ppb = UINT64_MAX;
	unsigned __int128 m;

	(void)t;
	c->done = true;
	c->ok = false;
	best(&a, 32);
	for (;;) {
		best(&b, 8);
		if (b.ns <= a.ns || b.t0 <= a.t1) {
			if (tsc__mono_raw() - start >= max_ns) {
				snprintf(c->why, sizeof(c->why),
					 "calibration: TSC or clock did not advance");
				return -EIO;
			}
			continue;
		}
		d = (b.t0 + (b.t1 - b.t0) / 2) - (a.t0 + (a.t1 - a.t0) / 2);
		n = b.ns - a.ns;
		w = (a.t1 - a.t0) / 2 + (b.t1 - b.t0) / 2 + 1;
		err_ppb = (uint64_t)((unsigned __int128)w * 1000000000 / d);
		if (n >= 2000000 && err_ppb <= PPB_GOAL)
			break;
		if (tsc__mono_raw() - start >= max_ns - max_ns / 20)
			break;
	}
	c->took_ns = tsc__mono_raw() - start;
	/* ns per 2^32 ticks, as the kernel's vDSO factor is given. */
	m = ((unsigned __int128)n << 32) / d;
	c->f.khz = (uint64_t)((unsigned __int128)d * 1000000 / n);
	if (c->f.khz < 1000 || c->f.khz > 100000000 || !m || m >> 63) {
		snprintf(c->why, sizeof(c->why),
			 "calibration: implausible %llu kHz",
			 (unsigned long long)c->f.khz);
		return -ERANGE;
	}
	c->f.src = TSC_SRC_CALIBRATION;
	c->f.mult = (uint64_t)m;
	c->f.shift = 32;
	c->f.err_ppb = err_ppb;
	c->ok = true;
	snprintf(c->why, sizeof(c->why),
		 "calibration: %llu kHz in %llu us, error bound %llu.%03llu ppm%s",
		 (unsigned long long)c->f.khz,
		 (unsigned long long)c->took_ns / 1000,
		 (unsigned long long)err_ppb / 1000,
		 (unsigned long long)err_ppb % 1000,
		 err_ppb <= PPB_GOAL ? "" : " (goal 1 ppm not reached)");
	return 0;
}
