// SPDX-License-Identifier: MIT OR LGPL-2.1
/* --output FILE: the report goes to a hidden temporary file beside FILE,
 * which is renamed over FILE only once it is complete, so a reader (the
 * node_exporter textfile collector) sees the old file or the new one,
 * never half of one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tscinfo.h"

int out_open(struct outfile *o, const char *path)
{
	const char *slash;
	mode_t mask;
	int fd, dirlen;

	memset(o, 0, sizeof(*o));
	if (!path) {
		o->f = stdout;
		return 0;
	}
	slash = strrchr(path, '/');
	dirlen = slash ? (int)(slash - path + 1) : 0;
	o->path = path;
	/* ".NAME.XXXXXX": hidden, and not "*.prom", so the collector skips it. */
	if (asprintf(&o->tmp, "%.*s.%s.XXXXXX", dirlen, path, path + dirlen) < 0) {
		o->tmp = NULL;
		tool_warn("%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		tool_warn("cannot write %s: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	/* mkstemp makes it 0600; give it the mode a plain create would, so
	 * the collector's user (prometheus) can read it. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || !(o->f = fdopen(fd, "w"))) {
		tool_warn("cannot write %s: %s", o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	return 0;
}

int out_close(struct outfile *o)
{
	int err = 0;

	if (!o->tmp)	/* stdout: checked at the end, by tool_exit() */
		return 0;
	errno = 0;
	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno;
	if (!err && rename(o->tmp, o->path))
		err = errno;
	if (err) {
		tool_warn("cannot write %s: %s", o->path, strerror(err));
		unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	return err ? -1 : 0;
}
