// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The rate check.  Factors from a frequency are off by its rounding at
 * best, and a frequency can be off by more (a hypervisor's, a dump's):
 * 70 ppm is 4.2 ms a minute.  So while the TSC is in use, the wall
 * anchors' brackets (CLOCK_MONOTONIC_RAW between two ordered TSC reads,
 * once a second, at first sooner: watch.c) measure its rate, as a calibration does, from the
 * first bracket on: the bound falls as 1/t.  Factors whose rate lies
 * off the measured one by more than their bound plus the measurement's
 * give way to the measured factors, which publish.c brings in as a slew
 * (up to 1000 ppm; beyond, a switch).
 * The correction stays while the measurement agrees with it, and is
 * replaced when it does not, or when the measurement has become twice
 * as tight: after a few seconds it is within a few ppb.  Other factors
 * (the kernel's changed) are measured anew: the kernel's clock may have
 * changed its rate with them.  A calibration
 * in use is refined the same way already (decide.c): not checked here.
 */
#include <string.h>

#include "internal.h"

#define MIN_SPAN_NS 40000000ull	/* measure over at least this (watch.c:
					 * the first anchors are 50 ms apart) */

/* Each anchor's bracket, while the TSC is in use (wall.c). */
void tsc__rate_bracket(struct rate_check *r, const struct bracket *b)
{
	if (!r->m.done)
		tsc__calib_from(&r->m, b);
	else
		tsc__calib_update(&r->m, b);
}

/* The TSC went out of use, or jumped: a measurement across that says
 * nothing, and neither does the correction it made. */
void tsc__rate_reset(struct rate_check *r)
{
	uint64_t n = r->corrections;

	memset(r, 0, sizeof(*r));
	r->corrections = n;
}

/* The TSC jumped: a measurement across the jump says nothing, but the
 * rate did not change with it: the correction stays. */
void tsc__rate_restart(struct rate_check *r)
{
	memset(&r->m, 0, sizeof(r->m));
}

/* Rate of factors f minus rate of factors m, in ppb of m's (clamped to
 * +-1e9: such factors are far off either way). */
static int64_t rate_diff_ppb(const struct factors *f, const struct factors *m)
{
	__int128 a = (__int128)tsc__rate_of(f->mult, f->shift);
	__int128 b = (__int128)tsc__rate_of(m->mult, m->shift), d = a - b;

	if (d >= b)
		return 1000000000;
	if (-d >= b)
		return -1000000000;
	return (int64_t)(d * 1000000000 / b);
}

static uint64_t abs64(int64_t v)
{
	return v < 0 ? (uint64_t)-v : (uint64_t)v;
}

/* How far factors f run off the measured rate, ppb; false if there is
 * no measurement yet. */
bool tsc__rate_error(const struct rate_check *r, const struct factors *f, int64_t *ppb)
{
	if (!r->m.f.src || r->m.took_ns < MIN_SPAN_NS)
		return false;
	*ppb = rate_diff_ppb(f, &r->m.f);
	return true;
}

/* Check factors f, as picked, against the measurement.  Returns 0 if
 * there is none yet, 1 if f stands, 2 if f was replaced by the
 * correction (its src kept). */
int tsc__rate_check(struct rate_check *r, struct factors *f)
{
	const struct factors *m = &r->m.f;
	uint64_t err = m->err_ppb;

	if (r->of.src != f->src || r->of.mult != f->mult || r->of.shift != f->shift) {
		/* Other factors (the kernel's may follow a change of its
		 * clock): measure anew, from the next anchor. */
		tsc__rate_reset(r);
		r->of = *f;
		return 0;
	}
	if (!m->src || r->m.took_ns < MIN_SPAN_NS) {
		r->use = false;
		return 0;
	}
	r->error_ppb = rate_diff_ppb(f, m);
	if (r->use) {
		/* Replace it if the measurement moved off it, or is now
		 * twice as tight. */
		if (abs64(rate_diff_ppb(&r->fix, m)) > r->fix.err_ppb + err ||
		    2 * err <= r->fix.err_ppb) {
			r->corrections += m->mult != r->fix.mult;
			r->fix = *m;
		}
	} else if (abs64(r->error_ppb) > f->err_ppb + err) {
		r->use = true;
		r->fix = *m;
		r->corrections++;
	}
	if (!r->use)
		return 1;
	*f = (struct factors){ f->src, r->fix.mult, r->fix.shift, r->fix.khz, r->fix.err_ppb };
	return 2;
}
