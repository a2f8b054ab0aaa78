// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * tsc_open() where the vDSO hands out the TSC (the stand-in of
 * fakevdso.c in place of the live vDSO): it decides from the CPU and the
 * vDSO alone, opening no file and making no fd but the watcher's stop
 * eventfd, and uses the TSC at once.  The first report (tsc_get_info(),
 * tsc_get_reasons(), tsc_fd()) arms the handle and completes the
 * decision from every file, once, without counting it as another; a
 * change in between is a switch like any other.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <x86intrin.h>

#include "t.h"
#include "fakevdso.h"

/* Files opened, and fds made, by this thread (not the watcher's); files
 * opened by any thread. */
static __thread int opens, made_here;
static int opens_all;

#define WRAP_OPEN(name, ...) do {					\
	static int (*real)();						\
	va_list ap;							\
	mode_t mode;							\
									\
	if (!real)							\
		real = (int (*)())dlsym(RTLD_NEXT, #name);		\
	va_start(ap, flags);						\
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0; \
	va_end(ap);							\
	opens++;							\
	__atomic_add_fetch(&opens_all, 1, __ATOMIC_RELAXED);		\
	return real(__VA_ARGS__, flags, mode);				\
} while (0)

int open(const char *p, int flags, ...) { WRAP_OPEN(open, p); }
int open64(const char *p, int flags, ...) { WRAP_OPEN(open64, p); }
int openat(int dir, const char *p, int flags, ...) { WRAP_OPEN(openat, dir, p); }

#define WRAP_FD(ret, name, params, args) ret name params		\
{									\
	static ret (*real) params;					\
									\
	if (!real)							\
		real = (ret (*) params)dlsym(RTLD_NEXT, #name);		\
	made_here++;							\
	return real args;						\
}

WRAP_FD(int, eventfd, (unsigned int v, int flags), (v, flags))
WRAP_FD(int, epoll_create1, (int flags), (flags))
WRAP_FD(int, timerfd_create, (int clk, int flags), (clk, flags))

/* With delay_opener, the opener stalls 50 ms right after creating the
 * watcher (start_thread() restores its signal mask next). */
static int delay_opener;

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*real)(int, const sigset_t *, sigset_t *);
	int r;

	if (!real)
		real = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT,
									"pthread_sigmask");
	r = real(how, set, old);
	if (delay_opener && how == SIG_SETMASK && !old)
		t_sleep_ms(50);
	return r;
}

/* ns per 2^32 ticks of this TSC against CLOCK_MONOTONIC_RAW, over 50 ms:
 * near enough for a stand-in kernel. */
static uint64_t factor(void)
{
	uint64_t c0 = t_clock(CLOCK_MONOTONIC_RAW), k0 = __rdtsc(), c1, k1;

	t_sleep_ms(50);
	c1 = t_clock(CLOCK_MONOTONIC_RAW);
	k1 = __rdtsc();
	return (uint64_t)(((unsigned __int128)(c1 - c0) << 32) / (k1 - k0));
}

/* tsc_open() with the files it opened and the other fds it made in
 * this thread. */
static struct tsc *open_counted(bool watcher, int *opened, int *made)
{
	int o = opens, m = made_here;
	TSC_OPTS(opt, .no_watcher = !watcher);
	struct tsc *t = tsc_open(&opt);

	*opened = opens - o;
	*made = made_here - m;
	CHECK(t, "open: %s", strerror(errno));
	return t;
}

