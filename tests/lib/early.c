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
#include <x86intrin.h>

#include "t.h"
#include "fakevdso.h"

/* Files opened by this thread (not the watcher's). */
static __thread int opens;

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
	return real(__VA_ARGS__, flags, mode);				\
} while (0)

int open(const char *p, int flags, ...) { WRAP_OPEN(open, p); }
int open64(const char *p, int flags, ...) { WRAP_OPEN(open64, p); }
int openat(int dir, const char *p, int flags, ...) { WRAP_OPEN(openat, dir, p); }

static int fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
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

static struct tsc *open_counted(bool watcher, int *opened, int *made)
{
	int before = fds(), o = opens;
	TSC_OPTS(opt, .no_watcher = !watcher);
	struct tsc *t = tsc_open(&opt);

	*opened = opens - o;
	*made = fds() - before;
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
	CHECK(i.decisions == 1, "decisions %llu after the first report: it completes the "
	      "open's, it is not another", (unsigned long long)i.decisions);
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
	CHECK(opens == opened && i.decisions == 1,
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
	CHECK(!i.usable && i.decisions == 1 && i.switches == 0,
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
 * only fd; the watcher arms the handle on its own. */
static void watched(void)
{
	struct tsc_info i;
	int opened, made, k;
	struct tsc *t = open_counted(true, &opened, &made);

	if (!t)
		return;
	CHECK(opened == 0, "tsc_open() with a watcher opened %d files in the calling thread",
	      opened);
	CHECK(made <= 1, "tsc_open() with a watcher made %d fds in the open (want its eventfd)",
	      made);
	CHECK(t_await_watchers(1, NULL) == 1, "no tsc-watch thread");
	/* Its first pass arms and decides: more fds, with no call of ours. */
	for (k = 0; k < 500 && fds() < made + 5; k++)
		t_sleep_ms(10);
	CHECK(k < 500, "the watcher did not arm the handle in 5 s");
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.decisions >= 1 && t_reason(t, "current_clocksource"),
	      "decisions %llu; reasons from the files", (unsigned long long)i.decisions);
	tsc_close(t);
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
	tsc__test_set_vdso(NULL, 0);
	DONE();
}
