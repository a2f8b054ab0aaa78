// SPDX-License-Identifier: GPL-2.0
/*
 * writefuzz SEED COUNT: bad writes to kernel.tsc_user and to every sysfs
 * file of the series, as root, as uid 65534 and as root without
 * CAP_SYS_ADMIN. Run as root; it changes kernel.tsc_user and
 * current_clocksource and puts both back at the end.
 *
 * Files: /proc/sys/kernel/tsc_user and clocksource0/current_clocksource
 * (writable; the series notifies on the latter), and the read-only
 * tsc0/{tsc_stable,tsc_khz,tsc_mult,tsc_shift,user_traps},
 * cpu0/tsc_freq_khz and clocksource0/current_clocksource_vdso.
 * unbind_clocksource is not the series' and would unbind the TSC.
 *
 * Every write() is checked against a model of what the interface
 * promises, written here from its documentation:
 *   tsc_user	proc_dointvec_minmax() on one int in [0, 2]: leading
 *		white space (isspace(), which in the kernel includes 0xa0),
 *		an optional '-', a number in C notation (0x hex, 0 octal),
 *		at most 20 characters, then the end, ' ', '\t' or '\n';
 *		anything after the white space that follows is not consumed
 *		(write() returns less). Only bytes below PAGE_SIZE count. A
 *		write at a non-zero file offset is ignored and reports
 *		success (sysctl_writes_strict=1); an empty write does
 *		nothing. Another uid gets EACCES at open() and, with a
 *		descriptor root opened, EPERM at every write, before
 *		anything else; then ENOMEM from 4 MiB on, EFAULT for a bad
 *		buffer, and EPERM without CAP_SYS_ADMIN.
 *   current_clocksource  sysfs: EFAULT for a bad buffer, EINVAL from 32
 *		bytes (a longer write is cut to PAGE_SIZE before it gets
 *		there); else one trailing '\n' is
 *		dropped and the name ends at the first NUL: a registered
 *		one (available_clocksource) becomes current, any other
 *		(and the empty one) gives the kernel's own choice back.
 *		Only open() checks the uid (EACCES), as for all of sysfs.
 *   read-only	EACCES at open() for writing, as root too; EBADF for a
 *		descriptor opened read-only. The value does not change.
 * After each write the files are read back and must hold the model's
 * state, current_clocksource_vdso must be 1 exactly when the clocksource
 * is tsc and the policy allow, and the read-only values must not change
 * (user_traps must not go back).
 *
 * Writes: dictionary entries near the valid values, numbers and names
 * built from signs, prefixes, spaces and junk, random bytes, overlong
 * writes (around PAGE_SIZE, up to 8 MiB), writes split in parts on one
 * descriptor, pwrite() at an offset, and buffers that are NULL or run
 * into an unmapped page. Then, per writable file, a writer of valid
 * values checks each value it wrote while two root threads, a uid 65534
 * process (with its own and with root's descriptors) and a process
 * without CAP_SYS_ADMIN throw writes at it that must change nothing;
 * then two writers of valid values race a reader.
 *
 * Prints "# figure: writefuzz: ..." per file and writer, and writes
 * "# fact writefuzz/..." lines to $TSCKIT_RESULTS: tried, accepted,
 * refused, bad_accepted (a write the model refuses that succeeded),
 * mismatch (another return value or errno than the model's) and
 * state_wrong (a file held another value than the model's), in total and
 * per file and writer. Exit 0 when bad_accepted, mismatch and state_wrong
 * are all 0, 1 otherwise, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sysval.h"

#define PAGE		4096
#define NOBODY		65534
#define CS_NAME_LEN	32		/* the kernel's limit, with the NUL */
#define KMALLOC_MAX	(4UL << 20)	/* x86-64 SLUB: 2^(10 + PAGE_SHIFT) */
#define HUGE		(8UL << 20)	/* the longest write */
#define NOISE_BUF	(4 * PAGE)	/* the longest write among others */
#define SHOW		10		/* disagreements printed in full */

#define SYSCTL		"/proc/sys/kernel/tsc_user"
#define CS_DIR		"/sys/devices/system/clocksource/clocksource0/"
#define TSC_DIR		"/sys/devices/system/tsc/tsc0/"

enum kind { SYSCTL_INT, CLOCKSOURCE, READ_ONLY };
enum { T_TSC_USER, T_CS, T_CS_VDSO, T_RO_FIRST = T_CS_VDSO, NTARGET = 9 };

