// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * tsc_default(): one handle for every library in a process.
 *  1. A fork while another thread makes the default handle leaves the
 *     child a tsc_default() it can call (no lock inherited held).
 *  2. A first call that fails for ENOMEM keeps nothing (no watcher), and
 *     the next call tries again.
 *  3. Eight threads that call it at once get one handle, and the library
 *     creates one thread for them: a single tsc-watch.
 *  4. tsc_close() on it does nothing: the same handle comes back, it
 *     reads, and its watcher still re-anchors once a second.
 *  5. After fork() the child stays single-threaded until it calls
 *     tsc_default(), which gives it the same handle with a watcher of
 *     its own; the parent's watcher goes on.
 * Parts 1 and 2 run while this process has no default handle.  Built
 * with ThreadSanitizer (tests/lib/Makefile), parts 2 to 4 only.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "t.h"

/* Under ThreadSanitizer, parts 2 to 4 only: it does not support a
 * thread started in the child of a multi-threaded fork (parts 1, 5). */
#if defined(__SANITIZE_THREAD__)
#define NO_FORK 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NO_FORK 1
#endif
#endif
#ifndef NO_FORK
#define NO_FORK 0
#endif

/* The library's posix_memalign() and pthread_create() come here first:
 * the one fails on demand, the other counts the library's threads. */
static int fail_memalign;	/* fail the next posix_memalign() with ENOMEM */
static int lib_threads;		/* threads created, but for the test's own */
static void *next_memalign, *next_create;
static void *racer(void *arg);
static void *maker(void *arg);

static void *next(const char *name, void **cache)
{
	void *f = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELAXED);
	}
	return f;
}

int posix_memalign(void **p, size_t align, size_t size)
{
	int (*real)(void **, size_t, size_t) = next("posix_memalign", &next_memalign);

	if (__atomic_exchange_n(&fail_memalign, 0, __ATOMIC_RELAXED))
		return ENOMEM;
	return real(p, align, size);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		next("pthread_create", &next_create);

	if (fn != racer && fn != maker)
		__atomic_add_fetch(&lib_threads, 1, __ATOMIC_RELAXED);
	return real(th, attr, fn, arg);
}

/* 1. In a child of a process without a default handle, a thread makes
 * it while this one forks, us microseconds after the thread started.
 * The grandchild must get a default handle, with a watcher: the one
 * made before the fork, or one of its own; never a lock held forever. */
static struct tsc *made;
static int started;

static void *maker(void *arg)
{
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	made = tsc_default();
	return NULL;
}

static int fork_while_making(int us)
{
	pthread_t th;
	pid_t pid;
	int st, n;

	pthread_create(&th, NULL, maker, NULL);
	while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		;
	if (us)
		usleep(us);
	pid = fork();
	if (pid == 0) {
		struct tsc *t;

		alarm(5);	/* a lock inherited held: SIGALRM */
		t = tsc_default();
		if (!t)
			_exit(2);
		n = t_await_watchers(1, NULL);
		if (n != 1) {
			printf("# child of a fork %d us into the first tsc_default(): %d watchers\n",
			       us, n);
			t_print_reasons(t);
		}
		fflush(stdout);
		_exit(n != 1 ? 3 : 0);
	}
	st = t_wait(pid);
	pthread_join(th, NULL);
	return st ? st : !made ? 4 : t_await_watchers(1, NULL) != 1 ? 5 : 0;
}

/* 3. */
#define RACERS 8
static pthread_barrier_t go;
static struct tsc *got[RACERS];

static void *racer(void *arg)
{
	pthread_barrier_wait(&go);
	got[(intptr_t)arg] = tsc_default();
	return NULL;
}

/* Reads that follow CLOCK_MONOTONIC_RAW over 20 ms, within 1% + 200 us. */
static void reads(struct tsc *t, const char *when)
{
	uint64_t r0, r1, r2, r3, a, b, lo, hi;

	r0 = t_clock(CLOCK_MONOTONIC_RAW);
	a = tsc_now_ns(t);
	r1 = t_clock(CLOCK_MONOTONIC_RAW);
	t_sleep_ms(20);
	r2 = t_clock(CLOCK_MONOTONIC_RAW);
	b = tsc_now_ns_ordered(t);
	r3 = t_clock(CLOCK_MONOTONIC_RAW);
	lo = r2 - r1 - (r2 - r1) / 100 - 200000;
	hi = r3 - r0 + (r3 - r0) / 100 + 200000;
	CHECK(b > a && b - a >= lo && b - a <= hi,
	      "%s: 20 ms of CLOCK_MONOTONIC_RAW read as %lld ns", when, (long long)(b - a));
}

