// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscbench's report: a table for people, JSON (stable field names, see
 * tscbench.1) for scripts; the goals both show. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "tscbench.h"

static const struct method *by_name(const char *name)
{
	int i = method_index(name);
	const struct method *m = i < 0 ? NULL : &methods[i];

	return m && m->avail && m->batches ? m : NULL;
}

static bool kernel_factors(enum tsc_src s)
{
	return s != TSC_SRC_CALIBRATION && s != TSC_SRC_NONE;
}

static void set_goal(struct goal *g, const char *name, const char *unit,
		     double value, double limit, bool strict)
{
	g->name = name;
	g->unit = unit;
	g->note[0] = 0;
	g->limit = limit;
	g->known = !isnan(value);
	g->value = value;
	g->met = g->known && (strict ? value < limit : value <= limit);
	g->judged = true;
	g->strict = strict;
}

/* libtsc's wall reads against tsc_now_ns() and the vDSO's clock_gettime()
 * of the same clock, and from 1 to N threads (issue 32): at most 1.15x,
 * 0.6x and 1.15x.  Measurable only where libtsc uses the TSC. */
static const struct wall_row {
	const char *lt, *vdso, *clk;
} wall_rows[] = {
	{ "tsc_clock_gettime_monotonic", "clock_gettime_monotonic", "MONOTONIC" },
	{ "tsc_clock_gettime_monotonic_raw", "clock_gettime_monotonic_raw", "MONOTONIC_RAW" },
	{ "tsc_clock_gettime_realtime", "clock_gettime_realtime", "REALTIME" },
	{ "tsc_clock_gettime_boottime", "clock_gettime_boottime", "BOOTTIME" },
	{ "tsc_clock_gettime_tai", "clock_gettime_tai", "TAI" },
};

static double ratio_of(const struct method *a, const struct method *b)
{
	return a && b && b->ns.median > 0 ? a->ns.median / b->ns.median : NAN;
}

/* Per-call cost on the most threads measured over one thread's. */
static double n_over_1(const struct method *m)
{
	if (!m || m->ntp < 2 || !(m->tp[0].ns_per_call > 0))
		return NAN;
	return m->tp[m->ntp - 1].ns_per_call / m->tp[0].ns_per_call;
}

/* m's N/1 over bare RDTSC's of the same round, which shares nothing:
 * what is left is m's own contention, not the machine's (other load on
 * the CPUs the threads run on slows RDTSC alike); the median round, and
 * the least and most of the rounds.  NAN without bare RDTSC's rounds. */
static double flatness(const struct method *m, unsigned int *threads, double *lo, double *hi)
{
	const struct method *bare = by_name("rdtsc");
	double v[TP_ROUNDS];
	struct dist d;
	int r;

	*threads = m && m->ntp ? m->tp[m->ntp - 1].threads : 0;
	*lo = *hi = NAN;
	if (!m || !bare || m->ntp < 2 || !m->nrounds || bare->nrounds != m->nrounds)
		return NAN;
	for (r = 0; r < m->nrounds; r++)
		v[r] = m->n_over_1[r] / bare->n_over_1[r];
	dist_of(v, (size_t)m->nrounds, &d);	/* sorts v */
	*lo = v[0];
	*hi = v[m->nrounds - 1];
	return d.median;
}

/* Within 200 ns of the kernel's clock over a minute: judged only on a
 * drift run of a minute or more, a figure on a shorter one. */
static int wall_accuracy_goals(const struct accuracy *a, struct goal *g)
{
	static const char *const name[WALL_NROWS] = {
		"tsc_clock_gettime_ordered(MONOTONIC) - kernel's",
		"tsc_clock_gettime_ordered(REALTIME) - kernel's",
		"Abseil GetCurrentTimeNanos() - REALTIME",
	};
	int k, n = 0;

	if (a->ran && a->wall.absl) {
		set_goal(&g[n], name[WALL_ABSL], "ns", a->wall.worst_ns[WALL_ABSL], 200, false);
		g[n].judged = false;
		snprintf(g[n++].note, sizeof(g->note), "the peer, over %.1f s", a->duration_s);
	}
	if (!a->ran || !a->wall.ran)
		return n;
	g += n;
	for (k = 0; k <= WALL_REAL; k++) {
		set_goal(&g[k], name[k], "ns", a->wall.worst_ns[k], 200, false);
		if (a->duration_s < 59.5) {
			g[k].judged = false;
			snprintf(g[k].note, sizeof(g->note), "over %.1f s: the goal is over a minute "
				 "(--duration 60)", a->duration_s);
		} else {
			snprintf(g[k].note, sizeof(g->note), "over %.1f s, %d samples",
				 a->duration_s, a->wall.n);
		}
	}
	return n + WALL_REAL + 1;
}

