// SPDX-License-Identifier: MIT OR LGPL-2.1
/* tscbench built without Abseil (ABSL=no, or no libabsl-dev). */
#include <stddef.h>

#include "peers.h"

const char *peer_absl_missing(void)
{
	return "tscbench was built without Abseil (install libabsl-dev and rebuild)";
}

int64_t peer_absl_now_ns(void)
{
	return 0;
}
