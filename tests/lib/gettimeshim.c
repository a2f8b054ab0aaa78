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
 *   anything else both as the C library has them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

enum { AS_IS, SYSCALL, SLOW_SYSCALL };

static int mode = -1;
static long (*real_syscall)(long, ...);
static int (*real_clock_gettime)(clockid_t, struct timespec *);

static void init(void)
{
	const char *m = getenv("TSC_TEST_GETTIME");

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_clock_gettime = (int (*)(clockid_t, struct timespec *))
		dlsym(RTLD_NEXT, "clock_gettime");
	mode = !m ? AS_IS : !strcmp(m, "syscall") ? SYSCALL :
	       !strcmp(m, "slow-syscall") ? SLOW_SYSCALL : AS_IS;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (mode < 0)
		init();
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
