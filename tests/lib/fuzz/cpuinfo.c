// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libFuzzer: the /proc/cpuinfo flags parser, and the word lists of
 * available_clocksource and /proc/cmdline. */
#include <string.h>

#include "../../../lib/src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmdline_facts c;
	unsigned int flags;
	bool has;
	int n, i;

	tsc__parse_cpuinfo((const char *)data, size, &flags);
	tsc__parse_has_name((const char *)data, size, "tsc", &has);
	n = tsc__parse_cmdline((const char *)data, size, &c);
	for (i = 0; i < n; i++)	/* every kept parameter is a C string */
		if (strlen(c.param[i]) >= sizeof(c.param[i]) ||
		    tsc__cmdline_meaning(c.param[i]) == NULL)
			__builtin_trap();
	return 0;
}
