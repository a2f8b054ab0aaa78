#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# Every manual page as installed (scripts/gen-man): man --warnings
# (groff -ww) says nothing, .TH has lib/VERSION and the date of
# debian/changelog's first entry, nothing is left unfilled, no label's
# closing quote is lost, and tscinfo(1)'s SEE ALSO names its siblings.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
no() { echo "# FAIL: $*"; fail=1; }
command -v man > /dev/null || { echo "# SKIP: no man (scripts/install-deps: man-db)"; exit 77; }

pages="$top/lib/man/*.3 $top/tools/*/*.1"
# shellcheck disable=SC2086
"$top/scripts/gen-man" "$d" $pages || { no "gen-man failed"; exit 1; }
version=$(cat "$top/lib/VERSION")
date=$(date -u -d "$(sed -n 's/^ -- .*>  //p' "$top/debian/changelog" | head -n 1)" +%Y-%m-%d)
n=0
cd "$d" || exit 1
for p in man1/*.1 man3/*.3; do
	n=$((n + 1))
	# From the tree's root, as man finds .so pages: man3/tsc_open.3.
	LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -E UTF-8 -l "$p" > "$d/out" 2> "$d/err"
	[ -s "$d/err" ] && { no "$p: man --warnings:"; sed 's/^/#   /' "$d/err"; }
	[ -s "$d/out" ] || no "$p: renders to nothing"
	grep -q '@[A-Z]*@' "$p" && no "$p: a placeholder left: $(grep '@[A-Z]*@' "$p")"
	if grep -q '^\.TH' "$p"; then
		th=$(grep '^\.TH' "$p")
		case $th in
		*" $date \"libtsc $version\" "*|*" $date \"tsckit $version\" "*) ;;
		*) no "$p: '$th', want date $date and version $version" ;;
		esac
	fi
	# A label's value in quotes: ="value" with both quotes.
	if grep -E '[a-z]="[^" ]*[}.,]' "$d/out" | grep -vE '="[^"]*"' > "$d/q"; then
		no "$p: a quote lost:"
		sed 's/^/#   /' "$d/q"
	fi
	# A macro's argument list eating the next sentence: "(x(1)).A".
	if grep -E '\)\.[A-Z]' "$d/out" > "$d/q"; then
		no "$p: a sentence glued to a macro's last word:"
		sed 's/^/#   /' "$d/q"
	fi
	[ "$p" = man1/tscinfo.1 ] && cp "$d/out" "$d/tscinfo.txt"
done
for s in "tscbench(1)" "tsc-capture-sysroot(1)" "libtsc(3)"; do
	sed -n '/^SEE ALSO/,$p' "$d/tscinfo.txt" | grep -qF "$s" || no "tscinfo(1): SEE ALSO lacks $s"
done
# tsc-capture-sysroot(1) promises no replay as live: it says what a
# replay does not reproduce, and the line tscinfo shows where a replay
# (captured-perf) differs from the live decision at capture (issue 33, 9).
cs=$top/tools/tscinfo/tsc-capture-sysroot.1
grep -q 'as it would have here' "$cs" && no "tsc-capture-sysroot(1): promises that a replay answers as live"
for w in 'WHAT A REPLAY REPRODUCES' 'does not reproduce' "perf's conversion factors" \
	'calibration' '__vdso_tsc_raw()' 'PR_SET_TSC' 'clock_gettime' 'cross-CPU check' \
	'"at capture, live:"' '"captured_live"'; do
	grep -qF -- "$w" "$cs" || no "tsc-capture-sysroot(1): no '$w'"
done
if [ -n "${TSCINFO:-}" ] && [ -n "${TSC_TEST_VARIANTS:-}" ]; then
	"$TSCINFO" --sysroot "$TSC_TEST_VARIANTS/captured-perf" | grep -q '^at capture, live: ' ||
		no "tscinfo --sysroot captured-perf: no 'at capture, live:' line, as tsc-capture-sysroot(1) says"
fi
echo "# $n pages"
[ "$n" -ge 25 ] || no "only $n pages"
exit $fail
