// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The wall mapping's reads never wait for its writer: a SIGALRM handler
 * maps the time to MONOTONIC and REALTIME every 20 us while the same
 * thread re-anchors for 2 s.  A reader that spun while the anchors were
 * being rewritten would hang here, in a handler that interrupted the
 * writer.  The handler's MONOTONIC readings must not go back either.
 * Runs in a child, killed after 30 s.
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

static struct tsc *h;
static volatile sig_atomic_t reads, back, errs;
static uint64_t last;

static void on_alarm(int sig)
{
	uint64_t m = 0, r = 0;

	(void)sig;
	errs += tsc_clock_gettime(h, CLOCK_MONOTONIC, &m) != 0;
	errs += tsc_ns_to_clock(h, tsc_now_ns(h), CLOCK_REALTIME, &r) != 0;
	back += m < last;
	last = m;
	reads++;
}

static int child(const char *root)
{
	struct itimerval it = { { 0, 20 }, { 0, 20 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	uint64_t end;
	int n = 0;

	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	h = tsc_open(&o);
	if (!h)
		return 1;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	end = t_clock(CLOCK_MONOTONIC) + 2000000000ull;
	while (t_clock(CLOCK_MONOTONIC) < end) {
		tsc_reanchor(h);
		n++;
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("# figure: %d reads in a signal handler during %d re-anchors, %d went back, %d failed\n",
	       (int)reads, n, (int)back, (int)errs);
	fflush(stdout);
	return reads < 100 || back || errs;
}

int main(void)
{
	char root[] = "/tmp/tsc-wallsig-XXXXXX";

	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	t_mkroot(root, t_host_khz());
	t_child(child, root, 30, "a read in a signal handler hung while the same thread re-anchored");
	t_rmroot(root);
	DONE();
}
