// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * libtsc: may this process read the x86 TSC directly, and if so, how do
 * ticks become nanoseconds?  Every answer comes with its reasons.  It
 * builds on other 64-bit architectures too, where the answer is always
 * no (TSC_ARCH_HAS_TSC below) and every read is the fallback clock's.
 *
 * Model
 *   tsc_open() gathers facts from the best sources available (the tsckit
 *   kernel series' sysfs files and vDSO calls, else the stock kernel's
 *   clocksource, /proc/cpuinfo, CPUID, the perf mmap page, and last a
 *   calibration against CLOCK_MONOTONIC_RAW), decides, and publishes the
 *   result in the handle.  The read functions below are static inline:
 *   while the TSC is in use a timestamp costs one load of the published
 *   state, RDTSC and a multiply-shift-add; no syscall, no lock, no
 *   allocation.  While it is not, each read is exactly one clock_gettime()
 *   of the fallback clock (CLOCK_MONOTONIC_RAW unless changed).
 *
 *   The library keeps watching the kernel (a watcher thread by default, or
 *   tsc_fd() + tsc_process_events() from the caller's event loop) and
 *   switches between TSC and fallback on its own.  Nanoseconds stay on one
 *   scale across a switch: the new source is offset so that it continues
 *   from the old one at the switch, a little ahead (the time the switch
 *   took to read the new source, plus 1 us for the skew between CPUs).
 *   The calibrated TSC's takeover from the fallback clock is no step: the
 *   kernel keeps time with the TSC, so the TSC line can meet the clock on
 *   every CPU, ahead of it only by what reading the clock takes.
 *   When RDTSC starts to fault (kernel.tsc_user=2) the TSC cannot be read
 *   at the switch: its scale is estimated from CLOCK_MONOTONIC_RAW and
 *   the last anchor, and the step adds 1 us per ms since that anchor
 *   (1000 ppm, more than the two rates differ by).
 *   Ordering promised, provided the CPUs' TSCs agree within that 1 us and
 *   the switch is not stalled for milliseconds between its reads of the
 *   two sources (their rates may differ):
 *     - within one thread, neither tsc_now_ns() nor tsc_now_ns_ordered()
 *       ever goes back, across any number of switches;
 *     - between threads, a tsc_now_ns_ordered() that starts after another
 *       thread's read returned (as seen through any synchronization) is
 *       not below it;
 *     - tsc_now_ns() promises nothing between threads: its RDTSC may run
 *       before earlier loads (tests/lib/order.c saw tens of us on a VM).
 *   The offset (the "step" between the library's scale and the new source)
 *   is reported by tsc_get_info().
 *
 *   Scale: ns start out on the CLOCK_MONOTONIC_RAW scale (anchored at
 *   open).  tsc_ns_to_clock() maps them to CLOCK_MONOTONIC, CLOCK_REALTIME,
 *   CLOCK_BOOTTIME, CLOCK_TAI or CLOCK_MONOTONIC_RAW.  The mapping is
 *   re-anchored once a second by the watcher (or by tsc_process_events(),
 *   whose fd wakes once a second, or by tsc_reanchor() on demand); an
 *   anchor never moves it but slews it (at most 500 ppm) toward the
 *   kernel's clock at the kernel's rate, which follows NTP's frequency;
 *   its error was 0.2-0.3 us on a quiet machine (tests/lib/wall.c
 *   measures it, and fails it only past 50 us: test machines are noisy).  tsc_clock_gettime() of MONOTONIC, BOOTTIME and RAW
 *   never goes back within a thread (as tsc_now_ns(), at its cost), and
 *   tsc_clock_gettime_ordered() not between threads either (as
 *   tsc_now_ns_ordered()), unless the watcher stalls over 1 ms in the
 *   middle of a change of the mapping while the mapping stands still
 *   (over 1 ms ahead of the kernel's clock, as after a resume): then by
 *   up to 1 ms (tsc_clock_gettime(3)).  REALTIME and TAI step only when
 *   the kernel's clock stepped.
 *
 * Errors: functions returning int return 0 (or a count) on success and a
 * negative errno on failure, and also set errno.  Functions returning a
 * pointer return NULL and set errno.
 *
 * Options start with a size (libbpf's model): declare them with
 * TSC_OPTS(), which zero-fills them; unknown non-zero bytes past the end
 * the library knows are rejected with -EINVAL.  tsc_get_info() takes the
 * size of the caller's struct and returns how many bytes it filled.
 *
 * Thread safety: every read function and tsc_get_info(), tsc_get_reasons(),
 * tsc_ns_to_clock() may be called from any thread at any time; the read
 * functions, tsc_ns_to_clock(), tsc_clock_gettime() and
 * tsc_clock_gettime_ordered() are lock-free and async-signal-safe.  The
 * handle must outlive all of them; tsc_close() is not concurrent-safe.
 * tsc_default()'s handle is shared by the whole process and outlives
 * every call: it is never freed.
 * The watcher thread ("tsc-watch") blocks every signal.  After fork()
 * the parent's handles are untouched; the child stays single-threaded
 * until its first non-inline call on a handle, which gives the handle
 * fds and a watcher of its own (see tsc_open(3)).
 *
 * The inline functions are also exported as real symbols for bindings
 * (built from src/ffi.c).  ABI: struct tsc_fast and struct tsc_wall,
 * which the inline code reads, are part of it.  A
 * binding calls tsc_get_reasons() with its element size: the exported
 * symbol tsc_reasons fills the 0.4 element (without code).
 */
#ifndef TSC_H
#define TSC_H

/* TSC_ARCH_HAS_TSC: 1 where this process may have a TSC to read
 * (x86-64), else 0.  Elsewhere the header and the library build all the
 * same, and every handle reads its fallback clock: tsc_in_use() is
 * false, the reasons say why (code "arch_tsc"), tsc_rdtsc() and
 * tsc_rdtsc_ordered() read CLOCK_MONOTONIC_RAW in ns (a count that
 * moves, not a TSC), and there are no factors (tsc_has_factors()). */
#if defined(__x86_64__)
#define TSC_ARCH_HAS_TSC 1
#elif defined(__SIZEOF_INT128__)
#define TSC_ARCH_HAS_TSC 0
#else
#error "libtsc needs a 64-bit target (unsigned __int128): 32-bit targets are not supported"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>	/* clockid_t */
#include <time.h>
#include "tsc-version.h"	/* beside tsc.h once installed */
#if defined(__GLIBC__) && !defined(__clockid_t_defined)
#include <bits/types/clockid_t.h>	/* strict ISO C: sys/types.h hides it */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The reads and their helpers are inline even where a compiler would
 * rather call them: a call and the stores around it cost more than the
 * read itself.  GCC refuses that in a function whose target options
 * differ from the file's (__attribute__((target(...))), such as
 * "general-regs-only"): there, define TSC_NO_ALWAYS_INLINE before
 * including tsc.h. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(TSC_NO_ALWAYS_INLINE)
#define __TSC_FAST static inline __attribute__((always_inline))
#else
#define __TSC_FAST static inline
#endif
#ifndef TSCINLINE
#define TSCINLINE __TSC_FAST
#endif

struct tsc;

/* Fallback clock used while the TSC is not. */
enum tsc_fallback {
	TSC_FALLBACK_MONOTONIC_RAW = 0,
	TSC_FALLBACK_MONOTONIC = 1,
};

struct tsc_opts {
	size_t sz;		/* sizeof(struct tsc_opts), set by TSC_OPTS */
	/* Read DIR/sys/..., DIR/proc/... and DIR/tsckit/... instead of the
	 * live files.  CPUID facts then come from DIR/tsckit/cpuid, vDSO
	 * symbols from DIR/tsckit/vdso.img; perf and calibration are not
	 * used (unless force_calibrate).  Reads still use this CPU's TSC. */
	const char *sysroot;
	bool force_calibrate;	/* use a calibration even if better factors exist */
	bool no_watcher;	/* no thread: call tsc_process_events() yourself */
	bool no_rdtscp;		/* ordered reads use LFENCE;RDTSC even with RDTSCP */
	bool force_fallback;	/* never use the TSC (benchmarks, tests) */
	enum tsc_fallback fallback;
	/* The watcher thread, "tsc-watch", runs with every signal blocked.
	 * watcher_cpus: the CPUs it may run on, a cpu_set_t (or CPU_ALLOC
	 * set) of watcher_cpus_size bytes, copied at open; NULL: the
	 * housekeeping CPUs (online, not isolated nor nohz_full; all online
	 * if that leaves none), whatever the opener's affinity.
	 * watcher_policy: 0 SCHED_OTHER, whatever the opener's policy,
	 * else SCHED_FIFO or SCHED_RR at watcher_priority.  What the system
	 * refuses (EPERM, CPUs not allowed) is said in the reasons, and the
	 * watcher runs without it. */
	const void *watcher_cpus;
	size_t watcher_cpus_size;
	int watcher_policy;
	int watcher_priority;
	/* Read every fact, also those that better ones make moot
	 * (/proc/cpuinfo, /proc/cmdline, perf, ...), for a full report as
	 * tscinfo gives; costs tsc_open() system calls.  Since 0.4.0. */
	bool all_facts;
};

/* Declare zero-filled options: TSC_OPTS(o, .sysroot = "dump"); or
 * TSC_OPTS(o, ) for none.  In C, designated initializers, in any order.
 * C++ (C++11 on) has no designated initializers before C++20, and
 * there, in declaration order only: g++ rejects others ("designator
 * order for field ... does not match declaration order").  So in C++
 * the macro takes each ".member = value" as an assignment to a zeroed
 * struct, in a lambda: any order, any of the struct's members (up to
 * 11 of them), at function scope (it captures by reference). */
#ifdef __cplusplus
#define __TSC_OPT1(o, a) (void)(o a);
#define __TSC_OPT2(o, a, ...) (void)(o a); __TSC_OPT1(o, __VA_ARGS__)
#define __TSC_OPT3(o, a, ...) (void)(o a); __TSC_OPT2(o, __VA_ARGS__)
#define __TSC_OPT4(o, a, ...) (void)(o a); __TSC_OPT3(o, __VA_ARGS__)
#define __TSC_OPT5(o, a, ...) (void)(o a); __TSC_OPT4(o, __VA_ARGS__)
#define __TSC_OPT6(o, a, ...) (void)(o a); __TSC_OPT5(o, __VA_ARGS__)
#define __TSC_OPT7(o, a, ...) (void)(o a); __TSC_OPT6(o, __VA_ARGS__)
#define __TSC_OPT8(o, a, ...) (void)(o a); __TSC_OPT7(o, __VA_ARGS__)
#define __TSC_OPT9(o, a, ...) (void)(o a); __TSC_OPT8(o, __VA_ARGS__)
#define __TSC_OPT10(o, a, ...) (void)(o a); __TSC_OPT9(o, __VA_ARGS__)
#define __TSC_OPT11(o, a, ...) (void)(o a); __TSC_OPT10(o, __VA_ARGS__)
#define __TSC_OPT_MANY(o, ...) static_assert(false, "TSC_OPTS: at most 11 options");
#define __TSC_OPT_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, M, ...) M
#define TSC_OPTS(NAME, ...)						\
	struct tsc_opts NAME = [&]() {					\
		struct tsc_opts __tsc_o;				\
		memset(&__tsc_o, 0, sizeof(__tsc_o));			\
		__tsc_o.sz = sizeof(__tsc_o);				\
		__TSC_OPT_PICK(__VA_ARGS__, __TSC_OPT_MANY,		\
			       __TSC_OPT11, __TSC_OPT10,		\
			       __TSC_OPT9, __TSC_OPT8, __TSC_OPT7,	\
			       __TSC_OPT6, __TSC_OPT5, __TSC_OPT4,	\
			       __TSC_OPT3, __TSC_OPT2, __TSC_OPT1, 0)	\
			(__tsc_o, __VA_ARGS__)				\
		return __tsc_o;						\
	}()
#else
#define TSC_OPTS(NAME, ...)						\
	struct tsc_opts NAME = __extension__ ({				\
		memset(&NAME, 0, sizeof(struct tsc_opts));		\
		struct tsc_opts __tsc_opts = {				\
			.sz = sizeof(struct tsc_opts),			\
			__VA_ARGS__					\
		};							\
		__tsc_opts;						\
	})
#endif

/* Open: gather facts, decide, publish.  Where the vDSO hands out the TSC
 * its word decides, and the files are read just after (the watcher, or
 * the first report: reports always show the decision from every fact;
 * tsc_open(3)).  opts may be NULL.  Returns NULL
 * and errno EINVAL (bad opts) or ENOMEM, and for no other error.  An
 * unusable TSC is not an error: the handle then falls back and
 * tsc_reasons() says why.  Nor is a missing fd or thread (EMFILE,
 * EAGAIN): the handle decides and reads, and its reasons say that it
 * cannot follow the kernel on its own (tsc_open(3)). */
struct tsc *tsc_open(const struct tsc_opts *opts);
void tsc_close(struct tsc *t);

/* The process-wide handle, for libraries that share one watcher: opened
 * with default options (tsc_open(NULL)) at the first call, which any
 * number of threads may make at once; the same pointer ever after.  It
 * is never freed: tsc_close() on it does nothing, and it and its watcher
 * last until the process exits.  In a forked child it is the same handle,
 * and tsc_default() counts as a call on it (see tsc_open(3) on fork).
 * Returns NULL and errno ENOMEM if the open fails; the next call tries
 * again.  Since 0.3 (LIBTSC_0.3). */
struct tsc *tsc_default(void);

/* Where the conversion factors came from. */
enum tsc_src {
	TSC_SRC_NONE = 0,
	TSC_SRC_VDSO,		/* __vdso_tsc_to_ns(1 << 32): kernel's own factor */
	TSC_SRC_SYSFS_MULT,	/* tsc0/tsc_mult, tsc_shift */
	TSC_SRC_PERF,		/* perf_event mmap page time_mult/time_shift */
	TSC_SRC_SYSFS_KHZ,	/* tsc0/tsc_khz */
	TSC_SRC_CPU0_KHZ,	/* cpu0/tsc_freq_khz */
	TSC_SRC_CPUID_15H,	/* CPUID 0x15 crystal ratio */
	TSC_SRC_CPUID_HV,	/* CPUID 0x40000010 hypervisor leaf */
	TSC_SRC_CALIBRATION,	/* measured against CLOCK_MONOTONIC_RAW */
};
const char *tsc_src_name(enum tsc_src src);	/* "vdso", "sysfs-mult", ... */

struct tsc_info {
	bool usable;		/* the TSC is in use now */
	bool rdtscp;		/* ordered reads use RDTSCP, else LFENCE;RDTSC; for a
				 * sysroot, what the dump's CPU would use */
	bool kernel_series;	/* the tsckit sysfs files exist */
	bool vdso_tsc;		/* the vDSO has __vdso_tsc_raw/__vdso_tsc_to_ns */
	int vdso_clock;		/* clock_gettime via vDSO: 1 yes, 0 syscall, -1 unknown */
	int tsc_user;		/* kernel.tsc_user: 0 allow, 1 emulate, 2 sigsegv,
				 * -1 absent, unreadable or unknown (tsc_user_value) */
	int prctl_tsc;		/* PR_GET_TSC of this task: 1 enable, 2 sigsegv, -1 n/a */
	int tsc_stable;		/* tsc0/tsc_stable, -1 absent or unreadable */
	enum tsc_src src;	/* factors in use (kept while falling back) */
	uint64_t mult;		/* ns = ticks * mult >> shift (+ offset) */
	uint32_t shift;
	uint64_t khz;		/* TSC frequency in kHz, 0 if unknown */
	enum tsc_src khz_src;
	uint64_t err_ppb;	/* error bound of the factors' rate, ppb: a
				 * calibration's, a frequency's rounding, or a
				 * rate correction's (rate_error_ppb);
				 * while calibrating, the bound so far
				 * (UINT64_MAX before its first measurement) */
	uint64_t calib_ns;	/* the interval the calibration spans, 0 if none */
	clockid_t fallback_clock;
	char clocksource[32];	/* current_clocksource, "" if unknown */
	uint64_t decisions;	/* re-decisions made (open counts as one; a
				 * completion from the files after an open on
				 * the vDSO's word, as another) */
	uint64_t switches;	/* TSC <-> fallback switches and factor changes */
	int64_t last_step_ns;	/* library scale minus new source at last switch;
				 * the takeover: TSC line minus fallback clock */
	int64_t scale_offset_ns;/* library scale minus CLOCK_MONOTONIC_RAW now */
	uint64_t anchors;	/* wall-clock re-anchors made */
	int vdso_raw;		/* last __vdso_tsc_raw(): 0, -ENODEV, ...; 1 not called */
	bool calibrated;	/* a calibration was made (only when its factors
				 * would be used, or force_calibrate) */
	/* The wall mapping (tsc_clock_gettime(3)); added in 0.4.0: */
	uint64_t clock_steps;	/* steps it took: REALTIME, TAI after the kernel
				 * set them, BOOTTIME after a resume, any but
				 * REALTIME, TAI forward when over 1 ms behind */
	int64_t last_clock_step_ns;	/* the last one's size */
	int64_t wall_error_ns;	/* CLOCK_MONOTONIC minus its mapping at the
				 * last anchor, which slewing then absorbs */
	uint64_t refinements;	/* calibration refinements, each a slew, from
				 * the wall anchors' brackets */
	/* Added in 0.5.0: */
	long long tsc_user_value;	/* kernel.tsc_user as read (at most
					 * LLONG_MAX), also a value this library
					 * does not know; -1 absent or unreadable.
					 * A 0.4 library leaves it 0: it is valid
					 * only if tsc_get_info() returned at least
					 * its end */
	/* Added in 0.7.0 (valid if tsc_get_info() returned their end): */
	int64_t rate_error_ppb;	/* the factors' rate against CLOCK_MONOTONIC_RAW,
				 * as the wall anchors measure it since the TSC
				 * came into use: library ns per RAW ns, minus
				 * one, in ppb (0 until measured) */
	uint64_t rate_bound_ppb;	/* how far off that measurement may be */
	uint64_t rate_corrections;	/* corrections made when it lay beyond
					 * err_ppb plus rate_bound_ppb, each
					 * a slew (tsc_get_info(3)) */
	uint64_t tsc_jumps;	/* the TSC jumped against CLOCK_MONOTONIC_RAW
				 * (a reset at resume, a hypervisor): the
				 * library's scale was set back on it */
	int64_t last_tsc_jump_ns;	/* the last one's size: library ns minus
					 * where they should have been */
};
/* Copy at most sz bytes of the current info and zero the rest of sz;
 * returns how many bytes this library filled (its struct's size, or sz
 * if smaller). */
int tsc_get_info(struct tsc *t, struct tsc_info *info, size_t sz);

enum tsc_reason_kind {
	TSC_REASON_OK = 0,	/* a condition for using the TSC holds */
	TSC_REASON_BLOCK,	/* a condition fails: the TSC is not used */
	TSC_REASON_NOTE,	/* a fact that does not decide anything */
};
/* text is for people and may change with every release and run: it
 * carries the numbers (kHz, factors, error bounds).  code is for
 * programs (alerts, metric labels, grep): a short name of the condition
 * or fact the reason is about, [a-z0-9_]+, never a value.  The same
 * condition gives the same code on every machine and run, whatever its
 * outcome (kind says that), so several reasons may share one.  Codes
 * are stable: one is never renamed nor given another meaning; new ones
 * may come.  The list: tsc_reasons(3).  code since 0.5.0. */
#define TSC_REASON_LEN 160
#define TSC_REASON_CODE_LEN 32
struct tsc_reason {
	enum tsc_reason_kind kind;
	char text[TSC_REASON_LEN];
	char code[TSC_REASON_CODE_LEN];	/* since 0.5.0 */
};
/* Copy up to n reasons of the current decision, each element sz bytes
 * (sizeof(struct tsc_reason) of the caller's header, at least the 0.4
 * element without code); returns how many there are (may exceed n). */
int tsc_get_reasons(struct tsc *t, struct tsc_reason *out, size_t n, size_t sz);
/* The element size is the caller's: a program built against this header
 * gets codes, one built before 0.5.0 called the function tsc_reasons,
 * which still fills the old element.  No function tsc_reasons is
 * declared: a pointer is &tsc_get_reasons. */
#define tsc_reasons(t, out, n) tsc_get_reasons((t), (out), (n), sizeof(struct tsc_reason))

/* A pollable fd (epoll over the watched sysfs files and a 1 s timer);
 * when readable, call tsc_process_events().  Returns the fd (owned by the
 * handle) or -errno. */
int tsc_fd(struct tsc *t);
/* Re-read the kernel's state, re-decide, re-anchor the wall-clock mapping
 * when due.  Never blocks.  Returns the number of changes of decision or
 * factors (0 or more) or -errno. */
int tsc_process_events(struct tsc *t);
/* Re-anchor the wall-clock mapping now. */
int tsc_reanchor(struct tsc *t);
/* tsc_ns_to_clock() and tsc_clock_gettime() are inline, at the end of
 * this file (since 0.7). */

struct tsc_xcpu_result {
	unsigned int cpus;		/* CPUs tested */
	uint64_t reads;			/* TSC reads checked in total */
	uint64_t backward;		/* reads that went back */
	uint64_t worst_ticks;		/* worst backward step */
	uint64_t worst_ns;
	int worst_from_cpu, worst_to_cpu; /* writer CPU, reader CPU; -1 if none */
};
/* Cross-CPU consistency: one pinned thread per CPU of the affinity set,
 * for ms milliseconds, each checking that its ordered TSC read is not
 * below the last one of any CPU.  Returns 0 (result says what was seen),
 * -ENODEV when RDTSC may not be executed, -EINVAL, or a thread error. */
int tsc_xcpu_check(struct tsc *t, unsigned int ms,
		   struct tsc_xcpu_result *res, size_t sz);

const char *tsc_version(void);	/* "0.7.0": the library actually loaded */

/*
 * Fast path.  The published state is the first member of struct tsc: two
 * copies, the kernel's seqcount latch.  The writer bumps seq, rewrites the
 * copy readers are not using, bumps seq again and rewrites the other; a
 * reader takes copy seq & 1 and retries only if seq moved meanwhile, that
 * is, only when the writer made progress.  A reader never waits for the
 * writer, whatever point of its update the writer is stopped at, and is
 * async-signal-safe (a signal handler may read in the middle of one).
 * While seq is odd the writer is changing the line: a read then goes
 * through __tsc_held(), which keeps it from running past the new line
 * while the writer stalls: it stands still at most 1 ms, then runs on
 * 1 ms behind (since 0.6; see src/publish.c).
 */
enum { TSC_MODE_CLOCK = 0, TSC_MODE_TSC = 1 };

struct tsc_fast_state {
	uint32_t mode;		/* TSC_MODE_TSC or TSC_MODE_CLOCK */
	uint32_t shift;
	uint32_t rdtscp;	/* ordered reads may use RDTSCP */
	int32_t clock;
	uint64_t mult;
	uint64_t offset;	/* ns = (ticks * mult >> shift) + offset */
	uint64_t clock_offset;	/* ns = clock_gettime(clock) + clock_offset */
};

struct tsc_fast {
	uint32_t seq;
	uint32_t pad;
	struct tsc_fast_state s[2];
};

#define __tsc_ld(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

__TSC_FAST const struct tsc_fast *__tsc_fast(const struct tsc *t)
{
	return (const struct tsc_fast *)t;
}

/* The copy to read now, and seq to check afterwards. */
__TSC_FAST const struct tsc_fast_state *__tsc_begin(const struct tsc *t, uint32_t *seq)
{
	*seq = __atomic_load_n(&__tsc_fast(t)->seq, __ATOMIC_ACQUIRE);
	return &__tsc_fast(t)->s[*seq & 1];
}

/* Did the copy stay put while it was read? */
__TSC_FAST bool __tsc_end(const struct tsc *t, uint32_t seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __builtin_expect(__tsc_ld(__tsc_fast(t)->seq) == seq, 1);
}

/* The fallback clock, out of line: it costs a clock_gettime() anyway. */
uint64_t __tsc_clock_ns(clockid_t clock);

#if TSC_ARCH_HAS_TSC
/* RDTSC, not ordered against surrounding instructions. */
TSCINLINE uint64_t tsc_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

__TSC_FAST uint64_t __tsc_rdtsc_ordered(bool rdtscp)
{
	uint32_t lo, hi, aux;

	if (rdtscp)
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux)
				     :: "memory");
	else
		__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi)
				     :: "memory");
	return ((uint64_t)hi << 32) | lo;
}
#else
/* No TSC on this architecture: CLOCK_MONOTONIC_RAW in ns (4: its Linux
 * number), which moves and never goes back; tsc_in_use() is never true. */
