// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * A writer that stalls at a change of the published line: a test hook
 * (t->stall) sleeps 100 ms at each of its three steps (before the first
 * turn, with the mark open, and with it closed before the second turn),
 * while three threads read.  Two take ordered reads, checked within
 * their thread and against every read another thread returned before
 * theirs began; one takes unordered reads, checked within its thread.
 * The changes: refinements to a slower and to a faster line (9 ppm),
 * switches between TSC lines 500 ppm apart and to and from
 * CLOCK_MONOTONIC_RAW, and the takeover after a calibration; all of them
 * again with the writer's TSC 900 ns ahead of the readers' and 900 ns
 * behind (t->skew), then 300 changes in a row without a stall (refinements,
 * switches 500 ppm apart, to RAW and back).  Without the mark, readers
 * ran on along the old line while the writer stalled and then stepped
 * back, by 712 ns at the 9 ppm refinement and 98.8 us at the switches.
 * And time must go on: the writer's own thread (like a signal handler
 * that interrupted it) reads the clock before and after each stall, and
 * it may have stood still for at most 1 ms of the stall (plus 0.5 ms).
 * Then all of it again with the readers reading tsc_clock_gettime() and
 * tsc_clock_gettime_ordered() (MONOTONIC), whose inline path reads the
 * line on its own, and an anchor after each change.
 */
#include <pthread.h>
#include <unistd.h>

#include "t.h"
#include "../../lib/src/internal.h"

#define TSC0 "sys/devices/system/tsc/tsc0/"
#define STALL_MS 100

static struct tsc *h;
static int stop, stalls, frozen;
static uint64_t top;		/* the highest ordered read returned so far */
static uint64_t back, below, worst, reads, fails;
static bool wall;		/* the readers read tsc_clock_gettime*() */

static void stalled(struct tsc *t)
{
	uint64_t m0, v0, m1, v1;

	stalls++;
	v0 = tsc_now_ns(t);	/* the stall measured within [v0, v1]: */
	m0 = t_clock(CLOCK_MONOTONIC);	/* preempted in between, no false alarm */
	t_sleep_ms(STALL_MS);
	m1 = t_clock(CLOCK_MONOTONIC);
	v1 = tsc_now_ns(t);
	/* Time stood still at most 1 ms (plus 0.5 for the rates). */
	frozen += v1 - v0 + 1500000 < m1 - m0;
}

static uint64_t read_now(bool ordered)
{
	uint64_t v = 0;

	if (!wall)
		return ordered ? tsc_now_ns_ordered(h) : tsc_now_ns(h);
	if (ordered ? tsc_clock_gettime_ordered(h, CLOCK_MONOTONIC, &v) :
		      tsc_clock_gettime(h, CLOCK_MONOTONIC, &v))
		__atomic_fetch_add(&fails, 1, __ATOMIC_RELAXED);
	return v;
}

