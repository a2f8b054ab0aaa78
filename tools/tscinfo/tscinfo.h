// SPDX-License-Identifier: MIT OR LGPL-2.1
#ifndef TSCINFO_H
#define TSCINFO_H

#include <stdio.h>
#include <tsc.h>

#include "args.h"
#include "freq.h"
#include "gettime.h"
#include "msg.h"

/* Exit codes: documented in tscinfo.1 and the README (2 and 3: msg.h). */
enum { EXIT_TSC_OK = 0, EXIT_TSC_NO = 1 };

struct cost {		/* ns per call, measured; negative when not measured */
	double rdtsc, now_ns;
	double clock_gettime;	/* CLOCK_MONOTONIC through libc: the vDSO if it serves */
	double syscall;		/* syscall(SYS_clock_gettime), for comparison */
};

/* A dump's tsckit/live-state: the live machine's --format=log line at
 * capture, which saw what no dump keeps (perf, a calibration). */
struct captured {
	bool have;
	bool usable;
	char conversion[32];	/* its factors' source, "" if none */
	uint64_t khz;		/* its frequency, 0 if unknown */
	char khz_src[32];
};
int captured_read(const char *sysroot, struct captured *c);

struct report {
	const struct cfg *cfg;
	struct tsc_info info;
	struct tsc_reason reasons[64];
	int nreasons;
	struct cost cost;
	bool have_xcpu;
	int xcpu_err;		/* --cross-cpu could not run: errno */
	struct tsc_xcpu_result xcpu;
	bool have_traps;	/* tsc0/user_traps could be read */
	uint64_t user_traps;
	struct freq_facts ff;
	struct freq freq;
	/* --calibrate: gave up waiting for the bound (calibrate_wait()) */
	bool calib_unfinished;
	/* A dump decides against the TSC only for want of factors that
	 * the live machine may have had: perf, a calibration (item 9). */
	bool dump_cannot_tell;
	struct captured captured;
	/* Unknown, not "no" (issue 33, item 6): a dump without sysfs
	 * (sys/devices/system) does not tell whether its kernel has the
	 * series, or traps RDTSC; one without a vDSO image it can read,
	 * whether the vDSO has the TSC calls (vdso_why: libtsc's note). */
	bool series_unknown, vdso_unknown;
	const char *vdso_why;
};

/* Where the report goes: stdout, or --output's file (outfile.c). */
struct outfile {
	FILE *f;
	const char *path;
	char *tmp;
};

/* Answers derived from the info, shared by text and JSON.  clock_gettime:
 * the kernel's word (current_clocksource_vdso), else the costs measured
 * (c may be NULL), else inferred from the clocksource. */
const char *gettime_kind(const struct tsc_info *i, const struct cost *c, const char **how);
/* no / emulate / sigsegv / unknown; series_unknown: whether the kernel
 * has the series is not known (a dump without sysfs). */
const char *trap_kind(const struct tsc_info *i, bool series_unknown);
/* Does a reason before rs[n] have its kind and code? */
bool reason_repeats(const struct tsc_reason *rs, int n);
void print_text(FILE *f, const struct report *r);
void print_json(FILE *f, const struct report *r);
void print_prometheus(FILE *f, const struct report *r);
/* One "tscinfo: EVENT key=value ..." line; stepped: add step_ns. */
void print_log(FILE *f, const char *event, const struct tsc_info *i, const struct freq *fr,
	       const struct cost *c, const struct tsc_reason *rs, int nreasons, bool stepped);
/* The one-shot report's line: print_log()'s, and --cross-cpu's keys. */
void print_log_report(FILE *f, const struct report *r);
/* --cross-cpu: NULL when it measured (two CPUs or more), else why not. */
const char *xcpu_unmeasured(const struct report *r);
/* Its worst step back in ns, if a frequency or factors are known. */
bool xcpu_worst_ns(const struct report *r, uint64_t *ns);
/* Unknown is a word in text, null in JSON: helpers for both. */
void json_u64_or_null(FILE *f, bool known, unsigned long long v);
/* Where libtsc's factors came from, in words for the text. */
static inline const char *src_words(enum tsc_src s)
{
	return freq_src_words(tsc_src_name(s)) ? freq_src_words(tsc_src_name(s)) :
	       tsc_src_name(s);
}
/* Both clock_gettime costs were measured. */
bool measured_gettime(const struct cost *c);
int read_user_traps(const char *sysroot, uint64_t *out);
/* stdout when path is NULL.  0, or -1 after a message. */
int out_open(struct outfile *o, const char *path);
/* Complete it: for a file, flush, fsync and rename over path. */
int out_close(struct outfile *o);

#endif
