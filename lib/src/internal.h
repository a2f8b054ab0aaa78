// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libtsc internals: facts, parsers, decision.  Not installed. */
#ifndef TSC_INTERNAL_H
#define TSC_INTERNAL_H

/*
 * The files of lib/src in layers, lowest first.  A file calls into lower
 * layers only, and the files of one layer call each other one way at
 * most: what a lower file needs from above is passed down (arguments,
 * the decision, fields of struct tsc the caller set).  Read bottom-up.
 * tests/lib/layers.sh checks the objects against these lines:
 *
 * layer: sysfs cmdline cpuid cpuinfo cpus perf vdso vdso-live	(files, parsers)
 * layer: util			(helpers every file uses)
 * layer: calibrate		(the TSC against CLOCK_MONOTONIC_RAW)
 * layer: rate			(the rate check: factors against the anchors' brackets)
 * layer: publish		(the fast path's latch)
 * layer: wall			(the mapping to the kernel's clocks)
 * layer: facts			(gathering the facts)
 * layer: decide		(the decision and its reasons)
 * layer: watch			(following the kernel; the handle's lock)
 * layer: open xcpu ffi		(the API: handles, fork, reports, checks)
 */

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <tsc.h>

#define TSC_API __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000ull

/* Sysfs and procfs paths, relative to the root ("" or a sysroot). */
#define P_TSC0		"/sys/devices/system/tsc/tsc0/"
#define P_STABLE	P_TSC0 "tsc_stable"
#define P_KHZ		P_TSC0 "tsc_khz"
#define P_MULT		P_TSC0 "tsc_mult"
#define P_SHIFT		P_TSC0 "tsc_shift"
#define P_CPU0_KHZ	"/sys/devices/system/cpu/cpu0/tsc_freq_khz"
#define P_CS		"/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define P_CS_AVAIL	"/sys/devices/system/clocksource/clocksource0/available_clocksource"
#define P_CS_VDSO	"/sys/devices/system/clocksource/clocksource0/current_clocksource_vdso"
#define P_TSC_USER	"/proc/sys/kernel/tsc_user"
#define P_CPUINFO	"/proc/cpuinfo"
#define P_CMDLINE	"/proc/cmdline"
#define P_CPUID		"/tsckit/cpuid"
#define P_VDSO		"/tsckit/vdso.img"

/* --- parsers (sysfs.c, cpuinfo.c, cpuid.c, vdso.c); all take untrusted bytes */
int tsc__parse_u64(const char *buf, size_t len, uint64_t *out);
int tsc__parse_name(const char *buf, size_t len, char *out, size_t cap);
bool tsc__name_char(char c);
const char *tsc__strerr(int err);

enum {	/* cpuinfo flags that matter, as bits */
	CI_TSC = 1 << 0, CI_CONSTANT = 1 << 1, CI_NONSTOP = 1 << 2,
	CI_KNOWN_FREQ = 1 << 3, CI_RELIABLE = 1 << 4, CI_RDTSCP = 1 << 5,
	CI_HYPERVISOR = 1 << 6,
};
/* Flags common to every "flags" line; -ENODATA when there is none. */
int tsc__parse_cpuinfo(const char *buf, size_t len, unsigned int *flags);

/* --- CPU lists (cpus.c) */
int tsc__parse_cpulist(const char *buf, size_t len, cpu_set_t *set);
int tsc__housekeeping(const char *root, cpu_set_t *set, char *why, size_t cap);

/* --- kernel word lists (cmdline.c) */
int tsc__parse_has_name(const char *buf, size_t len, const char *name, bool *has);
#define CMDLINE_MAX 8
struct cmdline_facts {
	int n;				/* parameters found (may exceed CMDLINE_MAX) */
	bool tsc_unstable;		/* tsc=unstable, kept or not */
	char param[CMDLINE_MAX][48];	/* "tsc=unstable", "clocksource=hpet" */
};
int tsc__parse_cmdline(const char *buf, size_t len, struct cmdline_facts *c);
const char *tsc__cmdline_meaning(const char *param);

