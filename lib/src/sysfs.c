// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Reading and parsing the one-value sysfs/procfs files: every byte is
 * untrusted (captured dumps, a future kernel, a broken one). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* One decimal number and a newline, nothing else.  -ENODATA: empty,
 * -ERANGE: does not fit 64 bits, -EINVAL: anything else. */
int tsc__parse_u64(const char *buf, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -ENODATA;
	if (buf[len - 1] != '\n' || len == 1)
		return -EINVAL;
	for (i = 0; i < len - 1; i++) {
		unsigned int d = (unsigned char)buf[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* May c be part of a clocksource name? */
bool tsc__name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.';
}

/* A clocksource name: [a-zA-Z0-9_.-]+ and a newline. */
int tsc__parse_name(const char *buf, size_t len, char *out, size_t cap)
{
	size_t i;

	if (len == 0)
		return -ENODATA;
	if (buf[len - 1] != '\n' || len == 1)
		return -EINVAL;
	if (len > cap)
		return -ERANGE;
	for (i = 0; i < len - 1; i++) {
		char c = buf[i];

		if (!tsc__name_char(c))
			return -EBADMSG;
		out[i] = c;
	}
	out[i] = 0;
	return 0;
}

/* Short words for the errors the parsers and readers give. */
const char *tsc__strerr(int err)
{
	switch (err) {
	case -ENOENT:	return "missing";
	case -ENODATA:	return "empty";
	case -EINVAL:	return "not one decimal number and a newline";
	case -ERANGE:	return "number too large";
	case -EBADMSG:	return "not a name and a newline";
	case -ENOEXEC:	return "not an ELF image we can read";
	case -EFBIG:	return "file too large";
	case -EACCES:
	case -EPERM:	return "permission denied";
	default:	return "unreadable";
	}
}

/* O_NONBLOCK: a FIFO in a dump reads as empty instead of hanging. */
static int open_at_root(const char *root, const char *path)
{
	char p[PATH_MAX];
	int fd;

	if (snprintf(p, sizeof(p), "%s%s", root, path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Read until EOF or cap bytes (short reads continue).  1: buffer full. */
static int read_all(int fd, char *buf, size_t cap, size_t *n)
{
	*n = 0;
	while (*n < cap) {
		ssize_t r = read(fd, buf + *n, cap - *n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		*n += r;
	}
	return 1;
}

/* A small sysfs or procfs file through an fd kept open: one pread()
 * from 0 gives it whole (kernfs and proc_sys fill one buffer), and also
 * clears its poll event.  -EFBIG if it does not fit in cap. */
int tsc__read_fd(int fd, char *buf, size_t cap, size_t *len)
{
	ssize_t r;

	do
		r = pread(fd, buf, cap, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if ((size_t)r == cap)
		return -EFBIG;
	*len = (size_t)r;
	return 0;
}

/* Read a whole small file; -EFBIG if it does not fit in cap. */
int tsc__read(const char *root, const char *path, char *buf, size_t cap,
	      size_t *len)
{
	size_t more;
	char c;
	int fd, err;

	fd = open_at_root(root, path);
	if (fd < 0)
		return fd;
	err = read_all(fd, buf, cap, len);
	if (err == 1)
		err = read_all(fd, &c, 1, &more) ? -EFBIG : 0;
	close(fd);
	return err;
}

/* Read a whole file of up to max bytes into a malloc'ed, NUL-ended buf. */
int tsc__read_alloc(const char *root, const char *path, char **buf,
		    size_t *len, size_t max)
{
	size_t cap = 4096, n = 0, got;
	char *b = NULL, *nb;
	int fd, err;

	fd = open_at_root(root, path);
	if (fd < 0)
		return fd;
	do {
		if (n >= max) {
			err = -EFBIG;
			break;
		}
		cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
		nb = realloc(b, cap);
		if (!nb) {
			err = -ENOMEM;
			break;
		}
		b = nb;
		err = read_all(fd, b + n, cap - 1 - n, &got);
		n += got;
	} while (err == 1);
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}
