// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * timestamps: time some work with libtsc, and say why the TSC is used or
 * not.  Build it against the installed library:
 *
 *   cc -O2 -o timestamps timestamps.c $(pkg-config --cflags --libs libtsc)
 *
 * tsc_open() reads files and decides: open once, then each tsc_now_ns()
 * is RDTSC and a multiply while the TSC is in use, one clock_gettime()
 * while it is not.  The reasons' kinds: ok (a condition holds), no (it
 * keeps the TSC from use), note (a fact, left out here).
 */
#include <stdio.h>
#include <tsc.h>

static volatile unsigned long sink;

int main(void)
{
	struct tsc *t = tsc_open(NULL);
	struct tsc_reason r[32];
	uint64_t t0, t1;
	int i, n;

	if (!t)				/* EINVAL or ENOMEM only */
		return perror("tsc_open"), 1;
	t0 = tsc_now_ns(t);
	for (i = 0; i < 1000000; i++)
		sink += i;
	t1 = tsc_now_ns(t);
	printf("a million additions took %llu ns, timed with %s\n",
	       (unsigned long long)(t1 - t0), tsc_in_use(t) ? "the TSC" : "clock_gettime()");
	n = tsc_reasons(t, r, 32);
	for (i = 0; i < n && i < 32; i++)
		if (r[i].kind != TSC_REASON_NOTE)
			printf("  %-2s  %s\n", r[i].kind == TSC_REASON_OK ? "ok" : "no", r[i].text);
	tsc_close(t);
	return 0;
}
