#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# aarch64.sh [--required]: libtsc off x86-64.  tsc.h (C11 -pedantic, and
# C++17 with TSC_OPTS out of order), libtsc.a, libtsc.so and tscinfo
# build for aarch64, and the fallback tests (fallback.c, portable.c, the
# latter linked both ways) and tscinfo run under qemu-user: no TSC, a
# reason that says so (arch_tsc), reads from the fallback clock.
#
# Built with clang --target=aarch64-linux-gnu and lld, not Debian's
# gcc-aarch64-linux-gnu: on Debian 12 that conflicts with gcc-multilib,
# which the 32-bit and x32 guest tests need.  The packages
# (scripts/install-deps): clang, lld, libc6-dev-arm64-cross,
# libgcc-12-dev-arm64-cross, qemu-user.  Without them the test skips
# when run by hand, and fails with --required (runtests, make check)
# or CI=true, where install-deps has installed them.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
required=no
[ "${1:-}" = --required ] || [ "${CI:-}" = true ] && required=yes
target=aarch64-linux-gnu
sysroot=/usr/$target
cc="clang --target=$target"
qemu="qemu-aarch64 -L $sysroot"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
no() { echo "# FAIL: $*"; fail=1; }
run() {		# run WHAT COMMAND...: its output as comments, and FAIL unless it exits 0
	what=$1
	shift
	"$@" > "$d/out" 2>&1 || no "$what (exit status $?)"
	sed 's/^# //; s/^/# /' "$d/out"
}

# The tools, tried: a C program built, linked and run.
printf '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n' > "$d/hello.c"
why=
for p in clang ld.lld qemu-aarch64; do
	command -v $p > /dev/null || why="$why $p"
done
[ -n "$why" ] && why="not installed:$why"
if [ -z "$why" ] && ! $cc -fuse-ld=lld "$d/hello.c" -o "$d/hello" > "$d/e" 2>&1; then
	why="$cc cannot link a C program (libc6-dev-arm64-cross, libgcc-12-dev-arm64-cross?): $(head -c 300 "$d/e")"
elif [ -z "$why" ] && [ "$($qemu "$d/hello" 2>&1)" != ok ]; then
	why="$qemu does not run an aarch64 program"
fi
if [ -n "$why" ]; then
	if [ $required = yes ]; then
		echo "# FAIL: $why (scripts/install-deps installs them)"
		exit 1
	fi
	echo "SKIP: $why (scripts/install-deps installs them)"
	exit 77
fi

# tsc.h stopped here with #error "... x86-64 only" before it was portable.
inc="-I$top/lib/include -I$d/lib/include"
make -s -C "$top/lib" O="$d/lib" CC="$cc" LDFLAGS=-fuse-ld=lld > "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -20; echo "# FAIL: libtsc does not build for $target"; exit 1; }
printf '#include <tsc.h>\nint main(void) { return 0; }\n' > "$d/h.c"
$cc -std=c11 -Wall -Wextra -Werror -pedantic $inc -fsyntax-only "$d/h.c" > "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -5; no "tsc.h as C11 -pedantic for $target"; }
# C++ without the target's libstdc++: tsc.h includes C headers only.
cat > "$d/o.cc" <<'EOF'
#include <tsc.h>
int main()
{
	TSC_OPTS(o, .all_facts = true, .no_watcher = true, .sysroot = "x");
	return !o.all_facts;
}
EOF
clang++ --target=$target -std=c++17 -Wall -Wextra -Werror -pedantic $inc -fsyntax-only "$d/o.cc" \
	> "$d/e" 2>&1 || { sed 's/^/# /' "$d/e" | head -5; no "tsc.h as C++17 for $target"; }

tflags="-O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE $inc"
for x in fallback portable; do
	$cc -fuse-ld=lld $tflags -o "$d/$x" "$top/tests/lib/$x.c" "$d/lib/libtsc.a" -lpthread -ldl \
		> "$d/e" 2>&1 || { sed 's/^/# /' "$d/e" | head -10; no "$x.c does not build for $target"; }
done
$cc -fuse-ld=lld $tflags -o "$d/portable-so" "$top/tests/lib/portable.c" -L"$d/lib" -ltsc \
	> "$d/e" 2>&1 || { sed 's/^/# /' "$d/e" | head -10; no "portable.c with libtsc.so"; }
make -s -C "$top/tools/tscinfo" O="$d/tools" LIBO="$d/lib" CC="$cc" LDFLAGS=-fuse-ld=lld \
	"$d/tools/tscinfo" > "$d/e" 2>&1 ||
	{ sed 's/^/# /' "$d/e" | head -10; no "tscinfo does not build for $target"; }
[ $fail = 0 ] || exit 1

if [ -z "${TSC_TEST_VARIANTS:-}" ]; then	# by hand: fallback.c's empty dump
	TSC_TEST_VARIANTS=$d/variants
	"$top/tests/sysroots/make-variants" "$TSC_TEST_VARIANTS" > /dev/null
fi
export TSC_TEST_VARIANTS
run "fallback.c under $qemu" timeout 120 $qemu "$d/fallback"
run "portable.c under $qemu" timeout 120 $qemu "$d/portable"
run "portable.c, libtsc.so, under $qemu" env LD_LIBRARY_PATH="$d/lib" timeout 120 $qemu "$d/portable-so"
# tscinfo: not usable (exit status 1), and why.
timeout 120 $qemu "$d/tools/tscinfo" --no-cost --json > "$d/j" 2> "$d/e"
rc=$?
grep -q '"code": *"arch_tsc"' "$d/j" || no "tscinfo --json: no reason arch_tsc"
[ $rc = 1 ] || { sed 's/^/# /' "$d/e" | head -5; no "tscinfo exit status $rc, want 1 (not usable)"; }
timeout 120 $qemu "$d/tools/tscinfo" --no-cost | grep '^why:' | sed 's/^/# tscinfo: /'
exit $fail
