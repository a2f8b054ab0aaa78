// SPDX-License-Identifier: GPL-2.0
/*
 * jsonflat: check that stdin is JSON (RFC 8259, strict: one or more
 * values, e.g. tscinfo --json or one object per line from --watch --json)
 * and print every scalar as PATH=VALUE, one a line, for busybox sh:
 *
 *	{"a": {"b": [1, "x"]}}   ->   a.b.0=1
 *	                              a.b.1=x
 *
 * Strings are printed without quotes, escapes decoded (\uXXXX as UTF-8,
 * control characters as '?'); a line "--" separates documents.  Exit 0
 * valid, 1 invalid (with where and why on stderr), 2 usage.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *p, *start;
static char path[4096];

static void die(const char *why)
{
	fprintf(stderr, "jsonflat: invalid JSON at byte %ld: %s\n", (long)(p - start), why);
	exit(1);
}

static void ws(void)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
}

static void put_utf8(FILE *f, unsigned long c)
{
	if (c < 0x20)
		fputc('?', f);
	else if (c < 0x80)
		fputc((int)c, f);
	else if (c < 0x800)
		fprintf(f, "%c%c", (int)(0xc0 | c >> 6), (int)(0x80 | (c & 0x3f)));
	else if (c < 0x10000)
		fprintf(f, "%c%c%c", (int)(0xe0 | c >> 12), (int)(0x80 | (c >> 6 & 0x3f)),
			(int)(0x80 | (c & 0x3f)));
	else
		fprintf(f, "%c%c%c%c", (int)(0xf0 | c >> 18), (int)(0x80 | (c >> 12 & 0x3f)),
			(int)(0x80 | (c >> 6 & 0x3f)), (int)(0x80 | (c & 0x3f)));
}

static unsigned long hex4(void)
{
	unsigned long v = 0;
	int i;

	for (i = 0; i < 4; i++, p++) {
		if (!isxdigit((unsigned char)*p))
			die("bad \\u escape");
		v = v * 16 + (isdigit((unsigned char)*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
	}
	return v;
}

/* A string at p (after the quote) into out (may be NULL: skip). */
static void string(FILE *out)
{
	for (;;) {
		unsigned char c = *p++;

		if (c == '"')
			return;
		if (c == 0)
			die("unterminated string");
		if (c < 0x20)
			die("control character in string");
		if (c != '\\') {
			if (out)
				fputc(c, out);
			continue;
		}
		c = *p++;
		switch (c) {
		case '"': case '\\': case '/':
			if (out)
				fputc(c, out);
			break;
		case 'b': case 'f': case 'n': case 'r': case 't':
			if (out)
				fputc('?', out);
			break;
		case 'u': {
			unsigned long u = hex4();

			if (u >= 0xd800 && u < 0xdc00) {
				unsigned long lo;

				if (p[0] != '\\' || p[1] != 'u')
					die("lone high surrogate");
				p += 2;
				lo = hex4();
				if (lo < 0xdc00 || lo > 0xdfff)
					die("bad low surrogate");
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			} else if (u >= 0xdc00 && u < 0xe000) {
				die("lone low surrogate");
			}
			if (out)
				put_utf8(out, u);
			break;
		}
		default:
			die("bad escape");
		}
	}
}

static void number(void)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (isdigit((unsigned char)*p))
			p++;
	else
		die("bad number");
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			die("bad fraction");
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			die("bad exponent");
		while (isdigit((unsigned char)*p))
			p++;
	}
	printf("%s=%.*s\n", path, (int)(p - s), s);
}

static void value(int depth);

/* Append a path element (the caller restores the old length). */
static void push(const char *elem, size_t n)
{
	size_t len = strlen(path);

	if (len + n + 2 >= sizeof(path))
		die("path too long");
	if (len)
		path[len++] = '.';
	memcpy(path + len, elem, n);
	path[len + n] = 0;
}

/* At the start of an object or array: true if it closes at once. */
static bool empty(char close)
{
	ws();
	if (*p != close)
		return false;
	p++;
	return true;
}

/* After a member or element: true if another follows. */
static bool more(char close)
{
	static char why[] = "expected ',' or 'X'";

	ws();
	if (*p == ',') {
		p++;
		return true;
	}
	why[sizeof(why) - 3] = close;
	if (*p++ != close)
		die(why);
	return false;
}

static void object(int depth)
{
	size_t old = strlen(path);

	if (empty('}'))
		return;
	do {
		char *key = NULL;
		size_t klen = 0;
		FILE *k;

		ws();
		if (*p++ != '"')
			die("expected a key");
		k = open_memstream(&key, &klen);
		if (!k)
			die("out of memory");
		string(k);
		fclose(k);
		ws();
		if (*p++ != ':')
			die("expected ':'");
		push(key, klen);
		free(key);
		value(depth + 1);
		path[old] = 0;
	} while (more('}'));
}

static void array(int depth)
{
	size_t old = strlen(path);
	char idx[24];
	int i = 0;

	if (empty(']'))
		return;
	do {
		snprintf(idx, sizeof(idx), "%d", i++);
		push(idx, strlen(idx));
		value(depth + 1);
		path[old] = 0;
	} while (more(']'));
}

static void value(int depth)
{
	if (depth > 64)
		die("nested too deep");
	ws();
	if (*p == '{') {
		p++;
		object(depth);
	} else if (*p == '[') {
		p++;
		array(depth);
	} else if (*p == '"') {
		p++;
		printf("%s=", path);
		string(stdout);
		printf("\n");
	} else if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) {
		printf("%s=%.4s\n", path, p);
		p += 4;
	} else if (!strncmp(p, "false", 5)) {
		printf("%s=false\n", path);
		p += 5;
	} else if (*p == '-' || isdigit((unsigned char)*p)) {
		number();
	} else {
		die(*p ? "unexpected character" : "unexpected end");
	}
}

int main(int argc, char **argv __attribute__((unused)))
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int docs = 0;

	if (argc > 1) {
		fprintf(stderr, "usage: jsonflat < FILE\n");
		return 2;
	}
	if (!buf)
		return 1;
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len - 1, stdin);

		len += n;
		if (len < cap - 1)
			break;
		cap *= 2;
		buf = realloc(buf, cap);
		if (!buf)
			return 1;
	}
	buf[len] = 0;
	if (strlen(buf) != len) {
		fprintf(stderr, "jsonflat: NUL byte in input\n");
		return 1;
	}
	p = start = buf;
	for (;;) {
		ws();
		if (!*p)
			break;
		if (docs++)
			printf("--\n");
		path[0] = 0;
		value(0);
	}
	if (!docs) {
		fprintf(stderr, "jsonflat: no JSON value in input\n");
		return 1;
	}
	return 0;
}