struct cpuid_leaf {
	uint32_t leaf, subleaf, r[4];	/* eax ebx ecx edx */
};
#define CPUID_MAX 64
struct cpuid_set {
	int n;
	struct cpuid_leaf l[CPUID_MAX];
};
int tsc__parse_cpuid(const char *buf, size_t len, struct cpuid_set *set);
int tsc__cpuid_live(struct cpuid_set *set);
const struct cpuid_leaf *tsc__cpuid_get(const struct cpuid_set *set,
					uint32_t leaf, uint32_t subleaf);

/* Offsets into the image of the two vDSO calls and clock_gettime, 0 when
 * absent; parsing only reads inside [img, img + len). */
struct vdso_syms {
	size_t tsc_raw, tsc_to_ns, clock_gettime;
};
int tsc__vdso_parse(const void *img, size_t len, struct vdso_syms *syms);
/* The live vDSO's base and size, or -ENOENT. */
int tsc__vdso_live(const void **base, size_t *len);
bool tsc__vdso_hooked(void);	/* a test's stand-in replaces every vDSO */

#if TSC_ARCH_HAS_TSC
/* An ordered TSC read for the library's own measurements: LFENCE works
 * on every x86-64 CPU, RDTSCP may not exist. */
static inline uint64_t tsc__rdtsc_lfence(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}
#define tsc__pause() __builtin_ia32_pause()
#else
/* No TSC (the decision says so: arch_tsc): what tsc_rdtsc() reads. */
static inline uint64_t tsc__rdtsc_lfence(void)
{
	return tsc_rdtsc();
}
#define tsc__pause() ((void)0)
#endif

/* --- file access (sysfs.c) */
int tsc__read_fd(int fd, char *buf, size_t cap, size_t *len);
int tsc__read(const char *root, const char *path, char *buf, size_t cap,
	      size_t *len);
int tsc__read_alloc(const char *root, const char *path, char **buf,
		    size_t *len, size_t max);

/* --- facts */
typedef int (*vdso_tsc_raw_fn)(unsigned long long *tsc);
typedef int (*vdso_tsc_to_ns_fn)(unsigned long long delta, clockid_t clk,
				 unsigned long long *ns);

struct factors {
	enum tsc_src src;
	uint64_t mult;
	uint32_t shift;
	uint64_t khz;
	uint64_t err_ppb;
};

/* The rate error of factors rounded from a frequency in kHz and to a
 * whole mult, rounded up: half a kHz, plus half a unit of mult. */
static inline uint64_t tsc__rounding_ppb(uint64_t khz, uint64_t mult)
{
	return (500000000 + khz - 1) / khz + (500000000 + mult - 1) / mult;
}

/* ns per 2^64 ticks: the rate of factors mult >> shift, whatever the
 * shift (below 64), comparable across factors. */
static inline unsigned __int128 tsc__rate_of(uint64_t mult, uint32_t shift)
{
	return (unsigned __int128)mult << (64 - shift);
}

/* TSC reads around one clock_gettime() */
struct bracket {
	uint64_t t0, t1, ns;
};

/* A calibration: begun (done) at the first bracket a, ok once its
 * factors f are bound to 1 ppm; took_ns is the interval f spans;
 * bursts counts the brackets it took itself (the rest came from the
 * wall anchors: decide.c). */
struct calib {
	bool done, ok;
	struct bracket a;
	uint64_t start_ns;
	struct factors f;
	uint64_t took_ns;
	uint64_t bursts;
	char why[160];
};

/* The rate check (rate.c): the TSC's rate against CLOCK_MONOTONIC_RAW,
 * measured from the wall anchors' brackets since the TSC came into use
 * (a calibration that never ends), against the factors in use. */
struct rate_check {
	struct calib m;		/* the measurement: factors m.f, bound m.f.err_ppb */
	bool use;		/* a correction is in use: fix, in place of of,
				 * the factors checked (measured since they came) */
	struct factors fix, of;
	int64_t error_ppb;	/* of's rate minus the measured, ppb */
	uint64_t corrections;
};

