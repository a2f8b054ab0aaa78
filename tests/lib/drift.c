// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Library ns against CLOCK_MONOTONIC_RAW over 400 ms: the rate error of
 * the factors in use (goal 0.1 ppm with kernel factors; 50 ppm asserted).
 * Where the kernel does not use the TSC, the factors are a calibration's,
 * given to the library by a made-up sysroot. */
#include "t.h"

int main(void)
{
	uint64_t l0, r0, l1, r1;
	struct tsc_info i;
	double ppm;
	struct tsc *t;
	char root[64];

	t = t_open_tsc(root, false);
	tsc_get_info(t, &i, sizeof(i));
	t_lib_raw(t, &l0, &r0);
	CHECK(llabs((long long)(l0 - r0)) < 20000, "scale off CLOCK_MONOTONIC_RAW by %lld ns at open",
	      (long long)(l0 - r0));
	t_sleep_ms(400);
	t_lib_raw(t, &l1, &r1);
	ppm = ((double)(l1 - l0) - (double)(r1 - r0)) / (double)(r1 - r0) * 1e6;
	printf("# figure: drift %.3f ppm over %.0f ms (factors from %s)\n", ppm,
	       (r1 - r0) / 1e6, tsc_src_name(i.src));
	CHECK(ppm < 50 && ppm > -50, "drift %.3f ppm", ppm);
	tsc_close(t);
	t_rmroot(root);
	DONE();
}
