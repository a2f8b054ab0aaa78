// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Is clock_gettime() served by the vDSO or a system call?  The rules
 * tscinfo and tscbench share, so that both give one verdict.  Inline, so
 * that a test that links a tool's output code alone (tests/metrics)
 * needs nothing more.
 */
#ifndef TOOLS_GETTIME_H
#define TOOLS_GETTIME_H

#include <stdbool.h>
#include <string.h>

/* The TSC's clocksources: tsc-early until the TSC is calibrated again
 * at boot, then tsc. */
static inline bool cs_is_tsc(const char *cs)
{
	return !strcmp(cs, "tsc") || !strcmp(cs, "tsc-early");
}

/* Clocksources whose reads the x86 vDSO serves in user space: a guess
 * from the name, for when nothing better is known. */
static inline bool gettime_vdso_capable(const char *cs)
{
	return cs_is_tsc(cs) || !strcmp(cs, "kvm-clock") ||
	       !strcmp(cs, "hyperv_clocksource_tsc_page");
}

/* From what a call costs: served in user space, it costs a fraction of
 * the system call's (tens of ns against hundreds); a vDSO that falls
 * back makes the system call itself, and costs as much. */
static inline bool gettime_vdso_by_cost(double call_ns, double syscall_ns)
{
	return call_ns * 2 < syscall_ns;
}

#endif