/* What does not change while the process runs. */
struct static_facts {
	bool cpuid_known;
	int cpuid_err;
	struct cpuid_set cpuid;
	bool cpu_tsc, cpu_invariant, cpu_rdtscp, cpu_rdtscp_live, hypervisor;
	/* Ordered reads: what this CPU executes, and what is reported,
	 * which for a sysroot is what the dump's CPU would use. */
	bool rdtscp_exec, rdtscp_shown;
	const char *rdtscp_why;		/* when not shown: why not */
	uint64_t cpuid15_khz, cpuid16_mhz, cpuid_hv_khz;
	/* Read on demand by live handles (facts.c); until then the errors
	 * are TSC_NOT_READ and the perf factors not asked. */
	bool cpuinfo_read, cmdline_read, perf_read;
	int cpuinfo_err;
	unsigned int cpuinfo;
	int cmdline_err;
	struct cmdline_facts cmdline;
	int prctl_tsc;
	/* A sysroot without sys/devices/system: the dump does not tell
	 * whether its kernel is stock (no tsc0) or has the series. */
	bool dump_no_sys;
	bool vdso_found;
	int vdso_err;
	struct vdso_syms syms;
	vdso_tsc_raw_fn vdso_tsc_raw;
	vdso_tsc_to_ns_fn vdso_tsc_to_ns;
	bool perf_ok;
	bool perf_wait;		/* needed, asked after tsc_open() (facts.c) */
	char perf_why[160];
	struct factors perf;
	struct calib calib;
};

/* A fact a live handle did not read: a better one answered. */
#define TSC_NOT_READ 1
/* sysfs and procfs files the watcher keeps open (watch.c), named in
 * tsc__watched[] (facts.c) */
#define NWATCHED 7

struct num {	/* a number read from a file, or why not */
	int err;	/* 0, or -errno / -EINVAL garbage / -ERANGE / -ENODATA */
	uint64_t v;
};

/* What may change at any time; re-read on every event. */
struct dyn_facts {
	struct num stable, khz, mult, shift, cpu0_khz, cs_vdso, tsc_user;
	int cs_err;
	char cs[32];
	int avail_err;
	bool avail_tsc;			/* "tsc" in available_clocksource */
	int vdso_raw_rc;		/* __vdso_tsc_raw() result, 1 if not called */
	int vdso_f_rc;
	uint64_t vdso_f;		/* __vdso_tsc_to_ns(1 << 32) */
};

#define MAX_REASONS 40
struct decision {
	bool usable;
	bool rdtsc_ok;		/* RDTSC may be executed */
	bool calib_wait;	/* not usable only for want of factors: a 1 ppm
				 * bound, or perf's answer */
	bool rate_fixed;	/* f is a rate check's correction (rate.c) */
	/* The state it was made in, for publish.c: */
	bool calibrating;	/* tsc__calibrating() */
	bool rdtsc_allowed;	/* tsc__rdtsc_allowed(): RDTSC executes (maybe emulated) */
	struct factors f;
	int n;
	struct tsc_reason r[MAX_REASONS];
};

enum { W_RAW, W_MONO, W_REAL, W_BOOT, W_TAI, W_NR };
/* The wall mapping's latch is public (tsc.h: the inline fast path):
 * struct tsc_wall_seg is a piece of one clock's mapping: from library ns
 * s on, the clock reads b + (ns - s) * (1 + rate), plus (ns - s) * slew
 * for the first len ns; rate and slew in 2^-32 units.  struct
 * tsc_wall_map is one clock: cur from cur.s on, prev before it, and
 * from floor_from to cur.s never below the line floor (only after a
 * writer stalled, see wall.c; floor_from UINT64_MAX: none). */
#define wall_seg tsc_wall_seg
#define wall_map tsc_wall_map
#define wall_copy tsc_wall_copy
_Static_assert((int)W_NR == (int)__TSC_W_NR, "tsc.h's clocks");
/* The writer's record of one clock. */
struct wall_track {
	uint64_t l, c;		/* where the rate is measured from */
	int64_t rate;		/* the clock's rate against library ns, minus 1, 2^-32 */
	bool measured;		/* rate is measured, not assumed (the first anchor) */
	int64_t freq;		/* adjtimex() frequency at l */
	int64_t off;		/* REALTIME, BOOTTIME, TAI: minus MONOTONIC */
	uint64_t w;		/* how far off that offset may be */
	bool back;		/* this anchor sets the mapping back (kernel's step) */
};

