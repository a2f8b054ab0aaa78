// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Wall-clock mapping error: tsc_clock_gettime() against clock_gettime()
 * brackets for 2.5 s while the watcher re-anchors every second (and
 * until it has re-anchored twice, however late a loaded machine wakes
 * it).  Goal < 1 us; asserted 50 us.  Then a thread reads MONOTONIC,
 * BOOTTIME and MONOTONIC_RAW in a loop for 2 s while another re-anchors
 * every 200 us: no reading may be below the one before it, nor closer to
 * it than the library's ns moved between them (bracketed by ordered
 * reads) less 1% (a slew is 500 ppm at most, plus the kernel's rate
 * against the library's): never a step back however small, nor the
 * standing still that hides one.  The same (1 s) with the writer
 * stalled past the start of its new segments, as a loaded machine stalls
 * it, at every anchor: after it sent readers to the new copy (it starts
 * the segments again further on), and between its last look at its clock
 * and that (readers of the old copy run on past the start unseen).  Where the
 * kernel does not use the TSC, the fallback's mapping and the TSC's on a
 * made-up sysroot.  In the guest (T_GUEST) the live TSC, or a failure.
 * First, the inline maths against the out-of-line ones. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "t.h"
#include "../../lib/src/internal.h"

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
		/* The watcher's own anchors, however late it runs: the
		 * one at open and two more (12.5 s at most). */
		if (t_clock(CLOCK_MONOTONIC) >= end && tsc_get_info(t, &i, sizeof(i)) > 0 &&
		    i.anchors < 3 && n < 2500)
			end += 5000000;
	}
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.anchors >= 3, "%s: the watcher did not re-anchor twice in %d samples (%llu anchors)",
	      what, n, (unsigned long long)i.anchors);
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

/* The writer stalled at every anchor past T, where the new segments
 * start: after its turn to the new copy (it then sees that it is behind
 * and starts them again further on), or between its last look at its
 * clock and that turn (readers of the old copy run on past T, and it
 * cannot see that: they are held at the marks).  The first through the
 * writer's clock (wall_now: the library's ns, the first reading after
 * the turn late), the second through the hook the writer calls after
 * its last look (wall_stall). */
enum stall { NO_STALL, STALL_AFTER_TURN, STALL_BEFORE_TURN };
static enum stall stall;
static uint32_t stall_seq;
static bool stalled;
static uint64_t stalls;

static uint64_t stalled_now(struct tsc *t)
{
	uint32_t seq = __atomic_load_n(&t->wall.seq, __ATOMIC_RELAXED);
	uint64_t now = tsc_now_ns_ordered(t), v = now;

	if (stalled || seq != stall_seq + 2)
		return now;
	stalled = true;
	stalls++;
	while ((v = tsc_now_ns_ordered(t)) < t->wall_T + 2000)
		;
	return v;
}

static void stall_before_turn(struct tsc *t)
{
	if (stalled)
		return;
	stalled = true;
	stalls++;
	while (tsc_now_ns_ordered(t) < t->wall_T + 2000)
		;
}

static const char *const stall_name[] = {
	"", ", writer stalled after its turn", ", writer stalled before its turn",
};

/* Re-anchor every 200 us for 2 s (1 s with a stalled writer) while a
 * thread reads. */
