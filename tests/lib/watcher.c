// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The watcher thread: it takes no signal (a SIGTERM blocked after open
 * and read from a signalfd does not kill the process; its mask holds
 * every signal), it is named
 * tsc-watch, it runs on the CPUs and at the policy asked for, and says
 * so when the system refuses them (even SCHED_OTHER, to a SCHED_IDLE
 * opener).  Without fds or a thread (EMFILE,
 * EAGAIN) tsc_open() still gives a handle that decides and reads, and
 * says it cannot follow the kernel.  Each case runs in a child.  In
 * the guest (T_GUEST) the signalfd case's handle must use the live TSC.
 */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"

/* The tid of the thread named tsc-watch, or -1 (after 5 s). */
static pid_t watcher_tid(void)
{
	pid_t tid;

	t_await_watchers(1, &tid);
	return tid;
}

/* The same, at once: -1 if there is none now. */
static pid_t watcher_tid_now(void)
{
	pid_t tid;

	t_watchers(&tid);
	return tid;
}

/* Does thread tid block every signal that can be blocked?  Its SigBlk
 * against sigfillset()'s set (glibc keeps its own two out), less SIGKILL
 * and SIGSTOP. */
static bool blocks_all(pid_t tid)
{
	unsigned long long blk = 0, want = 0;
	char p[64], l[256];
	sigset_t all;
	FILE *f;
	int sig;

	snprintf(p, sizeof(p), "/proc/self/task/%d/status", (int)tid);
	f = fopen(p, "r");
	while (f && fgets(l, sizeof(l), f))
		if (sscanf(l, "SigBlk: %llx", &blk) == 1)
			break;
	if (f)
		fclose(f);
	sigfillset(&all);
	for (sig = 1; sig <= 64; sig++)
		if (sigismember(&all, sig) > 0 && sig != SIGKILL && sig != SIGSTOP)
			want |= 1ull << (sig - 1);
	if ((blk & want) != want)
		printf("# tsc-watch SigBlk %016llx, want %016llx\n", blk, want);
	return (blk & want) == want;
}

static void sigterm_to_signalfd(void)
{
	struct signalfd_siginfo si;
	struct pollfd p;
	sigset_t set;
	struct tsc *t = tsc_open(NULL);
	int got = 0, k;

	CHECK(t, "open");
	t_live_tsc(t);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* after open, as a server does */
	p.fd = signalfd(-1, &set, SFD_CLOEXEC);
	p.events = POLLIN;
	/* Which thread the kernel picks varies: a watcher that does not
	 * block SIGTERM was seen to kill the process once in three. */
	for (k = 0; k < 20; k++) {
		kill(getpid(), SIGTERM);
		if (poll(&p, 1, 2000) == 1 && read(p.fd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo == SIGTERM)
			got++;
		else
			FAIL("SIGTERM %d not read from the signalfd", k);
		t_sleep_ms(5);
	}
	printf("# figure: %d of 20 SIGTERMs read from the signalfd, the watcher running\n", got);
	t_fact("sigterm_read", "%d", got);
	t_fact("usable_end", "%d", tsc_in_use(t));
	CHECK(watcher_tid() > 0, "no thread named tsc-watch");
	CHECK(watcher_tid() > 0 && blocks_all(watcher_tid()),
	      "tsc-watch does not block every signal");
	tsc_close(t);
	/* pthread_join() returns once the exiting thread cleared its tid,
	 * a little before the kernel takes it out of /proc/self/task: a
	 * window of milliseconds under QEMU TCG. */
	for (k = 0; k < 100 && watcher_tid_now() > 0; k++)
		t_sleep_ms(10);
	if (k)
		printf("# tsc-watch left /proc/self/task %d ms after tsc_close()\n", k * 10);
	CHECK(watcher_tid_now() < 0, "tsc-watch still there 1 s after tsc_close()");
}

static void cpus_and_policy(void)
{
	cpu_set_t one, got;
	struct tsc *t;
	pid_t tid;

	CPU_ZERO(&one);
	sched_getaffinity(0, sizeof(got), &got);
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)	/* the last allowed CPU */
		if (CPU_ISSET(c, &got)) {
			CPU_SET(c, &one);
			break;
		}
	TSC_OPTS(o, .watcher_cpus = &one, .watcher_cpus_size = sizeof(one),
		 .watcher_policy = SCHED_FIFO, .watcher_priority = 10);
	t = tsc_open(&o);
	CHECK(t, "open with watcher options");
	if (!t)
		return;
	tid = watcher_tid();
	CHECK(tid > 0 && !sched_getaffinity(tid, sizeof(got), &got) && CPU_EQUAL(&got, &one),
	      "watcher not on the CPU asked for");
	if (geteuid() == 0) {
		CHECK(sched_getscheduler(tid) == SCHED_FIFO, "watcher not SCHED_FIFO (%d)",
		      sched_getscheduler(tid));
		CHECK(!t_reason(t, "refused"), "root was refused");
	}
	tsc_close(t);
}

