// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * A TSC that jumps (issue 32, item 3): back, as at a reset on resume, and
 * ahead, as a hypervisor may set it.  In tsckit's guest, where the kernel
 * does not keep time with the TSC (libtsc-lib-tests-unstable), the jump
 * is made with IA32_TSC (or IA32_TSC_ADJUST) written on every CPU through
 * the msr driver, where the CPU honours the write; QEMU's TCG takes both
 * and leaves its RDTSC as it was (seen with Debian 12's QEMU 7.2), so
 * there, as elsewhere (this machine, or a guest whose kernel uses the
 * TSC and would drop it), the library's line is moved instead, as a
 * jump moves it.
 * Each case anchors, waits, jumps, and gives the watcher 2.5 s: it must
 * count the jump at its size, bring library ns back to their place
 * against CLOCK_MONOTONIC_RAW (back) or keep them (ahead: reads of them
 * went ahead), and leave tsc_clock_gettime(MONOTONIC) within 1 ms of the
 * kernel's (2.2 ms after a jump ahead: reads meanwhile map at the top of
 * the drift bound).  A reader pinned to CPU 0 reads MONOTONIC throughout: never
 * back (tsc_clock_gettime(3), BUGS: but for a jump back by less than
 * the time since the anchor plus 1 ms, not made here), and tsc_now_ns()
 * never back after a jump ahead.  Before the check, a jump back left
 * library ns off for good, and MONOTONIC went back by the jump.  Run
 * again with CLOCK_MONOTONIC_RAW a slow call 3 times in 5 (gettimeshim.so,
 * as a guest's emulated clock may be): reads that bracketed RAW within
 * 100 us saw the jump, the others took it for none, and MONOTONIC went
 * back by each whole jump, 5 ms to 1 h; after a jump ahead the writer
 * found itself behind at every look (it read RAW per clock) and never
 * finished its anchor.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>

#include "t.h"
#include "../../lib/src/internal.h"

static struct tsc *h;
static int stop;
static uint64_t mono_back, now_back, back_at, back_from, back_to;

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* Set under gettimeshim.so's slow-raw (main()). */
static int *slow_raw;

static void *reader(void *arg)
{
	uint64_t pm = 0, pn = 0, m, n;

	pin(0);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		n = tsc_now_ns(h);
		if (tsc_clock_gettime(h, CLOCK_MONOTONIC, &m))
			continue;
		if (m < pm && pm - m > mono_back) {
			mono_back = pm - m;
			back_at = t_clock(CLOCK_MONOTONIC);
			back_from = pm;
			back_to = m;
		}
		if (n < pn && pn - n > now_back)
			now_back = pn - n;
		pm = m;
		pn = n;
	}
	return NULL;
}

/* The guest's kernel does not use the TSC, and has the msr driver. */
static bool msr_mode(void)
{
	char b[64];

	t_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", b,
		     sizeof(b));
	return t_in_guest() && getenv("TSCKIT_RESULTS") && access("/dev/cpu/0/msr", W_OK) == 0 &&
	       strcmp(b, "tsc\n");
}

/* MSR msr += ticks on every CPU. */
static void msr_add(uint32_t msr, int64_t ticks)
{
	char p[64];
	uint64_t v;
	int cpu, fd;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		snprintf(p, sizeof(p), "/dev/cpu/%d/msr", cpu);
		fd = open(p, O_RDWR);
		if (fd < 0)
			break;
		CHECK(pread(fd, &v, 8, msr) == 8, "read MSR %#x of CPU %d: %s", msr, cpu,
		      strerror(errno));
		v += (uint64_t)ticks;
		CHECK(pwrite(fd, &v, 8, msr) == 8, "write MSR %#x of CPU %d: %s", msr, cpu,
		      strerror(errno));
		close(fd);
	}
}

/* The TSC of this CPU moved by about ticks (within half) across f(). */
static bool moved(void (*f)(uint32_t, int64_t), uint32_t msr, int64_t ticks)
{
	uint64_t a = tsc_rdtsc(), b;
	int64_t d;

	f(msr, ticks);
	b = tsc_rdtsc();
	d = (int64_t)(b - a) - ticks;
	return llabs(d) < llabs(ticks) / 2;
}

