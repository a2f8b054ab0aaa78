// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The wall mapping fed made-up kernel clocks through tsc__wall_anchor(),
 * one anchor a (virtual) second, with a virtual writer clock: clocks that
 * run 20 ppm, 500 ppm or 5% away from the library's ns, an NTP frequency
 * change that adjtimex() reports, a mapping that starts from adjtimex()'s
 * frequency, REALTIME, TAI and BOOTTIME steps, noisy
 * readings, and a writer stalled after its first reading of its clock
 * (a stall between its last reading and the turn it cannot see: readers
 * raise a mark, readers_hold() below).
 *
 * Readers are modelled as one stream per clock, in library ns order: the
 * old mapping up to the writer's last reading of its clock, the new one
 * from the writer's first.  It must never go back, except REALTIME and
 * TAI at the anchor after the made-up kernel set them back.  Just before
 * each anchor the mapping must be within 1 us (plus twice the noise) of
 * the kernel clock, once settled; after a step that it follows, at once.
 * In the guest (T_GUEST) the library ns come from the live TSC.
 */
#include <pthread.h>

#include "t.h"
#include "../../lib/src/internal.h"

#define SEC 1000000000ll
#define FINE 10000		/* 1 us steps over the first 10 ms of an interval */

static const clockid_t ids[W_NR] = {
	CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI,
};
static const char *const names[W_NR] = { "RAW", "MONOTONIC", "REALTIME", "BOOTTIME", "TAI" };

enum ev_kind { RATE, FREQ, STEP_REAL, STEP_BOOT, STEP_TAI, SUSPEND };
struct ev {
	int at;			/* after anchor at, ... */
	int64_t off;		/* ... this many ns */
	enum ev_kind kind;
	int64_t v;		/* ppb, or ns (SUSPEND: how long, the TSC running) */
};

struct scenario {
	const char *name;
	int64_t ppb, raw_ppb;	/* kernel rates against library ns */
	bool freq_ok;		/* adjtimex() tells the frequency */
	int64_t noise;		/* readings off by up to this many ns */
	bool stall;		/* the writer stalls 5 ms after its first reading */
	bool fresh;		/* anchor 0 starts the mapping (as at open):
				 * MONOTONIC's rate is adjtimex()'s from there */
	bool twice;		/* a second anchor 30 us after each (open: it
				 * drops the segment the first one kept for
				 * older ns, so tsc_ns_to_clock() of those
				 * moves; only every_copy()'s readers) */
	int anchors, settle;	/* error checked from anchor settle on */
	unsigned int no_err;	/* clocks whose error is not checked */
	struct ev ev[8];
	unsigned int backs[8];	/* anchor << 8 | clock: the expected backward steps */
	int steps;		/* steps the mapping takes (tsc_info.clock_steps) */
};

/* The made-up kernel: MONOTONIC and RAW run at their rates from (ls, m, r);
 * REALTIME, BOOTTIME, TAI are MONOTONIC plus offsets. */
static struct {
	uint64_t ls, m, r;
	int64_t ppb, raw_ppb, freq, off[W_NR];
	int next;		/* next event */
	uint64_t fz0, fz1;	/* MONOTONIC and RAW stand still in [fz0, fz1) */
} k;
static const struct scenario *sc;
static struct tsc *h;
static uint64_t base;		/* library ns of anchor 0 */
static uint64_t vnow;		/* the writer's clock */
static int vreads;

/* Every copy the writer published in this anchor (the first: the one
 * before it), and how far in library ns its readers can have got: to
 * the writer's first reading after the copy was replaced. */
#define NCOPY 8
static struct wall_copy copies[NCOPY];
static uint64_t seen[NCOPY];
static uint32_t copy_seq;
static int ncopies;

/* Each reading 1 us on; a stalled writer is 5 ms late for whatever it
 * does after its first reading (publishing included). */
