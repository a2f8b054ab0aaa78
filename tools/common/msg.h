// SPDX-License-Identifier: MIT OR LGPL-2.1
/* util-linux style messages: "<prog>: <message>" on stderr, the usage
 * error's "Try '<prog> --help'", the version line. */
#ifndef TOOLS_MSG_H
#define TOOLS_MSG_H

#include <stdarg.h>

/* Exit codes every tool shares (documented in each tool's man page). */
enum { EXIT_USAGE = 2, EXIT_RUNTIME = 3 };

/* The program's name in messages, defined by each tool. */
extern const char tool_name[];

void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_vwarn(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* The message and "Try '<prog> --help' ..." on stderr; returns EXIT_USAGE. */
int tool_usage_error(const char *msg);
/* "<prog> from tsckit (libtsc <version>)" on stdout; returns 0. */
int tool_version(void);
/* The end of every run: what went to standard output (a report, the
 * help, a list) must have been written; if not, "<prog>: write error:
 * <why>" on stderr and EXIT_RUNTIME, else rc. */
int tool_exit(int rc);
/* Before any output: standard output, unless a terminal, is written in
 * one piece at the end (up to 256 KiB), so that tool_exit() sees a
 * failed write with its errno. */
void tool_buffer_stdout(void);

#endif
