// SPDX-License-Identifier: MIT OR LGPL-2.1
/* util-linux style messages of the tools. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <tsc.h>

#include "msg.h"

void tool_vwarn(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vwarn(fmt, ap);
	va_end(ap);
}

int tool_usage_error(const char *msg)
{
	fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", tool_name, msg,
		tool_name);
	return EXIT_USAGE;
}

int tool_version(void)
{
	printf("%s from tsckit (libtsc %s)\n", tool_name, tsc_version());
	return 0;
}

int tool_exit(int rc)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return rc;
	tool_warn("write error%s%s", errno ? ": " : "", errno ? strerror(errno) : "");
	return EXIT_RUNTIME;
}

void tool_buffer_stdout(void)
{
	static char buf[256 << 10];

	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, buf, _IOFBF, sizeof(buf));
}
