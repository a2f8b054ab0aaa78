// SPDX-License-Identifier: GPL-2.0
/*
 * libtsc-check [-q] MODE [ARG...]: libtsc in the guest, on the patched
 * kernel. The expectation comes from the scenario (MODE and ARGs), never
 * from the state under test. Prints "ok: ..." and "FAIL: ..." lines (-q:
 * only the failures) and "# figure: ..." measurements; writes facts,
 * "# fact libtsc/NAME=VALUE", to the file $LIBTSC_FACTS (the guest init's
 * results channel) for scripts/judge to check from outside. Exit 0 pass,
 * 1 fail, 2 usage.
 *
 *   usable		the TSC is used with the kernel's own factors (vDSO,
 *			not a calibration) for the right reasons, and libtsc
 *			ns agree with CLOCK_MONOTONIC_RAW within 1 ppm over 2 s;
 *			figures: tsc_open()'s time and its system calls
 *			(counted with ptrace)
 *   fallback WHY...	the TSC is not used, ns come from CLOCK_MONOTONIC_RAW,
 *			and every "no" reason is one of WHY: stable0
 *			(tsc_stable=0), unavailable (tsc not in
 *			available_clocksource), cs (clocksource not tsc), enodev
 *			(__vdso_tsc_raw() -ENODEV), invariant (no invariant
 *			TSC flag and no kernel to vouch for the TSC); each
 *			WHY is given
 *   switch		reader threads take timestamps while the clocksource
 *			goes to hpet, then back to tsc
 *   unstable [KO]	reader threads take timestamps while the test module
 *			(KO, default /tests/kmod/tsc_unstable.ko) marks the
 *			TSC unstable from a timer
 *   soak STOPFILE	reader threads, half of them ordered, until STOPFILE
 *			is not empty; none may see time go back (make soak)
 *   ordered rdtscp|no-rdtscp
 *			ordered reads under a SIGILL handler that fails the
 *			test: on a CPU without RDTSCP libtsc must use
 *			LFENCE;RDTSC
 *
 * Run time modes: the library's watcher re-reads the kernel's state on
 * every poll() wake-up of a sysfs file, and also once a second on a
 * timer armed just after tsc_open() (by the watcher's first pass, or the
 * first report if it comes first). Each change is made 0.1 s after a tick, and
 * the flip must be seen before the next tick: then it came from the
 * kernel's notification. Each reader checks that its timestamps never go back.
 * The test must be the one to change the kernel's mind: boot these with
 * tsc=nowatchdog. Under QEMU TCG, vCPUs reading the TSC at the same time
 * make the guest's TSC run fast against the HPET (2596.1 MHz idle, up to
 * 2597.4 with two spinning readers), and the clocksource watchdog then
 * marks it unstable on its own within seconds.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <tsc.h>

#include "sysval.h"

#define SYS "/sys/devices/system/"
#define P_TSC0 SYS "tsc/tsc0/"
#define P_STABLE P_TSC0 "tsc_stable"
#define P_CS SYS "clocksource/clocksource0/current_clocksource"
#define MS 1000000ull
#define NREADERS 2

static int failed, quiet;
static FILE *facts;

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	if (cond && quiet)
		return;
	printf("%s: ", cond ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failed = 1;
}

static void fact(const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!facts)
		return;
	fprintf(facts, "# fact libtsc/%s=", name);
	va_start(ap, fmt);
	vfprintf(facts, fmt, ap);
	va_end(ap);
	fprintf(facts, "\n");
	fflush(facts);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { t / 1000000000ull, t % 1000000000ull };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}


static uint64_t read_u64(const char *path)
{
	char b[64];

	return read_file(path, b, sizeof(b)) ? UINT64_MAX : strtoull(b, NULL, 10);
}

static struct tsc_reason reasons[64];
static int nreasons;

static void get_reasons(struct tsc *h)
{
	nreasons = tsc_reasons(h, reasons, 64);
	if (nreasons > 64)
		nreasons = 64;
}

static const char *kind_word(enum tsc_reason_kind k)
{
	return k == TSC_REASON_OK ? "ok" : k == TSC_REASON_BLOCK ? "no" : "note";
}

static void print_reasons(void)
{
	int i;

	printf("  reasons:\n");
	for (i = 0; i < nreasons; i++)
		printf("    %-4s  %s\n", kind_word(reasons[i].kind), reasons[i].text);
}

/* A reason of kind k containing s? */
static bool has_reason(enum tsc_reason_kind k, const char *s)
{
	int i;

	for (i = 0; i < nreasons; i++)
		if (reasons[i].kind == k && strstr(reasons[i].text, s))
			return true;
	return false;
}

