// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Reads never wait for the writer: a SIGALRM handler reads the clock
 * every 20 us while the same thread publishes 3000 decisions (each
 * switch rewrites the published state).  A reader that spun while the
 * state was being rewritten would hang here, in a signal handler that
 * interrupted the writer.  Runs in a child, killed after 60 s.
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

#define STABLE "sys/devices/system/tsc/tsc0/tsc_stable"

static struct tsc *h;
static volatile sig_atomic_t reads, back;
static uint64_t last;

static void on_alarm(int sig)
{
	uint64_t a = tsc_now_ns(h), b = tsc_now_ns_ordered(h);

	(void)sig;
	back += b < a || a < last;
	last = b;
	reads++;
}

static int child(const char *root)
{
	struct itimerval it = { { 0, 20 }, { 0, 20 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	int k;

	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	h = tsc_open(&o);
	if (!h)
		return 1;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (k = 0; k < 3000; k++) {
		t_write(root, STABLE, k & 1 ? "1\n" : "0\n");
		tsc_process_events(h);
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("# figure: %d reads in a signal handler during 3000 switches, %d went back\n",
	       (int)reads, (int)back);
	fflush(stdout);
	return reads < 100 || back;
}

int main(void)
{
	char root[] = "/tmp/tsc-latch-XXXXXX";

	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	t_mkroot(root, t_host_khz());
	t_child(child, root, 60, "a read in a signal handler hung while the same thread published");
	t_rmroot(root);
	DONE();
}
