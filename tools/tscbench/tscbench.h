// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscbench: what every way of taking a timestamp costs, and how right it is. */
#ifndef TSCBENCH_H
#define TSCBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <tsc.h>

#include "freq.h"
#include "msg.h"

/*
 * The files of tscbench in layers, lowest first: a file calls into lower
 * layers only, and the files of one layer call each other one way at
 * most (tests/lib/layers.sh checks these lines; tools/common and libtsc
 * lie below them all):
 *
 * layer: util peer_none args	(helpers, the Abseil peer's stand-in, options)
 * layer: methods		(what the machine has, the ways to read time)
 * layer: cost drift opens calib	(the phases)
 * layer: output plot		(the report)
 * layer: main
 */

/* Exit codes: documented in tscbench.1 and the README (2 and 3: msg.h). */
enum { EXIT_BENCH_OK = 0, EXIT_BENCH_BACKWARD = 1 };

#define MAX_THREADS_STEPS 16
#define MAX_SAMPLES 2000

/* ---- command line (args.c) ---- */
enum action { ACT_RUN, ACT_HELP, ACT_VERSION, ACT_LIST };

struct cfg {
	enum action action;
	bool json, quick, no_progress;
	double duration;		/* drift phase, s; 0 = skip */
	unsigned long rounds;		/* cost rounds (batches per method) */
	unsigned long threads;		/* throughput: max threads, 0 = skip */
	bool threads_set, rounds_set;
	unsigned long opens;		/* tsc_open() timings per kind */
	unsigned long xcpu_ms;
	double calib_follow;		/* calibration start-up: follow s, 0 = skip */
	const char *output;		/* report file, NULL = stdout */
	const char *json_file;		/* --json=FILE: JSON there, table as usual */
	const char *plot;		/* PNG file */
	const char *methods;		/* comma list, NULL = all */
	const char *open_sysroot;	/* also time tsc_open() on this dump */
	const char *sysroot;		/* the benchmarked handle on this dump */
};

/* 0 and cfg filled, or -1 and a message in err. */
int parse_args(int argc, char **argv, struct cfg *cfg, char *err, size_t errlen);

/* ---- statistics (util.c) ---- */
struct dist {
	double median, p10, p90;
};
void dist_of(double *v, size_t n, struct dist *d);	/* sorts v */

/* ---- methods (methods.c) ---- */
typedef uint64_t (*batch_fn)(unsigned long n);

#define TP_ROUNDS 5			/* throughput rounds */

struct tput {
	unsigned int threads;
	double ns_per_call;		/* per thread, median of the threads */
	double mcalls_per_s;		/* all threads together */
};

struct method {
	const char *name;		/* stable: JSON and --methods */
	const char *what;		/* a few words for the table */
	batch_fn batch;
	bool avail;
	bool selected;
	char why[200];			/* why unavailable */
	char note[200];			/* a fact worth knowing when available */
	/* cost */
	unsigned long per_batch;	/* calls per batch */
	unsigned long batches;
	struct dist ns, ticks;
	double ratio;			/* median ticks / bare RDTSC's; 0 unknown */
	/* throughput */
	struct tput tp[MAX_THREADS_STEPS];
	int ntp;
	double n_over_1[TP_ROUNDS];	/* each round's last step over its first */
	int nrounds;
};

struct env {
	struct tsc *t;			/* default options, with its watcher */
	const char *sysroot;		/* t opened on this dump (--sysroot) */
	struct tsc_info info;
	bool rdtsc_ok;			/* RDTSC may be executed */
	bool rdtscp_cpu;		/* CPUID 0x80000001 EDX[27] */
	int tsc_user;			/* kernel.tsc_user, -1 absent */
	int cs_vdso;			/* current_clocksource_vdso, -1 absent */
	bool cs_vdso_inferred;		/* from current_clocksource instead */
	char clocksource[32];
	char cpu_model[96];
	char kernel[96];
	bool vdso;			/* AT_SYSINFO_EHDR present */
	bool vdso_gettime;		/* __vdso_clock_gettime found */
	bool gettime_vdso;		/* clock_gettime() is served by the vDSO */
	const char *gettime_from;	/* how that is known (gettime_verdict()):
					 * "current_clocksource_vdso", "no-vdso",
					 * "measured" or "clocksource" (inferred) */
	double gettime_ns, syscall_ns;	/* the costs measured, with "measured" */
	struct freq_facts ff;		/* the TSC frequency, as tscinfo finds it */
	struct freq freq;
	int vdso_tsc_raw_rc;		/* first call: 0, -ENODEV, ...; 1 no symbol */
	int vdso_tsc_to_ns_rc;
	int cpus[1024];			/* online CPUs of the affinity set */
	int ncpus;
	/* at the end of the run: did the kernel or libtsc change their minds? */
	struct tsc_info info_end;
	char clocksource_end[32];
};

extern struct method methods[];
extern const int nmethods;
int method_index(const char *name);		/* -1 if unknown */
/* Find out what this machine has; fills env and every method's avail/why. */
void methods_probe(struct env *e);
/* The state at the end of the run, into env. */
void methods_end(struct env *e);
/* After the cost phase: clock_gettime()'s verdict, from what it cost. */
void gettime_verdict(struct env *e);
/* Select methods from a comma list; -1 and a message on an unknown name. */
int methods_select(const char *list, char *err, size_t errlen);

/* ---- measurements (util.c) ---- */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool progress_on;
uint64_t now_ns(clockid_t c);
uint64_t ticks_ordered(void);

