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

int main(void)
{
	unsigned int fl = 0;
	struct cpuid_set s;
	char name[32];

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
	DONE();
}
