// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Opening and closing a handle, options, info and reasons, tsc_reanchor(). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* libbpf's rule: a caller built against a newer header may pass a larger
 * struct, as long as every byte this library does not know is zero. */
static int copy_opts(struct tsc_opts *dst, const struct tsc_opts *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	if (!src)
		return 0;
	if (src->sz < sizeof(size_t))
		return -EINVAL;
	for (i = sizeof(*dst); i < src->sz; i++)
		if (((const char *)src)[i])
			return -EINVAL;
	memcpy(dst, src, src->sz < sizeof(*dst) ? src->sz : sizeof(*dst));
	if (dst->fallback != TSC_FALLBACK_MONOTONIC_RAW &&
	    dst->fallback != TSC_FALLBACK_MONOTONIC)
		return -EINVAL;
	if (!dst->watcher_cpus != !dst->watcher_cpus_size ||
	    dst->watcher_cpus_size > (1 << 20))
		return -EINVAL;
	if (dst->watcher_policy == 0 && dst->watcher_priority)
		return -EINVAL;
	if (dst->watcher_policy &&
	    ((dst->watcher_policy != SCHED_FIFO && dst->watcher_policy != SCHED_RR) ||
	     dst->watcher_priority < sched_get_priority_min(dst->watcher_policy) ||
	     dst->watcher_priority > sched_get_priority_max(dst->watcher_policy)))
		return -EINVAL;
	return 0;
}

/* Where the vDSO hands out the TSC, tsc_open() decides from the CPU and
 * the vDSO alone, and the files are read after it (decide.c): an open in
 * well under 1 ms, also where a system call is slow.  Not when the
 * options ask for every fact or for a source of their own. */
static bool early(struct tsc *t, struct decision *d)
{
	if (!t->live || t->opts.all_facts || t->opts.force_fallback ||
	    t->opts.force_calibrate)
		return false;
	tsc__early_facts(t, &t->df);
	return tsc__decide_early(t, d);
}

/*
 * fork(): every open handle is in a registry; a pthread_atfork handler
 * holds each handle's lock across the fork.  In the child it closes the
 * handle's copies of the parent's fds, never writing them: whatever the
 * child does, the parent's watcher goes on.  The child's handle gets fds
 * and a watcher of its own at the child's first library call
 * (tsc__lock(), watch.c).
 *
 * The default handle (tsc_default()) is one of them, opened under a lock
 * that the fork handler takes first, so that a child never inherits it
 * held by a thread that was opening the handle.
 *
 * Lock order: default_lock, reg_lock, a handle's lock.
 */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tsc *default_t;	/* written once, under default_lock */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static struct tsc *reg_head;

/* A signal handler may fork while its thread is inside a library call
 * that holds a handle's lock: that lock is not taken again (it would
 * wait for itself), and in the child the interrupted call goes on when
 * the handler returns, with the fds it was using, and drops it.  Not
 * covered: a signal in the two instructions between taking the lock and
 * naming its owner, or in tsc_open(), tsc_close() or tsc_default()'s
 * first call (their registry locks). */
static bool held_here(const struct tsc *t)
{
	pthread_t owner = __atomic_load_n(&t->lock_owner, __ATOMIC_RELAXED);

	return owner && pthread_equal(owner, pthread_self());
}

static void fork_prepare(void)
{
	struct tsc *t;

	pthread_mutex_lock(&default_lock);
	pthread_mutex_lock(&reg_lock);
	for (t = reg_head; t; t = t->reg_next) {
		t->fork_mine = held_here(t);
		if (!t->fork_mine)
			pthread_mutex_lock(&t->lock);
		/* A watcher that has not reached its own code yet may be
		 * inside the C library's or a sanitizer's start-up, holding
		 * locks of theirs the child would inherit.  (It takes no lock
		 * of ours before it says it started.) */
		while (t->thread_on && !__atomic_load_n(&t->started, __ATOMIC_ACQUIRE))
			sched_yield();
	}
}

static void fork_parent(void)
{
	struct tsc *t;

	for (t = reg_head; t; t = t->reg_next)
		if (!t->fork_mine)
			pthread_mutex_unlock(&t->lock);
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_unlock(&default_lock);
}