static int wall_goals(const struct env *e, struct goal *g)
{
	const struct method *now = by_name("tsc_now_ns");
	unsigned int k, threads;
	double lo, hi;
	int n = 0;

	if (!e->info.usable) {
		set_goal(&g[n], "tsc_clock_gettime() at TSC cost", "x", NAN, 1.15, false);
		snprintf(g[n++].note, sizeof(g->note), "not measured: libtsc does not use the TSC "
			 "here (--sysroot measures it as on a dump's machine)");
		return n;
	}
	{
		const struct method *lt = by_name("tsc_clock_gettime_realtime");
		const struct method *ab = by_name("absl_get_current_time_nanos");

		if (lt && ab) {
			set_goal(&g[n], "tsc_clock_gettime(REALTIME) / Abseil's", "x",
				 ratio_of(lt, ab), 1.1, false);
			snprintf(g[n++].note, sizeof(g->note), "GetCurrentTimeNanos(), the peer");
		}
	}
	{
		/* The ordered read keeps 0.6's promise between threads: against
		 * tsc_now_ns_ordered() as the unordered one against tsc_now_ns();
		 * against the vDSO, which reads ordered too, a figure. */
		const struct method *o = by_name("tsc_clock_gettime_ordered_monotonic");
		const struct method *no = by_name("tsc_now_ns_ordered");
		const struct method *vd = by_name("clock_gettime_monotonic");

		if (o) {
			set_goal(&g[n], "tsc_clock_gettime_ordered(MONOTONIC) / tsc_now_ns_ordered",
				 "x", ratio_of(o, no), 1.15, false);
			if (!no)
				snprintf(g[n].note, sizeof(g->note), "not measured: "
					 "tsc_now_ns_ordered not selected");
			n++;
			set_goal(&g[n], "tsc_clock_gettime_ordered(MONOTONIC) / vDSO", "x",
				 ratio_of(o, vd), 1.0, false);
			g[n].judged = false;
			snprintf(g[n++].note, sizeof(g->note), "ordered as the kernel's: a figure");
		}
	}
	for (k = 0; k < sizeof(wall_rows) / sizeof(wall_rows[0]); k++) {
		const struct wall_row *w = &wall_rows[k];
		const struct method *lt = by_name(w->lt), *vd = by_name(w->vdso);

		if (!lt)
			continue;
		snprintf(g[n].name_buf, sizeof(g->name_buf), "tsc_clock_gettime(%s) / tsc_now_ns",
			 w->clk);
		set_goal(&g[n], g[n].name_buf, "x", ratio_of(lt, now), 1.15, false);
		if (!now)
			snprintf(g[n].note, sizeof(g->note), "not measured: tsc_now_ns not selected");
		n++;
		snprintf(g[n].name_buf, sizeof(g->name_buf), "tsc_clock_gettime(%s) / vDSO", w->clk);
		set_goal(&g[n], g[n].name_buf, "x", ratio_of(lt, vd), 0.6, false);
		if (!vd)
			snprintf(g[n].note, sizeof(g->note), "not measured: %s not selected",
				 w->vdso);
		else if (!e->vdso_gettime)
			snprintf(g[n].note, sizeof(g->note), "no vDSO here: against a system call");
		n++;
		snprintf(g[n].name_buf, sizeof(g->name_buf), "tsc_clock_gettime(%s), N / 1 thread",
			 w->clk);
		set_goal(&g[n], g[n].name_buf, "x", flatness(lt, &threads, &lo, &hi), 1.15, false);
		if (threads >= 2 && !isnan(lo))
			snprintf(g[n].note, sizeof(g->note), "ns per call, %u threads over 1 (%.2fx), "
				 "over bare RDTSC's in each of %d rounds: %.2f..%.2f", threads,
				 n_over_1(lt), lt->nrounds, lo, hi);
		else if (threads >= 2)
			snprintf(g[n].note, sizeof(g->note), "not measured: bare RDTSC (rdtsc) "
				 "not selected");
		else
			snprintf(g[n].note, sizeof(g->note), "not measured: %s",
				 e->ncpus < 2 ? "one CPU" : "no throughput run (--threads)");
		n++;
	}
	return n;
}

/* The goals of the calibration start-up (calib.c): the calibrated TSC in
 * use within 100 ms of tsc_open() at a bound of 1 ppm at most, 0.1 ppm
 * after 10 s of following (a shorter run shows its bound as a figure),
 * and no step back meanwhile. */
static int calib_goals(const struct calib_startup *c, struct goal *g)
{
	int n = 0;

	if (!c->ran || *c->na || c->err)
		return 0;
	if (c->took) {
		set_goal(&g[n], "calibrated TSC in use after", "ms", c->use_ms, 100, false);
		snprintf(g[n++].note, sizeof(g->note), "since tsc_open(), force_calibrate");
		set_goal(&g[n], "bound at takeover", "ppm", c->use_err_ppb / 1000.0, 1.0, false);
		snprintf(g[n++].note, sizeof(g->note), "calibrated %llu kHz",
			 (unsigned long long)c->khz);
		/* A figure, where the TSC took over from the fallback clock
		 * (else it slewed from the kernel's factors): a switch's
		 * margin would be 1000 ns. */
		if (c->switched) {
			set_goal(&g[n], "takeover step", "ns", (double)c->takeover_step_ns, 0, false);
			g[n].judged = false;
			snprintf(g[n++].note, sizeof(g->note),
				 "TSC line minus fallback clock; a switch's margin is 1000 ns");
		}
	} else {
		/* A lower bound: it was not in use when the run ended. */
		set_goal(&g[n], "calibrated TSC in use after", "ms", c->end_s * 1e3, 100, false);
		snprintf(g[n++].note, sizeof(g->note), "not in use by the end: at least this");
	}
	snprintf(g[n].name_buf, sizeof(g->name_buf), "bound after %g s", c->follow_s);
	set_goal(&g[n], g[n].name_buf, "ppm", c->end_err_ppb / 1000.0, 0.1, false);
	g[n].name = g[n].name_buf;
	snprintf(g[n].note, sizeof(g->note), "%llu refinements", (unsigned long long)c->refinements);
	if (c->end_s > c->follow_s + 0.05)	/* it waited for the takeover */
		snprintf(g[n].note + strlen(g[n].note), sizeof(g->note) - strlen(g[n].note),
			 ", at %.1f s", c->end_s);
	if (c->follow_s < 10) {
		g[n].judged = false;
		g[n].met = false;
		snprintf(g[n].note + strlen(g[n].note), sizeof(g->note) - strlen(g[n].note),
			 "; judged only after 10 s (--calib-follow)");
	}
	n++;
	set_goal(&g[n], "backward steps while calibrating", "steps", (double)c->backward, 0,
		 false);
	snprintf(g[n++].note, sizeof(g->note), "%llu tsc_now_ns_ordered() in one thread",
		 (unsigned long long)c->reads);
	return n;
}

