// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * tscinfo: can this process use RDTSC directly, is clock_gettime fast
 * here, what is the TSC frequency and where does it come from, is the
 * TSC the kernel's clocksource, is user RDTSC trapped?  With reasons.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"	/* the capture helpers, compiled in (LIBSRCS) */
#include "json.h"
#include "tscinfo.h"

const char tool_name[] = "tscinfo";

static void usage(FILE *f)
{
	fputs("Usage:\n"
	      " tscinfo [options]\n"
	      "\n"
	      "Can this process use RDTSC directly?  Is clock_gettime() fast here?\n"
	      "What is the TSC frequency, and where does that number come from?\n"
	      "\n"
	      "Options:\n"
	      " -f, --format <fmt>     text (default), json, prometheus (node_exporter's\n"
	      "                          textfile collector) or log (key=value lines)\n"
	      " -J, -j, --json         the same as --format=json\n"
	      " -o, --output <file>    write the report to file, replaced whole (atomically)\n"
	      " -w, --watch            print each change of the kernel's TSC state\n"
	      " -c, --count <n>        with --watch: stop after n changes\n"
	      " -t, --timeout <sec>    with --watch: stop after sec seconds\n"
	      " -x, --cross-cpu[=<ms>] check TSC consistency across CPUs (default 200 ms;\n"
	      "                          the ms in the same word: -x50, --cross-cpu=50)\n"
	      " -v, --verbose          text: the notes too, beside the reasons that decide\n"
	      " -s, --sysroot <dir>    read a captured dump in dir instead of this machine\n"
	      "     --calibrate        calibrate even when better factors exist, and wait\n"
	      "                          (up to 2 s) for a figure within 1 ppm\n"
	      "     --no-cost          do not measure read and clock_gettime costs\n"
	      "     --dump-cpuid       print CPUID facts for a dump's tsckit/cpuid\n"
	      "     --dump-vdso <file> write the vDSO image for a dump's tsckit/vdso.img\n"
	      "\n"
	      " -h, --help             display this help\n"
	      " -V, --version          display version\n"
	      "\n"
	      "Exit status: 0 TSC usable, 1 not usable (or a cross-CPU step back),\n"
	      "2 usage error, 3 runtime error.\n"
	      "\n"
	      "For more details see tscinfo(1).\n", f);
}

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* About 3 ms each: the best of a few runs, per call.  The TSC's reads
 * only while it is in use (RDTSC may fault otherwise). */
static void measure_tsc_cost(struct tsc *t, struct cost *c)
{
	volatile uint64_t sink = 0;
	double best[2] = { 1e9, 1e9 };
	int run, i;

	for (run = 0; run < 5; run++) {
		double t0 = ns_now(), t1, t2;

		for (i = 0; i < 20000; i++)
			sink += tsc_rdtsc();
		t1 = ns_now();
		for (i = 0; i < 20000; i++)
			sink += tsc_now_ns(t);
		t2 = ns_now();
		if ((t1 - t0) / 20000 < best[0])
			best[0] = (t1 - t0) / 20000;
		if ((t2 - t1) / 20000 < best[1])
			best[1] = (t2 - t1) / 20000;
	}
	(void)sink;
	c->rdtsc = best[0];
	c->now_ns = best[1];
}

/* clock_gettime(CLOCK_MONOTONIC) through libc, which calls the vDSO,
 * against the system call itself: 2000 calls each, the best of 5 runs
 * (a few ms where the system call is slow).  Whether the vDSO serves
 * the call is then measured, not guessed from the clocksource's name. */