static void never_goes_back(struct tsc *t, const char *what, enum stall how)
{
	struct tsc_info i0, i1;
	pthread_t th;
	uint64_t end;

	reads = backs = worst_back = stalls = 0;
	stall = how;
	if (how == STALL_AFTER_TURN)
		t->wall_now = stalled_now;
	if (how == STALL_BEFORE_TURN)
		t->wall_stall = stall_before_turn;
	atomic_store(&stop, false);
	tsc_get_info(t, &i0, sizeof(i0));
	if (pthread_create(&th, NULL, reader, t)) {
		FAIL("pthread_create");
		return;
	}
	end = t_clock(CLOCK_MONOTONIC) + (how ? 1000000000ull : 2000000000ull);
	while (t_clock(CLOCK_MONOTONIC) < end) {
		stall_seq = __atomic_load_n(&t->wall.seq, __ATOMIC_RELAXED);
		stalled = false;
		tsc_reanchor(t);
		usleep(200);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	t->wall_now = tsc__lib_now;
	t->wall_stall = NULL;
	tsc_get_info(t, &i1, sizeof(i1));
	printf("# figure: wall mapping %s%s: %llu re-anchors (%llu stalled), %llu readings of "
	       "MONOTONIC, BOOTTIME, MONOTONIC_RAW, %llu went back or stood still (worst %llu ns)\n",
	       what, stall_name[how], (unsigned long long)(i1.anchors - i0.anchors),
	       (unsigned long long)stalls, (unsigned long long)reads, (unsigned long long)backs,
	       (unsigned long long)worst_back);
	CHECK(!backs, "%s%s: %llu readings went back or stood still, by up to %llu ns", what,
	      stall_name[how], (unsigned long long)backs, (unsigned long long)worst_back);
	CHECK(!how || stalls * 2 > i1.anchors - i0.anchors,
	      "%s%s: only %llu of %llu anchors stalled", what, stall_name[how],
	      (unsigned long long)stalls, (unsigned long long)(i1.anchors - i0.anchors));
	if (how)
		return;
	t_fact("reanchors", "%llu", (unsigned long long)(i1.anchors - i0.anchors));
	t_fact("reads", "%llu", (unsigned long long)reads);
	t_fact("backs", "%llu", (unsigned long long)backs);
}

/* never_goes_back() with the writer stalled, on a handle without a
 * watcher (the test's thread is the only writer).  A live one may take
 * another path than the first handle did: on a stock kernel that keeps
 * time with the TSC the first handle's watcher took the TSC by now,
 * where this one stays on the fallback clock: only tsc_process_events()
 * would calibrate it, and never_goes_back() only re-anchors. */
static void stalled_writer(const char *root, const char *what)
{
	struct tsc *t;

	TSC_OPTS(o, .sysroot = *root ? root : NULL, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open");
	if (!t)
		return;
	if (!*root)
		what = tsc_in_use(t) ? "TSC" : "fallback";
	never_goes_back(t, what, STALL_AFTER_TURN);
	never_goes_back(t, what, STALL_BEFORE_TURN);
	tsc_close(t);
}

/* The inline maths (64 bits that wrap, below 2^31 ns from a segment's
 * start; 128 beyond) against the writer's own (128 bits, wall.c), on
 * segments as steep and as flat as the writer makes them: rates of
 * +-10%, slews of +500 ppm and of standing still (slope 0), at offsets
 * from 0 through the slew's end and 2^31 to days. */
static void maths(void)
{
	static const int64_t R = (1ll << 32) / 10, S = (1ll << 32) / 2000;
	static const int64_t rate[] = { 0, 1, -1, R, -R, 4295, -4295 };
	static const uint64_t len[] = { 0, 1000, 1000000000ull, (1ull << 31) + 5, UINT64_MAX };
	static const uint64_t d[] = { 0, 1, 999, 1000, 1001, 999999999, 1000000000, 1000000001,
				      (1ull << 31) - 1, 1ull << 31, (1ull << 31) + 6,
				      1ull << 32, 1ull << 40, 86400000000000ull * 7 };
	uint64_t fast, slow, s = 123456789012345ull, b = 1700000000123456789ull, n = 0;
	struct tsc *t;
	size_t a, l, k, x;
	int c;

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open");
	if (!t)
		return;
	t->wall.slow_from = UINT64_MAX;
	for (a = 0; a < sizeof(rate) / sizeof(rate[0]); a++)
		for (l = 0; l < sizeof(len) / sizeof(len[0]); l++)
			for (x = 0; x < 3; x++) {
				int64_t slew = x == 0 ? 0 : x == 1 ? S : -((1ll << 32) + rate[a]);

				for (c = 0; c < 2; c++)
					t->wall.c[c].m[W_REAL].cur = (struct tsc_wall_seg){
						.s = s, .b = b, .len = len[l], .rate = rate[a],
						.slew = slew };
				for (k = 0; k < sizeof(d) / sizeof(d[0]); k++, n++) {
					uint64_t ns = s + d[k];

					fast = slow = 0;
					/* The inline path itself, which must take it. */
					CHECK(__tsc_wall_fast(t, W_REAL, __TSC_W_MAP, &ns, &fast) &&
					      !__tsc_wall(t, CLOCK_REALTIME, false, s + d[k], &slow) &&
					      fast == slow,
					      "rate %lld slew %lld len %llu at +%llu ns: inline %llu, "
					      "out of line %llu", (long long)rate[a], (long long)slew,
					      (unsigned long long)len[l], (unsigned long long)d[k],
					      (unsigned long long)fast, (unsigned long long)slow);
				}
			}
	printf("# inline and out-of-line maths agree at %llu points\n", (unsigned long long)n);
	tsc_close(t);
}

int main(void)
{
	struct tsc *t;
	char root[64];
	bool tsc;

	maths();

	t = tsc_open(NULL);	/* with the watcher thread */
	CHECK(t, "open");
	if (!t)
		DONE();
	tsc = tsc_in_use(t);
	t_live_tsc(t);
	measure(t, tsc ? "TSC" : "fallback");
	never_goes_back(t, tsc ? "TSC" : "fallback", NO_STALL);
	tsc_close(t);
	stalled_writer("", NULL);	/* its own path names it */
	if (!tsc) {		/* and the TSC path all the same */
		t = t_open_tsc(root, true);
		measure(t, "TSC (sysroot)");
		never_goes_back(t, "TSC (sysroot)", NO_STALL);
		tsc_close(t);
		stalled_writer(root, "TSC (sysroot)");
		t_rmroot(root);
	}
	DONE();
}
