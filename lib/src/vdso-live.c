// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The live vDSO image, or a test's stand-in for it.  A file of its own
 * because tscinfo --dump-vdso compiles it in too: libtsc.so.0 exports
 * none of its internals. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"

/* Test hook: use this image as the live vDSO, also for a sysroot, so
 * that its calls drive a made-up kernel (tests/lib/vdso.c). */
static const void *test_base;
static size_t test_len;

bool tsc__vdso_hooked(void)
{
	return test_base;
}

void tsc__test_set_vdso(const void *base, size_t len);
void tsc__test_set_vdso(const void *base, size_t len)
{
	test_base = base;
	test_len = len;
}

/* The kernel maps the whole vDSO image; its size is the end of the last
 * PT_LOAD's file bytes.  Header and program headers are in its first
 * page. */
int tsc__vdso_live(const void **base, size_t *len)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	uint64_t end = 0;
	int i;

	if (test_base) {
		*base = test_base;
		*len = test_len;
		return 0;
	}
	eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh)
		return -ENOENT;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(*ph) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) > 4096)
		return -ENOEXEC;
	ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	if (end < sizeof(*eh) || end > (64u << 20))
		return -ENOEXEC;
	*base = eh;
	*len = end;
	return 0;
}