static uint64_t vclock(struct tsc *t)
{
	uint64_t v = vnow += 1000;

	if (!ncopies || t->wall.seq != copy_seq) {
		if (ncopies)
			seen[ncopies - 1] = v;
		if (ncopies < NCOPY)
			copies[ncopies++] = t->wall.c[t->wall.seq & 1];
		copy_seq = t->wall.seq;
	}

	if (sc->stall && vreads++ == 0)
		vnow += 5000000;
	return v;
}

static uint64_t rated(uint64_t from, uint64_t d, int64_t ppb)
{
	return from + d + (uint64_t)(int64_t)((__int128)d * ppb / 1000000000);
}

static void advance(uint64_t l)
{
	uint64_t d, lo, hi;

	if (l > k.ls) {
		d = l - k.ls;
		lo = k.ls > k.fz0 ? k.ls : k.fz0;
		hi = l < k.fz1 ? l : k.fz1;
		d -= hi > lo ? hi - lo : 0;
		k.m = rated(k.m, d, k.ppb);
		k.r = rated(k.r, d, k.raw_ppb);
		k.ls = l;
	}
}

static uint64_t map(struct tsc *t, int i, uint64_t l)
{
	uint64_t v = 0;

	CHECK(!tsc_ns_to_clock(t, l, ids[i], &v), "tsc_ns_to_clock");
	return v;
}

/* The kernel's clock i at library ns l (not before the last call); before
 * anchor 0, the handle's own mapping. */
static uint64_t kclock(int i, uint64_t l)
{
	const struct ev *e;

	if (l < base)
		return map(h, i, l);
	while (k.next < 8 && (e = &sc->ev[k.next])->at &&
	       base + e->at * SEC + e->off <= l) {
		advance(base + e->at * SEC + e->off);
		if (e->kind == RATE)
			k.ppb = e->v;
		else if (e->kind == FREQ)
			k.freq = e->v;
		else if (e->kind == SUSPEND) {
			/* Suspend to idle: the sleep time goes to BOOTTIME,
			 * and so REALTIME and TAI, at once: read only after. */
			k.fz0 = base + e->at * SEC + e->off;
			k.fz1 = k.fz0 + e->v;
			k.off[W_REAL] += e->v, k.off[W_TAI] += e->v, k.off[W_BOOT] += e->v;
		} else if (e->kind == STEP_REAL)
			k.off[W_REAL] += e->v, k.off[W_TAI] += e->v;
		else
			k.off[e->kind == STEP_BOOT ? W_BOOT : W_TAI] += e->v;
		k.next++;
	}
	advance(l);
	return i == W_RAW ? k.r : k.m + k.off[i];
}

static uint64_t seed = 12345;

static int64_t noise(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return sc->noise ? (int64_t)(seed >> 33) % (2 * sc->noise + 1) - sc->noise : 0;
}

static void anchor(struct tsc *t, uint64_t l)
{
	struct wall_sample x = { .freq_ok = sc->freq_ok };
	int i;

	for (i = 0; i < W_NR; i++) {
		x.l[i] = l + i * 1000;
		x.c[i] = kclock(i, x.l[i]) + noise();
		x.w[i] = 2 * sc->noise + 50;
	}
	x.freq = (int64_t)((__int128)k.freq * (1ll << 32) / 1000000000);
	vnow = l + W_NR * 1000;
	vreads = 0;
	ncopies = 0;
	pthread_mutex_lock(&t->lock);
	tsc__wall_anchor(t, &x);
	pthread_mutex_unlock(&t->lock);
}

static bool expected_back(int a, int i)
{
	int j;

	for (j = 0; j < 8 && sc->backs[j]; j++)
		if (sc->backs[j] == ((unsigned int)a << 8 | (unsigned int)i))
			return true;
	return false;
}

/* Did the kernel step a clock by more than min ns in the interval that
 * ends at anchor a? */
