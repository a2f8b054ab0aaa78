// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The wall mapping's reads never wait for its writer: a SIGALRM handler
 * maps the time to MONOTONIC and REALTIME every 20 us while the same
 * thread re-anchors for 2 s.  A reader that spun while the anchors were
 * being rewritten would hang here, in a handler that interrupted the
 * writer.  The handler's MONOTONIC readings must not go back either.
 * Runs in a child, killed after 30 s.  In the guest (T_GUEST), on the
 * live TSC.
 */
#include <signal.h>
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
	uint64_t end;
	int n = 0;

	t_open_alarmed(root, on_alarm, &h);
	if (!h)
		return 1;
	t_live_tsc(h);
	end = t_clock(CLOCK_MONOTONIC) + 2000000000ull;
	while (t_clock(CLOCK_MONOTONIC) < end) {
		tsc_reanchor(h);
		n++;
	}
	t_alarm_stop();
	printf("# figure: %d reads in a signal handler during %d re-anchors, %d went back, %d failed\n",
	       (int)reads, n, (int)back, (int)errs);
	t_fact("reads", "%d", (int)reads);
	t_fact("reanchors", "%d", n);
	t_fact("back", "%d", (int)back);
	t_fact("errors", "%d", (int)errs);
	fflush(stdout);
	return reads < 100 || back || errs || t_failed;
}

int main(void)
{
	t_child_in_root("wallsig", child, 30,
			"a read in a signal handler hung while the same thread re-anchored");
	DONE();
}
