// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Tiny test helpers: exit 0 pass, 1 fail, 77 skip; "# " lines are
 * diagnostics the runner keeps; "# figure: " lines are measurements. */
#ifndef T_H
#define T_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tsc.h>

static int t_failed;

#define FAIL(...) do {							\
	printf("# FAIL %s:%d: ", __FILE__, __LINE__);			\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	t_failed = 1;							\
} while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
#define SKIP(...) do { printf("# SKIP: " __VA_ARGS__); printf("\n"); exit(77); } while (0)
#define DONE() return t_failed ? 1 : 0

/*
 * Built for the guest (tests/lib/Makefile's guest target: -DT_GUEST), on
 * tsckit's kernel, which keeps time with a TSC it trusts: a test takes
 * the live path or fails.  t_child_in_root() then runs fn on the live
 * kernel (root ""), t_kernel_tsc() changes the live kernel's mind (the
 * clocksource), t_open_tsc() never makes up a sysroot, and t_fact()
 * sends facts to the guest's results channel for scripts/judge.  A
 * SKIP still exits 77, which the guest's init counts as a failure.
 */
/* The first line of a file, with its newline; "" if it cannot be read. */
static inline char *t_first_line(const char *path, char *b, int cap)
{
	FILE *f = fopen(path, "r");

	b[0] = 0;
	if (f) {
		if (!fgets(b, cap, f))
			b[0] = 0;
		fclose(f);
	}
	return b;
}

/* Booted by tsckit's guest: its init passes tsckit_tests= to the kernel. */
static inline bool t_in_guest(void)
{
	char b[4096];

	return strstr(t_first_line("/proc/cmdline", b, sizeof(b)), "tsckit_tests=");
}

#ifdef T_GUEST
#define T_LIVE 1
/* These switch the clocksource of the kernel they run on: only in the
 * guest, whose init passes tsckit_tests= on the kernel command line;
 * never on the machine's own kernel. */
__attribute__((constructor)) static void t_guest_only(void)
{
	if (!t_in_guest()) {
		printf("# FAIL: built for tsckit's guest (-DT_GUEST), and this is not it "
		       "(no tsckit_tests= in /proc/cmdline): not run\n");
		exit(1);
	}
}
#else
#define T_LIVE 0
#endif

/* In main(): open T with these options, or fail the test and end it.
 * T_OPEN(t, .no_watcher = true); */
#define T_OPEN(T, ...) do {						\
	TSC_OPTS(t_opts, __VA_ARGS__);					\
	(T) = tsc_open(&t_opts);					\
	CHECK((T), "open");						\
	if (!(T))							\
		DONE();							\
} while (0)

