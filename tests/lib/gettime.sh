#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# tscinfo's clock_gettime verdict follows what it measures, not the
# clocksource's name.  tests/lib/gettimeshim.so (LD_PRELOAD) changes
# what the calls cost on this machine: with clock_gettime() costing the
# system call, the verdict must be "slow"; with the system call 20 times
# dearer, "fast"; one clocksource, two verdicts, so no list of names can
# pass both.  The figures stand beside the verdict in text and JSON and
# agree with it; the metrics say "measured"; --no-cost measures nothing.
# shellcheck disable=SC2046 # set -- $(facts ...): its five words, split
set -u
ti=$TSCINFO
shim=$TSC_TEST_GETTIMESHIM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gettime.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "# FAIL: $*"; fail=1; }

run() {		# run MODE ARGS...: tscinfo with the shim in MODE (as-is: none)
	mode=$1
	shift
	env LD_PRELOAD="$shim" TSC_TEST_GETTIME="$mode" "$ti" "$@"
	rc=$?
	[ $rc -le 1 ] || no "TSC_TEST_GETTIME=$mode tscinfo $*: exit $rc"
}

# facts MODE: "KIND FROM COST SYSCALL-COST CLOCKSOURCE" from --json,
# five words whatever happens.
facts() {
	run "$1" --json > "$tmp/json"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/json" 2> /dev/null ||
		{ no "TSC_TEST_GETTIME=$1 tscinfo --json: not JSON"; echo "? ? ? ? ?"; return; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cost_ns"] or {}
print(d["clock_gettime"], d["clock_gettime_from"], c.get("clock_gettime"),
      c.get("clock_gettime_syscall"), d["clocksource"] or "none")' "$tmp/json"
}

# The kernel's word (current_clocksource_vdso, the tsckit series) is the
# verdict where it is there: nothing here is then decided by a measurement.
set -- $(facts as-is)
if [ "${2:-}" = current_clocksource_vdso ]; then
	echo "SKIP: the kernel says whether the vDSO serves clock_gettime (current_clocksource_vdso)"
	exit 77
fi
clocksource=${5:-none}
echo "clocksource $clocksource"

# The text line: the verdict, the figures, "measured"; fast exactly when
# the call costs less than half the system call.
line_agrees() {	# line_agrees MODE WANT: WANT fast, slow or either
	run "$1" > "$tmp/txt"
	line=$(grep '^clock_gettime:' "$tmp/txt")
	echo "$1: $line"
	echo "$line" | awk -v want="$2" '
		match($0, /, [0-9.]+ ns a call \(the system call: [0-9.]+ ns\) \(measured\)$/) {
			split(substr($0, RSTART), f, /[ :]+/)
			cg = f[2]; sc = f[9]
			verdict = $2 == "fast:" ? "fast" : $2 == "slow:" ? "slow" : "?"
			measured = cg * 2 < sc ? "fast" : "slow"
			if (verdict != measured) {
				print "# FAIL: " verdict " beside " cg " ns against " sc " ns"
				exit 1
			}
			if (want != "either" && verdict != want) {
				print "# FAIL: " verdict ", want " want
				exit 1
			}
			exit 0
		}
		{ print "# FAIL: no figures and (measured) beside the verdict"; exit 1 }' || fail=1
}
line_agrees as-is either
line_agrees syscall slow
line_agrees slow-syscall fast

# The same in JSON, with the clocksource: one name, both verdicts.
set -- $(facts syscall)
echo "syscall: clock_gettime=$1 from=$2 cost=$3 syscall=$4 clocksource=$5"
[ "$1 $2" = "syscall measured" ] ||
	no "clock_gettime() at the system call's cost: JSON says $1 from $2, want syscall from measured"
slow_cs=$5
set -- $(facts slow-syscall)
echo "slow-syscall: clock_gettime=$1 from=$2 cost=$3 syscall=$4 clocksource=$5"
[ "$1 $2" = "vdso measured" ] ||
	no "the system call 20 times dearer: JSON says $1 from $2, want vdso from measured"
[ "$5" = "$slow_cs" ] ||
	no "the clocksource changed between the runs ($slow_cs, $5): the verdicts prove nothing"

# The metrics and the log line take the same verdict.
run syscall --format=prometheus > "$tmp/prom"
grep -qx 'tsc_clock_gettime_vdso 0' "$tmp/prom" &&
	grep -qx 'tsc_clock_gettime_vdso_info{from="measured"} 1' "$tmp/prom" ||
	no "metrics at the system call's cost: $(grep '^tsc_clock_gettime' "$tmp/prom" | tr '\n' ' ')"
run slow-syscall --format=prometheus > "$tmp/prom"
grep -qx 'tsc_clock_gettime_vdso 1' "$tmp/prom" ||
	no "metrics, the system call dearer: $(grep '^tsc_clock_gettime' "$tmp/prom" | tr '\n' ' ')"
run syscall --format=log | grep -q ' clock_gettime=syscall ' ||
	no "--format=log at the system call's cost does not say clock_gettime=syscall"

# --no-cost measures nothing: no figures, the clocksource's name decides,
# whatever the calls cost (the metrics unit runs so).
run syscall --no-cost > "$tmp/txt"
grep '^clock_gettime:' "$tmp/txt"
grep -q '^clock_gettime: .*(inferred from the clocksource; not measured)$' "$tmp/txt" ||
	no "--no-cost: the verdict is not inferred from the clocksource"
! grep -q 'ns a call' "$tmp/txt" || no "--no-cost prints a measured cost"
run syscall --json --no-cost > "$tmp/json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cost_ns"] is None, d["cost_ns"]
assert d["clock_gettime_from"] == "clocksource", d["clock_gettime_from"]' "$tmp/json" ||
	no "--json --no-cost: cost_ns not null or clock_gettime_from not clocksource"
a=$(run syscall --format=prometheus --no-cost | grep '^tsc_clock_gettime')
b=$(run slow-syscall --format=prometheus --no-cost | grep '^tsc_clock_gettime')
[ "$a" = "$b" ] || no "--no-cost metrics depend on what the calls cost: '$a' against '$b'"
echo "$a" | grep -qx 'tsc_clock_gettime_vdso_info{from="clocksource"} 1' ||
	no "--no-cost metrics: $a"
exit $fail
