// SPDX-License-Identifier: MIT OR LGPL-2.1
/* A small libtsc program, built by install.sh against the installed
 * library and by header.sh as strict C11: options macro, both reads. */
#include <stdio.h>
#include <tsc.h>

int main(void)
{
	TSC_OPTS(o, .no_watcher = true);
	struct tsc *t = tsc_open(&o);
	uint64_t a, b;

	if (!t)
		return 1;
	a = tsc_now_ns(t);
	b = tsc_now_ns_ordered(t);
	printf("libtsc %s: %s\n", tsc_version(), tsc_in_use(t) ? "TSC" : "fallback");
	tsc_close(t);
	return b < a;
}