int goals_eval(const struct env *e, const struct accuracy *a, struct goal *g, int max)
{
	const struct method *bare = by_name("rdtsc"), *raw = by_name("tsc_rdtsc");
	const struct method *now = by_name("tsc_now_ns"), *cg = by_name("clock_gettime_monotonic");
	const struct method *vr = by_name("vdso_tsc_raw");
	int n = 0, k;

	/* While libtsc falls back, tsc_now_ns() is a clock_gettime(): its
	 * cost goals do not apply (the table's note says so). */
	if (!e->info.usable)
		now = NULL;

	if (max < MAX_GOALS)
		return 0;
	if (bare && raw)
		set_goal(&g[n++], "tsc_rdtsc / bare RDTSC", "x", raw->ratio, 1.05, false);
	if (bare && now)
		set_goal(&g[n++], "tsc_now_ns / bare RDTSC", "x", now->ratio, 1.05, false);
	if (cg && raw)
		set_goal(&g[n++], "tsc_rdtsc / clock_gettime(MONOTONIC)", "x",
			 raw->ns.median / cg->ns.median, 0.5, true);
	if (cg && now)
		set_goal(&g[n++], "tsc_now_ns / clock_gettime(MONOTONIC)", "x",
			 now->ns.median / cg->ns.median, 0.5, true);
	for (k = 0; a->ran && k < a->nseries; k++) {
		const struct drift_series *s = &a->s[k];

		if (!s->usable)
			continue;
		if (kernel_factors(s->src)) {
			set_goal(&g[n], "drift vs MONOTONIC_RAW, kernel factors", "ppm",
				 fabs(s->raw.ppm), 0.1, false);
		} else {
			set_goal(&g[n], "drift vs MONOTONIC_RAW, calibrated", "ppm",
				 fabs(s->raw.ppm), 1.0, false);
		}
		snprintf(g[n++].note, sizeof(g->note), "%s%s", s->src ? "factors from " : "",
			 factors_words(s->src));
	}
	if (a->open_default.opens) {
		bool kf = kernel_factors(a->open_default.src);

		/* With its watcher, a handle that must calibrate only begins
		 * in tsc_open(): the open is as quick as with kernel factors. */
		set_goal(&g[n], kf ? "tsc_open(), kernel factors" :
			 "tsc_open(), no kernel factors", "ms",
			 a->open_default.us.median / 1e3, 1.0, false);
		snprintf(g[n++].note, sizeof(g->note), "default options, %s%s",
			 a->open_default.src ? "factors from " : "",
			 factors_words(a->open_default.src));
	}
	if (a->open_sysroot.opens && kernel_factors(a->open_sysroot.src) &&
	    !kernel_factors(a->open_default.src)) {
		set_goal(&g[n], "tsc_open(), kernel factors (from a dump)", "ms",
			 a->open_sysroot.us.median / 1e3, 1.0, false);
		snprintf(g[n++].note, sizeof(g->note), "--open-sysroot, factors from %s",
			 tsc_src_name(a->open_sysroot.src));
	}
	if (a->open_calib.opens) {
		set_goal(&g[n], "tsc_open(), force_calibrate", "ms",
			 a->open_calib.us.median / 1e3, 1.0, false);
		snprintf(g[n++].note, sizeof(g->note), "with a watcher: it calibrates afterwards");
	} else if (a->calib.ran && !*a->calib.na && !a->calib.err) {
		set_goal(&g[n], "tsc_open(), force_calibrate", "ms", a->calib.open_ms, 1.0, false);
		snprintf(g[n++].note, sizeof(g->note), "one open (calibration start-up)");
	}
	if (bare && vr)
		set_goal(&g[n++], "__vdso_tsc_raw / bare RDTSC", "x", vr->ratio, 1.3, false);
	if (cg && vr)
		set_goal(&g[n++], "__vdso_tsc_raw / clock_gettime(MONOTONIC)", "x",
			 vr->ns.median / cg->ns.median, 1.0, true);
	n += calib_goals(&a->calib, &g[n]);
	n += wall_goals(e, &g[n]);
	n += wall_accuracy_goals(a, &g[n]);
	return n;
}

static bool changed(const struct env *e)
{
	return e->info_end.switches != e->info.switches ||
	       e->info_end.usable != e->info.usable ||
	       strcmp(e->clocksource, e->clocksource_end);
}

/* clock_gettime()'s verdict and how it is known (gettime_verdict()). */
static void gettime_text(FILE *f, const struct env *e)
{
	const char *how = e->gettime_from;

	fprintf(f, "clock_gettime: %s", e->gettime_vdso ? "vDSO" : "system call");
	if (!strcmp(how, "current_clocksource_vdso"))
		fprintf(f, " (current_clocksource_vdso=%d)\n", e->cs_vdso);
	else if (!strcmp(how, "no-vdso"))
		fprintf(f, " (no vDSO)\n");
	else if (!strcmp(how, "measured"))
		fprintf(f, ", %.1f ns a call (the system call: %.1f ns) (measured)\n",
			e->gettime_ns, e->syscall_ns);
	else
		fprintf(f, " (inferred from the clocksource; not measured: it takes both "
			"clock_gettime_monotonic and syscall_clock_gettime)\n");
}

static void header(FILE *f, const struct env *e)
{
	const struct tsc_info *i = &e->info;

	fprintf(f, "tscbench (libtsc %s): %s, %d CPU%s, Linux %s\n", tsc_version(),
		e->cpu_model, e->ncpus, e->ncpus == 1 ? "" : "s", e->kernel);
	fprintf(f, "clocksource %s; ", *e->clocksource ? e->clocksource : "unknown");
	gettime_text(f, e);
	if (e->sysroot)
		fprintf(f, "libtsc opened on the dump %s (--sysroot): its facts, this CPU's "
			"TSC\n", e->sysroot);
	fprintf(f, "libtsc: TSC %s; ", i->usable ? "in use" : "not used");
	if (i->src) {
		fprintf(f, "ns = ticks * %llu >> %u (%s", (unsigned long long)i->mult, i->shift,
			tsc_src_name(i->src));
		if (i->src == TSC_SRC_CALIBRATION && i->err_ppb != UINT64_MAX)
			fprintf(f, ", error bound %.3f ppm", i->err_ppb / 1000.0);
		fprintf(f, ")\n");
	} else {
		fprintf(f, "no conversion factors\n");
	}
	/* The best figure known, as tscinfo gives it: libtsc's, else the
	 * kernel log's or the CPU's. */
	fprintf(f, "TSC frequency: ");
	freq_print(f, &e->freq);
}

