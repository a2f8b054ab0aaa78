// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Watching the kernel: an epoll set over the pollable sysfs files
 * (POLLPRI wakes on change with the tsckit series), a 1 s timer (stock
 * kernels do not notify; the wall-clock mapping re-anchors; regular files
 * in a sysroot never wake), and an eventfd that stops the thread.  Every
 * wake re-reads everything: reading is what the decision is made from,
 * and it also clears the kernfs event.
 *
 * Arming (opening the files and fds) costs a system call or more each,
 * and sysfs opens are slow (0.2 ms each in a TCG guest): tsc_open() only
 * starts the thread, which arms the handle at its first pass.  Whichever
 * comes first arms it: that pass, a report (tsc__settle()) or
 * tsc_process_events() of a handle without a watcher.
 *
 * fork(): a forked child's handle gets fds and a watcher of its own at
 * the child's first library call (tsc__lock()); the fork handlers are
 * in open.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "internal.h"

/* The first NPOLLED of the files kept open (tsc__watched[], facts.c)
 * are polled: the first of the tsc0 files and the others (the series
 * notifies every tsc0 file at once). */
#define NPOLLED 4

#define ANCHOR_NS 1000000000ull
#define CALIB_TICK_NS 10000000ull	/* the timer while calibrating */
#define EARLY_NS 50000000ull		/* the first anchors' spacing, at least */

/* The TSC came into use this long ago, by the rate check's first
 * bracket (rate.c); UINT64_MAX if it is not in use or is calibrated
 * (a calibration refines itself). */
static uint64_t rate_age(const struct tsc *t)
{
	if (!t->d.usable || t->d.f.src == TSC_SRC_CALIBRATION)
		return UINT64_MAX;
	if (!t->rate.m.done)
		return 0;	/* starts at the next anchor */
	return tsc__mono_raw() - t->rate.m.start_ns;
}

/* How far apart anchors are: 1 s, but while the rate check is younger
 * than that, no further than its age (and at least 50 ms), so that a
 * frequency that is off is corrected within 50 ms, and the correction
 * tightens at 100, 200, 400 and 800 ms: the wall mapping is off by the
 * rate error times the time to the first anchor that measures it. */
static uint64_t anchor_ns(const struct tsc *t)
{
	uint64_t age = rate_age(t);

	return age >= ANCHOR_NS ? ANCHOR_NS : age < EARLY_NS ? EARLY_NS : age;
}

/* The timer's period: 10 ms while the TSC waits for factors (a
 * calibration's bound, perf's answer), 50 ms while anchors are early
 * (anchor_ns()), else 1 s.  Returns 0 or -errno. */
static int set_timer(struct tsc *t)
{
	uint64_t ns = tsc__calibrating(t) || t->d.calib_wait ? CALIB_TICK_NS :
		      rate_age(t) < ANCHOR_NS ? EARLY_NS : ANCHOR_NS;
	struct itimerspec its;

	if (t->timerfd < 0 || ns == t->timer_ns)
		return 0;
	its.it_interval.tv_sec = (time_t)(ns / 1000000000);
	its.it_interval.tv_nsec = (long)(ns % 1000000000);
	its.it_value = its.it_interval;
	if (timerfd_settime(t->timerfd, 0, &its, NULL))
		return -errno;
	t->timer_ns = ns;
	return 0;
}

static int arm(struct tsc *t);

/* One look at the kernel, under t->lock: read the files (which also
 * clears their events), decide, publish, and anchor when due or when the
 * fast path changed.  Returns 1 if it changed. */
