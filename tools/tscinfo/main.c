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
#include <unistd.h>

#include "internal.h"	/* the capture helpers, compiled in (LIBSRCS) */
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
	      " -J, --json             the same as --format=json\n"
	      " -o, --output <file>    write the report to file, replaced whole (atomically)\n"
	      " -w, --watch            print each change of the kernel's TSC state\n"
	      " -c, --count <n>        with --watch: stop after n changes\n"
	      " -t, --timeout <sec>    with --watch: stop after sec seconds\n"
	      " -x, --cross-cpu[=<ms>] check TSC consistency across CPUs (default 200 ms)\n"
	      " -s, --sysroot <dir>    read a captured dump in dir instead of this machine\n"
	      "     --calibrate        calibrate even when better factors exist\n"
	      "     --no-cost          do not measure read costs\n"
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

/* About 3 ms each: the best of a few runs, per call. */
static void measure_cost(struct tsc *t, struct cost *c)
{
	volatile uint64_t sink = 0;
	struct timespec ts;
	double best[3] = { 1e9, 1e9, 1e9 };
	int run, i;

	for (run = 0; run < 5; run++) {
		double t0 = ns_now(), t1, t2, t3;

		for (i = 0; i < 20000; i++)
			sink += tsc_rdtsc();
		t1 = ns_now();
		for (i = 0; i < 20000; i++)
			sink += tsc_now_ns(t);
		t2 = ns_now();
		for (i = 0; i < 2000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		t3 = ns_now();
		if ((t1 - t0) / 20000 < best[0])
			best[0] = (t1 - t0) / 20000;
		if ((t2 - t1) / 20000 < best[1])
			best[1] = (t2 - t1) / 20000;
		if ((t3 - t2) / 2000 < best[2])
			best[2] = (t3 - t2) / 2000;
	}
	(void)sink;
	c->rdtsc = best[0];
	c->now_ns = best[1];
	c->clock_gettime = best[2];
}

static int collect(struct tsc *t, struct report *r)
{
	if (tsc_get_info(t, &r->info, sizeof(r->info)) < 0)
		return -errno;
	r->nreasons = tsc_reasons(t, r->reasons, 64);
	if (r->nreasons > 64)
		r->nreasons = 64;
	r->have_traps = !read_user_traps(r->cfg->sysroot, &r->user_traps);
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

/* One line per change: text, JSON or key=value. */
static void watch_line(struct tsc *t, const struct cfg *cfg, const struct tsc_info *o,
		       const struct tsc_info *n, bool first)
{
	const char *h;

	if (cfg->format == FMT_LOG) {
		struct tsc_reason rs[64];
		int nr = tsc_reasons(t, rs, 64);

		if (nr < 0)
			nr = 0;
		print_log(stdout, first ? "initial" : "change", n, rs, nr > 64 ? 64 : nr,
			  !first && n->switches != o->switches);
	} else if (cfg->format == FMT_JSON) {
		printf("{\"time\": \"");
		stamp(stdout);
		printf("\", \"event\": \"%s\", \"tsc_usable\": %s, \"clocksource\": \"%s\", "
		       "\"tsc_stable\": %d, \"clock_gettime\": \"%s\", \"mult\": %llu, "
		       "\"shift\": %u, \"source\": \"%s\", \"switches\": %llu, "
		       "\"last_step_ns\": %lld}\n", first ? "initial" : "change",
		       n->usable ? "true" : "false", n->clocksource, n->tsc_stable,
		       gettime_kind(n, &h), (unsigned long long)n->mult, n->shift,
		       tsc_src_name(n->src), (unsigned long long)n->switches,
		       (long long)n->last_step_ns);
	} else {
		stamp(stdout);
		printf(" %s: TSC %s, clocksource %s, tsc_stable %d, clock_gettime %s, "
		       "ns = ticks * %llu >> %u (%s)", first ? "initial" : "change",
		       n->usable ? "in use" : "not used", *n->clocksource ? n->clocksource : "?",
		       n->tsc_stable, gettime_kind(n, &h), (unsigned long long)n->mult,
		       n->shift, tsc_src_name(n->src));
		if (!first && n->switches != o->switches)
			printf(", step %lld ns", (long long)n->last_step_ns);
		printf("\n");
	}
	fflush(stdout);
}

static bool same(const struct tsc_info *a, const struct tsc_info *b)
{
	return a->usable == b->usable && a->tsc_stable == b->tsc_stable &&
	       a->vdso_clock == b->vdso_clock && a->mult == b->mult &&
	       a->shift == b->shift && a->src == b->src && a->tsc_user_value == b->tsc_user_value &&
	       !strcmp(a->clocksource, b->clocksource);
}

static int watch(struct tsc *t, const struct cfg *cfg)
{
	struct tsc_info old, now;
	struct pollfd pfd = { .fd = tsc_fd(t), .events = POLLIN };
	double end = cfg->timeout_ms ? ns_now() + cfg->timeout_ms * 1e6 : 0;
	unsigned long changes = 0;

	tsc_get_info(t, &old, sizeof(old));
	watch_line(t, cfg, &old, &old, true);
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
		if (same(&old, &now))
			continue;
		watch_line(t, cfg, &old, &now, false);
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

int main(int argc, char **argv)
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
	r.cost.rdtsc = r.cost.now_ns = r.cost.clock_gettime = -1;
	if (!cfg.sysroot && !cfg.no_cost && tsc_in_use(t))
		measure_cost(t, &r.cost);
	if (cfg.cross_cpu) {
		if (tsc_xcpu_check(t, cfg.xcpu_ms, &r.xcpu, sizeof(r.xcpu)) == 0)
			r.have_xcpu = true;
		else
			tool_warn("cross-CPU check: %s", strerror(errno));
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
		print_log(out.f, "state", &r.info, r.reasons, r.nreasons, false);
	else
		print_text(out.f, &r);
	if (out_close(&out))
		return EXIT_RUNTIME;
	if (r.have_xcpu && r.xcpu.backward)
		return EXIT_TSC_NO;
	return r.info.usable ? EXIT_TSC_OK : EXIT_TSC_NO;
}
