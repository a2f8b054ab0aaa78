// SPDX-License-Identifier: MIT OR LGPL-2.1
#ifndef TSCINFO_H
#define TSCINFO_H

#include <stdio.h>
#include <tsc.h>

#include "args.h"
#include "msg.h"

/* Exit codes: documented in tscinfo.1 and the README (2 and 3: msg.h). */
enum { EXIT_TSC_OK = 0, EXIT_TSC_NO = 1 };

struct cost {		/* ns per call, measured; negative when not measured */
	double rdtsc, now_ns, clock_gettime;
};

struct report {
	const struct cfg *cfg;
	struct tsc_info info;
	struct tsc_reason reasons[64];
	int nreasons;
	struct cost cost;
	bool have_xcpu;
	struct tsc_xcpu_result xcpu;
};

/* Answers derived from the info, shared by text and JSON. */
const char *gettime_kind(const struct tsc_info *i, const char **how);
const char *trap_kind(const struct tsc_info *i);
void print_text(FILE *f, const struct report *r);
void print_json(FILE *f, const struct report *r);

#endif
