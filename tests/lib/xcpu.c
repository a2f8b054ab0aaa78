// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The cross-CPU check on this machine: every CPU of the affinity set,
 * no read below another CPU's earlier one (1 us tolerated, printed). */
#include <sched.h>

#include "t.h"

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
	tsc_close(t);
	DONE();
}