/* Does the handle's watcher run?  It re-anchors once a second. */
static bool anchoring(struct tsc *t)
{
	struct tsc_info i;
	uint64_t a;
	int k;

	if (tsc_get_info(t, &i, sizeof(i)) < 0)
		return false;
	a = i.anchors;
	for (k = 0; k < 50; k++) {
		t_sleep_ms(100);
		if (tsc_get_info(t, &i, sizeof(i)) < 0)
			return false;
		if (i.anchors > a)
			return true;
	}
	return false;
}

int main(void)
{
	pthread_t th[RACERS];
	struct tsc *d, *c;
	int k, n, e, before, bad;
	pid_t pid;

	/* 1 */
	for (k = 0, bad = 0; k < 20 && !NO_FORK; k++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(fork_while_making(k * 100));
		n = t_wait(pid);
		if (n)
			printf("# fork %d us into the first tsc_default(): status %d\n", k * 100, n);
		bad += n != 0;
	}
	CHECK(bad == 0, "%d of 20 forks during the first tsc_default() left a child without one", bad);

	/* 2 */
	CHECK(t_watchers(NULL) == 0, "a tsc-watch thread before any call");
	__atomic_store_n(&fail_memalign, 1, __ATOMIC_RELAXED);
	errno = 0;
	d = tsc_default();
	e = errno;
	CHECK(!__atomic_load_n(&fail_memalign, __ATOMIC_RELAXED),
	      "the first tsc_default() did not allocate: no ENOMEM was made");
	__atomic_store_n(&fail_memalign, 0, __ATOMIC_RELAXED);
	CHECK(!d && e == ENOMEM, "tsc_default() out of memory: %p, errno %d (want NULL, ENOMEM)",
	      (void *)d, e);
	CHECK(t_watchers(NULL) == 0, "a tsc-watch thread after the failed call");

	/* 3 */
	before = __atomic_load_n(&lib_threads, __ATOMIC_RELAXED);
	pthread_barrier_init(&go, NULL, RACERS);
	for (k = 0; k < RACERS; k++)
		pthread_create(&th[k], NULL, racer, (void *)(intptr_t)k);
	for (k = 0; k < RACERS; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&go);
	d = got[0];
	CHECK(d, "tsc_default() after a failed call: NULL (no retry?)");
	if (!d)
		DONE();
	for (k = 1; k < RACERS; k++)
		CHECK(got[k] == d, "racer %d got %p, racer 0 %p", k, (void *)got[k], (void *)d);
	n = __atomic_load_n(&lib_threads, __ATOMIC_RELAXED) - before;
	CHECK(n == 1, "%d threads created for %d racing first calls (want 1, the watcher)",
	      n, RACERS);
	n = t_await_watchers(1, NULL);
	CHECK(n == 1, "%d threads named tsc-watch (want 1)", n);
	CHECK(tsc_default() == d, "a later call gave another handle");
	reads(d, "default handle");

	/* 4 */
	tsc_close(d);
	CHECK(tsc_default() == d, "another handle after tsc_close(tsc_default())");
	n = t_watchers(NULL);
	CHECK(n == 1, "%d tsc-watch threads after tsc_close(tsc_default()) (want 1)", n);
	reads(d, "after tsc_close()");
	CHECK(anchoring(d), "the watcher stopped re-anchoring after tsc_close(tsc_default())");

	/* 5 */
	if (NO_FORK)
		DONE();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		alarm(10);
		t_failed = 0;	/* the child's own checks */
		n = t_threads();
		CHECK(n == 1, "child: %d threads before any call (want 1)", n);
		c = tsc_default();
		CHECK(c == d, "child: tsc_default() %p, the parent's %p", (void *)c, (void *)d);
		if (c) {
			n = t_await_watchers(1, NULL);
			CHECK(n == 1, "child: %d tsc-watch threads after tsc_default() (want 1)", n);
			reads(c, "child");
			CHECK(anchoring(c), "child: the default handle does not re-anchor");
		}
		fflush(stdout);
		_exit(t_failed);
	}
	n = t_wait(pid);
	CHECK(n == 0, "child: status %d", n);
	n = t_watchers(NULL);
	CHECK(n == 1, "parent: %d tsc-watch threads after the child (want 1)", n);
	CHECK(anchoring(d), "parent: the watcher stopped re-anchoring after the child");
	reads(d, "parent after the child");
	DONE();
}
