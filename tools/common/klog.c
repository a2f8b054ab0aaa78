// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * The kernel's own words about the TSC, from its log: the frequency it
 * detected (and refined), and why it stopped trusting the TSC ("tsc:
 * Marking TSC unstable due to ...", the clocksource watchdog's "Marking
 * clocksource 'tsc' as unstable" with its figures).  On a stock kernel
 * nothing else says why the TSC was dropped at run time.
 *
 * Live: klogctl(SYSLOG_ACTION_READ_ALL), which needs CAP_SYSLOG where
 * kernel.dmesg_restrict is 1 (Debian's default).  A sysroot: its
 * tsckit/kernel-log, the lines capture-sysroot kept of dmesg; never this
 * machine's log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

#include "freq.h"

#define SYSLOG_ACTION_READ_ALL 3
#define SYSLOG_ACTION_SIZE_BUFFER 10
#define P_KERNEL_LOG "/tsckit/kernel-log"

/* Copy one line of at most len bytes, without the "<6>" level, with runs
 * of blanks squeezed (the stamp's, the watchdog's indent):
 * "[12.345678] tsc: ...". */
static void keep(char *out, const char *p, size_t len)
{
	size_t o = 0;

	if (len > 2 && *p == '<') {
		const char *gt = memchr(p, '>', len < 8 ? len : 8);

		if (gt) {
			len -= (size_t)(gt + 1 - p);
			p = gt + 1;
		}
	}
	for (; len && o + 1 < KLOG_LEN; p++, len--) {
		if (o && (out[o - 1] == '[' || out[o - 1] == ' ') && *p == ' ')
			continue;
		out[o++] = (unsigned char)*p < ' ' ? ' ' : *p;
	}
	out[o] = 0;
}

/* The message, past the stamp. */
static const char *msg(const char *line)
{
	const char *p = line;

	if (*p == '[') {
		const char *e = strchr(p, ']');

		if (e)
			p = e + 1;
	}
	while (*p == ' ')
		p++;
	return p;
}

/* "NNNN.NNN MHz" right after prefix in s: the kHz, else 0. */
static uint64_t mhz_after(const char *s, const char *prefix)
{
	const char *p = strstr(s, prefix);
	uint64_t khz = 0, scale;

	if (!p)
		return 0;
	for (p += strlen(prefix); *p >= '0' && *p <= '9' && khz < 100000000; p++)
		khz = khz * 10 + (uint64_t)(*p - '0');
	khz *= 1000;
	if (*p == '.')	/* kHz: three decimals count, more are dropped */
		for (p++, scale = 100; *p >= '0' && *p <= '9'; p++, scale /= 10)
			khz += (uint64_t)(*p - '0') * scale;
	return strncmp(p, " MHz", 4) ? 0 : khz;
}

/* A watchdog report goes on in lines that start "clocksource:" and
 * many blanks (before keep() squeezes them). */
static bool continues(const char *raw, size_t len)
{
	return memmem(raw, len, "clocksource:     ", 17) != NULL;
}

static void parse(struct klog *k, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	int rank = 0, follow = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[KLOG_LEN];
		const char *m;
		uint64_t khz;
		int r = 0;

		bool cont = continues(p, n);

		keep(line, p, n);
		p += n + 1;
		m = msg(line);
		/* The frequency the kernel keeps time with: a refinement
		 * beats the TSC's own line, which beats the processor's
		 * (the TSC's when no TSC line follows); the last of a rank. */
		if ((khz = mhz_after(m, "tsc: Refined TSC clocksource calibration: ")))
			r = 3;
		else if ((khz = mhz_after(m, "tsc: Detected ")) && strstr(m, " MHz TSC"))
			r = 2;
		else if ((khz = mhz_after(m, "tsc: Detected ")) && strstr(m, " MHz processor"))
			r = 1;
		if (r && r >= rank) {
			rank = r;
			k->khz = khz;
			strcpy(k->khz_line, line);
		}
		if (strstr(m, "Marking TSC unstable") ||
		    strstr(m, "Marking clocksource 'tsc' as unstable") ||
		    strstr(m, "Marking clocksource 'tsc-early' as unstable")) {
			follow = strstr(m, "Marking clocksource") ? 4 : 0;
		} else if (follow && cont) {
			follow--;
		} else {
			follow = 0;
			continue;
		}
		/* The last reports win: drop the oldest line when full. */
		if (k->n == KLOG_MAX) {
			memmove(k->line[0], k->line[1], sizeof(k->line[0]) * (KLOG_MAX - 1));
			k->n--;
		}
		strcpy(k->line[k->n++], line);
	}
}

/* A dump's file, at most max bytes of it (the last lines are dropped). */
int read_dump_file(const char *path, char **out, size_t *len, size_t max)
{
	char *buf = malloc(max);
	ssize_t got = 0;
	int fd;

	if (!buf)
		return -ENOMEM;
	*len = 0;
	/* O_NONBLOCK: a FIFO in a hostile dump reads as empty, no hang. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while (*len < max && (got = read(fd, buf + *len, max - *len)) > 0)
		*len += (size_t)got;
	close(fd);
	if (got < 0 && errno != EAGAIN) {
		free(buf);
		return -errno;
	}
	*out = buf;
	return 0;
}

int klog_read(const char *sysroot, struct klog *k)
{
	char path[4096 + sizeof(P_KERNEL_LOG)];
	char *buf = NULL;
	size_t len;
	int size, got;

	memset(k, 0, sizeof(*k));
	if (sysroot) {
		snprintf(path, sizeof(path), "%s" P_KERNEL_LOG, sysroot);
		k->err = read_dump_file(path, &buf, &len, 1 << 20);
		if (k->err)
			return k->err;
	} else {
		size = klogctl(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);
		if (size <= 0)
			size = 1 << 20;
		buf = malloc((size_t)size);
		if (!buf)
			return k->err = -ENOMEM;
		got = klogctl(SYSLOG_ACTION_READ_ALL, buf, size);
		if (got < 0) {
			k->err = -errno;
			free(buf);
			return k->err;
		}
		len = (size_t)got;
	}
	k->read = true;
	parse(k, buf, len);
	free(buf);
	return 0;
}