static bool step_before(int a, int64_t min)
{
	int j;

	for (j = 0; j < 8 && sc->ev[j].at; j++)
		if (sc->ev[j].at == a - 1 && sc->ev[j].kind >= STEP_REAL &&
		    llabs(sc->ev[j].v) > min)
			return true;
	return false;
}

/* After a suspend with the TSC running, MONOTONIC and RAW stand still
 * until the kernel's are there; the others, already there (less what
 * the kernel's rate took from the TSC's over the sleep), slew. */
static bool resumed(int a)
{
	int j;

	for (j = 0; j < 8 && sc->ev[j].at; j++)
		if (sc->ev[j].at == a - 1 && sc->ev[j].kind == SUSPEND)
			return true;
	return false;
}

/* Did the kernel's rate change more than 1 ms before anchor a?  The
 * mapping learns of it only at a. */
static bool rate_changed(int a)
{
	int j;

	for (j = 0; j < 8 && sc->ev[j].at; j++)
		if (sc->ev[j].at == a - 1 && sc->ev[j].kind == RATE &&
		    sc->ev[j].off < SEC - 1000000)
			return true;
	return false;
}

static uint64_t old[W_NR][FINE + 1], last[W_NR], half[W_NR];
static int64_t worst_err[W_NR];
static int backs, total_backs;

static void back(int a, int i, uint64_t from, uint64_t to)
{
	if (expected_back(a, i) || (!a && sc->fresh))	/* a new mapping starts */
		return;
	if (backs++ < 5)
		FAIL("%s: %s went back %llu ns at anchor %d", sc->name, names[i],
		     (unsigned long long)(from - to), a);
}

/* Error just before anchor a (mapping minus kernel), and the stream of
 * the old mapping over the first 10 ms after the anchor's time. */
static void before(struct tsc *t, int a, uint64_t l)
{
	int i, g;

	for (i = 0; i < W_NR; i++) {
		int64_t e = (int64_t)(map(t, i, l) - kclock(i, l));
		bool check = a >= sc->settle && !(sc->no_err & 1u << i) && !step_before(a, 0) &&
			     !rate_changed(a);

		if (check && llabs(e) > llabs(worst_err[i]))
			worst_err[i] = e;
		CHECK(!check || llabs(e) <= 1000 + 2 * sc->noise,
		      "%s: %s off by %lld ns before anchor %d", sc->name, names[i],
		      (long long)e, a);
		half[i] = map(t, i, l - SEC / 2);
		for (g = 0; g <= FINE; g++) {
			old[i][g] = map(t, i, l + g * 1000ull);
			if (a && old[i][g] < last[i])
				back(a, i, last[i], old[i][g]);
			last[i] = old[i][g];
		}
	}
}

/* Before the published copy's prev segment, the mapping runs at that
 * segment's rate, without its slew: timestamps from before it are not
 * moved by a slew meant for later. */
static void before_prev(struct tsc *t, int a, int i)
{
	const struct wall_seg *g = &t->wall.c[t->wall.seq & 1].m[i].prev;
	uint64_t v0 = map(t, i, g->s - 2000000), v1 = map(t, i, g->s - 1000000);
	int64_t want = 1000000 + (int64_t)((__int128)1000000 * g->rate >> 32);
	int64_t d = (int64_t)(v1 - v0) - want;

	CHECK(a < 2 || llabs(d) <= 1, "%s: %s slews before its segment: %lld ns in 1 ms",
	      sc->name, names[i], (long long)d);
}

/* The new mapping: never below what the old one handed out up to the
 * writer's last reading, then on to the next anchor; a step it follows
 * is followed at once. */
/* Clock i of a copy at ns: the copy put in place of the published one. */
static uint64_t map_copy(struct tsc *t, const struct wall_copy *c, int i, uint64_t ns)
{
	struct wall_copy keep = t->wall.c[t->wall.seq & 1];
	uint64_t v;

	t->wall.c[t->wall.seq & 1] = *c;
	v = map(t, i, ns);
	t->wall.c[t->wall.seq & 1] = keep;
	return v;
}