static void *reader(void *ordered)
{
	uint64_t prev = 0, v, seen, cur, n = 0, b = 0, x = 0, w = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		seen = __atomic_load_n(&top, __ATOMIC_ACQUIRE);
		v = read_now(ordered);
		if (v < prev) {
			b++;
			w = prev - v > w ? prev - v : w;
		}
		if (ordered && v < seen) {
			x++;
			w = seen - v > w ? seen - v : w;
		}
		for (cur = seen; ordered && v > cur;)
			if (__atomic_compare_exchange_n(&top, &cur, v, true, __ATOMIC_RELEASE,
							__ATOMIC_ACQUIRE))
				break;
		prev = v;
		n++;
	}
	__atomic_fetch_add(&back, b, __ATOMIC_RELAXED);
	__atomic_fetch_add(&below, x, __ATOMIC_RELAXED);
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	for (cur = __atomic_load_n(&worst, __ATOMIC_RELAXED); w > cur;)
		if (__atomic_compare_exchange_n(&worst, &cur, w, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	return NULL;
}

static pthread_t th[3];

static void readers_start(void)
{
	int k;

	stop = 0;
	back = below = worst = reads = fails = 0;
	frozen = 0;
	for (k = 0; k < 3; k++)
		pthread_create(&th[k], NULL, reader, k ? (void *)1 : NULL);
	t_sleep_ms(30);
}

static void readers_stop(const char *what)
{
	int k;

	t_sleep_ms(30);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 3; k++)
		pthread_join(th[k], NULL);
	CHECK(!back && !below, "%s: %llu reads went back within a thread, %llu below another "
	      "thread's earlier read, by up to %llu ns", what, (unsigned long long)back,
	      (unsigned long long)below, (unsigned long long)worst);
	CHECK(reads > 1000, "%s: only %llu reads", what, (unsigned long long)reads);
	CHECK(!fails, "%s: %llu reads failed", what, (unsigned long long)fails);
	CHECK(!frozen, "%s: %d times the stalled writer's own thread saw tsc_now_ns() stand "
	      "still more than 1.5 ms of its stall", what, frozen);
	printf("# %s%s: %llu reads, writer stalled %d times, %llu went back\n",
	       wall ? "tsc_clock_gettime(), " : "", what, (unsigned long long)reads, stalls,
	       (unsigned long long)(back + below));
}

/* Write val to path in root, and have the stalled writer publish it. */
static void change(const char *root, const char *what, const char *path, const char *val,
		   bool in_use, bool refinement)
{
	struct tsc_info a, b;

	tsc_get_info(h, &a, sizeof(a));
	readers_start();
	if (path)
		t_write(root, path, val);
	stalls = 0;
	h->stall = stalled;
	CHECK(tsc_process_events(h) == 1, "%s: no change seen", what);
	h->stall = NULL;
	if (wall)
		tsc_reanchor(h);
	readers_stop(what);
	tsc_get_info(h, &b, sizeof(b));
	CHECK(stalls == 3, "%s: writer stalled %d times, want 3", what, stalls);
	CHECK(tsc_in_use(h) == in_use, "%s: TSC in use %d, want %d", what, tsc_in_use(h), in_use);
	if (refinement)
		CHECK(b.refinements == a.refinements + 1 && b.switches == a.switches,
		      "%s: %llu refinements, %llu switches; want a refinement", what,
		      (unsigned long long)(b.refinements - a.refinements),
		      (unsigned long long)(b.switches - a.switches));
	else
		CHECK(b.switches == a.switches + 1, "%s: %llu switches, want 1", what,
		      (unsigned long long)(b.switches - a.switches));
}

static void set_khz(const char *root, const char *what, uint64_t khz, bool refinement)
{
	char b[64];

	snprintf(b, sizeof(b), "%llu\n", (unsigned long long)khz);
	t_write(root, TSC0 "tsc_khz", b);
	snprintf(b, sizeof(b), "%llu\n", (unsigned long long)t_mult24(khz));
	change(root, what, TSC0 "tsc_mult", b, true, refinement);
}

/* The calibration's takeover from the fallback clock, and the
 * refinements that follow it, every step stalled; the writer skew ticks
 * ahead of the readers.  On a sysroot whose kernel trusts the TSC and
 * gives no factors, so that only the calibration can give them, on
 * either kind of machine (the live kernel may not trust the TSC, or may
 * give factors at once). */
