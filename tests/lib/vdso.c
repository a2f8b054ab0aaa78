// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The vDSO ELF parser on the live vDSO, on truncated and damaged copies,
 * and a stand-in vDSO with __vdso_tsc_raw/__vdso_tsc_to_ns: its factor is
 * used, -ENODEV makes the handle fall back, a factor change is followed.
 * The kernel's factors reach the inline reads with shift 32 where that
 * is exact, as they are where it is not, and give the same ns.
 */
#include "t.h"
#include "fakevdso.h"
#include "../../lib/src/internal.h"

static void live(void)
{
	const void *base;
	size_t len, cut;
	struct vdso_syms s;
	unsigned char *copy;
	int (*cg)(clockid_t, struct timespec *);
	struct timespec ts;
	uint64_t a, b, c;

	if (tsc__vdso_live(&base, &len)) {
		printf("# no live vDSO\n");
		return;
	}
	CHECK(!tsc__vdso_parse(base, len, &s), "live vDSO does not parse");
	CHECK(s.clock_gettime, "no __vdso_clock_gettime in the live vDSO");
	if (s.clock_gettime) {
		cg = (void *)((const char *)base + s.clock_gettime);
		a = t_clock(CLOCK_MONOTONIC);
		CHECK(!cg(CLOCK_MONOTONIC, &ts), "__vdso_clock_gettime failed");
		b = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		c = t_clock(CLOCK_MONOTONIC);
		CHECK(a <= b && b <= c, "__vdso_clock_gettime found at the wrong place");
	}
	printf("# live vDSO: %zu bytes, tsc_raw %s\n", len, s.tsc_raw ? "yes" : "no");
	/* Every truncation and single-byte damage: an answer, never a crash. */
	copy = malloc(len);
	for (cut = 0; cut <= len; cut += 7) {
		memcpy(copy, base, cut);
		tsc__vdso_parse(copy, cut, &s);
	}
	for (cut = 0; cut < len && cut < 4096; cut++) {
		memcpy(copy, base, len);
		copy[cut] ^= 0xff;
		tsc__vdso_parse(copy, len, &s);
	}
	memset(copy, 0xa5, len);
	CHECK(tsc__vdso_parse(copy, len, &s) == -ENOEXEC, "garbage parsed");
	free(copy);
}

static void fake(const char *file)
{
	struct fake_state *st;
	struct tsc_info i;
	struct tsc *t, *live_t;
	uint64_t f, prev, now;
	char root[64] = "";

	/* The factor this machine's TSC really has, from a calibration. */
	TSC_OPTS(o, .force_calibrate = true, .no_watcher = true);
	live_t = tsc_open(&o);
	CHECK(live_t, "open");
	t_process(live_t, t_calib_limit_ms());
	tsc_get_info(live_t, &i, sizeof(i));
	f = i.mult;
	tsc_close(live_t);
	CHECK(i.src == TSC_SRC_CALIBRATION && f && i.khz,
	      "the forced calibration gave no factor (source %s, factor %llu, %llu kHz, bound %llu ppb)",
	      tsc_src_name(i.src), (unsigned long long)f, (unsigned long long)i.khz,
	      (unsigned long long)i.err_ppb);
	if (!f || !i.khz)
		return;
	st = fake_vdso(file);
	CHECK(st, "cannot load the stand-in vDSO %s", file);
	if (!st)
		return;
	st->f = f;

	TSC_OPTS(o2, .no_watcher = true);
	t = tsc_open(&o2);
	CHECK(t, "open with the stand-in vDSO");
	if (!t)
		return;
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.vdso_tsc, "vDSO TSC calls not found");
	CHECK(i.src == TSC_SRC_VDSO, "factors from %s, want vdso", tsc_src_name(i.src));
	CHECK(i.mult == f && i.shift == 32, "factor %llu, want %llu",
	      (unsigned long long)i.mult, (unsigned long long)f);
	if (!i.usable) {	/* the stand-in drives a made-up trusting kernel */
		tsc_close(t);
		strcpy(root, "/tmp/tsc-vdso-XXXXXX");
		CHECK(mkdtemp(root), "mkdtemp");
		t_mkroot(root, i.khz);
		printf("# the kernel does not use the TSC here: switches on a sysroot that trusts it\n");
		TSC_OPTS(o3, .sysroot = root, .no_watcher = true);
		t = tsc_open(&o3);
		CHECK(t, "open the sysroot with the stand-in vDSO");
		if (!t)
			goto out;
		tsc_get_info(t, &i, sizeof(i));
		CHECK(i.usable && i.src == TSC_SRC_VDSO && i.mult == f,
		      "sysroot + stand-in: usable %d, factors from %s", i.usable,
		      tsc_src_name(i.src));
	}
	prev = tsc_now_ns(t);

	st->nodev = 1;
	CHECK(tsc_process_events(t) == 1, "-ENODEV: no change seen");
	CHECK(!tsc_in_use(t), "still using the TSC after -ENODEV");
	CHECK(t_reason(t, "returned -ENODEV"), "no -ENODEV reason");
	now = tsc_now_ns(t);
	CHECK(now >= prev, "went back across the switch: %llu < %llu",
	      (unsigned long long)now, (unsigned long long)prev);
	prev = now;

	st->nodev = 0;
	st->f = f + f / 10000;	/* the kernel refined its calibration */
	CHECK(tsc_process_events(t) == 1, "back to the TSC: no change seen");
	tsc_get_info(t, &i, sizeof(i));
	CHECK(tsc_in_use(t) == i.usable && i.mult == f + f / 10000, "new factor not used");
	now = tsc_now_ns(t);
	CHECK(now >= prev, "went back across the switch");
	CHECK(i.switches == 2, "switches %llu, want 2", (unsigned long long)i.switches);
	printf("# stand-in vDSO: factor %llu, switches %llu, last step %lld ns\n",
	       (unsigned long long)f, (unsigned long long)i.switches, (long long)i.last_step_ns);
	tsc_close(t);
