// SPDX-License-Identifier: MIT OR LGPL-2.1
/* libFuzzer: the vDSO ELF parser on arbitrary bytes.  The image is copied
 * to an exactly sized, 8-aligned buffer so ASan sees every overread. */
#include <stdlib.h>

#include "../../../lib/src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vdso_syms s;
	void *img = malloc(size ? size : 1);

	memcpy(img, data, size);
	if (!tsc__vdso_parse(img, size, &s) &&
	    (s.tsc_raw >= size || s.tsc_to_ns >= size || s.clock_gettime >= size))
		__builtin_trap();	/* a symbol outside the image */
	free(img);
	return 0;
}
