// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The housekeeping CPUs, where the watcher runs by default: those online
 * and neither isolated (isolcpus=) nor nohz_full, else every online CPU.
 * An opener pinned to an isolated core, maybe SCHED_FIFO, must not get a
 * watcher beside it that either never runs or takes that core's time.
 */
#include <errno.h>
#include <stdio.h>

#include "internal.h"

#define P_ONLINE	"/sys/devices/system/cpu/online"
#define P_ISOLATED	"/sys/devices/system/cpu/isolated"
#define P_NOHZ_FULL	"/sys/devices/system/cpu/nohz_full"

/* One CPU number at buf[*i], below CPU_SETSIZE. */
static bool parse_cpu(const char *buf, size_t len, size_t *i, uint64_t *cpu)
{
	size_t start = *i;

	*cpu = 0;
	while (*i < len && buf[*i] >= '0' && buf[*i] <= '9') {
		*cpu = *cpu * 10 + (uint64_t)(buf[*i] - '0');
		if (*cpu >= CPU_SETSIZE)
			return false;
		(*i)++;
	}
	return *i > start;
}

/* A kernel CPU list ("0-3,8,10-11\n", or empty) into set.  0, or
 * -EINVAL for anything else: no number, a range backwards, a CPU past
 * CPU_SETSIZE, a stray byte. */
int tsc__parse_cpulist(const char *buf, size_t len, cpu_set_t *set)
{
	uint64_t a, b;
	size_t i = 0;

	CPU_ZERO(set);
	if (len && buf[len - 1] == '\n')
		len--;
	while (i < len) {
		if (!parse_cpu(buf, len, &i, &a))
			return -EINVAL;
		b = a;
		if (i < len && buf[i] == '-') {
			i++;
			if (!parse_cpu(buf, len, &i, &b) || b < a)
				return -EINVAL;
		}
		if (i < len && (buf[i++] != ',' || i == len))
			return -EINVAL;
		for (; a <= b; a++)
			CPU_SET((int)a, set);
	}
	return 0;
}

static int read_list(const char *root, const char *path, cpu_set_t *set)
{
	char buf[1024];
	size_t len;
	int err = tsc__read(root, path, buf, sizeof(buf), &len);

	return err ? err : tsc__parse_cpulist(buf, len, set);
}

/* The housekeeping CPUs of the machine at root into set.  0, or -errno
 * when even the online CPUs cannot be read (then set is empty and the
 * watcher keeps the opener's).  why tells what was left out. */
int tsc__housekeeping(const char *root, cpu_set_t *set, char *why, size_t cap)
{
	cpu_set_t online, busy, iso;
	int err = read_list(root, P_ONLINE, &online);

	CPU_ZERO(set);
	*why = 0;
	if (err)
		return err;
	CPU_ZERO(&busy);
	if (!read_list(root, P_ISOLATED, &iso))
		CPU_OR(&busy, &busy, &iso);
	if (!read_list(root, P_NOHZ_FULL, &iso))
		CPU_OR(&busy, &busy, &iso);
	CPU_XOR(set, &online, &busy);
	CPU_AND(set, set, &online);
	if (!CPU_COUNT(set)) {
		*set = online;
		snprintf(why, cap, "every online CPU is isolated or nohz_full: the watcher may run on any");
	}
	return 0;
}