static int count_blocks(void)
{
	int i, n = 0;

	for (i = 0; i < nreasons; i++)
		n += reasons[i].kind == TSC_REASON_BLOCK;
	return n;
}

static struct tsc *open_handle(bool watcher)
{
	TSC_OPTS(o, .no_watcher = !watcher);
	struct tsc *h = tsc_open(&o);

	if (!h) {
		printf("FAIL: tsc_open: %s\n", strerror(errno));
		exit(1);
	}
	return h;
}

/* Is the path an openat() in the traced child names this one? */
static bool opens(pid_t pid, const struct __ptrace_syscall_info *info, const char *want)
{
	char path[64] = "", mem[32];
	ssize_t n;
	int fd;

	if (info->entry.nr != SYS_openat)
		return false;
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, path, sizeof(path) - 1, (off_t)info->entry.args[1]);
	close(fd);
	return n > 0 && !strncmp(path, want, strlen(want) + 1);
}

/*
 * The system calls a first tsc_open() makes from the calling thread:
 * a child counts them under ptrace between two getppid() marks (the
 * watcher thread it creates is not traced). -1 when the count failed.
 * *files: how many of them opened a file; *cpuinfo: /proc/cpuinfo.
 */
static long count_open_syscalls(long *files, long *cpuinfo)
{
	struct __ptrace_syscall_info info;
	long calls = 0, marks = 0;
	int status, sig = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(2);
		raise(SIGSTOP);
		syscall(SYS_getppid);
		tsc_open(NULL);
		syscall(SYS_getppid);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)))
		goto fail;
	while (marks < 2) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) ||
		    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
			goto fail;
		sig = 0;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(status);	/* a signal: pass it on */
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0)
			goto fail;
		if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
			continue;
		if (info.entry.nr == SYS_getppid)
			marks++;
		else if (marks == 1)
			calls++;
		if (marks == 1 && info.entry.nr == SYS_openat)
			(*files)++;
		if (marks == 1 && opens(pid, &info, "/proc/cpuinfo"))
			(*cpuinfo)++;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return calls;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void describe(const struct tsc_info *i)
{
	printf("libtsc: TSC %s; ns = ticks * %llu >> %u (from %s); ordered reads %s; "
	       "clocksource %s\n", i->usable ? "in use" : "not used",
	       (unsigned long long)i->mult, i->shift, tsc_src_name(i->src),
	       i->rdtscp ? "RDTSCP" : "LFENCE;RDTSC", i->clocksource);
}

static bool cpu_has_rdtscp(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27));
}

/* --- usable ----------------------------------------------------------- */

/* The library's reading against CLOCK_MONOTONIC_RAW, bracketed by two
 * raw reads: the narrowest bracket of many. */
struct pair {
	uint64_t lib, mid, width;
};

static struct pair bracket(struct tsc *h)
{
	struct pair best = { 0, 0, UINT64_MAX };
	int k;

	for (k = 0; k < 2000; k++) {
		uint64_t r0 = clock_ns(CLOCK_MONOTONIC_RAW);
		uint64_t l = tsc_now_ns_ordered(h);
		uint64_t r1 = clock_ns(CLOCK_MONOTONIC_RAW);

		if (r1 >= r0 && r1 - r0 < best.width)
			best = (struct pair){ l, r0 + (r1 - r0) / 2, r1 - r0 };
	}
	return best;
}