static void trusted(void)
{
	struct tsc_info i;
	struct pollfd p;
	uint64_t a, b;
	int opened, made;
	struct tsc *t = open_counted(false, &opened, &made);

	if (!t)
		return;
	CHECK(opened == 0, "tsc_open() opened %d files where the vDSO answers", opened);
	CHECK(made == 0, "tsc_open() without a watcher made %d fds", made);
	CHECK(tsc_in_use(t), "the vDSO hands out the TSC, and it is not in use after tsc_open()");
	a = tsc_now_ns(t);
	tsc_get_info(t, &i, sizeof(i));
	CHECK(opens > 0, "the first report read no file");
	CHECK(t_reason(t, "current_clocksource"), "the first report's reasons lack the files");
	CHECK(i.decisions == 2, "decisions %llu after the first report: the open's and its "
	      "completion from the files", (unsigned long long)i.decisions);
	CHECK(i.vdso_raw == 0, "vdso_raw %d", i.vdso_raw);
	/* The files have the last word: the host's kernel may keep time
	 * with another clocksource than the stand-in says. */
	if (i.usable)
		CHECK(i.switches == 0 && i.src == TSC_SRC_VDSO,
		      "the full decision agrees, yet switches %llu, factors from %s",
		      (unsigned long long)i.switches, tsc_src_name(i.src));
	else
		CHECK(i.switches == 1 && !tsc_in_use(t), "the full decision refuses the TSC: "
		      "switches %llu, in use %d", (unsigned long long)i.switches, tsc_in_use(t));
	b = tsc_now_ns(t);
	CHECK(b >= a, "went back across the first report: %llu < %llu",
	      (unsigned long long)b, (unsigned long long)a);
	printf("# after the first report: usable %d, clocksource %s, switches %llu\n",
	       i.usable, i.clocksource, (unsigned long long)i.switches);

	opened = opens;
	tsc_get_info(t, &i, sizeof(i));
	CHECK(opens == opened && i.decisions == 2,
	      "a second report looked again: %d opens, decisions %llu", opens - opened,
	      (unsigned long long)i.decisions);
	/* Armed: the files were read after their opens, so their events do
	 * not wake the fd at once. */
	p.fd = tsc_fd(t);
	p.events = POLLIN;
	CHECK(p.fd >= 0, "tsc_fd: %d", p.fd);
	CHECK(poll(&p, 1, 0) == 0, "tsc_fd() readable right after arming");
	tsc_close(t);
}

static void refused(struct fake_state *st)
{
	struct tsc_info i;
	int opened, made;
	struct tsc *t;

	st->nodev = 1;
	t = open_counted(false, &opened, &made);
	st->nodev = 0;
	if (!t)
		return;
	CHECK(opened == 0 && made == 0, "-ENODEV: tsc_open() opened %d files, made %d fds",
	      opened, made);
	CHECK(!tsc_in_use(t), "-ENODEV: the TSC is in use after tsc_open()");
	st->nodev = 1;
	tsc_get_info(t, &i, sizeof(i));
	st->nodev = 0;
	CHECK(!i.usable && i.decisions == 2 && i.switches == 0,
	      "-ENODEV: usable %d, decisions %llu, switches %llu", i.usable,
	      (unsigned long long)i.decisions, (unsigned long long)i.switches);
	CHECK(t_reason(t, "returned -ENODEV") && t_reason(t, "current_clocksource"),
	      "-ENODEV: no reason for it, or no reasons from the files");
	tsc_close(t);
}

/* The kernel changes its mind between tsc_open() and the first report. */
static void changed(struct fake_state *st)
{
	struct tsc_info i;
	int opened, made;
	uint64_t a, b;
	struct tsc *t = open_counted(false, &opened, &made);

	if (!t)
		return;
	CHECK(tsc_in_use(t), "not in use after tsc_open()");
	a = tsc_now_ns(t);
	st->nodev = 1;
	tsc_get_info(t, &i, sizeof(i));
	b = tsc_now_ns(t);
	st->nodev = 0;
	CHECK(!tsc_in_use(t) && !i.usable && i.switches == 1,
	      "-ENODEV after the open: in use %d, switches %llu", tsc_in_use(t),
	      (unsigned long long)i.switches);
	CHECK(b >= a, "went back across the switch: %llu < %llu",
	      (unsigned long long)b, (unsigned long long)a);
	tsc_close(t);
}

/* With a watcher: no file in the calling thread, the stop eventfd the
 * only fd it makes; the watcher arms the handle on its own. */
static void watched(void)
{
	struct tsc_info i;
	int opened, made, k, before = opens_all;
	struct tsc *t = open_counted(true, &opened, &made);

	if (!t)
		return;
	CHECK(opened == 0, "tsc_open() with a watcher opened %d files in the calling thread",
	      opened);
	CHECK(made == 1, "tsc_open() with a watcher made %d fds (want its stop eventfd)", made);
	CHECK(t_await_watchers(1, NULL) == 1, "no tsc-watch thread");
	/* No call of ours: the watcher's first pass opens the files. */
	for (k = 0; k < 500 && opens_all - before == opened; k++)
		t_sleep_ms(10);
	CHECK(k < 500, "the watcher did not open the files in 5 s");
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.decisions >= 2 && t_reason(t, "current_clocksource"),
	      "decisions %llu; reasons from the files", (unsigned long long)i.decisions);
	tsc_close(t);
}

