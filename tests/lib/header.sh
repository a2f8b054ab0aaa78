#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# tsc.h compiles as strict ISO C11 (-pedantic) and as C++17, also
# without __x86_64__ (its portable path; tests/lib/aarch64.sh builds and
# runs it for real), stops at its #error on a 32-bit target, and a C11
# program and a C++ program (C++11, C++17, C++20, with and without
# -pedantic) that use its options macro, designators out of declaration
# order too (a g++ error in a designated initializer), and inline reads
# build without a warning (-Wall -Wextra -Werror), link and run; so does
# one that calls every inline read, at -O2 and -O3; at -O1 to -O3 and
# -Os no read is left out of line in a caller's loops; TSC_NO_ALWAYS_INLINE
# lets a function with its own target options call them; -Wcast-align.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
inc="-I$top/lib/include -I$TSC_TEST_LIBDIR/include"
d=$(mktemp -d)
fail=0
printf '#include <tsc.h>\nint main(void) { return 0; }\n' > "$d/h.c"
cp "$d/h.c" "$d/h.cc"
cc -std=c11 -Wall -Wextra -Werror -pedantic $inc -c "$d/h.c" -o "$d/h.o" ||
	{ echo "# FAIL: tsc.h as C11 -pedantic"; fail=1; }
c++ -std=c++17 -Wall -Wextra -Werror -pedantic $inc -c "$d/h.cc" -o "$d/hh.o" ||
	{ echo "# FAIL: tsc.h as C++17"; fail=1; }
# Without __x86_64__ (no TSC: the fallback clock only) it compiles, as
# C and C++; on a 32-bit target (no unsigned __int128) it stops at its
# #error, not later.
cc -U__x86_64__ -std=c11 -Wall -Wextra -Werror -pedantic $inc -fsyntax-only "$d/h.c" > "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -5; echo "# FAIL: tsc.h without __x86_64__, C11"; fail=1; }
c++ -U__x86_64__ -std=c++17 -Wall -Wextra -Werror -pedantic $inc -fsyntax-only "$d/h.cc" > "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -5; echo "# FAIL: tsc.h without __x86_64__, C++17"; fail=1; }
cc -m32 -std=c11 $inc -fsyntax-only "$d/h.c" > "$d/e" 2>&1 &&
	{ echo "# FAIL: tsc.h compiles for i386"; fail=1; }
grep -q "error.*64-bit target" "$d/e" ||
	{ sed 's/^/# /' "$d/e" | head -5; echo "# FAIL: no #error for i386 (-m32)"; fail=1; }
cc -std=c11 -Wall -Wextra -Werror -pedantic $inc "$top/tests/lib/example.c" "$TSC_TEST_LIBDIR/libtsc.a" \
	-lpthread -o "$d/use" && "$d/use" > /dev/null ||
	{ echo "# FAIL: a C11 -pedantic program with TSC_OPTS and the inline reads"; fail=1; }
# C++: TSC_OPTS with options and without, every member it leaves out zero;
# designators in any order (g++ rejects a designated initializer's out of
# declaration order), every member at once.
cat > "$d/opts.cc" <<'EOF'
#include <cstdio>
#include <tsc.h>