static void text_cost(FILE *f, const struct cfg *cfg, const struct env *e)
{
	int i, j, any = 0, na = 0;

	fprintf(f, "\nCost per call: %lu interleaved rounds, median (p10..p90)%s\n",
		cfg->rounds, e->info.src ? "" : "; ns from CLOCK_MONOTONIC_RAW");
	fprintf(f, "%-35s %9s %19s %9s %8s  %s\n", "method", "ns", "(p10..p90)", "ticks",
		"x rdtsc", "note");
	for (i = 0; i < nmethods; i++) {
		const struct method *m = &methods[i];
		char range[40];

		if (!m->selected || !m->avail || !m->batches)
			continue;
		char ticks[24], ratio[24];

		snprintf(range, sizeof(range), "(%.2f..%.2f)", m->ns.p10, m->ns.p90);
		/* Unknown is words, never "nan" or "0.000": RDTSC could not
		 * run, or bare RDTSC was not measured to compare with. */
		if (isnan(m->ticks.median) || !e->rdtsc_ok)
			snprintf(ticks, sizeof(ticks), "n/a"), na = 1;
		else
			snprintf(ticks, sizeof(ticks), "%.1f", m->ticks.median);
		if (isnan(m->ratio) || m->ratio <= 0)
			snprintf(ratio, sizeof(ratio), "n/a"), na = 1;
		else
			snprintf(ratio, sizeof(ratio), "%.3f", m->ratio);
		fprintf(f, "%-35s %9.2f %19s %9s %8s  %s\n", m->name, m->ns.median, range,
			ticks, ratio, m->note);
	}
	if (na) {
		const char *why = methods[method_index("rdtsc")].why;

		if (!e->rdtsc_ok)
			fprintf(f, "n/a: RDTSC could not run%s%s\n", *why ? ": " : "", why);
		else
			fprintf(f, "n/a: bare RDTSC (rdtsc) was not measured: nothing to compare with\n");
	}
	for (i = 0; i < nmethods; i++) {
		const struct method *m = &methods[i];

		if (!m->selected || m->avail)
			continue;
		if (!any++)
			fprintf(f, "unavailable:\n");
		fprintf(f, "  %-29s %s\n", m->name, m->why);
	}

	for (i = 0; i < nmethods && !methods[i].ntp; i++)
		;
	if (i == nmethods)
		return;
	fprintf(f, "\nThroughput, pinned threads: ns per call per thread / Mcalls/s in all\n");
	fprintf(f, "%-35s", "method");
	for (j = 0; j < methods[i].ntp; j++) {
		char h[24];

		snprintf(h, sizeof(h), "%u thread%s", methods[i].tp[j].threads,
			 methods[i].tp[j].threads > 1 ? "s" : "");
		fprintf(f, " %17s", h);
	}
	fprintf(f, "\n");
	for (i = 0; i < nmethods; i++) {
		const struct method *m = &methods[i];

		if (!m->ntp)
			continue;
		fprintf(f, "%-35s", m->name);
		for (j = 0; j < m->ntp; j++) {
			char c[32];

			snprintf(c, sizeof(c), "%.2f / %.1f", m->tp[j].ns_per_call,
				 m->tp[j].mcalls_per_s);
			fprintf(f, " %17s", c);
		}
		fprintf(f, "\n");
	}
}

/* A calibration's bound in words: libtsc's UINT64_MAX is "no figure yet". */
static const char *bound_words(char *b, size_t len, uint64_t ppb)
{
	if (ppb == UINT64_MAX)
		snprintf(b, len, "no bound yet");
	else
		snprintf(b, len, "bound %.3f ppm", ppb / 1000.0);
	return b;
}

/* The end of a "time going back" line: its worst, or none. */
static void back_words(FILE *f, uint64_t backward, uint64_t worst_ns)
{
	if (backward)
		fprintf(f, "worst %llu ns\n", (unsigned long long)worst_ns);
	else
		fprintf(f, "none went back\n");
}

static void text_calib(FILE *f, const struct calib_startup *c)
{
	char b[40];

	if (!c->ran)
		return;
	fprintf(f, "\nCalibration start-up (force_calibrate, with a watcher)");
	if (*c->na) {
		fprintf(f, ": not applicable: %s\n", c->na);
		return;
	}
	if (c->err) {
		fprintf(f, ": fails: %s\n", strerror(c->err));
		return;
	}
	fprintf(f, ", followed %.1f s:\n", c->end_s);
	fprintf(f, "  tsc_open() %.3f ms; then %s%s\n", c->open_ms,
		c->open_usable ? "the TSC with factors from " : "the fallback clock, calibrating",
		c->open_usable ? tsc_src_name(c->open_src) : "");
	if (c->took && c->switched)
		fprintf(f, "  calibrated TSC in use after %.1f ms, bound %.3f ppm, %llu kHz, "
			"takeover step %+lld ns\n", c->use_ms, c->use_err_ppb / 1000.0,
			(unsigned long long)c->khz, (long long)c->takeover_step_ns);
	else if (c->took)
		fprintf(f, "  calibrated TSC in use after %.1f ms, bound %.3f ppm, %llu kHz, "
			"%s%s%s(no switch)\n", c->use_ms,
			c->use_err_ppb / 1000.0, (unsigned long long)c->khz,
			c->open_src ? "a slew from the " : "",
			c->open_src ? tsc_src_name(c->open_src) : "",
			c->open_src ? " factors " : "");
	else
		fprintf(f, "  calibrated TSC NOT in use after %.1f s (%s)\n", c->end_s,
			bound_words(b, sizeof(b), c->end_err_ppb));
	fprintf(f, "  after %.1f s: %s, %llu refinement%s, %llu switch%s "
		"(last step %+lld ns), %s\n", c->end_s, bound_words(b, sizeof(b), c->end_err_ppb),
		(unsigned long long)c->refinements, c->refinements == 1 ? "" : "s",
		(unsigned long long)c->switches, c->switches == 1 ? "" : "es",
		(long long)c->last_step_ns,
		c->end_usable ? "TSC in use" : "TSC not in use");
	fprintf(f, "  time going back in one thread: %llu of %llu tsc_now_ns_ordered(), ",
		(unsigned long long)c->backward, (unsigned long long)c->reads);
	back_words(f, c->backward, c->worst_back_ns);
}