/* A reader of a copy published earlier in the anchor, at ns up to where
 * its readers can have got, and then a reader of any later copy or of
 * the final mapping at that ns or later, and not before the later copy
 * was published (the writer read its clock 1 us after): never back. */
static int64_t late_back;

static void every_copy(struct tsc *t, int a, uint64_t l)
{
	int i, j, c, n = 0;
	uint64_t ns, v, w;

	/* Every publication is followed by a reading: the last copy is the
	 * published one. */
	CHECK(!memcmp(&copies[ncopies - 1], &t->wall.c[t->wall.seq & 1], sizeof(copies[0])),
	      "%s: the last copy is not the published one", sc->name);
	for (i = 0; i < W_NR; i++)
		for (j = 0; j < ncopies - 1; j++)
			for (ns = l; ns <= seen[j]; ns += 1000)
				for (c = j + 1; c < ncopies; c++) {
					uint64_t pub = seen[c - 1] - 1000;

					v = map_copy(t, &copies[j], i, ns);
					w = map_copy(t, &copies[c], i, ns > pub ? ns : pub);
					/* Published past its own start: the writer
					 * stalled and did not see it before it
					 * sent readers there. */
					if (pub + 1000 >= copies[c].m[i].cur.s) {
						if (w < v && (int64_t)(v - w) > late_back)
							late_back = (int64_t)(v - w);
						continue;
					}
					if (w < v && !expected_back(a, i) && n++ < 3)
						FAIL("%s: %s: copy %d at +%llu ns maps %llu ns below copy %d "
						     "at anchor %d", sc->name, names[i], c,
						     (unsigned long long)(ns - l),
						     (unsigned long long)(v - w), j, a);
				}
}

static void after(struct tsc *t, int a, uint64_t l)
{
	int gl = (int)((vnow - l) / 1000), i, g;
	uint64_t v, prev;


	for (i = 0; i < W_NR; i++) {
		/* An anchor, stalled or not, does not move a 0.5 s old timestamp. */
		v = map(t, i, l - SEC / 2);
		CHECK(!a || sc->twice || v == half[i],
		      "%s: %s of a 0.5 s old timestamp moved %lld ns at anchor %d", sc->name,
		      names[i], (long long)(v - half[i]), a);
		prev = 0;
		for (g = 0; g <= FINE; g++) {
			v = map(t, i, l + g * 1000ull);
			/* Two anchors: every_copy() models the readers. */
			if (!sc->twice && v < old[i][g < gl ? g : gl])
				back(a, i, old[i][g < gl ? g : gl], v);
			else if (v < prev)
				back(a, i, prev, v);
			prev = v;
		}
		if (step_before(a, 1000000) && !(sc->no_err & 1u << i) && !resumed(a)) {
			int64_t e = (int64_t)(map(t, i, l + 2000000) - kclock(i, l + 2000000));

			CHECK(llabs(e) <= 1000 + 2 * sc->noise,
			      "%s: %s off by %lld ns 2 ms after anchor %d", sc->name,
			      names[i], (long long)e, a);
		}
		for (g = 11; g < 1000; g++) {
			v = map(t, i, l + g * 1000000ull);
			if (v < prev)
				back(a, i, prev, v);
			prev = v;
		}
		last[i] = prev;
		before_prev(t, a, i);
	}
}

/* A handle without a watcher, whose writer reads clk; base 1 s on. */
static struct tsc *open_hooked(uint64_t (*clk)(struct tsc *))
{
	struct tsc *t;

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	if (!t) {
		FAIL("open");
		return NULL;
	}
	t->wall_now = clk;
	base = tsc_now_ns(t) + SEC;
	t_live_tsc(t);
	return t;
}