static int mode_usable(void)
{
	long files = 0, cpuinfo = 0, calls = count_open_syscalls(&files, &cpuinfo);
	uint64_t t0 = mono();
	struct tsc *h = open_handle(true);
	uint64_t open_ns = mono() - t0, again_ns;
	struct tsc_info i;
	struct tsc *h2;
	uint64_t mult, shift, khz, want;
	struct pair a, b;
	int64_t drift;
	double ppm, unc;

	tsc_get_info(h, &i, sizeof(i));
	get_reasons(h);
	describe(&i);
	check(i.usable && tsc_in_use(h), "the TSC is in use");
	check(i.kernel_series && i.vdso_tsc, "the tsckit sysfs files and vDSO calls are found");
	check(i.src == TSC_SRC_VDSO, "factors from the kernel's vDSO (source %s)",
	      tsc_src_name(i.src));
	/* The vDSO's factor (ns per 2^32 ticks) is within 1 ns: 1 ppb. */
	check(i.calib_ns == 0 && !i.calibrated && i.err_ppb <= 1,
	      "no calibration ran (%llu ns), the bound is the vDSO factor's rounding (%llu ppb)",
	      (unsigned long long)i.calib_ns, (unsigned long long)i.err_ppb);
	/* The first open in a process also pays for QEMU translating the
	 * library's code: a second one shows the library's own cost. */
	t0 = mono();
	h2 = tsc_open(NULL);
	again_ns = mono() - t0;
	tsc_close(h2);
	printf("# figure: tsc_open() took %llu us (again: %llu us) and made %ld system calls\n",
	       (unsigned long long)open_ns / 1000, (unsigned long long)again_ns / 1000, calls);
	check(calls > 0 && calls <= 40, "tsc_open() made %ld system calls (at most 40 where "
	      "the kernel gives the factors)", calls);
	check(cpuinfo == 0, "tsc_open() read /proc/cpuinfo %ld times (CPUID and the kernel "
	      "answer)", cpuinfo);
	/* The vDSO decides; the files are the watcher's to read. */
	check(files == 0, "tsc_open() opened %ld files (none where the vDSO hands out the TSC)",
	      files);
	mult = read_u64(P_TSC0 "tsc_mult");
	shift = read_u64(P_TSC0 "tsc_shift");
	khz = read_u64(P_TSC0 "tsc_khz");
	want = shift <= 32 ? mult << (32 - shift) : 0;
	check(i.shift == 32 && i.mult == want,
	      "factor is tsc_mult << (32 - tsc_shift): %llu >> %u, sysfs %llu >> %llu",
	      (unsigned long long)i.mult, i.shift, (unsigned long long)mult,
	      (unsigned long long)shift);
	check(i.khz + i.khz / 10000 >= khz && i.khz <= khz + khz / 10000,
	      "frequency %llu kHz agrees with tsc_khz %llu", (unsigned long long)i.khz,
	      (unsigned long long)khz);
	check(i.tsc_stable == 1 && i.vdso_clock == 1 && i.vdso_raw == 0 &&
	      !strcmp(i.clocksource, "tsc"),
	      "info: tsc_stable %d, clock_gettime by vDSO %d, __vdso_tsc_raw %d, clocksource %s",
	      i.tsc_stable, i.vdso_clock, i.vdso_raw, i.clocksource);
	check(count_blocks() == 0, "no reason says no (%d do)", count_blocks());
	check(has_reason(TSC_REASON_OK, "tsc0/tsc_stable=1"), "reason: tsc_stable=1");
	check(has_reason(TSC_REASON_OK, "current_clocksource is tsc"), "reason: clocksource is tsc");
	check(has_reason(TSC_REASON_OK, "__vdso_tsc_raw succeeds"), "reason: __vdso_tsc_raw succeeds");
	check(has_reason(TSC_REASON_OK, "conversion factors from vdso"), "reason: factors from vdso");
	check(i.rdtscp == cpu_has_rdtscp(), "ordered reads %s, CPUID says RDTSCP %d",
	      i.rdtscp ? "RDTSCP" : "LFENCE;RDTSC", cpu_has_rdtscp());
	if (failed)
		print_reasons();

	a = bracket(h);
	sleep_until(mono() + 2000 * MS);
	b = bracket(h);
	drift = (int64_t)(b.lib - a.lib) - (int64_t)(b.mid - a.mid);
	ppm = drift * 1e6 / (double)(b.mid - a.mid);
	unc = (a.width + b.width) / 2 * 1e6 / (double)(b.mid - a.mid);
	printf("# figure: libtsc ns vs CLOCK_MONOTONIC_RAW over %.3f s: %+.4f ppm "
	       "(%+lld ns; reads bracketed to %llu and %llu ns, +-%.4f ppm)\n",
	       (b.mid - a.mid) / 1e9, ppm, (long long)drift, (unsigned long long)a.width,
	       (unsigned long long)b.width, unc);
	check(b.mid - a.mid >= 1000 * MS, "measured over at least 1 s");
	check(ppm >= -1 && ppm <= 1, "ns agree with CLOCK_MONOTONIC_RAW within 1 ppm (%+.4f)", ppm);

	fact("usable", "%d", i.usable);
	fact("open_syscalls", "%ld", calls);
	fact("open_us", "%llu", (unsigned long long)open_ns / 1000);
	fact("open_again_us", "%llu", (unsigned long long)again_ns / 1000);
	fact("source", "%s", tsc_src_name(i.src));
	fact("ordered_read", "%s", i.rdtscp ? "rdtscp" : "lfence-rdtsc");
	fact("block_count", "%d", count_blocks());
	fact("ppb_abs", "%lld", (long long)((ppm < 0 ? -ppm : ppm) * 1000));
	tsc_close(h);
	return failed;
}