/* One anchor's readings: clock i read c[i] at library ns l[i], from a
 * bracket w[i] ns wide; freq is adjtimex()'s frequency (and tick) as a
 * rate in 2^-32 units, if freq_ok.  Measured by tsc__reanchor(); a test
 * may make one up and hand it to tsc__wall_anchor(). */
struct wall_sample {
	uint64_t l[W_NR], c[W_NR], w[W_NR];
	int64_t freq;
	bool freq_ok;
};

struct tsc {
	struct tsc_fast fast;	/* must be first: the inline fast path */
	struct tsc_wall wall;	/* then this: struct __tsc_head (tsc.h) */
	char root[4096];	/* "" (live) or the sysroot */
	bool live;
	bool defer_perf;	/* no perf_event_open() now (tsc_open(), reports) */
	bool redecide;		/* the decision in use is not made from all facts */
	bool published;		/* the fast path holds a decision */
	bool armed;		/* the watched files and fds are set up */
	struct tsc_opts opts;
	pthread_mutex_t lock;	/* writers: decision, publish, anchors */
	pthread_t lock_owner;	/* who holds it (atomic; 0: nobody), for fork() */
	bool fork_mine;		/* the thread that forks held it (a handler) */
	struct static_facts sf;
	struct dyn_facts df;
	struct decision d;
	struct tsc_info info;
	struct rate_check rate;	/* fed by the wall anchors (wall.c) */
	int64_t scale_offset;	/* library ns - CLOCK_MONOTONIC_RAW */
	/* wall mapping: readers use wall (above) and, while the writer
	 * changes it, wall_mark; the rest is the writer's.  Each clock's
	 * highest value handed out meanwhile, and MARK_CLOSED once the
	 * writer holds readers there (wall.c). */
	struct {
		uint64_t v[W_NR];
	} wall_mark __attribute__((aligned(64)));
	/* Where the writer closed them: from library ns x on, held reads
	 * rise from c no steeper than 1 + r (2^-32 units) (wall.c). */
	struct wall_hold {
		uint64_t x, c;
		int64_t r;
	} wall_hold[W_NR];
	/* The highest read handed out while the fast path's line changes,
	 * and MARK_CLOSED once the writer holds readers there (publish.c). */
	struct {
		uint64_t v;
	} mark __attribute__((aligned(64)));
	/* What a wall read needs to tell that the TSC jumped, for each copy
	 * of the mapping (written with it), and est for the next (wall.c):
	 * library ns minus RAW at the anchor, RAW then, how fast library ns
	 * may run off RAW (ppb), the anchor's width, and where the copy's
	 * reads go out of line (its slow_from). */
	struct wall_est {
		int64_t scale;
		uint64_t raw, ppb, w, slow_at;
		uint32_t tsc;		/* the TSC was in use: it may jump */
	} wall_est[2], est, jump_est;
	/* The wall seq / 2 + 1 of the copy whose reads saw a jump of the
	 * TSC: its other reads map as they did, without looking (wall.c). */
	uint64_t jump_seen;
	bool jumped_ahead;	/* jump_est: the copy in use's, which readers
				 * follow after the jump (wall.c) */
	int64_t rebase;		/* library ns jumped ahead by this: the next
				 * mapping is moved on by it (wall.c) */
	struct wall_track wt[W_NR];
	int64_t rescale;	/* library ns' rate changed by this (2^-32 units)
				 * since the last anchor: a refinement (publish.c) */
	int64_t wfreq;		/* adjtimex() frequency at the last anchor */
	bool wfreq_ok;
	uint64_t wall_T;	/* library ns where the last segments start */
	uint64_t last_anchor_raw;
	uint64_t anchor_next;	/* library ns the next anchor is due (atomic) */
	/* The last anchor's CLOCK_MONOTONIC_RAW reading in TSC ticks (taken
	 * while the TSC is in use): the calibration's next bracket. */
	struct bracket anchor_b;
	bool anchor_b_new;
	uint64_t (*wall_now)(struct tsc *t);	/* the writer's clock (tests replace it) */
	void (*stall)(struct tsc *t);	/* a test stalls the writer at a change (publish.c) */
	void (*wall_stall)(struct tsc *t);	/* a test stalls the wall writer before
						 * its second turn, after its last look */
	uint64_t skew;		/* a test: ticks the writer's TSC is ahead of readers' */
	/* watching */
	int epfd, timerfd, stopfd;
	uint64_t timer_ns;	/* its period */
	int wfd[NWATCHED];	/* the watched files kept open; -1, -ENOENT */
	pthread_t thread;
	bool thread_on;
	bool started;		/* the watcher runs its own code (atomic) */
	int watch_err;		/* why the kernel cannot be followed; 0 if it can */
	bool rearm;		/* a forked child's: start watching at next call */
	char watch_why[256];	/* watcher settings the system refused */
	void *wcpus;		/* copy of opts.watcher_cpus */
	bool place_self;	/* the watcher keeps to the housekeeping CPUs */
	struct tsc *reg_next, *reg_prev;	/* every open handle, for fork() */
};

