// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tsc0/user_traps, which libtsc does not read: it decides nothing, but a
 * fleet wants to see it grow (the metrics). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "tscinfo.h"

#define USER_TRAPS "/sys/devices/system/tsc/tsc0/user_traps"

/* One decimal number and a newline, as the kernel writes it: 0, or -1
 * when the file is missing, unreadable or holds anything else. */
int read_user_traps(const char *sysroot, uint64_t *out)
{
	char path[PATH_MAX], buf[32];
	uint64_t v = 0;
	ssize_t n, i;
	int fd;

	if (snprintf(path, sizeof(path), "%s%s", sysroot ? sysroot : "", USER_TRAPS) >=
	    (int)sizeof(path))
		return -1;
	/* O_NONBLOCK: a FIFO in a dump reads as empty instead of hanging. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 2 || n == (ssize_t)sizeof(buf) || buf[n - 1] != '\n')
		return -1;
	for (i = 0; i < n - 1; i++) {
		unsigned int d = (unsigned char)buf[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
