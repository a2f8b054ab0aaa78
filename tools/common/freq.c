// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The TSC frequency from the best source the tools can read, and where it
 * came from.  libtsc's figure first: it is the one its conversion uses
 * (kernel factors, perf, a calibration).  libtsc needs no frequency while
 * the TSC is not used, so on a stock kernel that does not keep time with
 * the TSC it has none; the kernel still knows it, and says it in its log
 * ("tsc: Detected 2694.861 MHz processor").  Then the CPU's own leaves:
 * CPUID 0x15 (crystal ratio), the hypervisor's 0x40000010, and last
 * 0x16, the processor's base frequency, which the TSC runs at on most
 * CPUs but which no spec promises.  Nothing here changes libtsc's
 * decision: these are facts for people and for the metrics.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"	/* the CPUID helpers: lib/src/cpuid.c, compiled in */
#include "freq.h"

static uint32_t reg(const struct cpuid_set *s, uint32_t leaf, int r)
{
	const struct cpuid_leaf *l = tsc__cpuid_get(s, leaf, 0);

	return l ? l->r[r] : 0;
}

/* A dump's tsckit/cpuid, never this CPU's. */
static int cpuid_of(const char *sysroot, struct cpuid_set *s)
{
	char path[4096 + 16], buf[1 << 14];
	ssize_t got;
	int fd;

	if (!sysroot)
		return tsc__cpuid_live(s);
	snprintf(path, sizeof(path), "%s" P_CPUID, sysroot);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	got = read(fd, buf, sizeof(buf));
	close(fd);
	if (got < 0)
		return -errno;
	return tsc__parse_cpuid(buf, (size_t)got, s);
}

void freq_facts_read(const char *sysroot, struct freq_facts *ff)
{
	struct cpuid_set s;
	uint64_t a, b, c;

	memset(ff, 0, sizeof(*ff));
	klog_read(sysroot, &ff->klog);
	ff->cpuid_err = cpuid_of(sysroot, &s);
	if (ff->cpuid_err)
		return;
	a = reg(&s, 0x15, 0);
	b = reg(&s, 0x15, 1);
	c = reg(&s, 0x15, 2);
	if (a && b && c)	/* Hz = crystal * b / a: multiply first */
		ff->cpuid15_khz = c * b / a / 1000;
	/* The hypervisor leaf only under a hypervisor that has it. */
	if ((reg(&s, 1, 2) & (1u << 31)) && reg(&s, 0x40000000, 0) >= 0x40000010)
		ff->cpuid_hv_khz = reg(&s, 0x40000010, 0);
	ff->cpuid16_mhz = reg(&s, 0x16, 0) & 0xffff;
}

static bool plausible(uint64_t khz)
{
	return khz >= 1000 && khz <= 100000000;
}

void freq_best(const struct tsc_info *i, const struct freq_facts *ff, struct freq *out)
{
	const struct klog *k = &ff->klog;

	memset(out, 0, sizeof(*out));
	if (i->khz) {
		out->khz = i->khz;
		out->src = tsc_src_name(i->khz_src);
		if (i->khz_src == TSC_SRC_CALIBRATION && i->err_ppb != UINT64_MAX)
			snprintf(out->how, sizeof(out->how), "%llu us, error bound %.3f ppm",
				 (unsigned long long)i->calib_ns / 1000, i->err_ppb / 1000.0);
		return;
	}
	/* A calibration's factors without a frequency published with them. */
	if (i->src == TSC_SRC_CALIBRATION && i->mult) {
		out->khz = (uint64_t)((((unsigned __int128)1000000 << i->shift) + i->mult / 2) /
				      i->mult);
		out->src = tsc_src_name(i->src);
		if (i->err_ppb != UINT64_MAX)
			snprintf(out->how, sizeof(out->how), "%llu us, error bound %.3f ppm",
				 (unsigned long long)i->calib_ns / 1000, i->err_ppb / 1000.0);
		return;
	}
	if (plausible(k->khz)) {
		out->khz = k->khz;
		out->src = "kernel-log";
		snprintf(out->how, sizeof(out->how), "%s", k->khz_line);
		return;
	}
	if (plausible(ff->cpuid15_khz)) {
		out->khz = ff->cpuid15_khz;
		out->src = "cpuid-15h";
		snprintf(out->how, sizeof(out->how), "the crystal's frequency times its ratio");
		return;
	}
	if (plausible(ff->cpuid_hv_khz)) {
		out->khz = ff->cpuid_hv_khz;
		out->src = "cpuid-hypervisor";
		snprintf(out->how, sizeof(out->how), "the hypervisor's word");
		return;
	}
	if (plausible(ff->cpuid16_mhz * 1000)) {
		out->khz = ff->cpuid16_mhz * 1000;
		out->src = "cpuid-16h";
		snprintf(out->how, sizeof(out->how), "the processor's base frequency, which the "
			 "TSC runs at on most CPUs; not promised");
		return;
	}
	/* Unknown: say what was tried. */
	snprintf(out->how, sizeof(out->how), "no factors, no CPUID frequency leaf, %s",
		 k->read ? "no frequency in the kernel log" :
		 k->err == -EPERM ? "the kernel log needs root or CAP_SYSLOG (kernel.dmesg_restrict)" :
		 k->err == -ENOENT ? "no kernel log in the dump" : "the kernel log cannot be read");
}
