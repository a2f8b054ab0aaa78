// SPDX-License-Identifier: GPL-2.0
/*
 * emucheck_64|emucheck_32 [--self] SEED COUNT: the kernel's emulation of
 * user RDTSC and RDTSCP (kernel.tsc_user=1) against the CPU itself
 * (kernel.tsc_user=0), on COUNT instruction sequences made from SEED. Run
 * as root; both builds come from this file (scripts/guest-tests).
 *
 * Each sequence is an optional NOP, then RDTSC (0f 31), RDTSCP (0f 01 f9)
 * or a neighbour that faults in user mode (HLT, WRMSR, SWAPGS, ...) behind
 * prefixes: legal ones (66 67 f2 f3 26 2e 36 3e 64 65), REX (40-4f: INC
 * and DEC in a 32-bit task), LOCK (f0), repeated, up to 15 and 16 bytes;
 * then at times a second RDTSC/RDTSCP, then int3. It is placed in an
 * executable area of two pages followed by an unmapped one: anywhere,
 * across the two pages, ending exactly at the unmapped page (no int3
 * fits: the next fetch faults) or cut short by it.
 *
 * Every sequence runs with every general register, and the arithmetic
 * flags, set from the generator, and always ends in a signal. The handler
 * keeps si_signo, si_code, si_addr and all of the ucontext's registers.
 * Runs under allow and emulate must agree on all of it but the TSC value
 * (EDX:EAX, whose upper halves must be 0 in 64-bit mode and which must not
 * go back); RDTSCP's ECX must be getcpu()'s encoding, (node << 12) | cpu,
 * in both. Under sigsegv, wherever allow ran RDTSC/RDTSCP the sequence
 * must stop with SIGSEGV at that instruction with the registers it had
 * before it, and elsewhere end as under allow. Each batch of sequences
 * runs in a child pinned to one CPU, so that a harness crash is contained
 * and getcpu() stays true.
 *
 * Prints "# figure: emucheck: ..." and writes "# fact emucheck/tried_64"
 * (differed_64, excused_64, and untrapped_64: RDTSC/RDTSCP that ran under
 * emulate but are missing from tsc0/user_traps, so did not trap; _32 in
 * the 32-bit build) to $TSCKIT_RESULTS. Exit 0 when nothing differed and
 * every one trapped, 1 otherwise, 2 on a usage or setup error.
 * --self runs twice under whatever policy is set, without the sysctl: a
 * check of the harness on any kernel (where the CPU does not list RDTSCP,
 * as in some KVM guests, RDTSCP may run one time and raise #UD the next),
 * and, while someone else switches the policy (make soak), a check that
 * emulation changes nothing.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/* REG_RAX or REG_EAX, ... as the build's ucontext names them. */
#ifdef __x86_64__
#define BITS 64
#define GREG(r) REG_R##r
static const char *const reg_name[NGREG] = {
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi",
	"rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip", "eflags", "csgsfs",
	"err", "trapno", "oldmask", "cr2",
};
#define NPRESET 16		/* and r8-r15 after these */
#else
#define BITS 32
#define GREG(r) REG_E##r
static const char *const reg_name[NGREG] = {
	"gs", "fs", "es", "ds", "edi", "esi", "ebp", "esp", "ebx", "edx",
	"ecx", "eax", "trapno", "err", "eip", "cs", "eflags", "uesp", "ss",
};
#define NPRESET 8
#endif
#define R_AX GREG(AX)
#define R_CX GREG(CX)
#define R_DX GREG(DX)
#define R_IP GREG(IP)
/* The order run_code() loads them in; the flags follow. */
enum { P_AX, P_BX, P_CX, P_DX, P_SI, P_DI, P_BP, P_SP };

