// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Abseil's wall clock, for tscbench's C code (peers.h). */
#include <absl/time/clock.h>

#include "peers.h"

const char *peer_absl_missing(void)
{
	return nullptr;
}

int64_t peer_absl_now_ns(void)
{
	return absl::GetCurrentTimeNanos();
}