TSCINLINE uint64_t tsc_rdtsc(void)
{
	return __tsc_clock_ns(4);
}

__TSC_FAST uint64_t __tsc_rdtsc_ordered(bool rdtscp)
{
	(void)rdtscp;
	return __tsc_clock_ns(4);
}
#endif

/* RDTSC after all earlier instructions: RDTSCP when the CPU has it (and
 * the handle allows it), else LFENCE;RDTSC. */
TSCINLINE uint64_t tsc_rdtsc_ordered(const struct tsc *t)
{
	uint32_t seq;

	return __tsc_rdtsc_ordered(__tsc_ld(__tsc_begin(t, &seq)->rdtscp));
}

/* True while the TSC is in use (reads do not make syscalls). */
TSCINLINE bool tsc_in_use(const struct tsc *t)
{
	uint32_t seq;

	return __tsc_ld(__tsc_begin(t, &seq)->mode) == TSC_MODE_TSC;
}

__extension__ typedef unsigned __int128 __tsc_u128;

__TSC_FAST uint64_t __tsc_mul(uint64_t ticks, uint64_t mult, uint32_t shift)
{
	/* The library publishes shift 32 whenever that is exact: a
	 * constant shift is one instruction, a variable one many. */
	if (__builtin_expect(shift == 32, 1))
		return (uint64_t)(((__tsc_u128)ticks * mult) >> 32);
	return (uint64_t)(((__tsc_u128)ticks * mult) >> shift);
}