#define PAGE 4096
#define AREA (2 * PAGE)		/* executable; the page after it is unmapped */
#define MAXLEN 40
#define CHUNK 10000		/* sequences kept in memory at a time */
#define BATCH 1000		/* sequences per child */
#define SHOW 10			/* differing sequences printed in full */
#define SYSCTL "/proc/sys/kernel/tsc_user"
#define TRAPS "/sys/devices/system/tsc/tsc0/user_traps"
#define ARITH_FLAGS 0x8d5	/* CF PF AF ZF SF OF */

enum { ALLOW, EMULATE, SIGSEGV_, NPHASE };
static const char *const phase_name[NPHASE] = { "allow", "emulate", "sigsegv" };
enum { MID, CROSS, EDGE, CUT };
static const char *const place_name[] = { "mid", "cross", "edge", "cut" };

struct tsc_insn {
	int start, end;		/* offsets in the area, as the CPU decodes it */
	int rdtscp;
};

struct seq {
	uint8_t byte[MAXLEN];
	int len;		/* bytes written; a cut sequence loses its tail */
	int full;		/* bytes it would have */
	int off;		/* where it starts in the area */
	int place;
	int ntsc;		/* RDTSC/RDTSCP in it: 0, 1 or 2 */
	struct tsc_insn tsc[2];
	int locked;		/* LOCK among the first one's prefixes */
	int simd;		/* the first is RDTSCP after 66, f2 or f3 */
	unsigned long preset[NPRESET + 1];	/* registers, then flags */
	unsigned long pre_ax, pre_cx, pre_dx;	/* at the first RDTSC(P) */
};

struct outcome {
	int signo, code;
	unsigned long addr;
	greg_t reg[NGREG];
	int back;		/* the TSC read here is below the one before */
	int crashed;		/* the harness died before it ran */
};

/* Read by run_code()'s final jump. */
unsigned long code_target;
void run_code(const unsigned long *preset) __attribute__((noreturn));

/*
 * Load every general register and the flags from preset[] and jump to
 * code_target, without touching the stack after the flags: the sequence
 * always ends in a signal, whose handler jumps back with siglongjmp().
 */
#ifdef __x86_64__
asm(".text\n"
    "run_code:\n"
    "	pushq 128(%rdi)\n"
    "	popfq\n"
    "	mov 0(%rdi), %rax\n"
    "	mov 8(%rdi), %rbx\n"
    "	mov 16(%rdi), %rcx\n"
    "	mov 24(%rdi), %rdx\n"
    "	mov 32(%rdi), %rsi\n"
    "	mov 48(%rdi), %rbp\n"
    "	mov 56(%rdi), %rsp\n"
    "	mov 64(%rdi), %r8\n"
    "	mov 72(%rdi), %r9\n"
    "	mov 80(%rdi), %r10\n"
    "	mov 88(%rdi), %r11\n"
    "	mov 96(%rdi), %r12\n"
    "	mov 104(%rdi), %r13\n"
    "	mov 112(%rdi), %r14\n"
    "	mov 120(%rdi), %r15\n"
    "	mov 40(%rdi), %rdi\n"
    "	jmp *code_target(%rip)\n");
#else
asm(".text\n"
    "run_code:\n"
    "	mov 4(%esp), %eax\n"
    "	pushl 32(%eax)\n"
    "	popfl\n"
    "	mov 4(%eax), %ebx\n"
    "	mov 8(%eax), %ecx\n"
    "	mov 12(%eax), %edx\n"
    "	mov 16(%eax), %esi\n"
    "	mov 20(%eax), %edi\n"
    "	mov 24(%eax), %ebp\n"
    "	mov 28(%eax), %esp\n"
    "	mov 0(%eax), %eax\n"
    "	jmp *code_target\n");
#endif

static uint8_t *area;		/* mapped before the children fork: same address in all */
static unsigned long cpunode;	/* getcpu()'s (node << 12) | cpu of the pinned CPU */
static int has_rdtscp;		/* else Linux never sets TSC_AUX: ECX means nothing */

