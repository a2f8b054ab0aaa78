// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libFuzzer: the sysfs number and clocksource name parsers. */
#include "../../../lib/src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[32];
	uint64_t v;

	if (!tsc__parse_u64((const char *)data, size, &v) && (size < 2 || data[size - 1] != '\n'))
		__builtin_trap();	/* accepted without the newline */
	if (!tsc__parse_name((const char *)data, size, name, sizeof(name)) &&
	    strlen(name) != size - 1)
		__builtin_trap();
	return 0;
}
