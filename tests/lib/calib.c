// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * A calibration that does not hold up tsc_open(): on a sysroot of a stock
 * kernel (no factors) where the library calibrates, a handle with a watcher reads
 * the fallback clock at first, takes the TSC once the bound is 1 ppm, and
 * refines it, each time as a slew; readers of both kinds run throughout
 * and never see time go back.  The takeover itself is no step: the TSC
 * line meets the fallback clock, ahead of it by less than the switch
 * margin of 1 us (by about the time clock_gettime() takes to read its
 * clock; checked where a bracket of it is under 200 ns, a figure
 * elsewhere).  The refinements take their brackets from the wall
 * anchors: no calibration burst after the takeover.  The same with
 * CLOCK_MONOTONIC as the fallback clock.  A handle without a
 * watcher does not calibrate in tsc_open(): tsc_process_events() does,
 * and takes the TSC the same way.  A forced calibration goes on to its
 * bound where the kernel does not trust the TSC too, either way.  Times
 * are figures, not checks.
 */
#include <pthread.h>

#include "t.h"
#include "../../lib/src/internal.h"

static struct tsc *h;
static int stop;
static uint64_t limit_ns;	/* when a calibration that has not ended fails */
static uint64_t backward, reads;

static void *reader(void *arg)
{
	bool ordered = arg;
	uint64_t prev = 0, now, back = 0, n = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		now = ordered ? tsc_now_ns_ordered(h) : tsc_now_ns(h);
		if (now < prev) {
			back++;
			printf("# %s read went back %llu ns\n", ordered ? "ordered" : "unordered",
			       (unsigned long long)(prev - now));
		}
		prev = now;
		n++;
	}
	__atomic_fetch_add(&backward, back, __ATOMIC_RELAXED);
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The calibration's own bursts so far (under the lock the watcher takes). */
static uint64_t bursts(struct tsc *t)
{
	uint64_t n;

	pthread_mutex_lock(&t->lock);
	n = t->sf.calib.bursts;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* The narrowest bracket of clock_gettime(CLOCK_MONOTONIC_RAW) between two
 * ordered TSC reads, in ns: what reading the fallback clock takes here. */
static uint64_t clock_read_ns(struct tsc *t)
{
	uint64_t best = UINT64_MAX, a, b;
	int k;

	for (k = 0; k < 64; k++) {
		a = tsc_rdtsc_ordered(t);
		t_clock(CLOCK_MONOTONIC_RAW);
		b = tsc_rdtsc_ordered(t);
		if (b >= a && tsc_delta_to_ns(t, b - a) < best)
			best = tsc_delta_to_ns(t, b - a);
	}
	return best;
}

static bool has_reason(struct tsc *t, enum tsc_reason_kind k, const char *text)
{
	struct tsc_reason r[64];
	int i, n = tsc_reasons(t, r, 64);

	for (i = 0; i < n && i < 64; i++)
		if (r[i].kind == k && strstr(r[i].text, text))
			return true;
	return false;
}

/* A handle with a watcher on root, followed for ms after the takeover;
 * its fallback clock CLOCK_MONOTONIC (NTP's rate) if mono. */
static void with_watcher(const char *root, uint64_t khz, bool mono, int ms)
{
	uint64_t t0, t_open, t_use = 0, bound_use, bound_end, b_use, b_end, width;
	struct tsc_info i;
	int64_t step;
	pthread_t th[2];
	int k;

	TSC_OPTS(o, .sysroot = root, .force_calibrate = true,
		 .fallback = mono ? TSC_FALLBACK_MONOTONIC : TSC_FALLBACK_MONOTONIC_RAW);
	stop = 0;
	backward = reads = 0;
	t0 = mono_ns();
	h = tsc_open(&o);
	t_open = mono_ns() - t0;
	CHECK(h, "open");
	if (!h)
		return;
	tsc_get_info(h, &i, sizeof(i));
	CHECK(!tsc_in_use(h) && i.calibrated,
	      "right after tsc_open(): TSC in use %d, calibration begun %d: it should have "
	      "begun and not be done", tsc_in_use(h), i.calibrated);
	CHECK(has_reason(h, TSC_REASON_BLOCK, "calibrating"), "no reason says calibrating");
	CHECK(i.err_ppb > 1000, "right after tsc_open() the bound is %llu ppb: no measurement "
	      "gives that yet", (unsigned long long)i.err_ppb);
	for (k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, reader, (void *)(long)k);
	while (!tsc_in_use(h) && mono_ns() - t0 < limit_ns)
		t_sleep_ms(1);
	t_use = mono_ns() - t0;
	tsc_get_info(h, &i, sizeof(i));
	b_use = bursts(h);
	bound_use = i.err_ppb;
	step = i.last_step_ns;
	width = clock_read_ns(h);
	/* The step is measured within half such a bracket. */
	CHECK(step >= -(int64_t)width, "the takeover stepped back %lld ns", (long long)-step);
	CHECK(width >= 200 || step < 1000,
	      "the takeover stepped %+lld ns, as a switch with its 1 us margin does; reading the "
	      "clock takes %llu ns here", (long long)step, (unsigned long long)width);
	CHECK(tsc_in_use(h), "the TSC not in use %.1f s after tsc_open()", limit_ns / 1e9);
	CHECK(i.src == TSC_SRC_CALIBRATION && i.err_ppb <= 1000,
	      "taken with factors from %s, bound %llu ppb (at most 1000)",
	      tsc_src_name(i.src), (unsigned long long)i.err_ppb);
	CHECK(i.khz > khz - khz / 1000 && i.khz < khz + khz / 1000,
	      "calibrated %llu kHz, this TSC runs at %llu", (unsigned long long)i.khz,
	      (unsigned long long)khz);
	t_sleep_ms(ms);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	tsc_get_info(h, &i, sizeof(i));
	b_end = bursts(h);
	bound_end = i.err_ppb;
	CHECK(b_end == b_use, "%llu calibration bursts after the takeover: the refinements "
	      "should take the wall anchors' brackets", (unsigned long long)(b_end - b_use));
	CHECK(i.refinements >= 1 && bound_end < bound_use,
	      "%.1f s later: %llu refinements, bound %llu ppb (was %llu)", ms / 1000.0,
	      (unsigned long long)i.refinements, (unsigned long long)bound_end,
	      (unsigned long long)bound_use);
	CHECK(i.switches == 1, "switches %llu: only the takeover may switch; refinements slew",
	      (unsigned long long)i.switches);
	CHECK(backward == 0, "%llu of %llu reads went back", (unsigned long long)backward,
	      (unsigned long long)reads);
	CHECK(reads > 1000, "only %llu reads", (unsigned long long)reads);
	printf("# figure: calibration with a watcher%s: tsc_open() %llu us, TSC in use after "
	       "%llu ms at %llu ppb (%llu bursts), %llu refinements to %llu ppb in %.1f s "
	       "(%llu bursts more), takeover step %+lld ns (a clock read takes %llu ns), "
	       "%llu reads, %llu back\n", mono ? ", fallback MONOTONIC" : "",
	       (unsigned long long)t_open / 1000,
	       (unsigned long long)t_use / 1000000, (unsigned long long)bound_use,
	       (unsigned long long)b_use, (unsigned long long)i.refinements,
	       (unsigned long long)bound_end, ms / 1000.0, (unsigned long long)(b_end - b_use),
	       (long long)step, (unsigned long long)width, (unsigned long long)reads,
	       (unsigned long long)backward);
	tsc_close(h);
}

/* No watcher: tsc_open() does not calibrate inline; the fallback clock
 * until tsc_process_events() has a 1 ppm bound, then the TSC. */
static void without_watcher(const char *root)
{
	uint64_t t0, took, calls = 0;
	struct tsc_info i;
	struct tsc *t;

	TSC_OPTS(o, .sysroot = root, .force_calibrate = true, .no_watcher = true);
	t0 = mono_ns();
	t = tsc_open(&o);
	took = mono_ns() - t0;
	CHECK(t, "open");
	if (!t)
		return;
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!tsc_in_use(t) && i.calibrated && !i.calib_ns && i.src == TSC_SRC_NONE,
	      "no watcher: right after tsc_open() the fallback clock and a calibration only "
	      "begun (in use %d, begun %d, over %llu ns, factors %s)", tsc_in_use(t),
	      i.calibrated, (unsigned long long)i.calib_ns, tsc_src_name(i.src));
	while (!tsc_in_use(t) && mono_ns() - t0 < limit_ns) {
		tsc_process_events(t);
		calls++;
		t_sleep_ms(1);
	}
	tsc_get_info(t, &i, sizeof(i));
	CHECK(tsc_in_use(t) && i.src == TSC_SRC_CALIBRATION && i.err_ppb <= 1000,
	      "no watcher: after %llu tsc_process_events() in use %d, factors %s, bound %llu ppb",
	      (unsigned long long)calls, tsc_in_use(t), tsc_src_name(i.src),
	      (unsigned long long)i.err_ppb);
	CHECK(i.switches == 1 && i.last_step_ns >= -1000 && i.last_step_ns < 1000,
	      "no watcher: switches %llu, takeover step %+lld ns",
	      (unsigned long long)i.switches, (long long)i.last_step_ns);
	printf("# figure: calibration without a watcher: tsc_open() %llu us, TSC in use after "
	       "%llu tsc_process_events() at %llu ppb\n", (unsigned long long)took / 1000,
	       (unsigned long long)calls, (unsigned long long)i.err_ppb);
	tsc_close(t);
}