/* A read of ns while the writer changes the line (seq odd), out of line:
 * ns, raising a shared mark to it first, or ns held where the writer
 * closed the mark.  Lock-free: a compare-and-swap, no wait. */
uint64_t __tsc_held(const struct tsc *t, uint32_t seq, uint64_t ns);

/* True when the handle has factors to turn ticks into ns.  Without
 * them (no source gave any: tsc_info.src is TSC_SRC_NONE, the handle
 * falls back), tsc_delta_to_ns() and tsc_ticks_to_ns() return 0.  Since
 * 0.7 (LIBTSC_0.7). */
TSCINLINE bool tsc_has_factors(const struct tsc *t)
{
	uint32_t seq;

	return __tsc_ld(__tsc_begin(t, &seq)->mult) != 0;
}

/* A tick delta in ns, exact (128-bit product) for any delta up to years;
 * 0 without factors (tsc_has_factors()). */
TSCINLINE uint64_t tsc_delta_to_ns(const struct tsc *t, uint64_t delta)
{
	const struct tsc_fast_state *s;
	uint32_t seq;
	uint64_t ns;

	do {
		s = __tsc_begin(t, &seq);
		ns = __tsc_mul(delta, __tsc_ld(s->mult), __tsc_ld(s->shift));
	} while (!__tsc_end(t, seq));
	return ns;
}

