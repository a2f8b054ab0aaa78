// SPDX-License-Identifier: GPL-2.0
/*
 * vdsoptr usable|enodev SEED COUNT: __vdso_tsc_raw() and __vdso_tsc_to_ns()
 * with every clockid from -16 to 64, boundary and COUNT random deltas,
 * aligned, unaligned, NULL and bad pointers. The mode says what the boot
 * must give (the scenario knows; the state under test never decides):
 * usable, the TSC is the trusted clocksource; enodev, it is not.
 *
 * Return values (Documentation/ABI/testing/vdso-x86-tsc): -EINVAL for a
 * clock other than CLOCK_MONOTONIC_RAW or a delta with bit 63 set, checked
 * first; then -ENODEV when the TSC is not usable; -EOVERFLOW when the
 * result does not fit; else 0. On an error nothing is written: every call
 * writes into a buffer filled with a pattern, and only the 8 bytes at the
 * pointer may change, to the right value. Right means, for to_ns,
 * (delta * tsc_mult) >> tsc_shift in 128 bits with the sysfs factors, which
 * must equal the vDSO's own factor, to_ns(2^32) = mult << (32 - shift);
 * for tsc_raw, a value between two RDTSCs around the call. Each pointer
 * is tried at all 8 byte offsets.
 *
 * Bad pointers, each call in a forked child: NULL, an unmapped page, a
 * PROT_READ and a PROT_NONE page, the [vvar] and [vdso] pages, a kernel
 * address, a non-canonical one, and 1 and 4 bytes before an unmapped
 * page. An error return must come back without touching the pointer.
 * A call that must write has to die like __vdso_clock_gettime() with the
 * same pointer while the vDSO serves that clock: SIGSEGV with the same
 * si_code, si_addr within the 8 bytes written (0 for a non-canonical
 * address, as the #GP gives). In enodev mode clock_gettime() is a system
 * call and returns -EFAULT; the TSC calls return -ENODEV without a fault.
 *
 * Prints "# figure: vdsoptr: ..." and writes "# fact vdsoptr/calls" (all
 * calls made), vdsoptr/faults (bad-pointer calls checked in children)
 * and vdsoptr/wrong (calls that returned, wrote or faulted otherwise) to
 * $TSCKIT_RESULTS. Exit 0 when nothing was wrong, 1 otherwise, 2 on a
 * setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "parse_vdso.h"

#define PAGE		4096
#define PATTERN		0xa5
#define SHOW		10
#define TSC_DIR		"/sys/devices/system/tsc/tsc0/"

typedef int (*tsc_raw_t)(unsigned long long *tsc);
typedef int (*tsc_to_ns_t)(unsigned long long delta, clockid_t clk, unsigned long long *ns);
typedef int (*gettime_t)(clockid_t clk, struct timespec *ts);

static tsc_raw_t tsc_raw;
static tsc_to_ns_t tsc_to_ns;
static gettime_t vdso_gettime;

static int usable;
static unsigned long long mult, shift;
static long long calls, wrong, faults;

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;

	if (wrong++ >= SHOW)
		return;
	va_start(ap, fmt);
	printf("vdsoptr: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static int read_ull(const char *path, unsigned long long *v)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%llu", v) == 1;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* What to_ns(delta, clk) must give, and *ns on success. */
static int want_to_ns(unsigned long long delta, clockid_t clk, unsigned long long *ns)
{
	unsigned __int128 r;

	if (clk != CLOCK_MONOTONIC_RAW || delta >> 63)
		return -EINVAL;
	if (!usable)
		return -ENODEV;
	r = ((unsigned __int128)delta * mult) >> shift;
	if (r > UINT64_MAX)
		return -EOVERFLOW;
	*ns = r;
	return 0;
}

/*
 * The 24-byte buffer around an output at offset off: on an error it
 * keeps the pattern; on success only bytes off..off+7 change, to v.
 */
static int buffer_right(const unsigned char *buf, int off, int ok, unsigned long long v)
{
	unsigned char want[24];

	memset(want, PATTERN, sizeof(want));
	if (ok)
		memcpy(want + off, &v, sizeof(v));
	return !memcmp(buf, want, sizeof(want));
}

