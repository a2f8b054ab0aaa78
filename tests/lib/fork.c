// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * fork(), the prefork-server way: after a fork the parent's handle goes
 * on following the kernel whatever the child does (here: tsc_close()),
 * the child stays single-threaded until its first library call and its
 * handle then follows the kernel too, and a fork while another thread
 * holds the handle's lock leaves the child a lock it can take.  A child
 * that only maps (tsc_clock_gettime(), async-signal-safe, starts no
 * thread) anchors its mapping itself, so that it does not drift, and a
 * signal handler that forks while its thread holds the handle's lock
 * neither hangs nor leaves the child a broken handle.  The
 * "kernel" is a made-up sysroot whose files the test rewrites; the
 * watcher sees them on its 1 s timer.  In the guest (T_GUEST) it is the
 * live kernel, whose clocksource the test switches to hpet and back; the
 * watcher sees that at once.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "t.h"
#include "../../lib/src/internal.h"

static bool wait_in_use(struct tsc *t, bool want)
{
	int k;

	for (k = 0; k < 40 && tsc_in_use(t) != want; k++)
		t_sleep_ms(100);
	return tsc_in_use(t) == want;
}

static struct tsc *busy_h;
static int busy_stop;

static void *busy(void *arg)
{
	while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED))
		tsc_process_events(busy_h);	/* takes and drops the lock */
	return NULL;
}

/* fork() in a SIGUSR1 handler, raised from inside tsc_reanchor() (the
 * writer's clock, which runs under the handle's lock). */
static uint64_t (*real_now)(struct tsc *t);
static volatile sig_atomic_t raised, in_child, handler_pid = -1;

static void on_usr1(int sig)
{
	pid_t p = fork();

	(void)sig;
	if (p == 0)
		in_child = 1;
	else
		handler_pid = p;
}

static uint64_t raising_now(struct tsc *t)
{
	if (!raised) {
		raised = 1;
		raise(SIGUSR1);
	}
	return real_now(t);
}

static int fork_in_handler(const char *root)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct tsc_info i;
	struct tsc *h;
	uint64_t v;

	TSC_OPTS(o, .sysroot = *root ? root : NULL, .no_watcher = true);
	h = tsc_open(&o);
	if (!h)
		return 1;
	sigaction(SIGUSR1, &sa, NULL);
	real_now = h->wall_now;
	h->wall_now = raising_now;
	tsc_reanchor(h);
	if (in_child) {		/* the interrupted call ended here too */
		h->wall_now = real_now;
		if (tsc_process_events(h) < 0 || tsc_get_info(h, &i, sizeof(i)) < 0 ||
		    tsc_clock_gettime(h, CLOCK_MONOTONIC, &v))
			_exit(2);
		tsc_close(h);
		_exit(0);
	}
	if (handler_pid < 0)
		return 3;
	return t_wait_deadline(handler_pid, 20) ? 4 : 0;
}

int main(void)
{
	char root[] = "/tmp/tsc-fork-XXXXXX";
	struct tsc_info i;
	pthread_t th;
	struct tsc *h;
	pid_t pid;
	int k, bad;

	if (T_LIVE)
		root[0] = 0;
	else if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	else
		t_mkroot(root, t_host_khz());
	TSC_OPTS(o, .sysroot = *root ? root : NULL);
	h = tsc_open(&o);
	CHECK(h && tsc_in_use(h), "%s handle not in use", *root ? "sysroot" : "live");
	if (!h)
		DONE();
	t_live_tsc(h);

	/* 1. The child closes its handle: the parent still follows. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		tsc_close(h);
		_exit(0);
	}
	CHECK(t_wait(pid) == 0, "child that closed its handle failed");
	CHECK(!t_kernel_tsc(root, false), "kernel: TSC off: %s", strerror(errno));
	CHECK(wait_in_use(h, false), "parent stopped following the kernel after the child's tsc_close()");
	CHECK(!t_kernel_tsc(root, true), "kernel: TSC on: %s", strerror(errno));
	CHECK(wait_in_use(h, true), "parent did not take the TSC back");

	/* 2. The child stays single-threaded until its first library call
	 * (it may unshare() or exec); from then on its handle follows the
	 * kernel on its own. */
	pid = fork();
	if (pid == 0) {
		alarm(10);
		if (t_threads() != 1)
			_exit(2);
		tsc_get_info(h, &i, sizeof(i));
		if (t_threads() != 2)
			_exit(3);
		if (t_kernel_tsc(root, false))
			_exit(4);
		_exit(wait_in_use(h, false) ? 0 : 1);
	}
	k = t_wait(pid);
	CHECK(k != 2, "the child has a thread before any library call");
	CHECK(k != 3, "no watcher in the child after its first library call");
	CHECK(k == 0, "child's handle did not follow the kernel (status %d)", k);
	CHECK(!t_kernel_tsc(root, true), "kernel: TSC on: %s", strerror(errno));
	CHECK(wait_in_use(h, true), "parent did not take the TSC back after the child");
	tsc_get_info(h, &i, sizeof(i));
	t_fact("switches", "%llu", (unsigned long long)i.switches);

	/* 3. A child that only maps: no thread, and anchors of its own. */
	pid = fork();
	if (pid == 0) {
		uint64_t a0 = h->info.anchors, v;	/* one thread: no lock */

		for (k = 0; k < 250; k++) {
			if (tsc_clock_gettime(h, CLOCK_MONOTONIC, &v))
				_exit(3);
			t_sleep_ms(10);
		}
		if (t_threads() != 1)
			_exit(2);
		printf("# child: %llu anchors in 2.5 s of tsc_clock_gettime() only\n",
		       (unsigned long long)(h->info.anchors - a0));
		fflush(stdout);
		_exit(h->info.anchors - a0 >= 2 ? 0 : 1);
	}
	k = t_wait_deadline(pid, 30);
	CHECK(k != 2, "tsc_clock_gettime() started a thread in the child");
	CHECK(k == 0, "a child that only maps never anchors: its mapping drifts (status %d)", k);

	/* 4. fork() in a signal handler while its thread holds the lock. */
	t_child(fork_in_handler, root, 40,
		"fork() in a handler that interrupted a library call hung");

	/* 5. Forks while another thread keeps taking the lock. */
	busy_h = h;
	pthread_create(&th, NULL, busy, NULL);
	for (k = 0, bad = 0; k < 50; k++) {
		pid = fork();
		if (pid == 0) {
			tsc_get_info(h, &i, sizeof(i));
			tsc_process_events(h);
			tsc_close(h);
			_exit(0);
		}
		/* A lock inherited held never comes free: the child
		 * hangs and is described, then killed. */
		bad += t_wait_deadline(pid, 30) != 0;
	}
	__atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	CHECK(bad == 0, "%d of 50 children could not use or close the handle", bad);
	printf("# figure: 50 forks under lock traffic, %d children failed\n", bad);
	t_fact("children_failed", "%d", bad);
	t_fact("usable_end", "%d", tsc_in_use(h));
	tsc_close(h);
	t_rmroot(root);
	DONE();
}
