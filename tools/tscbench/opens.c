// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The start-up time of tsc_open(), with and without calibration, each
 * open in a fresh process: a program opens once, at start, with nothing
 * of the library warm.  tscbench runs itself again (/proc/self/exe) with
 * TSCBENCH_OPEN_ONCE in the environment; that run times one tsc_open(),
 * prints what it saw on one line, and exits (open_once_child()).
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tscbench.h"

#define ONCE_ENV "TSCBENCH_OPEN_ONCE"

extern char **environ;

/* In the re-run: "c" (force_calibrate) or "d", then an optional sysroot
 * after a colon.  Prints "ns mult src usable err_ppb calib_ns" or
 * "error ERRNO". */
int open_once_child(void)
{
	const char *v = getenv(ONCE_ENV), *root;
	struct tsc_info i;
	uint64_t t0, t1;
	struct tsc *t;

	if (!v)
		return -1;
	root = strchr(v, ':');
	TSC_OPTS(o, .force_calibrate = *v == 'c', .sysroot = root ? root + 1 : NULL);
	t0 = now_ns(CLOCK_MONOTONIC_RAW);
	t = tsc_open(&o);
	t1 = now_ns(CLOCK_MONOTONIC_RAW);
	if (!t) {
		printf("error %d\n", errno);
		return 0;
	}
	tsc_get_info(t, &i, sizeof(i));
	printf("%llu %llu %d %d %llu %llu\n", (unsigned long long)(t1 - t0),
	       (unsigned long long)i.mult, (int)i.src, (int)i.usable,
	       (unsigned long long)i.err_ppb, (unsigned long long)i.calib_ns);
	tsc_close(t);
	return 0;
}

struct once {
	uint64_t ns, mult, err_ppb, calib_ns;
	int src, usable;
};

/* One open in a fresh process; 0, or an errno. */
static int open_once(const char *mode, struct once *r)
{
	char *argv[] = { "tscbench", NULL }, line[256] = "";
	posix_spawn_file_actions_t fa;
	int fd[2], err, st, n, e;
	unsigned long long v[4];
	ssize_t len;
	pid_t pid;

	if (setenv(ONCE_ENV, mode, 1) || pipe(fd))
		return errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	unsetenv(ONCE_ENV);
	close(fd[1]);
	len = err ? 0 : read(fd[0], line, sizeof(line) - 1);
	close(fd[0]);
	if (err)
		return err;
	waitpid(pid, &st, 0);
	line[len > 0 ? len : 0] = 0;
	if (sscanf(line, "error %d", &e) == 1)
		return e;
	n = sscanf(line, "%llu %llu %d %d %llu %llu", &v[0], &v[1], &r->src, &r->usable,
		   &v[2], &v[3]);
	if (n != 6 || !WIFEXITED(st) || WEXITSTATUS(st))
		return EPROTO;
	r->ns = v[0];
	r->mult = v[1];
	r->err_ppb = v[2];
	r->calib_ns = v[3];
	return 0;
}

static void time_opens(unsigned long count, bool calibrate, const char *sysroot,
		       struct open_time *ot)
{
	char mode[4200];
	double us[1000];
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned long i;
	struct once r;

	memset(ot, 0, sizeof(*ot));
	snprintf(mode, sizeof(mode), "%c%s%s", calibrate ? 'c' : 'd', sysroot ? ":" : "",
		 sysroot ? sysroot : "");
	for (i = 0; i < count; i++) {
		ot->err = open_once(mode, &r);
		if (ot->err)
			return;
		/* mult is per shift: compare only like with like */
		if (r.mult < lo)
			lo = r.mult;
		if (r.mult > hi)
			hi = r.mult;
		us[i] = (double)r.ns / 1e3;
		ot->src = r.src;
		ot->usable = r.usable;
		ot->err_ppb = r.err_ppb;
		ot->calib_ns = r.calib_ns;
		ot->opens = i + 1;
	}
	dist_of(us, ot->opens, &ot->us);
	ot->mult_spread_ppm = lo && hi >= lo ? (double)(hi - lo) / (double)lo * 1e6 : 0;
	if (ot->opens) {
		ot->min_us = us[0];
		ot->max_us = us[ot->opens - 1];
	}
}

void startup_run(const struct cfg *cfg, struct accuracy *a)
{
	if (!cfg->opens)
		return;
	progress("tsc_open(): %lu opens, then %lu calibrating, each in a fresh process",
		 cfg->opens, cfg->opens);
	time_opens(cfg->opens, false, NULL, &a->open_default);
	time_opens(cfg->opens, true, NULL, &a->open_calib);
	if (cfg->open_sysroot)
		time_opens(cfg->opens, false, cfg->open_sysroot, &a->open_sysroot);
}
