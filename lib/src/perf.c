// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The perf_event mmap page carries the kernel's own TSC to ns factors
 * (time_mult, time_shift) when cap_user_time is set.  A dummy software
 * event is enough to get the page; no PMU is needed. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int tsc__perf_factors(struct factors *f, char *why, size_t cap)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	long psz = sysconf(_SC_PAGESIZE);
	uint32_t seq, mult = 0, shift = 0, tries;
	bool cap_time = false;
	int fd, err = 0;

	if (!TSC_ARCH_HAS_TSC) {	/* the page's factors are another counter's */
		snprintf(why, cap, "perf: not asked (no TSC on this architecture)");
		return -ENODEV;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, cap, "perf_event_open: %s", strerror(errno));
		return err;
	}
	pg = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		err = -errno;
		snprintf(why, cap, "perf mmap: %s", strerror(errno));
		close(fd);
		return err;
	}
	for (tries = 0; tries < 1000; tries++) {	/* the page's seqlock */
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		cap_time = pg->cap_user_time;
		mult = pg->time_mult;
		shift = pg->time_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) == seq)
			break;
	}
	munmap(pg, psz);
	close(fd);
	if (!cap_time) {
		snprintf(why, cap, "perf mmap page: cap_user_time is 0");
		return -EOPNOTSUPP;
	}
	if (!mult || shift >= 64) {
		snprintf(why, cap, "perf mmap page: bad time_mult %u time_shift %u",
			 mult, shift);
		return -EINVAL;
	}
	f->src = TSC_SRC_PERF;
	f->mult = mult;
	f->shift = shift;
	f->khz = (uint64_t)(((unsigned __int128)1000000 << shift) / mult);
	/* The kernel computes time_mult from tsc_khz: that rounding too. */
	f->err_ppb = tsc__rounding_ppb(f->khz, mult);
	snprintf(why, cap, "perf mmap page: time_mult %u time_shift %u", mult, shift);
	return 0;
}