/* One to_ns() call into a patterned buffer at offset off (-1: NULL). */
static void check_to_ns(unsigned long long delta, clockid_t clk, int off)
{
	unsigned char buf[24] __attribute__((aligned(16)));
	unsigned long long ns = 0, have;
	int want = want_to_ns(delta, clk, &ns), ret;

	if (off < 0 && !want)
		return;		/* it must fault: see pointers() */
	memset(buf, PATTERN, sizeof(buf));
	ret = tsc_to_ns(delta, clk, off < 0 ? NULL : (unsigned long long *)(buf + off));
	calls++;
	if (ret != want) {
		bad("to_ns(%#llx, %d, %s%d) returned %d, want %d", delta, clk,
		    off < 0 ? "NULL" : "buf+", off < 0 ? 0 : off, ret, want);
	} else if (off >= 0 && !buffer_right(buf, off, !ret, ns)) {
		memcpy(&have, buf + off, sizeof(have));
		bad("to_ns(%#llx, %d, buf+%d) returned %d and wrote %#llx%s, want %#llx",
		    delta, clk, off, ret, have, ret ? " on an error" : "", ns);
	}
}

static void clockids(void)
{
	static const unsigned long long delta[] = {
		0, 1, 1000, 1ULL << 32, 0x123456789ULL, (1ULL << 63) - 1, 1ULL << 63,
		(1ULL << 63) + 1, ~0ULL,
	};
	clockid_t clk;
	unsigned int d;
	int off;

	for (clk = -16; clk <= 64; clk++)
		for (d = 0; d < sizeof(delta) / sizeof(*delta); d++)
			for (off = -1; off < 9; off++)
				check_to_ns(delta[d], clk, off);
}

/* The factor the vDSO uses agrees with the sysfs files. */
static void factor(void)
{
	unsigned long long f = ~0ULL;
	int ret = tsc_to_ns(1ULL << 32, CLOCK_MONOTONIC_RAW, &f);

	calls++;
	if (!usable) {
		if (ret != -ENODEV || f != ~0ULL)
			bad("to_ns(2^32) returned %d, wrote %#llx; want -ENODEV, nothing", ret, f);
		return;
	}
	if (ret || shift > 32 || f != mult << (32 - shift))
		bad("to_ns(2^32) returned %d, %llu; tsc_mult %llu, tsc_shift %llu give %llu",
		    ret, f, mult, shift, shift > 32 ? 0 : mult << (32 - shift));
	printf("# figure: vdsoptr: to_ns(2^32) = %llu = tsc_mult %llu << (32 - tsc_shift %llu)\n",
	       f, mult, shift);
}

/* The edges of the conversion, and count random deltas. */
static void deltas(long long count)
{
	unsigned long long d[64], dmax;
	unsigned __int128 top = ((unsigned __int128)1 << (64 + shift)) - 1;
	int n = 0, i, off;
	long long k;

	d[n++] = 0; d[n++] = 1; d[n++] = 2; d[n++] = 3;
	d[n++] = (1ULL << 32) - 1; d[n++] = 1ULL << 32; d[n++] = (1ULL << 32) + 1;
	d[n++] = 1ULL << 62; d[n++] = (1ULL << 63) - 2; d[n++] = (1ULL << 63) - 1;
	d[n++] = 1ULL << 63;
	/* The largest delta whose result fits, and the next. */
	dmax = top / mult > UINT64_MAX ? UINT64_MAX : (unsigned long long)(top / mult);
	d[n++] = dmax;
	d[n++] = dmax + 1;
	d[n++] = dmax - 1;
	/* Where a result moves to the next ns: the rounding edges. */
	for (i = 0; i < 8; i++) {
		unsigned long long ns = 1ULL << (i * 8);
		unsigned __int128 t = (((unsigned __int128)ns << shift) + mult - 1) / mult;

		d[n++] = t;
		d[n++] = t - 1;
	}
	if (dmax >> 63)
		printf("# figure: vdsoptr: no delta below 2^63 overflows (tsc_mult %llu < 2^%llu: "
		       "a TSC above 1 GHz), -EOVERFLOW cannot happen here\n", mult, shift);
	else
		printf("# figure: vdsoptr: deltas above %#llx overflow\n", dmax);
	for (i = 0; i < n; i++)
		for (off = 0; off < 9; off++)
			check_to_ns(d[i], CLOCK_MONOTONIC_RAW, off);
	for (k = 0; k < count; k++) {
		unsigned long long x = rnd() >> (rnd() % 64);

		check_to_ns(x, CLOCK_MONOTONIC_RAW, k % 9);
	}
}

static unsigned long long rdtsc_ordered(void)
{
	_mm_lfence();
	return __rdtsc();
}