/* cost.c */
void cost_run(const struct cfg *cfg, struct env *e);
void throughput_run(const struct cfg *cfg, struct env *e);

/* drift.c */
struct ref_drift {			/* the library's ns against one clock */
	double ppm;			/* least-squares slope */
	double ppm_end;			/* end-to-end */
	double end_us;			/* offset change at the end */
	double max_abs_us;		/* largest offset change seen */
};

struct drift_series {
	const char *handle;		/* "default", "calibrated" */
	bool usable;			/* the TSC is in use by this handle */
	enum tsc_src src;
	uint64_t err_ppb, calib_ns;
	struct ref_drift raw, mono;
	int n;
	double t_s[MAX_SAMPLES];	/* since the start, CLOCK_MONOTONIC_RAW */
	double raw_us[MAX_SAMPLES];	/* offset change against each clock */
	double mono_us[MAX_SAMPLES];
};

/* tsc_clock_gettime() against the kernel's clock_gettime() of the same
 * clock, in ns, at each drift sample (issue 32: within 200 ns over a
 * minute), and the peer's REALTIME beside it.  Absolute offsets, not
 * their change. */
enum { WALL_MONO, WALL_REAL, WALL_ABSL, WALL_NROWS };
struct wall_acc {
	bool ran;			/* the default handle used the TSC */
	bool absl;			/* the peer was sampled */
	int n;
	double off_ns[WALL_NROWS][MAX_SAMPLES];
	double worst_ns[WALL_NROWS];	/* largest |offset| */
	double bracket_ns;		/* the widest bracket a sample took */
};

struct open_time {
	unsigned long opens;
	struct dist us;
	double min_us, max_us;
	enum tsc_src src;
	bool usable;
	uint64_t err_ppb, calib_ns;
	double mult_spread_ppm;		/* (max - min) / min of the opens' mult */
	int err;			/* errno of a failed open, 0 */
};

/* calib.c: a handle with force_calibrate and its watcher, from tsc_open()
 * until the calibrated TSC is in use and on for the follow time. */
#define CALIB_GIVE_UP_MS 3000
#define CALIB_HISTORY 128

struct calib_point {			/* a change seen in tsc_get_info() */
	double ms;			/* since tsc_open() was called */
	bool usable;
	enum tsc_src src;
	uint64_t err_ppb;
};

struct calib_startup {
	bool ran;			/* asked for (follow > 0) */
	char na[200];			/* not applicable here: why; "" applicable */
	int err;			/* errno of a failed open or thread */
	double follow_s;
	double open_ms;			/* tsc_open() */
	bool open_usable;		/* the TSC in use right after it */
	enum tsc_src open_src;
	uint64_t open_err_ppb;		/* the bound so far, then */
	bool took;			/* calibrated TSC in use within the give-up time */
	double use_ms;			/* since tsc_open() was called */
	uint64_t use_err_ppb;
	uint64_t khz;			/* the calibration's, at takeover */
	bool switched;			/* from the fallback clock (else a slew from
					 * the kernel's factors: no step) */
	int64_t takeover_step_ns;	/* TSC line minus fallback clock there */
	double end_s;			/* since tsc_open() was called */
	bool end_usable;
	enum tsc_src end_src;
	uint64_t end_err_ppb, refinements, switches;
	int64_t last_step_ns;
	uint64_t reads, backward, worst_back_ns;	/* the reader thread */
	int nhist;
	struct calib_point hist[CALIB_HISTORY];
};

struct accuracy {
	bool ran;
	double duration_s;
	struct drift_series s[2];
	int nseries;
	struct wall_acc wall;
	uint64_t reads;			/* in-thread monotonicity check */
	uint64_t backward;
	uint64_t worst_back_ns;
	bool have_xcpu;
	bool xcpu_one_cpu;		/* asked for, but one CPU: not run */
	int xcpu_err;			/* errno when it could not run */
	char xcpu_why[200];		/* and why, in words */
	struct tsc_xcpu_result xcpu;
	struct open_time open_default, open_calib, open_sysroot;
	struct calib_startup calib;
};

int drift_run(const struct cfg *cfg, struct env *e, struct accuracy *a);

/* Where factors came from, in words: "none" is no source. */
static inline const char *factors_words(enum tsc_src src)
{
	return src == TSC_SRC_NONE ? "no factors (fallback clock)" : tsc_src_name(src);
}
void startup_run(const struct cfg *cfg, struct accuracy *a);	/* opens.c */
int open_once_child(void);	/* -1: not a re-run */

void calib_run(const struct cfg *cfg, const struct env *e, struct calib_startup *c);

/* ---- goals (output.c) ---- */
struct goal {
	const char *name;
	const char *unit;		/* "x", "ppm", "ms", "steps" */
	double value, limit;
	bool known;			/* measured */
	bool met;
	bool judged;			/* false: a figure only, the note says why */
	bool strict;			/* value < limit, else value <= limit */
	char note[120];
	char name_buf[64];		/* a name made up at run time */
};
#define MAX_GOALS 48
int goals_eval(const struct env *e, const struct accuracy *a, struct goal *g, int max);

/* output.c */
void print_text(FILE *f, const struct cfg *cfg, const struct env *e,
		const struct accuracy *a);
void print_json(FILE *f, const struct cfg *cfg, const struct env *e,
		const struct accuracy *a);

/* plot.c: 0, or -1 with a message in err */
int plot_png(const char *file, const struct env *e, const struct accuracy *a,
	     char *err, size_t errlen);

#endif
