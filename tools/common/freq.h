// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The TSC frequency from the best source the tools can read, and where it
 * came from (freq.c), with the kernel log's lines about the TSC (klog.c).
 * tscinfo and tscbench both report it: one reading, one answer.
 */
#ifndef TOOLS_FREQ_H
#define TOOLS_FREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tsc.h>

/* The kernel log's lines about the TSC. */
#define KLOG_MAX 8
#define KLOG_LEN 240
struct klog {
	bool read;		/* else err says why not */
	int err;
	uint64_t khz;		/* the frequency the kernel detected or refined, 0 if none */
	char khz_line[KLOG_LEN];
	int n;			/* the TSC dropped: "Marking ... unstable" and the
				 * watchdog's figures, the last KLOG_MAX lines */
	char line[KLOG_MAX][KLOG_LEN];
};

/* Frequency facts the tools read themselves, beside libtsc's. */
struct freq_facts {
	struct klog klog;
	int cpuid_err;		/* 0, or why there are no CPUID facts */
	uint64_t cpuid15_khz, cpuid_hv_khz, cpuid16_mhz;
};

/* The best frequency known, and where it came from. */
struct freq {
	uint64_t khz;		/* 0: unknown */
	const char *src;	/* a stable name, NULL when unknown */
	char how[KLOG_LEN + 96];	/* for people: the details, or why unknown */
};

/* sysroot NULL: this machine (its CPU, its kernel log). */
int klog_read(const char *sysroot, struct klog *k);
void freq_facts_read(const char *sysroot, struct freq_facts *ff);
void freq_best(const struct tsc_info *i, const struct freq_facts *ff, struct freq *out);
/* A dump's file, at most max bytes (malloc'ed in *out): 0 or -errno. */
int read_dump_file(const char *path, char **out, size_t *len, size_t max);

/* Where libtsc's frequency or factors came from, in words for the text;
 * the JSON keeps the code (tsc_src_name()).  NULL: the code is words
 * enough, or comes with its own ("how"). */
static inline const char *freq_src_words(const char *src)
{
	static const char *const w[][2] = {
		{ "vdso", "the kernel's own factor, from __vdso_tsc_to_ns()" },
		{ "sysfs-mult", "the kernel's tsc_mult and tsc_shift" },
		{ "perf", "perf_event's time_mult and time_shift" },
		{ "sysfs-khz", "the kernel's tsc0/tsc_khz" },
		{ "cpu0-tsc-freq-khz", "cpu0/tsc_freq_khz" },
		{ "kernel-log", "the kernel log" },
		{ "cpuid-15h", "CPUID leaf 0x15" },
		{ "cpuid-hypervisor", "CPUID leaf 0x40000010" },
		{ "cpuid-16h", "CPUID leaf 0x16" },
		{ "live-state", "the dump's machine at capture" },
	};
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcmp(src, w[i][0]))
			return w[i][1];
	return NULL;
}

/* "2694861 kHz (from ...)", or "unknown (why)", and a newline: the same
 * words in every tool, the source in words, never its code.  Inline, so
 * that a test that links a tool's output code alone (tests/metrics)
 * needs nothing more. */
static inline void freq_print(FILE *f, const struct freq *fr)
{
	if (!fr->khz)
		fprintf(f, "unknown (%s)\n", fr->how);
	else if (*fr->how)
		fprintf(f, "%llu kHz (from %s%s%s)\n", (unsigned long long)fr->khz,
			freq_src_words(fr->src) ? freq_src_words(fr->src) : fr->src,
			!strcmp(fr->src, "kernel-log") ? ": " : ", ", fr->how);
	else
		fprintf(f, "%llu kHz (from %s)\n", (unsigned long long)fr->khz,
			freq_src_words(fr->src) ? freq_src_words(fr->src) : fr->src);
}

#endif
