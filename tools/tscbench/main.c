// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * tscbench: what every way of taking a timestamp costs on this machine,
 * and how right libtsc's nanoseconds are.  Phases: cost (interleaved
 * batches), throughput (pinned threads), drift against the kernel's
 * clocks with a monotonicity check, the cross-CPU check, tsc_open() time,
 * the calibration start-up (a calibrating handle until its TSC is in use).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tscbench.h"

const char tool_name[] = "tscbench";

static void usage(FILE *f)
{
	fputs("Usage:\n"
	      " tscbench [options]\n"
	      "\n"
	      "Measure what every way of taking a timestamp costs here (RDTSC, RDTSCP,\n"
	      "libtsc, clock_gettime through the vDSO and the syscall, gettimeofday,\n"
	      "__vdso_tsc_raw), and how far libtsc's ns drift from the kernel's clocks.\n"
	      "\n"
	      "Options:\n"
	      " -d, --duration <sec>   drift run length (default 10, fractions allowed;\n"
	      "                          0 skips it)\n"
	      " -q, --quick            short cost and throughput runs (a smoke test)\n"
	      " -J, --json[=<file>]    JSON output (field names: tscbench(1)); with a\n"
	      "                          file, only as --json=<file>: JSON there, the\n"
	      "                          table as usual\n"
	      " -o, --output <file>    write the report to file instead of stdout\n"
	      " -p, --plot <file.png>  plot cost and drift with gnuplot (script: file.png.gp)\n"
	      " -m, --methods <list>   measure only these methods (comma list, see --list)\n"
	      "     --rounds <n>       cost rounds, one batch per method each (default 200)\n"
	      "     --threads <n>      throughput up to n pinned threads (default: all\n"
	      "                          CPUs of the affinity set; 0 skips it)\n"
	      "     --opens <n>        tsc_open() timings of each kind, each in a fresh\n"
	      "                          process (default 5)\n"
	      "     --cross-cpu <ms>   cross-CPU check length (default 200; 0 skips it)\n"
	      "     --calib-follow <sec>\n"
	      "                        calibration start-up: follow a force_calibrate\n"
	      "                          handle this long after tsc_open() (default 10,\n"
	      "                          2 with --quick; 0 skips it)\n"
	      "     --open-sysroot <dir>\n"
	      "                        also time tsc_open() on a dump (tscinfo(1) --sysroot)\n"
	      "     --sysroot <dir>    open the measured handle on a dump: libtsc decides\n"
	      "                          as on that machine, reads this CPU's TSC\n"
	      "     --no-progress      no progress lines on stderr\n"
	      "     --list             list the methods and whether this machine has them\n"
	      "\n"
	      " -h, --help             display this help\n"
	      " -V, --version          display version\n"
	      "\n"
	      "Exit status: 0 done, 1 done but time went back (in a thread or across\n"
	      "CPUs), 2 usage error, 3 runtime error.\n"
	      "\n"
	      "For more details see tscbench(1).\n", f);
}

static void list(FILE *f)
{
	int i;

	for (i = 0; i < nmethods; i++) {
		const struct method *m = &methods[i];

		fprintf(f, "%-31s %-3s %s\n", m->name, m->avail ? "yes" : "no",
			m->avail ? (*m->note ? m->note : m->what) : m->why);
	}
}

/* Without kernel factors, a handle with a watcher begins a calibration in
 * tsc_open() and takes the TSC only once the watcher has its bound at
 * 1 ppm (tens of ms): wait for it, up to 3 s, or the whole run would
 * measure the fallback clock.  With default options libtsc calibrates
 * only when the factors would be used. */
static void wait_calibration(struct tsc *t)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC_RAW);
	struct tsc_info i;

	for (;;) {
		tsc_get_info(t, &i, sizeof(i));
		if (i.usable || !i.calibrated ||
		    now_ns(CLOCK_MONOTONIC_RAW) - t0 >= 3000000000ull)
			return;
		usleep(1000);
	}
}

/* True, with a message, when an option's dir is given and is no
 * directory. */