/* --- fallback --------------------------------------------------------- */

static const struct {
	const char *word, *text;
} whys[] = {
	{ "stable0", "tsc0/tsc_stable=0" },
	{ "unavailable", "tsc is not in available_clocksource" },
	{ "cs", "current_clocksource is " },
	{ "enodev", "__vdso_tsc_raw returned -ENODEV" },
	{ "invariant", "no invariant TSC" },
};

static int mode_fallback(int argc, char **argv)
{
	struct tsc *h = open_handle(true);
	struct tsc_info i;
	uint64_t r0, l, r1;
	char seen[64] = "";
	size_t w;
	int k, n;

	tsc_get_info(h, &i, sizeof(i));
	get_reasons(h);
	describe(&i);
	check(!i.usable && !tsc_in_use(h), "the TSC is not used");
	for (k = 0; k < argc; k++) {
		for (w = 0; w < sizeof(whys) / sizeof(whys[0]); w++)
			if (!strcmp(argv[k], whys[w].word))
				break;
		if (w == sizeof(whys) / sizeof(whys[0])) {
			fprintf(stderr, "libtsc-check: unknown reason word '%s'\n", argv[k]);
			exit(2);
		}
		check(has_reason(TSC_REASON_BLOCK, whys[w].text), "reason no: '%s...'", whys[w].text);
	}
	/* Every "no" must be one the scenario expects: not for a wrong reason. */
	for (k = 0; k < nreasons; k++) {
		bool want = false;
		int a;

		if (reasons[k].kind != TSC_REASON_BLOCK)
			continue;
		for (a = 0; a < argc; a++)
			for (w = 0; w < sizeof(whys) / sizeof(whys[0]); w++)
				if (!strcmp(argv[a], whys[w].word) &&
				    strstr(reasons[k].text, whys[w].text)) {
					want = true;
					snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
						 "%s%s", *seen ? "," : "", whys[w].word);
				}
		check(want, "expected reason: no  %s", reasons[k].text);
	}
	check(i.vdso_raw == -ENODEV, "__vdso_tsc_raw returned -ENODEV (%d)", i.vdso_raw);
	check(i.vdso_clock == 0, "clock_gettime() is a system call (current_clocksource_vdso 0)");
	check(i.src == TSC_SRC_VDSO || i.src == TSC_SRC_SYSFS_MULT,
	      "factors kept from the kernel (source %s)", tsc_src_name(i.src));
	check(i.calib_ns == 0, "no calibration ran");
	check(i.fallback_clock == CLOCK_MONOTONIC_RAW, "falls back to CLOCK_MONOTONIC_RAW");
	r0 = clock_ns(CLOCK_MONOTONIC_RAW);
	l = tsc_now_ns(h);
	r1 = clock_ns(CLOCK_MONOTONIC_RAW);
	check(r0 <= l && l <= r1, "tsc_now_ns() reads CLOCK_MONOTONIC_RAW (%llu <= %llu <= %llu)",
	      (unsigned long long)r0, (unsigned long long)l, (unsigned long long)r1);
	for (k = 0, n = 0; k < 1000; k++) {
		r0 = tsc_now_ns(h);
		n += tsc_now_ns(h) < r0;
	}
	check(n == 0, "fallback reads do not go back");
	if (failed)
		print_reasons();
	fact("usable", "%d", i.usable);
	fact("blocks", "%s", seen);
	fact("vdso_raw", "%d", i.vdso_raw);
	fact("source", "%s", tsc_src_name(i.src));
	tsc_close(h);
	return failed;
}

/* --- run time: switch, unstable --------------------------------------- */

