// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscbench's command line: getopt_long, strict numbers, clear errors. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "tscbench.h"

enum { OPT_ROUNDS = 256, OPT_THREADS, OPT_OPENS, OPT_XCPU, OPT_NO_PROGRESS, OPT_LIST,
       OPT_OPEN_SYSROOT, OPT_SYSROOT, OPT_CALIB_FOLLOW };

static const struct option longopts[] = {
	{ "duration",	required_argument,	NULL, 'd' },
	{ "quick",	no_argument,		NULL, 'q' },
	{ "json",	optional_argument,	NULL, 'J' },
	{ "output",	required_argument,	NULL, 'o' },
	{ "plot",	required_argument,	NULL, 'p' },
	{ "methods",	required_argument,	NULL, 'm' },
	{ "rounds",	required_argument,	NULL, OPT_ROUNDS },
	{ "threads",	required_argument,	NULL, OPT_THREADS },
	{ "opens",	required_argument,	NULL, OPT_OPENS },
	{ "cross-cpu",	required_argument,	NULL, OPT_XCPU },
	{ "no-progress", no_argument,		NULL, OPT_NO_PROGRESS },
	{ "list",	no_argument,		NULL, OPT_LIST },
	{ "open-sysroot", required_argument,	NULL, OPT_OPEN_SYSROOT },
	{ "sysroot",	required_argument,	NULL, OPT_SYSROOT },
	{ "calib-follow", required_argument,	NULL, OPT_CALIB_FOLLOW },
	{ "help",	no_argument,		NULL, 'h' },
	{ "version",	no_argument,		NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int parse_args(int argc, char **argv, struct cfg *cfg, char *err, size_t errlen)
{
	bool opens_set = false, xcpu_set = false, follow_set = false;
	int c;

	memset(cfg, 0, sizeof(*cfg));
	cfg->duration = 10;
	cfg->rounds = 200;
	cfg->opens = 5;
	cfg->xcpu_ms = 200;
	cfg->calib_follow = 10;
	optind = 0;
	opterr = 0;
	/* J:: and j:: only to catch -Jfile: the file goes as --json=file. */
	while ((c = getopt_long(argc, argv, ":d:qJ::j::o:p:m:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (opt_double(optarg, 0, 86400, &cfg->duration))
				return opt_invalid(err, errlen, "--duration", optarg,
						   "seconds, 0 (no drift run) to 86400");
			break;
		case 'q':
			cfg->quick = true;
			break;
		case 'J':
		case 'j':
			if (optarg && strncmp(argv[optind - 1], "--", 2)) {
				snprintf(err, errlen, "-%c takes no file ('%s'): the file goes in "
					 "the option's word: --json=%s", c, optarg, optarg);
				return -1;
			}
			if (optarg && !*optarg) {
				snprintf(err, errlen, "--json= needs a file name");
				return -1;
			}
			if (optarg)
				cfg->json_file = optarg;
			else
				cfg->json = true;
			break;
		case 'o':
			if (!*optarg) {
				snprintf(err, errlen, "--output needs a file name");
				return -1;
			}
			cfg->output = optarg;
			break;
		case 'p':
			if (!*optarg) {
				snprintf(err, errlen, "--plot needs a file name");
				return -1;
			}
			cfg->plot = optarg;
			break;
		case 'm':
			cfg->methods = optarg;
			break;
		case OPT_ROUNDS:
			if (opt_ulong(optarg, 3, 100000, &cfg->rounds))
				return opt_invalid(err, errlen, "--rounds", optarg,
						   "a number, 3 to 100000");
			cfg->rounds_set = true;
			break;
		case OPT_THREADS:
			if (opt_ulong(optarg, 0, 1024, &cfg->threads))
				return opt_invalid(err, errlen, "--threads", optarg,
						   "a number of threads, 0 (no throughput run) to 1024");
			cfg->threads_set = true;
			break;
		case OPT_OPENS:
			if (opt_ulong(optarg, 0, 1000, &cfg->opens))
				return opt_invalid(err, errlen, "--opens", optarg,
						   "a number, 0 to 1000");
			opens_set = true;
			break;
		case OPT_XCPU:
			if (opt_ulong(optarg, 0, 60000, &cfg->xcpu_ms))
				return opt_invalid(err, errlen, "--cross-cpu", optarg,
						   "milliseconds, 0 (no check) to 60000");
			xcpu_set = true;
			break;
		case OPT_CALIB_FOLLOW:
			if (opt_double(optarg, 0, 86400, &cfg->calib_follow))
				return opt_invalid(err, errlen, "--calib-follow", optarg,
						   "seconds, 0 (no calibration start-up) to 86400");
			follow_set = true;
			break;
		case OPT_NO_PROGRESS:
			cfg->no_progress = true;
			break;
		case OPT_LIST:
			cfg->action = ACT_LIST;
			break;
		case OPT_OPEN_SYSROOT:
		case OPT_SYSROOT:
			if (!*optarg) {
				snprintf(err, errlen, "--%s needs a directory",
					 c == OPT_SYSROOT ? "sysroot" : "open-sysroot");
				return -1;
			}
			*(c == OPT_SYSROOT ? &cfg->sysroot : &cfg->open_sysroot) = optarg;
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
	if (optind < argc && cfg->json) {
		/* getopt_long's rule for an optional argument, as tscinfo -x */
		snprintf(err, errlen, "unexpected argument '%s': the JSON file goes in the "
			 "option's word: --json=%s", argv[optind], argv[optind]);
		return -1;
	}
	if (opt_no_operands(argc, argv, err, errlen))
		return -1;
	if (cfg->quick) {
		if (!cfg->rounds_set)
			cfg->rounds = 15;
		if (!opens_set)
			cfg->opens = 3;
		if (!xcpu_set)
			cfg->xcpu_ms = 50;
		if (!follow_set)
			cfg->calib_follow = 2;
	}
	return 0;
}
