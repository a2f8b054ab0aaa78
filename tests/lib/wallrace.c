// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The wall reads' fast path (tsc.h, since 0.7) under races:
 *  1. it writes no shared memory: 10000 reads of each clock, of
 *     tsc_clock_gettime(), tsc_clock_gettime_ordered() and
 *     tsc_ns_to_clock(), leave the handle byte
 *     for byte as they found it (0.6's reads raised a mark at each);
 *  2. one reader thread per online CPU (at least 2) reads MONOTONIC,
 *     BOOTTIME, MONOTONIC_RAW, REALTIME and TAI, a round with
 *     tsc_clock_gettime() and one with tsc_clock_gettime_ordered(), for 2 s while this thread re-anchors every 100 us (made-up
 *     readings that turn the slew from +400 ppm to -400 ppm and back:
 *     anchor()), stalled at every other slower anchor (ahead of a faster copy)
 *     after its last look at its clock and before it sends
 *     readers to the new copy (t->wall_stall: readers of the old copy run
 *     on past where the new segments start, on the marks), for 2 us past
 *     that start or, every eighth stall, 300 us.  No reading may be below
 *     the reader's own last one of that clock, nor an ordered one below
 *     the highest any thread had published (an atomic) before it began
 *     (unordered ones below it are a figure): the kernel does
 *     not step REALTIME and TAI meanwhile (else those two are not
 *     checked, and the test says so);
 *  3. meanwhile SIGALRM every 20 us runs a handler in whichever thread,
 *     the writer included (it holds the lock, mid-update): its MONOTONIC
 *     readings must not fail, hang nor go back below the last one any
 *     handler read.
 * On the TSC: the live one, or a made-up sysroot that trusts it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "t.h"
#include "../../lib/src/internal.h"

#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1	/* TSan holds a signal until the next intercepted call */
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif
#ifndef T_TSAN
#define T_TSAN 0
#endif

#define NCLK 5
static const clockid_t clk[NCLK] = {
	CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME, CLOCK_TAI,
};
static const char *const name[NCLK] = { "MONOTONIC", "BOOTTIME", "MONOTONIC_RAW", "REALTIME",
					"TAI" };

static struct tsc *h;
static atomic_bool stop;
static uint64_t last[NCLK];		/* the highest any reader published */
static atomic_ullong reads, own_back, cross_back, worst_back, errs;
static atomic_ullong cross_below_unordered, worst_unordered;	/* figures: no promise */
static atomic_ullong wall_back;		/* REALTIME, TAI: the kernel's steps back count */

static void max_store(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELEASE,
						       __ATOMIC_RELAXED))
		;
}

static void note_worst(atomic_ullong *count, atomic_ullong *worst, uint64_t by)
{
	unsigned long long w = atomic_load(worst);

	atomic_fetch_add(count, 1);
	while (w < by && !atomic_compare_exchange_weak(worst, &w, by))
		;
}

static void note_back(atomic_ullong *count, uint64_t by)
{
	note_worst(count, &worst_back, by);
}

static void *reader(void *arg)
{
	uint64_t prev[NCLK] = { 0 }, seen, v, n = 0;
	int k, nclk = *(int *)arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* Every other round unordered: never back within the
		 * thread, and between threads only a figure. */
		bool ordered = n / nclk % 2;

		for (k = 0; k < nclk; k++) {
			seen = __atomic_load_n(&last[k], __ATOMIC_ACQUIRE);
			if ((ordered ? tsc_clock_gettime_ordered : tsc_clock_gettime)(h, clk[k], &v)) {
				atomic_fetch_add(&errs, 1);
				continue;
			}
			if (k >= 3 && (v < prev[k] || (ordered && v < seen)))
				atomic_fetch_add(&wall_back, 1);
			else if (v < prev[k])
				note_back(&own_back, prev[k] - v);
			else if (v < seen && ordered)
				note_back(&cross_back, seen - v);
			else if (v < seen)
				note_worst(&cross_below_unordered, &worst_unordered, seen - v);
			prev[k] = v;
			max_store(&last[k], v);
			n++;
		}
	}
	atomic_fetch_add(&reads, n);
	return NULL;
}

