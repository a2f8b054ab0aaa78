// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Reads never wait for the writer: a SIGALRM handler reads the clock
 * every 20 us while the same thread publishes 3000 decisions (each
 * switch rewrites the published state).  A reader that spun while the
 * state was being rewritten would hang here, in a signal handler that
 * interrupted the writer.  Runs in a child, killed after 60 s.
 * In the guest (T_GUEST) the decisions are the live kernel's: the
 * clocksource goes to hpet and back SWITCHES times, and each is
 * published between TSC and CLOCK_MONOTONIC_RAW.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

/* A real clocksource switch costs milliseconds under QEMU TCG. */
#define SWITCHES (T_LIVE ? 200 : 3000)

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

	struct tsc_info i;
	int bad = 0;

	t_open_alarmed(root, on_alarm, &h);
	if (!h)
		return 1;
	t_live_tsc(h);
	for (k = 0; k < SWITCHES; k++) {
		bad += t_kernel_tsc(root, k & 1) != 0;
		tsc_process_events(h);
	}
	t_alarm_stop();
	tsc_get_info(h, &i, sizeof(i));
	printf("# figure: %d reads in a signal handler during %d switches (%llu published), "
	       "%d went back\n", (int)reads, SWITCHES, (unsigned long long)i.switches,
	       (int)back);
	CHECK(!bad, "%d of %d changes of the kernel's mind failed", bad, SWITCHES);
	t_fact("reads", "%d", (int)reads);
	t_fact("back", "%d", (int)back);
	t_fact("switches", "%llu", (unsigned long long)i.switches);
	fflush(stdout);
	return reads < 100 || back || t_failed;
}

int main(void)
{
	t_child_in_root("latch", child, 60,
			"a read in a signal handler hung while the same thread published");
	DONE();
}
