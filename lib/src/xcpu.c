// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Cross-CPU consistency: one thread pinned to each CPU of the affinity
 * set.  A spinlock makes "read the TSC, compare with the last value any
 * CPU wrote, write mine" one step in a global order; a read below the
 * previous writer's value went back in time across CPUs.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct xshared {
	struct tsc *t;
	int lock;
	int go, stop;
	int ready;
	uint64_t last;
	int last_cpu;
	struct tsc_xcpu_result r;
};

struct xthread {
	struct xshared *s;
	int cpu;
	pthread_t th;
};

static void *run(void *arg)
{
	struct xthread *x = arg;
	struct xshared *s = x->s;

	__atomic_fetch_add(&s->ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
		tsc__pause();
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		uint64_t now;

		while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
			tsc__pause();
		now = tsc_rdtsc_ordered(s->t);
		if (s->r.reads && now < s->last) {
			s->r.backward++;
			if (s->last - now > s->r.worst_ticks) {
				s->r.worst_ticks = s->last - now;
				s->r.worst_from_cpu = s->last_cpu;
				s->r.worst_to_cpu = x->cpu;
			}
		}
		s->last = now;
		s->last_cpu = x->cpu;
		s->r.reads++;
		__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

TSC_API int tsc_xcpu_check(struct tsc *t, unsigned int ms,
			   struct tsc_xcpu_result *res, size_t sz)
{
	struct xshared s;
	struct xthread *x;
	cpu_set_t *set = NULL, *one = NULL;
	pthread_attr_t attr;
	size_t size = 0;
	int cpu, ncpus, n = 0, i, err = 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };

	if (!t || !res || ms == 0 || ms > 600000)
		return tsc__set_errno(-EINVAL);
	tsc__lock(t);
	tsc__settle(t);
	err = t->d.rdtsc_ok ? 0 : -ENODEV;
	tsc__unlock(t);
	if (err)
		return tsc__set_errno(err);
	/* Sets sized for the machine, not for CPU_SETSIZE (1024). */
	for (ncpus = 1024;; ncpus *= 2) {
		set = CPU_ALLOC(ncpus);
		size = CPU_ALLOC_SIZE(ncpus);
		if (!set)
			return tsc__set_errno(-ENOMEM);
		if (!sched_getaffinity(0, size, set))
			break;
		err = -errno;
		CPU_FREE(set);
		if (err != -EINVAL || ncpus >= (1 << 22))
			return tsc__set_errno(err);
	}
	err = 0;
	one = CPU_ALLOC(ncpus);
	x = one ? calloc(CPU_COUNT_S(size, set), sizeof(*x)) : NULL;
	if (!x) {
		CPU_FREE(set);
		CPU_FREE(one);
		return tsc__set_errno(-ENOMEM);
	}
	memset(&s, 0, sizeof(s));
	s.t = t;
	s.r.worst_from_cpu = s.r.worst_to_cpu = -1;
	pthread_attr_init(&attr);
	for (cpu = 0; cpu < ncpus && !err; cpu++) {
		if (!CPU_ISSET_S(cpu, size, set))
			continue;
		CPU_ZERO_S(size, one);
		CPU_SET_S(cpu, size, one);
		pthread_attr_setaffinity_np(&attr, size, one);
		x[n].s = &s;
		x[n].cpu = cpu;
		err = -pthread_create(&x[n].th, &attr, run, &x[n]);
		if (!err)
			n++;
	}
	pthread_attr_destroy(&attr);
	while (__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE) < n)
		sched_yield();
	__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
	if (!err)
		nanosleep(&ts, NULL);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		pthread_join(x[i].th, NULL);
	free(x);
	CPU_FREE(set);
	CPU_FREE(one);
	if (err)
		return tsc__set_errno(err);
	s.r.cpus = n;
	s.r.worst_ns = tsc_delta_to_ns(t, s.r.worst_ticks);
	memset(res, 0, sz);
	memcpy(res, &s.r, sz < sizeof(s.r) ? sz : sizeof(s.r));
	return 0;
}
