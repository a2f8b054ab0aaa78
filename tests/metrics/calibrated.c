// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * calibrated SYSROOT: print_prometheus() of a dump whose factors come from
 * a calibration made here and now (force_calibrate), taken to the TSC by
 * tsc_process_events() as tscinfo never waits to: its reasons then carry
 * this run's measurement (kHz, factors, error bound).  The texts go to
 * stderr, so that tests/metrics/check can see that two runs' texts differ
 * while their tsc_reason_info series must not.  Exit 1 if the calibration
 * did not take over within 5 s.
 */
#include <poll.h>
#include <string.h>

#include "tscinfo.h"

int main(int argc, char **argv)
{
	struct cfg cfg = { .format = FMT_PROMETHEUS };
	struct report r = { .cfg = &cfg };
	struct pollfd p = { .events = POLLIN };
	struct tsc *t;
	int i, n;

	if (argc != 2)
		return 2;
	TSC_OPTS(o, .sysroot = argv[1], .force_calibrate = true, .no_watcher = true);
	t = tsc_open(&o);
	if (!t)
		return 1;
	p.fd = tsc_fd(t);
	for (i = 0; i < 500; i++) {
		tsc_get_info(t, &r.info, sizeof(r.info));
		if (r.info.usable && r.info.src == TSC_SRC_CALIBRATION)
			break;
		poll(&p, 1, 10);
		tsc_process_events(t);
	}
	n = tsc_reasons(t, r.reasons, 64);
	r.nreasons = n < 0 ? 0 : n > 64 ? 64 : n;
	for (n = 0; n < r.nreasons; n++)
		fprintf(stderr, "%s\n", r.reasons[n].text);
	print_prometheus(stdout, &r);
	tsc_close(t);
	return r.info.src == TSC_SRC_CALIBRATION ? 0 : 1;
}
