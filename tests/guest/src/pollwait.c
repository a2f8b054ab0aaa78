// SPDX-License-Identifier: GPL-2.0
/*
 * pollwait [-t SECONDS] [-c COMMAND] FILE...: read each sysfs FILE, then
 * block in poll() for POLLPRI | POLLERR until every FILE has woken or the
 * timeout passes. With -c, COMMAND (the change to wait for) runs in a
 * child once the files are read, and times count from its start. Prints
 * one line per FILE:
 *   FILE woke after US us: VALUE      or      FILE did not wake
 * Exits 0 when every FILE woke, 1 when one did not or COMMAND failed,
 * 2 on error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define MAX_FILES 16

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int reread(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	struct pollfd pfd[MAX_FILES];
	long long start, woke[MAX_FILES] = { 0 };
	int timeout_s = 20, nfiles, left, i, opt, status = 0;
	const char *cmd = NULL;
	char value[256];
	pid_t child = 0;

	while ((opt = getopt(argc, argv, "t:c:")) != -1) {
		if (opt == 'c') {
			cmd = optarg;
		} else if (opt == 't' && atoi(optarg) > 0) {
			timeout_s = atoi(optarg);
		} else {
			fprintf(stderr, "usage: pollwait [-t SECONDS] [-c COMMAND] FILE...\n");
			return 2;
		}
	}
	nfiles = argc - optind;
	if (nfiles < 1 || nfiles > MAX_FILES) {
		fprintf(stderr, "pollwait: give 1 to %d files\n", MAX_FILES);
		return 2;
	}
	for (i = 0; i < nfiles; i++) {
		pfd[i].fd = open(argv[optind + i], O_RDONLY);
		pfd[i].events = POLLPRI | POLLERR;
		if (pfd[i].fd < 0 || reread(pfd[i].fd, value, sizeof(value))) {
			fprintf(stderr, "pollwait: %s: %s\n", argv[optind + i],
				strerror(errno));
			return 2;
		}
	}
	fflush(stdout);
	start = now_us();
	if (cmd) {
		child = fork();
		if (child < 0)
			return 2;
		if (!child)
			_exit(system(cmd) ? 1 : 0);
	}
	for (left = nfiles; left > 0; ) {
		long long remaining_ms = timeout_s * 1000LL - (now_us() - start) / 1000;

		if (remaining_ms <= 0 || poll(pfd, nfiles, remaining_ms) <= 0)
			break;
		for (i = 0; i < nfiles; i++) {
			if (!(pfd[i].revents & (POLLPRI | POLLERR)))
				continue;
			woke[i] = now_us();
			pfd[i].fd = -pfd[i].fd - 1;	/* stop polling it */
			left--;
		}
	}
	for (i = 0; i < nfiles; i++) {
		if (!woke[i]) {
			printf("%s did not wake\n", argv[optind + i]);
			continue;
		}
		reread(-pfd[i].fd - 1, value, sizeof(value));
		printf("%s woke after %lld us: %s\n", argv[optind + i],
		       woke[i] - start, value);
	}
	if (child && (waitpid(child, &status, 0) < 0 || status)) {
		printf("command failed: %s\n", cmd);
		return 1;
	}
	return left ? 1 : 0;
}