/* ---- The generator: xorshift64, one stream per sequence. ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned int pick(unsigned int n)
{
	return rnd() % n;
}

/* Sequence i of a seed is the same whatever COUNT and chunking. */
static void seed_stream(uint64_t seed, uint64_t i)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	rng = (z ^ (z >> 31)) | 1;
}

static const uint8_t legal_prefix[] = {
	0x66, 0x67, 0xf2, 0xf3, 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65,
};

static uint8_t legacy(void)
{
	return legal_prefix[pick(sizeof(legal_prefix))];
}

static uint8_t legacy_or_rex(void)
{
	return pick(3) ? legacy() : 0x40 + pick(16);
}

enum { STYLE_LEGACY, STYLE_MIXED, STYLE_REPEAT, STYLE_REX, STYLE_LOCK };

/* LOCK one time in ten: QEMU may excuse those (see excused()). */
static int pick_style(void)
{
	static const int style[20] = {
		0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4,
	};

	return style[pick(20)];
}

static void gen_prefixes(uint8_t *p, int n, int style)
{
	uint8_t same = pick(12) ? legacy_or_rex() : 0xf0;
	int i;

	for (i = 0; i < n; i++) {
		switch (style) {
		case STYLE_LEGACY:	p[i] = legacy(); break;
		case STYLE_REPEAT:	p[i] = same; break;
		case STYLE_REX:		p[i] = 0x40 + pick(16); break;
		default:		p[i] = legacy_or_rex(); break;
		}
	}
	if (style == STYLE_LOCK && n)
		p[pick(n)] = 0xf0;
}

/* Lengths around the 15-byte limit are what the decoders can get wrong. */
static int prefix_count(int oplen)
{
	switch (pick(10)) {
	case 0: case 1: case 2:	return pick(4);
	case 3: case 4:		return 15 - oplen;	/* the longest legal */
	case 5: case 6:		return 16 - oplen;	/* one byte too long */
	default:		return pick(18 - oplen);
	}
}

struct op {
	int tsc;		/* 0 other, 1 RDTSC, 2 RDTSCP */
	uint8_t len, b[4];
};

static const struct op op_rdtsc = { 1, 2, { 0x0f, 0x31 } };
static const struct op op_rdtscp = { 2, 3, { 0x0f, 0x01, 0xf9 } };
/* Instructions that #GP or #UD in user mode: the emulator must decline them. */
static const struct op neighbour[] = {
	{ 0, 1, { 0xf4 } },		/* hlt */
	{ 0, 1, { 0xfa } },		/* cli */
	{ 0, 1, { 0xfb } },		/* sti */
	{ 0, 2, { 0x0f, 0x30 } },		/* wrmsr */
	{ 0, 2, { 0x0f, 0x32 } },		/* rdmsr */
	{ 0, 2, { 0x0f, 0x33 } },		/* rdpmc */
	{ 0, 2, { 0x0f, 0x0b } },		/* ud2 */
	{ 0, 3, { 0x0f, 0x01, 0xf8 } },	/* swapgs */
	{ 0, 3, { 0x0f, 0x01, 0xfa } },	/* monitorx */
	{ 0, 3, { 0x0f, 0x01, 0xd0 } },	/* xgetbv, ECX is never 0 or 1 */
};
/* NOPs that change no register, so the state at the RDTSC is known. */
static const struct op leader[] = {
	{ 0, 1, { 0x90 } }, { 0, 2, { 0xf3, 0x90 } }, { 0, 2, { 0x66, 0x90 } },
	{ 0, 4, { 0x0f, 0x1f, 0x40, 0x00 } },
};

static int put(struct seq *s, int at, const uint8_t *b, int n)
{
	memcpy(s->byte + at, b, n);
	return at + n;
}

/*
 * Where the first RDTSC(P) starts as the CPU sees it: in a 32-bit task a
 * REX byte is INC or DEC (with the prefixes before it), so the
 * instruction starts after the last one. Its effect on EAX, ECX and EDX
 * is followed, for what sigsegv must leave there.
 */
