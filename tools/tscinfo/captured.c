// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * A dump's tsckit/live-state: the live machine's --format=log line at
 * capture, which saw what no dump keeps (perf, a calibration).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tscinfo.h"

/* The value of " key=" in a --format=log line, a plain word; "" if none. */
static void log_value(const char *line, const char *key, char *out, size_t cap)
{
	const char *p = strstr(line, key);
	size_t n = 0;

	if (p)
		for (p += strlen(key); *p && *p != ' ' && *p != '\n' && *p != '"' && n + 1 < cap; p++)
			out[n++] = *p;
	out[n] = 0;
}

int captured_read(const char *sysroot, struct captured *c)
{
	char path[4096 + 32], *buf, v[24];
	size_t len;
	int err;

	memset(c, 0, sizeof(*c));
	if (!sysroot)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/tsckit/live-state", sysroot);
	err = read_dump_file(path, &buf, &len, 4096);
	if (err)
		return err;
	buf[len < 4096 ? len : 4095] = 0;
	if (!strncmp(buf, "tscinfo: ", 9)) {
		log_value(buf, " usable=", v, sizeof(v));
		c->have = !strcmp(v, "0") || !strcmp(v, "1");
		c->usable = !strcmp(v, "1");
		log_value(buf, " conversion=", c->conversion, sizeof(c->conversion));
		log_value(buf, " khz_source=", c->khz_src, sizeof(c->khz_src));
		log_value(buf, " khz=", v, sizeof(v));
		c->khz = strtoull(v, NULL, 10);
	}
	free(buf);
	return c->have ? 0 : -EINVAL;
}
