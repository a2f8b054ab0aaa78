// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscinfo's command line, parsed apart from main() so a fuzzer can reach it. */
#ifndef TSCINFO_ARGS_H
#define TSCINFO_ARGS_H

#include <stdbool.h>
#include <stddef.h>

enum action { ACT_RUN, ACT_HELP, ACT_VERSION, ACT_DUMP_CPUID, ACT_DUMP_VDSO };

/* --format: text for people, JSON, Prometheus text format (the textfile
 * collector's), one key=value line per state (logs, the journal). */
enum format { FMT_TEXT, FMT_JSON, FMT_PROMETHEUS, FMT_LOG };

struct cfg {
	enum action action;
	enum format format;
	bool watch, cross_cpu, calibrate, no_cost;
	bool verbose;			/* text: the notes too */
	unsigned long count;		/* --watch: stop after N changes, 0 never */
	unsigned long timeout_ms;	/* --watch: stop after, 0 never */
	unsigned long xcpu_ms;
	const char *sysroot;
	const char *dump_file;
	const char *output;		/* --output: written whole, then renamed */
};

/* 0 and cfg filled, or -1 and a message in err. */
int parse_args(int argc, char **argv, struct cfg *cfg, char *err, size_t errlen);

#endif