int main()
{
	TSC_OPTS(o, .fallback = TSC_FALLBACK_MONOTONIC, .no_watcher = true);
	TSC_OPTS(none, );
	TSC_OPTS(all, .all_facts = true, .watcher_priority = 3, .watcher_policy = 2,
		 .watcher_cpus_size = 8, .watcher_cpus = "12345678",
		 .fallback = TSC_FALLBACK_MONOTONIC, .force_fallback = true, .no_rdtscp = true,
		 .no_watcher = true, .force_calibrate = true, .sysroot = "x");
	static const unsigned char zero[sizeof(struct tsc_opts)] = {};
	struct tsc *t = tsc_open(&o);

	if (!t || o.sz != sizeof(o) || !o.no_watcher || o.fallback != TSC_FALLBACK_MONOTONIC ||
	    o.sysroot || o.force_calibrate || o.all_facts || none.sz != sizeof(none) ||
	    memcmp((const char *)&none + sizeof(none.sz), zero, sizeof(none) - sizeof(none.sz)))
		return 1;
	if (all.sz != sizeof(all) || !all.all_facts || all.watcher_priority != 3 ||
	    all.watcher_policy != 2 || all.watcher_cpus_size != 8 || !all.watcher_cpus ||
	    all.fallback != TSC_FALLBACK_MONOTONIC || !all.force_fallback || !all.no_rdtscp ||
	    !all.no_watcher || !all.force_calibrate || !all.sysroot)
		return 1;
	uint64_t a = tsc_now_ns(t), b = tsc_now_ns_ordered(t);
	std::printf("%s\n", tsc_in_use(t) ? "TSC" : "fallback");
	tsc_close(t);
	return b < a;
}
EOF
for std in c++11 c++17 c++20; do
	for p in "" -pedantic; do
		c++ -std=$std -Wall -Wextra -Werror $p $inc "$d/opts.cc" "$TSC_TEST_LIBDIR/libtsc.a" \
			-lpthread -o "$d/opts" > "$d/e" 2>&1 && "$d/opts" > /dev/null ||
			{ sed 's/^/# /' "$d/e" | head -5
			  echo "# FAIL: a C++ program with TSC_OPTS and the inline reads: -std=$std -Wall -Wextra -Werror $p"
			  fail=1; }
	done
done
# Every inline read, optimized: -Wmaybe-uninitialized looks only then.
cat > "$d/reads.c" <<'EOF'
#include <time.h>
#include <tsc.h>

int main(void)
{
	struct tsc *t = tsc_open(NULL);
	uint64_t v = 0, s = 0;
	int rc = 0;

	if (!t)
		return 1;
	s += tsc_rdtsc() + tsc_rdtsc_ordered(t) + tsc_now_ns(t) + tsc_now_ns_ordered(t);
	s += tsc_ticks_to_ns(t, 1) + tsc_delta_to_ns(t, 1) + tsc_in_use(t);
	rc |= tsc_clock_gettime(t, CLOCK_MONOTONIC, &v);
	s += v;
	rc |= tsc_clock_gettime_ordered(t, CLOCK_REALTIME, &v);
	s += v;
	rc |= tsc_ns_to_clock(t, tsc_now_ns(t), CLOCK_TAI, &v);
	s += v;
	tsc_close(t);
	return rc || !s;
}
EOF
cp "$d/reads.c" "$d/reads.cc"
for o in -O2 -O3; do
	cc -std=gnu11 $o -Wall -Wextra -Werror $inc "$d/reads.c" "$TSC_TEST_LIBDIR/libtsc.a" \
		-lpthread -o "$d/reads" > "$d/e" 2>&1 && "$d/reads" ||
		{ sed 's/^/# /' "$d/e" | head -8; echo "# FAIL: every inline read, C $o -Werror"; fail=1; }
	c++ -std=c++17 $o -Wall -Wextra -Werror $inc "$d/reads.cc" "$TSC_TEST_LIBDIR/libtsc.a" \
		-lpthread -o "$d/reads" > "$d/e" 2>&1 && "$d/reads" ||
		{ sed 's/^/# /' "$d/e" | head -8; echo "# FAIL: every inline read, C++17 $o -Werror"; fail=1; }
done
# The reads are inline in a caller's loops at every level, -Os too,
# where a compiler would rather call a local copy of them (a call costs
# more than the read): the object holds no function but the loops.
cat > "$d/loops.c" <<'EOF'
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>
#include <tsc.h>

#define LOOP(name, expr)					\
	uint64_t name(struct tsc *t, unsigned long n)		\
	{							\
		uint64_t s = 0, v = 0;				\
		unsigned long i;				\
								\
		for (i = 0; i < n; i++) {			\
			(void)(expr);				\
			s += v;					\
		}						\
		return s;					\
	}

