// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Tiny test helpers: exit 0 pass, 1 fail, 77 skip; "# " lines are
 * diagnostics the runner keeps; "# figure: " lines are measurements. */
#ifndef T_H
#define T_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <tsc.h>

static int t_failed;

#define FAIL(...) do {							\
	printf("# FAIL %s:%d: ", __FILE__, __LINE__);			\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	t_failed = 1;							\
} while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
#define SKIP(...) do { printf("# SKIP: " __VA_ARGS__); printf("\n"); exit(77); } while (0)
#define DONE() return t_failed ? 1 : 0

/* In main(): open T with these options, or fail the test and end it.
 * T_OPEN(t, .no_watcher = true); */
#define T_OPEN(T, ...) do {						\
	TSC_OPTS(t_opts, __VA_ARGS__);					\
	(T) = tsc_open(&t_opts);					\
	CHECK((T), "open");						\
	if (!(T))							\
		DONE();							\
} while (0)

static inline uint64_t t_clock(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Does any reason's text contain s? */
static inline bool t_reason(struct tsc *t, const char *s)
{
	struct tsc_reason r[64];
	int n = tsc_reasons(t, r, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (strstr(r[i].text, s))
			return true;
	return false;
}

static inline void t_print_reasons(struct tsc *t)
{
	struct tsc_reason r[64];
	int n = tsc_reasons(t, r, 64), i;

	for (i = 0; i < n && i < 64; i++)
		printf("#   %d %s\n", r[i].kind, r[i].text);
}

static inline const char *t_env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		printf("# SKIP: %s not set (run through tests/lib/runtests)\n", name);
		exit(77);
	}
	return v;
}

/* Write a file atomically (rename), creating directories. */
static inline int t_write(const char *root, const char *path, const char *s)
{
	char p[4096], tmp[4200], *q;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, path);
	for (q = p + strlen(root) + 1; (q = strchr(q, '/')); q++) {
		*q = 0;
		mkdir(p, 0755);
		*q = '/';
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(s, f);
	if (fclose(f))
		return -1;
	return rename(tmp, p);
}

#endif
