// SPDX-License-Identifier: MIT OR LGPL-2.1
/* A CPU without RDTSCP (qemu64, from a dump's CPUID) or the option: the
 * ordered reads must use LFENCE;RDTSC.  Reads run either way. */
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

	T_OPEN(t, .no_rdtscp = true, .no_watcher = true);
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!i.rdtscp, "no_rdtscp ignored");
	reads(t);
	tsc_close(t);
	DONE();
}
