// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The decision for this machine, checked against what the machine says;
 * no calibration unless the TSC is used; a forced one, with its bound. */
#include <cpuid.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "t.h"

int main(void)
{
	char cs[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	unsigned int a, b, c, d;
	bool invariant = false, rdtscp = false, want;
	struct tsc_info i;
	struct tsc *t;
	int pr = 0;

	if (f) {
		if (fgets(cs, sizeof(cs), f))
			cs[strcspn(cs, "\n")] = 0;
		fclose(f);
	}
	if (__get_cpuid(0x80000007, &a, &b, &c, &d))
		invariant = d & (1u << 8);
	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		rdtscp = d & (1u << 27);
	prctl(PR_GET_TSC, &pr, 0, 0, 0);
	want = !strcmp(cs, "tsc") && invariant && pr != PR_TSC_SIGSEGV;
	printf("# clocksource %s, invariant TSC %d, RDTSCP %d: expect %s\n", cs, invariant,
	       rdtscp, want ? "usable" : "not usable");

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open: %s", strerror(errno));
	if (!t)
		DONE();
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.decisions == 1 && i.switches == 0, "decisions %llu switches %llu",
	      (unsigned long long)i.decisions, (unsigned long long)i.switches);
	/* Without the kernel's factors, perf and a calibration follow in
	 * tsc_process_events(); then one switch at most, the takeover. */
	t_process(t, 3000);
	tsc_get_info(t, &i, sizeof(i));
	t_print_reasons(t);
	CHECK(!strcmp(i.clocksource, cs), "clocksource %s, file says %s", i.clocksource, cs);
	CHECK(i.usable == want, "usable %d, want %d", i.usable, want);
	CHECK(tsc_in_use(t) == i.usable, "fast path disagrees with info");
	CHECK(i.rdtscp == rdtscp, "rdtscp %d, CPU %d", i.rdtscp, rdtscp);
	CHECK(i.switches <= 1, "switches %llu", (unsigned long long)i.switches);
	if (!strcmp(cs, "tsc"))
		CHECK(t_reason(t, "current_clocksource is tsc"), "no clocksource reason");
	else
		CHECK(t_reason(t, "not tsc"), "no clocksource reason");
	if (want)
		CHECK(i.khz > 0 && i.src != TSC_SRC_NONE, "no frequency");
	/* Not usable: no calibration was made, and the reasons say so.
	 * (Factors the kernel gives for free may still be there.) */
	if (!want && i.src == TSC_SRC_NONE)
		CHECK(!i.calibrated && !i.calib_ns && t_reason(t, "no calibration"),
		      "calibrated %d (%llu ns) although the TSC is not used", i.calibrated,
		      (unsigned long long)i.calib_ns);
	if (!want)
		CHECK(!i.calibrated, "calibrated although the TSC is not used");
	CHECK(i.kernel_series == (access("/sys/devices/system/tsc/tsc0", F_OK) == 0), "series");
	tsc_close(t);

	T_OPEN(t, .no_watcher = true, .force_calibrate = true);
	t_process(t, 3000);
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.src == TSC_SRC_CALIBRATION, "forced calibration not used: %s", tsc_src_name(i.src));
	CHECK(i.calibrated, "forced calibration not reported");
	/* About 1 ppm in tens of ms; a loaded machine may stretch that,
	 * so only an end is asserted, the time is a figure. */
	CHECK(i.calib_ns > 0 && i.calib_ns < 1000000000, "calibration took %llu ns",
	      (unsigned long long)i.calib_ns);
	CHECK(i.err_ppb > 0 && i.err_ppb <= 1000, "error bound %llu ppb", (unsigned long long)i.err_ppb);
	printf("# figure: calibration %.2f ms, %llu kHz, error bound %.3f ppm\n", i.calib_ns / 1e6,
	       (unsigned long long)i.khz, i.err_ppb / 1000.0);
	tsc_close(t);
	DONE();
}
