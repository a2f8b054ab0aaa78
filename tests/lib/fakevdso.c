// SPDX-License-Identifier: MIT OR LGPL-2.1
/* A stand-in vDSO with the tsckit calls, loaded by tests/lib/vdso.c into
 * memory as the kernel would map it.  No libc, no relocations. */
#include <errno.h>
#include <stdint.h>
#include <time.h>

struct fake_state {
	int nodev;		/* 1: the kernel does not trust the TSC */
	uint64_t f;		/* ns per 2^32 ticks */
};

static struct fake_state state;

struct fake_state *fake_state(void)
{
	return &state;
}

int __vdso_tsc_raw(unsigned long long *tsc)
{
	uint32_t lo, hi;

	if (state.nodev)
		return -ENODEV;
	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	*tsc = ((uint64_t)hi << 32) | lo;
	return 0;
}

int __vdso_tsc_to_ns(unsigned long long delta, clockid_t clk, unsigned long long *ns)
{
	if (clk != CLOCK_MONOTONIC_RAW && clk != CLOCK_MONOTONIC)
		return -EINVAL;
	if (delta >> 63)
		return -EINVAL;
	if (state.nodev)
		return -ENODEV;
	*ns = (unsigned long long)(((unsigned __int128)delta * state.f) >> 32);
	return 0;
}
