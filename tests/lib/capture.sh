#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# capture-sysroot under busybox sh (as in the guest) and dash: the files
# are there and tscinfo decides from them as it does live.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d)
fail=0
no() { echo "# FAIL: $*"; fail=1; }
for sh in "busybox sh" sh; do
	command -v ${sh%% *} > /dev/null || continue
	rm -rf "$d/dump"
	TSCINFO=$TSCINFO $sh "$top/tools/tscinfo/capture-sysroot" "$d/dump" > /dev/null ||
		no "$sh: capture failed"
	for f in proc/cpuinfo sys/devices/system/clocksource/clocksource0/current_clocksource \
		tsckit/cpuid tsckit/info; do
		[ -s "$d/dump/$f" ] || no "$sh: $f missing or empty"
	done
	live=$("$TSCINFO" --no-cost | head -1)
	dump=$("$TSCINFO" --sysroot "$d/dump" --calibrate | head -1)
	[ "$live" = "$dump" ] || no "$sh: live '$live', dump '$dump'"
done
rm -rf "$d"
exit $fail