static struct tsc *handle;
static uint64_t open0;		/* just before tsc_open() */
static int stop;
static uint64_t flip_at[2];	/* when mode 0 / mode 1 was first seen */

struct reader {
	pthread_t th;
	bool ordered;		/* tsc_now_ns_ordered(), not tsc_now_ns() */
	uint64_t reads, backward, worst_back;
};

static uint64_t read_ns(const struct reader *r)
{
	return r->ordered ? tsc_now_ns_ordered(handle) : tsc_now_ns(handle);
}

static void saw_mode(bool m)
{
	uint64_t at = mono(), zero = 0;

	__atomic_compare_exchange_n(&flip_at[m], &zero, at, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
}

/* Looks at the mode every 100 us: sees a flip even while every reader
 * waits for a CPU. */
static void *observer(void *arg)
{
	bool mode = tsc_in_use(handle), m;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		m = tsc_in_use(handle);
		if (m != mode)
			saw_mode(m);
		mode = m;
		sleep_until(mono() + MS / 10);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct reader *r = arg;
	uint64_t prev, now;
	bool mode, m;

	prev = read_ns(r);
	mode = tsc_in_use(handle);

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		now = read_ns(r);
		m = tsc_in_use(handle);
		if (now < prev) {
			r->backward++;
			if (prev - now > r->worst_back)
				r->worst_back = prev - now;
		}
		if (m != mode)
			saw_mode(m);
		mode = m;
		prev = now;
		r->reads++;
	}
	return NULL;
}

/* Stop the readers and add up their reads and backward steps. */
static void stop_readers(struct reader *r, uint64_t *reads, uint64_t *back, uint64_t *worst)
{
	int k;

	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	for (k = 0; k < NREADERS; k++) {
		pthread_join(r[k].th, NULL);
		*reads += r[k].reads;
		*back += r[k].backward;
		if (r[k].worst_back > *worst)
			*worst = r[k].worst_back;
	}
}

/* The kernel's notification: poll() on one sysfs file, the time of each
 * wake-up. */
static const char *kpath;
static uint64_t kwoke[8];
static int nkwoke;

static void *kernel_poller(void *arg)
{
	int fd = open(kpath, O_RDONLY | O_CLOEXEC);
	char b[64];

	(void)arg;
	if (fd < 0)
		return NULL;
	while (pread(fd, b, sizeof(b), 0) >= 0 && nkwoke < 8) {
		struct pollfd p = { .fd = fd, .events = POLLPRI | POLLERR };
		int n = poll(&p, 1, 100);

		if (__atomic_load_n(&stop, __ATOMIC_RELAXED))
			break;
		if (n > 0) {
			kwoke[nkwoke] = mono();
			__atomic_store_n(&nkwoke, nkwoke + 1, __ATOMIC_SEQ_CST);
		}
	}
	close(fd);
	return NULL;
}

static uint64_t first_kwake_after(uint64_t t)
{
	int k;

	for (k = 0; k < __atomic_load_n(&nkwoke, __ATOMIC_SEQ_CST); k++)
		if (kwoke[k] >= t)
			return kwoke[k];
	return 0;
}