out:
	tsc__test_set_vdso(NULL, 0);
	t_rmroot(root);
}

/* The kernel's mult and shift (a made-up kernel at this machine's rate)
 * as the inline reads get them: shift 32 if it is below, with mult
 * shifted to match (a constant shift is one instruction, tsc.h), else as
 * they are; tsc_info keeps the kernel's, and ns are the same either way. */
static void shift32(uint64_t khz, uint32_t shift, uint32_t want_shift)
{
	static const uint64_t ticks[] = { 0, 1, 12345, 1ull << 40, (1ull << 52) + 7 };
	uint64_t mult = (uint64_t)(((unsigned __int128)1000000 << shift) / khz), want;
	const struct tsc_fast_state *f;
	struct tsc_info i;
	char root[64] = "/tmp/tsc-shift-XXXXXX", b[64];
	struct tsc *t;
	size_t k;

	CHECK(mkdtemp(root), "mkdtemp: %s", strerror(errno));
	t_mkroot(root, khz);
	snprintf(b, sizeof(b), "%u\n", shift);
	t_write(root, "sys/devices/system/tsc/tsc0/tsc_shift", b);
	snprintf(b, sizeof(b), "%llu\n", (unsigned long long)mult);
	t_write(root, "sys/devices/system/tsc/tsc0/tsc_mult", b);
	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t && tsc_in_use(t), "shift %u: the sysroot's TSC not in use", shift);
	if (!t || !tsc_in_use(t))
		goto out;
	tsc_get_info(t, &i, sizeof(i));
	CHECK(i.src == TSC_SRC_SYSFS_MULT && i.mult == mult && i.shift == shift,
	      "shift %u: tsc_info has %s factors %llu >> %u, want the kernel's %llu >> %u", shift,
	      tsc_src_name(i.src), (unsigned long long)i.mult, i.shift,
	      (unsigned long long)mult, shift);
	f = &t->fast.s[t->fast.seq & 1];
	want = want_shift > shift ? mult << (want_shift - shift) : mult;
	CHECK(f->shift == want_shift && f->mult == want,
	      "shift %u: the inline reads get %llu >> %u, want %llu >> %u", shift,
	      (unsigned long long)f->mult, f->shift, (unsigned long long)want, want_shift);
	for (k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
		uint64_t ns = tsc_ticks_to_ns(t, ticks[k]) - f->offset;
		uint64_t exact = (uint64_t)(((unsigned __int128)ticks[k] * mult) >> shift);

		CHECK(ns == exact, "shift %u: %llu ticks give %llu ns, the kernel's factors %llu",
		      shift, (unsigned long long)ticks[k], (unsigned long long)ns,
		      (unsigned long long)exact);
	}
	printf("# kernel factors %llu >> %u: the inline reads take %llu >> %u\n",
	       (unsigned long long)mult, shift, (unsigned long long)f->mult, f->shift);
	tsc_close(t);
out:
	t_rmroot(root);
}

int main(int argc, char **argv)
{
	uint64_t khz;

	live();
	fake(t_env("TSC_TEST_FAKEVDSO"));
	khz = t_host_khz();	/* after the parts that need no TSC */
	shift32(khz, 24, 32);
	shift32(khz, 32, 32);
	shift32(khz, 36, 36);
	DONE();
}