static void run(const struct scenario *s)
{
	struct tsc_info info;
	struct tsc *t = open_hooked(vclock);
	uint64_t back0[W_NR];
	int a, i;

	if (!t)
		return;
	h = t;
	sc = s;
	backs = 0;
	memset(worst_err, 0, sizeof(worst_err));
	/* The made-up kernel starts where the handle's mapping is. */
	memset(&k, 0, sizeof(k));
	k.fz0 = k.fz1 = UINT64_MAX;
	k.ls = base;
	k.m = map(t, W_MONO, base);
	k.r = map(t, W_RAW, base);
	for (i = W_REAL; i < W_NR; i++)
		k.off[i] = (int64_t)(map(t, i, base) - k.m);
	k.ppb = s->ppb;
	k.raw_ppb = s->raw_ppb;
	k.freq = s->ppb;
	for (a = 0; a < s->anchors; a++) {
		uint64_t l = base + a * SEC;

		before(t, a, l);
		if (!a && s->fresh) {	/* no mapping yet */
			pthread_mutex_lock(&t->lock);
			t->wall.c[0].valid = t->wall.c[1].valid = 0;
			pthread_mutex_unlock(&t->lock);
		}
		for (i = 0; i < W_NR; i++)
			back0[i] = t->wall.c[t->wall.seq & 1].m[i].cur.back;
		anchor(t, l);
		/* tsc_clock_gettime()'s mark lets a clock back by what
		 * back counts: the kernel's steps back, and nothing else. */
		for (i = 0; i < W_NR; i++) {
			const struct wall_map *m = &t->wall.c[t->wall.seq & 1].m[i];
			uint64_t b = m->cur.back;
			/* Counted with its steps back, the clock goes on
			 * at the new segment's start as the old one was. */
			int64_t u = (int64_t)(m->cur.b + m->cur.back -
					      map_copy(t, &t->wall.c[t->wall.seq & 1], i,
						       m->cur.s - 1) - m->prev.back);

			CHECK(sc->twice || (b > back0[i]) == (expected_back(a, i) && a > 0),
			      "%s: %s: back %llu ns at anchor %d, expected %s", sc->name,
			      names[i], (unsigned long long)(b - back0[i]), a,
			      expected_back(a, i) ? "a step back" : "none");
			CHECK(!a || u >= -1, "%s: %s: counted with its steps back, %lld ns "
			      "back at anchor %d", sc->name, names[i], (long long)-u, a);
		}
		if (a)
			every_copy(t, a, l);
		if (a && s->twice) {
			anchor(t, l + 30000);
			every_copy(t, a, l);
		}
		after(t, a, l);
	}
	CHECK(!late_back, "%s: readers of a copy published after the writer stalled past "
	      "its start went back up to %lld ns", s->name, (long long)late_back);
	late_back = 0;
	tsc_get_info(t, &info, sizeof(info));
	CHECK((int)info.clock_steps == s->steps, "%s: %llu steps taken, not %d", s->name,
	      (unsigned long long)info.clock_steps, s->steps);
	total_backs += backs;
	printf("# figure: %s: %d anchors, %d unexpected backward steps, %d steps; "
	       "worst error once settled:", s->name, s->anchors, backs, (int)info.clock_steps);
	for (i = 0; i < W_NR; i++)
		printf(" %s %lld ns%s", names[i], (long long)worst_err[i], i < W_NR - 1 ? "," : "\n");
	tsc_close(t);
}

#define B(a, i) ((a) << 8 | (i))

