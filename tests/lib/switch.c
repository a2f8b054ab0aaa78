// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * Live re-decision on a sysroot whose files are rewritten while reader
 * threads take timestamps: the TSC is dropped and taken back, the factors
 * change, and no reader ever sees time go back; steps are reported.
 * Then the same with the watcher thread doing the re-reading, and the
 * policy switches with the library's scale drifting from the raw clock.
 */
#include <pthread.h>
#include <unistd.h>

#include "t.h"

#define TSC0 "sys/devices/system/tsc/tsc0/"
#define CS "sys/devices/system/clocksource/clocksource0/current_clocksource"
#define AVAIL "sys/devices/system/clocksource/clocksource0/available_clocksource"

static struct tsc *h;
static int stop;
static uint64_t backward, reads;

static void *reader(void *arg)
{
	uint64_t prev = 0, now, back = 0, n = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		now = tsc_now_ns(h);
		if (now < prev) {
			back++;
			printf("# went back %llu ns\n", (unsigned long long)(prev - now));
		}
		prev = now;
		n++;
	}
	__atomic_fetch_add(&backward, back, __ATOMIC_RELAXED);
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

static void step(const char *what, const char *path, const char *val, bool in_use)
{
	struct tsc_info i;

	t_sleep_ms(30);
	t_write(getenv("ROOT"), path, val);
	CHECK(tsc_process_events(h) == 1, "%s: no change seen", what);
	CHECK(tsc_in_use(h) == in_use, "%s: TSC in use %d, want %d", what, tsc_in_use(h), in_use);
	tsc_get_info(h, &i, sizeof(i));
	printf("# %s: switches %llu, last step %lld ns, scale - raw %lld ns\n", what,
	       (unsigned long long)i.switches, (long long)i.last_step_ns,
	       (long long)i.scale_offset_ns);
	CHECK(llabs(i.last_step_ns) < 1000000, "%s: step %lld ns", what, (long long)i.last_step_ns);
}

/* kernel.tsc_user turns 1 (RDTSC traps, still runs) or 2 (RDTSC faults)
 * 800 ms after an anchor, on a sysroot whose factors make the library's
 * scale run 500 ppm fast against CLOCK_MONOTONIC_RAW: the fallback must
 * continue from the TSC's reading, not from the raw clock and the offset
 * measured at the anchor, 400 us behind. */
static void drift_switch(const char *root, uint64_t khz, const char *policy)
{
	uint64_t back0 = backward;
	struct tsc_info i;
	pthread_t th[2];
	char b[8];
	int k;

	t_mkroot(root, khz);
	t_set_khz(root, khz - khz / 2000);
	t_write(root, "proc/sys/kernel/tsc_user", "0\n");
	stop = 0;
	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	h = tsc_open(&o);
	CHECK(h && tsc_in_use(h), "tsc_user=%s: the TSC is not in use before", policy);
	if (!h || !tsc_in_use(h)) {
		tsc_close(h);
		return;
	}
	for (k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, reader, NULL);
	t_sleep_ms(800);
	snprintf(b, sizeof(b), "%s\n", policy);
	t_write(root, "proc/sys/kernel/tsc_user", b);
	CHECK(tsc_process_events(h) == 1, "tsc_user=%s: no change seen", policy);
	t_sleep_ms(30);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	tsc_get_info(h, &i, sizeof(i));
	CHECK(!tsc_in_use(h), "tsc_user=%s: the TSC is still in use", policy);
	CHECK(backward == back0, "tsc_user=%s: %llu reads went back", policy,
	      (unsigned long long)(backward - back0));
	CHECK(i.last_step_ns >= 0 && i.last_step_ns < 2000000,
	      "tsc_user=%s: step %lld ns", policy, (long long)i.last_step_ns);
	printf("# figure: tsc_user=%s with the scale 500 ppm fast: step %+lld ns\n",
	       policy, (long long)i.last_step_ns);
	tsc_close(h);
}

int main(void)
{
	char root[] = "/tmp/tsc-switch-XXXXXX", b[64];
	pthread_t th[2];
	struct tsc_info i;
	uint64_t khz, mult;
	int k;

	khz = t_host_khz();	/* the sysroot's rate is this TSC's */
	if (!mkdtemp(root))
		SKIP("mkdtemp: %s", strerror(errno));
	setenv("ROOT", root, 1);
	t_mkroot(root, khz);

	TSC_OPTS(o, .sysroot = root, .no_watcher = true);
	h = tsc_open(&o);
	CHECK(h && tsc_in_use(h), "sysroot with a trusted TSC not used");
	if (!h)
		DONE();
	for (k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, reader, NULL);
	step("tsc_stable=0", TSC0 "tsc_stable", "0\n", false);
	step("tsc_stable=1", TSC0 "tsc_stable", "1\n", true);
	step("clocksource hpet", CS, "hpet\n", false);
	step("clocksource tsc", CS, "tsc\n", true);
	mult = t_mult24(khz);
	snprintf(b, sizeof(b), "%llu\n", (unsigned long long)(mult + mult / 5000));
	step("tsc_mult +200 ppm", TSC0 "tsc_mult", b, true);
	step("tsc not available", AVAIL, "hpet acpi_pm\n", false);
	step("tsc available", AVAIL, "tsc hpet acpi_pm\n", true);
	step("tsc_stable garbage", TSC0 "tsc_stable", "\377\n", false);
	t_sleep_ms(30);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	tsc_get_info(h, &i, sizeof(i));
	CHECK(i.switches == 8, "switches %llu, want 8", (unsigned long long)i.switches);
	CHECK(backward == 0, "%llu reads went back", (unsigned long long)backward);
	CHECK(reads > 1000, "only %llu reads", (unsigned long long)reads);
	printf("# figure: %llu reads across 8 switches, %llu went back\n",
	       (unsigned long long)reads, (unsigned long long)backward);
	tsc_close(h);

	/* The watcher thread notices on its own (1 s timer: regular files
	 * do not wake poll). */
	t_mkroot(root, khz);
	TSC_OPTS(w, .sysroot = root);
	h = tsc_open(&w);
	CHECK(h && tsc_in_use(h), "watcher handle");
	if (h) {
		t_write(root, TSC0 "tsc_stable", "0\n");
		for (k = 0; k < 30 && tsc_in_use(h); k++)
			t_sleep_ms(100);
		CHECK(!tsc_in_use(h), "watcher did not switch within 3 s");
		printf("# watcher switched after %d ms\n", k * 100);
		tsc_close(h);
	}
	drift_switch(root, khz, "1");
	drift_switch(root, khz, "2");
	t_rmroot(root);
	DONE();
}