static int follow_inc_dec(struct seq *s, int at, int n)
{
	unsigned long *r[8] = { &s->pre_ax, &s->pre_cx, &s->pre_dx };
	int i, start = at, word = 0;

	s->pre_ax = s->preset[P_AX];
	s->pre_cx = s->preset[P_CX];
	s->pre_dx = s->preset[P_DX];
	if (BITS == 64)
		return at;
	for (i = at; i < at + n; i++) {
		uint8_t b = s->byte[i];
		unsigned long *v;

		if (b == 0x66)
			word = 1;
		if ((b & 0xf0) != 0x40)
			continue;
		start = i + 1;
		/* Register order of INC/DEC: eax ecx edx ebx esp ebp esi edi. */
		v = r[b & 7];
		if (v) {
			unsigned long mask = word ? 0xffff : 0xffffffff;
			unsigned long nv = (*v + (b < 0x48 ? 1 : -1)) & mask;

			*v = (*v & ~mask) | nv;
		}
		word = 0;
	}
	return start;
}

static void gen_presets(struct seq *s)
{
	int i;

	for (i = 0; i < NPRESET; i++)
		s->preset[i] = (unsigned long)rnd();
	s->preset[P_CX] |= 0x100;	/* XGETBV must fault */
	s->preset[NPRESET] = 0x202 | (rnd() & ARITH_FLAGS);
}

/* 66, f2 and f3 select other instructions than RDTSCP in group 7. */
static bool has_simd_prefix(const uint8_t *p, int n)
{
	return memchr(p, 0x66, n) || memchr(p, 0xf2, n) || memchr(p, 0xf3, n);
}

static void gen_seq(struct seq *s, uint64_t seed, uint64_t i)
{
	const struct op *main_op, *op2;
	int at = 0, n, start;
	uint8_t pfx[20];

	memset(s, 0, sizeof(*s));
	seed_stream(seed, i);
	gen_presets(s);
	if (pick(5) == 0) {
		const struct op *l = &leader[pick(sizeof(leader) / sizeof(*leader))];

		at = put(s, at, l->b, l->len);
	}
	n = pick(20);
	main_op = n < 9 ? &op_rdtsc : n < 17 ? &op_rdtscp :
		&neighbour[pick(sizeof(neighbour) / sizeof(*neighbour))];
	n = prefix_count(main_op->len);
	gen_prefixes(pfx, n, pick_style());
	start = at;
	at = put(s, at, pfx, n);
	at = put(s, at, main_op->b, main_op->len);
	if (main_op->tsc) {
		s->tsc[0].start = follow_inc_dec(s, start, n);
		s->tsc[0].end = at;
		s->tsc[0].rdtscp = main_op->tsc == 2;
		s->locked = memchr(s->byte + s->tsc[0].start, 0xf0,
				   at - s->tsc[0].start) != NULL;
		s->simd = s->tsc[0].rdtscp && has_simd_prefix(s->byte + s->tsc[0].start,
							      at - 3 - s->tsc[0].start);
		s->ntsc = 1;
		/* Then at times another, with legal prefixes only. */
		if (pick(6) == 0) {
			op2 = pick(2) ? &op_rdtsc : &op_rdtscp;
			n = pick(4);
			gen_prefixes(pfx, n, STYLE_LEGACY);
			/* Only the first may be excused (see excused()). */
			for (start = 0; op2 == &op_rdtscp && start < n; start++)
				if (has_simd_prefix(pfx + start, 1))
					pfx[start] = 0x2e;
			s->tsc[1].start = at;
			at = put(s, at, pfx, n);
			at = put(s, at, op2->b, op2->len);
			s->tsc[1].end = at;
			s->tsc[1].rdtscp = op2->tsc == 2;
			s->ntsc = 2;
		}
	}
	s->full = s->len = at;
	n = pick(10);
	s->place = n < 6 ? MID : n < 7 ? CROSS : n < 9 ? EDGE : CUT;
	if (at < 2 && (s->place == CROSS || s->place == CUT))
		s->place = EDGE;	/* one byte neither crosses nor is cut */
	switch (s->place) {
	case MID:	s->off = pick(AREA - at - 1); break;
	case CROSS:	s->off = PAGE - 1 - pick(at - 1); break;
	case EDGE:	s->off = AREA - at; break;
	case CUT:
		n = 1 + pick(at - 1 < 4 ? at - 1 : 4);
		s->off = AREA - at + n;
		s->len = at - n;
		break;
	}
	/* Offsets from here on are in the area. */
	for (n = 0; n < s->ntsc; n++) {
		s->tsc[n].start += s->off;
		s->tsc[n].end += s->off;
	}
}

