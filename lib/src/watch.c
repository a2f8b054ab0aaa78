// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Watching the kernel: an epoll set over the pollable sysfs files
 * (POLLPRI wakes on change with the tsckit series), a 1 s timer (stock
 * kernels do not notify; the wall-clock mapping re-anchors; regular files
 * in a sysroot never wake), and an eventfd that stops the thread.  Every
 * wake re-reads everything: reading is what the decision is made from,
 * and it also clears the kernfs event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "internal.h"

static const char *const watched[] = {
	P_STABLE, P_KHZ, P_MULT, P_SHIFT, P_CS, P_CS_VDSO, P_TSC_USER,
};

#define ANCHOR_NS 1000000000ull

static void drain(int fd)
{
	char b[64];

	while (fd >= 0 && pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b))
		;
}

TSC_API int tsc_process_events(struct tsc *t)
{
	struct decision d;
	uint64_t ticks;
	int i, changed;

	if (!t)
		return tsc__set_errno(-EINVAL);
	pthread_mutex_lock(&t->lock);
	if (read(t->timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
		/* nothing to do: the timer is only a wake-up */
	}
	for (i = 0; i < t->nwatch; i++)
		drain(t->watch_fd[i]);
	tsc__dyn_facts(t, &t->df);
	tsc__decide(t, &d);
	changed = tsc__publish(t, &d);
	if (changed || tsc__mono_raw() - t->last_anchor_raw >= ANCHOR_NS - ANCHOR_NS / 50)
		tsc__reanchor(t);
	pthread_mutex_unlock(&t->lock);
	return changed;
}

TSC_API int tsc_fd(struct tsc *t)
{
	if (!t)
		return tsc__set_errno(-EINVAL);
	return t->epfd;
}

static void *watcher(void *arg)
{
	struct tsc *t = arg;
	struct epoll_event ev[8];
	int n, i;

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

static int add(int epfd, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int tsc__watch_start(struct tsc *t)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	char p[4200];
	size_t i;
	int err;

	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	t->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->epfd < 0 || t->timerfd < 0 || t->stopfd < 0)
		return -errno;
	if (timerfd_settime(t->timerfd, 0, &its, NULL))
		return -errno;
	err = add(t->epfd, t->timerfd, EPOLLIN);
	if (!err)
		err = add(t->epfd, t->stopfd, EPOLLIN);
	if (err)
		return err;
	/* Sysfs files only: epoll refuses regular files (EPERM). */
	for (i = 0; t->live && i < ARRAY_SIZE(watched); i++) {
		int fd;

		snprintf(p, sizeof(p), "%s%s", t->root, watched[i]);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		drain(fd);
		if (add(t->epfd, fd, EPOLLPRI | EPOLLERR)) {
			close(fd);
			continue;
		}
		t->watch_fd[t->nwatch++] = fd;
	}
	if (t->opts.no_watcher)
		return 0;
	err = pthread_create(&t->thread, NULL, watcher, t);
	if (err)
		return -err;
	t->thread_on = true;
	return 0;
}

void tsc__watch_stop(struct tsc *t)
{
	uint64_t one = 1;
	int i;

	if (t->thread_on) {
		/* An eventfd write of 1 cannot fail short of a bad fd. */
		if (write(t->stopfd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(t->thread);
		pthread_join(t->thread, NULL);
		t->thread_on = false;
	}
	for (i = 0; i < t->nwatch; i++)
		close(t->watch_fd[i]);
	t->nwatch = 0;
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->timerfd >= 0)
		close(t->timerfd);
	if (t->stopfd >= 0)
		close(t->stopfd);
}