/* Does writing msr move the TSC?  Tried with 10 s ahead and back at once. */
static bool msr_moves(uint32_t msr, uint64_t khz)
{
	int64_t ticks = (int64_t)khz * 10000;
	bool m = moved(msr_add, msr, ticks);

	msr_add(msr, -ticks);
	return m;
}

static int64_t lib_minus_raw(void)
{
	uint64_t a = tsc_now_ns_ordered(h), r = t_clock(CLOCK_MONOTONIC_RAW);
	uint64_t b = tsc_now_ns_ordered(h);

	return (int64_t)(a + (b - a) / 2 - r);
}

static void run(const char *name, int64_t jump_ns, long after_ms, uint32_t msr, uint64_t khz)
{
	struct tsc_info i0, i1;
	int64_t off0, off1, want;
	uint64_t m, k, jump_at, late = 0;
	pthread_t th;
	int tries;

	mono_back = now_back = 0;
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	pthread_create(&th, NULL, reader, NULL);
	/* A jump back by less than the time since the anchor plus 1 ms is
	 * a documented window (tsc_clock_gettime(3), BUGS): on a busy
	 * machine the jump may come that late; then anchor again. */
	for (tries = 0; tries < 5; tries++) {
		uint64_t a0 = t_clock(CLOCK_MONOTONIC_RAW);

		tsc_reanchor(h);
		t_sleep_ms(after_ms);
		tsc_get_info(h, &i0, sizeof(i0));
		off0 = lib_minus_raw();
		jump_at = t_clock(CLOCK_MONOTONIC);
		if (!msr)
			tsc__lock(h);
		late = t_clock(CLOCK_MONOTONIC_RAW) - a0;
		if (jump_ns > 0 || (uint64_t)-jump_ns > late + 2000000)
			break;
		if (!msr)
			tsc__unlock(h);
		printf("# %s: the jump would come %llu us after the anchor: again\n", name,
		       (unsigned long long)late / 1000);
	}
	if (tries == 5) {	/* the lock is not held */
		/* With RAW slow, an anchor may take longer than a small jump
		 * back allows on a busy machine: said, not failed. */
		if (slow_raw)
			printf("# %s: not made with RAW this slow: five times the jump would "
			       "have come too late after the anchor\n", name);
		else
			CHECK(false, "%s: not made: five times the jump would have come too "
			      "late after the anchor", name);
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(th, NULL);
		return;
	}
	if (msr) {
		msr_add(msr, (int64_t)((__int128)jump_ns * (int64_t)khz / 1000000));
	} else {
		tsc__step(h, (uint64_t)jump_ns);
		tsc__unlock(h);
	}
	t_sleep_ms(2500);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	tsc_get_info(h, &i1, sizeof(i1));
	off1 = lib_minus_raw();
	tsc_clock_gettime(h, CLOCK_MONOTONIC, &m);
	k = t_clock(CLOCK_MONOTONIC);
	want = jump_ns < 0 ? 0 : jump_ns;
	printf("# %s: %llu jumps, the last %+lld ns; library ns minus RAW moved %+lld ns; "
	       "MONOTONIC at worst %llu ns back, tsc_now_ns() %llu; mapping minus kernel %+lld ns\n",
	       name, (unsigned long long)(i1.tsc_jumps - i0.tsc_jumps),
	       (long long)i1.last_tsc_jump_ns, (long long)(off1 - off0),
	       (unsigned long long)mono_back, (unsigned long long)now_back,
	       (long long)(m - k));
	if (mono_back)
		printf("# worst back %llu ns after the jump, from %llu to %llu (kernel then %llu)\n",
		       (unsigned long long)(back_at - jump_at), (unsigned long long)back_from,
		       (unsigned long long)back_to, (unsigned long long)back_at);
	CHECK(i1.tsc_jumps == i0.tsc_jumps + 1, "%s: %llu jumps seen (1 wanted)", name,
	      (unsigned long long)(i1.tsc_jumps - i0.tsc_jumps));
	CHECK(llabs(i1.last_tsc_jump_ns - jump_ns) < 2000000,
	      "%s: the jump measured %+lld ns", name, (long long)i1.last_tsc_jump_ns);
	CHECK(llabs(off1 - off0 - want) < 2000000, "%s: library ns moved %+lld ns against "
	      "RAW (%+lld wanted, within 2 ms)", name, (long long)(off1 - off0), (long long)want);
	CHECK(mono_back == 0, "%s: tsc_clock_gettime(MONOTONIC) went back %llu ns", name,
	      (unsigned long long)mono_back);
	CHECK(jump_ns < 0 || now_back == 0, "%s: tsc_now_ns() went back %llu ns", name,
	      (unsigned long long)now_back);
	/* After a jump ahead, reads map library ns by RAW at the top of
	 * their drift bound (est_high() in wall.c: 1000 ppm of an interval
	 * and its grace, 1.2 ms), and the mapping keeps above them: 1 ms
	 * plus that. */
	CHECK(llabs((long long)(m - k)) < (jump_ns > 0 ? 2200000 : 1000000),
	      "%s: MONOTONIC mapped %+lld ns off the kernel's 2.5 s after (%s at most)", name,
	      (long long)(m - k), jump_ns > 0 ? "2.2 ms" : "1 ms");
}