static const struct scenario all[] = {
	{ .name = "-20 ppm, adjtimex silent", .ppb = -20000, .anchors = 20, .settle = 3 },
	{ .name = "+20 ppm, adjtimex silent", .ppb = 20000, .anchors = 20, .settle = 3 },
	{ .name = "-20 ppm, adjtimex says so", .ppb = -20000, .freq_ok = true,
	  .anchors = 20, .settle = 1 },
	/* The first anchor's rate is seeded from adjtimex(): within 1 us
	 * by the next anchor, 20 us off without it. */
	{ .name = "-20 ppm, adjtimex says so, from the first anchor", .ppb = -20000,
	  .freq_ok = true, .fresh = true, .anchors = 5, .settle = 1 },
	{ .name = "+20 ppm, adjtimex says so, from the first anchor", .ppb = 20000,
	  .freq_ok = true, .fresh = true, .anchors = 5, .settle = 1 },
	{ .name = "-500 ppm, adjtimex silent", .ppb = -500000, .anchors = 20, .settle = 3 },
	{ .name = "+500 ppm, adjtimex silent", .ppb = 500000, .anchors = 20, .settle = 3 },
	/* A 5% error of the library's scale: MONOTONIC, BOOTTIME and RAW
	 * jump forward when behind, every clock slews at 500 ppm otherwise. */
	{ .name = "every clock +5%", .ppb = 50000000, .raw_ppb = 50000000,
	  .anchors = 110, .settle = 103, .steps = 3 },
	{ .name = "every clock -5%", .ppb = -50000000, .raw_ppb = -50000000,
	  .anchors = 110, .settle = 103 },
	{ .name = "NTP frequency changes, adjtimex follows", .freq_ok = true,
	  .anchors = 20, .settle = 1,
	  .ev = { { 5, SEC - 1000000, RATE, 20000 }, { 5, SEC - 1000000, FREQ, 20000 },
		  { 12, SEC - 1000000, RATE, -30000 }, { 12, SEC - 1000000, FREQ, -30000 } } },
	/* Changed mid-interval: the span measures half of it. */
	{ .name = "NTP frequency changes mid-interval", .freq_ok = true,
	  .anchors = 12, .settle = 1,
	  .ev = { { 5, SEC / 2, RATE, 20000 }, { 5, SEC / 2, FREQ, 20000 } } },
	{ .name = "-20 ppm, readings off by 300 ns", .ppb = -20000, .noise = 300,
	  .anchors = 40, .settle = 3 },
	{ .name = "-500 ppm, writer stalled 5 ms", .ppb = -500000, .stall = true,
	  .anchors = 20, .settle = 3 },
	{ .name = "+500 ppm, writer stalled 5 ms", .ppb = 500000, .stall = true,
	  .anchors = 20, .settle = 3 },
	{ .name = "-500 ppm, anchors 30 us apart", .ppb = -500000, .twice = true,
	  .anchors = 10, .settle = 3 },
	{ .name = "REALTIME, TAI set; a resume; a leap second", .freq_ok = true,
	  .noise = 100, .anchors = 30, .settle = 1,
	  .ev = { { 3, SEC * 3 / 10, STEP_REAL, SEC }, { 6, SEC * 3 / 10, STEP_REAL, -SEC },
		  { 9, SEC * 3 / 10, STEP_BOOT, 10 * SEC }, { 12, SEC * 3 / 10, STEP_REAL, 5000 },
		  { 15, SEC * 3 / 10, STEP_TAI, SEC }, { 18, SEC * 3 / 10, STEP_TAI, -SEC },
		  { 21, SEC * 3 / 10, STEP_REAL, -SEC }, { 21, SEC * 3 / 10, STEP_TAI, SEC } },
	  .backs = { B(7, W_REAL), B(7, W_TAI), B(19, W_TAI), B(22, W_REAL) }, .steps = 8 },
	/* The TSC runs through a 0.5 s suspend while MONOTONIC and RAW stand
	 * still: BOOTTIME, REALTIME and TAI step ahead, MONOTONIC and RAW
	 * stand still until the kernel's are there, at the rate from before. */
	{ .name = "suspend to idle, the TSC running", .ppb = 20000, .raw_ppb = 10000,
	  .anchors = 10, .settle = 3,
	  .ev = { { 3, SEC * 3 / 10, SUSPEND, SEC / 2 } }, .steps = 3 },
	/* BOOTTIME never goes back in the kernel: made up, it is not followed. */
	{ .name = "BOOTTIME set back", .freq_ok = true, .anchors = 10, .settle = 1,
	  .no_err = 1u << W_BOOT, .ev = { { 3, SEC * 3 / 10, STEP_BOOT, -SEC } } },
};