static int look(struct tsc *t)
{
	struct decision d;
	uint64_t ticks;
	int changed;
	uint64_t every;
	bool due;

	t->redecide = false;
	if (read(t->timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
		/* nothing to do: the timer is only a wake-up */
	}
	tsc__dyn_facts(t, &t->df);
	/* While the TSC is in use, the anchor that is due comes first: its
	 * bracket is the refinement's and the rate check's (decide.c).
	 * Only while RDTSC may still run (the anchor reads the TSC). */
	every = anchor_ns(t);
	due = tsc__mono_raw() - t->last_anchor_raw >= every - every / 50;
	if (due && tsc_in_use(t) && tsc__rdtsc_allowed(t, &t->df)) {
		tsc__reanchor(t);
		due = false;
	}
	tsc__decide(t, &d);
	changed = tsc__publish(t, &d);
	if (changed || due)
		tsc__reanchor(t);
	set_timer(t);
	return changed;
}

/* Arm the handle if it is not yet, once; a failure is said in the
 * reasons (the handle reads on, without following the kernel).  A
 * kernfs file polls as changed until it is read once after its open, and
 * the decision was made from reads before the opens: unless a look
 * follows anyway (looking, or a decision to make again), the files are
 * read again here, and a change since decides again. */
static void arm_once(struct tsc *t, bool looking)
{
	struct dyn_facts now;
	int err;

	if (t->armed)
		return;
	err = arm(t);
	if (err && !t->watch_err)
		t->watch_err = err;
	if (err)
		t->redecide = true;
	if (looking || t->redecide)
		return;
	tsc__dyn_facts(t, &now);
	if (memcmp(&now, &t->df, sizeof(now)))
		t->redecide = true;
}

/* Under t->lock, before a report: arm the handle unless done, and
 * decide again if the decision in use was made from less than is known
 * (tsc_open()'s early one, or one from before fds or watcher settings
 * were refused).  Perf still waits for the watcher or
 * tsc_process_events(). */
void tsc__settle(struct tsc *t)
{
	arm_once(t, false);
	if (!t->redecide)
		return;
	t->defer_perf = true;
	look(t);
	t->defer_perf = false;
}

TSC_API int tsc_process_events(struct tsc *t)
{
	int changed;

	if (!t)
		return tsc__set_errno(-EINVAL);
	tsc__lock(t);
	arm_once(t, true);
	changed = look(t);
	tsc__unlock(t);
	return changed;
}

TSC_API int tsc_fd(struct tsc *t)
{
	int fd;

	if (!t)
		return tsc__set_errno(-EINVAL);
	tsc__lock(t);
	tsc__settle(t);
	fd = t->epfd >= 0 ? t->epfd : t->watch_err ? t->watch_err : -EBADF;
	tsc__unlock(t);
	return tsc__set_errno(fd);
}

static void say_why(struct tsc *t, const char *fmt, ...)
{
	size_t len = strlen(t->watch_why);
	va_list ap;

	if (len)
		len += (size_t)snprintf(t->watch_why + len, sizeof(t->watch_why) - len, "; ");
	if (len >= sizeof(t->watch_why))
		return;
	va_start(ap, fmt);
	vsnprintf(t->watch_why + len, sizeof(t->watch_why) - len, fmt, ap);
	va_end(ap);
}

/* The watcher's own CPUs: the housekeeping ones, where it was created
 * free to run anywhere.  What fails is said; it then runs anywhere. */
static void place_self(struct tsc *t)
{
	char why[160];
	cpu_set_t hk;
	int err = tsc__housekeeping(t->root, &hk, why, sizeof(why));

	if (err)
		snprintf(why, sizeof(why),
			 "housekeeping CPUs unknown (online: %s): the watcher may run on any CPU",
			 tsc__strerr(err));
	else if ((err = pthread_setaffinity_np(pthread_self(), sizeof(hk), &hk)))
		snprintf(why, sizeof(why),
			 "housekeeping CPUs refused (%s): the watcher may run on any CPU",
			 strerror(err));
	if (!*why)
		return;
	tsc__lock(t);
	say_why(t, "%s", why);
	tsc__unlock(t);
}

static void *watcher(void *arg)
{
	struct tsc *t = arg;
	struct epoll_event ev[8];
	int n, i;

	/* A fork() waits for this (fork_prepare(), open.c). */
	__atomic_store_n(&t->started, true, __ATOMIC_RELEASE);
	if (t->place_self)
		place_self(t);
	/* Named by itself: naming another thread writes a /proc file.
	 * After its placement: a name says the watcher is settled. */
	pthread_setname_np(pthread_self(), "tsc-watch");
	/* At once: arm, and what tsc_open() left for after it (the files,
	 * perf).  Without fds there is nothing to wait on. */
	tsc_process_events(t);
	if (t->epfd < 0)
		return NULL;
	for (;;) {
		n = epoll_wait(t->epfd, ev, 8, -1);
		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++)
			if (ev[i].data.fd == t->stopfd)
				return NULL;
		tsc_process_events(t);
	}
	return NULL;
}