/* perf_event_open() can take 10 ms: a live open with default options
 * leaves it to the first tsc_process_events() (no watcher here, so no
 * other thread asks it meanwhile). */
static void perf_after_open(void)
{
	bool read_in_open, read_after;
	struct tsc *t;

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open");
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	read_in_open = t->sf.perf_read;
	pthread_mutex_unlock(&t->lock);
	CHECK(!read_in_open, "tsc_open() asked perf (%s)", t->sf.perf_why);
	tsc_process_events(t);
	pthread_mutex_lock(&t->lock);
	read_after = t->sf.perf_read || !t->sf.perf_wait;
	pthread_mutex_unlock(&t->lock);
	CHECK(read_after, "perf still not asked after tsc_process_events()");
	tsc_close(t);
}

/* Forced on a kernel that does not trust the TSC: the TSC is not used,
 * yet the calibration goes on to its bound, saying so while it does
 * ("calibrating:"), with a watcher or through tsc_process_events(). */
static void forced_unused(const char *root, bool watcher)
{
	const char *how = watcher ? "watcher" : "tsc_process_events()";
	struct tsc_info i;
	struct tsc *t;
	int ms;

	t_write(root, "sys/devices/system/tsc/tsc0/tsc_stable", "0\n");
	TSC_OPTS(o, .sysroot = root, .no_watcher = !watcher, .force_calibrate = true);
	t = tsc_open(&o);
	CHECK(t, "forced, TSC not trusted (%s): open: %s", how, strerror(errno));
	if (!t)
		return;
	if (!t_reason(t, "calibrating: ")) {
		FAIL("forced, TSC not trusted (%s): no reason says calibrating", how);
		t_print_reasons(t);
	}
	ms = t_await_calibration(t, watcher, t_calib_limit_ms());
	tsc_get_info(t, &i, sizeof(i));
	CHECK(!i.usable && !tsc_in_use(t), "forced, TSC not trusted (%s): the TSC is used", how);
	CHECK(i.src == TSC_SRC_CALIBRATION && i.khz && i.err_ppb && i.err_ppb <= 1000,
	      "forced, TSC not trusted (%s): source %s, %llu kHz, bound %llu ppb after %d ms", how,
	      tsc_src_name(i.src), (unsigned long long)i.khz, (unsigned long long)i.err_ppb, ms);
	printf("# figure: forced calibration, TSC not used (%s): %llu kHz, %.3f ppm, within %d ms\n",
	       how, (unsigned long long)i.khz, i.err_ppb / 1000.0, ms);
	tsc_close(t);
}

int main(void)
{
	char root[] = "/tmp/tsc-calib-XXXXXX", cmd[128];
	uint64_t khz = t_host_khz();

	limit_ns = (uint64_t)t_calib_limit_ms() * 1000000;
	perf_after_open();
	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	/* A stock kernel that keeps time with the TSC: no tsc0 files, so no
	 * factors but a calibration (forced: a sysroot is not this machine). */
	t_mkroot(root, khz);
	snprintf(cmd, sizeof(cmd), "rm -r %s/sys/devices/system/tsc", root);
	if (system(cmd))
		SKIP("cannot remove the sysroot's tsc0");
	with_watcher(root, khz, false, 3500);
	with_watcher(root, khz, true, 1500);
	without_watcher(root);
	t_rmroot(root);
	/* A kernel with the series that no longer trusts the TSC. */
	CHECK(!mkdir(root, 0700), "mkdir %s: %s", root, strerror(errno));
	t_mkroot(root, khz);
	forced_unused(root, true);
	forced_unused(root, false);
	t_rmroot(root);
	DONE();
}
