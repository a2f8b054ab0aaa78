// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Calibration start-up.  With a watcher (the default), a handle that must
 * calibrate does not do it in tsc_open(): the open returns at once, reads
 * come from the fallback clock (or the kernel's factors, with
 * force_calibrate where the kernel has some) while the watcher measures,
 * the calibrated TSC takes over at 1 ppm without a step (the TSC line
 * meets the fallback clock: last_step_ns then is how far ahead of it),
 * and the bound is refined once a second after that, each refinement a
 * slew.  This opens such a handle
 * (force_calibrate), times tsc_open(), runs a reader thread of
 * tsc_now_ns_ordered() that counts every step back, and polls
 * tsc_get_info() every millisecond until the calibrated TSC is in use
 * (giving up after 3 s), then every 10 ms until the follow time after the
 * open.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "tscbench.h"

struct reader {
	struct tsc *t;
	int stop;
	uint64_t reads, backward, worst_ns;
};

static void *reader(void *arg)
{
	struct reader *r = arg;
	uint64_t prev = tsc_now_ns_ordered(r->t), x, n = 1, back = 0, worst = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		x = tsc_now_ns_ordered(r->t);
		n++;
		if (x < prev) {
			back++;
			if (prev - x > worst)
				worst = prev - x;
		}
		prev = x;
	}
	r->reads = n;
	r->backward = back;
	r->worst_ns = worst;
	return NULL;
}

/* Does the calibrated TSC have a chance here?  Not when RDTSC may not run,
 * nor when libtsc does not use the TSC with default options (the kernel
 * does not trust it, ...): force_calibrate gives factors, not trust. */
static bool applicable(const struct env *e, char *why, size_t len)
{
	struct tsc_reason r[64];
	int i, n;

	if (!e->rdtsc_ok) {
		i = method_index("rdtsc");
		snprintf(why, len, "RDTSC may not be executed here: %s",
			 i >= 0 && *methods[i].why ? methods[i].why : "unknown reason");
		return false;
	}
	if (e->info.usable || tsc_in_use(e->t))
		return true;
	n = tsc_reasons(e->t, r, 64);
	for (i = 0; i < n && i < 64; i++)
		if (r[i].kind == TSC_REASON_BLOCK)
			break;
	snprintf(why, len, "libtsc does not use the TSC here with default options: %s",
		 i < n && i < 64 ? r[i].text : "no reason given");
	return false;
}

static void add_point(struct calib_startup *c, double ms, const struct tsc_info *i)
{
	struct calib_point *p = c->nhist ? &c->hist[c->nhist - 1] : NULL;

	if (p && p->usable == i->usable && p->src == i->src && p->err_ppb == i->err_ppb)
		return;
	if (c->nhist < CALIB_HISTORY)
		p = &c->hist[c->nhist++];
	/* else: full, the last point is the latest change */
	p->ms = ms;
	p->usable = i->usable;
	p->src = i->src;
	p->err_ppb = i->err_ppb;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000),
			       .tv_nsec = (long)(ns % 1000000000) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

void calib_run(const struct cfg *cfg, const struct env *e, struct calib_startup *c)
{
	const uint64_t give_up = CALIB_GIVE_UP_MS * 1000000ull;
	struct reader rd = { 0 };
	uint64_t t0, t1, now, follow;
	struct tsc_info i;
	pthread_t th;
	int err;

	memset(c, 0, sizeof(*c));
	c->ran = cfg->calib_follow > 0;
	if (!c->ran)
		return;
	c->follow_s = cfg->calib_follow;
	follow = (uint64_t)(cfg->calib_follow * 1e9);
	if (!applicable(e, c->na, sizeof(c->na)))
		return;
	progress("calibration start-up: force_calibrate with a watcher, %g s", c->follow_s);

	TSC_OPTS(o, .force_calibrate = true);
	t0 = now_ns(CLOCK_MONOTONIC_RAW);
	rd.t = tsc_open(&o);
	t1 = now_ns(CLOCK_MONOTONIC_RAW);
	if (!rd.t) {
		c->err = errno;
		return;
	}
	tsc_get_info(rd.t, &i, sizeof(i));
	c->open_ms = (double)(t1 - t0) / 1e6;
	c->open_usable = i.usable;
	c->open_src = i.src;
	c->open_err_ppb = i.err_ppb;
	add_point(c, c->open_ms, &i);
	err = pthread_create(&th, NULL, reader, &rd);
	if (err) {
		c->err = err;
		tsc_close(rd.t);
		return;
	}

	for (;;) {
		tsc_get_info(rd.t, &i, sizeof(i));
		now = now_ns(CLOCK_MONOTONIC_RAW) - t0;
		add_point(c, (double)now / 1e6, &i);
		if (!c->took && i.usable && i.src == TSC_SRC_CALIBRATION) {
			c->took = true;
			c->use_ms = (double)now / 1e6;
			c->use_err_ppb = i.err_ppb;
			c->khz = i.khz;
			c->switched = i.switches > 0;
			c->takeover_step_ns = c->switched ? i.last_step_ns : 0;
			progress("calibration start-up: TSC in use after %.1f ms, bound %.3f ppm",
				 c->use_ms, i.err_ppb / 1000.0);
		}
		if (now >= follow && (c->took || now >= give_up))
			break;
		if (!c->took && now < give_up)
			sleep_ns(1000000);
		else
			sleep_ns(follow > now && follow - now < 10000000 ? follow - now : 10000000);
	}
	__atomic_store_n(&rd.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	tsc_get_info(rd.t, &i, sizeof(i));
	c->end_s = (double)(now_ns(CLOCK_MONOTONIC_RAW) - t0) / 1e9;
	c->end_usable = i.usable;
	c->end_src = i.src;
	c->end_err_ppb = i.err_ppb;
	c->refinements = i.refinements;
	c->switches = i.switches;
	c->last_step_ns = i.last_step_ns;
	c->reads = rd.reads;
	c->backward = rd.backward;
	c->worst_back_ns = rd.worst_ns;
	tsc_close(rd.t);
}