/* Stalled after the last look, before the turn to the new copy, once
 * an anchor (the writer sees the stall after the turn, and publishes
 * again further on). */
static unsigned int stalls;
static bool stalled;

static void stall_before_turn(struct tsc *t)
{
	uint64_t past;

	if (stalled)
		return;
	stalled = true;
	past = ++stalls % 8 ? 2000 : 300000;

	while (tsc_now_ns_ordered(t) < t->wall_T + past)
		;
}

static uint64_t sig_last;
static atomic_int sig_reads, sig_back, sig_errs;	/* lock-free: signal-safe */

static void on_alarm(int sig)
{
	uint64_t v, seen;
	int saved = errno;

	(void)sig;
	seen = __atomic_load_n(&sig_last, __ATOMIC_ACQUIRE);
	if (tsc_clock_gettime_ordered(h, CLOCK_MONOTONIC, &v)) {
		atomic_fetch_add(&sig_errs, 1);
	} else {
		atomic_fetch_add(&sig_back, v < seen);
		max_store(&sig_last, v);
		atomic_fetch_add(&sig_reads, 1);
	}
	errno = saved;
}

/* An anchor whose readings put every clock 400 us ahead of its mapping
 * or, the next time, behind it: the new segments slew at +400 ppm, then
 * -400 ppm, and a stalled writer's readers of the old copy run on
 * 800 ppm faster than the new copy (240 ns in 300 us).  Every clock
 * moves alike: REALTIME, BOOTTIME and TAI keep their offsets to
 * MONOTONIC, so that no step is taken. */
static const clockid_t wclk[W_NR] = {
	CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
};

static void anchor(int a)
{
	struct wall_sample x = { .freq_ok = false };
	uint64_t l = tsc_now_ns(h), v = 0;
	int i;

	for (i = 0; i < W_NR; i++) {
		tsc_ns_to_clock(h, l, wclk[i], &v);
		x.l[i] = l;
		x.c[i] = a & 1 ? v - 400000 : v + 400000;
		x.w[i] = 100;
	}
	pthread_mutex_lock(&h->lock);
	tsc__wall_anchor(h, &x);
	pthread_mutex_unlock(&h->lock);
}

/* 1: the reads write nothing. */
static void no_writes(void)
{
	static struct tsc before;
	uint64_t v, sum = 0;
	size_t off;
	int k, n;

	memcpy(&before, h, sizeof(before));
	for (n = 0; n < 10000; n++)
		for (k = 0; k < NCLK; k++) {
			CHECK(!tsc_clock_gettime(h, clk[k], &v), "%s", name[k]);
			sum += v;
			CHECK(!tsc_clock_gettime_ordered(h, clk[k], &v), "%s", name[k]);
			sum += v;
			CHECK(!tsc_ns_to_clock(h, tsc_now_ns(h), clk[k], &v), "%s", name[k]);
			sum += v;
		}
	for (off = 0; off < sizeof(before) && ((char *)h)[off] == ((char *)&before)[off]; off++)
		;
	CHECK(off == sizeof(before), "150000 wall reads wrote to the handle, first at byte %zu "
	      "of %zu (the marks begin at %zu)", off, sizeof(before),
	      offsetof(struct tsc, wall_mark));
	if (off == sizeof(before))
		printf("# %zu bytes of the handle unchanged by 150000 wall reads (sum %llu)\n",
		       sizeof(before), (unsigned long long)(sum & 1));
}