static void text_accuracy(FILE *f, const struct accuracy *a)
{
	int k;

	if (a->ran) {
		fprintf(f, "\nDrift over %.1f s (%d samples): library ns against\n",
			a->duration_s, a->s[0].n);
		fprintf(f, "%-11s %-12s %-36s %s\n", "handle", "factors", "CLOCK_MONOTONIC_RAW",
			"CLOCK_MONOTONIC");
		for (k = 0; k < a->nseries; k++) {
			const struct drift_series *s = &a->s[k];
			char r[64], m[64];

			snprintf(r, sizeof(r), "%+.4f ppm, %+.3f us at end", s->raw.ppm, s->raw.end_us);
			snprintf(m, sizeof(m), "%+.4f ppm, %+.3f us at end", s->mono.ppm, s->mono.end_us);
			fprintf(f, "%-11s %-12s %-36s %s%s\n", s->handle,
				s->usable ? tsc_src_name(s->src) : "(fallback)", r, m,
				s->usable ? "" : "  (TSC not in use: reads are the clock)");
		}
		if (a->wall.ran)
			fprintf(f, "tsc_clock_gettime_ordered() minus the kernel's clock_gettime(), worst: "
				"MONOTONIC %.0f ns, REALTIME %.0f ns (each sample in the narrowest "
				"of 16 brackets; widest taken %.0f ns)\n", a->wall.worst_ns[WALL_MONO],
				a->wall.worst_ns[WALL_REAL], a->wall.bracket_ns);
		else
			fprintf(f, "tsc_clock_gettime_ordered() against the kernel's: not measured: "
				"libtsc does not use the TSC\n");
		if (a->wall.absl)
			fprintf(f, "Abseil GetCurrentTimeNanos() minus the kernel's REALTIME, "
				"worst: %.0f ns (the peer, sampled alike)\n",
				a->wall.worst_ns[WALL_ABSL]);
		fprintf(f, "time going back in one thread: %llu of %llu reads, ",
			(unsigned long long)a->backward, (unsigned long long)a->reads);
		back_words(f, a->backward, a->worst_back_ns);
	}
	if (a->xcpu_one_cpu || (a->have_xcpu && a->xcpu.cpus < 2))
		fprintf(f, "across CPUs: not measured: one CPU in this process's affinity set\n");
	else if (a->have_xcpu && a->xcpu.backward)
		fprintf(f, "across CPUs: %u CPUs, %llu reads, %llu backward, worst %llu ticks "
			"(%llu ns) TIME WENT BACK\n", a->xcpu.cpus, (unsigned long long)a->xcpu.reads,
			(unsigned long long)a->xcpu.backward, (unsigned long long)a->xcpu.worst_ticks,
			(unsigned long long)a->xcpu.worst_ns);
	else if (a->have_xcpu)
		fprintf(f, "across CPUs: %u CPUs, %llu reads, none went back\n", a->xcpu.cpus,
			(unsigned long long)a->xcpu.reads);
	else if (a->xcpu_err)
		fprintf(f, "across CPUs: not measured: %s\n", a->xcpu_why);
	if (a->open_default.opens || a->open_default.err) {
		const struct open_time *d = &a->open_default, *c = &a->open_calib;

		if (d->err)
			fprintf(f, "\ntsc_open(): fails: %s\n", strerror(d->err));
		else
			fprintf(f, "\ntsc_open(): %.3f ms median (%.3f..%.3f) of %lu, %s%s\n",
				d->us.median / 1e3, d->min_us / 1e3, d->max_us / 1e3, d->opens,
				d->src ? "factors from " : "", factors_words(d->src));
		if (a->open_sysroot.err)
			fprintf(f, "tsc_open(sysroot): fails: %s\n", strerror(a->open_sysroot.err));
		else if (a->open_sysroot.opens)
			fprintf(f, "tsc_open(sysroot): %.3f ms median (%.3f..%.3f) of %lu, %s%s\n",
				a->open_sysroot.us.median / 1e3, a->open_sysroot.min_us / 1e3,
				a->open_sysroot.max_us / 1e3, a->open_sysroot.opens,
				a->open_sysroot.src ? "factors from " : "",
				factors_words(a->open_sysroot.src));
		if (c->err)
			fprintf(f, "tsc_open(force_calibrate): fails: %s\n", strerror(c->err));
		else if (c->opens)
			fprintf(f, "tsc_open(force_calibrate): %.3f ms median (%.3f..%.3f) of %lu "
				"(with a watcher: the calibration goes on afterwards)\n",
				c->us.median / 1e3, c->min_us / 1e3, c->max_us / 1e3, c->opens);
	}
	text_calib(f, &a->calib);
}

