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
 *
 * Reaction time, measured from the kernel's decision rather than from
 * the start of COMMAND (which includes, say, loading a module):
 *   -d DECIDED	DECIDED is a file that COMMAND fills with the CLOCK_MONOTONIC
 *		time, in ns, at which the kernel decided (the test module's
 *		decided_ns); wake-ups are also given from there.
 *   -r DONE	(with -d) a thread calls __vdso_tsc_raw() all along; DONE
 *		is a file COMMAND fills with the time the change was
 *		complete (the module's marked_ns, once mark_tsc_unstable()
 *		returned). Reported: when the first -ENODEV came, how many
 *		calls that began after the decision still returned the TSC
 *		and how long after it the last one began. Must be 0: calls
 *		that began after DONE and returned the TSC, and calls that
 *		returned it again after an -ENODEV.
 * Both go to the console as "# figure:" lines and, when $TSCKIT_RESULTS
 * names the guest init's results channel, as "# fact reaction/..." lines.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/wait.h>

#include "sysval.h"

#include "parse_vdso.h"

#define MAX_FILES 16

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The vDSO reader of -r. Its successful calls' start times are kept in a
 * ring: only the last few before the refusals can lie after the decision. */
#define RING 4096
static struct {
	int (*tsc_raw)(unsigned long long *tsc);
	atomic_bool stop;
	atomic_llong ok;		/* calls that returned the TSC */
	long long ok_start[RING];	/* start of the last RING of them */
	long long first_enodev;		/* end of the first -ENODEV call */
	long long back;			/* TSC returned after an -ENODEV */
	int bad_rc;			/* neither 0 nor -ENODEV */
} rd;

static void *vdso_reader(void *unused)
{
	unsigned long long tsc;
	long long t0, n;
	int rc;

	(void)unused;
	while (!atomic_load(&rd.stop)) {
		t0 = now_ns();
		rc = rd.tsc_raw(&tsc);
		if (rc == 0 && rd.first_enodev) {
			rd.back++;
		} else if (rc == 0) {
			n = atomic_load(&rd.ok);
			rd.ok_start[n % RING] = t0;
			atomic_store(&rd.ok, n + 1);
		} else if (rc == -ENODEV) {
			if (!rd.first_enodev)
				rd.first_enodev = now_ns();
		} else {
			rd.bad_rc = rc;
		}
	}
	return NULL;
}

