// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Command line parsing for tscinfo: getopt_long, strict numbers. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "opt.h"

enum { OPT_CALIBRATE = 256, OPT_DUMP_CPUID, OPT_DUMP_VDSO, OPT_NO_COST };

static const struct option longopts[] = {
	{ "json",	no_argument,		NULL, 'J' },
	{ "format",	required_argument,	NULL, 'f' },
	{ "output",	required_argument,	NULL, 'o' },
	{ "watch",	no_argument,		NULL, 'w' },
	{ "count",	required_argument,	NULL, 'c' },
	{ "timeout",	required_argument,	NULL, 't' },
	{ "cross-cpu",	optional_argument,	NULL, 'x' },
	{ "verbose",	no_argument,		NULL, 'v' },
	{ "sysroot",	required_argument,	NULL, 's' },
	{ "calibrate",	no_argument,		NULL, OPT_CALIBRATE },
	{ "no-cost",	no_argument,		NULL, OPT_NO_COST },
	{ "dump-cpuid",	no_argument,		NULL, OPT_DUMP_CPUID },
	{ "dump-vdso",	required_argument,	NULL, OPT_DUMP_VDSO },
	{ "help",	no_argument,		NULL, 'h' },
	{ "version",	no_argument,		NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const char *const format_names[] = {
	[FMT_TEXT] = "text", [FMT_JSON] = "json",
	[FMT_PROMETHEUS] = "prometheus", [FMT_LOG] = "log",
};

static int format_of(const char *s, enum format *out)
{
	size_t i;

	for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (!strcmp(s, format_names[i])) {
			*out = (enum format)i;
			return 0;
		}
	return -1;
}

/* Seconds, a fraction allowed (--timeout), as a number of milliseconds. */
static int millis(const char *s, unsigned long *out)
{
	double v;

	if (opt_double(s, 0, 86400.0 * 365, &v) || !(v > 0))
		return -1;
	*out = (unsigned long)(v * 1000.0 + 0.5);
	return *out ? 0 : -1;
}

int parse_args(int argc, char **argv, struct cfg *cfg, char *err, size_t errlen)
{
	unsigned long ms;
	int c;

	memset(cfg, 0, sizeof(*cfg));
	cfg->xcpu_ms = 200;
	optind = 0;	/* GNU getopt: start over, for the fuzzer */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Jjf:o:wc:t:x::s:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
		case 'j':
			cfg->format = FMT_JSON;
			break;
		case 'f':
			if (format_of(optarg, &cfg->format))
				return opt_invalid(err, errlen, "--format", optarg,
						   "text, json, prometheus or log");
			break;
		case 'o':
			if (!*optarg) {
				snprintf(err, errlen, "--output needs a file name");
				return -1;
			}
			cfg->output = optarg;
			break;
		case 'w':
			cfg->watch = true;
			break;
		case 'c':
			if (opt_ulong(optarg, 1, 1000000, &cfg->count))
				return opt_invalid(err, errlen, "--count", optarg,
						   "a number of changes, 1 or more");
			break;
		case 't':
			if (millis(optarg, &cfg->timeout_ms))
				return opt_invalid(err, errlen, "--timeout", optarg,
						   "seconds, from 0.0005 to 31536000 (a year)");
			break;
		case 'x':
			cfg->cross_cpu = true;
			if (optarg && opt_ulong(optarg, 1, 60000, &cfg->xcpu_ms))
				return opt_invalid(err, errlen, "--cross-cpu", optarg,
						   "milliseconds, 1 to 60000");
			break;
		case 'v':
			cfg->verbose = true;
			break;
		case 's':
			if (!*optarg) {
				snprintf(err, errlen, "--sysroot needs a directory");
				return -1;
			}
			cfg->sysroot = optarg;
			break;
		case OPT_CALIBRATE:
			cfg->calibrate = true;
			break;
		case OPT_NO_COST:
			cfg->no_cost = true;
			break;
		case OPT_DUMP_CPUID:
			cfg->action = ACT_DUMP_CPUID;
			break;
		case OPT_DUMP_VDSO:
			cfg->action = ACT_DUMP_VDSO;
			cfg->dump_file = optarg;
			break;
		case 'h':
			cfg->action = ACT_HELP;
			return 0;
		case 'V':
			cfg->action = ACT_VERSION;
			return 0;
		default:
			return opt_getopt_error(c, argv, err, errlen);
		}
	}
	if (optind < argc && cfg->cross_cpu && !opt_ulong(argv[optind], 0, ~0ul, &ms)) {
		/* getopt_long's rule for an optional argument: it is part of
		 * the option's word.  Say so, rather than only "unexpected". */
		snprintf(err, errlen, "unexpected argument '%s': the cross-CPU check's "
			 "milliseconds go in the option's word: -x%s or --cross-cpu=%s",
			 argv[optind], argv[optind], argv[optind]);
		return -1;
	}
	if (opt_no_operands(argc, argv, err, errlen))
		return -1;
	if ((cfg->count || cfg->timeout_ms) && !cfg->watch) {
		snprintf(err, errlen, "--count and --timeout go with --watch");
		return -1;
	}
	if (cfg->watch && cfg->format == FMT_PROMETHEUS) {
		snprintf(err, errlen, "--format=prometheus does not go with --watch: "
			 "run it from a timer (tscinfo(1))");
		return -1;
	}
	if (cfg->watch && cfg->output) {
		snprintf(err, errlen, "--output does not go with --watch");
		return -1;
	}
	if (cfg->sysroot && cfg->cross_cpu) {
		/* A dump decides every output, never the CPU that replays it. */
		snprintf(err, errlen, "--cross-cpu checks this machine's CPUs, not a dump's: "
			 "not with --sysroot");
		return -1;
	}
	if (cfg->watch && cfg->cross_cpu) {
		snprintf(err, errlen, "--watch and --cross-cpu do not go together");
		return -1;
	}
	return 0;
}