/* ---- Running one sequence. ---- */

static sigjmp_buf back;
static struct outcome *cur;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	cur->signo = sig;
	cur->code = si->si_code;
	cur->addr = (unsigned long)si->si_addr;
	memcpy(cur->reg, uc->uc_mcontext.gregs, sizeof(cur->reg));
#ifdef __x86_64__
	/* CR2 is the last page fault's, whatever the signal; not compared. */
	cur->reg[REG_CR2] = cur->reg[REG_OLDMASK] = 0;
#endif
	siglongjmp(back, 1);
}

static unsigned long rip(const struct outcome *o)
{
	return (unsigned long)o->reg[R_IP] - (unsigned long)area;
}

/* The k-th RDTSC(P) ran: execution went past it (there are no jumps). */
static int ran(const struct seq *s, const struct outcome *o, int k)
{
	return k < s->ntsc && rip(o) >= (unsigned long)s->tsc[k].end && rip(o) <= AREA;
}

static int ran_rdtscp(const struct seq *s, const struct outcome *o)
{
	return (ran(s, o, 0) && s->tsc[0].rdtscp) || (ran(s, o, 1) && s->tsc[1].rdtscp);
}

static uint64_t tsc_of(const struct outcome *o)
{
	return (uint64_t)(uint32_t)o->reg[R_DX] << 32 | (uint32_t)o->reg[R_AX];
}

static void run_one(const struct seq *s, struct outcome *o, uint64_t *last_tsc)
{
	memset(o, 0, sizeof(*o));
	memcpy(area + s->off, s->byte, s->len);
	cur = o;
	code_target = (unsigned long)area + s->off;
	if (!sigsetjmp(back, 1))
		run_code(s->preset);
	memset(area + s->off, 0xcc, s->len);
	if (ran(s, o, 0)) {
		o->back = tsc_of(o) < *last_tsc;
		*last_tsc = tsc_of(o);
	}
}

static int hole_unmapped(void)
{
	unsigned char v;

	return mincore(area + AREA, PAGE, &v) < 0 && errno == ENOMEM;
}

static void child(const struct seq *s, struct outcome *out, int n, volatile int *done)
{
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_ONSTACK };
	int sigs[] = { SIGSEGV, SIGILL, SIGTRAP, SIGBUS, SIGFPE };
	uint64_t last_tsc = 0;
	unsigned int i;

	if (!hole_unmapped()) {
		fprintf(stderr, "emucheck: the page after the code area got mapped\n");
		_exit(3);
	}
	sigaltstack(&ss, NULL);
	for (i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	alarm(60);		/* a sequence that never ends kills the batch */
	for (; *done < n; (*done)++)
		run_one(&s[*done], &out[*done], &last_tsc);
	_exit(0);
}

/* All of s[0..n) in children, BATCH at a time; a dead child's rest is marked. */
static void run_all(const struct seq *s, struct outcome *out, int n, volatile int *done)
{
	int first, status;
	pid_t pid;

	for (first = 0; first < n; first += BATCH) {
		int last = first + BATCH < n ? first + BATCH : n;

		*done = 0;
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("emucheck: fork");
			exit(2);
		}
		if (pid == 0)
			child(s + first, out + first, last - first, done);
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "emucheck: batch at %d: child %s %d after %d sequences\n",
				first, WIFEXITED(status) ? "exited" : "killed by signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), *done);
			for (int i = first + *done; i < last; i++)
				out[i].crashed = 1;
		}
	}
}

