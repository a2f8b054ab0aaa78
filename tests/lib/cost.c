// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Cost of tsc_now_ns() and tsc_rdtsc() against a bare RDTSC loop, in TSC
 * ticks, best of several runs.  Goal 1.05x; asserted 1.5x (shared CI). */
#include "t.h"

#define N 200000

static inline uint64_t bare(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

int main(void)
{
	uint64_t best_bare = UINT64_MAX, best_now = UINT64_MAX, best_raw = UINT64_MAX;
	volatile uint64_t sink = 0;
	struct tsc *t;
	char root[64];
	int run, i;

	t = t_open_tsc(root, false);
	for (run = 0; run < 15; run++) {
		uint64_t a, b, c, d;
		uint64_t s = 0;

		a = bare();
		for (i = 0; i < N; i++)
			s += bare();
		b = bare();
		for (i = 0; i < N; i++)
			s += tsc_now_ns(t);
		c = bare();
		for (i = 0; i < N; i++)
			s += tsc_rdtsc();
		d = bare();
		sink += s;
		if (b - a < best_bare)
			best_bare = b - a;
		if (c - b < best_now)
			best_now = c - b;
		if (d - c < best_raw)
			best_raw = d - c;
	}
	printf("# figure: per read: bare RDTSC %.1f ticks, tsc_rdtsc %.1f (%.3fx), tsc_now_ns %.1f (%.3fx)\n",
	       (double)best_bare / N, (double)best_raw / N, (double)best_raw / best_bare,
	       (double)best_now / N, (double)best_now / best_bare);
	CHECK((double)best_now / best_bare < 1.5, "tsc_now_ns %.3fx bare RDTSC",
	      (double)best_now / best_bare);
	CHECK((double)best_raw / best_bare < 1.5, "tsc_rdtsc %.3fx bare RDTSC",
	      (double)best_raw / best_bare);
	tsc_close(t);
	t_rmroot(root);
	(void)sink;
	DONE();
}