int main(void)
{
	struct itimerval it = { { 0, 20 }, { 0, 20 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct tsc_info i0, i1;
	pthread_t th[64];
	char root[64];
	uint64_t end;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n, k, nclk = NCLK, anchors = 0;

	h = t_open_tsc(root, false);	/* this thread is the only writer */
	t_live_tsc(h);
	no_writes();
	n = cpus < 2 ? 2 : cpus > 64 ? 64 : (int)cpus;
	tsc_get_info(h, &i0, sizeof(i0));
	sigaction(SIGALRM, &sa, NULL);
	for (k = 0; k < n; k++)
		CHECK(!pthread_create(&th[k], NULL, reader, &nclk), "pthread_create");
	setitimer(ITIMER_REAL, &it, NULL);
	h->wall_stall = NULL;
	end = t_clock(CLOCK_MONOTONIC) + 2000000000ull;
	while (t_clock(CLOCK_MONOTONIC) < end) {
		pthread_mutex_lock(&h->lock);
		h->wall_stall = anchors & 2 ? stall_before_turn : NULL;
		stalled = false;
		pthread_mutex_unlock(&h->lock);
		anchor(anchors);
		anchors++;
		usleep(100);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	atomic_store(&stop, true);
	for (k = 0; k < n; k++)
		pthread_join(th[k], NULL);
	h->wall_stall = NULL;
	tsc_get_info(h, &i1, sizeof(i1));
	printf("# figure: %d readers, %d re-anchors (%u stalled), %llu reads: %llu below the "
	       "thread's last, %llu ordered ones below another thread's earlier (worst %llu ns), "
	       "%llu unordered ones (no promise; worst %llu ns), %llu failed; "
	       "%d in signal handlers, %d back, %d failed\n", n, anchors, stalls,
	       (unsigned long long)reads, (unsigned long long)own_back,
	       (unsigned long long)cross_back, (unsigned long long)worst_back,
	       (unsigned long long)cross_below_unordered, (unsigned long long)worst_unordered,
	       (unsigned long long)errs, atomic_load(&sig_reads), atomic_load(&sig_back),
	       atomic_load(&sig_errs));
	/* REALTIME and TAI go back by the kernel's steps: none, or not judged. */
	if (i1.clock_steps != i0.clock_steps)
		printf("# the mapping took %llu steps meanwhile (the kernel's clock was set?): "
		       "REALTIME and TAI readings count as figures only\n",
		       (unsigned long long)(i1.clock_steps - i0.clock_steps));
	CHECK(reads > 100000, "only %llu reads", (unsigned long long)reads);
	CHECK(stalls > 100, "only %u stalled anchors", stalls);
	CHECK(!own_back && !cross_back, "MONOTONIC, BOOTTIME, MONOTONIC_RAW went back: %llu "
	      "within a thread, %llu across threads, by up to %llu ns",
	      (unsigned long long)own_back, (unsigned long long)cross_back,
	      (unsigned long long)worst_back);
	printf("# REALTIME, TAI: %llu readings back, %llu steps of the mapping (last %lld ns)\n",
	       (unsigned long long)wall_back, (unsigned long long)(i1.clock_steps - i0.clock_steps),
	       (long long)i1.last_clock_step_ns);
	CHECK(i1.clock_steps != i0.clock_steps || !wall_back,
	      "REALTIME, TAI went back %llu times without a step of the mapping",
	      (unsigned long long)wall_back);
	CHECK(!errs, "%llu reads failed", (unsigned long long)errs);
	CHECK(T_TSAN || atomic_load(&sig_reads) > 100, "only %d reads in signal handlers",
	      atomic_load(&sig_reads));
	CHECK(!atomic_load(&sig_back) && !atomic_load(&sig_errs),
	      "in signal handlers: %d back, %d failed", atomic_load(&sig_back),
	      atomic_load(&sig_errs));
	t_fact("reads", "%llu", (unsigned long long)reads);
	t_fact("backs", "%llu", (unsigned long long)(own_back + cross_back));
	tsc_close(h);
	t_rmroot(root);
	DONE();
}
