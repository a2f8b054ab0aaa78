// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Wall-clock mapping error: tsc_clock_gettime() against clock_gettime()
 * brackets for 2.5 s while the watcher re-anchors every second.
 * Goal < 1 us; asserted 50 us.  Where the kernel does not use the TSC,
 * the fallback's mapping and the TSC's on a made-up sysroot. */
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
	}
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
	measure(t, tsc ? "TSC" : "fallback");
	tsc_close(t);
	if (!tsc) {		/* and the TSC path all the same */
		t = t_open_tsc(root, true);
		measure(t, "TSC (sysroot)");
		tsc_close(t);
		t_rmroot(root);
	}
	DONE();
}
