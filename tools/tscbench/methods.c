// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Every way of taking a timestamp, each as a batch function: n calls in a
 * loop whose results are summed (so none is optimised away), the same
 * loop for all.  methods_probe() decides which this machine has, and says
 * why a method is missing; nothing is executed that the CPU or kernel
 * does not offer (no RDTSCP without its CPUID bit).
 */
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "gettime.h"
#include "peers.h"
#include "tscbench.h"

#ifndef CLOCK_MONOTONIC_COARSE
#define CLOCK_MONOTONIC_COARSE 6
#endif
#ifndef CLOCK_REALTIME_COARSE
#define CLOCK_REALTIME_COARSE 5
#endif

typedef int (*vdso_raw_fn)(unsigned long long *tsc);
typedef int (*vdso_to_ns_fn)(unsigned long long delta, clockid_t clk,
			     unsigned long long *ns);

/* Each call inline in its batch's loop, as in a caller's own loop. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

static struct tsc *g_t;
static vdso_raw_fn v_raw;
static vdso_to_ns_fn v_to_ns;
static unsigned long long v_base;

ALWAYS_INLINE uint64_t bare_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

ALWAYS_INLINE uint64_t lfence_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

ALWAYS_INLINE uint64_t rdtscp(void)
{
	uint32_t lo, hi, aux;

	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

ALWAYS_INLINE uint64_t cgt(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_nsec;
}

/* libtsc's wall reads (since 0.7 inline, as tsc_now_ns()). */
ALWAYS_INLINE uint64_t lt_cgt(clockid_t c)
{
	uint64_t v = 0;

	tsc_clock_gettime(g_t, c, &v);
	return v;
}

ALWAYS_INLINE uint64_t lt_cgt_ordered(clockid_t c)
{
	uint64_t v = 0;

	tsc_clock_gettime_ordered(g_t, c, &v);
	return v;
}

ALWAYS_INLINE uint64_t sys_cgt(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec;
}

ALWAYS_INLINE uint64_t gtod(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_usec;
}

ALWAYS_INLINE uint64_t vraw(void)
{
	unsigned long long c = 0;

	v_raw(&c);
	return c;
}

ALWAYS_INLINE uint64_t vraw_ns(void)
{
	unsigned long long c = 0, ns = 0;

	if (v_raw(&c) == 0)
		v_to_ns(c - v_base, CLOCK_MONOTONIC_RAW, &ns);
	return ns;
}

/* One batch: n calls, results summed; the loop is the same for all. */
#define BATCH(fn, expr)							\
	static uint64_t fn(unsigned long n)				\
	{								\
		uint64_t s = 0;						\
		unsigned long i;					\
									\
		for (i = 0; i < n; i++)					\
			s += (expr);					\
		return s;						\
	}

BATCH(b_rdtsc, bare_rdtsc())
BATCH(b_lfence_rdtsc, lfence_rdtsc())
BATCH(b_rdtscp, rdtscp())
BATCH(b_tsc_rdtsc, tsc_rdtsc())
BATCH(b_tsc_rdtsc_ordered, tsc_rdtsc_ordered(g_t))
BATCH(b_tsc_now_ns, tsc_now_ns(g_t))
BATCH(b_tsc_now_ns_ordered, tsc_now_ns_ordered(g_t))
BATCH(b_lt_mono, lt_cgt(CLOCK_MONOTONIC))
BATCH(b_lt_raw, lt_cgt(CLOCK_MONOTONIC_RAW))
BATCH(b_lt_real, lt_cgt(CLOCK_REALTIME))
BATCH(b_lt_boot, lt_cgt(CLOCK_BOOTTIME))
BATCH(b_lt_tai, lt_cgt(CLOCK_TAI))
BATCH(b_lt_mono_ordered, lt_cgt_ordered(CLOCK_MONOTONIC))
BATCH(b_cgt_mono, cgt(CLOCK_MONOTONIC))
BATCH(b_cgt_raw, cgt(CLOCK_MONOTONIC_RAW))
BATCH(b_cgt_real, cgt(CLOCK_REALTIME))
BATCH(b_cgt_boot, cgt(CLOCK_BOOTTIME))
BATCH(b_cgt_tai, cgt(CLOCK_TAI))
BATCH(b_cgt_mono_coarse, cgt(CLOCK_MONOTONIC_COARSE))
BATCH(b_cgt_real_coarse, cgt(CLOCK_REALTIME_COARSE))
BATCH(b_gtod, gtod())
BATCH(b_sys_cgt, sys_cgt())
BATCH(b_vdso_raw, vraw())
BATCH(b_vdso_raw_ns, vraw_ns())
BATCH(b_absl, (uint64_t)peer_absl_now_ns())

