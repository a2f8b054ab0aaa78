#!/bin/bash
# SPDX-License-Identifier: MIT OR LGPL-2.1
# lib/src and tools/tscbench read bottom-up: each file calls only files
# of lower layers, and the files of one layer call each other one way at
# most (no circle).  The layers are the "layer:" lines of the header's
# comment (lib/src/internal.h, tools/tscbench/tscbench.h), lowest first,
# so that the test and the text cannot disagree; every source file must
# be in one.  Each file is compiled on its own and nm says what it
# defines and what it takes from the others: a function or a variable.
# Every call against the order is listed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# tsc.h includes the generated tsc-version.h: made here, as lib/Makefile makes it.
make -s --no-print-directory -C "$top/lib" O="$tmp/lib" "$tmp/lib/include/tsc-version.h" || exit 1
cflags="-O2 -w -std=gnu11 -D_GNU_SOURCE -I$top/lib/include -I$tmp/lib/include
	-I$top/lib/src -I$top/tools/common"

# check NAME HEADER DIR: the .c files of DIR against HEADER's layers.
check() {
	local name=$1 header=$2 dir=$3 o=$tmp/$1 f
	local hdr=${2#"$top"/} rel=${3#"$top"/}
	mkdir -p "$o"

	# "file level" for each file named on a "layer:" line.
	sed -n 's/^ \* layer: *//p' "$header" | sed 's/(.*//' |
		awk '{ for (i = 1; i <= NF; i++) print $i, NR }' > "$o/layers"
	if [ ! -s "$o/layers" ]; then
		echo "# FAIL: $name: no \"layer:\" lines in $hdr"
		fail=1
		return
	fi
	awk 'seen[$1]++ { print "# FAIL: '"$name"': " $1 " is in two layers" }' \
		"$o/layers" | grep . && fail=1
	for f in "$dir"/*.c; do
		f=$(basename "$f" .c)
		awk -v f="$f" '$1 == f { found = 1 } END { exit !found }' "$o/layers" || {
			echo "# FAIL: $name: $f.c is in no layer of $hdr"
			fail=1
		}
	done
	while read -r f _; do
		[ -f "$dir/$f.c" ] || {
			echo "# FAIL: $name: $hdr names $f, which is not in $rel"
			fail=1
		}
	done < "$o/layers"

	# Compile each file alone; nm: "symbol file" defined, and taken.
	for f in "$dir"/*.c; do
		# shellcheck disable=SC2086
		$cc $cflags -c -o "$o/$(basename "$f" .c).o" "$f" || {
			echo "# FAIL: $name: $f does not compile"
			fail=1
		}
	done
	for f in "$o"/*.o; do
		nm -g --defined-only "$f" | awk -v f="$(basename "$f" .o)" '{ print $3, f }'
	done | sort > "$o/defs"
	for f in "$o"/*.o; do
		nm -u "$f" | awk -v f="$(basename "$f" .o)" '{ print $2, f }'
	done | sort > "$o/uses"
	# "from to symbol", for each symbol a file takes from another.
	join "$o/uses" "$o/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u > "$o/calls"

	awk -v name="$name" '
		FILENAME ~ /layers$/ { level[$1] = $2; next }
		!($1 in level) || !($2 in level) { next }
		level[$1] < level[$2] {
			printf "# FAIL: %s: %s.c calls up into %s.c: %s (layer %d -> %d)\n",
				name, $1, $2, $3, level[$1], level[$2]
			up++
		}
		level[$1] == level[$2] { side[$1 " " $2] = $3; file[$1] = 1; file[$2] = 1 }
		END {
			# Within a layer: which file reaches which, by its calls
			# (a closure over a few files); a call from f to g where
			# g reaches f goes around a circle.
			for (k in side)
				reach[k] = 1
			for (m in file)
				for (f in file)
					for (g in file)
						if (((f " " m) in reach) && ((m " " g) in reach))
							reach[f " " g] = 1
			for (k in side) {
				split(k, p, " ")
				if ((p[2] " " p[1]) in reach) {
					printf "# FAIL: %s: %s.c calls %s.c of its own layer, which calls back: %s\n",
						name, p[1], p[2], side[k]
					circle++
				}
			}
			printf "# %s: %d calls up, %d calls in a circle within a layer\n",
				name, up + 0, circle + 0
			exit up + circle > 0
		}' "$o/layers" "$o/calls" || fail=1
}

check lib/src "$top/lib/src/internal.h" "$top/lib/src"
check tools/tscbench "$top/tools/tscbench/tscbench.h" "$top/tools/tscbench"
exit $fail
