// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The header's inline fast path as real symbols, for bindings that
 * cannot use C inline functions (liburing's ffi.c model). */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#define TSCINLINE __attribute__((visibility("default")))
/* tsc_clock_gettime has two versions (below): the header's is 0.7's. */
#define tsc_clock_gettime tsc__clock_gettime_0_7
#include <tsc.h>
#undef tsc_clock_gettime

/* Until 0.6, tsc_clock_gettime() read ordered, and promised order
 * between threads; since 0.7 it reads as tsc_now_ns() (its default
 * version, LIBTSC_0.7), and tsc_clock_gettime_ordered() is the ordered
 * one.  A program built against 0.6 or older calls
 * tsc_clock_gettime@LIBTSC_0.2 and keeps what it was promised. */
__asm__(".symver tsc__clock_gettime_0_7, tsc_clock_gettime@@LIBTSC_0.7");
__asm__(".symver tsc__clock_gettime_0_2, tsc_clock_gettime@LIBTSC_0.2");

__attribute__((visibility("default")))
int tsc__clock_gettime_0_2(struct tsc *t, clockid_t clk, uint64_t *out)
{
	return tsc_clock_gettime_ordered(t, clk, out);
}