/* The child has no watcher thread, and shares the parent's fds: drop
 * its copies (closing them leaves the parent's untouched).  Its own fds
 * and watcher start at its first call into the library that may start
 * them (tsc__lock()), not here: a child that forks to unshare() or exec
 * must stay single-threaded.  A handle whose lock the forking thread
 * holds keeps its fds until then: the interrupted call is using them. */
static void fork_child(void)
{
	struct tsc *t;

	for (t = reg_head; t; t = t->reg_next) {
		t->thread_on = false;
		__atomic_store_n(&t->rearm, true, __ATOMIC_RELAXED);
		/* The inline wall reads anchor once one is due (wall.c). */
		__atomic_store_n(&t->wall.slow_from,
				 __atomic_load_n(&t->anchor_next, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		if (t->fork_mine)
			continue;
		tsc__watch_stop(t);
		pthread_mutex_unlock(&t->lock);
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_unlock(&default_lock);
}

static void reg_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Once the handle is published, a call is two loads (the handle, its
 * rearm flag) and no lock, but in a forked child the first call re-arms
 * the handle as any first call on it does.  The fork handler is
 * installed before default_lock is first taken. */
TSC_API struct tsc *tsc_default(void)
{
	struct tsc *t = __atomic_load_n(&default_t, __ATOMIC_ACQUIRE);

	if (!t) {
		pthread_once(&reg_once, reg_init);
		pthread_mutex_lock(&default_lock);
		t = default_t;
		if (!t) {
			t = tsc_open(NULL);	/* fails only for ENOMEM */
			__atomic_store_n(&default_t, t, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&default_lock);
	}
	if (t && __atomic_load_n(&t->rearm, __ATOMIC_RELAXED)) {
		tsc__lock(t);
		tsc__unlock(t);
	}
	return t;
}

static bool is_default(const struct tsc *t)
{
	return t && t == __atomic_load_n(&default_t, __ATOMIC_ACQUIRE);
}

static void register_handle(struct tsc *t)
{
	pthread_once(&reg_once, reg_init);
	pthread_mutex_lock(&reg_lock);
	t->reg_prev = NULL;
	t->reg_next = reg_head;
	if (reg_head)
		reg_head->reg_prev = t;
	reg_head = t;
	pthread_mutex_unlock(&reg_lock);
}

static void unregister_handle(struct tsc *t)
{
	pthread_mutex_lock(&reg_lock);
	if (t->reg_prev)
		t->reg_prev->reg_next = t->reg_next;
	else if (reg_head == t)
		reg_head = t->reg_next;
	if (t->reg_next)
		t->reg_next->reg_prev = t->reg_prev;
	t->reg_next = t->reg_prev = NULL;
	pthread_mutex_unlock(&reg_lock);
}

TSC_API struct tsc *tsc_open(const struct tsc_opts *opts)
{
	struct decision *d;
	struct tsc *t;
	void *mem;
	int err, i;

	if (posix_memalign(&mem, 64, sizeof(*t)))
		return errno = ENOMEM, NULL;
	t = mem;
	memset(t, 0, sizeof(*t));
	t->epfd = t->timerfd = t->stopfd = -1;
	for (i = 0; i < NWATCHED; i++)
		t->wfd[i] = -1;
	t->wall_now = tsc__lib_now;
	/* The inline wall reads go out of line until the first anchor has
	 * made the mapping valid (tsc__reanchor() below): they do not look
	 * at its valid flag (tsc.h). */
	t->wall.slow_from = 0;
	err = copy_opts(&t->opts, opts);
	if (!err && t->opts.sysroot &&
	    (strlen(t->opts.sysroot) >= sizeof(t->root) - 64 || !*t->opts.sysroot))
		err = -EINVAL;
	if (err) {
		free(t);
		return errno = -err, NULL;
	}
	if (t->opts.sysroot)
		strcpy(t->root, t->opts.sysroot);
	t->opts.sysroot = NULL;	/* the caller's string need not outlive us */
	t->live = !*t->root;
	d = malloc(sizeof(*d));
	if (t->opts.watcher_cpus) {
		t->wcpus = malloc(t->opts.watcher_cpus_size);
		if (t->wcpus)
			memcpy(t->wcpus, t->opts.watcher_cpus, t->opts.watcher_cpus_size);
	}
	t->opts.watcher_cpus = NULL;
	if (!d || (t->opts.watcher_cpus_size && !t->wcpus)) {
		free(d);
		free(t->wcpus);
		free(t);
		return errno = ENOMEM, NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	tsc__lock(t);
	t->defer_perf = true;
	tsc__static_facts(t);
	t->redecide = early(t, d);
	if (!t->redecide) {
		tsc__dyn_facts(t, &t->df);
		tsc__decide(t, d);
	}
	tsc__publish(t, d);
	tsc__reanchor(t);
	t->defer_perf = false;
	tsc__unlock(t);
	/* Without fds or a thread (EMFILE, EAGAIN) the handle still decided
	 * and reads; it says that it cannot follow the kernel. */
	err = tsc__watch_start(t);
	if (err == -ENOMEM) {
		free(d);
		tsc_close(t);
		return errno = ENOMEM, NULL;
	}
	/* Under the lock: the watcher may be saying why already (place_self()). */
	tsc__lock(t);
	if (err)
		t->watch_err = err;
	if (err || *t->watch_why) {
		t->redecide = true;
		tsc__settle(t);
	}
	tsc__unlock(t);
	free(d);
	register_handle(t);
	return t;
}

/* The default handle lives until exit: closing it does nothing. */
TSC_API void tsc_close(struct tsc *t)
{
	if (!t || is_default(t))
		return;
	unregister_handle(t);
	tsc__watch_stop(t);
	pthread_mutex_destroy(&t->lock);
	free(t->wcpus);
	free(t);
}

TSC_API int tsc_get_info(struct tsc *t, struct tsc_info *info, size_t sz)
{
	if (!t || !info)
		return tsc__set_errno(-EINVAL);
	memset(info, 0, sz);
	tsc__lock(t);
	tsc__settle(t);
	memcpy(info, &t->info, sz < sizeof(t->info) ? sz : sizeof(t->info));
	tsc__unlock(t);
	return (int)(sz < sizeof(t->info) ? sz : sizeof(t->info));
}

_Static_assert(TSC_REASON_SIZE_0_4 == sizeof(int) + TSC_REASON_LEN,
	       "the 0.4 element is kind and text");

/* Each element as the caller's struct tsc_reason is: the 0.4 element
 * (sz is its size), or all of ours and then zeros (a larger struct of a
 * newer header); a size between would cut code short. */
static int get_reasons(struct tsc *t, struct tsc_reason *out, size_t n, size_t sz)
{
	size_t i, part = sz < sizeof(*out) ? sz : sizeof(*out);
	char *p = (char *)out;
	int count;

	if (!t || (!out && n) || (sz != TSC_REASON_SIZE_0_4 && sz < sizeof(*out)))
		return tsc__set_errno(-EINVAL);
	tsc__lock(t);
	tsc__settle(t);
	count = t->d.n;
	for (i = 0; i < n && i < (size_t)count; i++, p += sz) {
		memcpy(p, &t->d.r[i], part);
		memset(p + part, 0, sz - part);
	}
	tsc__unlock(t);
	return count;
}

TSC_API int tsc_get_reasons(struct tsc *t, struct tsc_reason *out, size_t n, size_t sz)
{
	return get_reasons(t, out, n, sz);
}

/* The 0.2 to 0.4 ABI: elements without code.  Programs built before
 * 0.5.0 call it by name; tsc.h now maps tsc_reasons() to the above. */
TSC_API int (tsc_reasons)(struct tsc *t, struct tsc_reason *out, size_t n)
{
	return get_reasons(t, out, n, TSC_REASON_SIZE_0_4);
}

/* An anchor now (wall.c), under the lock, which re-arms a forked child's
 * handle first (watch.c). */
TSC_API int tsc_reanchor(struct tsc *t)
{
	int err;

	if (!t)
		return tsc__set_errno(-EINVAL);
	tsc__lock(t);
	err = tsc__reanchor(t);
	tsc__unlock(t);
	return err;
}

TSC_API const char *tsc_version(void)
{
	return TSC_VERSION;
}