/* Absolute ticks (from tsc_rdtsc*) to the library's ns scale.  Only
 * meaningful for ticks read while tsc_in_use(); 0 without factors
 * (tsc_has_factors()). */
TSCINLINE uint64_t tsc_ticks_to_ns(const struct tsc *t, uint64_t ticks)
{
	const struct tsc_fast_state *s;
	uint32_t seq;
	uint64_t ns;

	do {
		s = __tsc_begin(t, &seq);
		ns = __tsc_mul(ticks, __tsc_ld(s->mult), __tsc_ld(s->shift)) +
		     __tsc_ld(s->offset);
	} while (!__tsc_end(t, seq));
	return ns;
}

__TSC_FAST uint64_t __tsc_now(const struct tsc *t, bool ordered)
{
	const struct tsc_fast_state *s;
	uint32_t seq;
	uint64_t ns;

	do {
		s = __tsc_begin(t, &seq);
		if (TSC_ARCH_HAS_TSC && __builtin_expect(__tsc_ld(s->mode) == TSC_MODE_TSC, 1)) {
			uint64_t c = ordered ? __tsc_rdtsc_ordered(__tsc_ld(s->rdtscp)) :
					       tsc_rdtsc();

			ns = __tsc_mul(c, __tsc_ld(s->mult), __tsc_ld(s->shift)) +
			     __tsc_ld(s->offset);
		} else {
			ns = __tsc_clock_ns(__tsc_ld(s->clock)) + __tsc_ld(s->clock_offset);
		}
		if (__builtin_expect(seq & 1, 0))
			ns = __tsc_held(t, seq, ns);
	} while (!__tsc_end(t, seq));
	return ns;
}

