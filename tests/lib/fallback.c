// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Fallback: each read is exactly one clock_gettime() (counted by wrapping
 * it), on the scale of the TSC reads; while the TSC is in use, none.
 * tsc_fd() wakes within the 1 s re-anchor period.  Off x86-64 (under
 * qemu-user: tests/lib/aarch64.sh) all but the TSC's part.
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

	/* No factors from any source (an empty dump, no calibration): the
	 * conversions' documented 0, and tsc_has_factors() says so. */
	snprintf(root, sizeof(root), "%s/empty", t_env("TSC_TEST_VARIANTS"));
	T_OPEN(t, .sysroot = root, .no_watcher = true);
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!tsc_in_use(t) && i.src == TSC_SRC_NONE, "empty dump: in use %d, source %s",
	      tsc_in_use(t), tsc_src_name(i.src));
	CHECK(!tsc_has_factors(t), "tsc_has_factors() true without factors");
	CHECK(tsc_delta_to_ns(t, 1000000) == 0 && tsc_ticks_to_ns(t, 1000000) == 0,
	      "without factors: delta %llu, ticks %llu ns, want 0",
	      (unsigned long long)tsc_delta_to_ns(t, 1000000),
	      (unsigned long long)tsc_ticks_to_ns(t, 1000000));
	tsc_close(t);

#if TSC_ARCH_HAS_TSC
	t = t_open_tsc(root, false);	/* live, or a made-up trusting kernel */
	tsc_get_info(t, &i, sizeof(i));
	CHECK(tsc_has_factors(t), "tsc_has_factors() false with factors from %s",
	      tsc_src_name(i.src));
	/* A second of ticks by the factors themselves. */
	a = i.mult ? (uint64_t)(((unsigned __int128)1000000000 << i.shift) / i.mult) : 0;
	b = tsc_delta_to_ns(t, a);
	CHECK(b > 999999000 && b <= 1000000000, "ns = ticks * %llu >> %u: %llu ticks are %llu ns",
	      (unsigned long long)i.mult, i.shift, (unsigned long long)a, (unsigned long long)b);
	n = count(t);
	CHECK(n == 0, "%d clock_gettime calls for 1000 TSC reads", n);
	tsc_close(t);
	t_rmroot(root);
#else
	printf("# no TSC on this architecture: nothing reads it (tests/lib/portable.c)\n");
#endif
	DONE();
}