static bool not_a_dir(const char *opt, const char *dir)
{
	struct stat st;

	if (!dir)
		return false;
	if (stat(dir, &st)) {
		tool_warn("%s %s: %s", opt, dir, strerror(errno));
		return true;
	}
	if (!S_ISDIR(st.st_mode)) {
		tool_warn("%s %s: not a directory", opt, dir);
		return true;
	}
	return false;
}

static bool went_back(const struct accuracy *a)
{
	return a->backward || (a->have_xcpu && a->xcpu.backward) || a->calib.backward;
}

static int run(int argc, char **argv)
{
	static struct accuracy acc;
	static struct env env;
	struct cfg cfg;
	FILE *out = stdout, *jout = NULL;
	char err[256];
	int rc = EXIT_BENCH_OK;

	if (!open_once_child())		/* a re-run that times one open */
		return 0;
	if (parse_args(argc, argv, &cfg, err, sizeof(err)) ||
	    methods_select(cfg.methods, err, sizeof(err)))
		return tool_usage_error(err);
	switch (cfg.action) {
	case ACT_HELP:
		usage(stdout);
		return 0;
	case ACT_VERSION:
		return tool_version();
	case ACT_LIST:
	case ACT_RUN:
		break;
	}

	/* libtsc reads a missing dump as empty files: fail as tscinfo. */
	if (not_a_dir("--sysroot", cfg.sysroot) || not_a_dir("--open-sysroot", cfg.open_sysroot))
		return EXIT_RUNTIME;

	/* As an application would: with the watcher, so that the handle
	 * follows the kernel if it stops trusting the TSC during the run. */
	TSC_OPTS(opts, .sysroot = cfg.sysroot);
	env.sysroot = cfg.sysroot;
	env.t = tsc_open(&opts);
	if (!env.t) {
		tool_warn("cannot open libtsc: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	wait_calibration(env.t);
	methods_probe(&env);
	if (cfg.action == ACT_LIST) {
		list(stdout);
		tsc_close(env.t);
		return 0;
	}
	/* Open the reports first: a bad path fails before the long run. */
	if (cfg.output) {
		out = fopen(cfg.output, "we");
		if (!out) {
			tool_warn("cannot write %s: %s", cfg.output, strerror(errno));
			tsc_close(env.t);
			return EXIT_RUNTIME;
		}
	}
	if (cfg.json_file) {
		jout = fopen(cfg.json_file, "we");
		if (!jout) {
			tool_warn("cannot write %s: %s", cfg.json_file, strerror(errno));
			tsc_close(env.t);
			return EXIT_RUNTIME;
		}
	}
	progress_on = !cfg.no_progress && (cfg.duration >= 2 || !cfg.quick);

	/* Throughput last: all CPUs busy can make a guest kernel's
	 * clocksource watchdog give up on the TSC (seen under QEMU TCG). */
	cost_run(&cfg, &env);
	gettime_verdict(&env);	/* from the costs just measured */
	drift_run(&cfg, &env, &acc);
	startup_run(&cfg, &acc);
	calib_run(&cfg, &env, &acc.calib);
	throughput_run(&cfg, &env);
	methods_end(&env);
	progress("done");

	if (cfg.json)
		print_json(out, &cfg, &env, &acc);
	else
		print_text(out, &cfg, &env, &acc);
	/* Standard output is checked at the end (tool_exit()). */
	if (out != stdout && (fflush(out) || ferror(out) || fclose(out))) {
		tool_warn("cannot write %s: %s", cfg.output, strerror(errno));
		rc = EXIT_RUNTIME;
	}
	if (jout) {
		print_json(jout, &cfg, &env, &acc);
		if (fflush(jout) || ferror(jout) || fclose(jout)) {
			tool_warn("cannot write %s: %s", cfg.json_file, strerror(errno));
			rc = EXIT_RUNTIME;
		}
	}
	if (cfg.plot && plot_png(cfg.plot, &env, &acc, err, sizeof(err))) {
		tool_warn("--plot: %s", err);
		rc = EXIT_RUNTIME;
	}
	tsc_close(env.t);
	if (rc == EXIT_BENCH_OK && went_back(&acc))
		rc = EXIT_BENCH_BACKWARD;
	return rc;
}

int main(int argc, char **argv)
{
	tool_buffer_stdout();
	return tool_exit(run(argc, argv));
}
