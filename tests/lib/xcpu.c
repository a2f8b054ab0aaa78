// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The cross-CPU check on this machine: every CPU of the affinity set,
 * no read below another CPU's earlier one (1 us tolerated, printed).
 * Then the same where the kernel has more than 1024 possible CPUs: its
 * sched_getaffinity() refuses a set smaller than its own (EINVAL), which
 * this test makes up by interposing it for sets of under 4096 CPUs. */
#include <dlfcn.h>
#include <sched.h>

#include "t.h"

static size_t min_size;		/* the made-up kernel's mask size; 0: the real one */

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	static int (*real)(pid_t, size_t, cpu_set_t *);

	if (!real)
		real = (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "sched_getaffinity");
	if (size < __atomic_load_n(&min_size, __ATOMIC_RELAXED)) {
		errno = EINVAL;
		return -1;
	}
	return real(pid, size, set);
}

int main(void)
{
	struct tsc_xcpu_result r;
	cpu_set_t set;
	struct tsc *t;
	int err;

	T_OPEN(t, .no_watcher = true);
	sched_getaffinity(0, sizeof(set), &set);
	err = tsc_xcpu_check(t, 300, &r, sizeof(r));
	if (err == -ENODEV)
		SKIP("RDTSC may not run here");
	CHECK(!err, "xcpu: %s", strerror(-err));
	CHECK(r.cpus == (unsigned int)CPU_COUNT(&set), "%u CPUs tested, affinity has %d",
	      r.cpus, CPU_COUNT(&set));
	CHECK(r.reads > 1000, "only %llu reads", (unsigned long long)r.reads);
	CHECK(r.worst_ns < 1000, "worst backward step %llu ns CPU %d -> %d",
	      (unsigned long long)r.worst_ns, r.worst_from_cpu, r.worst_to_cpu);
	CHECK(!r.backward || (r.worst_from_cpu >= 0 && r.worst_to_cpu >= 0), "no CPU pair");
	printf("# figure: cross-CPU %u CPUs, %llu reads, %llu backward, worst %llu ticks (%llu ns)\n",
	       r.cpus, (unsigned long long)r.reads, (unsigned long long)r.backward,
	       (unsigned long long)r.worst_ticks, (unsigned long long)r.worst_ns);

	/* A kernel with 4096 possible CPUs (CPU_SETSIZE is 1024). */
	__atomic_store_n(&min_size, CPU_ALLOC_SIZE(4096), __ATOMIC_RELAXED);
	CHECK(sched_getaffinity(0, sizeof(set), &set) && errno == EINVAL,
	      "the made-up kernel takes a 1024-CPU set");
	memset(&r, 0, sizeof(r));
	err = tsc_xcpu_check(t, 100, &r, sizeof(r));
	CHECK(!err, "xcpu where the kernel has 4096 possible CPUs: %s", strerror(-err));
	CHECK(err || r.cpus == (unsigned int)CPU_COUNT(&set),
	      "4096 possible CPUs: %u CPUs tested, affinity has %d", r.cpus, CPU_COUNT(&set));
	__atomic_store_n(&min_size, 0, __ATOMIC_RELAXED);
	tsc_close(t);
	DONE();
}