static const char *policy_name(int policy)
{
	return policy == SCHED_FIFO ? "SCHED_FIFO" : policy == SCHED_RR ? "SCHED_RR" : "policy";
}

/* policy -1: the opener's policy and priority, inherited. */
static int create(struct tsc *t, const cpu_set_t *cpus, size_t size, int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	if (cpus)
		pthread_attr_setaffinity_np(&attr, size, cpus);
	if (policy >= 0) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, policy);
		pthread_attr_setschedparam(&attr, &sp);
	}
	err = pthread_create(&t->thread, &attr, watcher, t);
	pthread_attr_destroy(&attr);
	return err;
}

/* The watcher runs this library's code until tsc_close(), or for good
 * (tsc_default()).  Where the library is linked into a plugin (libtsc.a
 * in a dlopen()ed object), a dlclose() would unmap that code under it:
 * so the object that holds this code stays loaded, as libtsc.so.0 does
 * by -z nodelete: a reference of our own, never dropped, and the
 * NODELETE flag (RTLD_NOLOAD: nothing is loaded).  For the main program
 * a no-op.  dlopen() is looked up, not linked: a static program would
 * get the linker's warning about static dlopen() (and there dladdr()
 * finds nothing: there is nothing to pin). */
static void pin_code_once(void)
{
	void *(*open_fn)(const char *file, int mode);
	Dl_info di;

	if (!dladdr((const void *)pin_code_once, &di) || !di.dli_fname || !*di.dli_fname)
		return;
	*(void **)&open_fn = dlsym(RTLD_DEFAULT, "dlopen");
	if (open_fn)
		(void)open_fn(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* Once per process: a pin lasts, and the loader's lock is not taken
 * again at every open. */
static void pin_code(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, pin_code_once);
}

/* The thread is created with every signal blocked, so that it never
 * takes a process-directed signal the caller blocks later (signalfd).
 * Unless the options say otherwise, it runs SCHED_OTHER on the
 * housekeeping CPUs (cpus.c), whatever the opener's policy and CPUs:
 * an opener may be a SCHED_FIFO thread pinned to an isolated core,
 * where a watcher would never run or would take the core's time.  It is
 * created free to run on any CPU and keeps to the housekeeping ones
 * itself (place_self()), so that the opener reads no file for it.  What
 * the system refuses is dropped and said in watch_why: here, before the
 * thread runs, or by the watcher under the lock.  If even SCHED_OTHER is
 * refused, the watcher inherits the opener's policy. */
static int start_thread(struct tsc *t)
{
	const cpu_set_t *cpus = t->wcpus;
	size_t size = t->opts.watcher_cpus_size;
	int policy = t->opts.watcher_policy ? t->opts.watcher_policy : SCHED_OTHER;
	int prio = t->opts.watcher_policy ? t->opts.watcher_priority : 0;
	sigset_t all, old;
	cpu_set_t any;
	int err, c;

	pin_code();
	t->watch_why[0] = 0;
	t->place_self = !cpus;
	if (!cpus) {
		CPU_ZERO(&any);
		for (c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, &any);
		cpus = &any;
		size = sizeof(any);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = create(t, cpus, size, policy, prio);
	if (policy != SCHED_OTHER && (err == EPERM || err == EINVAL)) {
		say_why(t, "watcher %s %d refused (%s): it runs SCHED_OTHER",
			policy_name(policy), prio, strerror(err));
		policy = SCHED_OTHER;
		prio = 0;
		err = create(t, cpus, size, policy, prio);
	}
	if (err == EINVAL) {
		say_why(t, "watcher CPUs refused (%s): it runs on the opener's", strerror(err));
		cpus = NULL;
		size = 0;
		err = create(t, cpus, size, policy, prio);
	}
	/* SCHED_OTHER may be refused too: a SCHED_IDLE opener may not
	 * leave it without CAP_SYS_NICE or RLIMIT_NICE.  A watcher at the
	 * opener's policy is better than none. */
	if (err == EPERM) {
		say_why(t, "watcher SCHED_OTHER refused (%s): it runs at the opener's policy",
			strerror(err));
		err = create(t, cpus, size, -1, 0);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	t->thread_on = true;
	return 0;
}

static int add(int epfd, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void close_files(struct tsc *t)
{
	int i;

	for (i = 0; i < NWATCHED; i++) {
		if (t->wfd[i] >= 0)
			close(t->wfd[i]);
		t->wfd[i] = -1;
	}
}

/* Open the watched files of a live handle (sysfs and procfs only: epoll
 * refuses regular files).  All or none: short of fds, every read opens
 * its file as it goes, as it always may. */
void tsc__watch_files(struct tsc *t)
{
	int i;

	for (i = 0; t->live && i < NWATCHED; i++) {
		if (t->wfd[i] != -1)
			continue;
		t->wfd[i] = open(tsc__watched[i], O_RDONLY | O_CLOEXEC);
		if (t->wfd[i] < 0 && errno == ENOENT) {
			t->wfd[i] = -ENOENT;
		} else if (t->wfd[i] < 0) {
			close_files(t);
			return;
		}
	}
}

/* Open the files; make the epoll set over them, the timer and (if a
 * watcher was started) the stop eventfd.  0 or -errno; the files are
 * kept either way. */
static int arm(struct tsc *t)
{
	int err, i;

	t->armed = true;
	tsc__watch_files(t);
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	err = t->epfd < 0 || t->timerfd < 0 ? -errno : 0;
	t->timer_ns = 0;
	if (!err)
		err = set_timer(t);
	if (!err)
		err = add(t->epfd, t->timerfd, EPOLLIN);
	if (!err && t->stopfd >= 0)
		err = add(t->epfd, t->stopfd, EPOLLIN);
	/* A file that cannot be polled is still re-read on the timer. */
	for (i = 0; !err && i < NPOLLED; i++)
		if (t->wfd[i] >= 0)
			add(t->epfd, t->wfd[i], EPOLLPRI | EPOLLERR);
	if (err) {
		if (t->epfd >= 0)
			close(t->epfd);
		if (t->timerfd >= 0)
			close(t->timerfd);
		t->epfd = t->timerfd = -1;
	}
	return err;
}

/* Start following the kernel: the watcher thread, which arms the handle
 * at its first pass; a handle without one is armed by its first report,
 * tsc_fd() or tsc_process_events().  The stop eventfd is made here: a
 * tsc_close() may come before the thread's first pass. */
int tsc__watch_start(struct tsc *t)
{
	int err;

	t->armed = false;
	if (t->opts.no_watcher)
		return 0;
	t->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->stopfd < 0)
		return -errno;
	__atomic_store_n(&t->started, false, __ATOMIC_RELAXED);
	err = start_thread(t);
	if (err) {
		close(t->stopfd);
		t->stopfd = -1;
	}
	return err;
}

void tsc__watch_stop(struct tsc *t)
{
	uint64_t one = 1;

	if (t->thread_on) {
		/* An eventfd write of 1 cannot fail short of a bad fd. */
		if (write(t->stopfd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(t->thread);
		pthread_join(t->thread, NULL);
		t->thread_on = false;
	}
	close_files(t);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->timerfd >= 0)
		close(t->timerfd);
	if (t->stopfd >= 0)
		close(t->stopfd);
	t->epfd = t->timerfd = t->stopfd = -1;
	t->armed = false;
}

/* Take the handle's lock; in a forked child, first start its watching.
 * (rearm is atomic: tsc_default() and the wall reads look at it without
 * the lock.) */
void tsc__lock(struct tsc *t)
{
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->lock_owner, pthread_self(), __ATOMIC_RELAXED);
	if (__atomic_load_n(&t->rearm, __ATOMIC_RELAXED)) {
		__atomic_store_n(&t->rearm, false, __ATOMIC_RELAXED);
		__atomic_store_n(&t->wall.slow_from, UINT64_MAX, __ATOMIC_RELAXED);
		tsc__watch_stop(t);	/* copies a handler's fork left open */
		t->watch_err = tsc__watch_start(t);
	}
}