#define M(n, w, b) { .name = n, .what = w, .batch = b }

struct method methods[] = {
	M("rdtsc", "bare RDTSC", b_rdtsc),
	M("lfence_rdtsc", "LFENCE;RDTSC", b_lfence_rdtsc),
	M("rdtscp", "RDTSCP", b_rdtscp),
	M("tsc_rdtsc", "libtsc tsc_rdtsc()", b_tsc_rdtsc),
	M("tsc_rdtsc_ordered", "libtsc tsc_rdtsc_ordered()", b_tsc_rdtsc_ordered),
	M("tsc_now_ns", "libtsc tsc_now_ns()", b_tsc_now_ns),
	M("tsc_now_ns_ordered", "libtsc tsc_now_ns_ordered()", b_tsc_now_ns_ordered),
	M("tsc_clock_gettime_monotonic", "libtsc tsc_clock_gettime(MONOTONIC)", b_lt_mono),
	M("tsc_clock_gettime_monotonic_raw", "libtsc tsc_clock_gettime(MONOTONIC_RAW)", b_lt_raw),
	M("tsc_clock_gettime_realtime", "libtsc tsc_clock_gettime(REALTIME)", b_lt_real),
	M("tsc_clock_gettime_boottime", "libtsc tsc_clock_gettime(BOOTTIME)", b_lt_boot),
	M("tsc_clock_gettime_tai", "libtsc tsc_clock_gettime(TAI)", b_lt_tai),
	M("tsc_clock_gettime_ordered_monotonic", "libtsc tsc_clock_gettime_ordered(MONOTONIC)",
	  b_lt_mono_ordered),
	M("clock_gettime_monotonic", "clock_gettime(MONOTONIC)", b_cgt_mono),
	M("clock_gettime_monotonic_raw", "clock_gettime(MONOTONIC_RAW)", b_cgt_raw),
	M("clock_gettime_realtime", "clock_gettime(REALTIME)", b_cgt_real),
	M("clock_gettime_boottime", "clock_gettime(BOOTTIME)", b_cgt_boot),
	M("clock_gettime_tai", "clock_gettime(TAI)", b_cgt_tai),
	M("clock_gettime_monotonic_coarse", "clock_gettime(MONOTONIC_COARSE)", b_cgt_mono_coarse),
	M("clock_gettime_realtime_coarse", "clock_gettime(REALTIME_COARSE)", b_cgt_real_coarse),
	M("gettimeofday", "gettimeofday()", b_gtod),
	M("syscall_clock_gettime", "syscall(SYS_clock_gettime, MONOTONIC)", b_sys_cgt),
	M("vdso_tsc_raw", "__vdso_tsc_raw()", b_vdso_raw),
	M("vdso_tsc_raw_to_ns", "__vdso_tsc_raw() + __vdso_tsc_to_ns()", b_vdso_raw_ns),
	M("absl_get_current_time_nanos", "Abseil GetCurrentTimeNanos() (REALTIME)", b_absl),
};
const int nmethods = sizeof(methods) / sizeof(methods[0]);

int method_index(const char *name)
{
	int i;

	for (i = 0; i < nmethods; i++)
		if (!strcmp(methods[i].name, name))
			return i;
	return -1;
}

