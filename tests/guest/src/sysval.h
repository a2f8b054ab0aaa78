/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading sysfs and procfs values in the guest's test programs, without
 * their newline: reread() from the start of an open file (which also
 * clears the file's poll() event), read_file() by path.
 */
#ifndef SYSVAL_H
#define SYSVAL_H

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline int reread(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static inline int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = reread(fd, buf, size);
	close(fd);
	return ret;
}

/*
 * The soak's programs run until their stop file holds something. The
 * soak makes it empty before it starts them: polling a name that exists
 * takes the path walk's lockless fast path, while polling a missing one
 * on tmpfs allocates and kills a dentry at each look, in VFS code whose
 * races KCSAN reports (kernel/sanitizer-allow).
 */
static inline int stop_requested(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

#endif