static void takeover(const char *root, uint64_t khz, uint64_t skew)
{
	struct tsc_info i;
	char p[200];
	int ms, limit;

	t_mkroot(root, khz);
	snprintf(p, sizeof(p), "%s/%s", root, TSC0 "tsc_khz");
	unlink(p);
	snprintf(p, sizeof(p), "%s/%s", root, TSC0 "tsc_mult");
	unlink(p);
	snprintf(p, sizeof(p), "%s/%s", root, TSC0 "tsc_shift");
	unlink(p);
	TSC_OPTS(o, .sysroot = root, .no_watcher = true, .force_calibrate = true);
	h = tsc_open(&o);
	CHECK(h, "open with force_calibrate: %s", strerror(errno));
	if (!h)
		return;
	h->skew = skew;
	readers_start();
	stalls = 0;
	h->stall = stalled;
	for (ms = 0, limit = t_calib_limit_ms() > 5000 ? t_calib_limit_ms() : 5000;
	     ms < limit && !tsc_in_use(h); ms++) {
		tsc_process_events(h);
		t_sleep_ms(1);
	}
	h->stall = NULL;
	readers_stop("takeover");
	tsc_get_info(h, &i, sizeof(i));
	if (!tsc_in_use(h) && (i.prctl_tsc == 2 || i.tsc_user == 2)) {
		printf("# RDTSC faults in this task: no takeover to test\n");
	} else {
		CHECK(tsc_in_use(h), "the calibrated TSC never took over (%d ms)", ms);
		CHECK(stalls >= 3, "takeover: writer stalled %d times", stalls);
	}
	tsc_close(h);
}

/* 300 changes without a stall, so that the writer closes the mark right
 * after its turn: refinements 9 ppm apart and switches 500 ppm apart,
 * back and forth. */
static void burst(const char *root, uint64_t khz)
{
	static const uint64_t ppm[4] = { 9, 0, 500, 0 };
	uint64_t k;
	char b[64];
	int n;

	readers_start();
	for (n = 0; n < 300; n++) {
		k = khz + khz * ppm[n % 4] / 1000000;
		snprintf(b, sizeof(b), "%llu\n", (unsigned long long)k);
		t_write(root, TSC0 "tsc_khz", b);
		snprintf(b, sizeof(b), "%llu\n", (unsigned long long)t_mult24(k));
		t_write(root, TSC0 "tsc_mult", b);
		/* and every fifth time to CLOCK_MONOTONIC_RAW and back */
		if (n % 5 == 4) {
			t_write(root, TSC0 "tsc_stable", "0\n");
			tsc_process_events(h);
			t_write(root, TSC0 "tsc_stable", "1\n");
		}
		tsc_process_events(h);
		if (wall && n % 3 == 0)
			tsc_reanchor(h);
	}
	stalls = 3;
	readers_stop("300 changes, no stall");
}

/* Every change on a sysroot that trusts this TSC at khz, the writer skew
 * ns ahead of the readers (behind if negative). */
static void changes(const char *root, uint64_t khz, int64_t skew)
{
	printf("# the writer's TSC %+lld ns from the readers'\n", (long long)skew);
	t_mkroot(root, khz);
	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	h = tsc_open(&o);
	CHECK(h && tsc_in_use(h), "sysroot with a trusted TSC not used");
	if (!h || !tsc_in_use(h)) {
		tsc_close(h);
		return;
	}
	h->skew = (uint64_t)(skew * (int64_t)khz / 1000000);
	set_khz(root, "refinement, 9 ppm slower", khz + khz * 9 / 1000000, true);
	set_khz(root, "refinement, 9 ppm faster", khz, true);
	set_khz(root, "switch to a line 500 ppm faster", khz - khz / 2000, false);
	change(root, "switch from it to CLOCK_MONOTONIC_RAW", TSC0 "tsc_stable", "0\n",
	       false, false);
	change(root, "switch back to it", TSC0 "tsc_stable", "1\n", true, false);
	set_khz(root, "switch from it to a line 500 ppm slower", khz, false);
	burst(root, khz);
	tsc_close(h);
}

int main(void)
{
	char root[] = "/tmp/tsc-stall-XXXXXX";
	uint64_t khz = t_host_khz();

	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	changes(root, khz, 0);
	changes(root, khz, 900);
	changes(root, khz, -900);
	takeover(root, khz, 0);
	takeover(root, khz, khz * 900 / 1000000);
	wall = true;
	changes(root, khz, 0);
	changes(root, khz, 900);
	t_rmroot(root);
	DONE();
}