/* ---- Comparing. ---- */

static int is_tsc_reg(const struct seq *s, const struct outcome *o, int r)
{
	if (r == R_AX || r == R_DX)
		return ran(s, o, 0);
	return r == R_CX && ran_rdtscp(s, o);
}

/*
 * Why outcome b is not a (allow's, or what is expected): "" when it is.
 * The TSC value is not compared; where it was read, the registers must
 * hold what RDTSC/RDTSCP put there.
 */
static const char *differs(const struct seq *s, const struct outcome *a,
			   const struct outcome *b, char *why, size_t size)
{
	int r;

	if (a->crashed || b->crashed)
		return "the harness died";
	if (a->signo != b->signo || a->code != b->code || a->addr != b->addr)
		return "signal";
	for (r = 0; r < NGREG; r++) {
		if (is_tsc_reg(s, a, r) || a->reg[r] == b->reg[r])
			continue;
		snprintf(why, size, "%s", reg_name[r]);
		return why;
	}
	if (a->back || b->back)
		return "the TSC went back";
	if (BITS == 64 && ran(s, b, 0) &&
	    ((uint64_t)b->reg[R_AX] >> 32 || (uint64_t)b->reg[R_DX] >> 32))
		return "upper halves of rax/rdx";
	if (has_rdtscp && ran_rdtscp(s, b) && (unsigned long)b->reg[R_CX] != cpunode)
		return "RDTSCP's ecx is not getcpu()'s";
	return "";
}

/* What sigsegv must give where allow ran the first RDTSC(P). */
static void trapped(const struct seq *s, const struct outcome *allow, struct outcome *want)
{
	*want = *allow;
	want->signo = SIGSEGV;
	want->code = SI_KERNEL;
	want->addr = 0;
	want->reg[REG_TRAPNO] = 13;
	want->reg[REG_ERR] = 0;
	want->reg[R_IP] = (greg_t)((unsigned long)area + s->tsc[0].start);
	want->reg[R_AX] = (greg_t)s->pre_ax;
	want->reg[R_CX] = (greg_t)s->pre_cx;
	want->reg[R_DX] = (greg_t)s->pre_dx;
	want->back = 0;
}

/*
 * Known differences between QEMU and hardware; only these are excused.
 * LOCK RDTSC/RDTSCP: hardware raises #UD for LOCK on an instruction that
 * cannot take it (the SDM and APM say so; seen with this program on the
 * AMD EPYC hosts of these tests), before CR4.TSD counts, so every policy
 * gives SIGILL. QEMU 7.2's TCG ignores the LOCK: it runs the instruction
 * under allow and raises #GP under CR4.TSD, where the kernel rightly sees
 * no RDTSC in a LOCK instruction and gives SIGSEGV, as under sigsegv.
 * 66, f2 or f3 before 0f 01 f9: in group 7 they select other instructions
 * (several are privileged, so #GP at CPL 3), and the kernel declines to
 * emulate them; QEMU 7.2's TCG ignores them and runs RDTSCP.
 */
static const char *excused(const struct seq *s, const struct outcome *allow,
			   const struct outcome *emu)
{
	struct outcome want;
	char why[32];

	if (!(s->locked || s->simd) || !ran(s, allow, 0))
		return NULL;
	trapped(s, allow, &want);
	if (*differs(s, &want, emu, why, sizeof(why)))
		return NULL;
	return s->locked ? "LOCK runs under QEMU" : "66/f2/f3 RDTSCP runs under QEMU";
}

static void show_outcome(const char *what, const struct outcome *o)
{
	int r;

	printf("#   %-8s signal %d code %#x addr %+ld rip %+ld:", what, o->signo,
	       o->code, o->addr ? (long)(o->addr - (unsigned long)area) : 0, (long)rip(o));
	for (r = 0; r < NGREG; r++)
		if (r != R_IP)
			printf(" %s=%llx", reg_name[r], (unsigned long long)(unsigned long)o->reg[r]);
	printf("%s\n", o->crashed ? " (harness died)" : "");
}

