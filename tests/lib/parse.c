// SPDX-License-Identifier: MIT OR LGPL-2.1
/* The parsers on good, bad and hostile bytes. */
#include "t.h"
#include "../../lib/src/internal.h"

static void num(const char *s, size_t len, int err, uint64_t v)
{
	uint64_t out = 12345;
	int r = tsc__parse_u64(s, len, &out);

	CHECK(r == err, "parse_u64(%.*s): %d, want %d", (int)len, s, r, err);
	if (!err)
		CHECK(out == v, "parse_u64(%.*s) = %llu", (int)len, s, (unsigned long long)out);
	else
		CHECK(out == 12345, "parse_u64 stored on error");
}

/* A CPU list: err, and for 0 the count and the highest CPU (-1: none). */
static void cpus(const char *s, size_t len, int err, int count, int last)
{
	cpu_set_t set;
	int r = tsc__parse_cpulist(s, len, &set), c;

	CHECK(r == err, "parse_cpulist(%.*s): %d, want %d", (int)len, s, r, err);
	if (r || err)
		return;
	for (c = CPU_SETSIZE - 1; c >= 0 && !CPU_ISSET(c, &set); c--)
		;
	CHECK(CPU_COUNT(&set) == count && c == last, "parse_cpulist(%.*s): %d CPUs up to %d",
	      (int)len, s, CPU_COUNT(&set), c);
}

