// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Fallback: each read is exactly one clock_gettime() (counted by wrapping
 * it), on the scale of the TSC reads; while the TSC is in use, none.
 * tsc_fd() wakes within the 1 s re-anchor period.
 */
#include <dlfcn.h>
#include <poll.h>

#include "t.h"

static int counting, calls;

int clock_gettime(clockid_t c, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	if (counting)
		calls++;
	return real(c, ts);
}

static int count(struct tsc *t)
{
	uint64_t sink = 0;
	int k;

	calls = 0;
	counting = 1;
	for (k = 0; k < 1000; k++)
		sink += tsc_now_ns(t);
	counting = 0;
	return calls + (int)(sink & 0);
}

int main(void)
{
	struct pollfd p;
	struct tsc_info i;
	struct tsc *t;
	uint64_t a, b, r;
	char root[64];
	int n;

	T_OPEN(t, .force_fallback = true, .no_watcher = true);
	CHECK(!tsc_in_use(t), "force_fallback ignored");
	CHECK(t_reason(t, "forced"), "no reason for the fallback");
	n = count(t);
	CHECK(n == 1000, "%d clock_gettime calls for 1000 fallback reads", n);
	r = t_clock(CLOCK_MONOTONIC_RAW);
	a = tsc_now_ns(t);
	CHECK(a >= r && a - r < 1000000, "fallback not on the raw scale: %lld ns",
	      (long long)(a - r));

	p.fd = tsc_fd(t);
	p.events = POLLIN;
	CHECK(poll(&p, 1, 1500) == 1, "tsc_fd did not wake in 1.5 s");
	CHECK(tsc_process_events(t) == 0, "a change without a change");
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.anchors >= 2, "no re-anchor on the timer");
	CHECK(poll(&p, 1, 0) == 0, "fd still readable after processing");
	tsc_close(t);

	T_OPEN(t, .force_fallback = true, .no_watcher = true,
	       .fallback = TSC_FALLBACK_MONOTONIC);
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.fallback_clock == CLOCK_MONOTONIC, "fallback clock %d", i.fallback_clock);
	a = tsc_now_ns(t);
	b = tsc_now_ns(t);
	CHECK(b >= a, "MONOTONIC fallback went back");
	tsc_close(t);

	t = t_open_tsc(root, false);	/* live, or a made-up trusting kernel */
	n = count(t);
	CHECK(n == 0, "%d clock_gettime calls for 1000 TSC reads", n);
	tsc_close(t);
	t_rmroot(root);
	DONE();
}