static inline uint64_t t_clock(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Library ns (ordered) and CLOCK_MONOTONIC_RAW at one instant: the
 * narrowest of 20 brackets. */
static inline void t_lib_raw(struct tsc *t, uint64_t *l, uint64_t *r)
{
	uint64_t best = UINT64_MAX, a, b, c;
	int i;

	for (i = 0; i < 20; i++) {
		a = tsc_now_ns_ordered(t);
		b = t_clock(CLOCK_MONOTONIC_RAW);
		c = tsc_now_ns_ordered(t);
		if (c - a < best) {
			best = c - a;
			*l = a + (c - a) / 2;
			*r = b;
		}
	}
}

static inline void t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* This process's threads, from /proc/self/status; -1 if unknown. */
static inline int t_threads(void)
{
	char l[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(l, sizeof(l), f))
		if (sscanf(l, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* How many of this process's threads are named tsc-watch; *tid (if not
 * NULL) gets the last one's tid, or -1. */
static inline int t_watchers(pid_t *tid)
{
	char p[300], comm[32];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	FILE *f;
	int n = 0;

	if (tid)
		*tid = -1;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(p, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, "tsc-watch\n")) {
			n++;
			if (tid)
				*tid = atoi(e->d_name);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* The watcher names itself at its first pass, a little after
 * tsc_open() returned: the count once at least want are named (or after
 * 2 s, less than the 5 s alarms of the fork tests). */
static inline int t_await_watchers(int want, pid_t *tid)
{
	int k, n = 0;

	for (k = 0; k < 200 && (n = t_watchers(tid)) < want; k++)
		usleep(10000);
	return n;
}

/* A child's exit status, 128 + the signal that killed it, or -1. */
static inline int t_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * t_wait() with a deadline, for a child that may hang: after secs
 * seconds the child's threads are described ("# " lines: state, kernel
 * wait channel, and their stacks when gdb is installed), the child is
 * killed, and 128 + SIGKILL is returned.  Any other status is printed
 * when it is not 0, so that a rare failure says what it was.
 */
static inline int t_wait_deadline(pid_t pid, int secs)
{
	char cmd[512];
	int st, k, r;

	for (k = 0; k < secs * 100; k++) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			r = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (r)
				printf("# child %d: %s %d\n", (int)pid,
				       WIFEXITED(st) ? "exit status" : "killed by signal",
				       WIFEXITED(st) ? r : r - 128);
			return r;
		}
		if (r < 0)
			return -1;
		t_sleep_ms(10);
	}
	printf("# child %d still running after %d s; its threads:\n", (int)pid, secs);
	fflush(stdout);
	snprintf(cmd, sizeof(cmd),
		 "for t in /proc/%d/task/*; do echo \"# $t $(cut -d' ' -f3 $t/stat) $(cat $t/wchan)\"; done;"
		 " command -v gdb >/dev/null && gdb -q -batch -p %d -ex 'thread apply all bt' 2>&1 | sed 's/^/# /'",
		 (int)pid, (int)pid);
	if (system(cmd) < 0)
		printf("# could not describe it\n");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 128 + SIGKILL;
}

/* Run fn(arg) in a child: fail, saying hang, if it has not ended after
 * s seconds (it is then described and killed), or if it failed. */
static inline void t_child(int (*fn)(const char *), const char *arg, int s,
			   const char *hang)
{
	pid_t pid;
	int r;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	r = t_wait_deadline(pid, s);
	if (r == 128 + SIGKILL)
		FAIL("%s", hang);
	else
		CHECK(r == 0, "child failed (status %d)", r);
}

/* "# fact lib/PROGRAM/NAME=VALUE" (lib/PREFIX PROGRAM/... with
 * $TSC_TEST_FACT_PREFIX, which tsckit/host-test sets: the host builds
 * of a test beside its -DT_GUEST build) to the guest init's results channel
 * ($TSCKIT_RESULTS), which scripts/judge checks against the scenario's
 * expect= lines; nothing where it is not set (the host).  Signals are
 * blocked meanwhile: a handler without SA_RESTART (t_open_alarmed()'s)
 * would make the tty's open() or write() fail with EINTR. */
static inline void t_fact(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void t_fact(const char *name, const char *fmt, ...)
{
	const char *path = getenv("TSCKIT_RESULTS");
	sigset_t all, old;
	va_list ap;
	FILE *f;

	if (!path || !*path)
		return;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "# fact lib/%s%s/%s=", getenv("TSC_TEST_FACT_PREFIX") ?: "",
			program_invocation_short_name, name);
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
		fprintf(f, "\n");
		if (fclose(f))
			f = NULL;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!f)
		printf("# cannot send fact %s to %s: %s\n", name, path, strerror(errno));
}

/* In the guest: t must be the live handle, using the TSC with the
 * kernel's own factors (the vDSO's); fail the test if not.  Sends
 * fact "source" (the factors' source, or "fallback") when it is the
 * first or differs from the last one sent. */
static inline void t_live_tsc(struct tsc *t)
{
	static const char *sent;
	const char *src;
	struct tsc_info i;

	if (!T_LIVE)
		return;
	if (!t || tsc_get_info(t, &i, sizeof(i)) < 0) {
		FAIL("no handle to check for the live TSC");
		t_fact("source", "none");
		return;
	}
	src = i.usable ? tsc_src_name(i.src) : "fallback";
	if (!sent || strcmp(sent, src))
		t_fact("source", "%s", src);
	sent = src;
	CHECK(i.usable && tsc_in_use(t) && i.src == TSC_SRC_VDSO,
	      "the guest's live TSC is not in use with the kernel's factors "
	      "(usable %d, source %s)", i.usable, tsc_src_name(i.src));
}

/* Does any reason's text contain s? */
static inline bool t_reason(struct tsc *t, const char *s)
{
	struct tsc_reason r[64];
	int n = tsc_reasons(t, r, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (strstr(r[i].text, s))
			return true;
	return false;
}

static inline void t_print_reasons(struct tsc *t)
{
	struct tsc_reason r[64];
	int n = tsc_reasons(t, r, 64), i;

	for (i = 0; i < n && i < 64; i++)
		printf("#   %d %s\n", r[i].kind, r[i].text);
}

static inline const char *t_env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		printf("# SKIP: %s not set (run through tests/lib/runtests)\n", name);
		exit(77);
	}
	return v;
}

/* Write a file atomically (rename), creating directories. */
static inline int t_write(const char *root, const char *path, const char *s)
{
	char p[4096], tmp[4200], *q;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, path);
	for (q = p + strlen(root) + 1; (q = strchr(q, '/')); q++) {
		*q = 0;
		mkdir(p, 0755);
		*q = '/';
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(s, f);
	if (fclose(f))
		return -1;
	return rename(tmp, p);
}

