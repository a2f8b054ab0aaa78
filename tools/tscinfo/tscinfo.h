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
	bool have_traps;	/* tsc0/user_traps could be read */
	uint64_t user_traps;
};

/* Where the report goes: stdout, or --output's file (outfile.c). */
struct outfile {
	FILE *f;
	const char *path;
	char *tmp;
};

/* Answers derived from the info, shared by text and JSON. */
const char *gettime_kind(const struct tsc_info *i, const char **how);
const char *trap_kind(const struct tsc_info *i);
/* Does a reason before rs[n] have its kind and code? */
bool reason_repeats(const struct tsc_reason *rs, int n);
void print_text(FILE *f, const struct report *r);
void print_json(FILE *f, const struct report *r);
void print_prometheus(FILE *f, const struct report *r);
/* One "tscinfo: EVENT key=value ..." line; stepped: add step_ns. */
void print_log(FILE *f, const char *event, const struct tsc_info *i,
	       const struct tsc_reason *rs, int nreasons, bool stepped);
int read_user_traps(const char *sysroot, uint64_t *out);
/* stdout when path is NULL.  0, or -1 after a message. */
int out_open(struct outfile *o, const char *path);
/* Complete it: for a file, flush, fsync and rename over path. */
int out_close(struct outfile *o);

#endif
