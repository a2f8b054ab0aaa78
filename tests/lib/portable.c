// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Off x86-64 (tests/lib/aarch64.sh runs it under qemu-user): tsc.h and
 * the library build, every handle reads its fallback clock and says why
 * (code arch_tsc), the reads are on the fallback clock's scale and never
 * go back, the conversions give 0 (no factors), tsc_rdtsc() reads
 * CLOCK_MONOTONIC_RAW in ns, tsc_xcpu_check() is -ENODEV.
 */
#include "t.h"

#if TSC_ARCH_HAS_TSC
#error "portable.c tests the build without a TSC: build it for another architecture"
#endif

/* The arch_tsc reason: first, a "no", naming the fallback clock. */
static void arch_reason(struct tsc *t, const char *clock)
{
	struct tsc_reason r[64];
	char want[64];
	int n = tsc_reasons(t, r, 64);

	snprintf(want, sizeof(want), "clock_gettime(%s)", clock);
	CHECK(n > 0 && !strcmp(r[0].code, "arch_tsc") && r[0].kind == TSC_REASON_BLOCK &&
	      strstr(r[0].text, "no TSC") && strstr(r[0].text, want),
	      "first reason: %s %s: %s, want a \"no\" arch_tsc naming %s", n > 0 ?
	      (r[0].kind == TSC_REASON_BLOCK ? "no" : "not no") : "none",
	      n > 0 ? r[0].code : "", n > 0 ? r[0].text : "", clock);
	if (n > 0)
		printf("# %s: %s\n", r[0].code, r[0].text);
}

/* clk by the handle, k times, never back and within 5 ms of the kernel's
 * (qemu-user on a busy machine: a read may take a while). */
static void follows(struct tsc *t, clockid_t clk, const char *name)
{
	uint64_t prev = 0, v = 0, k0, k1;
	int i, rc = 0;

	for (i = 0; i < 1000; i++) {
		k0 = t_clock(clk);
		rc = tsc_clock_gettime(t, clk, &v);
		k1 = t_clock(clk);
		if (rc || v < prev || v + 5000000 < k0 || v > k1 + 5000000)
			break;
		prev = v;
	}
	CHECK(i == 1000, "tsc_clock_gettime(%s), read %d: rc %d, %llu after %llu, kernel %llu..%llu",
	      name, i, rc, (unsigned long long)v, (unsigned long long)prev,
	      (unsigned long long)k0, (unsigned long long)k1);
}

int main(void)
{
	struct tsc_xcpu_result x;
	struct tsc_info i;
	struct tsc *t;
	uint64_t a, b, r0, r1, prev;
	int k;

	CHECK(!strcmp(tsc_version(), TSC_VERSION), "library %s, header %s", tsc_version(),
	      TSC_VERSION);

	t = tsc_open(NULL);		/* with its watcher */
	CHECK(t, "tsc_open: %s", strerror(errno));
	if (!t)
		DONE();
	CHECK(!tsc_in_use(t), "tsc_in_use() without a TSC");
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!i.usable && i.src == TSC_SRC_NONE && !i.mult && i.fallback_clock == CLOCK_MONOTONIC_RAW,
	      "info: usable %d, factors %s (mult %llu), fallback clock %d", i.usable,
	      tsc_src_name(i.src), (unsigned long long)i.mult, (int)i.fallback_clock);
	arch_reason(t, "CLOCK_MONOTONIC_RAW");

	/* The fallback clock's scale, never back. */
	prev = 0;
	for (k = 0; k < 10000; k++) {
		r0 = t_clock(CLOCK_MONOTONIC_RAW);
		a = tsc_now_ns(t);
		b = tsc_now_ns_ordered(t);
		r1 = t_clock(CLOCK_MONOTONIC_RAW);
		if (a < prev || b < a || a + 5000000 < r0 || b > r1 + 5000000)
			break;
		prev = b;
	}
	CHECK(k == 10000, "read %d: tsc_now_ns %llu, _ordered %llu after %llu, RAW %llu..%llu",
	      k, (unsigned long long)a, (unsigned long long)b, (unsigned long long)prev,
	      (unsigned long long)r0, (unsigned long long)r1);
	follows(t, CLOCK_MONOTONIC, "MONOTONIC");
	follows(t, CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW");
	follows(t, CLOCK_BOOTTIME, "BOOTTIME");

	/* No factors: the documented 0.  tsc_rdtsc(): RAW in ns. */
	CHECK(!tsc_has_factors(t), "tsc_has_factors() without a TSC");
	CHECK(!tsc_delta_to_ns(t, 1000000) && !tsc_ticks_to_ns(t, 1000000),
	      "conversions without factors: %llu, %llu, want 0",
	      (unsigned long long)tsc_delta_to_ns(t, 1000000),
	      (unsigned long long)tsc_ticks_to_ns(t, 1000000));
	r0 = t_clock(CLOCK_MONOTONIC_RAW);
	a = tsc_rdtsc();
	b = tsc_rdtsc_ordered(t);
	r1 = t_clock(CLOCK_MONOTONIC_RAW);
	CHECK(r0 <= a && a <= b && b <= r1, "tsc_rdtsc %llu, _ordered %llu, RAW %llu..%llu",
	      (unsigned long long)a, (unsigned long long)b, (unsigned long long)r0,
	      (unsigned long long)r1);
	a = tsc_now_ns(t);
	CHECK(tsc_ns_to_clock(t, a, CLOCK_REALTIME, &b) == 0 &&
	      b + 5000000 > t_clock(CLOCK_REALTIME) && b < t_clock(CLOCK_REALTIME) + 5000000,
	      "tsc_ns_to_clock(REALTIME): %llu, kernel %llu", (unsigned long long)b,
	      (unsigned long long)t_clock(CLOCK_REALTIME));
	k = tsc_xcpu_check(t, 10, &x, sizeof(x));
	CHECK(k == -ENODEV, "tsc_xcpu_check: %d, want -ENODEV", k);
	tsc_close(t);

	/* The other fallback clock, no watcher, a calibration asked for:
	 * none is made (nothing to calibrate), the reason names the clock. */
	T_OPEN(t, .fallback = TSC_FALLBACK_MONOTONIC, .no_watcher = true, .force_calibrate = true);
	CHECK(tsc_process_events(t) >= 0, "tsc_process_events: %s", strerror(errno));
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!i.usable && !i.calibrated && i.fallback_clock == CLOCK_MONOTONIC,
	      "MONOTONIC, force_calibrate: usable %d, calibrated %d, fallback clock %d",
	      i.usable, i.calibrated, (int)i.fallback_clock);
	arch_reason(t, "CLOCK_MONOTONIC");
	r0 = t_clock(CLOCK_MONOTONIC_RAW);	/* the library's scale */
	a = tsc_now_ns(t);
	r1 = t_clock(CLOCK_MONOTONIC_RAW);
	CHECK(a + 5000000 > r0 && a < r1 + 5000000,
	      "MONOTONIC fallback off the library's scale: %llu, RAW %llu..%llu",
	      (unsigned long long)a, (unsigned long long)r0, (unsigned long long)r1);
	b = tsc_now_ns(t);
	CHECK(b >= a, "MONOTONIC fallback went back");
	tsc_close(t);

	t = tsc_default();
	CHECK(t && !tsc_in_use(t), "tsc_default: %p", (void *)t);
	if (t)
		arch_reason(t, "CLOCK_MONOTONIC_RAW");
	DONE();
}
