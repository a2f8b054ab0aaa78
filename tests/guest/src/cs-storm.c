// SPDX-License-Identifier: GPL-2.0
/*
 * cs-storm [-n SWITCHES] [-r READERS]: switch the clocksource back and
 * forth many times while several readers poll current_clocksource and
 * current_clocksource_vdso and re-read them on every wakeup. When the
 * storm is over, every reader must have seen the final state through
 * its own wakeups: a notification lost on the way shows as a stale value.
 * Exits 0 on success, 1 on a failed check, 2 on error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "sysval.h"

#define CS_DIR	"/sys/devices/system/clocksource/clocksource0/"
#define MAX_READERS 16

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_clocksource(const char *name)
{
	int fd = open(CS_DIR "current_clocksource", O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, name, strlen(name));
	close(fd);
	return n == (ssize_t)strlen(name) ? 0 : -1;
}

/* A reader: report through @out what it saw last, and how often it woke. */
static int reader(int out)
{
	struct pollfd pfd[2] = {
		{ .fd = open(CS_DIR "current_clocksource", O_RDONLY), .events = POLLPRI },
		{ .fd = open(CS_DIR "current_clocksource_vdso", O_RDONLY), .events = POLLPRI },
	};
	char name[64], vdso[8];
	long wakeups = 0;
	int ret;

	if (pfd[0].fd < 0 || pfd[1].fd < 0 || reread(pfd[0].fd, name, sizeof(name)) ||
	    reread(pfd[1].fd, vdso, sizeof(vdso)))
		return 2;
	for (;;) {
		ret = poll(pfd, 2, stop ? 2000 : 10000);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return 2;
		if (ret == 0) {
			if (stop)
				break;	/* quiet after the storm: done */
			dprintf(out, "hang: no wakeup for 10 s during the storm\n");
			return 1;
		}
		wakeups++;
		if (reread(pfd[0].fd, name, sizeof(name)) ||
		    reread(pfd[1].fd, vdso, sizeof(vdso)))
			return 2;
	}
	dprintf(out, "%s %s %ld\n", name, vdso, wakeups);
	return 0;
}

int main(int argc, char **argv)
{
	int switches = 2000, readers = 4, i, opt, status, fail = 0;
	const char *names[2] = { "hpet", "tsc" };
	char final_name[64], final_vdso[8], line[128];
	int pipes[MAX_READERS][2];
	pid_t pid[MAX_READERS];
	FILE *in;
	int fd;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0) {
			switches = atoi(optarg);
		} else if (opt == 'r' && atoi(optarg) > 0 && atoi(optarg) <= MAX_READERS) {
			readers = atoi(optarg);
		} else {
			fprintf(stderr, "usage: cs-storm [-n SWITCHES] [-r READERS (1-%d)]\n",
				MAX_READERS);
			return 2;
		}
	}
	signal(SIGUSR1, on_stop);
	for (i = 0; i < readers; i++) {
		if (pipe(pipes[i]))
			return 2;
		pid[i] = fork();
		if (pid[i] < 0)
			return 2;
		if (!pid[i]) {
			close(pipes[i][0]);
			_exit(reader(pipes[i][1]));
		}
		close(pipes[i][1]);
	}
	usleep(300000);	/* let the readers block */

	for (i = 0; i < switches; i++) {
		if (write_clocksource(names[i % 2])) {
			fprintf(stderr, "cs-storm: switch %d to %s: %s\n", i,
				names[i % 2], strerror(errno));
			fail = 1;
			break;
		}
	}
	fd = open(CS_DIR "current_clocksource", O_RDONLY);
	if (fd < 0 || reread(fd, final_name, sizeof(final_name)))
		return 2;
	close(fd);
	fd = open(CS_DIR "current_clocksource_vdso", O_RDONLY);
	if (fd < 0 || reread(fd, final_vdso, sizeof(final_vdso)))
		return 2;
	close(fd);
	printf("%d switches, final state: %s, vdso %s\n", i, final_name, final_vdso);

	for (i = 0; i < readers; i++)
		kill(pid[i], SIGUSR1);
	for (i = 0; i < readers; i++) {
		char name[64], vdso[8];
		long wakeups;

		in = fdopen(pipes[i][0], "r");
		if (!in || !fgets(line, sizeof(line), in))
			line[0] = '\0';
		waitpid(pid[i], &status, 0);
		if (sscanf(line, "%63s %7s %ld", name, vdso, &wakeups) != 3 ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("reader %d failed: %s", i, line[0] ? line : "no report\n");
			fail = 1;
		} else if (strcmp(name, final_name) || strcmp(vdso, final_vdso)) {
			printf("reader %d missed the final state: saw %s, vdso %s\n",
			       i, name, vdso);
			fail = 1;
		} else {
			printf("reader %d: %ld wakeups, last saw %s, vdso %s\n",
			       i, wakeups, name, vdso);
		}
		if (in)
			fclose(in);
	}
	return fail;
}