static void raw(long long count)
{
	unsigned char buf[24] __attribute__((aligned(16)));
	unsigned long long t0, t1, v;
	long long k;
	int ret, off;

	for (k = 0; k < count; k++) {
		off = k % 9;
		memset(buf, PATTERN, sizeof(buf));
		t0 = rdtsc_ordered();
		ret = tsc_raw((unsigned long long *)(buf + off));
		t1 = rdtsc_ordered();
		calls++;
		memcpy(&v, buf + off, sizeof(v));
		if (ret != (usable ? 0 : -ENODEV))
			bad("tsc_raw(buf+%d) returned %d", off, ret);
		else if (!buffer_right(buf, off, !ret, v) || (!ret && (v < t0 || v > t1)))
			bad("tsc_raw(buf+%d) returned %d, wrote %#llx: TSC %#llx..%#llx", off, ret,
			    v, t0, t1);
	}
}

/* ---- Bad pointers, one call per child. ---- */

enum { RAW, TO_NS, TO_NS_MONO, TO_NS_NEG, GETTIME, NCALL };
static const char *const call_name[NCALL] = {
	"tsc_raw(p)", "to_ns(1000, RAW, p)", "to_ns(1000, MONOTONIC, p)",
	"to_ns(1 << 63, RAW, p)", "clock_gettime(MONOTONIC, p)",
};

struct outcome {
	int died;		/* the signal, 0 when the call returned */
	int code;
	unsigned long addr;
	int ret;
};

static struct outcome *out;	/* shared with the children */

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	out->died = sig;
	out->code = si->si_code;
	out->addr = (unsigned long)si->si_addr;
	_exit(0);
}

static struct outcome call_in_child(int call, void *p)
{
	struct outcome o = { .died = -1 };
	int status;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		static char altstack[16384];
		stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
		struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK };

		sigaltstack(&ss, NULL);
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		switch (call) {
		case RAW:	 out->ret = tsc_raw(p); break;
		case TO_NS:	 out->ret = tsc_to_ns(1000, CLOCK_MONOTONIC_RAW, p); break;
		case TO_NS_MONO: out->ret = tsc_to_ns(1000, CLOCK_MONOTONIC, p); break;
		case TO_NS_NEG:	 out->ret = tsc_to_ns(1ULL << 63, CLOCK_MONOTONIC_RAW, p); break;
		case GETTIME:	 out->ret = vdso_gettime(CLOCK_MONOTONIC, p); break;
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status))
		o = *out;
	return o;
}

static unsigned long maps_start(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long start = 0, s;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name) && sscanf(line, "%lx-", &s) == 1) {
			start = s;
			break;
		}
	if (f)
		fclose(f);
	return start;
}

