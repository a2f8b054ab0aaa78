// SPDX-License-Identifier: GPL-2.0
/*
 * follow STOPFILE FILE...: a poller for the soak. Reads each sysfs FILE,
 * then re-reads it on every POLLPRI wake-up, and does nothing else: it
 * never reads a FILE that did not wake it. Once STOPFILE is not empty it takes
 * the wake-ups still pending, then compares, for each FILE, the value
 * its last wake-up gave with what a fresh read gives now. They differ
 * only if a notification was lost. Prints one line per FILE:
 *   FILE: WAKEUPS wake-ups, last read VALUE, now VALUE
 * Exit 0 when every FILE agrees, 1 when one does not, 2 on error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sysval.h"

#define MAX_FILES 8

struct followed {
	const char *path;
	char last[64];
	long wakeups;
};

/* Wait up to ms for wake-ups, and re-read each FILE that woke. */
static int take_wakeups(struct pollfd *p, struct followed *f, int n, int ms)
{
	int i, ret = poll(p, n, ms);

	if (ret < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n; i++) {
		if (!(p[i].revents & (POLLPRI | POLLERR)))
			continue;
		f[i].wakeups++;
		if (reread(p[i].fd, f[i].last, sizeof(f[i].last)))
			return -1;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct pollfd p[MAX_FILES];
	struct followed f[MAX_FILES];
	char now[64];
	int i, n = argc - 2, stale = 0;

	if (n < 1 || n > MAX_FILES) {
		fprintf(stderr, "usage: follow STOPFILE FILE... (1-%d files)\n", MAX_FILES);
		return 2;
	}
	for (i = 0; i < n; i++) {
		f[i].path = argv[i + 2];
		f[i].wakeups = 0;
		p[i].fd = open(f[i].path, O_RDONLY | O_CLOEXEC);
		p[i].events = POLLPRI;
		if (p[i].fd < 0 || reread(p[i].fd, f[i].last, sizeof(f[i].last))) {
			fprintf(stderr, "follow: %s: %s\n", f[i].path, strerror(errno));
			return 2;
		}
	}
	while (!stop_requested(argv[1]))
		if (take_wakeups(p, f, n, 100) < 0)
			return 2;
	/* Whatever is still pending after the last change. */
	while (take_wakeups(p, f, n, 500) > 0)
		;
	for (i = 0; i < n; i++) {
		if (reread(p[i].fd, now, sizeof(now)))
			return 2;
		printf("%s: %ld wake-ups, last read %s, now %s\n", f[i].path, f[i].wakeups,
		       f[i].last, now);
		stale += strcmp(now, f[i].last) != 0;
	}
	return stale ? 1 : 0;
}