static int write_cs(const char *cs)
{
	int fd = open(P_CS, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || write(fd, cs, strlen(cs)) != (ssize_t)strlen(cs))
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

static const char *module = "/tests/kmod/tsc_unstable.ko";

static int load_module(void)
{
	int fd = open(module, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || syscall(SYS_finit_module, fd, "context=timer", 0))
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* One change at `when`, between two ticks of the library's timer; wait
 * for the library to flip to mode `to` (before `tick`, the next tick);
 * report as TAG. */
static void change(const char *what, int (*act)(void), uint64_t when, uint64_t tick,
		   bool to, const char *tag)
{
	uint64_t t0, t1, flip, kw;
	struct tsc_info i;
	char name[64];
	int err;

	sleep_until(when);
	t0 = mono();
	err = act();
	t1 = mono();
	check(!err, "%s: %s", what, err ? strerror(-err) : "done");
	flip = __atomic_load_n(&flip_at[to], __ATOMIC_SEQ_CST);
	if (flip && flip < t0) {
		check(false, "libtsc flipped %.1f ms before the change: the kernel changed "
		      "its mind on its own", (t0 - flip) / 1e6);
		return;
	}
	while (mono() < t0 + 3000 * MS && !(flip = __atomic_load_n(&flip_at[to], __ATOMIC_SEQ_CST)))
		sleep_until(mono() + MS / 10);
	/* Our own poller may get a CPU only after the readers saw the flip. */
	while (!(kw = first_kwake_after(t0)) && mono() < t0 + 3000 * MS)
		sleep_until(mono() + MS);
	printf("%s at +%.3f s after tsc_open(), took %.1f ms\n", what, (t0 - open0) / 1e9,
	       (t1 - t0) / 1e6);
	if (kw)
		printf("  +%7.1f ms  kernel: %s woke poll()\n", (kw - t0) / 1e6, kpath);
	if (flip)
		printf("  +%7.1f ms  libtsc: %s\n", (flip - t0) / 1e6,
		       to ? "back on the TSC" : "falls back to CLOCK_MONOTONIC_RAW");
	tsc_get_info(handle, &i, sizeof(i));
	get_reasons(handle);
	printf("  step %+lld ns: library scale minus the new source at the switch\n",
	       (long long)i.last_step_ns);
	printf("# figure: %s: flip %.1f ms after the change (kernel notification %.1f ms), "
	       "step %+lld ns\n", tag, flip ? (flip - t0) / 1e6 : -1.0,
	       kw ? (kw - t0) / 1e6 : -1.0, (long long)i.last_step_ns);
	check(flip, "libtsc flipped to %s within 3 s", to ? "the TSC" : "the fallback");
	check(!flip || flip < tick,
	      "flipped before the library's next 1 s timer tick (%.0f ms after the change): "
	      "on the kernel's notification", (tick - t0) / 1e6);
	check(tsc_in_use(handle) == to && i.usable == to, "info agrees: usable %d", i.usable);
	/* The step is how far the watcher's read of the new source came after
	 * its last read of the old one: tens to hundreds of us under TCG,
	 * 13 ms once on a KCSAN kernel with the host busy, as the host
	 * preempts the vCPU in between. A figure, then; the check only
	 * catches a wrong scale or offset, which would be off by far more. */
	check(llabs(i.last_step_ns) <= 1000 * MS, "step |%lld| ns <= 1 s",
	      (long long)i.last_step_ns);
	snprintf(name, sizeof(name), "%s_flip_us", tag);
	fact(name, "%llu", flip ? (unsigned long long)(flip - t0) / 1000 : 999999999ull);
	snprintf(name, sizeof(name), "%s_step_ns_abs", tag);
	fact(name, "%lld", llabs(i.last_step_ns));
}

static int act_hpet(void) { return write_cs("hpet"); }
static int act_tsc(void) { return write_cs("tsc"); }

static int mode_runtime(bool unstable)
{
	struct reader r[NREADERS] = { 0 };
	pthread_t kp, ob;
	uint64_t open1, reads = 0, back = 0, worst = 0;
	struct tsc_info i;
	int k;

	kpath = unstable ? P_STABLE : P_CS;
	open0 = mono();
	handle = open_handle(true);
	tsc_get_info(handle, &i, sizeof(i));	/* armed the 1 s timer by now */
	open1 = mono();
	describe(&i);
	if (!i.usable) {
		get_reasons(handle);
		print_reasons();
	}
	check(i.usable, "the TSC is in use before the change");
	check(open1 - open0 < 400 * MS, "tsc_open() and a report took %.1f ms (< 400: a change 0.1 s "
	      "after a timer tick is 0.5 s or more before the next)", (open1 - open0) / 1e6);
	if (failed)
		return 1;
	pthread_create(&kp, NULL, kernel_poller, NULL);
	pthread_create(&ob, NULL, observer, NULL);
	for (k = 0; k < NREADERS; k++)
		pthread_create(&r[k].th, NULL, reader, &r[k]);
	printf("%d reader threads take timestamps with tsc_now_ns()\n", NREADERS);

	/* The timer ticks n s after it was armed, between open0 and open1:
	 * a change at open1 + n s + 0.1 s comes after tick n, and tick n + 1
	 * is at open0 + (n + 1) s or later. */
	if (unstable) {
		change("insmod tsc_unstable.ko context=timer", load_module,
		       open1 + 1100 * MS, open0 + 2000 * MS, false, "unstable");
		check(has_reason(TSC_REASON_BLOCK, "tsc0/tsc_stable=0"),
		      "reason no: tsc_stable=0");
	} else {
		change("clocksource -> hpet", act_hpet, open1 + 1100 * MS, open0 + 2000 * MS,
		       false, "hpet");
		check(has_reason(TSC_REASON_BLOCK, "current_clocksource is hpet"),
		      "reason no: clocksource is hpet");
		change("clocksource -> tsc", act_tsc, open1 + 3100 * MS, open0 + 4000 * MS,
		       true, "back");
		check(count_blocks() == 0, "no reason says no once back on tsc");
	}
	sleep_until(mono() + 500 * MS);
	stop_readers(r, &reads, &back, &worst);
	pthread_join(kp, NULL);
	pthread_join(ob, NULL);
	if (failed)
		print_reasons();
	tsc_get_info(handle, &i, sizeof(i));
	printf("%d readers: %llu reads, %llu went back\n", NREADERS, (unsigned long long)reads,
	       (unsigned long long)back);
	check(back == 0, "no reader saw time go back (worst %llu ns)", (unsigned long long)worst);
	check(reads >= 1000, "the readers read (%llu)", (unsigned long long)reads);
	check(i.switches == (unstable ? 1u : 2u), "switches %llu", (unsigned long long)i.switches);
	fact("backward", "%llu", (unsigned long long)back);
	fact("usable_end", "%d", i.usable);
	fact("switches", "%llu", (unsigned long long)i.switches);
	tsc_close(handle);
	return failed;
}

/* --- soak ------------------------------------------------------------- */

/* Readers of both kinds until STOPFILE exists, whatever the kernel does
 * meanwhile (make soak: policy, clocksource and CPU changes, then the TSC
 * marked unstable): none may see time go back. */
static int mode_soak(const char *stopfile)
{
	struct reader r[NREADERS] = { 0 };
	uint64_t reads = 0, back = 0, worst = 0;
	struct tsc_info i;
	int k;

	handle = open_handle(true);
	for (k = 0; k < NREADERS; k++) {
		r[k].ordered = k & 1;
		pthread_create(&r[k].th, NULL, reader, &r[k]);
	}
	while (!stop_requested(stopfile))
		sleep_until(mono() + 100 * MS);
	stop_readers(r, &reads, &back, &worst);
	tsc_get_info(handle, &i, sizeof(i));
	printf("# figure: soak: %d readers, %llu reads, %llu went back, %llu switches\n",
	       NREADERS, (unsigned long long)reads, (unsigned long long)back,
	       (unsigned long long)i.switches);
	for (k = 0; k < NREADERS; k++)
		printf("# figure: soak: reader %d (%s): %llu reads, %llu went back, worst %llu ns\n",
		       k, r[k].ordered ? "ordered" : "unordered",
		       (unsigned long long)r[k].reads, (unsigned long long)r[k].backward,
		       (unsigned long long)r[k].worst_back);
	check(back == 0, "no reader saw time go back (worst %llu ns)", (unsigned long long)worst);
	check(reads >= 1000, "the readers read (%llu)", (unsigned long long)reads);
	fact("soak_reads", "%llu", (unsigned long long)reads);
	fact("soak_backward", "%llu", (unsigned long long)back);
	fact("soak_switches", "%llu", (unsigned long long)i.switches);
	fact("soak_usable_end", "%d", i.usable);
	tsc_close(handle);
	return failed;
}

/* --- ordered ---------------------------------------------------------- */

static sigjmp_buf probe_env;
static volatile sig_atomic_t probing;

static void on_sigill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	const unsigned char *ip = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	char msg[160];
	int n;

	(void)sig, (void)si;
	if (probing)
		siglongjmp(probe_env, 1);
	n = snprintf(msg, sizeof(msg), "FAIL: SIGILL at %p (%02x %02x %02x%s): "
		     "an instruction this CPU lacks ran\n", (void *)ip, ip[0], ip[1], ip[2],
		     ip[0] == 0x0f && ip[1] == 0x01 && ip[2] == 0xf9 ? ", RDTSCP" : "");
	if (write(1, msg, n) < 0)
		_exit(1);
	_exit(1);
}

static void *ordered_reader(void *arg)
{
	uint64_t prev, now, *back = arg;
	int k;

	prev = tsc_now_ns_ordered(handle);
	for (k = 0; k < 200000; k++) {
		now = tsc_now_ns_ordered(handle);
		*back += now < prev;
		prev = now;
		(void)tsc_rdtsc_ordered(handle);
	}
	return NULL;
}

static int mode_ordered(const char *want)
{
	struct sigaction sa = { .sa_sigaction = on_sigill, .sa_flags = SA_SIGINFO };
	bool want_rdtscp = !strcmp(want, "rdtscp"), has = cpu_has_rdtscp(), trapped;
	struct tsc_xcpu_result x;
	uint64_t back[NREADERS] = { 0 };
	pthread_t th[NREADERS];
	struct tsc_info i;
	int k;

	if (!want_rdtscp && strcmp(want, "no-rdtscp")) {
		fprintf(stderr, "libtsc-check: ordered rdtscp|no-rdtscp\n");
		exit(2);
	}
	sigaction(SIGILL, &sa, NULL);
	check(has == want_rdtscp, "CPUID 0x80000001 EDX[27] (RDTSCP): %d", has);
	/* The guard is real: RDTSCP itself, probed once. */
	probing = 1;
	if (!sigsetjmp(probe_env, 1)) {
		unsigned int lo, hi, aux;

		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		trapped = false;
	} else {
		trapped = true;
	}
	probing = 0;
	check(trapped == !has, "RDTSCP %s on this CPU: a stray one %s",
	      trapped ? "raises SIGILL" : "runs", trapped ? "fails this test" : "goes unnoticed");

	handle = open_handle(true);
	tsc_get_info(handle, &i, sizeof(i));
	get_reasons(handle);
	describe(&i);
	check(i.usable && tsc_in_use(handle), "the TSC is in use (reads run RDTSC)");
	check(i.rdtscp == want_rdtscp, "ordered reads: %s", i.rdtscp ? "RDTSCP" : "LFENCE;RDTSC");
	check(has_reason(TSC_REASON_NOTE, want_rdtscp ? "ordered reads: RDTSCP" :
			 "ordered reads: LFENCE;RDTSC (no RDTSCP on this CPU)"),
	      "reason note: ordered reads %s", want_rdtscp ? "RDTSCP" : "LFENCE;RDTSC");
	for (k = 0; k < NREADERS; k++)
		pthread_create(&th[k], NULL, ordered_reader, &back[k]);
	for (k = 0; k < NREADERS; k++)
		pthread_join(th[k], NULL);
	check(back[0] + back[1] == 0, "%d x 200000 ordered reads, none went back", NREADERS);
	memset(&x, 0, sizeof(x));
	k = tsc_xcpu_check(handle, 50, &x, sizeof(x));
	check(k == 0 && x.reads > 0, "cross-CPU check ran: %u CPUs, %llu reads, %llu backward", x.cpus,
	      (unsigned long long)x.reads, (unsigned long long)x.backward);
	check(tsc_ticks_to_ns(handle, tsc_rdtsc_ordered(handle)) <= tsc_now_ns_ordered(handle),
	      "tsc_rdtsc_ordered() ticks convert");
	if (failed)
		print_reasons();
	printf("no SIGILL: libtsc executed no RDTSCP\n");
	fact("ordered_read", "%s", i.rdtscp ? "rdtscp" : "lfence-rdtsc");
	fact("rdtscp_probe", "%s", trapped ? "sigill" : "runs");
	fact("usable", "%d", i.usable);
	tsc_close(handle);
	return failed;
}

static void usage(void)
{
	fprintf(stderr, "usage: libtsc-check [-q] usable | fallback WHY... | switch | "
		"unstable [KO] | ordered rdtscp|no-rdtscp | soak STOPFILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *f = getenv("LIBTSC_FACTS");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "-q")) {
		quiet = 1;
		argc--, argv++;
	}
	if (argc < 2)
		usage();
	if (f && *f && !(facts = fopen(f, "w")))
		printf("# cannot write facts to %s: %s\n", f, strerror(errno));
	if (!strcmp(argv[1], "usable"))
		return mode_usable();
	if (!strcmp(argv[1], "fallback") && argc > 2)
		return mode_fallback(argc - 2, argv + 2);
	if (!strcmp(argv[1], "switch"))
		return mode_runtime(false);
	if (!strcmp(argv[1], "unstable")) {
		if (argc > 2)
			module = argv[2];
		return mode_runtime(true);
	}
	if (!strcmp(argv[1], "ordered") && argc == 3)
		return mode_ordered(argv[2]);
	if (!strcmp(argv[1], "soak") && argc == 3)
		return mode_soak(argv[2]);
	usage();
	return 2;
}