/* Now, in ns on the library's scale (see top of file): never below an
 * earlier read of this thread. */
TSCINLINE uint64_t tsc_now_ns(const struct tsc *t)
{
	return __tsc_now(t, false);
}

/* Now, read after all earlier instructions have completed: also never
 * below a read another thread finished before this one started. */
TSCINLINE uint64_t tsc_now_ns_ordered(const struct tsc *t)
{
	return __tsc_now(t, true);
}

/*
 * The wall mapping (tsc_clock_gettime(3)), since 0.7: right after struct
 * tsc_fast in the handle, a seqcount latch of its own.  Each clock's
 * mapping is piecewise linear: from library ns cur.s on, the clock reads
 * cur.b + d + (d * rate + min(d, len) * slew) >> 32, d = ns - cur.s;
 * before cur.s, the writer's own code maps (prev, floor).  The fast path
 * below takes copy 0 while seq is even, writes nothing, and leaves to
 * __tsc_wall() everything else: seq odd (the writer is changing the
 * mapping: such reads go through a mark, as __tsc_held() does for the
 * line), ns before cur.s, ns past slow_from (0 until the first anchor
 * makes the mapping valid; a forked child's anchor is due; the
 * watcher's is overdue, or a read saw the TSC jump: such reads compare
 * ns with CLOCK_MONOTONIC_RAW), and the errors.  A read of now
 * goes there too while the line changes (its seq odd), on the fallback
 * clock, and with a shift other than 32.
 */