static const struct target {
	const char *name, *path;
	enum kind kind;
} target[NTARGET] = {
	{ "tsc_user", SYSCTL, SYSCTL_INT },
	{ "current_clocksource", CS_DIR "current_clocksource", CLOCKSOURCE },
	{ "current_clocksource_vdso", CS_DIR "current_clocksource_vdso", READ_ONLY },
	{ "tsc_stable", TSC_DIR "tsc_stable", READ_ONLY },
	{ "tsc_khz", TSC_DIR "tsc_khz", READ_ONLY },
	{ "tsc_mult", TSC_DIR "tsc_mult", READ_ONLY },
	{ "tsc_shift", TSC_DIR "tsc_shift", READ_ONLY },
	{ "user_traps", TSC_DIR "user_traps", READ_ONLY },
	{ "tsc_freq_khz", "/sys/devices/system/cpu/cpu0/tsc_freq_khz", READ_ONLY },
};

/* Who writes: root, uid 65534, root without CAP_SYS_ADMIN. */
enum { ROOT, NOBODY_, NOCAP, NUSER };
static const char *const user_name[NUSER] = { "root", "nobody", "nocap" };

struct tally {
	long long tried, accepted, refused, bad_accepted, mismatch, state_wrong;
};

/* Shared with the writer processes. */
static struct shared {
	struct tally t[NTARGET][NUSER];
	int stop;
	int shown;
} *sh;

/* The state the files must hold. */
struct state {
	int policy;
	char cs[CS_NAME_LEN];
};

static char available[256];	/* available_clocksource, ' '-separated */
static char best[CS_NAME_LEN];	/* the kernel's own choice */
static char ro_value[NTARGET][64];

static unsigned char *gbuf;	/* HUGE bytes for the sequential writes */
static unsigned char *edge;	/* a page followed by an unmapped one */

/* ---- Generator: xorshift64, one stream per case. ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static unsigned int pick(struct rng *r, unsigned int n)
{
	return rnd(r) % n;
}

/* Case i of stream k of a seed is the same whatever else ran. */
static void seed_rng(struct rng *r, uint64_t seed, uint64_t k, uint64_t i)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull + (k << 40) + i + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	r->s = (z ^ (z >> 31)) | 1;
}

/* ---- The models. ---- */

/* The kernel's isspace(): 9-13, 32 and, in its Latin-1 table, 160. */
static int k_isspace(unsigned char c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0xa0;
}

