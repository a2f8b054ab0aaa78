// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * LD_PRELOAD for tests/lib/gettime.sh: changes what clock_gettime() and
 * syscall(SYS_clock_gettime) cost, never what they return, so that
 * tscinfo's measured verdict can be made to disagree with the one a
 * list of clocksource names would give.  TSC_TEST_GETTIME selects:
 *
 *   syscall       clock_gettime() makes the system call, twice: as where
 *                 the vDSO falls back on it, only slower;
 *   slow-syscall  syscall(SYS_clock_gettime) makes it 20 times, so that
 *                 clock_gettime() costs less than half of it, whatever
 *                 serves it;
 *   slow-raw      clock_gettime(CLOCK_MONOTONIC_RAW) takes 150 us, then
 *                 reads, 3 times in 5 at random, once the program sets
 *                 tsc_test_slow_raw (tests/lib/jump: as a guest's
 *                 emulated clock may, so that reads bracket it within
 *                 100 us or not);
 *   anything else both as the C library has them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

enum { AS_IS, SYSCALL, SLOW_SYSCALL, SLOW_RAW };

static int mode = -1;
int tsc_test_slow_raw;		/* set by the program under test */
static long (*real_syscall)(long, ...);
static int (*real_clock_gettime)(clockid_t, struct timespec *);

static void init(void)
{
	const char *m = getenv("TSC_TEST_GETTIME");

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_clock_gettime = (int (*)(clockid_t, struct timespec *))
		dlsym(RTLD_NEXT, "clock_gettime");
	mode = !m ? AS_IS : !strcmp(m, "syscall") ? SYSCALL :
	       !strcmp(m, "slow-syscall") ? SLOW_SYSCALL :
	       !strcmp(m, "slow-raw") ? SLOW_RAW : AS_IS;
}

/* 3 in 5, from a fixed seed in each thread (xorshift32). */
static bool slow_one(void)
{
	static __thread uint32_t x = 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x % 5 < 3;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	struct timespec a, b;

	if (mode < 0)
		init();
	if (mode == SLOW_RAW && id == CLOCK_MONOTONIC_RAW &&
	    __atomic_load_n(&tsc_test_slow_raw, __ATOMIC_RELAXED) && slow_one()) {
		real_clock_gettime(CLOCK_MONOTONIC, &a);
		do
			real_clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000l + b.tv_nsec - a.tv_nsec < 150000);
	}
	if (mode != SYSCALL)
		return real_clock_gettime(id, ts);
	real_syscall(SYS_clock_gettime, id, ts);
	return (int)real_syscall(SYS_clock_gettime, id, ts);
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	if (mode < 0)
		init();
	/* The kernel takes six registers whatever the call: pass them on. */
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_clock_gettime && mode == SLOW_SYSCALL)
		for (i = 0; i < 19; i++)
			real_syscall(nr, a[0], a[1]);
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
