// SPDX-License-Identifier: MIT OR LGPL-2.1
/* A CPU without RDTSCP (qemu64, from a dump's CPUID) or the option: the
 * ordered reads must use LFENCE;RDTSC.  Reads run either way.  Two dumps
 * that differ only in RDTSCP report the two answers, whatever this CPU
 * has, and reads on this CPU never execute an RDTSCP it lacks. */
#include "t.h"

static void reads(struct tsc *t)
{
	uint64_t a = tsc_now_ns_ordered(t), b;
	int k;

	for (k = 0; k < 1000; k++) {
		b = tsc_now_ns_ordered(t);
		CHECK(b >= a, "ordered reads went back");
		a = b;
	}
	(void)tsc_rdtsc_ordered(t);
}

int main(void)
{
	char dir[4096];
	struct tsc_info i;
	struct tsc *t;

	snprintf(dir, sizeof(dir), "%s/qemu64", t_env("TSC_TEST_VARIANTS"));
	TSC_OPTS(o, .sysroot = dir, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open %s", dir);
	if (!t)
		DONE();
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!i.rdtscp, "qemu64 dump: RDTSCP would be used");
	CHECK(i.usable, "qemu64 dump with tsc_stable=1 not usable");
	CHECK(t_reason(t, "LFENCE;RDTSC"), "no reason for LFENCE;RDTSC");
	reads(t);
	tsc_close(t);

	/* The pair: the report follows the dump, not this CPU. */
	const char *pair[2] = { "patched-good", "no-rdtscp" };
	for (int k = 0; k < 2; k++) {
		snprintf(dir, sizeof(dir), "%s/%s", t_env("TSC_TEST_VARIANTS"), pair[k]);
		TSC_OPTS(p, .sysroot = dir, .no_watcher = true);
		t = tsc_open(&p);
		CHECK(t, "open %s", dir);
		if (!t)
			continue;
		tsc_get_info(t, &i, sizeof(i));
		CHECK(i.rdtscp == (k == 0), "%s: rdtscp %d", pair[k], i.rdtscp);
		CHECK(t_reason(t, k == 0 ? "ordered reads: RDTSCP" :
			       "LFENCE;RDTSC (no RDTSCP in the dump's CPU)"),
		      "%s: no ordered-read reason from the dump", pair[k]);
		reads(t);	/* SIGILL here: RDTSCP run on a CPU without it */
		tsc_close(t);
	}

	T_OPEN(t, .no_rdtscp = true, .no_watcher = true);
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!i.rdtscp, "no_rdtscp ignored");
	reads(t);
	tsc_close(t);
	DONE();
}
