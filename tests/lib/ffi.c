// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The shared library: soname, version nodes, and the inline fast path as
 * real symbols (for bindings) agreeing with the inline functions; a
 * dlclose() does not unmap it while tsc_default()'s watcher runs it.
 * tsc_reasons@LIBTSC_0.2, which programs built before 0.5.0 call, fills
 * their shorter element and not a byte past it; tsc_clock_gettime@LIBTSC_0.2,
 * which programs built before 0.7 call, is still ordered between threads. */
#include <dlfcn.h>
#include <pthread.h>

#include "t.h"

/* struct tsc_reason of libtsc 0.2 to 0.4. */
struct reason_0_4 {
	enum tsc_reason_kind kind;
	char text[TSC_REASON_LEN];
};

static void old_reasons(void *h, struct tsc *t)
{
	int (*old)(struct tsc *, struct reason_0_4 *, size_t);
	struct tsc_reason now[8];
	unsigned char buf[3 * sizeof(struct reason_0_4) + 64];
	struct reason_0_4 *r = (void *)buf;
	int n, m, i;
	size_t k;

	old = (void *)dlvsym(h, "tsc_reasons", "LIBTSC_0.2");
	CHECK(old, "tsc_reasons@LIBTSC_0.2 missing: programs built before 0.5.0 fail");
	CHECK(dlvsym(h, "tsc_get_reasons", "LIBTSC_0.5"), "tsc_get_reasons@LIBTSC_0.5 missing");
	CHECK(dlsym(h, "tsc_reasons") == (void *)old,
	      "tsc_reasons' default version is not LIBTSC_0.2: a stale 0.4 header would get another element");
	if (!old)
		return;
	n = tsc_reasons(t, now, 8);
	memset(buf, 0xa5, sizeof(buf));
	m = old(t, r, 3);
	CHECK(m == n && n >= 3, "old call: %d reasons, new call %d", m, n);
	for (i = 0; i < 3 && i < n; i++)
		CHECK(r[i].kind == now[i].kind && !strcmp(r[i].text, now[i].text),
		      "old element %d is not reason %d: '%s'", i, i, r[i].text);
	for (k = 3 * sizeof(*r); k < sizeof(buf); k++)
		if (buf[k] != 0xa5)
			break;
	CHECK(k == sizeof(buf), "the old call wrote byte %zu, past its 3 elements of %zu",
	      k, sizeof(*r));
	errno = 0;
	CHECK(tsc_get_reasons(t, now, 1, sizeof(struct reason_0_4) - 1) < 0 && errno == EINVAL,
	      "an element smaller than 0.4's accepted");
	errno = 0;
	CHECK(tsc_get_reasons(t, now, 1, sizeof(struct tsc_reason) - 1) < 0 && errno == EINVAL,
	      "an element that cuts code short accepted");
}

/* Threads reading one clock and publishing the highest reading: how
 * many readings were below one another thread had published before. */
typedef int (*gettime_fn)(struct tsc *, clockid_t, uint64_t *);
static struct {
	gettime_fn fn;
	struct tsc *t;
	uint64_t last;
	unsigned long long below, reads;
	int stop;
} race;