enum { __TSC_W_NR = 5 };	/* RAW, MONOTONIC, REALTIME, BOOTTIME, TAI */

struct tsc_wall_seg {
	uint64_t s, b, len;
	int64_t rate, slew;	/* 2^-32 units */
	uint64_t back;		/* the kernel's steps back so far (REALTIME, TAI) */
};

struct tsc_wall_map {
	struct tsc_wall_seg prev, cur, floor;
	uint64_t floor_from;
};

struct tsc_wall_copy {
	uint32_t valid;
	uint32_t pad;
	struct tsc_wall_map m[__TSC_W_NR];
};

struct tsc_wall {
	uint32_t seq;
	uint32_t pad;
	uint64_t slow_from;	/* library ns from which reads go out of line */
	struct tsc_wall_copy c[2];
};

/* The head of struct tsc that the inline code reads. */
struct __tsc_head {
	struct tsc_fast fast;
	struct tsc_wall wall;
};

__TSC_FAST const struct tsc_wall *__tsc_wall_of(const struct tsc *t)
{
	return &((const struct __tsc_head *)t)->wall;
}

/* The clocks' Linux numbers: a strict ISO C build may not define the
 * names. */
__TSC_FAST int __tsc_wall_index(clockid_t clk)
{
	switch ((int)clk) {
	case 4:	return 0;	/* CLOCK_MONOTONIC_RAW */
	case 1:	return 1;	/* CLOCK_MONOTONIC */
	case 0:	return 2;	/* CLOCK_REALTIME */
	case 7:	return 3;	/* CLOCK_BOOTTIME */
	case 11: return 4;	/* CLOCK_TAI */
	default: return -1;
	}
}