/* Remove a made-up sysroot ("" is none). */
static inline void t_rmroot(const char *root)
{
	char cmd[4200];

	if (!*root)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		printf("# cannot remove %s\n", root);
}

/* tsc_mult for a made-up kernel at khz, with tsc_shift 24.  khz is a
 * measured figure: 0 ends the test with words, not with SIGFPE. */
static inline uint64_t t_mult24(uint64_t khz)
{
	if (!khz) {
		printf("# FAIL: no TSC rate to make factors from (0 kHz): "
		       "the measurement or calibration it came from gave none\n");
		exit(1);
	}
	return (1000000ull << 24) / khz;
}

/* The kernel's factors in a sysroot for khz: tsc_khz, tsc_mult and
 * tsc_shift (24) agree. */
static inline void t_set_khz(const char *root, uint64_t khz)
{
	char b[64];

	snprintf(b, sizeof(b), "%llu\n", (unsigned long long)khz);
	t_write(root, "sys/devices/system/tsc/tsc0/tsc_khz", b);
	t_write(root, "sys/devices/system/tsc/tsc0/tsc_shift", "24\n");
	snprintf(b, sizeof(b), "%llu\n", (unsigned long long)t_mult24(khz));
	t_write(root, "sys/devices/system/tsc/tsc0/tsc_mult", b);
}

/* A sysroot in which a patched kernel keeps time with a TSC it trusts at
 * khz: it drives the decision, so the TSC paths run on any machine where
 * RDTSC may run, whatever its kernel thinks of the TSC. */
