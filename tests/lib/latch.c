// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Reads never wait for the writer: a SIGALRM handler reads the clock
 * every 20 us while the same thread publishes 3000 decisions (each
 * switch rewrites the published state).  A reader that spun while the
 * state was being rewritten would hang here, in a signal handler that
 * interrupted the writer.  Runs in a child, killed after 60 s.
 */
#include <signal.h>
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
	int k;

	t_open_alarmed(root, on_alarm, &h);
	if (!h)
		return 1;
	for (k = 0; k < 3000; k++) {
		t_write(root, STABLE, k & 1 ? "1\n" : "0\n");
		tsc_process_events(h);
	}
	t_alarm_stop();
	printf("# figure: %d reads in a signal handler during 3000 switches, %d went back\n",
	       (int)reads, (int)back);
	fflush(stdout);
	return reads < 100 || back;
}

int main(void)
{
	t_child_in_root("latch", child, 60,
			"a read in a signal handler hung while the same thread published");
	DONE();
}
