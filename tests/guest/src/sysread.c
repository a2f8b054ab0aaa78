// SPDX-License-Identifier: GPL-2.0
/*
 * sysread STOPFILE FILE...: read each FILE from its start, over and over,
 * until STOPFILE is gone; a file that goes away (a CPU's device removed
 * by hotplug) is opened again when it comes back. Keeps kernfs active
 * references on sysfs attributes as often as a process can, so that
 * lockdep sees what their show() takes against what removal holds.
 * Prints how many reads succeeded.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long long reads = 0;
	char buf[4096];
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: sysread STOPFILE FILE...\n");
		return 2;
	}
	while (access(argv[1], F_OK) == 0) {
		for (i = 2; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);

			if (fd < 0)
				continue;
			if (pread(fd, buf, sizeof(buf), 0) >= 0)
				reads++;
			close(fd);
		}
	}
	printf("# figure: sysread: %llu reads\n", reads);
	return 0;
}