static void pointers(void)
{
	unsigned char *m = mmap(NULL, 6 * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct {
		const char *name;
		unsigned char *p;
	} ptr[] = {
		{ "NULL", NULL },
		{ "an unmapped page", m + PAGE },
		{ "a PROT_READ page", m + 3 * PAGE },
		{ "a PROT_NONE page", m + 4 * PAGE },
		{ "[vvar]", (unsigned char *)maps_start("[vvar]") },
		{ "[vdso]", (unsigned char *)maps_start("[vdso]") },
		{ "a kernel address", (unsigned char *)0xffffffff81000000UL },
		{ "a non-canonical address", (unsigned char *)0x8000000000000000UL },
		{ "4 bytes before an unmapped page", m + PAGE - 4 },
		{ "1 byte before an unmapped page", m + PAGE - 1 },
	};
	unsigned int i;
	int c;

	if (m == MAP_FAILED || munmap(m + PAGE, PAGE) || mprotect(m + 3 * PAGE, PAGE, PROT_READ) ||
	    mprotect(m + 4 * PAGE, PAGE, PROT_NONE) || !ptr[4].p || !ptr[5].p) {
		bad("cannot set up the bad pointers");
		return;
	}
	for (i = 0; i < sizeof(ptr) / sizeof(*ptr); i++) {
		struct outcome o[NCALL];
		unsigned long p = (unsigned long)ptr[i].p;
		int noncanon = p == 0x8000000000000000UL;

		for (c = 0; c < NCALL; c++) {
			o[c] = call_in_child(c, ptr[i].p);
			calls++;
			faults++;
		}
		if (usable && (o[GETTIME].died != SIGSEGV ||
			       (noncanon ? o[GETTIME].addr != 0 :
				o[GETTIME].addr - p >= 16))) {
			bad("%s with %s: signal %d code %d addr %#lx, ret %d: the vDSO should fault",
			    call_name[GETTIME], ptr[i].name, o[GETTIME].died, o[GETTIME].code,
			    o[GETTIME].addr, o[GETTIME].ret);
		} else if (!usable && (o[GETTIME].died || o[GETTIME].ret != -EFAULT)) {
			bad("%s with %s: signal %d ret %d: the system call should give -EFAULT",
			    call_name[GETTIME], ptr[i].name, o[GETTIME].died, o[GETTIME].ret);
		}
		for (c = 0; c < GETTIME; c++) {
			int must_write = usable && (c == RAW || c == TO_NS);
			int want = c == TO_NS_MONO || c == TO_NS_NEG ? -EINVAL : -ENODEV;

			if (o[c].died < 0) {
				bad("%s with %s: the child failed", call_name[c], ptr[i].name);
			} else if (!must_write && (o[c].died || o[c].ret != want)) {
				bad("%s with %s: signal %d ret %d, want %d without a fault",
				    call_name[c], ptr[i].name, o[c].died, o[c].ret, want);
			} else if (must_write &&
				   (o[c].died != o[GETTIME].died || o[c].code != o[GETTIME].code ||
				    (noncanon ? o[c].addr != 0 : o[c].addr - p >= 8))) {
				bad("%s with %s: signal %d code %d addr %#lx; clock_gettime: signal %d code %d addr %#lx",
				    call_name[c], ptr[i].name, o[c].died, o[c].code, o[c].addr,
				    o[GETTIME].died, o[GETTIME].code, o[GETTIME].addr);
			}
		}
		if (usable)
			printf("# vdsoptr: %s: SIGSEGV si_code %d si_addr %#lx (clock_gettime: %d %#lx)\n",
			       ptr[i].name, o[RAW].code, o[RAW].addr, o[GETTIME].code, o[GETTIME].addr);
	}
	munmap(m, 6 * PAGE);
}

int main(int argc, char **argv)
{
	const char *path = getenv("TSCKIT_RESULTS");
	unsigned long long mult2, shift2;
	long long count;
	cpu_set_t one;
	FILE *f;

	if (argc != 4 || (strcmp(argv[1], "usable") && strcmp(argv[1], "enodev"))) {
		fprintf(stderr, "usage: %s usable|enodev SEED COUNT\n", argv[0]);
		return 2;
	}
	usable = !strcmp(argv[1], "usable");
	rng ^= strtoull(argv[2], NULL, 0) * 0xbf58476d1ce4e5b9ull;
	count = strtoll(argv[3], NULL, 0);

	/* RDTSC around tsc_raw() on the CPU the call runs on. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	vdso_init_from_sysinfo_ehdr(getauxval(AT_SYSINFO_EHDR));
	tsc_raw = (tsc_raw_t)vdso_sym("LINUX_2.6", "__vdso_tsc_raw");
	tsc_to_ns = (tsc_to_ns_t)vdso_sym("LINUX_2.6", "__vdso_tsc_to_ns");
	vdso_gettime = (gettime_t)vdso_sym("LINUX_2.6", "__vdso_clock_gettime");
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tsc_raw || !tsc_to_ns || !vdso_gettime || out == MAP_FAILED ||
	    read_ull(TSC_DIR "tsc_mult", &mult) || read_ull(TSC_DIR "tsc_shift", &shift) ||
	    !mult || shift > 32) {
		fprintf(stderr, "vdsoptr: no __vdso_tsc_raw/_to_ns/clock_gettime or no tsc0 factors\n");
		return 2;
	}
	printf("# vdsoptr: %s, seed %s, %lld random deltas; tsc_mult %llu tsc_shift %llu\n",
	       argv[1], argv[2], count, mult, shift);

	factor();
	clockids();
	deltas(count);
	raw(count);
	pointers();

	/* A recalibration in between would make right values look wrong. */
	if (read_ull(TSC_DIR "tsc_mult", &mult2) || read_ull(TSC_DIR "tsc_shift", &shift2) ||
	    mult2 != mult || shift2 != shift)
		bad("the factors changed during the test: %llu %llu", mult2, shift2);

	printf("# figure: vdsoptr: %s: %lld calls, %lld of them with a bad pointer in a child, %lld wrong\n",
	       argv[1], calls, faults, wrong);
	f = path ? fopen(path, "w") : NULL;
	if (f) {
		fprintf(f, "# fact vdsoptr/calls=%lld\n", calls);
		fprintf(f, "# fact vdsoptr/faults=%lld\n", faults);
		fprintf(f, "# fact vdsoptr/wrong=%lld\n", wrong);
		fclose(f);
	}
	return wrong ? 1 : 0;
}
