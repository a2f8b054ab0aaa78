// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The peers a user would pick instead of libtsc, measured in the same
 * run: Abseil's GetCurrentTimeNanos() (CLOCK_REALTIME from its own
 * cycle-clock calibration).  peer_absl.cc where tscbench is built with
 * libabsl-dev, else peer_none.c, which says why not. */
#ifndef TSCBENCH_PEERS_H
#define TSCBENCH_PEERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when built with Abseil, else why it is not there. */
const char *peer_absl_missing(void);
/* Now, ns since the epoch, as absl::GetCurrentTimeNanos(); 0 without. */
int64_t peer_absl_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
