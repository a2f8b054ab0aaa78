// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Options and argument checking: sizes, unknown tails, bad values, errno. */
#include <sched.h>

#include "t.h"

int main(void)
{
	unsigned char big[sizeof(struct tsc_opts) + 16];
	struct tsc_opts *o = (struct tsc_opts *)big;
	struct tsc_xcpu_result x;
	struct tsc_info info;
	struct tsc *t;
	uint64_t v;

	memset(big, 0, sizeof(big));
	o->sz = 0;
	errno = 0;
	CHECK(!tsc_open(o) && errno == EINVAL, "sz 0 accepted");

	o->sz = sizeof(big);	/* a newer caller, zero tail: fine */
	o->no_watcher = true;
	o->force_fallback = true;
	t = tsc_open(o);
	CHECK(t, "zero tail rejected: %s", strerror(errno));
	tsc_close(t);

	big[sizeof(struct tsc_opts) + 3] = 1;	/* a newer caller using a new field */
	errno = 0;
	CHECK(!tsc_open(o) && errno == EINVAL, "non-zero tail accepted");
	big[sizeof(struct tsc_opts) + 3] = 0;

	o->sz = offsetof(struct tsc_opts, force_calibrate);	/* an older caller */
	t = tsc_open(o);
	CHECK(t, "older, shorter opts rejected");
	tsc_close(t);

	TSC_OPTS(bad, .fallback = 7);
	errno = 0;
	CHECK(!tsc_open(&bad) && errno == EINVAL, "fallback 7 accepted");
	TSC_OPTS(empty, .sysroot = "");
	errno = 0;
	CHECK(!tsc_open(&empty) && errno == EINVAL, "empty sysroot accepted");
	char set[128] = { 1 };
	TSC_OPTS(w1, .watcher_cpus = set);
	CHECK(!tsc_open(&w1) && errno == EINVAL, "watcher_cpus without a size accepted");
	TSC_OPTS(w2, .watcher_cpus_size = sizeof(set));
	CHECK(!tsc_open(&w2) && errno == EINVAL, "a size without watcher_cpus accepted");
	TSC_OPTS(w3, .watcher_policy = 7, .watcher_priority = 1);
	CHECK(!tsc_open(&w3) && errno == EINVAL, "policy 7 accepted");
	TSC_OPTS(w4, .watcher_policy = SCHED_FIFO, .watcher_priority = 0);
	CHECK(!tsc_open(&w4) && errno == EINVAL, "SCHED_FIFO priority 0 accepted");
	TSC_OPTS(w5, .watcher_priority = 3);
	CHECK(!tsc_open(&w5) && errno == EINVAL, "a priority without a policy accepted");

	TSC_OPTS(ok, .no_watcher = true, .force_fallback = true);
	CHECK(ok.sz == sizeof(struct tsc_opts) && !ok.sysroot && !ok.force_calibrate,
	      "TSC_OPTS does not zero-fill");
	t = tsc_open(&ok);
	CHECK(t, "open");
	if (!t)
		DONE();
	errno = 0;
	CHECK(tsc_get_info(NULL, &info, sizeof(info)) == -EINVAL && errno == EINVAL, "info NULL");
	CHECK(tsc_get_info(t, &info, 4) == 4, "short info: not 4 bytes filled");
	CHECK(tsc_get_info(t, &info, sizeof(info)) == (int)sizeof(info), "full info size");
	char large[sizeof(info) + 64];
	memset(large, 0x55, sizeof(large));
	CHECK(tsc_get_info(t, (struct tsc_info *)large, sizeof(large)) == (int)sizeof(info) &&
	      large[sizeof(large) - 1] == 0, "a larger struct: filled %d, tail not zeroed",
	      tsc_get_info(t, (struct tsc_info *)large, sizeof(large)));
	CHECK(tsc_ns_to_clock(t, 1, CLOCK_PROCESS_CPUTIME_ID, &v) == -EINVAL && errno == EINVAL,
	      "bad clock accepted");
	CHECK(tsc_ns_to_clock(t, 1, CLOCK_MONOTONIC, NULL) == -EINVAL, "NULL out accepted");
	CHECK(tsc_reasons(t, NULL, 0) > 0, "reason count");
	CHECK(tsc_reasons(t, NULL, 3) == -EINVAL, "NULL reasons with n accepted");
	CHECK(tsc_xcpu_check(t, 0, &x, sizeof(x)) == -EINVAL, "0 ms accepted");
	CHECK(tsc_process_events(NULL) == -EINVAL && tsc_fd(NULL) == -EINVAL, "NULL handle");
	CHECK(!strcmp(tsc_src_name(99), "unknown") && !strcmp(tsc_src_name(TSC_SRC_VDSO), "vdso"),
	      "src names");
	CHECK(!strcmp(tsc_version(), TSC_VERSION), "version %s vs header %s", tsc_version(),
	      TSC_VERSION);
	CHECK(tsc_fd(t) >= 0, "no fd");
	tsc_close(t);
	tsc_close(NULL);
	DONE();
}