/* The watcher's first pass fails to arm (EMFILE) while the opener, whose
 * watcher CPUs were refused, is stalled: the opener must not clear what
 * the watcher found.  In a child (the fd limit). */
static void stalled_opener(void)
{
	struct rlimit r;
	cpu_set_t none;
	pid_t pid;
	int fd;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct tsc *t;

		CPU_ZERO(&none);
		CPU_SET(CPU_SETSIZE - 1, &none);
		getrlimit(RLIMIT_NOFILE, &r);
		r.rlim_cur = 4;		/* the stop eventfd, and no more */
		setrlimit(RLIMIT_NOFILE, &r);
		TSC_OPTS(o, .watcher_cpus = &none, .watcher_cpus_size = sizeof(none));
		delay_opener = 1;
		t = tsc_open(&o);
		delay_opener = 0;
		CHECK(t, "open");
		if (t) {
			fd = tsc_fd(t);
			CHECK(fd == -EMFILE && t_reason(t, "cannot follow the kernel"),
			      "the watcher could not arm: tsc_fd %d, want %d; reason %d", fd,
			      -EMFILE, t_reason(t, "cannot follow the kernel"));
			tsc_close(t);
		}
		fflush(stdout);
		_exit(t_failed);
	}
	CHECK(t_wait(pid) == 0, "stalled opener: child failed");
}

/* The full decision takes the vDSO's word where a file cannot give it
 * (unreadable: no /sys in a container), and tsc-early is a TSC too: it
 * agrees with the early one.  A sysroot, with the stand-in's calls. */
static void vouched(uint64_t f)
{
	static const char *const cases[] = { "unreadable", "tsc-early" };
	uint64_t khz = (uint64_t)(((unsigned __int128)1000000 << 32) / f);
	char root[64], p[200];
	struct tsc_info i;
	struct tsc *t;
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		strcpy(root, "/tmp/tsc-early-XXXXXX");
		CHECK(mkdtemp(root), "mkdtemp");
		t_mkroot(root, khz);
		if (c == 0) {	/* a directory reads as EISDIR */
			snprintf(p, sizeof(p), "%s/sys/devices/system/tsc/tsc0/tsc_stable", root);
			CHECK(!unlink(p) && !mkdir(p, 0755), "%s", p);
			snprintf(p, sizeof(p), "%s/sys/devices/system/clocksource/clocksource0/"
				 "current_clocksource", root);
			CHECK(!unlink(p) && !mkdir(p, 0755), "%s", p);
		} else {
			t_write(root, "sys/devices/system/clocksource/clocksource0/"
				"current_clocksource", "tsc-early\n");
		}
		TSC_OPTS(o, .sysroot = root, .no_watcher = true);
		t = tsc_open(&o);
		CHECK(t, "open");
		if (t) {
			tsc_get_info(t, &i, sizeof(i));
			if (!i.usable)
				t_print_reasons(t);
			CHECK(i.usable && i.src == TSC_SRC_VDSO,
			      "%s clocksource files, the vDSO hands out the TSC: usable %d, "
			      "factors from %s", cases[c], i.usable, tsc_src_name(i.src));
			tsc_close(t);
		}
		t_rmroot(root);
	}
}

int main(void)
{
	struct fake_state *st;
	uint64_t f = factor();

	st = fake_vdso(t_env("TSC_TEST_FAKEVDSO"));
	CHECK(st, "cannot load the stand-in vDSO");
	if (!st)
		DONE();
	st->f = f;
	printf("# stand-in vDSO: %llu ns per 2^32 ticks\n", (unsigned long long)f);
	trusted();
	refused(st);
	changed(st);
	watched();
	stalled_opener();
	vouched(f);
	tsc__test_set_vdso(NULL, 0);
	DONE();
}
