// SPDX-License-Identifier: MIT OR LGPL-2.1
#ifndef TSCINFO_H
#define TSCINFO_H

#include <stdio.h>
#include <tsc.h>

#include "args.h"
#include "msg.h"

/* Exit codes: documented in tscinfo.1 and the README (2 and 3: msg.h). */
enum { EXIT_TSC_OK = 0, EXIT_TSC_NO = 1 };

struct cost {		/* ns per call, measured; negative when not measured */
	double rdtsc, now_ns;
	double clock_gettime;	/* CLOCK_MONOTONIC through libc: the vDSO if it serves */
	double syscall;		/* syscall(SYS_clock_gettime), for comparison */
};

/* The kernel log's lines about the TSC (klog.c). */
#define KLOG_MAX 8
#define KLOG_LEN 240
struct klog {
	bool read;		/* else err says why not */
	int err;
	uint64_t khz;		/* the frequency the kernel detected or refined, 0 if none */
	char khz_line[KLOG_LEN];
	int n;			/* the TSC dropped: "Marking ... unstable" and the
				 * watchdog's figures, the last KLOG_MAX lines */
	char line[KLOG_MAX][KLOG_LEN];
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

/* Frequency facts tscinfo reads itself, beside libtsc's (freq.c). */
struct freq_facts {
	struct klog klog;
	int cpuid_err;		/* 0, or why there are no CPUID facts */
	uint64_t cpuid15_khz, cpuid_hv_khz, cpuid16_mhz;
};

/* The best frequency known, and where it came from. */
struct freq {
	uint64_t khz;		/* 0: unknown */
	const char *src;	/* a stable name, NULL when unknown */
	char how[KLOG_LEN + 96];	/* for people: the details, or why unknown */
};

struct report {
	const struct cfg *cfg;
	struct tsc_info info;
	struct tsc_reason reasons[64];
	int nreasons;
	struct cost cost;
	bool have_xcpu;
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
const char *trap_kind(const struct tsc_info *i);
/* Does a reason before rs[n] have its kind and code? */
bool reason_repeats(const struct tsc_reason *rs, int n);
void print_text(FILE *f, const struct report *r);
void print_json(FILE *f, const struct report *r);
void print_prometheus(FILE *f, const struct report *r);
/* One "tscinfo: EVENT key=value ..." line; stepped: add step_ns. */
void print_log(FILE *f, const char *event, const struct tsc_info *i, const struct freq *fr,
	       const struct cost *c, const struct tsc_reason *rs, int nreasons, bool stepped);
int klog_read(const char *sysroot, struct klog *k);
void freq_facts_read(const char *sysroot, struct freq_facts *ff);
void freq_best(const struct tsc_info *i, const struct freq_facts *ff, struct freq *out);
/* Unknown is a word in text, null in JSON: helpers for both. */
void json_u64_or_null(FILE *f, bool known, unsigned long long v);
bool cs_is_tsc(const char *cs);
/* Both clock_gettime costs were measured. */
bool measured_gettime(const struct cost *c);
int read_user_traps(const char *sysroot, uint64_t *out);
/* stdout when path is NULL.  0, or -1 after a message. */
int out_open(struct outfile *o, const char *path);
/* Complete it: for a file, flush, fsync and rename over path. */
int out_close(struct outfile *o);

#endif
