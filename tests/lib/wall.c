// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Wall-clock mapping error: tsc_clock_gettime() against clock_gettime()
 * brackets for 2.5 s while the watcher re-anchors every second.
 * Goal < 1 us; asserted 50 us.  Then a thread reads MONOTONIC, BOOTTIME
 * and MONOTONIC_RAW in a loop for 2 s while another re-anchors every
 * 200 us: no reading may be below the one before it, nor closer to it
 * than the library's ns moved between them (bracketed by ordered reads)
 * less 1% (a slew is 500 ppm at most, plus the kernel's rate against
 * the library's): never a step back however small.  Where the kernel
 * does not use the TSC, the fallback's mapping and the TSC's on a
 * made-up sysroot.  In the guest (T_GUEST) the live TSC, or a failure. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "t.h"

static const struct {
	clockid_t id;
	const char *name;
} clk[] = {
	{ CLOCK_REALTIME, "REALTIME" }, { CLOCK_MONOTONIC, "MONOTONIC" },
	{ CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW" }, { CLOCK_BOOTTIME, "BOOTTIME" },
};

/* Map for 2.5 s while the watcher re-anchors; worst error per clock. */
static void measure(struct tsc *t, const char *what)
{
	uint64_t worst[4] = { 0 }, end, v, a, b, e;
	struct tsc_info i;
	char name[32];
	int k, n = 0;

	end = t_clock(CLOCK_MONOTONIC) + 2500000000ull;
	while (t_clock(CLOCK_MONOTONIC) < end) {
		for (k = 0; k < 4; k++) {
			a = t_clock(clk[k].id);
			CHECK(!tsc_clock_gettime(t, clk[k].id, &v), "clock_gettime %s", clk[k].name);
			b = t_clock(clk[k].id);
			e = v < a ? a - v : v > b ? v - b : 0;
			if (e > worst[k])
				worst[k] = e;
		}
		n++;
		t_sleep_ms(5);
	}
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.anchors >= 3, "%s: only %llu anchors in 2.5 s", what,
	      (unsigned long long)i.anchors);
	for (k = 0; k < 4; k++) {
		printf("# figure: wall mapping %s, %s: worst error %.3f us over %d samples\n",
		       what, clk[k].name, worst[k] / 1000.0, n);
		CHECK(worst[k] < 50000, "%s: %s error %llu ns", what, clk[k].name,
		      (unsigned long long)worst[k]);
		snprintf(name, sizeof(name), "%s_err_ns", clk[k].name);
		t_fact(name, "%llu", (unsigned long long)worst[k]);
	}
	t_fact("samples", "%d", n);
}

static const clockid_t never_back[3] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW };
static atomic_bool stop;
static uint64_t reads, backs, worst_back;

static void *reader(void *arg)
{
	struct tsc *t = arg;
	uint64_t pv[3] = { 0 }, pb[3] = { 0 }, v, a, b, gap, need;
	int k;

	while (!atomic_load(&stop)) {
		for (k = 0; k < 3; k++) {
			a = tsc_now_ns_ordered(t);
			if (tsc_clock_gettime(t, never_back[k], &v))
				continue;
			b = tsc_now_ns_ordered(t);
			gap = pb[k] && a > pb[k] ? a - pb[k] : 0;
			need = gap > 2 ? gap - gap / 100 - 2 : 0;
			if (pb[k] && v < pv[k] + need) {
				backs++;
				if (pv[k] + need - v > worst_back)
					worst_back = pv[k] + need - v;
			}
			pv[k] = v;
			pb[k] = b;
			reads++;
		}
	}
	return NULL;
}

/* Re-anchor every 200 us for 2 s while a thread reads. */
static void never_goes_back(struct tsc *t, const char *what)
{
	struct tsc_info i0, i1;
	pthread_t th;
	uint64_t end;

	reads = backs = worst_back = 0;
	atomic_store(&stop, false);
	tsc_get_info(t, &i0, sizeof(i0));
	if (pthread_create(&th, NULL, reader, t)) {
		FAIL("pthread_create");
		return;
	}
	end = t_clock(CLOCK_MONOTONIC) + 2000000000ull;
	while (t_clock(CLOCK_MONOTONIC) < end) {
		tsc_reanchor(t);
		usleep(200);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	tsc_get_info(t, &i1, sizeof(i1));
	printf("# figure: wall mapping %s: %llu re-anchors, %llu readings of MONOTONIC, "
	       "BOOTTIME, MONOTONIC_RAW, %llu went back or stood still (worst %llu ns)\n", what,
	       (unsigned long long)(i1.anchors - i0.anchors), (unsigned long long)reads,
	       (unsigned long long)backs, (unsigned long long)worst_back);
	CHECK(!backs, "%s: %llu readings went back or stood still, by up to %llu ns", what,
	      (unsigned long long)backs, (unsigned long long)worst_back);
	t_fact("reanchors", "%llu", (unsigned long long)(i1.anchors - i0.anchors));
	t_fact("reads", "%llu", (unsigned long long)reads);
	t_fact("backs", "%llu", (unsigned long long)backs);
}

int main(void)
{
	struct tsc *t;
	char root[64];
	bool tsc;

	t = tsc_open(NULL);	/* with the watcher thread */
	CHECK(t, "open");
	if (!t)
		DONE();
	tsc = tsc_in_use(t);
	t_live_tsc(t);
	measure(t, tsc ? "TSC" : "fallback");
	never_goes_back(t, tsc ? "TSC" : "fallback");
	tsc_close(t);
	if (!tsc) {		/* and the TSC path all the same */
		t = t_open_tsc(root, true);
		measure(t, "TSC (sysroot)");
		never_goes_back(t, "TSC (sysroot)");
		tsc_close(t);
		t_rmroot(root);
	}
	DONE();
}