/* The live housekeeping CPUs as the kernel lists them: online, less
 * isolated and nohz_full; all online if that leaves none. */
static void housekeeping(cpu_set_t *set)
{
	static const char *const files[] = { "online", "isolated", "nohz_full" };
	char path[64], line[1024], *tok, *save;
	cpu_set_t lists[3];
	unsigned int a, b;
	int k;
	FILE *f;

	for (k = 0; k < 3; k++) {
		CPU_ZERO(&lists[k]);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", files[k]);
		f = fopen(path, "r");
		if (!f || !fgets(line, sizeof(line), f))
			line[0] = 0;
		if (f)
			fclose(f);
		for (tok = strtok_r(line, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
			if (sscanf(tok, "%u-%u", &a, &b) == 1)
				b = a;
			for (; a <= b && a < CPU_SETSIZE; a++)
				CPU_SET(a, &lists[k]);
		}
	}
	CPU_OR(&lists[1], &lists[1], &lists[2]);
	CPU_XOR(set, &lists[0], &lists[1]);
	CPU_AND(set, set, &lists[0]);
	if (!CPU_COUNT(set))
		*set = lists[0];
}

/* An opener pinned to one CPU, SCHED_FIFO where it may be: by default
 * the watcher runs SCHED_OTHER on the housekeeping CPUs, not on the
 * opener's CPU at the opener's policy. */
static void pinned_opener(void)
{
	struct sched_param sp = { .sched_priority = 10 };
	cpu_set_t one, want, got;
	bool fifo;
	struct tsc *t;
	pid_t tid;
	int c;

	housekeeping(&want);
	CPU_ZERO(&one);
	sched_getaffinity(0, sizeof(got), &got);
	for (c = CPU_SETSIZE - 1; c >= 0 && !CPU_ISSET(c, &got); c--)
		;
	CPU_SET(c, &one);
	CHECK(!sched_setaffinity(0, sizeof(one), &one), "pin to CPU %d: %s", c, strerror(errno));
	fifo = !sched_setscheduler(0, SCHED_FIFO, &sp);
	printf("# opener on CPU %d, %s; %d housekeeping CPUs\n", c,
	       fifo ? "SCHED_FIFO 10" : "SCHED_OTHER (FIFO refused)", CPU_COUNT(&want));
	t = tsc_open(NULL);
	CHECK(t, "open: %s", strerror(errno));
	if (!t)
		return;
	tid = watcher_tid();
	CHECK(tid > 0, "no watcher");
	CHECK(sched_getscheduler(tid) == SCHED_OTHER, "watcher policy %d, want SCHED_OTHER",
	      sched_getscheduler(tid));
	CHECK(!sched_getaffinity(tid, sizeof(got), &got) && CPU_EQUAL(&got, &want),
	      "watcher on %d CPUs, not the %d housekeeping ones", CPU_COUNT(&got),
	      CPU_COUNT(&want));
	tsc_close(t);
	if (geteuid() == 0)
		CHECK(fifo, "root could not become SCHED_FIFO: the FIFO case did not run");
}

/* A kernel that isolates CPU 1 of 0-1: the watcher keeps to CPU 0.
 * (The dump's CPU lists, as every fact of a sysroot.) */
static void isolated_cpu(void)
{
	char root[] = "/tmp/tsc-watcher-XXXXXX";
	cpu_set_t got;
	struct tsc *t;
	pid_t tid;

	CHECK(mkdtemp(root), "mkdtemp");
	t_mkroot(root, 1000000);
	t_write(root, "sys/devices/system/cpu/online", "0-1\n");
	t_write(root, "sys/devices/system/cpu/isolated", "1\n");
	t_write(root, "sys/devices/system/cpu/nohz_full", "(null)\n");
	TSC_OPTS(o, .sysroot = root);
	t = tsc_open(&o);
	CHECK(t, "open %s: %s", root, strerror(errno));
	tid = t ? watcher_tid() : -1;
	CHECK(tid > 0 && !sched_getaffinity(tid, sizeof(got), &got) && CPU_COUNT(&got) == 1 &&
	      CPU_ISSET(0, &got), "watcher not on CPU 0 alone (%d CPUs)", CPU_COUNT(&got));
	CHECK(t && !t_reason(t, "refused"), "housekeeping CPU refused");
	tsc_close(t);
	t_rmroot(root);
}

/* A dump without CPU lists: each watcher says so, under the lock, while
 * its opener settles the handle (TSan: the two never race). */
static void housekeeping_unknown(void)
{
	char root[] = "/tmp/tsc-watcher-XXXXXX";
	pid_t tid = -1, prev = -1;
	struct tsc *t;
	int k, i, said = 0;

	CHECK(mkdtemp(root), "mkdtemp");
	t_mkroot(root, 1000000);
	TSC_OPTS(o, .sysroot = root);
	for (k = 0; k < 20; k++) {
		t = tsc_open(&o);
		CHECK(t, "open %s: %s", root, strerror(errno));
		if (!t)
			break;
		/* Named once placed: a look after that holds what it said.
		 * The last handle's watcher, joined, may still show in /proc
		 * while it exits (seen in a loaded QEMU guest): not that one. */
		for (i = 0; i < 1000 && ((tid = watcher_tid_now()) <= 0 || tid == prev); i++)
			usleep(10000);
		CHECK(tid > 0 && tid != prev, "no watcher");
		prev = tid;
		tsc_process_events(t);
		said += t_reason(t, "housekeeping CPUs unknown") != 0;
		tsc_close(t);
	}
	CHECK(said == 20, "%d of 20 handles said the housekeeping CPUs are unknown", said);
	t_rmroot(root);
}

/* As root, become nobody (the cases below need an unprivileged task). */
static bool unprivileged(void)
{
	if (geteuid() == 0 && setuid(65534)) {
		FAIL("setuid(65534): %s: the unprivileged case did not run", strerror(errno));
		return false;
	}
	return true;
}

/* CPUs this process may not use: refused, said, and the watcher runs. */
static void cpus_refused(void)
{
	cpu_set_t none;
	struct tsc *t;

	CPU_ZERO(&none);
	CPU_SET(CPU_SETSIZE - 1, &none);
	TSC_OPTS(o, .watcher_cpus = &none, .watcher_cpus_size = sizeof(none));
	t = tsc_open(&o);
	CHECK(t, "open: refused CPUs must not fail it: %s", strerror(errno));
	if (!t)
		return;
	CHECK(t_reason(t, "watcher CPUs refused"), "no reason for the refused CPUs");
	CHECK(watcher_tid() > 0, "no watcher on the inherited CPUs");
	tsc_close(t);
}

/* Unprivileged: SCHED_FIFO is refused, and said. */
static void refused(void)
{
	struct rlimit r = { 0, 0 };
	struct tsc *t;

	setrlimit(RLIMIT_RTPRIO, &r);
	if (!unprivileged())
		return;
	TSC_OPTS(o, .watcher_policy = SCHED_RR, .watcher_priority = 5);
	t = tsc_open(&o);
	CHECK(t, "open: a refused policy must not fail it: %s", strerror(errno));
	if (!t)
		return;
	CHECK(t_reason(t, "watcher SCHED_RR 5 refused"), "no reason for the refused policy");
	CHECK(watcher_tid() > 0, "no watcher at the inherited policy");
	tsc_close(t);
}

/* Unprivileged SCHED_IDLE opener: the kernel refuses it SCHED_OTHER
 * (RLIMIT_NICE 0), so the watcher inherits SCHED_IDLE, and says so,
 * rather than not running at all. */
static void idle_opener(void)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct rlimit r = { 0, 0 };
	struct tsc *t;
	pid_t tid;
	int pol;

	setrlimit(RLIMIT_NICE, &r);
	if (!unprivileged())
		return;
	CHECK(!sched_setscheduler(0, SCHED_IDLE, &sp), "SCHED_IDLE: %s", strerror(errno));
	t = tsc_open(NULL);
	CHECK(t, "open: %s", strerror(errno));
	if (!t)
		return;
	tid = watcher_tid();
	CHECK(tid > 0, "no watcher");
	pol = tid > 0 ? sched_getscheduler(tid) : -1;
	printf("# SCHED_IDLE opener: watcher policy %d\n", pol);
	CHECK(pol == SCHED_OTHER || (pol == SCHED_IDLE && t_reason(t, "watcher SCHED_OTHER refused")),
	      "watcher policy %d, or not said", pol);
	CHECK(!t_reason(t, "cannot follow the kernel"), "no watcher thread");
	tsc_close(t);
}

