// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * --plot FILE.png: a gnuplot script with the data inline (datablocks),
 * kept beside the PNG as FILE.gp so it can be edited and re-run, then
 * gnuplot on it.  Top: cost per method, bars (median) with p10..p90 on a
 * log scale.  Bottom: the library's ns minus each clock over time.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tscbench.h"

extern char **environ;

static void gp_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s != '"' && *s != '\\' && *s != '\n')
			fputc(*s, f);
	fputc('"', f);
}

static void script(FILE *f, const char *png, const struct env *e, const struct accuracy *a)
{
	double lo = INFINITY;
	int i, k, n = 0;

	fprintf(f, "# tscbench plot: gnuplot %s.gp\n", png);
	fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		   "  set terminal pngcairo size 1200,%d font \"sans,10\"\n"
		   "} else {\n  set terminal png size 1200,%d\n}\nset termoption noenhanced\n",
		a->ran ? 1000 : 600, a->ran ? 1000 : 600);
	fprintf(f, "set output ");
	gp_string(f, png);
	fprintf(f, "\n$cost << EOD\n");
	for (i = 0; i < nmethods; i++) {
		const struct method *m = &methods[i];

		if (!m->selected || !m->avail || !m->batches)
			continue;
		gp_string(f, m->name);
		fprintf(f, " %.4f %.4f %.4f\n", m->ns.median, m->ns.p10, m->ns.p90);
		if (m->ns.p10 < lo)
			lo = m->ns.p10;
		n++;
	}
	fprintf(f, "EOD\n");
	if (a->ran) {
		fprintf(f, "$drift << EOD\n");
		for (i = 0; i < a->s[0].n; i++) {
			fprintf(f, "%.4f", a->s[0].t_s[i]);
			for (k = 0; k < a->nseries; k++)
				fprintf(f, " %.4f %.4f", a->s[k].raw_us[i], a->s[k].mono_us[i]);
			fprintf(f, "\n");
		}
		fprintf(f, "EOD\nset multiplot layout 2,1\n");
	}
	fprintf(f, "set title ");
	gp_string(f, "Cost per call, ns (median, p10..p90)");
	fprintf(f, "\nset logscale y\nset yrange [%g:*]\nset grid ytics\n"
		   "set style fill solid 0.6 border -1\nset boxwidth 0.7\n"
		   "set xtics rotate by -35 left nomirror\nset xrange [-0.6:%d]\n"
		   "set bmargin 9\nunset key\n", isfinite(lo) && lo > 0 ? lo / 2 : 0.1, n);
	fprintf(f, "plot $cost using 0:2:xtic(1) with boxes lc rgb \"#4a7ebb\", \\\n"
		   "     '' using 0:2:3:4 with yerrorbars lc rgb \"black\" pt 0, \\\n"
		   "     '' using 0:2:(sprintf(\"%%.1f\", $2)) with labels offset 0,0.8 font \",8\"\n");
	if (a->ran) {
		fprintf(f, "unset logscale y\nset yrange [*:*]\nset xrange [*:*]\nset xtics norotate\n"
			   "set bmargin 4\nset key top left\nset grid\n"
			   "set xlabel \"s\"\nset ylabel \"us\"\nset title ");
		gp_string(f, "libtsc ns minus clock, change since the start");
		fprintf(f, "\nplot ");
		for (k = 0; k < a->nseries; k++) {
			char t[96];

			snprintf(t, sizeof(t), "%s (%s) vs MONOTONIC_RAW", a->s[k].handle,
				 factors_words(a->s[k].src));
			fprintf(f, "%s$drift using 1:%d with lines lw 2 title ", k ? ", \\\n     " : "",
				2 + 2 * k);
			gp_string(f, t);
			snprintf(t, sizeof(t), "%s (%s) vs MONOTONIC", a->s[k].handle,
				 factors_words(a->s[k].src));
			fprintf(f, ", \\\n     $drift using 1:%d with lines lw 2 dt 2 title ", 3 + 2 * k);
			gp_string(f, t);
		}
		fprintf(f, "\nunset multiplot\n");
	}
	(void)e;
}

int plot_png(const char *file, const struct env *e, const struct accuracy *a,
	     char *err, size_t errlen)
{
	size_t len = strlen(file);
	char *gp = malloc(len + 4);
	char *argv[3];
	FILE *f;
	pid_t pid;
	int status, rc;

	if (!gp) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(gp, len + 4, "%s.gp", file);
	f = fopen(gp, "we");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", gp, strerror(errno));
		free(gp);
		return -1;
	}
	script(f, file, e, a);
	if (fclose(f)) {
		snprintf(err, errlen, "cannot write %s: %s", gp, strerror(errno));
		free(gp);
		return -1;
	}
	argv[0] = "gnuplot";
	argv[1] = gp;
	argv[2] = NULL;
	rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (rc) {
		snprintf(err, errlen, "cannot run gnuplot: %s%s", strerror(rc),
			 rc == ENOENT ? " (install it: apt-get install gnuplot-nox)" : "");
		free(gp);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen, "gnuplot failed on %s", gp);
		free(gp);
		return -1;
	}
	free(gp);
	return 0;
}