static int k_isxdigit(unsigned char c)
{
	return isdigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/*
 * The number proc_dointvec_minmax() reads from b[0..left), white space
 * skipped. Returns the bytes it took, or -EINVAL.
 */
static long parse_int(const unsigned char *b, size_t left, long long *val)
{
	size_t win = left < 21 ? left : 21, i = 0;
	unsigned __int128 v = 0;
	unsigned int base = 10;
	int neg = 0;

	if (b[0] == '-' && left > 1) {
		neg = 1;
		i = 1;
	}
	if (i >= win || !isdigit(b[i]))
		return -EINVAL;
	if (b[i] == '0') {
		base = 8;
		if (i + 2 < win && (b[i + 1] | 0x20) == 'x' && k_isxdigit(b[i + 2])) {
			base = 16;
			i += 2;
		}
	}
	for (; i < win; i++) {
		unsigned int d;

		if (isdigit(b[i]))
			d = b[i] - '0';
		else if ((b[i] | 0x20) >= 'a' && (b[i] | 0x20) <= 'f')
			d = (b[i] | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
		if (v > UINT64_MAX)
			return -EINVAL;		/* overflow */
	}
	/* It cannot tell a 21st character from the end of the number. */
	if (i == 21)
		return -EINVAL;
	if (i < left && b[i] != ' ' && b[i] != '\t' && b[i] != '\n')
		return -EINVAL;
	if (neg ? v > (unsigned __int128)INT32_MAX + 1 : v > INT32_MAX)
		return -EINVAL;
	*val = neg ? -(long long)v : (long long)v;
	return i;
}

/*
 * One write() of n bytes at file offset pos; bad: the buffer faults;
 * root: uid 0, cap: CAP_SYS_ADMIN.
 */
static long model_sysctl(const unsigned char *b, size_t n, int bad, long long pos,
			 int root, int cap, struct state *st)
{
	size_t left, i = 0;
	long long v;
	long len;

	/* Each write checks the mode bits again, for the writer's uid. */
	if (!root)
		return -EPERM;
	if (n >= KMALLOC_MAX)
		return -ENOMEM;
	if (bad && n)
		return -EFAULT;
	if (!cap)
		return -EPERM;
	if (!n)
		return 0;
	if (pos)
		return n;		/* ignored */
	left = n < PAGE - 1 ? n : PAGE - 1;
	while (i < left && k_isspace(b[i]))
		i++;
	if (i == left)
		return -EINVAL;
	len = parse_int(b + i, left - i, &v);
	if (len < 0)
		return len;
	if (v < 0 || v > 2)
		return -EINVAL;
	for (i += len; i < left && k_isspace(b[i]); i++)
		;
	st->policy = v;
	return n - (left - i);
}

static int is_available(const char *name)
{
	size_t len = strlen(name);
	const char *p = available;

	if (!len || strchr(name, ' '))
		return 0;
	while ((p = strstr(p, name))) {
		if ((p == available || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

static long model_cs(const unsigned char *b, size_t n, int bad, struct state *st)
{
	char name[CS_NAME_LEN];
	size_t len = n;

	if (bad && n)
		return -EFAULT;
	if (!n)
		return 0;
	/* Only the first PAGE_SIZE bytes reach it: too long either way. */
	if (n >= CS_NAME_LEN)
		return -EINVAL;
	if (b[len - 1] == '\n')
		len--;
	memcpy(name, b, len);
	name[len] = '\0';
	strcpy(st->cs, is_available(name) ? name : best);
	return n;
}

/* ---- Write cases. ---- */

struct wcase {
	const unsigned char *buf;
	size_t n;
	int bad;		/* 1: NULL, 2: runs into an unmapped page */
	long long pwrite_at;	/* -1: write() */
	int parts;		/* write()s on one descriptor */
	size_t cut[3];		/* where each part ends */
};

static const char *const dict_sysctl[] = {
	"0", "1", "2", "0\n", "1\n", "2\n", " 1\n", "\t2", "\n\n1\n\n", "1 ",
	"-0", "-0\n", "-1", "3", "-2147483648", "2147483647", "2147483648",
	"4294967296", "4294967297", "18446744073709551617", "+1", "1 2", "1x",
	"1.0", "0x1", "0X2", "0x3", "0x", "0xg", "01", "02", "08", "010",
	"1\n\n", "\xa0" "1", "1\xa0", "1\v", "\v1", "1\r", "\r1", "1\f",
	"00000000000000000002", "000000000000000000002", "0000000000000000000002",
	"-00000000000000000001", "", "\n", " ", "-", "--1", "allow", "emulate",
	"sigsegv", "1\t2\n", "0x0000000000000000002",
};

static const char *const dict_cs[] = {
	"tsc", "hpet", "acpi_pm", "tsc\n", "hpet\n", "acpi_pm\n", "\n", "",
	"jiffies", "refined-jiffies", "tsc-early", "TSC", " tsc", "tsc ",
	"tsc\n\n", "\ntsc", "tsc\t", "kvm-clock", "acpi_p", "acpi_pmx", "ts",
	"0123456789012345678901234567890",	/* 31 bytes */
	"01234567890123456789012345678901",	/* 32 */
	"tsc\n                           ",	/* 32 */
};

static size_t put(unsigned char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return n;
}

static const char *const space[] = { "", "", " ", "\t", "\n", "\v", "\r", "\xa0", "  \n" };
#define NSPACE (sizeof(space) / sizeof(*space))

static size_t gen_number(struct rng *r, unsigned char *p)
{
	static const char *const sign[] = { "", "", "", "-", "+", "--", " -" };
	size_t n = 0;
	char num[64];

	n += put(p + n, space[pick(r, NSPACE)]);
	n += put(p + n, sign[pick(r, 7)]);
	switch (pick(r, 6)) {
	case 0: case 1:	snprintf(num, sizeof(num), "%u", pick(r, 4)); break;
	case 2:		snprintf(num, sizeof(num), "0x%x", pick(r, 20)); break;
	case 3:		snprintf(num, sizeof(num), "0%o", pick(r, 12)); break;
	case 4:		snprintf(num, sizeof(num), "%0*u", 1 + pick(r, 24), pick(r, 3)); break;
	default:	snprintf(num, sizeof(num), "%llu", (unsigned long long)rnd(r) >> pick(r, 64)); break;
	}
	n += put(p + n, num);
	n += put(p + n, space[pick(r, NSPACE)]);
	if (!pick(r, 4)) {
		static const char *const junk[] = { "x", "1", "\0", "#", "2\n", "a", "\xff" };
		unsigned int j = pick(r, 7);

		memcpy(p + n, junk[j], j == 2 ? 1 : strlen(junk[j]));
		n += j == 2 ? 1 : strlen(junk[j]);
	}
	return n;
}

static size_t gen_name(struct rng *r, unsigned char *p)
{
	static const char *const name[] = { "tsc", "hpet", "acpi_pm", "jiffies", "tsc-early" };
	const char *s = name[pick(r, 5)];
	size_t n = 0, len = strlen(s);

	if (!pick(r, 5))
		n += put(p + n, space[pick(r, NSPACE)]);
	memcpy(p + n, s, len);
	if (!pick(r, 5))
		len -= pick(r, len);		/* cut short */
	if (!pick(r, 8))
		p[n + pick(r, len)] ^= 0x20;	/* a case flipped */
	n += len;
	switch (pick(r, 6)) {
	case 0:	p[n++] = '\n'; break;
	case 1:	p[n++] = '\0'; n += put(p + n, "junk"); break;
	case 2:	n += put(p + n, space[pick(r, NSPACE)]); break;
	case 3:	p[n++] = '\n'; p[n++] = '\n'; break;
	}
	return n;
}

/* Values with a NUL inside: the string ends there, the write does not. */
static const struct { const char *b; size_t n; } nul_cases[] = {
	{ "1\0", 2 }, { "1\0\n", 3 }, { "\0" "1", 2 }, { "tsc\0junk", 8 },
	{ "hpet\0\n", 6 }, { "\0tsc", 4 }, { "hpet\n\0", 6 }, { "", 1 },
	{ "0\0" "2", 3 },
};

/*
 * Fill c from r for a file of that kind, its bytes in p (HUGE bytes, or
 * 4 pages for noise, which writes nothing huge).
 */
static void gen_case(struct rng *r, enum kind kind, struct wcase *c, int noise,
		     unsigned char *p)
{
	unsigned int cls = pick(r, 100);
	size_t n = 0, i;

	memset(c, 0, sizeof(*c));
	c->pwrite_at = -1;
	c->parts = 1;
	if (cls < 25) {
		const char *const *d = kind == SYSCTL_INT ? dict_sysctl : dict_cs;
		unsigned int nd = kind == SYSCTL_INT ? sizeof(dict_sysctl) / sizeof(*d) :
			sizeof(dict_cs) / sizeof(*d);
		unsigned int j = pick(r, nd);

		n = put(p, d[j]);
	} else if (cls < 30) {
		unsigned int j = pick(r, sizeof(nul_cases) / sizeof(*nul_cases));

		memcpy(p, nul_cases[j].b, nul_cases[j].n);
		n = nul_cases[j].n;
	} else if (cls < 50) {
		n = kind == SYSCTL_INT || pick(r, 4) == 0 ? gen_number(r, p) : gen_name(r, p);
	} else if (cls < 65) {
		n = pick(r, 41);
		for (i = 0; i < n; i++)
			p[i] = rnd(r);
	} else if (cls < 72) {
		static const char set[] = " \t\n\v\r-+0123456789xXabcdefghijklmnopqrstuvwxyz_";

		n = pick(r, 65);
		for (i = 0; i < n; i++)
			p[i] = set[pick(r, sizeof(set) - 1)];
	} else if (cls < 80) {
		/* Overlong: a value, then white space, junk or random bytes. */
		static const size_t len[] = { PAGE - 2, PAGE - 1, PAGE, PAGE + 1, 3 * PAGE, 10000 };
		unsigned int fill = pick(r, 3);

		n = len[pick(r, 6)];
		i = kind == SYSCTL_INT ? gen_number(r, p) : gen_name(r, p);
		for (; i < n; i++)
			p[i] = fill == 0 ? (unsigned char)" \n\t"[pick(r, 3)] : fill == 1 ? 'x' : (unsigned char)rnd(r);
	} else if (cls < 88) {
		/* Split: the parts go to one descriptor, one write() each. */
		n = kind == SYSCTL_INT ? gen_number(r, p) : gen_name(r, p);
		c->parts = 2 + pick(r, 2);
		for (i = 0; i < (size_t)c->parts - 1; i++)
			c->cut[i] = pick(r, n + 1);
		c->cut[c->parts - 1] = n;
		for (i = 1; i < (size_t)c->parts; i++)	/* keep them in order */
			if (c->cut[i] < c->cut[i - 1])
				c->cut[i] = c->cut[i - 1];
	} else if (cls < 92) {
		/* pwrite() of a valid value at an offset. */
		n = put(p, kind == SYSCTL_INT ? "1\n" : pick(r, 2) ? "hpet\n" : "tsc\n");
		if (kind == SYSCTL_INT)
			p[0] = '0' + pick(r, 3);
		c->pwrite_at = 1 + pick(r, 2 * PAGE);
	} else if (cls < 97) {
		/* A buffer that faults: NULL, or a valid start before an unmapped page. */
		c->bad = 1 + pick(r, 2);
		n = c->bad == 1 ? pick(r, 9) : 1 + pick(r, 16);
		if (c->bad == 2) {
			size_t mapped = pick(r, n);	/* bytes before the hole */
			unsigned char *q = edge + PAGE - mapped;

			memcpy(q, kind == SYSCTL_INT ? "1\n" : "ts", mapped < 2 ? mapped : 2);
			c->buf = q;
			c->n = n;
			c->cut[0] = n;
			return;
		}
		c->buf = NULL;
		c->n = n;
		c->cut[0] = n;
		return;
	} else if (!noise) {
		/* Huge: nothing reads them, the kernel must refuse them whole. */
		static const size_t len[] = { 1 << 20, KMALLOC_MAX - 1, KMALLOC_MAX, HUGE };

		n = len[pick(r, 4)];
		i = kind == SYSCTL_INT ? gen_number(r, p) : gen_name(r, p);
		memset(p + i, ' ', n - i);
	} else {
		n = 0;		/* empty */
	}
	c->buf = p;
	c->n = n;
	if (c->parts == 1)
		c->cut[0] = n;
}

/* ---- Doing and checking. ---- */

static const char *esc(const unsigned char *b, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	if (!b)
		return "(a bad buffer)";
	for (i = 0; i < n && o + 8 < size; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\\')
			out[o++] = b[i];
		else
			o += snprintf(out + o, size - o, "\\x%02x", b[i]);
	}
	if (i < n)
		o += snprintf(out + o, size - o, "...(%zu bytes)", n);
	out[o] = '\0';
	return out;
}

static void tally_write(int t, int u, long want, long got, int err)
{
	struct tally *y = &sh->t[t][u];

	__atomic_fetch_add(&y->tried, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(got >= 0 ? &y->accepted : &y->refused, 1, __ATOMIC_RELAXED);
	if (want < 0 && got >= 0)
		__atomic_fetch_add(&y->bad_accepted, 1, __ATOMIC_RELAXED);
	if (want != (got >= 0 ? got : -err))
		__atomic_fetch_add(&y->mismatch, 1, __ATOMIC_RELAXED);
}

static int show(void)
{
	return __atomic_fetch_add(&sh->shown, 1, __ATOMIC_RELAXED) < SHOW;
}

static void report_write(int t, int u, const unsigned char *b, size_t n, long long pos,
			 long want, long got, int err)
{
	char buf[200];

	if (want == (got >= 0 ? got : -err) || !show())
		return;
	printf("writefuzz: %s as %s: write(\"%s\", %zu) at %lld: want %ld (%s), got %ld (%s)\n",
	       target[t].name, user_name[u], esc(b, n, buf, sizeof(buf)), n, pos,
	       want, want < 0 ? strerror(-want) : "ok", got, got < 0 ? strerror(err) : "ok");
}

/* One write() or pwrite(); returns its result, -1 with errno kept in *err. */
static long do_write(int fd, const unsigned char *b, size_t n, long long pos, int *err)
{
	long r = pos < 0 ? write(fd, b, n) : pwrite(fd, b, n, pos);

	*err = r < 0 ? errno : 0;
	return r;
}

static void read_state(struct state *st)
{
	char buf[64] = "";

	read_file(SYSCTL, buf, sizeof(buf));
	st->policy = atoi(buf);
	if (read_file(CS_DIR "current_clocksource", st->cs, sizeof(st->cs)))
		st->cs[0] = '\0';
}

/* The files hold the model's state; t is the file written, u the writer. */
static int check_state(int t, int u, const struct state *want, const char *what)
{
	char vdso[16] = "", v[64];
	struct state have;
	int wrong = 0, i;

	read_state(&have);
	read_file(CS_DIR "current_clocksource_vdso", vdso, sizeof(vdso));
	if (have.policy != want->policy || strcmp(have.cs, want->cs) ||
	    atoi(vdso) != (!strcmp(have.cs, "tsc") && have.policy == 0))
		wrong = 1;
	for (i = T_CS_VDSO + 1; i < NTARGET; i++) {
		if (read_file(target[i].path, v, sizeof(v)))
			v[0] = '\0';
		if (!strcmp(target[i].name, "user_traps") ?
		    strtoull(v, NULL, 10) < strtoull(ro_value[i], NULL, 10) : strcmp(v, ro_value[i]))
			wrong = 1;
		if (!strcmp(target[i].name, "user_traps"))
			strcpy(ro_value[i], v);
	}
	if (wrong) {
		__atomic_fetch_add(&sh->t[t][u].state_wrong, 1, __ATOMIC_RELAXED);
		if (show())
			printf("writefuzz: %s as %s after %s: tsc_user %d, current_clocksource '%s', vdso %s; want %d, '%s'\n",
			       target[t].name, user_name[u], what, have.policy, have.cs, vdso,
			       want->policy, want->cs);
	}
	return wrong;
}

/* Writer u's write on file t; only the sysctl cares who writes. */
static long model(int t, int u, const unsigned char *b, size_t n, int bad, long long pos,
		  struct state *st)
{
	return target[t].kind == SYSCTL_INT ?
		model_sysctl(b, n, bad, pos, u != NOBODY_, u == ROOT, st) :
		model_cs(b, n, bad, st);
}

/* Case c on file t by writer u, on fd (open for writing); st is the model. */
static void run_case(int t, int u, int fd, const struct wcase *c, struct state *st)
{
	long long pos = 0;
	size_t from = 0;
	int part, err;

	for (part = 0; part < c->parts; part++) {
		size_t n = c->cut[part] - from;
		const unsigned char *b = c->buf ? c->buf + from : NULL;
		long long at = c->pwrite_at >= 0 ? c->pwrite_at : pos;
		long want = model(t, u, b, n, c->bad, at, st);
		long got = do_write(fd, b, n, c->pwrite_at, &err);

		tally_write(t, u, want, got, err);
		report_write(t, u, c->bad ? NULL : b, n, at, want, got, err);
		if (got > 0 && c->pwrite_at < 0)
			pos += got;
		from = c->cut[part];
	}
}

/* An open for writing that must fail with EACCES. */
static void open_refused(int t, int u, int flags)
{
	int fd = open(target[t].path, flags), err = errno;

	tally_write(t, u, -EACCES, fd >= 0 ? 0 : -1, err);
	if (fd >= 0) {
		if (show())
			printf("writefuzz: %s as %s: open for writing succeeded\n",
			       target[t].name, user_name[u]);
		close(fd);
	} else if (err != EACCES && show()) {
		printf("writefuzz: %s as %s: open for writing: %s, want EACCES\n",
		       target[t].name, user_name[u], strerror(err));
	}
}

/* A read-only file: every way to write it fails, for every writer. */
static void try_read_only(int t, int u, struct rng *r)
{
	static const int flags[] = { O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC, O_WRONLY | O_APPEND };
	int how = pick(r, 5), fd, err;
	long got;

	if (how < 4) {
		open_refused(t, u, flags[how]);
		return;
	}
	fd = open(target[t].path, O_RDONLY);
	got = do_write(fd, (const unsigned char *)"1\n", 2, -1, &err);
	tally_write(t, u, -EBADF, got, err);
	report_write(t, u, (const unsigned char *)"1\n", 2, 0, -EBADF, got, err);
	close(fd);
}

/* uid 65534 opening a writable file itself: open() refuses. */
static void try_own_open(int t, int u)
{
	open_refused(t, u, O_WRONLY);
}

/* Whether the model's state changes under case c by writer u. */
static int changes(int t, int u, const struct wcase *c)
{
	struct state st = { .policy = -1, .cs = "?" };
	long long pos = 0;
	size_t from = 0;
	int part;

	for (part = 0; part < c->parts; part++) {
		size_t n = c->cut[part] - from;
		long r = model(t, u, c->buf ? c->buf + from : NULL, n, c->bad,
			       c->pwrite_at >= 0 ? c->pwrite_at : pos, &st);

		if (r > 0)
			pos += r;
		from = c->cut[part];
	}
	return st.policy != -1 || strcmp(st.cs, "?");
}

/*
 * COUNT writes to file t by writer u, model state in st; each checked,
 * then the state. inherited: a descriptor root opened for uid 65534
 * (-1 for none). noise: only writes that must change nothing, from
 * stream k, until sh->stop, and the state is left to the valid writer.
 */
static void fuzz(uint64_t seed, int t, int u, long long count, struct state *st,
		 int inherited, int noise, int k)
{
	unsigned char *buf = noise ? malloc(NOISE_BUF) : gbuf;
	struct rng r;
	long long i;

	if (!buf)
		return;
	for (i = 0; noise ? !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) : i < count; i++) {
		struct state want = *st;
		struct wcase c;
		int fd;

		seed_rng(&r, seed, k, i);
		if (target[t].kind == READ_ONLY) {
			try_read_only(t, u, &r);
			if (!noise && i % 64 == 63)
				check_state(t, u, st, "writes to a read-only file");
			continue;
		}
		if (u == NOBODY_ && (inherited < 0 || pick(&r, 2))) {
			try_own_open(t, u);
			continue;
		}
		gen_case(&r, target[t].kind, &c, noise, buf);
		if (noise && changes(t, u, &c))
			continue;
		fd = u == NOBODY_ ? inherited : open(target[t].path, pick(&r, 4) ? O_WRONLY : O_RDWR);
		if (fd < 0) {
			tally_write(t, u, 0, -1, errno);
			if (show())
				printf("writefuzz: %s as %s: open: %s\n", target[t].name,
				       user_name[u], strerror(errno));
			continue;
		}
		run_case(t, u, fd, &c, &want);
		if (fd != inherited)
			close(fd);
		if (noise)
			continue;
		if (check_state(t, u, &want, "a write"))
			read_state(&want);	/* go on from what is there */
		*st = want;
	}
	if (noise)
		free(buf);
}

static int become(int u)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (u == NOBODY_)
		return setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY);
	if (u != NOCAP)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	data[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
	return syscall(SYS_capset, &hdr, data);
}

/* fuzz() as writer u in a child; uid 65534 gets a descriptor root opened. */
static pid_t fuzz_child(uint64_t seed, int t, int u, long long count, struct state *st,
			int noise, int k)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = -1;

		if (u == NOBODY_ && target[t].kind != READ_ONLY)
			fd = open(target[t].path, O_WRONLY);
		if (become(u)) {
			perror("writefuzz: drop privileges");
			_exit(2);
		}
		fuzz(seed, t, u, count, st, fd, noise, k);
		fflush(stdout);
		_exit(0);
	}
	return pid;
}

static int wait_child(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "writefuzz: a writer process failed\n");
		return -1;
	}
	return 0;
}

/* ---- Concurrent writers. ---- */

struct thread_arg {
	uint64_t seed;
	int t, k;
	long long n;
	struct state st;
};

static void *noise_thread(void *p)
{
	struct thread_arg *a = p;

	fuzz(a->seed, a->t, ROOT, 0, &a->st, -1, 1, a->k);
	return NULL;
}

/* A valid value for file t: "1\n", " 2", "hpet\n", "\n" (automatic) ... */
static size_t valid_value(struct rng *r, int t, char *buf, size_t size)
{
	char names[sizeof(available)], *w, *save;
	const char *pick_name = "";
	unsigned int n = 0, want;

	if (target[t].kind == SYSCTL_INT)
		return snprintf(buf, size, pick(r, 3) ? "%u\n" : " %u", pick(r, 3));
	strcpy(names, available);
	for (w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save))
		n++;
	want = pick(r, n + 1);
	strcpy(names, available);
	for (w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (want-- == 0)
			pick_name = w;
	return snprintf(buf, size, pick(r, 4) ? "%s\n" : "%s", pick_name);
}

/* n valid writes; check: each is read back (no other valid writer runs). */
static void valid_writes(uint64_t seed, int t, int k, long long n, struct state *st, int check)
{
	struct rng r;
	long long i;

	for (i = 0; i < n; i++) {
		struct state want = *st;
		char buf[64];
		size_t len;
		long w, got;
		int fd, err;

		seed_rng(&r, seed, k, i);
		len = valid_value(&r, t, buf, sizeof(buf));
		w = model(t, ROOT, (unsigned char *)buf, len, 0, 0, &want);
		fd = open(target[t].path, O_WRONLY);
		got = do_write(fd, (unsigned char *)buf, len, -1, &err);
		close(fd);
		tally_write(t, ROOT, w, got, err);
		report_write(t, ROOT, (unsigned char *)buf, len, 0, w, got, err);
		if (check && check_state(t, ROOT, &want, "a valid write among bad ones"))
			read_state(&want);
		*st = want;
	}
}

static void *valid_thread(void *p)
{
	struct thread_arg *a = p;

	valid_writes(a->seed, a->t, a->k, a->n, &a->st, 0);
	return NULL;
}

/* Reads file t until sh->stop: every value read must be a valid one. */
static void *reader_thread(void *p)
{
	struct thread_arg *a = p;
	char v[64];

	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		int bad = read_file(target[a->t].path, v, sizeof(v));

		if (!bad && target[a->t].kind == SYSCTL_INT)
			bad = strlen(v) != 1 || v[0] < '0' || v[0] > '2';
		else if (!bad)
			bad = !is_available(v);
		if (bad) {
			__atomic_fetch_add(&sh->t[a->t][ROOT].state_wrong, 1, __ATOMIC_RELAXED);
			if (show())
				printf("writefuzz: %s: read '%s' while two valid writers ran\n",
				       target[a->t].name, v);
		}
	}
	return NULL;
}