static void show_seq(uint64_t i, const struct seq *s, const char *phase, const char *why)
{
	int k;

	printf("# emucheck: sequence %llu differs under %s (%s): %s at %d, %d of %d bytes:",
	       (unsigned long long)i, phase, why, place_name[s->place], s->off, s->len, s->full);
	for (k = 0; k < s->full; k++)
		printf(" %02x", s->byte[k]);
	printf("\n");
}

/* ---- The system-wide policy. ---- */

/* A number from a sysfs or procfs file, -1 when there is none. */
static long long read_ll(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v = -1;

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void set_policy(int p)
{
	FILE *f = fopen(SYSCTL, "w");

	if (!f || fprintf(f, "%d\n", p) < 0 || fclose(f) || (int)read_ll(SYSCTL) != p) {
		fprintf(stderr, "emucheck: cannot set %s to %d: %s\n", SYSCTL, p, strerror(errno));
		exit(2);
	}
}

/* Pinned to the last CPU we may use: its number is not 0, ECX then says more. */
static void pin(void)
{
	cpu_set_t set;
	unsigned int cpu = 0, node = 0;
	int c, last = -1;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				last = c;
	if (last >= 0) {
		CPU_ZERO(&set);
		CPU_SET(last, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	syscall(SYS_getcpu, &cpu, &node, NULL);
	cpunode = (unsigned long)node << 12 | cpu;
}

static int cpu_has_rdtscp(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27));	/* RDTSCP */
}

/* ---- Main. ---- */

struct tally {
	long long tried, differed, excused, ran, trapped;
	long long traps_want, traps_seen;	/* RDTSC(P) run under emulate; counted */
	int shown;
	const char *excuse;
};

/* One chunk's three phases are in out[]; count and print what differs. */
static void judge(uint64_t first, const struct seq *s, int n, struct outcome *out[NPHASE],
		  int self, struct tally *t)
{
	struct outcome want;
	const char *why, *ex;
	char buf[32];
	int i, phase;

	for (i = 0; i < n; i++) {
		const struct outcome *allow = &out[ALLOW][i], *emu = &out[EMULATE][i];

		t->tried++;
		t->ran += ran(s + i, allow, 0);
		t->traps_want += ran(s + i, emu, 0) + ran(s + i, emu, 1);
		phase = EMULATE;
		why = differs(s + i, allow, emu, buf, sizeof(buf));
		ex = *why ? excused(s + i, allow, emu) : NULL;
		/* --self under a policy that changes meanwhile (make soak):
		 * either run may be the one under CR4.TSD. */
		if (*why && !ex && self)
			ex = excused(s + i, emu, allow);
		if (!*why || ex) {
			why = "";
			if (!self) {
				phase = SIGSEGV_;
				if (ran(s + i, allow, 0)) {
					trapped(s + i, allow, &want);
					t->trapped++;
				} else {
					want = *allow;
				}
				why = differs(s + i, &want, &out[SIGSEGV_][i], buf, sizeof(buf));
			}
		}
		if (ex && !*why) {
			t->excused++;
			t->excuse = ex;
			continue;
		}
		if (!*why)
			continue;
		t->differed++;
		if (t->shown++ >= SHOW)
			continue;
		show_seq(first + i, s + i, phase_name[phase], why);
		show_outcome("allow", allow);
		show_outcome(phase_name[phase], &out[phase][i]);
		if (phase == SIGSEGV_)
			show_outcome("expected", &want);
	}
}

static void *shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("emucheck: mmap");
		exit(2);
	}
	return p;
}