/* Everything but the fast path, out of line: now true reads the time
 * (tsc_clock_gettime()), else maps ns.  Since 0.7 (LIBTSC_0.7). */
int __tsc_wall(struct tsc *t, clockid_t clk, bool now, uint64_t ns, uint64_t *out);

__extension__ typedef __int128 __tsc_s128;
/* A load of two adjacent 32-bit fields at once, which the aliasing rules
 * allow only through such a type. */
#if defined(__GNUC__) || defined(__clang__)
typedef uint64_t __attribute__((__may_alias__)) __tsc_u64_alias;
#else
typedef uint64_t __tsc_u64_alias;
#endif

/* What __tsc_wall_fast() maps: the caller's ns, or now, read as
 * tsc_now_ns() or as tsc_now_ns_ordered() does. */
enum { __TSC_W_MAP, __TSC_W_NOW, __TSC_W_NOW_ORDERED };

/* Clock i at ns from the wall's copy 0, if its seq stayed even and ns
 * is in its last segment; else false.  A read of now takes the line's
 * copy 0 too, and only while the line's seq stays even and it runs on
 * the TSC: anything else (the writer changing the line or the mapping,
 * the fallback clock) goes out of line, where __tsc_wall() retries and
 * holds as tsc_now_ns() does.  An unordered RDTSC may run before the
 * loads of seq and the segment (then ns may be below its start: the
 * slow path) but not after the loads of both seqs that end the pass
 * have retired, so a value read here is below a writer's clock once it
 * has made its seq odd (and fenced): a read of this thread after it is
 * not below it.  That rests on in-order retirement and on loads
 * replayed when their line is taken before they retire (x86-TSO as
 * Intel and AMD implement it), not on a promise of the SDM, which says
 * only that later instructions may begin before RDTSC reads the
 * counter; tsc_clock_gettime_ordered() does not rest on it. */
