// SPDX-License-Identifier: GPL-2.0
/*
 * sigprobe STOPFILE nofault|mayfault|sigsegv: RDTSC under a
 * kernel.tsc_user that someone else sets (make soak), until STOPFILE is
 * not empty.
 *   - The main thread runs RDTSC at one known instruction. Under allow
 *     and emulate it must not fault (nofault); where sigsegv may be set
 *     (mayfault) each fault must be a SIGSEGV from the kernel (SI_KERNEL)
 *     at that instruction, and the phase must see at least one; where
 *     sigsegv is held from before the start to after the end (sigsegv),
 *     every one must fault so.
 *   - A second thread asked for SIGSEGV itself (PR_SET_TSC): each of its
 *     RDTSC must fault, whatever the policy. The kernel does not count
 *     these in tsc0/user_traps.
 *   - Between its RDTSC, the main thread reads CLOCK_MONOTONIC through
 *     the vDSO, which the policy switches on and off the TSC: it must
 *     never fail, fault or go back.
 * sigprobe --once [GATE READY]: one RDTSC in a new process, for the log's
 * check. With GATE, a FIFO that the caller holds open for writing, it
 * opens GATE, appends its pid to the file READY, waits until the last
 * writer closes GATE, then runs its RDTSC: a barrier that starts many at
 * once.
 *
 * Prints "# figure: sigprobe: MODE: N RDTSC, F faulted; ..." (F: the main
 * thread's SIGSEGV, the ones tsc0/user_traps counts) and writes "# fact
 * sigprobe/MODE_faults" to $TSCKIT_RESULTS. Exit 0 when every rule held,
 * 1 otherwise, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "sysval.h"

/* One RDTSC at a known address: the handler tells its faults apart. */
uint64_t probe_rdtsc(void);
extern const char probe_insn[];
asm(".text\n"
    ".globl probe_rdtsc\n"
    ".type probe_rdtsc, @function\n"
    "probe_rdtsc:\n"
    ".globl probe_insn\n"
    "probe_insn:\n"
    "	rdtsc\n"
    "	shl $32, %rdx\n"
    "	or %rdx, %rax\n"
    "	ret\n"
    ".size probe_rdtsc, . - probe_rdtsc\n");

#define RDTSC_LEN 2

static __thread unsigned long faults;
static volatile sig_atomic_t bad_fault;

/*
 * A fault at probe_insn: count it and step over the instruction with
 * zeros, as if it read nothing. Any other SIGSEGV is a bug: die of it.
 */
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *rip = &uc->uc_mcontext.gregs[REG_RIP];

	if (*rip != (greg_t)(uintptr_t)probe_insn) {
		/* Not ours (the vDSO's RDTSC racing a switch, say): it may
		 * not fault again if retried, so say so and stop here. */
		static const char msg[] = "sigprobe: SIGSEGV away from the probe's RDTSC\n";

		(void)sig;
		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(3);
		_exit(3);
	}
	if (si->si_code != SI_KERNEL)
		bad_fault = 1;
	faults++;
	uc->uc_mcontext.gregs[REG_RAX] = 0;
	uc->uc_mcontext.gregs[REG_RDX] = 0;
	*rip += RDTSC_LEN;
}

/* Only the main thread looks at STOPFILE; it tells the other one. */
static const char *stopfile;
static int stop_now;

static void pause_briefly(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* The thread that asked for SIGSEGV: every RDTSC must fault. */
static unsigned long self_reads, self_faults;
static void *self_sigsegv(void *arg)
{
	(void)arg;
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0)) {
		perror("sigprobe: prctl(PR_SET_TSC)");
		exit(2);
	}
	while (!__atomic_load_n(&stop_now, __ATOMIC_RELAXED)) {
		probe_rdtsc();
		self_reads++;
		pause_briefly();
	}
	self_faults = faults;
	return NULL;
}

