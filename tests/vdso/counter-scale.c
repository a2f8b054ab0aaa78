// SPDX-License-Identifier: GPL-2.0
/*
 * vtsc_scale() of the kernel's arch/x86/entry/vdso/common/vtsc.c, checked
 * on the host against 128-bit arithmetic. The function is taken from the
 * kernel tree as it is (scripts/vdso-images-check cuts it out, as
 * counter_scale(), into the file that COUNTER_SCALE names) and built
 * with 64-bit multiplications only, as in a 32-bit vDSO. Made-up
 * factors: any mult, shifts from 0 to 200, deltas at every edge, and
 * random ones from a fixed seed. TAP on stdout.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t u64;
typedef uint32_t u32;
#ifndef __always_inline
#define __always_inline inline
#endif

#include COUNTER_SCALE

/* The exact (delta * mult) >> shift, and whether it fits in 64 bits. */
static bool reference(u64 delta, u32 mult, u32 shift, u64 *res)
{
	unsigned __int128 p = (unsigned __int128)delta * mult;

	if (shift >= 128)
		p = 0;
	else
		p >>= shift;
	*res = (u64)p;
	return !(p >> 64);
}

static unsigned long tried, differed;

static void check(u64 delta, u32 mult, u32 shift)
{
	u64 want = 0, got = 0xdeadbeefdeadbeefULL;
	bool fits = reference(delta, mult, shift, &want);
	bool ok = counter_scale(delta, mult, shift, &got);

	tried++;
	if (ok != fits || (fits && got != want)) {
		if (differed++ < 10)
			printf("# delta %#llx mult %#x shift %u: got %s %#llx, want %s %#llx\n",
			       (unsigned long long)delta, mult, shift,
			       ok ? "true" : "false", (unsigned long long)got,
			       fits ? "true" : "false", (unsigned long long)want);
	}
}

/* xorshift64: the same numbers on every run. */
static u64 rnd(void)
{
	static u64 x = 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

int main(void)
{
	static const u64 deltas[] = {
		0, 1, 2, 0xffffffffULL, 0x100000000ULL, 0x100000001ULL,
		(1ULL << 63) - 1, 1ULL << 63, ~0ULL, ~0ULL - 1,
		1000000000ULL, 3000000000ULL * 86400,
	};
	static const u32 mults[] = {
		0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe,
		6935026, 1 << 24,
	};
	unsigned long edge_differed;
	int i, j, n = 0, failed = 0;
	u32 shift;

	printf("TAP version 13\n1..2\n");
	for (i = 0; i < (int)(sizeof(deltas) / sizeof(deltas[0])); i++)
		for (j = 0; j < (int)(sizeof(mults) / sizeof(mults[0])); j++)
			for (shift = 0; shift <= 200; shift++)
				check(deltas[i], mults[j], shift);
	edge_differed = differed;
	printf("%s %d - counter_scale: edge cases (%lu tried, %lu differed)\n",
	       differed ? "not ok" : "ok", ++n, tried, differed);
	failed |= !!differed;

	tried = differed = 0;
	for (i = 0; i < 1000000; i++) {
		u64 d = rnd();

		/* Deltas of every size, not only 64-bit ones. */
		d >>= rnd() % 64;
		check(d, (u32)rnd(), (u32)(rnd() % 130));
	}
	printf("%s %d - counter_scale: random factors, seed fixed (%lu tried, %lu differed)\n",
	       differed ? "not ok" : "ok", ++n, tried, differed);
	failed |= !!differed || !!edge_differed;
	return failed;
}
