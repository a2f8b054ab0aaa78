// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * What each read promises across switches (3000 of them, TSC <-> the
 * fallback clock and factor changes of 1%, on a made-up sysroot), with 2
 * reader threads:
 *  - within one thread, neither tsc_now_ns() nor tsc_now_ns_ordered()
 *    ever goes back;
 *  - between threads, an ordered read that starts after another thread's
 *    read returned (seen through an atomic) is not below it;
 *  - an unordered read promises nothing between threads: RDTSC may run
 *    before the atomic is read.  On a 2-vCPU EPYC VM, without any switch,
 *    such reads came out below another thread's earlier one by up to
 *    62 us, while ordered reads never did.  The figure is printed only.
 */
#include <pthread.h>

#include "t.h"

#define STABLE "sys/devices/system/tsc/tsc0/tsc_stable"

static struct tsc *h;
static int stop;
static uint64_t last[2];	/* latest value any thread read, per kind */
static uint64_t own_back[2], cross_back[2], cross_worst[2], reads;

static void max_store(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELEASE,
						       __ATOMIC_RELAXED))
		;
}

static void *reader(void *arg)
{
	uint64_t prev[2] = { 0, 0 }, seen, v, n = 0;
	int kind;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		kind = n & 1;	/* 0 unordered, 1 ordered */
		seen = __atomic_load_n(&last[kind], __ATOMIC_ACQUIRE);
		v = kind ? tsc_now_ns_ordered(h) : tsc_now_ns(h);
		if (v < prev[kind])
			__atomic_fetch_add(&own_back[kind], 1, __ATOMIC_RELAXED);
		if (v < seen) {
			__atomic_fetch_add(&cross_back[kind], 1, __ATOMIC_RELAXED);
			max_store(&cross_worst[kind], seen - v);
		}
		prev[kind] = v;
		max_store(&last[kind], v);
		n++;
	}
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	char root[] = "/tmp/tsc-order-XXXXXX";
	struct tsc_info i;
	pthread_t th[2];
	uint64_t khz;
	int k;

	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	khz = t_host_khz();
	t_mkroot(root, khz);
	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	h = tsc_open(&o);
	CHECK(h, "open");
	if (!h)
		DONE();
	for (k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, reader, NULL);
	/* Every fourth step also moves the factors by 1%: a reader that
	 * mixed the two copies would be off by 1% of the absolute ns. */
	for (k = 0; k < 3000; k++) {
		if (k % 4 == 1)
			t_set_khz(root, khz + (k % 8 == 1 ? khz / 100 : 0));
		t_write(root, STABLE, k & 1 ? "1\n" : "0\n");
		tsc_process_events(h);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	tsc_get_info(h, &i, sizeof(i));
	printf("# figure: %llu reads across %llu switches; within a thread back: unordered %llu, "
	       "ordered %llu; between threads below: unordered %llu (worst %llu ns), ordered %llu\n",
	       (unsigned long long)reads, (unsigned long long)i.switches,
	       (unsigned long long)own_back[0], (unsigned long long)own_back[1],
	       (unsigned long long)cross_back[0], (unsigned long long)cross_worst[0],
	       (unsigned long long)cross_back[1]);
	CHECK(i.switches >= 2900, "only %llu switches", (unsigned long long)i.switches);
	CHECK(reads > 100000, "only %llu reads across the switches", (unsigned long long)reads);
	CHECK(own_back[0] == 0, "tsc_now_ns() went back %llu times within a thread",
	      (unsigned long long)own_back[0]);
	CHECK(own_back[1] == 0, "tsc_now_ns_ordered() went back %llu times within a thread",
	      (unsigned long long)own_back[1]);
	CHECK(cross_back[1] == 0, "ordered reads below another thread's earlier one %llu times "
	      "(worst %llu ns)", (unsigned long long)cross_back[1],
	      (unsigned long long)cross_worst[1]);
	tsc_close(h);
	t_rmroot(root);
	DONE();
}