int methods_select(const char *list, char *err, size_t errlen)
{
	char buf[1024], *tok, *save = NULL;
	int i, n = 0;

	for (i = 0; i < nmethods; i++)
		methods[i].selected = !list;
	if (!list)
		return 0;
	if (strlen(list) >= sizeof(buf)) {
		snprintf(err, errlen, "--methods list too long");
		return -1;
	}
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = method_index(tok);
		if (i < 0) {
			snprintf(err, errlen, "unknown method '%s' (see --list)", tok);
			return -1;
		}
		methods[i].selected = true;
		n++;
	}
	if (!n) {
		snprintf(err, errlen, "--methods needs at least one method (see --list)");
		return -1;
	}
	/* Bare RDTSC is the yardstick of every ratio. */
	methods[0].selected = true;
	return 0;
}

/*
 * The live vDSO: find a LINUX_2.6 function by name.  The image is the
 * kernel's own mapping; checks are kept to what a wrong kernel build
 * could get wrong (missing tables), not a hostile image.
 */
struct vdso {
	uintptr_t bias;
	const Elf64_Sym *sym;
	size_t nsym;
	const char *str;
	const Elf64_Half *versym;
	const Elf64_Verdef *verdef;
};

static size_t gnu_hash_count(const uint32_t *h)
{
	uint32_t nbucket = h[0], symoff = h[1], nbloom = h[2], i, last = 0;
	const uint32_t *bucket = h + 4 + nbloom * 2;	/* 64-bit bloom words */
	const uint32_t *chain = bucket + nbucket;

	for (i = 0; i < nbucket; i++)
		if (bucket[i] > last)
			last = bucket[i];
	if (last < symoff)
		return symoff;
	while (!(chain[last - symoff] & 1))
		last++;
	return (size_t)last + 1;
}

static int vdso_open(struct vdso *v)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	bool have_load = false;
	int i;

	memset(v, 0, sizeof(*v));
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			v->bias = (uintptr_t)eh + ph[i].p_offset - ph[i].p_vaddr;
			have_load = true;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)(uintptr_t)ph[i].p_vaddr;
		}
	}
	if (!have_load || !dyn)
		return -ENOEXEC;
	dyn = (const Elf64_Dyn *)((uintptr_t)dyn + v->bias);
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn->d_un.d_ptr + v->bias;

		switch (dyn->d_tag) {
		case DT_SYMTAB:	v->sym = (const Elf64_Sym *)p; break;
		case DT_STRTAB:	v->str = (const char *)p; break;
		case DT_VERSYM:	v->versym = (const Elf64_Half *)p; break;
		case DT_VERDEF:	v->verdef = (const Elf64_Verdef *)p; break;
		case DT_HASH:	v->nsym = ((const uint32_t *)p)[1]; break;
		case DT_GNU_HASH:
			if (!v->nsym)
				v->nsym = gnu_hash_count((const uint32_t *)p);
			break;
		}
	}
	return v->sym && v->str && v->nsym ? 0 : -ENOEXEC;
}

/* Does symbol i carry version name? Unversioned images accept any. */
static bool vdso_version_is(const struct vdso *v, size_t i, const char *name)
{
	const Elf64_Verdef *d = v->verdef;
	Elf64_Half ndx;

	if (!v->versym || !d)
		return true;
	ndx = v->versym[i] & 0x7fff;
	for (;;) {
		const Elf64_Verdaux *a = (const Elf64_Verdaux *)((const char *)d + d->vd_aux);

		if (d->vd_ndx == ndx && !(d->vd_flags & VER_FLG_BASE))
			return !strcmp(v->str + a->vda_name, name);
		if (!d->vd_next)
			return false;
		d = (const Elf64_Verdef *)((const char *)d + d->vd_next);
	}
}