LOOP(loop_now, v = tsc_now_ns(t))
LOOP(loop_now_ordered, v = tsc_now_ns_ordered(t))
LOOP(loop_mono, tsc_clock_gettime(t, CLOCK_MONOTONIC, &v))
LOOP(loop_raw, tsc_clock_gettime(t, CLOCK_MONOTONIC_RAW, &v))
LOOP(loop_real, tsc_clock_gettime(t, CLOCK_REALTIME, &v))
LOOP(loop_boot, tsc_clock_gettime(t, CLOCK_BOOTTIME, &v))
LOOP(loop_tai, tsc_clock_gettime(t, CLOCK_TAI, &v))
LOOP(loop_ordered, tsc_clock_gettime_ordered(t, CLOCK_MONOTONIC, &v))
LOOP(loop_map, tsc_ns_to_clock(t, i, CLOCK_REALTIME, &v))
LOOP(loop_delta, v = tsc_delta_to_ns(t, i))
LOOP(loop_ticks, v = tsc_ticks_to_ns(t, i))
LOOP(loop_rdtsc, v = tsc_rdtsc_ordered(t))
EOF
for o in -O1 -O2 -O3 -Os; do
	cc -std=c11 $o -Wall -Wextra -Werror $inc -c "$d/loops.c" -o "$d/loops.o" > "$d/e" 2>&1 ||
		{ sed 's/^/# /' "$d/e" | head -8; echo "# FAIL: the loops, C $o"; fail=1; continue; }
	out=$(nm "$d/loops.o" | awk '$2 ~ /^[tT]$/ && $3 !~ /^loop_/ { print $3 }' | tr '\n' ' ')
	[ -z "$out" ] || { echo "# FAIL: $o leaves reads out of line: $out"; fail=1; }
done
# A caller with target options of its own (which GCC will not inline an
# always_inline function into) builds with TSC_NO_ALWAYS_INLINE; the
# header is clean under -Wcast-align=strict (GCC) and -Wcast-align
# (clang).
cat > "$d/target.c" <<'EOF'
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>
#include <tsc.h>

__attribute__((target("general-regs-only"))) uint64_t in_kernel_style(struct tsc *t)
{
	uint64_t v = 0;

	tsc_clock_gettime(t, CLOCK_MONOTONIC, &v);
	return v + tsc_now_ns(t);
}
EOF
cc -std=c11 -O2 -Wall -Wextra -Werror -DTSC_NO_ALWAYS_INLINE $inc -c "$d/target.c" -o "$d/target.o" \
	> "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -8; echo "# FAIL: TSC_NO_ALWAYS_INLINE in a target(...) function"; fail=1; }
cc -std=c11 -O2 -Wall -Wextra -Werror -Wcast-align=strict $inc -c "$d/loops.c" -o "$d/loops.o" \
	> "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -8; echo "# FAIL: tsc.h under -Wcast-align=strict"; fail=1; }
if command -v clang > /dev/null; then
	clang -std=c11 -O2 -Wall -Wextra -Werror -Wcast-align $inc -c "$d/loops.c" -o "$d/loops.o" \
		> "$d/e" 2>&1 ||
		{ sed 's/^/# /' "$d/e" | head -8; echo "# FAIL: tsc.h under clang -Wcast-align"; fail=1; }
fi
printf '#include <tsc.h>\nint main(void) { TSC_OPTS(o, ); return o.sz != sizeof(o) || o.no_watcher; }\n' > "$d/none.c"
cc -std=c11 -Wall -Wextra -Werror -pedantic $inc "$d/none.c" -o "$d/none" && "$d/none" ||
	{ echo "# FAIL: TSC_OPTS(o, ) as C11 -pedantic"; fail=1; }
rm -rf "$d"
exit $fail