__TSC_FAST bool __tsc_wall_fast(const struct tsc *t, int i, int what, uint64_t *ns,
				uint64_t *out)
{
	const struct tsc_wall *w = __tsc_wall_of(t);
	const struct tsc_wall_seg *g = &w->c[0].m[i].cur;
	const struct tsc_fast *f = __tsc_fast(t);
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE), lseq = 0;
	uint64_t s, b, len, slow, d, ds;
	int64_t rate, slew;

	if (__builtin_expect(seq & 1, 0))
		return false;
	if (what != __TSC_W_MAP) {
		uint64_t mode_shift;

		if (!TSC_ARCH_HAS_TSC)
			return false;
		lseq = __atomic_load_n(&f->seq, __ATOMIC_ACQUIRE);
		/* mode and shift (adjacent, 8-aligned) in one load: the TSC
		 * at shift 32, or out of line (x86 is little-endian). */
		mode_shift = __atomic_load_n((const __tsc_u64_alias *)(const void *)&f->s[0].mode,
					     __ATOMIC_RELAXED);
		if (__builtin_expect((lseq & 1) ||
				     mode_shift != ((uint64_t)32 << 32 | TSC_MODE_TSC), 0))
			return false;
		*ns = __tsc_mul(what == __TSC_W_NOW ? tsc_rdtsc() :
				__tsc_rdtsc_ordered(__tsc_ld(f->s[0].rdtscp)),
				__tsc_ld(f->s[0].mult), 32) +
		      __tsc_ld(f->s[0].offset);
	}
	/* The RDTSC (a volatile asm) stays before the loads below. */
	__asm__ __volatile__("" ::: "memory");
	slow = __tsc_ld(w->slow_from);
	s = __tsc_ld(g->s);
	b = __tsc_ld(g->b);
	len = __tsc_ld(g->len);
	rate = __tsc_ld(g->rate);
	slew = __tsc_ld(g->slew);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	d = *ns - s;
	if (__builtin_expect(__tsc_ld(w->seq) != seq ||
			     (what != __TSC_W_MAP && __tsc_ld(f->seq) != lseq) ||
			     *ns >= slow, 0))
		return false;
	ds = d < len ? d : len;
	/* The writer keeps a segment's slope, 1 + (rate or rate + slew) /
	 * 2^32, within [0, 2) (wall.c): below 2^31 ns the sum lies in
	 * [-2^63, 2^63), so 64 bits that wrap give it exactly. */
	if (__builtin_expect(d < (1ull << 31), 1)) {
		*out = b + d + (uint64_t)((int64_t)(d * (uint64_t)rate + ds * (uint64_t)slew) >> 32);
		return true;
	}
	if (*ns < s)
		return false;
	*out = b + d + (uint64_t)(int64_t)(((__tsc_s128)(int64_t)d * rate +
					    (__tsc_s128)(int64_t)ds * slew) >> 32);
	return true;
}

/* Map a library timestamp to clock clk (CLOCK_MONOTONIC_RAW, _MONOTONIC,
 * _REALTIME, _BOOTTIME, _TAI) with the current mapping.  -EINVAL for
 * another clock.  Never waits for the writer (retries only if it
 * published meanwhile), writes no shared memory, async-signal-safe. */
TSCINLINE int tsc_ns_to_clock(struct tsc *t, uint64_t ns, clockid_t clk, uint64_t *out)
{
	int i = __tsc_wall_index(clk);

	if (__builtin_expect(t && out && i >= 0, 1) && __tsc_wall_fast(t, i, __TSC_W_MAP, &ns, out))
		return 0;
	return __tsc_wall(t, clk, false, ns, out);
}

__TSC_FAST int __tsc_clock_gettime(struct tsc *t, clockid_t clk, uint64_t *out, int what)
{
	int i = __tsc_wall_index(clk);
	uint64_t ns = 0;	/* read in __tsc_wall_fast() (a compiler may not see it) */

	if (__builtin_expect(t && out && i >= 0, 1) && __tsc_wall_fast(t, i, what, &ns, out))
		return 0;
	return __tsc_wall(t, clk, true, 0, out);
}

/* tsc_now_ns() mapped to clk, at its cost: within one thread never back
 * for MONOTONIC, BOOTTIME, MONOTONIC_RAW; REALTIME and TAI step only
 * with the kernel's (see tsc_clock_gettime(3)).  Like tsc_now_ns() it
 * promises nothing between threads: tsc_clock_gettime_ordered() does.
 * Never waits for the writer, writes no shared memory but while the
 * writer changes the mapping (a mark, as tsc_now_ns() has),
 * async-signal-safe. */
TSCINLINE int tsc_clock_gettime(struct tsc *t, clockid_t clk, uint64_t *out)
{
	return __tsc_clock_gettime(t, clk, out, __TSC_W_NOW);
}

/* tsc_now_ns_ordered() mapped to clk: as tsc_clock_gettime(), and also
 * never below a read another thread finished before this one started,
 * as the kernel's clock_gettime().  Since 0.7 (LIBTSC_0.7). */
TSCINLINE int tsc_clock_gettime_ordered(struct tsc *t, clockid_t clk, uint64_t *out)
{
	return __tsc_clock_gettime(t, clk, out, __TSC_W_NOW_ORDERED);
}

#ifdef __cplusplus
}
#endif
#endif /* TSC_H */