int main(void)
{
	unsigned int fl = 0;
	struct cpuid_set s;
	char name[32];

	cpus("0-3,8,10-11\n", 12, 0, 7, 11);
	cpus("1\n", 2, 0, 1, 1);
	cpus("\n", 1, 0, 0, -1);
	cpus("", 0, 0, 0, -1);
	cpus("0-1023\n", 7, 0, 1024, 1023);
	cpus("1024\n", 5, -EINVAL, 0, 0);
	cpus("99999999999999999999\n", 21, -EINVAL, 0, 0);
	cpus("(null)\n", 7, -EINVAL, 0, 0);
	cpus("3-1\n", 4, -EINVAL, 0, 0);
	cpus("1,\n", 3, -EINVAL, 0, 0);
	cpus(",1\n", 3, -EINVAL, 0, 0);
	cpus("1-\n", 3, -EINVAL, 0, 0);
	cpus("a\n", 2, -EINVAL, 0, 0);
	cpus("0-4095\n", 7, -EINVAL, 0, 0);
	cpus("1 2\n", 4, -EINVAL, 0, 0);
	cpus("1\n\n", 3, -EINVAL, 0, 0);
	cpus("1\0002\n", 4, -EINVAL, 0, 0);
	num("2596122\n", 8, 0, 2596122);
	num("0\n", 2, 0, 0);
	num("18446744073709551615\n", 21, 0, UINT64_MAX);
	num("18446744073709551616\n", 21, -ERANGE, 0);
	num("99999999999999999999999\n", 24, -ERANGE, 0);
	num("", 0, -ENODATA, 0);
	num("\n", 1, -EINVAL, 0);
	num("abc\n", 4, -EINVAL, 0);
	num("-5\n", 3, -EINVAL, 0);
	num("+5\n", 3, -EINVAL, 0);
	num(" 5\n", 3, -EINVAL, 0);
	num("5 \n", 3, -EINVAL, 0);
	num("2596122", 7, -EINVAL, 0);
	num("12\n\n", 4, -EINVAL, 0);
	num("1\0002\n", 4, -EINVAL, 0);
	num("\x7f" "ELF\n", 5, -EINVAL, 0);

	CHECK(!tsc__parse_name("tsc\n", 4, name, sizeof(name)) && !strcmp(name, "tsc"), "tsc");
	CHECK(!tsc__parse_name("kvm-clock\n", 10, name, sizeof(name)) &&
	      !strcmp(name, "kvm-clock"), "kvm-clock");
	CHECK(tsc__parse_name("tsc", 3, name, sizeof(name)) == -EINVAL, "no newline");
	CHECK(tsc__parse_name("", 0, name, sizeof(name)) == -ENODATA, "empty name");
	CHECK(tsc__parse_name("t\033sc\n", 5, name, sizeof(name)) == -EBADMSG, "escape");
	CHECK(tsc__parse_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 41, name,
			      sizeof(name)) == -ERANGE, "long name");

	const char *ci = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n"
			 "processor\t: 1\nflags\t\t: tsc constant_tsc rdtscp\n";
	CHECK(!tsc__parse_cpuinfo(ci, strlen(ci), &fl), "cpuinfo");
	CHECK(fl == (CI_TSC | CI_CONSTANT | CI_RDTSCP), "flags common to all CPUs: %#x", fl);
	CHECK(tsc__parse_cpuinfo("processor\t: 0\n", 14, &fl) == -ENODATA, "no flags line");
	CHECK(tsc__parse_cpuinfo("flagsx : tsc\n", 13, &fl) == -ENODATA, "flagsx is not flags");
	CHECK(!tsc__parse_cpuinfo("flags:tsc", 9, &fl) && fl == CI_TSC, "no newline, no blank");
	CHECK(!tsc__parse_cpuinfo("flags : tsc_known_freq tsc_reliable\n", 36, &fl) &&
	      fl == (CI_KNOWN_FREQ | CI_RELIABLE), "prefix words are not tsc: %#x", fl);

	const char *c = "# comment\n0x1 0x0 0x1 0x2 0x3 0x10\n  \n80000007 0 0 0 0 100\n";
	CHECK(!tsc__parse_cpuid(c, strlen(c), &s) && s.n == 2, "cpuid");
	CHECK(tsc__cpuid_get(&s, 0x80000007, 0) && tsc__cpuid_get(&s, 0x80000007, 0)->r[3] == 0x100,
	      "cpuid leaf");
	CHECK(!tsc__cpuid_get(&s, 0x15, 0), "absent leaf");
	CHECK(tsc__parse_cpuid("0x1 0x0 0x1\n", 12, &s) == -EINVAL, "short line");
	CHECK(tsc__parse_cpuid("0x1 0 1 2 3 4", 13, &s) == -EINVAL, "no newline");
	CHECK(tsc__parse_cpuid("0x1 0 1 2 3 100000000\n", 22, &s) == -ERANGE, "33 bits");
	CHECK(tsc__parse_cpuid("0x1 0 1 2 3 4 5\n", 16, &s) == -EINVAL, "7 numbers");
	CHECK(tsc__parse_cpuid("", 0, &s) == -ENODATA, "empty");

	bool has = true;
	CHECK(!tsc__parse_has_name("kvm-clock \n", 11, "tsc", &has) && !has, "kvm-clock only");
	CHECK(!tsc__parse_has_name("tsc hpet acpi_pm \n", 18, "tsc", &has) && has, "tsc first");
	CHECK(!tsc__parse_has_name("hpet tsc\n", 9, "tsc", &has) && has, "tsc last");
	CHECK(!tsc__parse_has_name("tsc-early hpet\n", 15, "tsc", &has) && !has,
	      "tsc-early is not tsc");
	CHECK(tsc__parse_has_name("tsc hpet", 8, "tsc", &has) == -EINVAL, "no newline");
	CHECK(tsc__parse_has_name("", 0, "tsc", &has) == -ENODATA, "empty list");
	CHECK(tsc__parse_has_name("tsc\033[31m\n", 9, "tsc", &has) == -EBADMSG, "escape");

	struct cmdline_facts cl;
	const char *cmd = "ro clocksource=kvm-clock tsc=reliable quiet tsc=unstable -- tsc=watchdog\n";
	CHECK(tsc__parse_cmdline(cmd, strlen(cmd), &cl) == 3 && cl.n == 3 &&
	      !strcmp(cl.param[0], "clocksource=kvm-clock") && !strcmp(cl.param[1], "tsc=reliable") &&
	      !strcmp(cl.param[2], "tsc=unstable"), "cmdline: %d params", cl.n);
	CHECK(tsc__parse_cmdline("tsc= clocksource= x\n", 20, &cl) == 0, "empty values");
	CHECK(tsc__parse_cmdline("tsc=\"unstable\"\n", 15, &cl) == 1 && cl.tsc_unstable &&
	      !strcmp(cl.param[0], "tsc=unstable"), "a quoted value, as the kernel takes it");
	CHECK(tsc__parse_cmdline("\"tsc=unstable\"\n", 15, &cl) == 1 && cl.tsc_unstable,
	      "a quoted parameter, as the kernel takes it");
	CHECK(tsc__parse_cmdline("clocksource=\"a b\"\n", 18, &cl) == 0, "a value with a blank");
	const char *q = "dyndbg=\"file tsc.c tsc=unstable +p\" tsc=reliable\n";
	CHECK(tsc__parse_cmdline(q, strlen(q), &cl) == 1 && !cl.tsc_unstable &&
	      !strcmp(cl.param[0], "tsc=reliable"), "a word inside quotes is not a parameter");
	CHECK(tsc__parse_cmdline("x=\"open tsc=unstable\n", 21, &cl) == 0 && !cl.tsc_unstable,
	      "an unterminated quote runs to the end");
	CHECK(tsc__parse_cmdline("tsc=unstable\0x\n", 15, &cl) == -EBADMSG, "NUL byte");
	CHECK(tsc__parse_cmdline("", 0, &cl) == -ENODATA, "empty cmdline");
	CHECK(tsc__parse_cmdline("tsc=unstable", 12, &cl) == 1, "no newline is fine");
	char many[1024] = "";
	for (int k = 0; k < 20; k++)
		strcat(many, "tsc=reliable ");
	CHECK(tsc__parse_cmdline(many, strlen(many), &cl) == CMDLINE_MAX && cl.n == 20,
	      "20 params: kept %d of %d", CMDLINE_MAX, cl.n);
	CHECK(!cl.tsc_unstable, "tsc=unstable seen in tsc=reliable");
	strcat(many, "tsc=unstable\n");
	CHECK(tsc__parse_cmdline(many, strlen(many), &cl) == CMDLINE_MAX && cl.tsc_unstable,
	      "tsc=unstable past the kept ones missed");
	char lng[200] = "tsc=";
	memset(lng + 4, 'x', 150);
	CHECK(tsc__parse_cmdline(lng, strlen(lng), &cl) == 0, "overlong value skipped");
	CHECK(!strcmp(tsc__cmdline_meaning("tsc=unstable"),
		      "the kernel marks the TSC unstable at boot"), "meaning");
	CHECK(!strcmp(tsc__cmdline_meaning("tsc=bogus"), "not a value this library knows"),
	      "unknown meaning");
	DONE();
}
