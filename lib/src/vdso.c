// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * A small ELF parser for the vDSO: find a symbol with a given version in
 * the dynamic symbol table.  The image is untrusted (a dump, a fuzzer):
 * every table and string is checked to lie inside [img, img + len).
 * Addresses in the dynamic section are virtual addresses of the image as
 * linked; they become offsets through the first PT_LOAD.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "internal.h"

#define VDSO_VERSION "LINUX_2.6"

struct img {
	const unsigned char *p;
	size_t len;
	uint64_t vaddr, offset;		/* of the first PT_LOAD */
	const Elf64_Sym *sym;
	size_t nsym;
	const char *str;
	size_t strsz;
	const Elf64_Half *versym;
	uint64_t verdef;		/* offset, 0 if none */
};

static bool in(const struct img *m, uint64_t off, uint64_t size)
{
	return off <= m->len && size <= m->len - off;
}

/* Virtual address to image offset; -1 if outside. */
static uint64_t v2o(const struct img *m, uint64_t v, uint64_t size)
{
	uint64_t off;

	if (v < m->vaddr)
		return UINT64_MAX;
	off = v - m->vaddr + m->offset;
	if (off < m->offset || !in(m, off, size))
		return UINT64_MAX;
	return off;
}

static const char *str_at(const struct img *m, uint64_t i)
{
	if (i >= m->strsz || !memchr(m->str + i, 0, m->strsz - i))
		return NULL;
	return m->str + i;
}

/* Symbol count from a DT_GNU_HASH table: the highest index reachable
 * through the buckets, then to the end of its chain. */
static size_t gnu_nsym(const struct img *m, uint64_t off)
{
	const uint32_t *h;
	uint32_t nbucket, symoff, bloom, i, max = 0;
	uint64_t chains;

	if (!in(m, off, 16) || off % 4)
		return 0;
	h = (const uint32_t *)(m->p + off);
	nbucket = h[0];
	symoff = h[1];
	bloom = h[2];
	chains = off + 16 + (uint64_t)bloom * 8;
	if (nbucket > m->len / 4 || !in(m, chains, (uint64_t)nbucket * 4))
		return 0;
	for (i = 0; i < nbucket; i++) {
		uint32_t b = ((const uint32_t *)(m->p + chains))[i];

		if (b > max)
			max = b;
	}
	if (max < symoff)
		return symoff;
	chains += (uint64_t)nbucket * 4;
	for (;;) {
		uint64_t c = chains + (uint64_t)(max - symoff) * 4;

		if (!in(m, c, 4))
			return 0;
		if (*(const uint32_t *)(m->p + c) & 1)
			return (size_t)max + 1;
		if (++max == 0)
			return 0;
	}
}

static int load(struct img *m, const void *p, size_t len)
{
	const Elf64_Ehdr *eh = p;
	const Elf64_Phdr *ph, *dynph = NULL, *loadph = NULL;
	const Elf64_Dyn *dyn;
	uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnuhash = 0;
	uint64_t versym = 0, verdef = 0, syment = sizeof(Elf64_Sym), n, o;
	int i;

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->len = len;
	if (!in(m, 0, sizeof(*eh)) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 ||
	    !in(m, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph)))
		return -ENOEXEC;
	ph = (const Elf64_Phdr *)(m->p + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !loadph)
			loadph = &ph[i];
		else if (ph[i].p_type == PT_DYNAMIC)
			dynph = &ph[i];
	}
	if (!loadph || !dynph)
		return -ENOEXEC;
	m->vaddr = loadph->p_vaddr;
	m->offset = loadph->p_offset;
	o = v2o(m, dynph->p_vaddr, dynph->p_memsz);
	if (o == UINT64_MAX || o % 8)
		return -ENOEXEC;
	dyn = (const Elf64_Dyn *)(m->p + o);
	for (n = 0; n < dynph->p_memsz / sizeof(*dyn) && dyn[n].d_tag != DT_NULL; n++) {
		uint64_t v = dyn[n].d_un.d_ptr;

		switch (dyn[n].d_tag) {
		case DT_SYMTAB:		symtab = v; break;
		case DT_STRTAB:		strtab = v; break;
		case DT_STRSZ:		strsz = v; break;
		case DT_SYMENT:		syment = v; break;
		case DT_HASH:		hash = v; break;
		case DT_GNU_HASH:	gnuhash = v; break;
		case DT_VERSYM:		versym = v; break;
		case DT_VERDEF:		verdef = v; break;
		}
	}
	if (!symtab || !strtab || syment != sizeof(Elf64_Sym))
		return -ENOEXEC;
	o = v2o(m, strtab, strsz);
	if (o == UINT64_MAX)
		return -ENOEXEC;
	m->str = (const char *)m->p + o;
	m->strsz = strsz;
	if (hash) {
		o = v2o(m, hash, 8);
		if (o == UINT64_MAX || o % 4)
			return -ENOEXEC;
		m->nsym = ((const uint32_t *)(m->p + o))[1];
	} else if (gnuhash) {
		o = v2o(m, gnuhash, 16);
		m->nsym = o == UINT64_MAX ? 0 : gnu_nsym(m, o);
	}
	if (!m->nsym)
		return -ENOEXEC;
	o = v2o(m, symtab, (uint64_t)m->nsym * sizeof(Elf64_Sym));
	if (o == UINT64_MAX || o % 8)
		return -ENOEXEC;
	m->sym = (const Elf64_Sym *)(m->p + o);
	if (versym) {
		o = v2o(m, versym, (uint64_t)m->nsym * sizeof(Elf64_Half));
		if (o == UINT64_MAX || o % 2)
			return -ENOEXEC;
		m->versym = (const Elf64_Half *)(m->p + o);
	}
	if (verdef) {
		o = v2o(m, verdef, sizeof(Elf64_Verdef));
		m->verdef = o == UINT64_MAX ? 0 : o;
	}
	return 0;
}