static void measure_gettime_cost(struct cost *c)
{
	double best[2] = { 1e9, 1e9 };
	struct timespec ts;
	int run, i;

	for (run = 0; run < 5; run++) {
		double t0 = ns_now(), t1, t2;

		for (i = 0; i < 2000; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		t1 = ns_now();
		for (i = 0; i < 2000; i++)
			syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		t2 = ns_now();
		if ((t1 - t0) / 2000 < best[0])
			best[0] = (t1 - t0) / 2000;
		if ((t2 - t1) / 2000 < best[1])
			best[1] = (t2 - t1) / 2000;
	}
	c->clock_gettime = best[0];
	c->syscall = best[1];
}

/* --calibrate: libtsc measures a forced calibration's bound as it goes
 * (tsc_process_events()); wait for a figure within 1 ppm, 2 s at most. */
static void calibrate_wait(struct tsc *t, struct report *r)
{
	struct tsc_info i;
	int k;

	for (k = 0; k <= 200; k++) {
		if (tsc_get_info(t, &i, sizeof(i)) < 0)
			return;
		if (!i.calibrated ||
		    (i.src == TSC_SRC_CALIBRATION && i.err_ppb <= 1000))
			return;
		if (k == 200)
			break;
		usleep(10000);
		tsc_process_events(t);
	}
	r->calib_unfinished = true;
}

/* A dump whose only "no" is the want of conversion factors: a live
 * machine may have had them from perf or a calibration, which no dump
 * keeps; the replay cannot tell. */
static bool cannot_tell(const struct report *r)
{
	int n, block = 0;

	if (!r->cfg->sysroot || r->info.usable || r->cfg->calibrate || r->captured.have)
		return false;
	for (n = 0; n < r->nreasons; n++) {
		if (r->reasons[n].kind != TSC_REASON_BLOCK)
			continue;
		if (strcmp(r->reasons[n].code, "conversion_factors"))
			return false;
		block++;
	}
	return block > 0;
}

/* What a dump does not tell (a live machine always has its sysfs, and
 * its vDSO or none): whether the kernel has the series, without the
 * dump's sys/devices/system; whether the vDSO has the TSC calls, without
 * a vDSO image libtsc could read (its note, code "vdso"). */
static void dump_unknowns(struct report *r)
{
	char path[4096 + 32];
	struct stat st;
	int n;

	if (!r->cfg->sysroot)
		return;
	snprintf(path, sizeof(path), "%s/sys/devices/system", r->cfg->sysroot);
	r->series_unknown = !r->info.kernel_series && (stat(path, &st) || !S_ISDIR(st.st_mode));
	for (n = 0; n < r->nreasons && !r->info.vdso_tsc; n++)
		if (!strcmp(r->reasons[n].code, "vdso")) {
			r->vdso_unknown = true;
			r->vdso_why = r->reasons[n].text;
		}
}

/* Without current_clocksource_vdso libtsc cannot tell whether
 * clock_gettime() is a system call; tscinfo can, when it measured the
 * calls (the clock_gettime verdict): the note says so, not that nobody
 * can tell. */
static void measured_note(struct report *r)
{
	static const char no_file[] = "no current_clocksource_vdso:";
	int n;

	if (r->info.vdso_clock >= 0 || !measured_gettime(&r->cost))
		return;
	for (n = 0; n < r->nreasons; n++)
		if (!strcmp(r->reasons[n].code, "clocksource_vdso") &&
		    !strncmp(r->reasons[n].text, no_file, sizeof(no_file) - 1))
			snprintf(r->reasons[n].text, sizeof(r->reasons[n].text), "%s %s", no_file,
				 "the kernel does not say whether clock_gettime() is a syscall; "
				 "tscinfo measured the calls' cost instead");
}

static int collect(struct tsc *t, struct report *r)
{
	if (tsc_get_info(t, &r->info, sizeof(r->info)) < 0)
		return -errno;
	r->nreasons = tsc_reasons(t, r->reasons, 64);
	if (r->nreasons > 64)
		r->nreasons = 64;
	if (r->nreasons > 0)
		dump_unknowns(r);
	measured_note(r);
	r->have_traps = !read_user_traps(r->cfg->sysroot, &r->user_traps);
	freq_best(&r->info, &r->ff, &r->freq);
	captured_read(r->cfg->sysroot, &r->captured);
	if (!r->freq.khz && r->captured.khz >= 1000) {
		r->freq.khz = r->captured.khz;
		r->freq.src = "live-state";
		snprintf(r->freq.how, sizeof(r->freq.how), "by %s",
			 !*r->captured.khz_src ? "a source it did not name" :
			 freq_src_words(r->captured.khz_src) ?
			 freq_src_words(r->captured.khz_src) : r->captured.khz_src);
	}
	r->dump_cannot_tell = cannot_tell(r);
	return r->nreasons < 0 ? r->nreasons : 0;
}

static void stamp(FILE *f)
{
	struct timespec ts;
	struct tm tm;
	char b[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%06ldZ", b, ts.tv_nsec / 1000);
}

/* One line per change: text, JSON or key=value.  Unknown is a word in
 * text and null in JSON, as in the one-shot report. */
static void watch_line(struct tsc *t, const struct cfg *cfg, const struct freq_facts *ff,
		       const struct tsc_info *o, const struct tsc_info *n, bool first)
{
	const char *h, *kind = gettime_kind(n, NULL, &h);
	struct freq fr;

	freq_best(n, ff, &fr);
	if (cfg->format == FMT_LOG) {
		struct tsc_reason rs[64];
		int nr = tsc_reasons(t, rs, 64);

		if (nr < 0)
			nr = 0;
		print_log(stdout, first ? "initial" : "change", n, &fr, NULL, rs, nr > 64 ? 64 : nr,
			  !first && n->switches != o->switches);
	} else if (cfg->format == FMT_JSON) {
		printf("{\"time\": \"");
		stamp(stdout);
		printf("\", \"event\": \"%s\", \"tsc_usable\": %s, \"clocksource\": ",
		       first ? "initial" : "change", n->usable ? "true" : "false");
		json_str(stdout, *n->clocksource ? n->clocksource : NULL);
		printf(", \"tsc_stable\": ");
		json_u64_or_null(stdout, n->tsc_stable >= 0, (unsigned long long)n->tsc_stable);
		printf(", \"clock_gettime\": ");
		json_str(stdout, strcmp(kind, "unknown") ? kind : NULL);
		printf(", \"mult\": ");
		json_u64_or_null(stdout, n->src, (unsigned long long)n->mult);
		printf(", \"shift\": ");
		json_u64_or_null(stdout, n->src, n->shift);
		printf(", \"source\": ");
		json_str(stdout, n->src ? tsc_src_name(n->src) : NULL);
		printf(", \"tsc_khz\": ");
		json_u64_or_null(stdout, fr.khz, (unsigned long long)fr.khz);
		printf(", \"tsc_khz_source\": ");
		json_str(stdout, fr.src);
		printf(", \"switches\": %llu, \"last_step_ns\": ", (unsigned long long)n->switches);
		if (n->switches)
			printf("%lld}\n", (long long)n->last_step_ns);
		else
			printf("null}\n");
	} else {
		stamp(stdout);
		printf(" %s: TSC %s, clocksource %s, ", first ? "initial" : "change",
		       n->usable ? "in use" : "not used",
		       *n->clocksource ? n->clocksource : "unknown");
		if (n->tsc_stable >= 0)
			printf("tsc_stable %d, ", n->tsc_stable);
		else
			printf("tsc_stable unknown, ");
		printf("clock_gettime %s, ", kind);
		if (n->src)
			printf("ns = ticks * %llu >> %u (from %s)", (unsigned long long)n->mult,
			       n->shift, src_words(n->src));
		else
			printf("no conversion factors");
		if (!first && n->switches != o->switches)
			printf(", step %lld ns", (long long)n->last_step_ns);
		printf("\n");
	}
	fflush(stdout);
}

/* Nothing the kernel changed: new factors that are the library's own
 * refinement or rate correction (tsc_get_info(3)) are not a change. */
static bool same(const struct tsc_info *a, const struct tsc_info *b)
{
	bool own = a->refinements != b->refinements || a->rate_corrections != b->rate_corrections;

	return a->usable == b->usable && a->tsc_stable == b->tsc_stable &&
	       a->vdso_clock == b->vdso_clock &&
	       (own || (a->mult == b->mult && a->shift == b->shift)) &&
	       a->src == b->src && a->tsc_user_value == b->tsc_user_value &&
	       !strcmp(a->clocksource, b->clocksource);
}

static int watch(struct tsc *t, const struct cfg *cfg)
{
	struct freq_facts ff;
	struct tsc_info old, now;
	struct pollfd pfd = { .fd = tsc_fd(t), .events = POLLIN };
	double end = cfg->timeout_ms ? ns_now() + cfg->timeout_ms * 1e6 : 0;
	unsigned long changes = 0;

	freq_facts_read(cfg->sysroot, &ff);
	tsc_get_info(t, &old, sizeof(old));
	watch_line(t, cfg, &ff, &old, &old, true);
	for (;;) {
		int ms = -1, n;

		if (end) {
			double left = (end - ns_now()) / 1e6;

			if (left <= 0)
				break;
			ms = (int)left + 1;
		}
		n = poll(&pfd, 1, ms);
		if (n < 0 && errno != EINTR) {
			tool_warn("poll: %s", strerror(errno));
			return EXIT_RUNTIME;
		}
		if (n <= 0)
			continue;
		if (tsc_process_events(t) < 0) {
			tool_warn("%s", strerror(errno));
			return EXIT_RUNTIME;
		}
		tsc_get_info(t, &now, sizeof(now));
		if (same(&old, &now)) {
			old = now;	/* the factors the next line compares with */
			continue;
		}
		watch_line(t, cfg, &ff, &old, &now, false);
		old = now;
		if (cfg->count && ++changes >= cfg->count)
			break;
	}
	return old.usable ? EXIT_TSC_OK : EXIT_TSC_NO;
}

static int dump_cpuid(void)
{
	struct cpuid_set s;
	int i;

	if (tsc__cpuid_live(&s)) {
		tool_warn("this CPU has no CPUID");
		return EXIT_RUNTIME;
	}
	printf("# leaf subleaf eax ebx ecx edx (tscinfo --dump-cpuid)\n");
	for (i = 0; i < s.n; i++)
		printf("0x%08x 0x%x 0x%08x 0x%08x 0x%08x 0x%08x\n", s.l[i].leaf,
		       s.l[i].subleaf, s.l[i].r[0], s.l[i].r[1], s.l[i].r[2], s.l[i].r[3]);
	return 0;
}

static int dump_vdso(const char *file)
{
	const void *base;
	size_t len;
	int fd, err = tsc__vdso_live(&base, &len);

	if (err) {
		tool_warn("no vDSO to dump: %s", strerror(-err));
		return EXIT_RUNTIME;
	}
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, base, len) != (ssize_t)len || close(fd)) {
		tool_warn("cannot write %s: %s", file, strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}

static int run(int argc, char **argv)
{
	struct outfile out;
	struct report r;
	struct stat st;
	struct cfg cfg;
	struct tsc *t;
	char err[256];
	int rc;

	if (parse_args(argc, argv, &cfg, err, sizeof(err)))
		return tool_usage_error(err);
	switch (cfg.action) {
	case ACT_HELP:
		usage(stdout);
		return 0;
	case ACT_VERSION:
		return tool_version();
	case ACT_DUMP_CPUID:
		return dump_cpuid();
	case ACT_DUMP_VDSO:
		return dump_vdso(cfg.dump_file);
	case ACT_RUN:
		break;
	}

	/* A dump that is not there is an error, not a machine without a TSC. */
	if (cfg.sysroot && stat(cfg.sysroot, &st)) {
		tool_warn("sysroot %s: %s", cfg.sysroot, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (cfg.sysroot && !S_ISDIR(st.st_mode)) {
		tool_warn("sysroot %s: not a directory", cfg.sysroot);
		return EXIT_RUNTIME;
	}
	TSC_OPTS(o, .sysroot = cfg.sysroot, .force_calibrate = cfg.calibrate,
		 .no_watcher = true, .all_facts = true);
	t = tsc_open(&o);
	if (!t) {
		tool_warn("cannot open libtsc%s%s: %s", cfg.sysroot ? " on " : "",
			  cfg.sysroot ? cfg.sysroot : "", strerror(errno));
		return EXIT_RUNTIME;
	}
	if (cfg.watch) {
		rc = watch(t, &cfg);
		tsc_close(t);
		return rc;
	}
	memset(&r, 0, sizeof(r));
	r.cfg = &cfg;
	r.cost.rdtsc = r.cost.now_ns = r.cost.clock_gettime = r.cost.syscall = -1;
	/* A dump decides every output: nothing measured on the CPU that
	 * replays it. */
	if (!cfg.sysroot && !cfg.no_cost) {
		measure_gettime_cost(&r.cost);
		if (tsc_in_use(t))
			measure_tsc_cost(t, &r.cost);
	}
	if (cfg.calibrate)
		calibrate_wait(t, &r);
	freq_facts_read(cfg.sysroot, &r.ff);
	if (cfg.cross_cpu) {
		if (tsc_xcpu_check(t, cfg.xcpu_ms, &r.xcpu, sizeof(r.xcpu)) == 0)
			r.have_xcpu = true;
		else
			r.xcpu_err = errno;
		/* The text and the log line say it; JSON's null and the
		 * metrics left out do not say why. */
		if (xcpu_unmeasured(&r) && (cfg.format == FMT_JSON || cfg.format == FMT_PROMETHEUS))
			tool_warn("cross-CPU check not measured: %s", xcpu_unmeasured(&r));
	}
	rc = collect(t, &r);
	tsc_close(t);
	if (rc) {
		tool_warn("%s", strerror(-rc));
		return EXIT_RUNTIME;
	}
	if (out_open(&out, cfg.output))
		return EXIT_RUNTIME;
	if (cfg.format == FMT_JSON)
		print_json(out.f, &r);
	else if (cfg.format == FMT_PROMETHEUS)
		print_prometheus(out.f, &r);
	else if (cfg.format == FMT_LOG)
		print_log_report(out.f, &r);
	else
		print_text(out.f, &r);
	if (out_close(&out))
		return EXIT_RUNTIME;
	if (r.have_xcpu && r.xcpu.backward)
		return EXIT_TSC_NO;
	return r.info.usable ? EXIT_TSC_OK : EXIT_TSC_NO;
}

int main(int argc, char **argv)
{
	tool_buffer_stdout();
	return tool_exit(run(argc, argv));
}