static void map_area(void)
{
	/* Two code pages, the unmapped one, and a guard that keeps it free. */
	area = mmap(NULL, AREA + 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || munmap(area + AREA, PAGE) ||
	    mprotect(area + AREA + PAGE, PAGE, PROT_NONE)) {
		perror("emucheck: code area");
		exit(2);
	}
	memset(area, 0xcc, AREA);
}

/* untrapped: emulate ran more RDTSC(P) than the kernel counted in user_traps. */
static void report(const struct tally *t, uint64_t seed, long long untrapped)
{
	const char *path = getenv("TSCKIT_RESULTS");
	FILE *f = path ? fopen(path, "w") : NULL;

	printf("# figure: emucheck: %d-bit: tried %lld, differed %lld, excused %lld%s%s%s (seed %llu)\n",
	       BITS, t->tried, t->differed, t->excused, t->excuse ? " (" : "",
	       t->excuse ? t->excuse : "", t->excuse ? ")" : "", (unsigned long long)seed);
	printf("# figure: emucheck: %d-bit: RDTSC/RDTSCP ran in %lld sequences under allow, "
	       "SIGSEGV there checked under sigsegv in %lld; %lld ran under emulate, "
	       "user_traps counted %lld\n",
	       BITS, t->ran, t->trapped, t->traps_want, t->traps_seen);
	if (f) {
		fprintf(f, "# fact emucheck/tried_%d=%lld\n", BITS, t->tried);
		fprintf(f, "# fact emucheck/differed_%d=%lld\n", BITS, t->differed);
		fprintf(f, "# fact emucheck/excused_%d=%lld\n", BITS, t->excused);
		fprintf(f, "# fact emucheck/untrapped_%d=%lld\n", BITS, untrapped);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	struct outcome *out[NPHASE];
	struct tally t = { 0 };
	int self = argc > 1 && !strcmp(argv[1], "--self");
	uint64_t seed, count, first;
	volatile int *done;
	struct seq *s;
	int p, n, old = -1, nphase = self ? 2 : NPHASE;
	long long untrapped;

	if (argc != 3 + self) {
		fprintf(stderr, "usage: %s [--self] SEED COUNT\n", argv[0]);
		return 2;
	}
	seed = strtoull(argv[1 + self], NULL, 0);
	count = strtoull(argv[2 + self], NULL, 0);
	if (!self && (old = (int)read_ll(SYSCTL)) < 0) {
		fprintf(stderr, "emucheck: no %s: not the patched kernel (--self checks the harness)\n", SYSCTL);
		return 2;
	}
	pin();
	has_rdtscp = cpu_has_rdtscp();
	s = calloc(CHUNK, sizeof(*s));
	done = shared(sizeof(*done));
	for (p = 0; p < NPHASE; p++)
		out[p] = shared(CHUNK * sizeof(struct outcome));
	if (!s)
		return 2;
	map_area();	/* last: a later mapping could take the unmapped page */
	printf("# emucheck: %d-bit, seed %llu, %llu sequences, on CPU %lu node %lu, RDTSCP %s\n",
	       BITS, (unsigned long long)seed, (unsigned long long)count, cpunode & 0xfff,
	       cpunode >> 12, has_rdtscp ? "listed" : "not listed (ECX not checked)");

	for (first = 0; first < count; first += n) {
		n = count - first < CHUNK ? count - first : CHUNK;
		for (int i = 0; i < n; i++)
			gen_seq(&s[i], seed, first + i);
		for (p = 0; p < nphase; p++) {
			long long traps = read_ll(TRAPS);

			if (!self)
				set_policy(p);
			run_all(s, out[p], n, done);
			if (p == EMULATE && traps >= 0)
				t.traps_seen += read_ll(TRAPS) - traps;
		}
		judge(first, s, n, out, self, &t);
	}
	if (!self)
		set_policy(old);
	/* Else emulate may not have trapped at all, and agreed for that. */
	untrapped = self ? 0 : t.traps_want - t.traps_seen;
	report(&t, seed, untrapped);
	return t.differed || untrapped ? 1 : 0;
}
