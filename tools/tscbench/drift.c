// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Accuracy.  Drift: the library's ns against CLOCK_MONOTONIC_RAW and
 * CLOCK_MONOTONIC, sampled about 100 times over the duration; each sample
 * pairs a clock read with the middle of the narrowest of 16 brackets of
 * ordered library reads.  Between samples the thread reads tsc_now_ns()
 * without pause and checks that it never goes back (the scheduler may move
 * it between CPUs meanwhile).  Then libtsc's cross-CPU check.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"
#include "tscbench.h"

/* The library's ns and clock clk at one instant. */
static void pair(struct tsc *t, clockid_t clk, uint64_t *lib, uint64_t *ref)
{
	uint64_t best = UINT64_MAX, a, b = 0, c = 0;
	int i;

	for (i = 0; i < 16; i++) {
		a = tsc_now_ns_ordered(t);
		b = now_ns(clk);
		c = tsc_now_ns_ordered(t);
		if (c >= a && c - a < best) {
			best = c - a;
			*lib = a + (c - a) / 2;
			*ref = b;
		}
	}
	if (best == UINT64_MAX) {	/* went back in every bracket: take the last */
		*lib = c;
		*ref = b;
	}
}

/* Offset library minus clock, ns (signed). */
static int64_t offset(struct tsc *t, clockid_t clk)
{
	uint64_t l = 0, r = 0;

	pair(t, clk, &l, &r);
	return (int64_t)(l - r);
}

/* A read of row k's clock: tsc_clock_gettime_ordered(), or the peer's
 * (ordered by the LFENCE of the kernel's read before it; Abseil's
 * RDTSC is not ordered itself). */
static int wall_read(struct tsc *t, int k, uint64_t *v)
{
	if (k == WALL_ABSL) {
		__builtin_ia32_lfence();
		*v = (uint64_t)peer_absl_now_ns();
		return 0;
	}
	return tsc_clock_gettime_ordered(t, k == WALL_MONO ? CLOCK_MONOTONIC : CLOCK_REALTIME, v);
}

/* Row k's read minus the kernel's clock, ns: the read in the narrowest
 * of 16 brackets of the kernel's. */
static double wall_offset(struct tsc *t, int k, double *width)
{
	clockid_t clk = k == WALL_MONO ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	uint64_t a, b = 0, c, best = UINT64_MAX;
	double off = NAN;
	int i;

	for (i = 0; i < 16; i++) {
		a = now_ns(clk);
		if (wall_read(t, k, &b))
			return NAN;
		c = now_ns(clk);
		if (c >= a && c - a < best) {
			best = c - a;
			off = (double)(int64_t)(b - (a + (c - a) / 2));
		}
	}
	if (best != UINT64_MAX && (double)best > *width)
		*width = (double)best;
	return off;
}

static void wall_sample(struct tsc *t, struct wall_acc *w, int i)
{
	int k;

	for (k = 0; k < WALL_NROWS; k++) {
		double o;

		if (k == WALL_ABSL ? !w->absl : !w->ran)
			continue;
		o = wall_offset(t, k, &w->bracket_ns);

		w->off_ns[k][i] = o;
		if (isnan(o))			/* a read failed: no figure */
			w->worst_ns[k] = NAN;
		else if (fabs(o) > w->worst_ns[k])
			w->worst_ns[k] = fabs(o);
	}
	w->n = i + 1;
}

static void fit(const double *t, const double *y, int n, struct ref_drift *d)
{
	double st = 0, sy = 0, stt = 0, sty = 0, den;
	int i;

	d->ppm = d->ppm_end = d->end_us = d->max_abs_us = 0;
	if (n < 2)
		return;
	for (i = 0; i < n; i++) {
		st += t[i];
		sy += y[i];
		stt += t[i] * t[i];
		sty += t[i] * y[i];
		if (fabs(y[i]) > d->max_abs_us)
			d->max_abs_us = fabs(y[i]);
	}
	den = n * stt - st * st;
	d->ppm = den > 0 ? (n * sty - st * sy) / den : 0;	/* us per s = ppm */
	d->end_us = y[n - 1];
	d->ppm_end = t[n - 1] > 0 ? y[n - 1] / t[n - 1] : 0;
}

static void series_info(struct drift_series *s, struct tsc *t, const char *name)
{
	struct tsc_info i;

	tsc_get_info(t, &i, sizeof(i));
	s->handle = name;
	s->usable = i.usable;
	s->src = i.src;
	s->err_ppb = i.err_ppb;
	s->calib_ns = i.calib_ns;
}