static long long read_ns_file(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	char *end;
	long long v;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		fprintf(stderr, "pollwait: %s: %s\n", path, f ? "empty" : strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	v = strtoll(buf, &end, 10);
	if (end == buf || (*end && *end != '\n') || v <= 0) {
		fprintf(stderr, "pollwait: %s: '%s' is not a time in ns\n", path, buf);
		return -1;
	}
	return v;
}

static void fact(const char *name, long long value)
{
	const char *path = getenv("TSCKIT_RESULTS");
	FILE *f = path ? fopen(path, "w") : NULL;

	printf("# figure: reaction: %s %lld\n", name, value);
	if (f) {
		fprintf(f, "# fact reaction/%s=%lld\n", name, value);
		fclose(f);
	}
}

/* -r's verdict, against the decision and its end (ns); 0 when it holds. */
static int judge_reader(long long decided, long long done)
{
	long long ok = atomic_load(&rd.ok), after = 0, after_done = 0, last = 0, i;

	for (i = ok > RING ? ok - RING : 0; i < ok; i++) {
		after += rd.ok_start[i % RING] > decided;
		after_done += rd.ok_start[i % RING] > done;
		if (rd.ok_start[i % RING] > last)
			last = rd.ok_start[i % RING];
	}
	fact("vdso_calls_ok", ok);
	fact("tsc_reads_after_decision", after);
	fact("tsc_served_us_after_decision", last > decided ? (last - decided) / 1000 : 0);
	fact("decision_took_us", (done - decided) / 1000);
	fact("tsc_reads_after_done", after_done);
	fact("tsc_reads_after_enodev", rd.back);
	if (rd.first_enodev)
		fact("enodev_us", (rd.first_enodev - decided) / 1000);
	if (rd.bad_rc)
		printf("__vdso_tsc_raw() returned %d\n", rd.bad_rc);
	if (!rd.first_enodev)
		printf("__vdso_tsc_raw() never returned -ENODEV\n");
	return after_done || rd.back || rd.bad_rc || !rd.first_enodev;
}

static int start_reader(pthread_t *thread)
{
	vdso_init_from_sysinfo_ehdr(getauxval(AT_SYSINFO_EHDR));
	rd.tsc_raw = (int (*)(unsigned long long *))vdso_sym("LINUX_2.6", "__vdso_tsc_raw");
	if (!rd.tsc_raw) {
		fprintf(stderr, "pollwait: -r: the vDSO has no __vdso_tsc_raw\n");
		return -1;
	}
	if (pthread_create(thread, NULL, vdso_reader, NULL))
		return -1;
	/* It must be serving the TSC before the change, or nothing is timed. */
	for (int i = 0; i < 5000 && atomic_load(&rd.ok) < 1000; i++)
		usleep(1000);
	if (atomic_load(&rd.ok) < 1000) {
		fprintf(stderr, "pollwait: -r: __vdso_tsc_raw() refused before the change\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pollfd pfd[MAX_FILES];
	long long start, decided = 0, done = 0, woke[MAX_FILES] = { 0 };
	int timeout_s = 20, nfiles, left, i, opt, status = 0, reader = 0, bad = 0;
	const char *cmd = NULL, *decided_file = NULL, *done_file = NULL;
	pthread_t thread;
	char value[256];
	pid_t child = 0;

	while ((opt = getopt(argc, argv, "t:c:d:r:")) != -1) {
		if (opt == 'c') {
			cmd = optarg;
		} else if (opt == 'd') {
			decided_file = optarg;
		} else if (opt == 'r') {
			reader = 1;
			done_file = optarg;
		} else if (opt == 't' && atoi(optarg) > 0) {
			timeout_s = atoi(optarg);
		} else {
			fprintf(stderr, "usage: pollwait [-t SECONDS] [-c COMMAND [-d DECIDED [-r DONE]]] FILE...\n");
			return 2;
		}
	}
	if ((decided_file && !cmd) || (reader && !decided_file)) {
		fprintf(stderr, "pollwait: -d needs -c, and -r needs -d\n");
		return 2;
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
	if (reader && start_reader(&thread))
		return 2;
	fflush(stdout);
	start = now_ns();
	if (cmd) {
		child = fork();
		if (child < 0)
			return 2;
		if (!child)
			_exit(system(cmd) ? 1 : 0);
	}
	for (left = nfiles; left > 0; ) {
		long long remaining_ms = timeout_s * 1000LL - (now_ns() - start) / 1000000;

		if (remaining_ms <= 0 || poll(pfd, nfiles, remaining_ms) <= 0)
			break;
		for (i = 0; i < nfiles; i++) {
			if (!(pfd[i].revents & (POLLPRI | POLLERR)))
				continue;
			woke[i] = now_ns();
			pfd[i].fd = -pfd[i].fd - 1;	/* stop polling it */
			left--;
		}
	}
	if (child && (waitpid(child, &status, 0) < 0 || status)) {
		printf("command failed: %s\n", cmd);
		bad = 1;
	}
	if (decided_file && !bad) {
		decided = read_ns_file(decided_file);
		bad = decided < start;
		if (bad)
			printf("%s: no decision after the start\n", decided_file);
	}
	if (done_file && !bad) {
		done = read_ns_file(done_file);
		bad = done < decided;
		if (bad)
			printf("%s: not after the decision\n", done_file);
	}
	if (reader) {
		atomic_store(&rd.stop, true);
		pthread_join(thread, NULL);
		bad |= done > 0 && judge_reader(decided, done);
	}
	for (i = 0; i < nfiles; i++) {
		const char *file = argv[optind + i], *base = strrchr(file, '/');
		char name[64];

		if (!woke[i]) {
			printf("%s did not wake\n", file);
			continue;
		}
		reread(-pfd[i].fd - 1, value, sizeof(value));
		printf("%s woke after %lld us: %s\n", file, (woke[i] - start) / 1000, value);
		if (decided > 0) {
			snprintf(name, sizeof(name), "wake_us/%s", base ? base + 1 : file);
			fact(name, (woke[i] - decided) / 1000);
		}
	}
	return left || bad ? 1 : 0;
}