int main(void)
{
	static const struct { const char *name; int64_t ns; long after_ms; } c[] = {
		{ "back 5 ms", -5000000, 0 },
		{ "back 150 ms", -150000000, 0 },
		{ "back 600 ms, 50 ms after the anchor", -600000000, 50 },
		{ "back 4 s", -4000000000, 0 },
		{ "ahead 5 ms", 5000000, 0 },
		{ "ahead 150 ms", 150000000, 0 },
		{ "ahead 2 s", 2000000000, 0 },
		{ "ahead 1 h", 3600000000000, 0 },
	};
	char root[64];
	struct tsc_info i;
	uint32_t msr = 0;
	size_t n;

	h = t_open_tsc(root, true);
	tsc_get_info(h, &i, sizeof(i));
	if (msr_mode()) {
		/* QEMU's TCG takes both writes and leaves its RDTSC as it was. */
		msr = msr_moves(0x10, i.khz) ? 0x10 : msr_moves(0x3b, i.khz) ? 0x3b : 0;
		t_fact("msr_tried", "1");
		if (!msr)
			printf("# the CPU ignores writes to IA32_TSC and IA32_TSC_ADJUST "
			       "(QEMU's TCG does): the line is moved instead\n");
	}
	printf("# the jumps: %s\n", msr == 0x10 ? "IA32_TSC written on every CPU (msr driver)" :
	       msr ? "IA32_TSC_ADJUST written on every CPU (msr driver)" :
	       "the library's line moved (tsc__step())");
	t_fact("how", "%s", msr ? "msr" : "offset");
	t_sleep_ms(1200);	/* the early anchors are over (watch.c) */
	/* Under tests/lib/gettimeshim.so (slow-raw), RAW takes 150 us 3
	 * times in 5 from here on, as an emulated clock's system call may. */
	slow_raw = dlsym(RTLD_DEFAULT, "tsc_test_slow_raw");
	CHECK(slow_raw || !getenv("TSC_TEST_GETTIME"),
	      "TSC_TEST_GETTIME is set but gettimeshim.so is not loaded");
	if (slow_raw) {
		__atomic_store_n(slow_raw, 1, __ATOMIC_RELAXED);
		printf("# CLOCK_MONOTONIC_RAW takes 150 us 3 reads in 5 from here on\n");
	}
	for (n = 0; n < ARRAY_SIZE(c); n++)
		run(c[n].name, c[n].ns, c[n].after_ms, msr, i.khz);
	tsc_close(h);
	t_rmroot(root);
	DONE();
}
