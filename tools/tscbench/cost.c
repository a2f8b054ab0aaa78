// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Cost per call.  Each method runs in batches of about the same length
 * (sized once), and every round runs one batch of every method, in a new
 * order each round, so frequency changes, interrupts, neighbours and what
 * the previous method left in caches hit all methods alike.  A batch is timed in TSC ticks
 * (LFENCE;RDTSC on both sides) and in ns (ticks through the library's
 * factors when it has any, else CLOCK_MONOTONIC_RAW around the batch).
 * Then the same batches on 1..N pinned threads at once: throughput.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tscbench.h"

static volatile uint64_t sink;

/* How long n calls take, ns: timed as the cost run times them (TSC ticks
 * through the factors when there are any: a clock_gettime() that is a
 * slow syscall would otherwise swamp short batches). */
static double time_batch(const struct env *e, const struct method *m, unsigned long n)
{
	uint64_t t0, t1;

	if (e->info.src != TSC_SRC_NONE && e->rdtsc_ok) {
		t0 = ticks_ordered();
		sink += m->batch(n);
		t1 = ticks_ordered();
		return (double)tsc_delta_to_ns(e->t, t1 - t0);
	}
	t0 = now_ns(CLOCK_MONOTONIC_RAW);
	sink += m->batch(n);
	t1 = now_ns(CLOCK_MONOTONIC_RAW);
	return (double)(t1 - t0);
}

/* Calls per batch so that one batch takes about target_ns. */
static unsigned long size_batch(const struct env *e, const struct method *m,
				double target_ns)
{
	unsigned long n = 1;
	double t;

	for (;;) {
		t = time_batch(e, m, n);
		if (t >= target_ns / 2 || n >= (1ul << 30))
			break;
		n *= 2;
	}
	n = (unsigned long)((double)n * target_ns / (t > 1 ? t : 1));
	return n ? n : 1;
}

/* xorshift64: a fixed sequence, so runs are alike. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void cost_run(const struct cfg *cfg, struct env *e)
{
	double target = cfg->quick ? 20e3 : 100e3;
	double *ns[64], *tk[64];
	int idx[64], order[64], k = 0, i, r;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	bool factors = e->info.src != TSC_SRC_NONE && e->rdtsc_ok;
	int bare = method_index("rdtsc");

	for (i = 0; i < nmethods && k < 64; i++) {
		struct method *m = &methods[i];

		if (!m->selected || !m->avail)
			continue;
		m->batch(16);	/* warm: page in, resolve, fill caches */
		m->per_batch = size_batch(e, m, target);
		ns[k] = calloc(cfg->rounds, sizeof(double));
		tk[k] = calloc(cfg->rounds, sizeof(double));
		if (!ns[k] || !tk[k]) {
			tool_warn("out of memory");
			exit(EXIT_RUNTIME);
		}
		idx[k++] = i;
	}
	for (i = 0; i < k; i++)
		order[i] = i;
	for (r = 0; r < (int)cfg->rounds; r++) {
		if (r % 20 == 0)
			progress("cost: round %d of %lu", r + 1, cfg->rounds);
		/* A new order every round: every method follows each other
		 * one in turn, and drift is spread over all alike. */
		for (i = k - 1; i > 0; i--) {
			int s = (int)(next_random(&seed) % (uint64_t)(i + 1)), tmp = order[i];

			order[i] = order[s];
			order[s] = tmp;
		}
		for (i = 0; i < k; i++) {
			int j = order[i];
			struct method *m = &methods[idx[j]];
			uint64_t c0, c1, t0 = 0, t1 = 0;

			c0 = now_ns(CLOCK_MONOTONIC_RAW);
			if (e->rdtsc_ok)
				t0 = ticks_ordered();
			sink += m->batch(m->per_batch);
			if (e->rdtsc_ok)
				t1 = ticks_ordered();
			c1 = now_ns(CLOCK_MONOTONIC_RAW);
			tk[j][r] = e->rdtsc_ok ? (double)(t1 - t0) / m->per_batch : NAN;
			ns[j][r] = factors ? (double)tsc_delta_to_ns(e->t, t1 - t0) / m->per_batch :
					     (double)(c1 - c0) / m->per_batch;
		}
	}
	for (i = 0; i < k; i++) {
		struct method *m = &methods[idx[i]];

		m->batches = cfg->rounds;
		dist_of(ns[i], cfg->rounds, &m->ns);
		if (e->rdtsc_ok)
			dist_of(tk[i], cfg->rounds, &m->ticks);
		else
			m->ticks.median = m->ticks.p10 = m->ticks.p90 = NAN;
		free(ns[i]);
		free(tk[i]);
	}
	for (i = 0; i < k; i++) {
		struct method *m = &methods[idx[i]];
		const struct method *b = &methods[bare];

		if (b->avail && b->batches && b->ticks.median > 0 && !isnan(m->ticks.median))
			m->ratio = m->ticks.median / b->ticks.median;
		else if (b->avail && b->batches && b->ns.median > 0)
			m->ratio = m->ns.median / b->ns.median;
	}
}

struct tshared {
	const struct method *m;
	int go, stop, ready;
};

struct tthread {
	struct tshared *s;
	int cpu;
	pthread_t th;
	uint64_t calls, elapsed_ns;
};