int drift_run(const struct cfg *cfg, struct env *e, struct accuracy *a)
{
	struct tsc *h[2] = { e->t, NULL };
	int64_t raw0[2], mono0[2];
	uint64_t start, next, prev, x, step_ns;
	double interval;
	int n, i, k, nh = 1, pct = -1;

	a->ran = cfg->duration > 0;
	if (a->ran) {
		/* A second handle calibrated by the library, when the default
		 * one got better factors: both errors show. */
		if (e->info.usable && e->info.src != TSC_SRC_CALIBRATION) {
			TSC_OPTS(o, .force_calibrate = true, .no_watcher = true);
			h[1] = tsc_open(&o);
			if (h[1])
				nh = 2;
		}
		interval = cfg->duration / 100;
		if (interval < 0.01)
			interval = 0.01;
		n = (int)(cfg->duration / interval + 0.5) + 1;
		if (n > MAX_SAMPLES)
			n = MAX_SAMPLES;
		step_ns = (uint64_t)(cfg->duration * 1e9 / (n - 1));
		a->nseries = nh;
		for (k = 0; k < nh; k++)
			series_info(&a->s[k], h[k], k ? "calibrated" : "default");
		a->wall.ran = e->info.usable;
		a->wall.absl = !peer_absl_missing() && e->rdtsc_ok;
		start = now_ns(CLOCK_MONOTONIC_RAW);
		prev = tsc_now_ns(e->t);
		for (i = 0; i < n; i++) {
			next = start + step_ns * (uint64_t)i;
			/* Spin to the sample time, checking monotonicity. */
			for (;;) {
				x = tsc_now_ns(e->t);
				a->reads++;
				if (x < prev) {
					a->backward++;
					if (prev - x > a->worst_back_ns)
						a->worst_back_ns = prev - x;
				}
				prev = x;
				if (!(a->reads & 255) && now_ns(CLOCK_MONOTONIC_RAW) >= next)
					break;
			}
			for (k = 0; k < nh; k++) {
				struct drift_series *s = &a->s[k];
				int64_t r = offset(h[k], CLOCK_MONOTONIC_RAW);
				int64_t m = offset(h[k], CLOCK_MONOTONIC);

				if (!i) {
					raw0[k] = r;
					mono0[k] = m;
				}
				s->t_s[i] = (double)(now_ns(CLOCK_MONOTONIC_RAW) - start) / 1e9;
				s->raw_us[i] = (double)(r - raw0[k]) / 1e3;
				s->mono_us[i] = (double)(m - mono0[k]) / 1e3;
				s->n = i + 1;
			}
			if (a->wall.ran || a->wall.absl)
				wall_sample(e->t, &a->wall, i);
			if (i * 10 / n != pct) {
				pct = i * 10 / n;
				progress("drift: %.1f of %.1f s", a->s[0].t_s[i], cfg->duration);
			}
		}
		a->duration_s = a->s[0].t_s[a->s[0].n - 1];
		for (k = 0; k < nh; k++) {
			fit(a->s[k].t_s, a->s[k].raw_us, a->s[k].n, &a->s[k].raw);
			fit(a->s[k].t_s, a->s[k].mono_us, a->s[k].n, &a->s[k].mono);
		}
		if (h[1])
			tsc_close(h[1]);
	}

	a->xcpu_err = 0;
	a->xcpu_one_cpu = cfg->xcpu_ms && e->ncpus < 2;
	if (cfg->xcpu_ms && e->ncpus > 1) {
		progress("cross-CPU check: %lu ms on %d CPUs", cfg->xcpu_ms, e->ncpus);
		if (tsc_xcpu_check(e->t, (unsigned int)cfg->xcpu_ms, &a->xcpu, sizeof(a->xcpu))) {
			int r = method_index("rdtsc");

			a->xcpu_err = errno;
			/* ENODEV: RDTSC may not run, for the reason its row has. */
			snprintf(a->xcpu_why, sizeof(a->xcpu_why), "%s", a->xcpu_err != ENODEV ?
				 strerror(a->xcpu_err) : r >= 0 && *methods[r].why ? methods[r].why :
				 "RDTSC may not be executed in this process");
		} else
			a->have_xcpu = true;
	}
	return 0;
}
