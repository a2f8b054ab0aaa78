// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The small helpers every layer uses: errno, the kernel's clocks, a
 * seqcount latch's turn, the handle's lock without re-arming, a source's
 * name.  The bottom of the library's own files (internal.h: the layers):
 * nothing here calls another file of lib/src.
 */
#include <errno.h>
#include <time.h>

#include "internal.h"

int tsc__set_errno(int err)
{
	if (err < 0)
		errno = -err;
	return err;
}

uint64_t tsc__clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

TSC_API uint64_t __tsc_clock_ns(clockid_t clock)
{
	return tsc__clock_ns(clock);
}

uint64_t tsc__mono_raw(void)
{
	return tsc__clock_ns(CLOCK_MONOTONIC_RAW);
}

/* The seqcount latch's writer sends readers to the other copy: turn
 * (readers: copy 1), write copy 0, turn (readers: copy 0), write copy 1.
 * A reader always finds one of them whole; copy 0 may be written again
 * before the second turn.  Caller holds t->lock. */
void tsc__latch_turn(uint32_t *seq)
{
	/* The copy written last before the bump that sends readers there
	 * (the kernel's smp_wmb() before the increment). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

bool tsc__trylock(struct tsc *t)
{
	if (pthread_mutex_trylock(&t->lock))
		return false;
	__atomic_store_n(&t->lock_owner, pthread_self(), __ATOMIC_RELAXED);
	return true;
}

void tsc__unlock(struct tsc *t)
{
	__atomic_store_n(&t->lock_owner, (pthread_t)0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->lock);
}

TSC_API const char *tsc_src_name(enum tsc_src src)
{
	static const char *const names[] = {
		[TSC_SRC_NONE] = "none",
		[TSC_SRC_VDSO] = "vdso",
		[TSC_SRC_SYSFS_MULT] = "sysfs-mult",
		[TSC_SRC_PERF] = "perf",
		[TSC_SRC_SYSFS_KHZ] = "sysfs-khz",
		[TSC_SRC_CPU0_KHZ] = "cpu0-tsc-freq-khz",
		[TSC_SRC_CPUID_15H] = "cpuid-15h",
		[TSC_SRC_CPUID_HV] = "cpuid-hypervisor",
		[TSC_SRC_CALIBRATION] = "calibration",
	};

	if ((unsigned int)src >= ARRAY_SIZE(names))
		return "unknown";
	return names[src];
}