static int nreads;

static uint64_t counted(struct tsc *t)
{
	nreads++;
	return vnow += 1000;
}

/* Library ns 2 s below where the last segments start (they went back):
 * the writer neither sleeps under the lock nor spins, it starts the
 * mapping anew from the kernel's clocks. */
static void went_back(void)
{
	static const int at[] = { 0, 1, 2, 0 };
	struct wall_sample x = { .freq_ok = false };
	struct tsc *t = open_hooked(counted);
	uint64_t l = 0, v = 0;
	int a, i;

	if (!t)
		return;
	for (a = 0; a < 4; a++) {
		l = base + at[a] * SEC;
		for (i = 0; i < W_NR; i++) {
			x.l[i] = l + i * 1000;
			x.c[i] = x.l[i] + (uint64_t)(i + 1) * 1000 * SEC;
			x.w[i] = 50;
		}
		vnow = l + W_NR * 1000;
		nreads = 0;
		pthread_mutex_lock(&t->lock);
		tsc__wall_anchor(t, &x);
		pthread_mutex_unlock(&t->lock);
	}
	CHECK(nreads < 100, "library ns back 2 s: the writer read its clock %d times", nreads);
	CHECK(!tsc_ns_to_clock(t, l + 2000000, CLOCK_MONOTONIC, &v) &&
	      v == l + 2000000 + 2000 * SEC, "library ns back 2 s: MONOTONIC off by %lld ns",
	      (long long)(v - (l + 2000000 + 2000 * SEC)));
	printf("# figure: library ns back 2 s: the writer read its clock %d times\n", nreads);
	tsc_close(t);
}

/* A writer stalled between its last look and the turn leaves readers of
 * the old copy running on past where the new one starts: they raise
 * each clock's mark while the writer changes the mapping, and the new
 * copy starts no lower than where the writer closed it.  Made up here:
 * at the writer's first look with the mark open, every clock's mark is
 * raised 1 ms above the mapping (counted with the steps back), as
 * readers that far ahead of the writer would have; from where the old
 * copy reaches it on, tsc_clock_gettime() is not below it.  Then REALTIME and TAI are
 * lowered 1 s more, counted as the kernel's step back (the segments'
 * back, as plan() sets it): that step they take, and only that. */
static uint64_t raised[W_NR];

static uint64_t raise_marks(struct tsc *t)
{
	uint64_t now = tsc__lib_now(t), v;
	int i;

	if (!(t->wall.seq & 1) || raised[0])
		return now;
	for (i = 0; i < W_NR; i++) {
		const struct wall_map *m = &t->wall.c[1].m[i];

		tsc_ns_to_clock(t, now, ids[i], &v);
		raised[i] = v + m->cur.back + 1000000;
		__atomic_store_n(&t->wall_mark.v[i], raised[i], __ATOMIC_RELAXED);
		raised[i] -= m->cur.back;
	}
	return now;
}

