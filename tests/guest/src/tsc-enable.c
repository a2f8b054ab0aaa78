// SPDX-License-Identifier: GPL-2.0
/*
 * tsc-enable PROGRAM [ARG...]: run PROGRAM as a task that asked for the
 * TSC with prctl(PR_SET_TSC, PR_TSC_ENABLE), which it keeps across fork
 * and exec whatever the tsc_user policy. The kernel's prctl stress tests
 * take their first RDTSC before any prctl: under tsc_user=sigsegv that
 * one faults by design, unless the test runs as such a task.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/prctl.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tsc-enable PROGRAM [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_TSC, PR_TSC_ENABLE)) {
		fprintf(stderr, "tsc-enable: prctl(PR_SET_TSC): %s\n", strerror(errno));
		return 1;
	}
	execv(argv[1], argv + 1);
	fprintf(stderr, "tsc-enable: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