/* The index of version name in the verdef chain, or -1. */
static int version_ndx(const struct img *m, const char *name)
{
	uint64_t o = m->verdef;
	int guard;

	for (guard = 0; o && guard < 256; guard++) {
		const Elf64_Verdef *vd;
		const Elf64_Verdaux *va;
		const char *s;
		uint64_t a;

		if (o % 4 || !in(m, o, sizeof(*vd)))
			return -1;
		vd = (const Elf64_Verdef *)(m->p + o);
		a = o + vd->vd_aux;
		if (a < o || a % 4 || !in(m, a, sizeof(*va)))
			return -1;
		va = (const Elf64_Verdaux *)(m->p + a);
		s = str_at(m, va->vda_name);
		if (s && !(vd->vd_flags & VER_FLG_BASE) && !strcmp(s, name))
			return vd->vd_ndx;
		if (!vd->vd_next || o + vd->vd_next < o)
			return -1;
		o += vd->vd_next;
	}
	return -1;
}

static size_t lookup(const struct img *m, const char *name, int ndx)
{
	size_t i;

	for (i = 0; i < m->nsym; i++) {
		const Elf64_Sym *s = &m->sym[i];
		unsigned int type = ELF64_ST_TYPE(s->st_info);
		unsigned int bind = ELF64_ST_BIND(s->st_info);
		const char *n;
		uint64_t o;

		if (s->st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_OBJECT &&
						 type != STT_NOTYPE) ||
		    (bind != STB_GLOBAL && bind != STB_WEAK))
			continue;
		n = str_at(m, s->st_name);
		if (!n || strcmp(n, name))
			continue;
		if (m->versym && (m->versym[i] & 0x7fff) != ndx)
			continue;
		o = v2o(m, s->st_value, 1);
		if (o == UINT64_MAX || o == 0)
			continue;
		return o;
	}
	return 0;
}

int tsc__vdso_parse(const void *img, size_t len, struct vdso_syms *syms)
{
	struct img m;
	int err, ndx;

	memset(syms, 0, sizeof(*syms));
	err = load(&m, img, len);
	if (err)
		return err;
	ndx = version_ndx(&m, VDSO_VERSION);
	if (m.versym && ndx < 0)
		return -ENOENT;		/* no LINUX_2.6: not a vDSO we know */
	syms->tsc_raw = lookup(&m, "__vdso_tsc_raw", ndx);
	syms->tsc_to_ns = lookup(&m, "__vdso_tsc_to_ns", ndx);
	syms->clock_gettime = lookup(&m, "__vdso_clock_gettime", ndx);
	return 0;
}

/* For tests: any symbol of version LINUX_2.6 (0 if absent). */
size_t tsc__vdso_sym(const void *img, size_t len, const char *name);
size_t tsc__vdso_sym(const void *img, size_t len, const char *name)
{
	struct img m;

	if (load(&m, img, len))
		return 0;
	return lookup(&m, name, version_ndx(&m, VDSO_VERSION));
}
