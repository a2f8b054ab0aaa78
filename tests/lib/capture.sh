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
	live=$("$TSCINFO" --no-cost --calibrate | head -1)	# as the replay: a stock kernel on the TSC without perf's factors calibrates
	dump=$("$TSCINFO" --sysroot "$d/dump" --calibrate | head -1)
	[ "$live" = "$dump" ] || no "$sh: live '$live', dump '$dump'"
	# The live decision kept beside the facts (tsckit/live-state) ...
	grep -q '^tscinfo: state usable=[01] ' "$d/dump/tsckit/live-state" ||
		no "$sh: tsckit/live-state is not tscinfo's log line"
	# ... and where the kernel log may be read, its lines about the TSC,
	# which the replay quotes as the live run does: the kernel log's
	# lines and the frequency it found there.
	if dmesg > /dev/null 2>&1; then
		[ -f "$d/dump/tsckit/kernel-log" ] || no "$sh: kernel log readable, no tsckit/kernel-log"
		! grep -q 'ommand line' "$d/dump/tsckit/kernel-log" ||
			no "$sh: tsckit/kernel-log keeps the kernel's command line"
		for what in '^kernel log:\|^  *\[' '^TSC frequency:.*kernel log'; do
			l=$("$TSCINFO" --no-cost | grep "$what")
			r=$("$TSCINFO" --sysroot "$d/dump" | grep "$what")
			[ "$l" = "$r" ] || no "$sh: live '$l', replayed '$r'"
		done
	else
		echo "# kernel log not readable here: tsckit/kernel-log not tried"
	fi
done
# The command line: an option is refused by the script, not by mkdir,
# with exit 2 and the usage under the name it was run as.
cp "$top/tools/tscinfo/capture-sysroot" "$d/tsc-capture-sysroot"
for a in --bogus -x; do
	(cd "$d" && sh ./tsc-capture-sysroot $a) > "$d/o" 2>&1
	rc=$?
	[ "$rc" = 2 ] || no "tsc-capture-sysroot $a: exit $rc, want 2"
	grep -q "^tsc-capture-sysroot: unknown option '$a'" "$d/o" ||
		no "tsc-capture-sysroot $a: $(head -1 "$d/o")"
	grep -q "^usage: tsc-capture-sysroot DIR" "$d/o" || no "tsc-capture-sysroot $a: no usage"
	! grep -q mkdir "$d/o" || no "tsc-capture-sysroot $a: mkdir's error leaks"
	[ ! -e "$d/$a" ] || no "tsc-capture-sysroot $a: made $a"
done
sh "$d/tsc-capture-sysroot" > "$d/o" 2>&1
[ $? = 2 ] && grep -q "^usage: tsc-capture-sysroot DIR" "$d/o" || no "no DIR: not exit 2 with usage"
sh "$d/tsc-capture-sysroot" --help > "$d/o" 2>&1 || no "--help: exit $?"
grep -q "^usage: tsc-capture-sysroot DIR" "$d/o" || no "--help: no usage"
# Its every message under the name it was run as.
TSCINFO=$TSCINFO sh "$d/tsc-capture-sysroot" "$d/named" > "$d/o" 2>&1
[ "$(cat "$d/o")" = "tsc-capture-sysroot: $d/named" ] || no "a capture says: $(cat "$d/o")"
rm -rf "$d"
exit $fail
