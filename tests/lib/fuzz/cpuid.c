// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libFuzzer: the dump's tsckit/cpuid parser. */
#include "../../../lib/src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cpuid_set s;

	if (!tsc__parse_cpuid((const char *)data, size, &s) && (s.n < 1 || s.n > CPUID_MAX))
		__builtin_trap();
	tsc__cpuid_get(&s, 0x80000007, 0);
	return 0;
}
