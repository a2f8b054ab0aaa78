// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The decision for this machine, checked against what the machine says;
 * no calibration unless the TSC is used; a forced one, with its bound. */
#include <cpuid.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "t.h"

/* The first line of a file, without its newline; buf unchanged if it
 * cannot be read. */
static void line(const char *path, char *buf, int size)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* A forced calibration ends at its bound, used or not, whether the
 * watcher carries it or tsc_process_events() (called while a reason says
 * "calibrating:").  About 1 ppm in tens of ms where the vDSO reads the
 * clock, seconds where each read is an emulated system call: only an end
 * is asserted, the time is a figure. */
static void forced(bool watcher)
{
	const char *how = watcher ? "watcher" : "tsc_process_events()";
	struct tsc_info i;
	struct tsc *t;

	TSC_OPTS(o, .no_watcher = !watcher, .force_calibrate = true);
	t = tsc_open(&o);
	CHECK(t, "open (force_calibrate, %s): %s", how, strerror(errno));
	if (!t)
		return;
	t_await_calibration(t, watcher, t_calib_limit_ms());
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.src == TSC_SRC_CALIBRATION, "forced calibration (%s) not used: %s", how,
	      tsc_src_name(i.src));
	CHECK(i.calibrated, "forced calibration (%s) not reported", how);
	CHECK(i.calib_ns > 0, "forced calibration (%s) took %llu ns", how,
	      (unsigned long long)i.calib_ns);
	CHECK(i.err_ppb > 0 && i.err_ppb <= 1000, "forced calibration (%s): error bound %llu ppb",
	      how, (unsigned long long)i.err_ppb);
	printf("# figure: forced calibration (%s) %.2f ms, %llu kHz, error bound %.3f ppm\n", how,
	       i.calib_ns / 1e6, (unsigned long long)i.khz, i.err_ppb / 1000.0);
	t_fact(watcher ? "forced_watcher_source" : "forced_source", "%s", tsc_src_name(i.src));
	t_fact(watcher ? "forced_watcher_err_ppb" : "forced_err_ppb", "%llu",
	       (unsigned long long)i.err_ppb);
	tsc_close(t);
}

int main(void)
{
	char cs[64] = "", stable[8] = "", policy[8] = "0";
	unsigned int a, b, c, d;
	bool invariant = false, rdtscp = false, want;
	struct tsc_info i;
	struct tsc *t;
	int pr = 0;

	line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs));
	line("/sys/devices/system/tsc/tsc0/tsc_stable", stable, sizeof(stable));
	line("/proc/sys/kernel/tsc_user", policy, sizeof(policy));
	if (__get_cpuid(0x80000007, &a, &b, &c, &d))
		invariant = d & (1u << 8);
	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		rdtscp = d & (1u << 27);
	prctl(PR_GET_TSC, &pr, 0, 0, 0);
	/* A kernel with the series vouches for a TSC without the flag
	 * (TCG's has none) by tsc_stable; a trap policy keeps it from us. */
	want = !strcmp(cs, "tsc") && (invariant || !strcmp(stable, "1")) &&
	       !strcmp(policy, "0") && pr != PR_TSC_SIGSEGV;
	printf("# clocksource %s, invariant TSC %d, tsc_stable %s, tsc_user %s, RDTSCP %d: expect %s\n",
	       cs, invariant, *stable ? stable : "none", policy, rdtscp,
	       want ? "usable" : "not usable");

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open: %s", strerror(errno));
	if (!t)
		DONE();
	tsc_get_info(t, &i, sizeof(i));
	/* One decision, or two where the vDSO answers: the open's early
	 * one, and the full one the first report settles. */
	CHECK(i.decisions >= 1 && i.decisions <= 2 && i.switches == 0, "decisions %llu switches %llu",
	      (unsigned long long)i.decisions, (unsigned long long)i.switches);
	/* Without the kernel's factors, perf and a calibration follow in
	 * tsc_process_events(); then one switch at most, the takeover. */
	t_process(t, t_calib_limit_ms());
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
	t_fact("usable", "%d", i.usable);
	tsc_close(t);

	forced(false);
	forced(true);
	DONE();
}