static void *vdso_sym(const struct vdso *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nsym; i++) {
		const Elf64_Sym *s = &v->sym[i];

		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
		    (ELF64_ST_BIND(s->st_info) != STB_GLOBAL &&
		     ELF64_ST_BIND(s->st_info) != STB_WEAK))
			continue;
		if (!strcmp(v->str + s->st_name, name) && vdso_version_is(v, i, "LINUX_2.6"))
			return (void *)(v->bias + s->st_value);
	}
	return NULL;
}

static int read_int(const char *path, int *out)
{
	char b[64];
	FILE *f = fopen(path, "re");
	char *end;
	long v;

	if (!f)
		return -1;
	if (!fgets(b, sizeof(b), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	v = strtol(b, &end, 10);
	if (end == b || (*end && *end != '\n'))
		return -1;
	*out = (int)v;
	return 0;
}

static void read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "re");

	*out = 0;
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static void cpu_model(char *out, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(out, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c += 1 + (c[1] == ' ');
			c[strcspn(c, "\n")] = 0;
			snprintf(out, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

static void unavailable(const char *name, const char *fmt, const char *arg)
{
	struct method *m = &methods[method_index(name)];

	m->avail = false;
	snprintf(m->why, sizeof(m->why), fmt, arg);
}

static void note(const char *name, const char *fmt, const char *arg)
{
	struct method *m = &methods[method_index(name)];

	snprintf(m->note, sizeof(m->note), fmt, arg);
}

/* The rows that read the clocksource, as clock_gettime(MONOTONIC) does. */
static const char *const cgts[] = {
	"clock_gettime_monotonic", "clock_gettime_monotonic_raw",
	"clock_gettime_realtime", "clock_gettime_boottime", "clock_gettime_tai", "gettimeofday",
};

void methods_probe(struct env *e)
{
	unsigned int a, b, c, d;
	struct utsname u;
	struct vdso v;
	cpu_set_t set;
	int i, prctl_tsc = 0;

	for (i = 0; i < nmethods; i++)
		methods[i].avail = true;
	g_t = e->t;
	tsc_get_info(e->t, &e->info, sizeof(e->info));
	cpu_model(e->cpu_model, sizeof(e->cpu_model));
	snprintf(e->kernel, sizeof(e->kernel), "unknown");
	if (!uname(&u))
		snprintf(e->kernel, sizeof(e->kernel), "%s", u.release);

	/* CPUs: the online ones this process may run on. */
	e->ncpus = 0;
	if (!sched_getaffinity(0, sizeof(set), &set)) {
		for (i = 0; i < CPU_SETSIZE && e->ncpus < 1024; i++)
			if (CPU_ISSET(i, &set))
				e->cpus[e->ncpus++] = i;
	}
	if (!e->ncpus) {
		e->cpus[0] = sched_getcpu() < 0 ? 0 : sched_getcpu();
		e->ncpus = 1;
	}

	/* RDTSC: CPUID 1 EDX[4], not forbidden to this task or by the kernel. */
	e->rdtsc_ok = __get_cpuid(1, &a, &b, &c, &d) && (d & (1u << 4));
	e->rdtscp_cpu = __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27));
	/* With --open-sysroot, info.rdtscp is the dump's CPU; reads here
	 * use RDTSCP only where this CPU has it too. */
	e->info.rdtscp = e->info.rdtscp && e->rdtscp_cpu;
	if (read_int("/proc/sys/kernel/tsc_user", &e->tsc_user))
		e->tsc_user = -1;
	prctl(PR_GET_TSC, &prctl_tsc, 0, 0, 0);
	if (!e->rdtsc_ok) {
		for (i = 0; i < 5; i++)
			unavailable(methods[i].name, "%s", "the CPU has no TSC (CPUID 1 EDX bit 4)");
	} else if (prctl_tsc == PR_TSC_SIGSEGV || e->tsc_user == 2) {
		e->rdtsc_ok = false;
		for (i = 0; i < 5; i++)
			unavailable(methods[i].name, "%s", prctl_tsc == PR_TSC_SIGSEGV ?
				    "RDTSC raises SIGSEGV in this task (prctl PR_SET_TSC)" :
				    "RDTSC raises SIGSEGV (kernel.tsc_user=2)");
	} else if (e->tsc_user == 1) {
		for (i = 0; i < 5; i++)
			note(methods[i].name, "%s", "trapped and emulated by the kernel (kernel.tsc_user=1)");
	}
	if (e->rdtsc_ok && !e->rdtscp_cpu)
		unavailable("rdtscp", "%s", "the CPU has no RDTSCP (CPUID 0x80000001 EDX bit 27)");
	if (e->rdtsc_ok)
		note("tsc_rdtsc_ordered", "%s", e->info.rdtscp ? "RDTSCP" : "LFENCE;RDTSC");
	if (!e->info.usable) {
		static char why[120];

		snprintf(why, sizeof(why), "TSC not in use: each read is clock_gettime(%s)",
			 e->info.fallback_clock == CLOCK_MONOTONIC ? "MONOTONIC" : "MONOTONIC_RAW");
		note("tsc_now_ns", "%s", why);
		note("tsc_now_ns_ordered", "%s", why);
		for (i = 0; i < nmethods; i++)
			if (!strncmp(methods[i].name, "tsc_clock_gettime", 17))
				note(methods[i].name, "%s", "TSC not in use: each read maps a "
				     "clock_gettime() of the fallback clock");
	} else {
		note("tsc_now_ns", "factors from %s", tsc_src_name(e->info.src));
		note("tsc_now_ns_ordered", e->info.rdtscp ? "%s, RDTSCP" : "%s, LFENCE;RDTSC",
		     tsc_src_name(e->info.src));
	}

	/* The peer: Abseil reads RDTSC itself, and the kernel's clock when
	 * RDTSC may not run (it cannot know: it would die of SIGSEGV). */
	if (peer_absl_missing())
		unavailable("absl_get_current_time_nanos", "%s", peer_absl_missing());
	else if (!e->rdtsc_ok)
		unavailable("absl_get_current_time_nanos", "%s", "it executes RDTSC, which may "
			    "not run here");
	else
		note("absl_get_current_time_nanos", "%s", "Debian's libabsl, REALTIME");

	/* Is clock_gettime() the vDSO or a syscall? */
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  e->clocksource, sizeof(e->clocksource));
	if (read_int("/sys/devices/system/clocksource/clocksource0/current_clocksource_vdso",
		     &e->cs_vdso)) {
		e->cs_vdso = -1;
		e->cs_vdso_inferred = true;
	}
	e->vdso = vdso_open(&v) == 0;
	e->vdso_gettime = e->vdso && vdso_sym(&v, "__vdso_clock_gettime");
	gettime_verdict(e);	/* before the costs: a guess, or the kernel's word */
	note("clock_gettime_monotonic_coarse", "%s", e->vdso_gettime ?
	     "served by the vDSO (no clocksource read)" : "no vDSO: a system call");
	note("clock_gettime_realtime_coarse", "%s", e->vdso_gettime ?
	     "served by the vDSO (no clocksource read)" : "no vDSO: a system call");
	note("syscall_clock_gettime", "%s", "always a system call");

	/* The tsckit vDSO calls: present, and willing to hand out the TSC? */
	e->vdso_tsc_raw_rc = e->vdso_tsc_to_ns_rc = 1;
	if (e->vdso) {
		v_raw = (vdso_raw_fn)vdso_sym(&v, "__vdso_tsc_raw");
		v_to_ns = (vdso_to_ns_fn)vdso_sym(&v, "__vdso_tsc_to_ns");
	}
	if (!v_raw) {
		unavailable("vdso_tsc_raw", "%s", e->vdso ?
			    "the vDSO has no __vdso_tsc_raw (LINUX_2.6): not a tsckit kernel" :
			    "no vDSO in this process");
	} else {
		e->vdso_tsc_raw_rc = v_raw(&v_base);
		if (e->vdso_tsc_raw_rc == -ENODEV)
			unavailable("vdso_tsc_raw", "__vdso_tsc_raw() returns -ENODEV: "
				    "the kernel does not keep time with a TSC it trusts (clocksource %s)",
				    *e->clocksource ? e->clocksource : "?");
		else if (e->vdso_tsc_raw_rc)
			unavailable("vdso_tsc_raw", "__vdso_tsc_raw() returns %s",
				    strerror(-e->vdso_tsc_raw_rc));
	}
	if (!methods[method_index("vdso_tsc_raw")].avail) {
		char why[sizeof(methods[0].why)];

		memcpy(why, methods[method_index("vdso_tsc_raw")].why, sizeof(why));
		unavailable("vdso_tsc_raw_to_ns", "%s", why);
	} else if (!v_to_ns) {
		unavailable("vdso_tsc_raw_to_ns", "%s",
			    "the vDSO has __vdso_tsc_raw but no __vdso_tsc_to_ns");
	} else {
		unsigned long long ns;

		e->vdso_tsc_to_ns_rc = v_to_ns(1000, CLOCK_MONOTONIC_RAW, &ns);
		if (e->vdso_tsc_to_ns_rc)
			unavailable("vdso_tsc_raw_to_ns", "__vdso_tsc_to_ns() returns %s",
				    strerror(-e->vdso_tsc_to_ns_rc));
		else
			note("vdso_tsc_raw_to_ns", "%s", "delta to CLOCK_MONOTONIC_RAW ns");
	}

	/* The frequency and its source, read as tscinfo reads them. */
	freq_facts_read(NULL, &e->ff);
	freq_best(&e->info, &e->ff, &e->freq);
}

static const struct method *measured(const char *name)
{
	const struct method *m = &methods[method_index(name)];

	return m->selected && m->avail && m->batches && m->ns.median > 0 ? m : NULL;
}

/* Is clock_gettime() the vDSO or a system call?  The kernel's word where
 * it has one (current_clocksource_vdso); none without a vDSO; else what
 * clock_gettime(MONOTONIC) and the system call cost in the cost phase,
 * by tscinfo's rule; only when they were not both measured, a guess from
 * the clocksource's name.  The rows' notes follow. */
void gettime_verdict(struct env *e)
{
	const struct method *cg = measured("clock_gettime_monotonic");
	const struct method *sc = measured("syscall_clock_gettime");
	int i;

	e->gettime_ns = e->syscall_ns = -1;
	if (e->cs_vdso >= 0) {
		e->gettime_vdso = e->cs_vdso == 1;
		e->gettime_from = "current_clocksource_vdso";
	} else if (!e->vdso_gettime) {
		e->gettime_vdso = false;
		e->gettime_from = "no-vdso";
	} else if (cg && sc) {
		e->gettime_ns = cg->ns.median;
		e->syscall_ns = sc->ns.median;
		e->gettime_vdso = gettime_vdso_by_cost(e->gettime_ns, e->syscall_ns);
		e->gettime_from = "measured";
	} else {
		e->gettime_vdso = gettime_vdso_capable(e->clocksource);
		e->gettime_from = "clocksource";
	}
	for (i = 0; i < (int)(sizeof(cgts) / sizeof(cgts[0])); i++) {
		if (!e->vdso_gettime)
			note(cgts[i], "%s", "no vDSO: a system call");
		else if (e->gettime_vdso)
			note(cgts[i], "served by the vDSO (%s)", e->cs_vdso >= 0 ?
			     "current_clocksource_vdso=1" : strcmp(e->gettime_from, "measured") ?
			     "inferred from the clocksource" : "measured");
		else if (e->cs_vdso >= 0 || strcmp(e->gettime_from, "measured"))
			note(cgts[i], "a system call: the vDSO does not read clocksource %s",
			     *e->clocksource ? e->clocksource : "?");
		else
			note(cgts[i], "%s", "a system call (measured)");
	}
}

void methods_end(struct env *e)
{
	tsc_get_info(e->t, &e->info_end, sizeof(e->info_end));
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  e->clocksource_end, sizeof(e->clocksource_end));
}
