// SPDX-License-Identifier: MIT OR LGPL-2.1
/* CPUID facts: live from the CPU, or from a dump's tsckit/cpuid file:
 *   # leaf subleaf eax ebx ecx edx
 *   0x80000007 0x0 0x0 0x0 0x0 0x100
 * one leaf a line, hexadecimal, '#' starts a comment. */
#include <errno.h>
#include <string.h>

#include "internal.h"
#if TSC_ARCH_HAS_TSC
#include <cpuid.h>
#endif

static void add(struct cpuid_set *s, uint32_t leaf, uint32_t sub,
		const uint32_t r[4])
{
	struct cpuid_leaf *l;

	if (s->n >= CPUID_MAX)
		return;
	l = &s->l[s->n++];
	l->leaf = leaf;
	l->subleaf = sub;
	memcpy(l->r, r, sizeof(l->r));
}

#if TSC_ARCH_HAS_TSC
static const uint32_t wanted[] = {
	0x0, 0x1, 0x15, 0x16, 0x40000000, 0x40000010,
	0x80000000, 0x80000001, 0x80000007,
};

/* Only leaves below each range's maximum are asked for: beyond it some
 * CPUs return the highest basic leaf's data. */
int tsc__cpuid_live(struct cpuid_set *s)
{
	uint32_t r[4], max_basic, max_ext, max_hv = 0;
	size_t i;

	s->n = 0;
	if (!__get_cpuid_max(0, NULL))
		return -ENODEV;
	__cpuid_count(0, 0, r[0], r[1], r[2], r[3]);
	max_basic = r[0];
	__cpuid_count(0x80000000, 0, r[0], r[1], r[2], r[3]);
	max_ext = r[0];
	__cpuid_count(1, 0, r[0], r[1], r[2], r[3]);
	if (r[2] & (1u << 31)) {	/* hypervisor present */
		__cpuid_count(0x40000000, 0, r[0], r[1], r[2], r[3]);
		max_hv = r[0];
	}
	for (i = 0; i < ARRAY_SIZE(wanted); i++) {
		uint32_t leaf = wanted[i], max;

		max = leaf >= 0x80000000 ? max_ext :
		      leaf >= 0x40000000 ? max_hv : max_basic;
		if (leaf > max)
			continue;
		__cpuid_count(leaf, 0, r[0], r[1], r[2], r[3]);
		add(s, leaf, 0, r);
	}
	return 0;
}
#else
int tsc__cpuid_live(struct cpuid_set *s)
{
	s->n = 0;
	return -ENODEV;		/* no CPUID off x86 */
}
#endif

static int hex(const char **pp, const char *e, uint32_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	int digits = 0;

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	if (e - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < e; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		x = x << 4 | d;
		if (x > UINT32_MAX)
			return -ERANGE;
	}
	if (!digits || (p < e && *p != ' ' && *p != '\t'))
		return -EINVAL;
	*pp = p;
	*v = x;
	return 0;
}

int tsc__parse_cpuid(const char *buf, size_t len, struct cpuid_set *s)
{
	const char *p = buf, *end = buf + len;

	s->n = 0;
	while (p < end) {
		const char *e = memchr(p, '\n', end - p), *q;
		uint32_t v[6];
		int i, err;

		if (!e)
			return -EINVAL;	/* every line ends with a newline */
		q = p;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q < e && *q != '#') {
			for (i = 0; i < 6; i++) {
				err = hex(&q, e, &v[i]);
				if (err)
					return err;
			}
			while (q < e && (*q == ' ' || *q == '\t'))
				q++;
			if (q != e)
				return -EINVAL;
			if (s->n >= CPUID_MAX)
				return -EFBIG;
			add(s, v[0], v[1], v + 2);
		}
		p = e + 1;
	}
	return s->n ? 0 : -ENODATA;
}

const struct cpuid_leaf *tsc__cpuid_get(const struct cpuid_set *s,
					uint32_t leaf, uint32_t subleaf)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->l[i].leaf == leaf && s->l[i].subleaf == subleaf)
			return &s->l[i];
	return NULL;
}