/* No fds (ulimit -n 3: none to spare; 4: one), with and without a
 * watcher: the handle decides and reads, and says it cannot follow. */
static void no_fds(void)
{
	struct rlimit r;
	struct tsc *t;
	uint64_t a, b;
	int k;

	getrlimit(RLIMIT_NOFILE, &r);
	for (k = 0; k < 4; k++) {
		rlim_t lim = 3 + (k >> 1);
		bool watcher = k & 1;

		r.rlim_cur = lim;
		setrlimit(RLIMIT_NOFILE, &r);
		TSC_OPTS(o, .no_watcher = !watcher);
		t = tsc_open(&o);
		CHECK(t, "open, ulimit -n %d, %s: %s", (int)lim,
		      watcher ? "watcher" : "no_watcher", strerror(errno));
		if (!t)
			continue;
		printf("# ulimit -n %d, %s: the TSC is %sin use\n", (int)lim,
		       watcher ? "watcher" : "no_watcher", tsc_in_use(t) ? "" : "not ");
		a = tsc_now_ns(t);
		b = tsc_now_ns(t);
		CHECK(a && b >= a, "reads");
		CHECK(tsc_fd(t) < 0, "tsc_fd() without fds (ulimit -n %d)", (int)lim);
		CHECK(t_reason(t, "cannot follow the kernel"),
		      "no reason for the missing fds (ulimit -n %d, %s)", (int)lim,
		      watcher ? "watcher" : "no_watcher");
		tsc_close(t);
	}
}

