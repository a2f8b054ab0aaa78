// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The header's inline fast path as real symbols, for bindings that
 * cannot use C inline functions (liburing's ffi.c model). */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#define TSCINLINE __attribute__((visibility("default")))
#include <tsc.h>
