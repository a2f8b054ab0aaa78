// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * fork(), the prefork-server way: after a fork the parent's handle goes
 * on following the kernel whatever the child does (here: tsc_close()),
 * the child stays single-threaded until its first library call and its
 * handle then follows the kernel too, and a fork while another thread
 * holds the handle's lock leaves the child a lock it can take.  The
 * "kernel" is a made-up sysroot whose files the test rewrites; the
 * watcher sees them on its 1 s timer.  In the guest (T_GUEST) it is the
 * live kernel, whose clocksource the test switches to hpet and back; the
 * watcher sees that at once.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "t.h"

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

	/* 3. Forks while another thread keeps taking the lock. */
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