/* No thread (EAGAIN: RLIMIT_NPROC for an unprivileged user). */
static void no_thread(void)
{
	struct rlimit r = { 0, 0 };
	struct tsc *t;

	if (!unprivileged())
		return;
	setrlimit(RLIMIT_NPROC, &r);
	t = tsc_open(NULL);
	CHECK(t, "open with no thread to spare: %s", strerror(errno));
	if (!t)
		return;
	CHECK(tsc_now_ns(t) > 0, "reads");
	CHECK(t_reason(t, "cannot follow the kernel"), "no reason for the missing thread");
	CHECK(tsc_fd(t) >= 0, "the fd is still there for the caller's loop");
	tsc_close(t);
}

static void run(const char *name, void (*fn)(void))
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		t_failed = 0;	/* this case's own verdict, not the ones before */
		alarm(20);
		fn();
		fflush(stdout);
		_exit(t_failed);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "%s: %s %d", name,
	      WIFEXITED(st) ? "failed, status" : "killed by signal",
	      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

int main(void)
{
	run("SIGTERM to a signalfd", sigterm_to_signalfd);
	run("watcher CPUs and policy", cpus_and_policy);
	run("refused CPUs", cpus_refused);
	run("pinned, SCHED_FIFO opener", pinned_opener);
	run("an isolated CPU", isolated_cpu);
	run("housekeeping CPUs unknown", housekeeping_unknown);
	run("refused policy", refused);
	run("SCHED_IDLE opener", idle_opener);
	run("no fds", no_fds);
	run("no thread", no_thread);
	DONE();
}
