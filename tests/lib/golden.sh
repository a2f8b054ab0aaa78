#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# tscinfo --sysroot on every captured and hand-made dump, text, JSON and
# Prometheus metrics, against tests/lib/golden/NAME.{txt,json,prom}.
# golden.sh --update rewrites them (review the diff before committing).
set -u
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/golden
ti=$(cd "$(dirname "$TSCINFO")" && pwd)/$(basename "$TSCINFO")
fail=0 n=0
mkdir -p "$golden"
for base in "$here/../sysroots" "$TSC_TEST_VARIANTS"; do
	for d in "$base"/*/; do
		name=$(basename "$d")
		for fmt in txt json prom; do
			opt=; [ $fmt = json ] && opt=--json
			[ $fmt = prom ] && opt=--format=prometheus
			out=$(cd "$base" && "$ti" $opt --sysroot "$name" 2>&1; echo "exit $?")
			if [ "${1:-}" = --update ]; then
				printf '%s\n' "$out" > "$golden/$name.$fmt"
			elif ! printf '%s\n' "$out" | diff -u "$golden/$name.$fmt" - > /tmp/golden.$$ 2>&1; then
				echo "# FAIL: $name.$fmt differs:"
				sed 's/^/# /' /tmp/golden.$$ | head -20
				fail=1
			fi
			n=$((n + 1))
		done
	done
done
rm -f /tmp/golden.$$
echo "# $n outputs compared"
[ $n -gt 40 ] || { echo "# FAIL: only $n outputs"; fail=1; }
exit $fail
