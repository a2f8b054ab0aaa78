// SPDX-License-Identifier: GPL-2.0
/*
 * policyhold: kernel.tsc_user changes while a trapped RDTSC is inside the
 * kernel's handler (held there by tests/kmod/tsc_user_hold.ko, loaded by
 * the caller). Once the write to the sysctl returns, no trap may still be
 * answered under the old policy: the write must wait for the held task.
 *   emulate -> sigsegv: the held RDTSC was decided under emulate; it must
 *   be done before the write returns, and the task gets its TSC.
 *   sigsegv -> emulate: the held one was decided under sigsegv; done
 *   before the write returns, and the task dies of SIGSEGV.
 * Run as root on two CPUs or more; the policy is put back as it was.
 *
 * Prints "# figure: policyhold: ..." (how long each write waited). Exit 0
 * when every rule held, 1 otherwise, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SYSCTL	"/proc/sys/kernel/tsc_user"
#define PARAMS	"/sys/module/tsc_user_hold/parameters/"

static int failed;

static long read_num(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f || fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static int write_num(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(2);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	failed |= !ok;
}

/* One held trap under @from, the switch to @to meanwhile. */
static void one(long from, long to, int want_sig)
{
	char msg[160];
	double t0, t1;
	int status, i;
	pid_t pid;

	if (write_num(SYSCTL, from) || write_num(PARAMS "arm", 1)) {
		perror("setup");
		exit(2);
	}
	pid = fork();
	if (pid < 0)
		exit(2);
	if (!pid) {
		unsigned int lo, hi;

		pin(1);
		prctl(PR_SET_NAME, "tschold", 0, 0, 0);
		asm volatile("rdtsc" : "=a" (lo), "=d" (hi));
		_exit(lo || hi ? 0 : 1);
	}
	for (i = 0; i < 5000 && read_num(PARAMS "holding") != 1; i++)
		usleep(1000);
	if (read_num(PARAMS "holding") != 1) {
		printf("FAIL: %ld -> %ld: the trap was never held\n", from, to);
		failed = 1;
		waitpid(pid, &status, 0);
		return;
	}
	t0 = now_ms();
	if (write_num(SYSCTL, to)) {
		perror(SYSCTL);
		exit(2);
	}
	t1 = now_ms();
	snprintf(msg, sizeof(msg),
		 "tsc_user %ld -> %ld: the held trap was done before the write returned",
		 from, to);
	check(read_num(PARAMS "holding") == 0, msg);
	waitpid(pid, &status, 0);
	snprintf(msg, sizeof(msg), "tsc_user %ld -> %ld: the held trap was answered under %ld (%s)",
		 from, to, from, want_sig ? "SIGSEGV" : "its TSC");
	check(want_sig ? WIFSIGNALED(status) && WTERMSIG(status) == want_sig :
			 WIFEXITED(status) && !WEXITSTATUS(status), msg);
	printf("# figure: policyhold: %ld -> %ld: the write waited %.0f ms\n",
	       from, to, t1 - t0);
}

int main(void)
{
	long start = read_num(SYSCTL);

	if (start < 0 || read_num(PARAMS "holding") < 0) {
		fprintf(stderr, "policyhold: needs %s and tsc_user_hold.ko\n", SYSCTL);
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "policyhold: needs two CPUs\n");
		return 2;
	}
	pin(0);
	one(1, 2, 0);
	one(2, 1, SIGSEGV);
	if (write_num(SYSCTL, start))
		return 2;
	return failed;
}
