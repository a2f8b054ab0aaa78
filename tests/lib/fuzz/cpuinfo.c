// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libFuzzer: the /proc/cpuinfo flags parser. */
#include "../../../lib/src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags;

	tsc__parse_cpuinfo((const char *)data, size, &flags);
	return 0;
}