void print_text(FILE *f, const struct cfg *cfg, const struct env *e,
		const struct accuracy *a)
{
	struct goal g[MAX_GOALS];
	int n = goals_eval(e, a, g, MAX_GOALS), i;

	header(f, e);
	if (changed(e))
		fprintf(f, "CHANGED DURING THE RUN: clocksource %s -> %s, libtsc TSC %s -> %s, "
			"%llu switches\n", e->clocksource, e->clocksource_end,
			e->info.usable ? "in use" : "not used",
			e->info_end.usable ? "in use" : "not used",
			(unsigned long long)(e->info_end.switches - e->info.switches));
	text_cost(f, cfg, e);
	text_accuracy(f, a);
	if (!n)
		return;
	fprintf(f, "\nGoals:\n");
	for (i = 0; i < n; i++) {
		if (!strcmp(g[i].name, "takeover step")) {
			fprintf(f, "  %-6s %-46s %+10.0f %-5s (%s)\n", "figure", g[i].name,
				g[i].value, g[i].unit, g[i].note);
			continue;
		}
		if (!g[i].known) {
			fprintf(f, "  %-6s %-46s %10s %-5s (goal %s %g)%s%s\n", "?", g[i].name, "-",
				g[i].unit, g[i].strict ? "<" : "<=", g[i].limit,
				*g[i].note ? "  " : "", g[i].note);
			continue;
		}
		fprintf(f, "  %-6s %-46s %10.*f %-5s (goal %s %g)%s%s\n",
			!g[i].judged ? "figure" : g[i].met ? "met" : "MISSED",
			g[i].name, strcmp(g[i].unit, "steps") ? 4 : 0, g[i].value,
			g[i].unit, g[i].strict ? "<" : "<=",
			g[i].limit, *g[i].note ? "  " : "", g[i].note);
	}
}

/* ---- JSON ---- */

static void jnum(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

/* A key (and what goes before it) and a number. */
static void jkv(FILE *f, const char *key, double v)
{
	fputs(key, f);
	jnum(f, v);
}

static void jdist(FILE *f, const struct dist *d)
{
	jkv(f, "{\"median\": ", d->median);
	jkv(f, ", \"p10\": ", d->p10);
	jkv(f, ", \"p90\": ", d->p90);
	fputs("}", f);
}

static void json_methods(FILE *f, const struct env *e)
{
	int i, j, first = 1;

	fprintf(f, ",\n  \"methods\": [");
	for (i = 0; i < nmethods; i++) {
		const struct method *m = &methods[i];

		if (!m->selected)
			continue;
		fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
		first = 0;
		json_str(f, m->name);
		fprintf(f, ", \"description\": ");
		json_str(f, m->what);
		fprintf(f, ", \"available\": %s, \"reason\": ", m->avail ? "true" : "false");
		json_str(f, m->avail ? NULL : m->why);
		fprintf(f, ", \"note\": ");
		json_str(f, *m->note ? m->note : NULL);
		if (!m->avail || !m->batches) {
			fprintf(f, ", \"cost\": null, \"throughput\": []}");
			continue;
		}
		fprintf(f, ",\n     \"cost\": {\"batches\": %lu, \"calls_per_batch\": %lu, \"ns\": ",
			m->batches, m->per_batch);
		jdist(f, &m->ns);
		fprintf(f, ", \"ticks\": ");
		if (e->rdtsc_ok)
			jdist(f, &m->ticks);
		else
			fputs("null", f);
		fprintf(f, ", \"ratio_to_rdtsc\": ");
		jnum(f, m->ratio > 0 ? m->ratio : NAN);
		fprintf(f, "},\n     \"throughput\": [");
		for (j = 0; j < m->ntp; j++) {
			fprintf(f, "%s{\"threads\": %u, \"ns_per_call\": ", j ? ", " : "",
				m->tp[j].threads);
			jnum(f, m->tp[j].ns_per_call);
			fprintf(f, ", \"mcalls_per_s\": ");
			jnum(f, m->tp[j].mcalls_per_s);
			fputs("}", f);
		}
		fputs("]}", f);
	}
	fprintf(f, "\n  ]");
}

static void jref(FILE *f, const char *name, const struct ref_drift *d)
{
	fprintf(f, "\"%s\": {\"ppm\": ", name);
	jnum(f, d->ppm);
	jkv(f, ", \"ppm_end\": ", d->ppm_end);
	jkv(f, ", \"end_us\": ", d->end_us);
	jkv(f, ", \"max_abs_us\": ", d->max_abs_us);
	fputs("}", f);
}

/*
 * Nothing here without a bound: null, as for a number not measured; so is
 * UINT64_MAX, libtsc's "no figure yet" (err_ppb before a calibration's
 * first measurement).
 */
static void jppb(FILE *f, const char *key, bool known, uint64_t v)
{
	fputs(key, f);
	if (known && v != UINT64_MAX)
		fprintf(f, "%llu", (unsigned long long)v);
	else
		fputs("null", f);
}

/* A factors' source, null for none. */
static void jsrc(FILE *f, enum tsc_src src)
{
	json_str(f, src != TSC_SRC_NONE ? tsc_src_name(src) : NULL);
}

static void json_open(FILE *f, const char *name, const struct open_time *o)
{
	fprintf(f, ",\n    \"%s\": ", name);
	if (o->err) {
		fprintf(f, "{\"error\": ");
		json_str(f, strerror(o->err));
		fputs("}", f);
		return;
	}
	if (!o->opens) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"opens\": %lu, \"ms\": {\"median\": ", o->opens);
	jnum(f, o->us.median / 1e3);
	jkv(f, ", \"min\": ", o->min_us / 1e3);
	jkv(f, ", \"max\": ", o->max_us / 1e3);
	fputs("}, \"source\": ", f);
	jsrc(f, o->src);
	fprintf(f, ", \"tsc_usable\": %s, \"calibration_ms\": ", o->usable ? "true" : "false");
	jnum(f, o->calib_ns ? o->calib_ns / 1e6 : NAN);
	/* No factors: no bound, no spread between them. */
	jppb(f, ", \"error_bound_ppb\": ", o->src != TSC_SRC_NONE, o->err_ppb);
	fputs(", \"mult_spread_ppm\": ", f);
	jnum(f, o->src != TSC_SRC_NONE ? o->mult_spread_ppm : NAN);
	fputs("}", f);
}