static void *race_reader(void *arg)
{
	unsigned long long below = 0, reads = 0;
	uint64_t v, seen, cur;

	(void)arg;
	while (!__atomic_load_n(&race.stop, __ATOMIC_RELAXED)) {
		seen = __atomic_load_n(&race.last, __ATOMIC_ACQUIRE);
		if (race.fn(race.t, CLOCK_MONOTONIC, &v))
			continue;
		below += v < seen;
		reads++;
		cur = __atomic_load_n(&race.last, __ATOMIC_RELAXED);
		while (cur < v && !__atomic_compare_exchange_n(&race.last, &cur, v, true,
							       __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	__atomic_add_fetch(&race.below, below, __ATOMIC_RELAXED);
	__atomic_add_fetch(&race.reads, reads, __ATOMIC_RELAXED);
	return NULL;
}

static unsigned long long race_run(gettime_fn fn, struct tsc *t)
{
	pthread_t th[2];
	int k;

	race.fn = fn;
	race.t = t;
	race.last = race.below = race.reads = 0;
	race.stop = 0;
	for (k = 0; k < 2; k++)
		CHECK(!pthread_create(&th[k], NULL, race_reader, NULL), "pthread_create");
	t_sleep_ms(1000);
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	return race.below;
}

/* Programs built against 0.6 or older call tsc_clock_gettime@LIBTSC_0.2,
 * which was ordered between threads: it still is (0.7's default is
 * not: its count is a figure). */
static void old_gettime(void *h, struct tsc *t)
{
	gettime_fn old = (gettime_fn)dlvsym(h, "tsc_clock_gettime", "LIBTSC_0.2");
	gettime_fn cur = (gettime_fn)dlvsym(h, "tsc_clock_gettime", "LIBTSC_0.7");
	unsigned long long n_old, r_old, n_cur;

	if (!old || !cur)
		return;
	n_old = race_run(old, t);
	r_old = race.reads;
	n_cur = race_run(cur, t);
	printf("# figure: readings below another thread's earlier one in 1 s on 2 threads: "
	       "@LIBTSC_0.2 %llu of %llu, @@LIBTSC_0.7 (unordered) %llu of %llu\n", n_old, r_old,
	       n_cur, race.reads);
	CHECK(r_old > 10000 && n_old == 0, "tsc_clock_gettime@LIBTSC_0.2: %llu of %llu readings "
	      "below another thread's earlier one (programs built before 0.7 were promised none)",
	      n_old, r_old);
}

int main(void)
{
	char path[4096], root[64] = "";
	void *h;
	struct tsc *(*open_)(const struct tsc_opts *);
	void (*close_)(struct tsc *);
	struct tsc *(*default_)(void);
	uint64_t (*now)(const struct tsc *), (*now_o)(const struct tsc *);
	uint64_t (*d2ns)(const struct tsc *, uint64_t);
	bool (*in_use)(const struct tsc *);
	uint64_t (*rd)(void);
	struct tsc *t;
	uint64_t a, b, c;
	const char *names[] = { "tsc_rdtsc", "tsc_rdtsc_ordered", "tsc_in_use", "tsc_delta_to_ns",
				"tsc_ticks_to_ns", "tsc_now_ns", "tsc_now_ns_ordered", "tsc_open",
				"tsc_xcpu_check", "tsc_version" };
	size_t k;

	snprintf(path, sizeof(path), "%s/libtsc.so.0", t_env("TSC_TEST_LIBDIR"));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h, "dlopen %s: %s", path, dlerror());
	if (!h)
		DONE();
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		CHECK(dlvsym(h, names[k], "LIBTSC_0.2"), "%s@LIBTSC_0.2 missing", names[k]);
	CHECK(dlvsym(h, "tsc_default", "LIBTSC_0.3") && !dlvsym(h, "tsc_default", "LIBTSC_0.2"),
	      "tsc_default not (only) in LIBTSC_0.3");
	/* 0.7's, for bindings: the wall reads' slow path and the new reads. */
	for (k = 0; k < 3; k++) {
		static const char *const v7[] = { "__tsc_wall", "tsc_clock_gettime_ordered",
						  "tsc_has_factors" };

		CHECK(dlvsym(h, v7[k], "LIBTSC_0.7") && !dlvsym(h, v7[k], "LIBTSC_0.6"),
		      "%s not (only) in LIBTSC_0.7", v7[k]);
	}
	/* tsc_clock_gettime: 0.7's by default, and 0.2's (ordered, as
	 * programs built before 0.7 were promised) apart. */
	CHECK(dlvsym(h, "tsc_clock_gettime", "LIBTSC_0.7") == dlsym(h, "tsc_clock_gettime") &&
	      dlvsym(h, "tsc_clock_gettime", "LIBTSC_0.2") &&
	      dlvsym(h, "tsc_clock_gettime", "LIBTSC_0.2") != dlsym(h, "tsc_clock_gettime"),
	      "tsc_clock_gettime: want @@LIBTSC_0.7 the default and @LIBTSC_0.2 another");
	CHECK(!dlsym(h, "tsc__decide") && !dlsym(h, "tsc__parse_u64"), "internals exported");
	open_ = (void *)dlsym(h, "tsc_open");
	close_ = (void *)dlsym(h, "tsc_close");
	now = (void *)dlsym(h, "tsc_now_ns");
	now_o = (void *)dlsym(h, "tsc_now_ns_ordered");
	d2ns = (void *)dlsym(h, "tsc_delta_to_ns");
	in_use = (void *)dlsym(h, "tsc_in_use");
	rd = (void *)dlsym(h, "tsc_rdtsc");
	TSC_OPTS(o, .no_watcher = true);
	t = open_(&o);
	CHECK(t, "open through the .so");
	if (!t)
		DONE();
	if (!in_use(t)) {	/* the TSC path all the same, on a made-up kernel */
		close_(t);
		strcpy(root, "/tmp/tsc-ffi-XXXXXX");
		CHECK(mkdtemp(root), "mkdtemp");
		t_mkroot(root, t_host_khz());
		TSC_OPTS(so, .sysroot = root, .no_watcher = true);
		t = open_(&so);
		CHECK(t && in_use(t), "sysroot handle through the .so not in use");
		if (!t)
			DONE();
	}
	a = now(t);
	b = tsc_now_ns(t);	/* the inline one, same handle */
	c = now_o(t);
	CHECK(a <= b && b <= c, "symbol and inline disagree: %llu %llu %llu",
	      (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
	CHECK(in_use(t) == tsc_in_use(t), "tsc_in_use");
	CHECK(d2ns(t, 1000000) == tsc_delta_to_ns(t, 1000000), "tsc_delta_to_ns");
	CHECK(rd() != 0, "tsc_rdtsc");
	/* exact for a long delta: one day of ticks at the handle's factor */
	if (in_use(t)) {
		struct tsc_info i;
		uint64_t day;

		tsc_get_info(t, &i, sizeof(i));
		day = i.khz * 1000 * 86400;
		c = tsc_delta_to_ns(t, day);
		CHECK(c > 86399000000000ull && c < 86401000000000ull, "a day is %llu ns",
		      (unsigned long long)c);
		c = tsc_delta_to_ns(t, day * 365 * 10);
		CHECK(c / 1000000000ull / 86400 >= 3649 && c / 1000000000ull / 86400 <= 3651,
		      "ten years is %llu ns", (unsigned long long)c);
	}
	CHECK(in_use(t), "the TSC path was not tested");
	old_reasons(h, t);
	old_gettime(h, t);
	close_(t);
	/* The .so's default handle: its watcher wakes within 1 s, in the
	 * library's code, which must still be mapped after dlclose(). */
	default_ = (void *)dlsym(h, "tsc_default");
	CHECK(default_ && default_(), "tsc_default() through the .so");
	dlclose(h);
	CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD), "dlclose() unloaded libtsc.so (not -z nodelete)");
	fflush(stdout);
	t_sleep_ms(1500);
	t_rmroot(root);
	DONE();
}