static inline void t_mkroot(const char *root, uint64_t khz)
{
	t_write(root, "sys/devices/system/tsc/tsc0/tsc_stable", "1\n");
	t_set_khz(root, khz);
	t_write(root, "sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
	t_write(root, "sys/devices/system/clocksource/clocksource0/available_clocksource",
		"tsc hpet\n");
	t_write(root, "proc/cpuinfo", "processor\t: 0\nflags\t\t: tsc constant_tsc nonstop_tsc\n");
}

/* Make the kernel trust the TSC or not: a made-up one by its
 * tsc_stable, the live one (root "", in the guest) by switching the
 * clocksource to tsc or hpet, which the kernel notifies at once.
 * Returns 0, or -1 with errno. */
static inline int t_kernel_tsc(const char *root, bool on)
{
	static const char cs[] = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
	FILE *f;
	int err;

	if (*root)
		return t_write(root, "sys/devices/system/tsc/tsc0/tsc_stable", on ? "1\n" : "0\n");
	if (!T_LIVE) {		/* never the machine's own kernel */
		errno = EPERM;
		return -1;
	}
	f = fopen(cs, "w");
	if (!f)
		return -1;
	err = fputs(on ? "tsc\n" : "hpet\n", f) < 0;
	err |= fclose(f) != 0;
	return err ? -1 : 0;
}

/* How long a calibration may take here, in ms.  Its bound after d ns is
 * about the width of a bracket (a clock_gettime() between two TSC
 * reads) over d, so 1 ppm takes about that width in ns as ms: 40 ms
 * where the vDSO reads the clock, several seconds where each read is a
 * system call to an emulated HPET (QEMU TCG).  The narrowest of 64
 * reads, times 10, and 3 s more: a limit for a test to give up at, not
 * a figure it checks. */
static inline int t_calib_limit_ms(void)
{
	static int limit;
	uint64_t w = UINT64_MAX, a, b;
	int k;

	if (limit)
		return limit;
	for (k = 0; k < 64; k++) {
		a = t_clock(CLOCK_MONOTONIC_RAW);
		b = t_clock(CLOCK_MONOTONIC_RAW);
		if (b > a && b - a < w)
			w = b - a;
	}
	/* Well within runtests' 120 s; no width seen: the 3 s alone. */
	if (w == UINT64_MAX)
		w = 0;
	if (w > 6000)
		w = 6000;
	limit = 3000 + (int)(10 * w);
	return limit;
}

/* Wait, for at most ms milliseconds, while a calibration (or perf,
 * asked after the open) goes on.  Without a watcher it goes on only in
 * tsc_process_events(): called every ms meanwhile.  Returns the ms
 * waited. */
static inline int t_await_calibration(struct tsc *t, bool watcher, int ms)
{
	uint64_t t0 = t_clock(CLOCK_MONOTONIC), end = t0 + (uint64_t)ms * 1000000;

	while (t_clock(CLOCK_MONOTONIC) < end && (t_reason(t, "calibrating: ") ||
						  t_reason(t, "waiting for the perf mmap page"))) {
		if (!watcher)
			tsc_process_events(t);
		t_sleep_ms(1);
	}
	return (int)((t_clock(CLOCK_MONOTONIC) - t0) / 1000000);
}

static inline void t_process(struct tsc *t, int ms)
{
	t_await_calibration(t, false, ms);
}

/* This machine's TSC rate: the live decision's factors, else a
 * calibration.  Skips, saying why, only when RDTSC may not run here. */
static inline uint64_t t_host_khz(void)
{
	struct tsc_info i;
	struct tsc *t;

	TSC_OPTS(o, .no_watcher = true);
	TSC_OPTS(c, .no_watcher = true, .force_calibrate = true);
	t = tsc_open(&o);
	if (!t)
		SKIP("tsc_open: %s", strerror(errno));
	t_process(t, t_calib_limit_ms());
	tsc_get_info(t, &i, sizeof(i));
	tsc_close(t);
	if (i.usable && i.khz)
		return i.khz;
	if (i.prctl_tsc == 2 || i.tsc_user == 2)
		SKIP("RDTSC raises SIGSEGV in this task: no TSC to measure");
	t = tsc_open(&c);
	if (!t)
		SKIP("tsc_open: %s", strerror(errno));
	t_process(t, t_calib_limit_ms());
	tsc_get_info(t, &i, sizeof(i));
	tsc_close(t);
	if (!i.khz || i.src != TSC_SRC_CALIBRATION) {
		printf("# FAIL: this machine's TSC did not calibrate (source %s, %llu kHz, "
		       "bound %llu ppb)\n", tsc_src_name(i.src), (unsigned long long)i.khz,
		       (unsigned long long)i.err_ppb);
		exit(1);
	}
	return i.khz;
}

/* A handle on root without a watcher, stored in *hp, and SIGALRM to fn
 * every 20 us from then on (t_alarm_stop() ends it). */
static inline struct tsc *t_open_alarmed(const char *root, void (*fn)(int), struct tsc **hp)
{
	struct itimerval it = { { 0, 20 }, { 0, 20 } };
	struct sigaction sa = { .sa_handler = fn };
	struct tsc *t;

	TSC_OPTS(o, .sysroot = *root ? root : NULL, .no_watcher = true);
	t = tsc_open(&o);
	if (!t)
		return NULL;
	*hp = t;	/* before the first alarm: fn reads it */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	return t;
}

static inline void t_alarm_stop(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

/* fn(root) in a child (t_child()), root a made-up sysfs at the host's
 * kHz in a fresh /tmp/tsc-NAME-XXXXXX, removed after; in the guest,
 * root "": the live kernel.  There a clocksource switch costs tens of
 * ms under TCG, and several times that while the host is busy (CI with
 * another run beside it): the hang bound is 3 * s.  A child that failed
 * or was killed between switches may have left hpet: tsc goes back, so
 * that the next test starts where the scenario booted. */
static inline void t_child_in_root(const char *name, int (*fn)(const char *), int s,
				   const char *what)
{
	char root[64];

	if (T_LIVE) {
		t_child(fn, "", 3 * s, what);
		CHECK(!t_kernel_tsc("", true), "clocksource back to tsc: %s", strerror(errno));
		return;
	}
	snprintf(root, sizeof(root), "/tmp/tsc-%s-XXXXXX", name);
	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	t_mkroot(root, t_host_khz());
	t_child(fn, root, s, what);
	t_rmroot(root);
}

/* A handle that uses the TSC: the live one where the kernel lets it,
 * else one on a made-up sysroot that trusts this machine's TSC (root
 * names it, for t_rmroot; "" for the live one). */
static inline struct tsc *t_open_tsc(char root[64], bool watcher)
{
	struct tsc *t;

	TSC_OPTS(o, .no_watcher = !watcher);
	*root = 0;
	t = tsc_open(&o);
	if (t && tsc_in_use(t))
		return t;
	if (T_LIVE) {
		t_live_tsc(t);
		printf("# FAIL: the guest's kernel does not let this process use the TSC\n");
		exit(1);
	}
	tsc_close(t);
	uint64_t khz = t_host_khz();

	strcpy(root, "/tmp/tsc-test-XXXXXX");
	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	t_mkroot(root, khz);
	printf("# the kernel does not use the TSC here: a sysroot that trusts it at %llu kHz\n",
	       (unsigned long long)khz);
	TSC_OPTS(so, .sysroot = root, .no_watcher = !watcher);
	t = tsc_open(&so);
	if (!t || !tsc_in_use(t)) {
		printf("# FAIL: the made-up sysroot %s does not give a TSC in use\n", root);
		exit(1);
	}
	return t;
}

#endif