/* Wait at GATE (see the top), then one RDTSC: 1 if it faulted. */
static int once(const char *gate, const char *ready)
{
	char line[32], c;
	ssize_t n;
	int fd, rfd, len;

	if (gate) {
		fd = open(gate, O_RDONLY | O_CLOEXEC);
		rfd = open(ready, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		len = snprintf(line, sizeof(line), "%d\n", (int)getpid());
		if (fd < 0 || rfd < 0 || write(rfd, line, len) != len) {
			perror("sigprobe: --once GATE READY");
			return 2;
		}
		close(rfd);
		/* Empty and held open for writing: read blocks until closed. */
		while ((n = read(fd, &c, 1)) != 0) {
			if (n < 0 && errno != EINTR) {
				perror("sigprobe: reading GATE");
				return 2;
			}
		}
		close(fd);
	}
	probe_rdtsc();
	return faults ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	unsigned long reads = 0, vdso_reads = 0, back = 0, vdso_err = 0;
	struct timespec last = { 0, 0 }, now;
	int i, mayfault, allfault, ok = 1;
	pthread_t self;
	FILE *res;

	sigaction(SIGSEGV, &sa, NULL);
	if (argc >= 2 && !strcmp(argv[1], "--once") && (argc == 2 || argc == 4))
		return once(argc == 4 ? argv[2] : NULL, argc == 4 ? argv[3] : NULL);
	if (argc != 3 || (strcmp(argv[2], "nofault") && strcmp(argv[2], "mayfault") &&
			  strcmp(argv[2], "sigsegv"))) {
		fprintf(stderr, "usage: sigprobe STOPFILE nofault|mayfault|sigsegv | sigprobe --once [GATE READY]\n");
		return 2;
	}
	stopfile = argv[1];
	allfault = !strcmp(argv[2], "sigsegv");
	mayfault = allfault || !strcmp(argv[2], "mayfault");
	if (pthread_create(&self, NULL, self_sigsegv, NULL)) {
		fprintf(stderr, "sigprobe: cannot start a thread\n");
		return 2;
	}
	while (!stop_requested(stopfile)) {
		for (i = 0; i < 100; i++) {
			probe_rdtsc();
			reads++;
			if (clock_gettime(CLOCK_MONOTONIC, &now)) {
				vdso_err++;
				continue;
			}
			vdso_reads++;
			if (now.tv_sec < last.tv_sec ||
			    (now.tv_sec == last.tv_sec && now.tv_nsec < last.tv_nsec))
				back++;
			last = now;
		}
		pause_briefly();
	}
	__atomic_store_n(&stop_now, 1, __ATOMIC_RELAXED);
	pthread_join(self, NULL);

	printf("# figure: sigprobe: %s: %lu RDTSC, %lu faulted; %lu under PR_TSC_SIGSEGV, %lu faulted; %lu vDSO reads, %lu back, %lu failed\n",
	       argv[2], reads, faults, self_reads, self_faults, vdso_reads, back, vdso_err);
	if (bad_fault) {
		printf("sigprobe: a SIGSEGV at RDTSC did not come from the kernel (si_code)\n");
		ok = 0;
	}
	if (!mayfault && faults) {
		printf("sigprobe: RDTSC faulted under allow or emulate\n");
		ok = 0;
	}
	if (mayfault && !faults) {
		printf("sigprobe: RDTSC never faulted, though sigsegv was set meanwhile\n");
		ok = 0;
	}
	if (allfault && faults != reads) {
		printf("sigprobe: %lu of %lu RDTSC did not fault under sigsegv\n",
		       reads - faults, reads);
		ok = 0;
	}
	if (self_faults != self_reads) {
		printf("sigprobe: %lu of %lu RDTSC under PR_TSC_SIGSEGV did not fault\n",
		       self_reads - self_faults, self_reads);
		ok = 0;
	}
	if (back || vdso_err) {
		printf("sigprobe: CLOCK_MONOTONIC went back %lu times, failed %lu times\n",
		       back, vdso_err);
		ok = 0;
	}
	res = fopen(getenv("TSCKIT_RESULTS") ? getenv("TSCKIT_RESULTS") : "/dev/null", "a");
	if (res) {
		fprintf(res, "# fact sigprobe/%s_faults=%lu\n", argv[2], faults);
		fclose(res);
	}
	return ok ? 0 : 1;
}