/*
 * Writable file t: a checked writer of valid values among noise from two
 * root threads, uid 65534 and root without CAP_SYS_ADMIN; then two
 * valid writers and a reader.
 */
static int concurrent(uint64_t seed, int t, long long n, struct state *st)
{
	struct thread_arg a[3];
	pthread_t th[3];
	pid_t pid[2];
	int i, rc = 0;

	sh->stop = 0;
	/* Fork before any thread exists. */
	pid[0] = fuzz_child(seed, t, NOBODY_, 0, st, 1, 300 + t * 10);
	pid[1] = fuzz_child(seed, t, NOCAP, 0, st, 1, 301 + t * 10);
	for (i = 0; i < 2; i++) {
		a[i] = (struct thread_arg){ seed, t, 302 + t * 10 + i, 0, *st };
		pthread_create(&th[i], NULL, noise_thread, &a[i]);
	}
	valid_writes(seed, t, 304 + t * 10, n, st, 1);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	rc |= wait_child(pid[0]) | wait_child(pid[1]);

	sh->stop = 0;
	for (i = 0; i < 3; i++) {
		a[i] = (struct thread_arg){ seed, t, 305 + t * 10 + i, n / 2, *st };
		pthread_create(&th[i], NULL, i < 2 ? valid_thread : reader_thread, &a[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	pthread_join(th[2], NULL);
	/* Either writer's last value; the vDSO flag and the rest must agree. */
	read_state(st);
	check_state(t, ROOT, st, "two valid writers");
	return rc;
}

/* ---- Main. ---- */

static void setup(void)
{
	char v[64];
	int i;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gbuf = mmap(NULL, HUGE + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	edge = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || gbuf == MAP_FAILED || edge == MAP_FAILED ||
	    munmap(edge + PAGE, PAGE)) {
		perror("writefuzz: mmap");
		exit(2);
	}
	for (i = T_RO_FIRST; i < NTARGET; i++) {
		if (read_file(target[i].path, v, sizeof(v))) {
			fprintf(stderr, "writefuzz: %s: %s\n", target[i].path, strerror(errno));
			exit(2);
		}
		strcpy(ro_value[i], v);
	}
	if (read_file(CS_DIR "available_clocksource", available, sizeof(available))) {
		perror("writefuzz: available_clocksource");
		exit(2);
	}
	/* The kernel's own choice is the clocksource at boot (no override yet). */
	if (read_file(CS_DIR "current_clocksource", best, sizeof(best))) {
		perror("writefuzz: current_clocksource");
		exit(2);
	}
}

static void fact(FILE *f, const char *name, long long v)
{
	if (f)
		fprintf(f, "# fact writefuzz/%s=%lld\n", name, v);
}

static int report(uint64_t seed, double secs)
{
	const char *path = getenv("TSCKIT_RESULTS");
	FILE *f = path ? fopen(path, "w") : NULL;
	struct tally sum = { 0 };
	char name[128];
	int t, u;

	for (t = 0; t < NTARGET; t++) {
		for (u = 0; u < NUSER; u++) {
			const struct tally *y = &sh->t[t][u];

			if (!y->tried)
				continue;
			printf("# figure: writefuzz: %s as %s: tried %lld, accepted %lld, refused %lld; "
			       "bad accepted %lld, mismatched %lld, state wrong %lld\n",
			       target[t].name, user_name[u], y->tried, y->accepted, y->refused,
			       y->bad_accepted, y->mismatch, y->state_wrong);
			snprintf(name, sizeof(name), "%s/%s/tried", target[t].name, user_name[u]);
			fact(f, name, y->tried);
			sum.tried += y->tried;
			sum.accepted += y->accepted;
			sum.refused += y->refused;
			sum.bad_accepted += y->bad_accepted;
			sum.mismatch += y->mismatch;
			sum.state_wrong += y->state_wrong;
		}
	}
	printf("# figure: writefuzz: %lld writes in %.1f s (seed %llu): accepted %lld, refused %lld; "
	       "bad accepted %lld, mismatched %lld, state wrong %lld\n",
	       sum.tried, secs, (unsigned long long)seed, sum.accepted, sum.refused,
	       sum.bad_accepted, sum.mismatch, sum.state_wrong);
	fact(f, "seed", seed);
	fact(f, "tried", sum.tried);
	fact(f, "accepted", sum.accepted);
	fact(f, "refused", sum.refused);
	fact(f, "bad_accepted", sum.bad_accepted);
	fact(f, "mismatch", sum.mismatch);
	fact(f, "state_wrong", sum.state_wrong);
	if (f)
		fclose(f);
	return sum.bad_accepted || sum.mismatch || sum.state_wrong;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Put the policy and the kernel's own clocksource choice back. */
static int restore(int policy)
{
	char buf[16];
	struct state st;
	int fd, n, ok;

	n = snprintf(buf, sizeof(buf), "%d\n", policy);
	fd = open(SYSCTL, O_WRONLY);
	ok = fd >= 0 && write(fd, buf, n) == n;
	close(fd);
	fd = open(CS_DIR "current_clocksource", O_WRONLY);
	ok &= fd >= 0 && write(fd, "\n", 1) == 1;
	close(fd);
	read_state(&st);
	if (!ok || st.policy != policy || strcmp(st.cs, best)) {
		fprintf(stderr, "writefuzz: could not restore tsc_user %d and clocksource %s\n",
			policy, best);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long long count;
	struct state st, orig;
	uint64_t seed;
	double t0;
	int t, u, rc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SEED COUNT\n", argv[0]);
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	count = strtoll(argv[2], NULL, 0);
	if (geteuid()) {
		fprintf(stderr, "writefuzz: run as root\n");
		return 2;
	}
	setup();
	read_state(&orig);
	st = orig;
	printf("# writefuzz: seed %llu, %lld writes per writable file as root; tsc_user %d, "
	       "clocksource %s, available: %s\n", (unsigned long long)seed, count,
	       st.policy, st.cs, available);
	t0 = now();
	for (t = 0; t < NTARGET; t++) {
		for (u = 0; u < NUSER; u++) {
			long long n = u == ROOT ? count : count / 2;

			if (u == ROOT) {
				fuzz(seed, t, u, n, &st, -1, 0, t * NUSER + u);
				continue;
			}
			rc |= wait_child(fuzz_child(seed, t, u, n, &st, 0, t * NUSER + u));
			read_state(&st);
		}
		if (target[t].kind != READ_ONLY)
			rc |= concurrent(seed, t, count / 10, &st);
	}
	rc |= restore(orig.policy);
	if (report(seed, now() - t0))
		return 1;
	return rc ? 2 : 0;
}