static void readers_hold(void)
{
	uint64_t before[W_NR], after[W_NR];
	struct tsc *t;
	int i, c;

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open");
	if (!t)
		return;
	memset(raised, 0, sizeof(raised));
	pthread_mutex_lock(&t->lock);
	t->wall_now = raise_marks;
	pthread_mutex_unlock(&t->lock);
	tsc_reanchor(t);
	pthread_mutex_lock(&t->lock);
	t->wall_now = tsc__lib_now;
	pthread_mutex_unlock(&t->lock);
	CHECK(raised[0], "the writer never looked at its clock with the marks open");
	for (i = 0; i < W_NR; i++) {
		/* From where the old copy reaches the mark on (as readers
		 * that far ahead of the writer would have been), which the
		 * held line starts from: before it, a later reader than they
		 * cannot be. */
		while (tsc_now_ns(t) < t->wall_hold[i].x)
			;
		CHECK(!tsc_clock_gettime(t, ids[i], &before[i]), "%s", names[i]);
		CHECK(before[i] >= raised[i],
		      "%s: tsc_clock_gettime() %lld ns below a mark readers raised 1 ms above "
		      "the mapping", names[i], (long long)(raised[i] - before[i]));
	}
	pthread_mutex_lock(&t->lock);
	for (c = 0; c < 2; c++)
		for (i = W_REAL; i < W_NR; i += W_TAI - W_REAL) {
			t->wall.c[c].m[i].prev.b -= SEC;
			t->wall.c[c].m[i].cur.b -= SEC;
			t->wall.c[c].m[i].prev.back += SEC;
			t->wall.c[c].m[i].cur.back += SEC;
		}
	pthread_mutex_unlock(&t->lock);
	for (i = W_REAL; i < W_NR; i += W_TAI - W_REAL) {
		int64_t d;

		CHECK(!tsc_clock_gettime(t, ids[i], &after[i]), "%s", names[i]);
		d = (int64_t)(after[i] - before[i]);
		CHECK(d < -SEC + 50000000 && d > -SEC - 1000000,
		      "%s: %lld ns after a 1 s step back of the kernel's", names[i], (long long)d);
	}
	tsc_close(t);
}

/* The kernel sets REALTIME and TAI back an hour, and the next anchor
 * starts the mapping anew (library ns went back, as the writer's clock
 * says): REALTIME and TAI from tsc_clock_gettime() follow the kernel's
 * step, MONOTONIC holds. */
static uint64_t far_behind(struct tsc *t)
{
	return t->wall_T > 10 * SEC ? t->wall_T - 10 * SEC : 0;
}

static void restart_after_step(void)
{
	static const uint64_t hour = 3600 * SEC;
	uint64_t before[W_NR], after[W_NR];
	struct wall_sample x = { .freq_ok = false };
	struct tsc_info i0, i1;
	struct tsc *t;
	int i;

	TSC_OPTS(o, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "open");
	if (!t)
		return;
	tsc_reanchor(t);
	tsc_get_info(t, &i0, sizeof(i0));
	for (i = 0; i < W_NR; i++)
		CHECK(!tsc_clock_gettime(t, ids[i], &before[i]), "%s", names[i]);
	for (i = 0; i < W_NR; i++) {
		x.l[i] = tsc_now_ns(t);
		x.c[i] = t_clock(ids[i]) - (i == W_REAL || i == W_TAI ? hour : 0);
		x.w[i] = 100;
	}
	pthread_mutex_lock(&t->lock);
	t->wall_now = far_behind;
	tsc__wall_anchor(t, &x);
	t->wall_now = tsc__lib_now;
	pthread_mutex_unlock(&t->lock);
	tsc_get_info(t, &i1, sizeof(i1));
	CHECK(i1.clock_steps > i0.clock_steps, "the mapping did not start anew");
	for (i = 0; i < W_NR; i++) {
		int64_t d;

		CHECK(!tsc_clock_gettime(t, ids[i], &after[i]), "%s", names[i]);
		d = (int64_t)(after[i] - before[i]);
		if (i == W_REAL || i == W_TAI)
			CHECK(d < -(int64_t)hour + 50000000 && d > -(int64_t)hour - 1000000,
			      "mapping started anew after the kernel set %s back 1 h: it moved "
			      "%lld ns", names[i], (long long)d);
		else
			CHECK(d >= 0, "mapping started anew: %s went back %lld ns", names[i],
			      (long long)-d);
	}
	tsc_close(t);
}

int main(void)
{
	size_t s;

	for (s = 0; s < ARRAY_SIZE(all); s++)
		run(&all[s]);
	went_back();
	readers_hold();
	restart_after_step();
	t_fact("scenarios", "%zu", s);
	t_fact("backs", "%d", total_backs);
	DONE();
}