static void *tp_thread(void *arg)
{
	struct tthread *x = arg;
	struct tshared *s = x->s;
	cpu_set_t set;
	uint64_t t0, calls = 0, sum = 0;

	CPU_ZERO(&set);
	CPU_SET(x->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	__atomic_fetch_add(&s->ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	t0 = now_ns(CLOCK_MONOTONIC_RAW);
	/* At least one batch: on a loaded machine a thread may get no CPU
	 * before stop, and a rate of zero calls says nothing. */
	do {
		sum += s->m->batch(s->m->per_batch);
		calls += s->m->per_batch;
	} while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED));
	x->elapsed_ns = now_ns(CLOCK_MONOTONIC_RAW) - t0;
	x->calls = calls;
	sink += sum;
	return NULL;
}

/* Thread counts: 1..8, then doubling, and always the maximum. */
static int thread_steps(unsigned int max, unsigned int *out)
{
	unsigned int n = 0, k;

	for (k = 1; k <= max && n < MAX_THREADS_STEPS; k = k < 8 ? k + 1 : k * 2)
		out[n++] = k;
	if (n && out[n - 1] != max) {
		if (n == MAX_THREADS_STEPS)
			n--;
		out[n++] = max;
	}
	return (int)n;
}

static int tp_step(struct method *m, const struct env *e, unsigned int k,
		   double seconds, struct tput *out)
{
	struct tshared s = { .m = m };
	struct tthread *x = calloc(k, sizeof(*x));
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	double rate = 0, per[1024];
	unsigned int i, started = 0;
	int err = 0;
	struct dist d;

	if (!x)
		return -ENOMEM;
	for (i = 0; i < k; i++) {
		x[i].s = &s;
		x[i].cpu = e->cpus[i];
		err = pthread_create(&x[i].th, NULL, tp_thread, &x[i]);
		if (err)
			break;
		started++;
	}
	while (__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE) < (int)started)
		sched_yield();
	__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
	if (!err)
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++) {
		pthread_join(x[i].th, NULL);
		per[i] = x[i].calls ? (double)x[i].elapsed_ns / (double)x[i].calls : NAN;
		if (x[i].elapsed_ns)
			rate += (double)x[i].calls / (double)x[i].elapsed_ns * 1e3;
	}
	if (!err) {
		dist_of(per, k, &d);
		out->threads = k;
		out->ns_per_call = d.median;
		out->mcalls_per_s = rate;
	}
	free(x);
	return -err;
}

/* The round of one method's step with the median ns per call, whole
 * (its calls per second are that round's). */
static void tp_median(const struct tput *r, int rounds, struct tput *out)
{
	int i, j, below, same;

	for (i = 0; i < rounds; i++) {
		for (j = below = same = 0; j < rounds; j++) {
			below += r[j].ns_per_call < r[i].ns_per_call;
			same += r[j].ns_per_call == r[i].ns_per_call;
		}
		if (below <= rounds / 2 && below + same > rounds / 2)
			break;
	}
	*out = r[i < rounds ? i : 0];
}

/* TP_ROUNDS rounds, each every method on every step in turn, so that
 * other load on the CPUs hits all alike; each step's figure is its
 * median round, and each round's last step over its first is kept
 * (the goals compare a method's with bare RDTSC's of the same round). */
void throughput_run(const struct cfg *cfg, struct env *e)
{
	unsigned int max = (unsigned int)e->ncpus, steps[MAX_THREADS_STEPS];
	double seconds = cfg->quick ? 0.01 : 0.04;
	int nsteps, i, j, r, err;
	struct tput *all;
	bool *failed;

	if (cfg->threads_set && cfg->threads < max)
		max = (unsigned int)cfg->threads;
	if (!max)
		return;
	nsteps = thread_steps(max, steps);
	all = calloc((size_t)nmethods * MAX_THREADS_STEPS * TP_ROUNDS, sizeof(*all));
	failed = calloc((size_t)nmethods, sizeof(*failed));
	if (!all || !failed) {
		tool_warn("throughput: %s", strerror(ENOMEM));
		goto out;
	}
#define TP(i, j, r) (&all[((size_t)(i) * MAX_THREADS_STEPS + (j)) * TP_ROUNDS + (r)])
	for (r = 0; r < TP_ROUNDS; r++) {
		progress("throughput: round %d of %d, 1..%u threads", r + 1, TP_ROUNDS, max);
		for (i = 0; i < nmethods; i++) {
			struct method *m = &methods[i];

			if (!m->selected || !m->avail || !m->per_batch || failed[i])
				continue;
			for (j = 0; j < nsteps; j++) {
				err = tp_step(m, e, steps[j], seconds, TP(i, j, r));
				if (err) {
					tool_warn("throughput of %s with %u threads: %s", m->name,
						  steps[j], strerror(-err));
					failed[i] = true;
					break;
				}
			}
		}
	}
	for (i = 0; i < nmethods; i++) {
		struct method *m = &methods[i];

		if (!m->selected || !m->avail || !m->per_batch || failed[i])
			continue;
		for (j = 0; j < nsteps; j++)
			tp_median(TP(i, j, 0), TP_ROUNDS, &m->tp[j]);
		m->ntp = nsteps;
		for (r = 0; r < TP_ROUNDS; r++)
			m->n_over_1[r] = TP(i, nsteps - 1, r)->ns_per_call /
					 TP(i, 0, r)->ns_per_call;
		m->nrounds = TP_ROUNDS;
	}
#undef TP
out:
	free(all);
	free(failed);
}