static void json_calib(FILE *f, const struct calib_startup *c)
{
	int k;

	fprintf(f, ",\n    \"calibration\": ");
	if (!c->ran) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"follow_s\": ");
	jnum(f, c->follow_s);
	fprintf(f, ", \"applicable\": %s, \"reason\": ", *c->na ? "false" : "true");
	json_str(f, *c->na ? c->na : NULL);
	if (*c->na) {
		fputs("}", f);
		return;
	}
	if (c->err) {
		fprintf(f, ", \"error\": ");
		json_str(f, strerror(c->err));
		fputs("}", f);
		return;
	}
	jkv(f, ",\n     \"open_ms\": ", c->open_ms);
	fprintf(f, ", \"open_tsc_usable\": %s, \"open_source\": ",
		c->open_usable ? "true" : "false");
	jsrc(f, c->open_src);
	jppb(f, ", \"bound_open_ppb\": ", true, c->open_err_ppb);
	fprintf(f, ",\n     \"took_over\": %s, \"use_ms\": ", c->took ? "true" : "false");
	jnum(f, c->took ? c->use_ms : NAN);
	jppb(f, ", \"bound_use_ppb\": ", c->took, c->use_err_ppb);
	jppb(f, ", \"tsc_khz\": ", c->took && c->khz, c->khz);
	fprintf(f, ", \"takeover_step_ns\": ");
	if (c->took && c->switched)
		fprintf(f, "%lld", (long long)c->takeover_step_ns);
	else
		fputs("null", f);
	jkv(f, ",\n     \"end_s\": ", c->end_s);
	fprintf(f, ", \"end_tsc_usable\": %s, \"end_source\": ",
		c->end_usable ? "true" : "false");
	jsrc(f, c->end_src);
	jppb(f, ", \"bound_end_ppb\": ", true, c->end_err_ppb);
	fprintf(f, ", \"refinements\": %llu, \"switches\": %llu, \"last_step_ns\": %lld",
		(unsigned long long)c->refinements, (unsigned long long)c->switches,
		(long long)c->last_step_ns);
	fprintf(f, ",\n     \"reads\": %llu, \"backward\": %llu",
		(unsigned long long)c->reads, (unsigned long long)c->backward);
	jppb(f, ", \"worst_ns\": ", c->backward, c->worst_back_ns);
	fprintf(f, ",\n     \"history\": [");
	for (k = 0; k < c->nhist; k++) {
		const struct calib_point *p = &c->hist[k];

		fprintf(f, "%s[", k ? ", " : "");
		jnum(f, p->ms);
		/* The bound so far (null before its first measurement), then
		 * the factors' source, null for none. */
		jppb(f, ", ", true, p->err_ppb);
		fprintf(f, ", %s, ", p->usable ? "true" : "false");
		jsrc(f, p->src);
		fputs("]", f);
	}
	fputs("]}", f);
}

/* null where libtsc did not use the TSC. */
static void json_wall(FILE *f, const struct wall_acc *w)
{
	static const char *const name[WALL_NROWS] = { "monotonic", "realtime", "absl_realtime" };
	int k, i;

	if (!w->ran && !w->absl) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"samples\": %d, \"bracket_ns\": ", w->n);
	jnum(f, w->bracket_ns);
	for (k = 0; k < WALL_NROWS; k++) {
		if (k == WALL_ABSL ? !w->absl : !w->ran) {
			fprintf(f, ", \"%s\": null", name[k]);
			continue;
		}
		fprintf(f, ", \"%s\": {\"worst_ns\": ", name[k]);
		jnum(f, w->worst_ns[k]);
		fputs(", \"offsets_ns\": [", f);
		for (i = 0; i < w->n; i++) {
			fputs(i ? ", " : "", f);
			jnum(f, w->off_ns[k][i]);
		}
		fputs("]}", f);
	}
	fputs("}", f);
}

