// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The stand-in vDSO of fakevdso.c, mapped as the kernel maps a vDSO and
 * handed to libtsc in place of the live one (tsc__test_set_vdso()). */
#ifndef FAKEVDSO_H
#define FAKEVDSO_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

size_t tsc__vdso_sym(const void *img, size_t len, const char *name);
void tsc__test_set_vdso(const void *base, size_t len);

struct fake_state {
	int nodev;		/* 1: __vdso_tsc_raw() says -ENODEV */
	uint64_t f;		/* ns per 2^32 ticks */
};

/* Map the file's PT_LOAD segments at their addresses, as the kernel does. */
static inline void *fake_load(const char *file, size_t *len)
{
	FILE *f = fopen(file, "rb");
	static unsigned char buf[1 << 20];
	size_t n, end = 0;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph;
	unsigned char *m;
	int i;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ph = (Elf64_Phdr *)(buf + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > end)
			end = ph[i].p_vaddr + ph[i].p_memsz;
	end = (end + 4095) & ~4095ul;
	m = mmap(NULL, end, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz <= n)
			memcpy(m + ph[i].p_vaddr, buf + ph[i].p_offset, ph[i].p_filesz);
	*len = end;
	return m;
}

/* Load the stand-in and make it the live vDSO; its state, or NULL. */
static inline struct fake_state *fake_vdso(const char *file)
{
	struct fake_state *(*get)(void);
	size_t len, off;
	void *img = fake_load(file, &len);

	if (!img)
		return NULL;
	off = tsc__vdso_sym(img, len, "fake_state");
	if (!off)
		return NULL;
	get = (struct fake_state *(*)(void))((char *)img + off);
	tsc__test_set_vdso(img, len);
	return get();
}

#endif
