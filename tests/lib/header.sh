#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# tsc.h compiles as strict ISO C11 (-pedantic) and as C++17, stops at its
# #error off x86-64, and a C11 program that uses its options macro and
# inline reads links and runs.
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
# Off x86-64 (__x86_64__ taken away) it stops at its #error, not later.
cc -U__x86_64__ -std=c11 $inc -fsyntax-only "$d/h.c" > "$d/e" 2>&1 &&
	{ echo "# FAIL: tsc.h compiles without __x86_64__"; fail=1; }
grep -q "error.*x86-64 only" "$d/e" ||
	{ sed 's/^/# /' "$d/e" | head -5; echo "# FAIL: no #error off x86-64"; fail=1; }
cc -std=c11 -Wall -Wextra -Werror -pedantic $inc "$top/tests/lib/example.c" "$TSC_TEST_LIBDIR/libtsc.a" \
	-lpthread -o "$d/use" && "$d/use" > /dev/null ||
	{ echo "# FAIL: a C11 -pedantic program with TSC_OPTS and the inline reads"; fail=1; }
rm -rf "$d"
exit $fail