static void json_accuracy(FILE *f, const struct accuracy *a)
{
	int k, i;

	fprintf(f, ",\n  \"drift\": ");
	if (!a->ran) {
		fputs("null", f);
	} else {
		fprintf(f, "{\"duration_s\": ");
		jnum(f, a->duration_s);
		fprintf(f, ", \"series\": [");
		for (k = 0; k < a->nseries; k++) {
			const struct drift_series *s = &a->s[k];

			fprintf(f, "%s\n    {\"handle\": \"%s\", \"tsc_usable\": %s, \"source\": ",
				k ? "," : "", s->handle, s->usable ? "true" : "false");
			jsrc(f, s->src);
			jppb(f, ", \"error_bound_ppb\": ", s->src != TSC_SRC_NONE, s->err_ppb);
			fputs(",\n     ", f);
			jref(f, "monotonic_raw", &s->raw);
			fputs(",\n     ", f);
			jref(f, "monotonic", &s->mono);
			fprintf(f, ",\n     \"samples\": [");
			for (i = 0; i < s->n; i++) {
				fprintf(f, "%s[", i ? ", " : "");
				jnum(f, s->t_s[i]);
				jkv(f, ", ", s->raw_us[i]);
				jkv(f, ", ", s->mono_us[i]);
				fputs("]", f);
			}
			fputs("]}", f);
		}
		fputs("],\n    \"wall\": ", f);
		json_wall(f, &a->wall);
		fputs("}", f);
	}
	fprintf(f, ",\n  \"backward\": {\"thread\": ");
	if (a->ran) {
		fprintf(f, "{\"reads\": %llu, \"backward\": %llu",
			(unsigned long long)a->reads, (unsigned long long)a->backward);
		jppb(f, ", \"worst_ns\": ", a->backward, a->worst_back_ns);
		fputs("}", f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\n    \"cross_cpu\": ");
	if (a->have_xcpu && a->xcpu.backward)
		fprintf(f, "{\"cpus\": %u, \"reads\": %llu, \"backward\": %llu, \"worst_ticks\": %llu, "
			"\"worst_ns\": %llu, \"from_cpu\": %d, \"to_cpu\": %d}",
			a->xcpu.cpus, (unsigned long long)a->xcpu.reads,
			(unsigned long long)a->xcpu.backward, (unsigned long long)a->xcpu.worst_ticks,
			(unsigned long long)a->xcpu.worst_ns, a->xcpu.worst_from_cpu,
			a->xcpu.worst_to_cpu);
	else if (a->have_xcpu && a->xcpu.cpus >= 2)	/* none went back: no worst pair */
		fprintf(f, "{\"cpus\": %u, \"reads\": %llu, \"backward\": 0, \"worst_ticks\": null, "
			"\"worst_ns\": null, \"from_cpu\": null, \"to_cpu\": null}",
			a->xcpu.cpus, (unsigned long long)a->xcpu.reads);
	else if (a->xcpu_err) {
		fputs("{\"error\": ", f);
		json_str(f, a->xcpu_why);
		fputs("}", f);
	} else
		fputs("null", f);
	fputs("}", f);
	fprintf(f, ",\n  \"startup\": {\"unit\": \"ms\"");
	json_open(f, "default", &a->open_default);
	json_open(f, "force_calibrate", &a->open_calib);
	json_open(f, "sysroot", &a->open_sysroot);
	json_calib(f, &a->calib);
	fputs("}", f);
}

void print_json(FILE *f, const struct cfg *cfg, const struct env *e,
		const struct accuracy *a)
{
	const struct tsc_info *i = &e->info;
	struct goal g[MAX_GOALS];
	int n = goals_eval(e, a, g, MAX_GOALS), k;

	fprintf(f, "{\n  \"tool\": \"tscbench\",\n  \"version\": ");
	json_str(f, tsc_version());
	fprintf(f, ",\n  \"config\": {\"duration_s\": ");
	jnum(f, cfg->duration);
	fprintf(f, ", \"quick\": %s, \"rounds\": %lu, \"cross_cpu_ms\": %lu, \"opens\": %lu, "
		"\"calib_follow_s\": ", cfg->quick ? "true" : "false", cfg->rounds, cfg->xcpu_ms,
		cfg->opens);
	jnum(f, cfg->calib_follow);
	fputs("}", f);
	fprintf(f, ",\n  \"host\": {\"cpu_model\": ");
	json_str(f, e->cpu_model);
	fprintf(f, ", \"cpus\": %d, \"kernel\": ", e->ncpus);
	json_str(f, e->kernel);
	fprintf(f, ", \"clocksource\": ");
	json_str(f, *e->clocksource ? e->clocksource : NULL);
	fprintf(f, ",\n    \"clocksource_vdso\": ");
	if (e->cs_vdso >= 0)
		fprintf(f, "%d", e->cs_vdso);
	else
		fputs("null", f);
	fprintf(f, ", \"vdso\": %s, \"vdso_clock_gettime\": %s, \"rdtsc\": %s, \"rdtscp\": %s, "
		"\"tsc_user\": ", e->vdso ? "true" : "false", e->vdso_gettime ? "true" : "false",
		e->rdtsc_ok ? "true" : "false", e->rdtscp_cpu ? "true" : "false");
	if (e->tsc_user >= 0)
		fprintf(f, "%d", e->tsc_user);
	else
		fputs("null", f);
	fprintf(f, ",\n    \"vdso_tsc_raw\": ");
	if (e->vdso_tsc_raw_rc == 1)
		fputs("null", f);
	else
		fprintf(f, "%d", e->vdso_tsc_raw_rc);
	fprintf(f, ", \"clock_gettime\": \"%s\", \"clock_gettime_from\": \"%s\"",
		e->gettime_vdso ? "vdso" : "syscall", e->gettime_from);
	fprintf(f, ",\n    \"tsc_khz\": ");
	jppb(f, "", e->freq.khz != 0, e->freq.khz);
	fprintf(f, ", \"tsc_khz_source\": ");
	json_str(f, e->freq.src);
	fprintf(f, ", \"tsc_khz_detail\": ");
	json_str(f, e->freq.how);
	/* Unknown is null: no factors, no frequency, no calibration's bound. */
	fprintf(f, "},\n  \"libtsc\": {\"tsc_usable\": %s, \"source\": ",
		i->usable ? "true" : "false");
	json_str(f, i->src ? tsc_src_name(i->src) : NULL);
	jppb(f, ", \"mult\": ", i->src != TSC_SRC_NONE, i->mult);
	jppb(f, ", \"shift\": ", i->src != TSC_SRC_NONE, i->shift);
	jppb(f, ", \"tsc_khz\": ", i->khz != 0, i->khz);
	jppb(f, ", \"error_bound_ppb\": ",
	     i->src == TSC_SRC_CALIBRATION && i->err_ppb != UINT64_MAX, i->err_ppb);
	fprintf(f, ", \"ordered_read\": \"%s\", \"sysroot\": ", i->rdtscp ? "rdtscp" : "lfence-rdtsc");
	json_str(f, e->sysroot);
	fputs("}", f);
	fprintf(f, ",\n  \"cost_ns_from\": \"%s\"", i->src && e->rdtsc_ok ? "tsc-factors" :
		"clock_monotonic_raw");
	fprintf(f, ",\n  \"end\": {\"changed\": %s, \"clocksource\": ", changed(e) ? "true" : "false");
	json_str(f, *e->clocksource_end ? e->clocksource_end : NULL);
	fprintf(f, ", \"tsc_usable\": %s, \"libtsc_switches\": %llu}",
		e->info_end.usable ? "true" : "false",
		(unsigned long long)(e->info_end.switches - e->info.switches));
	json_methods(f, e);
	json_accuracy(f, a);
	fprintf(f, ",\n  \"goals\": [");
	for (k = 0; k < n; k++) {
		fprintf(f, "%s\n    {\"name\": ", k ? "," : "");
		json_str(f, g[k].name);
		fprintf(f, ", \"unit\": \"%s\", \"value\": ", g[k].unit);
		jnum(f, g[k].known ? g[k].value : NAN);
		fprintf(f, ", \"limit\": ");
		jnum(f, g[k].limit);
		fprintf(f, ", \"strict\": %s, \"met\": %s, \"judged\": %s, \"note\": ",
			g[k].strict ? "true" : "false",
			!g[k].judged || !g[k].known ? "null" : g[k].met ? "true" : "false",
			g[k].judged ? "true" : "false");
		json_str(f, *g[k].note ? g[k].note : NULL);
		fputs("}", f);
	}
	fprintf(f, "\n  ]\n}\n");
}
