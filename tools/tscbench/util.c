// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The small helpers every phase uses: progress lines, the kernel's
 * clocks, ordered TSC reads, a distribution's percentiles.  The bottom
 * of tscbench's own files (tscbench.h: the layers): nothing here calls
 * another of them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "tscbench.h"

bool progress_on;

void progress(const char *fmt, ...)
{
	va_list ap;

	if (!progress_on)
		return;
	va_start(ap, fmt);
	tool_vwarn(fmt, ap);
	va_end(ap);
}

uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t ticks_ordered(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Percentile p of sorted v (linear interpolation). */
static double pct(const double *v, size_t n, double p)
{
	double pos = p * (double)(n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (v[i + 1] - v[i]) * (pos - (double)i);
}

void dist_of(double *v, size_t n, struct dist *d)
{
	if (!n) {
		d->median = d->p10 = d->p90 = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	d->median = pct(v, n, 0.5);
	d->p10 = pct(v, n, 0.1);
	d->p90 = pct(v, n, 0.9);
}
