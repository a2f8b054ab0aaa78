// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libFuzzer: tscinfo's option parser; the input is NUL-separated argv. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../tools/tscinfo/args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[33], err[256];
	struct cfg cfg;
	int argc = 1;
	size_t i, start = 0;

	memcpy(buf, data, size);
	buf[size] = 0;
	argv[0] = "tscinfo";
	for (i = 0; i <= size && argc < 32; i++)
		if (buf[i] == 0) {
			argv[argc++] = buf + start;
			start = i + 1;
		}
	argv[argc] = NULL;
	if (!parse_args(argc, argv, &cfg, err, sizeof(err)) && cfg.action == ACT_RUN &&
	    cfg.watch && cfg.cross_cpu)
		__builtin_trap();
	free(buf);
	return 0;
}