/* util.c: the helpers every file uses */
int tsc__set_errno(int err);	/* err < 0: errno = -err; returns err */
uint64_t tsc__clock_ns(clockid_t clk);
uint64_t tsc__mono_raw(void);
void tsc__latch_turn(uint32_t *seq);
bool tsc__trylock(struct tsc *t);	/* t->lock if free; never re-arms */
void tsc__unlock(struct tsc *t);	/* after tsc__lock() or tsc__trylock() */
/* open.c */
/* tsc_reasons() of 0.2 to 0.4, which tsc.h now hides behind a macro:
 * it fills elements of their size, without code. */
#define TSC_REASON_SIZE_0_4 offsetof(struct tsc_reason, code)
int (tsc_reasons)(struct tsc *t, struct tsc_reason *out, size_t n);
/* decide.c */
void tsc__reason(struct decision *d, enum tsc_reason_kind k, const char *code,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void tsc__decide(struct tsc *t, struct decision *d);
bool tsc__decide_early(struct tsc *t, struct decision *d);
bool tsc__calibrating(const struct tsc *t);	/* begun, bound not yet 1 ppm */
/* facts.c */
extern const char *const tsc__watched[NWATCHED];
void tsc__static_facts(struct tsc *t);
void tsc__dyn_facts(struct tsc *t, struct dyn_facts *df);
void tsc__early_facts(struct tsc *t, struct dyn_facts *df);
bool tsc__factors_from_khz(uint64_t khz, enum tsc_src src, struct factors *f);
bool tsc__rdtsc_allowed(const struct tsc *t, const struct dyn_facts *df);
bool tsc__kernel_keeps_tsc(const struct dyn_facts *df);
bool tsc__is_tsc(const char *cs);
/* Read once, if needed (a live handle) or always (sysroot, all_facts). */
void tsc__need_cpuinfo(struct tsc *t, bool needed);
void tsc__need_cmdline(struct tsc *t, bool needed);
void tsc__need_perf(struct tsc *t, bool needed);
/* perf.c, calibrate.c */
int tsc__perf_factors(struct factors *f, char *why, size_t cap);
void tsc__calib_begin(struct calib *c);
int tsc__calib_update(struct calib *c, const struct bracket *b);
void tsc__calib_from(struct calib *c, const struct bracket *a);
/* rate.c */
void tsc__rate_bracket(struct rate_check *r, const struct bracket *b);
void tsc__rate_reset(struct rate_check *r);
void tsc__rate_restart(struct rate_check *r);
bool tsc__rate_error(const struct rate_check *r, const struct factors *f, int64_t *ppb);
int tsc__rate_check(struct rate_check *r, struct factors *f);
/* publish.c */
int tsc__publish(struct tsc *t, const struct decision *d);
uint64_t tsc__lib_now(struct tsc *t);
void tsc__step(struct tsc *t, uint64_t ns);
/* wall.c; caller holds t->lock */
int tsc__reanchor(struct tsc *t);
int tsc__wall_anchor(struct tsc *t, const struct wall_sample *x);
/* watch.c */
void tsc__watch_files(struct tsc *t);
int tsc__watch_start(struct tsc *t);
void tsc__watch_stop(struct tsc *t);
void tsc__settle(struct tsc *t);
void tsc__lock(struct tsc *t);	/* t->lock; re-arms a forked child's handle */

#endif
