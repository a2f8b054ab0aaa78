#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# tscinfo's command line: usage errors exit 2 with a hint, help and
# version exit 0, the verdict is the exit status, --watch sees a change.
set -u
ti=$TSCINFO
fail=0
no() { echo "# FAIL: $*"; fail=1; }

expect() {	# expect STATUS PATTERN ARGS...: exit status and stderr text
	want=$1 pat=$2
	shift 2
	"$ti" "$@" > /tmp/cli.$$.out 2> /tmp/cli.$$.err
	rc=$?
	[ "$rc" = "$want" ] || no "tscinfo $*: exit $rc, want $want"
	grep -q -- "$pat" /tmp/cli.$$.err /tmp/cli.$$.out || no "tscinfo $*: no '$pat' in output"
}

expect 2 "unrecognized option '--bogus'" --bogus
expect 2 "Try 'tscinfo --help'" --bogus
expect 2 "invalid option -- 'q'" -q
expect 2 "requires an argument" --sysroot
expect 2 "invalid --count" --watch --count 0
expect 2 "invalid --count" --watch --count abc
expect 2 "invalid --timeout" --watch --timeout -1
# --timeout's range is what millis() takes: 1 ms after rounding to a year.
for t in 1e9 0.0001 inf -1 0; do
	expect 2 "invalid --timeout '$t': seconds, from 0.0005 to 31536000 (a year)" -w -t $t
done
expect 2 "go with --watch" --count 3
expect 2 "unexpected argument" extra
expect 2 "invalid --cross-cpu" --cross-cpu=0
expect 2 "invalid --format 'xml': text, json, prometheus or log" --format=xml
expect 2 "does not go with --watch" --watch --format=prometheus
expect 2 "output does not go with --watch" --watch --output /tmp/cli.$$.x
expect 2 "output needs a file name" --output ""
# -x's milliseconds are an optional argument: in the option's word, as
# getopt_long wants; a separate number is refused with the way to write it.
expect 2 "the cross-CPU check's milliseconds go in the option's word: -x50 or --cross-cpu=50" -x 50
expect 2 "unexpected argument '50'" --cross-cpu 50
expect 2 "not with --sysroot" -x50 --sysroot "$TSC_TEST_VARIANTS/patched-good"
expect 0 "Usage:" --help
expect 0 "Usage:" -h
expect 0 "libtsc" -V
# Every write is checked: a full disk is a runtime error, said on stderr.
full() {	# full ARGS...: tscinfo ARGS > /dev/full
	"$ti" "$@" > /dev/full 2> /tmp/cli.$$.err; rc=$?
	[ "$rc" = 3 ] || no "tscinfo $* > /dev/full: exit $rc, want 3"
	grep -qx "tscinfo: write error: No space left on device" /tmp/cli.$$.err ||
		no "tscinfo $* > /dev/full: no 'write error: No space left on device' on stderr"
}
full
full --help
full -V
for f in json prometheus log; do
	full --format=$f --sysroot "$TSC_TEST_VARIANTS/patched-good"
done
expect 1 "RDTSC usable: *no" --sysroot "$TSC_TEST_VARIANTS/stable-0"
expect 0 "RDTSC usable: *yes" --sysroot "$TSC_TEST_VARIANTS/patched-good"
expect 2 "needs a directory" --sysroot ""
expect 3 "sysroot /nonexistent/dump: No such file" --sysroot /nonexistent/dump
: > /tmp/cli.$$.file
expect 3 "not a directory" --sysroot /tmp/cli.$$.file

# Hostile dumps: a FIFO where a number should be reads as empty (no hang),
# and a path or a file that is not UTF-8 still gives valid UTF-8 JSON.
bad=/tmp/cli.$$.$(printf 'bad\377\300\200name')
cp -r "$TSC_TEST_VARIANTS/patched-good" "$bad"
rm -f "$bad/sys/devices/system/tsc/tsc0/tsc_stable"
mkfifo "$bad/sys/devices/system/tsc/tsc0/tsc_stable"
timeout 10 "$ti" --sysroot "$bad" > /tmp/cli.$$.out 2>&1; rc=$?
[ "$rc" = 1 ] || no "a FIFO in the dump: exit $rc, want 1 (124: it hung)"
grep -q "tsc_stable: empty" /tmp/cli.$$.out || no "a FIFO in the dump: no 'tsc_stable: empty' reason"
timeout 10 "$ti" --json --sysroot "$bad" > /tmp/cli.$$.out 2>&1
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); assert "\ufffd" in d["sysroot"]' \
	/tmp/cli.$$.out || no "--json with a non-UTF-8 path is not UTF-8 JSON with U+FFFD"
rm -rf "$bad"
# ... and so do bytes that are not UTF-8 in a file: the command line's
# parameters are quoted in the reasons.
bad=/tmp/cli.$$.cmdline
cp -r "$TSC_TEST_VARIANTS/patched-good" "$bad"
printf 'ro clocksource=hp\377et tsc=un\300stable\n' > "$bad/proc/cmdline"
timeout 10 "$ti" --json --sysroot "$bad" > /tmp/cli.$$.out 2>&1
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); assert any("hp\ufffdet" in r["text"] for r in d["reasons"])' \
	/tmp/cli.$$.out || no "--json with bytes that are not UTF-8 in /proc/cmdline is not UTF-8 JSON with U+FFFD"
rm -rf "$bad"
expect 3 "cannot write" --dump-vdso /nonexistent/dir/vdso.img
"$ti" -x20 --no-cost | grep -q "cross-CPU check:" || no "-x20: no cross-CPU result"
"$ti" --json --sysroot "$TSC_TEST_VARIANTS/patched-good" | python3 -m json.tool > /dev/null ||
	no "--json is not JSON"
"$ti" --json --no-cost > /tmp/cli.$$.out; rc=$?
[ "$rc" -le 1 ] || no "tscinfo --json: exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d["tsc_usable"], bool); assert d["reasons"]' /tmp/cli.$$.out ||
	no "live --json lacks fields"
"$ti" --cross-cpu=50 > /tmp/cli.$$.out; rc=$?
grep -q "cross-CPU check:" /tmp/cli.$$.out || no "--cross-cpu: no result line (exit $rc)"

# --cross-cpu live: on every CPU this process may use, on one (taskset -c
# 0), and where RDTSC may not run (PR_SET_TSC): figures or words, never a
# placeholder (a CPU -1, UINT64_MAX, "0 ticks (0 ns)" for a step nobody
# saw).  One CPU has no other to compare with: "not measured".
nordtsc='not measured: RDTSC may not be executed in this process$'
xcpu() {	# xcpu NAME WANT [PREFIX...]: tscinfo -x50 run by PREFIX
	name=$1 want=$2 cpus=many
	[ "$name" = "taskset -c 0" ] && cpus=one
	shift 2
	"$@" "$ti" -x50 --no-cost --verbose > /tmp/cli.$$.out 2>&1
	rc=$?
	line=$(grep '^cross-CPU check:' /tmp/cli.$$.out)
	echo "# --cross-cpu, $name: $line"
	[ "$rc" -le 1 ] || no "--cross-cpu, $name: exit $rc"
	echo "$line" | sed 's/^cross-CPU check: *//' | grep -qE -- "$want|$nordtsc" ||
		no "--cross-cpu, $name: the line is not '$want'"
	if grep -nE -- '(^|[^0-9.])-1([^0-9]|$)|18446744073709551615|[^0-9]0 ticks|\(0 ns\)|(^|[^0-9])1 CPUs' \
		/tmp/cli.$$.out > /tmp/cli.$$.ph; then
		no "--cross-cpu, $name: placeholders:"
		sed 's/^/# /' /tmp/cli.$$.ph
	fi
	# Not measured: null, and cross_cpu_why the text's why; else null.
	"$@" "$ti" -x50 --no-cost --json 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
x, why = d["cross_cpu"], d["cross_cpu_why"]
assert x is None or sys.argv[1] != "one", ("one CPU: cross_cpu is not null", x)
assert x is None or not [k for k, v in x.items() if v in (-1, 2**64 - 1)], x
assert x is None or x["backward"] or x["worst_ns"] is None, x
text = sys.argv[2].split("not measured: ", 1)
assert why == (text[1] if len(text) == 2 else None), ("cross_cpu_why", why, sys.argv[2])
assert (x is None) == (why is not None), (x, why)' "$cpus" "$line" ||
		no "--cross-cpu --json, $name: a placeholder in cross_cpu, not null on one CPU, or cross_cpu_why not the text's why"
	# The log line and the metrics say what the text says: its keys
	# last, or not_measured and the same why; the CPUs as gauges, or
	# none and the why on stderr.
	"$@" "$ti" -x50 --no-cost --format=log > /tmp/cli.$$.log 2>&1
	"$@" "$ti" -x50 --no-cost --format=prometheus > /tmp/cli.$$.prom 2> /tmp/cli.$$.err
	echo "# --cross-cpu --format=log, $name: ...$(sed 's/.*why_codes=[^ ]*//' /tmp/cli.$$.log)"
	case $line in
	*"not measured: "*)
		why=${line#*not measured: }
		grep -q " cross_cpu=not_measured cross_cpu_why=\"$why\"\$" /tmp/cli.$$.log ||
			no "--cross-cpu --format=log, $name: no 'cross_cpu=not_measured cross_cpu_why=\"$why\"' at the end"
		! grep -q '^tsc_cross_cpu' /tmp/cli.$$.prom && grep -q "not measured: $why" /tmp/cli.$$.err ||
			no "--cross-cpu --format=prometheus, $name: not measured, yet metrics or no why on stderr" ;;
	*)
		n=$(echo "$line" | sed -E 's/^cross-CPU check: *([0-9]+) CPUs.*/\1/')
		grep -qE " cross_cpu=(ok|backward) cross_cpu_cpus=$n cross_cpu_reads=[0-9]+ cross_cpu_backward=[0-9]+( cross_cpu_worst_ticks=[0-9]+( cross_cpu_worst_ns=[0-9]+)?( cross_cpu_from=[0-9]+ cross_cpu_to=[0-9]+)?)?\$" \
			/tmp/cli.$$.log || no "--cross-cpu --format=log, $name: no cross_cpu keys for $n CPUs at the end"
		grep -qx "tsc_cross_cpu_cpus $n" /tmp/cli.$$.prom &&
			grep -qE '^tsc_cross_cpu_reads [1-9][0-9]*$' /tmp/cli.$$.prom &&
			grep -qE '^tsc_cross_cpu_backward_reads [0-9]+$' /tmp/cli.$$.prom ||
			no "--cross-cpu --format=prometheus, $name: no tsc_cross_cpu_{cpus,reads,backward_reads}" ;;
	esac
}
measured='^[0-9]+ CPUs, [0-9]+ reads, (none went back|[0-9]+ backward, worst [0-9]+ ticks \(([0-9]+ ns|ns unknown: no frequency)\), CPU [0-9]+ -> [0-9]+)$'
if [ "$(nproc)" -ge 2 ]; then
	xcpu "$(nproc) CPUs" "$measured"
else
	echo "# --cross-cpu on every CPU: one CPU only here"
fi
if command -v taskset > /dev/null; then
	xcpu "taskset -c 0" "^not measured: one CPU in this process's affinity set" taskset -c 0
else
	no "taskset (util-linux) is not installed: --cross-cpu on one CPU not tried"
fi
# Under PR_TSC_SIGSEGV the static build: Debian 12's ld.so (seen with
# glibc 2.36-9+deb12u14) executes RDTSC while it loads a program, so
# there every dynamically linked program dies before main().  Where the
# vDSO itself reads the TSC (the clocksource tsc kind), such a task dies
# at its first clock_gettime(), whoever calls it: not tried there (the
# kvm-clock kind, whose vDSO makes the system call, runs these).
vdso_reads_tsc() {
	! python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(26, 2, 0, 0, 0)	# PR_SET_TSC, PR_TSC_SIGSEGV
time.clock_gettime(time.CLOCK_MONOTONIC)' 2> /dev/null
}
segv_note="PR_SET_TSC PR_TSC_SIGSEGV: not tried: this machine's vDSO reads the TSC (clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)), so such a task dies at its first clock_gettime()"
ti_dyn=$ti
ti=$ti-static
if vdso_reads_tsc; then
	echo "# --cross-cpu, $segv_note"
else
	xcpu "PR_SET_TSC PR_TSC_SIGSEGV" "$nordtsc" python3 -c '
import ctypes, os, sys
ctypes.CDLL(None).prctl(26, 2, 0, 0, 0)	# PR_SET_TSC, PR_TSC_SIGSEGV
os.execv(sys.argv[1], sys.argv[1:])'
fi
ti=$ti_dyn

# --calibrate live: the report ends with the figure the calibration
# measured and its bound, the bound in kHz agreeing with the one in ppm,
# the figure with the TSC frequency line's; where RDTSC may not run, "not
# measured" and why.  A calibration waits 2 s at most for its bound.
calibrate() {	# calibrate NAME WANT [PREFIX...]
	name=$1 want=$2
	shift 2
	start=$(date +%s)
	timeout 15 "$@" "$ti" --calibrate --no-cost ${ARGS:+"$ARGS"} > /tmp/cli.$$.out 2>&1
	rc=$?
	last=$(tail -n 1 /tmp/cli.$$.out)
	echo "# --calibrate $ARGS, $name: $last ($(($(date +%s) - start)) s)"
	[ "$rc" -le 1 ] || no "--calibrate $ARGS, $name: exit $rc (124: over 15 s)"
	echo "$last" | grep -qE -- "$want" || { no "--calibrate $ARGS, $name: the last line is not '$want'"; return; }
	case $last in *"not measured"*) return ;; esac
	echo "$last" | awk '{ khz = $2; pm = $5; ppm = $9
		if (khz < 1000 || ppm <= 0 || (pm - khz * ppm / 1e6) ^ 2 > 0.06 ^ 2) exit 1 }' ||
		no "--calibrate $ARGS, $name: figure, bound in kHz and in ppm disagree"
	khz=$(echo "$last" | awk '{ print $2 }')
	grep -q "^TSC frequency: *$khz kHz (from calibration, " /tmp/cli.$$.out ||
		no "--calibrate $ARGS, $name: the TSC frequency line is not the calibration's $khz kHz"
}
figure='^calibrated: +[0-9]+ kHz \+/- [0-9]+\.[0-9] kHz \(error bound [0-9]+\.[0-9]{3} ppm, over [0-9]+ ms(; not within 1 ppm after 2 s)?\)$'
for ARGS in "" --verbose; do
	if "$ti" --no-cost | grep -q 'RDTSC raises SIGSEGV'; then
		calibrate "RDTSC forbidden here" '^calibrated: +not measured: RDTSC may not be executed'
	else
		calibrate "this machine" "$figure"
	fi
	ti=$ti_dyn-static	# as above: ld.so executes RDTSC
	if vdso_reads_tsc; then
		echo "# --calibrate $ARGS, $segv_note"
	else
		calibrate "PR_SET_TSC PR_TSC_SIGSEGV" \
			'^calibrated: +not measured: RDTSC may not be executed in this process$' python3 -c '
import ctypes, os, sys
ctypes.CDLL(None).prctl(26, 2, 0, 0, 0)	# PR_SET_TSC, PR_TSC_SIGSEGV
os.execv(sys.argv[1], sys.argv[1:])'
	fi
	ti=$ti_dyn
done

# --help and tscinfo(1) list the same options, short and long.
man_opts() {	# the options of OPTIONS in tscinfo(1), one a line
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$man" | grep -A1 '^\.TP' | grep -v '^\.TP\|^--' |
		grep -oE '\\-(\\-)?[a-zA-Z][a-zA-Z\\-]*' | sed 's/\\//g' | sort -u
}
help_opts() {
	"$ti" --help | grep -E '^ +-' | sed 's/^ *//; s/  .*//' | grep -oE -- '--?[a-zA-Z][a-zA-Z-]*' | sort -u
}
man=$(dirname "$0")/../../tools/tscinfo/tscinfo.1
if [ -f "$man" ]; then
	man_opts > /tmp/cli.$$.man
	help_opts > /tmp/cli.$$.help
	[ -s /tmp/cli.$$.help ] && diff -u /tmp/cli.$$.man /tmp/cli.$$.help > /tmp/cli.$$.diff ||
		{ no "tscinfo(1) and --help list different options (- man, + help):"; sed 's/^/# /' /tmp/cli.$$.diff; }
	for o in -J -j -x -v --verbose; do
		grep -qx -- "$o" /tmp/cli.$$.help || no "--help lacks $o"
	done
fi

# The frequency from each source tscinfo reads itself where libtsc has
# none (tests/sysroots/variants, freq-*): the figure, and where it comes
# from, in text, JSON and the metrics; the kernel log first, then CPUID
# 0x15, the hypervisor's leaf, 0x16.
freq() {	# freq VARIANT KHZ SOURCE FROM: FROM the text's "(from ...)"
	"$ti" --sysroot "$TSC_TEST_VARIANTS/$1" > /tmp/cli.$$.out
	line=$(grep '^TSC frequency:' /tmp/cli.$$.out)
	echo "# $1: $line"
	[ "$line" = "TSC frequency:        $2 kHz (from $4)" ] ||
		no "$1: want 'TSC frequency: $2 kHz (from $4)'"
	"$ti" --json --sysroot "$TSC_TEST_VARIANTS/$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert (d["tsc_khz"], d["tsc_khz_source"]) == (int(sys.argv[1]), sys.argv[2]), d' "$2" "$3" ||
		no "$1: --json does not say $2 kHz from $3"
	"$ti" --format=prometheus --sysroot "$TSC_TEST_VARIANTS/$1" > /tmp/cli.$$.prom
	grep -qx "tsc_frequency_hertz ${2}000" /tmp/cli.$$.prom &&
		grep -qx "tsc_frequency_source_info{source=\"$3\"} 1" /tmp/cli.$$.prom ||
		no "$1: the metrics do not say $2 kHz from $3: $(grep '^tsc_freq' /tmp/cli.$$.prom)"
}
freq freq-cpuid15 2092800 cpuid-15h "CPUID leaf 0x15, the crystal's frequency times its ratio"
freq freq-cpuid16 2100000 cpuid-16h \
	"CPUID leaf 0x16, the processor's base frequency, which the TSC runs at on most CPUs; not promised"
freq freq-hypervisor 2096015 cpuid-hypervisor "CPUID leaf 0x40000010, the hypervisor's word"
freq freq-kernel-log 2096015 kernel-log \
	'the kernel log: [0.000000] tsc: Detected 2096.015 MHz processor'
freq freq-all 2096015 kernel-log 'the kernel log: [0.000000] tsc: Detected 2096.015 MHz processor'
freq freq-no-kernel-log 2092800 cpuid-15h "CPUID leaf 0x15, the crystal's frequency times its ratio"
# The live machine's figure kept in the dump (tsckit/live-state): where
# it came from in words, not "live-state" and a code.
freq captured-perf 2596098 live-state \
	"the dump's machine at capture, by perf_event's time_mult and time_shift"

# Every output mode on a dump with every fact missing: an unknown is a
# word in text and null in JSON, never a placeholder (-1, 0, "none", "?").
e=$TSC_TEST_VARIANTS/empty
placeholders() {	# placeholders MODE FILE
	if grep -nE -- '(^|[^0-9.])-1([^0-9]|$)|>> 0|\(none\)|"none"|[^a-z]\?[^a-z]|: 0,|: 0}|=0 ' "$2" |
		grep -v '^[0-9]*:tscinfo: [a-z]* usable=0 ' | grep -v '^[0-9]*:tsc_[a-z_]* 0$' |
		grep -v '"switches": 0' > /tmp/cli.$$.ph; then
		no "$1 on a dump without facts shows placeholders:"
		sed 's/^/# /' /tmp/cli.$$.ph
	fi
}
for mode in text "text -v" json log prometheus; do
	set -- --format=${mode%% *}
	[ "$mode" = "text -v" ] && set -- --verbose
	"$ti" "$@" --sysroot "$e" > /tmp/cli.$$.out 2>&1
	placeholders "--format=$mode" /tmp/cli.$$.out
done
for mode in text json log; do
	"$ti" --watch --timeout 0.2 --format=$mode --sysroot "$e" > /tmp/cli.$$.out 2>&1
	placeholders "--watch --format=$mode" /tmp/cli.$$.out
	[ -s /tmp/cli.$$.out ] || no "--watch --format=$mode printed nothing"
done
"$ti" --json --sysroot "$e" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ("tsc_khz", "tsc_khz_source", "error_bound_ppb", "calibration_ns", "conversion",
          "clocksource", "clocksource_is_tsc", "kernel_series", "tsc_stable", "vdso_tsc_calls",
          "clock_gettime", "clock_gettime_from", "rdtsc_trapped", "tsc_user", "cost_ns",
          "kernel_log"):
    assert d[k] is None, (k, d[k])' || no "--json on a dump without facts: an unknown is not null"
# ... and no "no" for what the dump does not tell: whether its kernel has
# the series (no sysfs at all), traps RDTSC, has the vDSO's TSC calls.
"$ti" --sysroot "$e" > /tmp/cli.$$.out
grep -E '^(kernel tsckit series|user RDTSC trapped|vDSO TSC calls): +no' /tmp/cli.$$.out |
	sed 's/^/# /' | grep . && no "text on a dump without facts: 'no' for an unknown"
for f in "kernel tsckit series" "user RDTSC trapped" "vDSO TSC calls"; do
	grep -q "^$f: *unknown (" /tmp/cli.$$.out || no "text on a dump without facts: $f not 'unknown (why)'"
done
"$ti" --format=prometheus --sysroot "$e" | grep -q '^tsc_kernel_series' &&
	no "--format=prometheus on a dump without facts: tsc_kernel_series, not left out"
# A stock kernel's dump tells all three: no, false, 0.
"$ti" --sysroot "$TSC_TEST_SYSROOTS/host-debian12" > /tmp/cli.$$.out
grep -q '^kernel tsckit series: no$' /tmp/cli.$$.out &&
	grep -q '^user RDTSC trapped: *no (stock kernel' /tmp/cli.$$.out &&
	grep -q '^vDSO TSC calls: *no$' /tmp/cli.$$.out ||
	no "host-debian12: the series, the trap, the vDSO calls are not a plain no"
# The notes agree with the summary: on the dump that does not tell, no
# note claims a stock kernel or an untrapped RDTSC; the stock kernel's
# dump and a live run keep "stock kernel" (issue 33, E).
"$ti" --verbose --sysroot "$e" > /tmp/cli.$$.out
grep -nE '^  note .*(\(stock kernel\)|is not trapped)' /tmp/cli.$$.out | sed 's/^/# /' | grep . &&
	no "--verbose on a dump without facts: a note says what the dump does not tell"
grep -q '^  note  no kernel.tsc_user in the dump, nor the sysfs that tells a stock kernel: the dump does not tell whether user RDTSC is trapped$' /tmp/cli.$$.out &&
	grep -q '^  note  no /sys/devices/system/tsc/tsc0: the dump has no /sys/devices/system, so it does not tell whether the kernel is stock$' /tmp/cli.$$.out ||
	no "--verbose on a dump without facts: no notes that the dump does not tell"
"$ti" --verbose --sysroot "$TSC_TEST_SYSROOTS/host-debian12" > /tmp/cli.$$.out
grep -q '^  note  no kernel.tsc_user (stock kernel): user RDTSC is not trapped$' /tmp/cli.$$.out &&
	grep -q '^  note  no /sys/devices/system/tsc/tsc0 (stock kernel)$' /tmp/cli.$$.out ||
	no "--verbose on host-debian12: the stock kernel's notes are not 'stock kernel'"
# Live, where the kernel has no current_clocksource_vdso: once tscinfo
# measured the calls, no note says that it cannot tell.
if [ ! -e /sys/devices/system/clocksource/clocksource0/current_clocksource_vdso ]; then
	"$ti" --verbose > /tmp/cli.$$.out 2>&1
	if grep -q '^clock_gettime: .*(measured)$' /tmp/cli.$$.out; then
		grep -q 'cannot tell whether clock_gettime() is a syscall' /tmp/cli.$$.out &&
			no "live --verbose: clock_gettime measured, yet a note says it cannot tell"
		grep -q "^  note  no current_clocksource_vdso: the kernel does not say whether clock_gettime() is a syscall; tscinfo measured the calls' cost instead\$" /tmp/cli.$$.out ||
			no "live --verbose: clock_gettime measured, but no note that tscinfo measured it"
	else
		no "live --verbose: clock_gettime not measured"
	fi
	"$ti" --verbose --no-cost > /tmp/cli.$$.out 2>&1
	grep -q '^  note  no current_clocksource_vdso: cannot tell whether clock_gettime() is a syscall$' /tmp/cli.$$.out ||
		no "live --verbose --no-cost: the note lost 'cannot tell' though nothing was measured"
fi
"$ti" --watch --json --timeout 0.2 --sysroot "$e" | python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
for k in ("clocksource", "tsc_stable", "clock_gettime", "mult", "shift", "source", "tsc_khz",
          "last_step_ns"):
    assert d[k] is None, (k, d[k])' || no "--watch --json on a dump without facts: an unknown is not null"
# The text's "why" line holds the reasons that decide; notes only with --verbose.
"$ti" --sysroot "$TSC_TEST_VARIANTS/stable-0" > /tmp/cli.$$.out
grep -q '^why: *tsc0/tsc_stable=0: the kernel marked the TSC unstable$' /tmp/cli.$$.out ||
	no "no why line: $(head -3 /tmp/cli.$$.out)"
! grep -q '^  note ' /tmp/cli.$$.out || no "notes without --verbose"
"$ti" --verbose --sysroot "$TSC_TEST_VARIANTS/stable-0" | grep -q '^  note ' || no "no notes with --verbose"

# --format: json is --json; log is one "tscinfo: state key=value" line.
pg=$TSC_TEST_VARIANTS/patched-good
[ "$("$ti" --format=json --sysroot "$pg")" = "$("$ti" -J --sysroot "$pg")" ] ||
	no "--format=json differs from --json"
[ "$("$ti" --format=text --sysroot "$pg")" = "$("$ti" --sysroot "$pg")" ] ||
	no "--format=text differs from the default"
"$ti" --format=log --sysroot "$TSC_TEST_VARIANTS/stable-0" > /tmp/cli.$$.out
[ "$(wc -l < /tmp/cli.$$.out)" = 1 ] &&
	grep -q '^tscinfo: state usable=0 tsc_stable=0 clocksource=tsc clock_gettime=vdso tsc_user=0 khz=2596097 khz_source=sysfs-mult conversion=sysfs-mult mult=6462476 shift=24 why="tsc0/tsc_stable=0: the kernel marked the TSC unstable" why_codes=tsc_stable$' \
	/tmp/cli.$$.out || no "--format=log: $(cat /tmp/cli.$$.out)"
# The frequency's source in words in the text, its code in JSON and the
# log line: the kernel's factors, its tsc_khz, cpu0's tsc_freq_khz.
for v in "patched-good sysfs-mult the kernel's tsc_mult and tsc_shift" \
	"khz-only sysfs-khz the kernel's tsc0/tsc_khz" \
	"no-tsc0 cpu0-tsc-freq-khz cpu0/tsc_freq_khz"; do
	set -- $v
	name=$1 code=$2
	shift 2
	line=$("$ti" --sysroot "$TSC_TEST_VARIANTS/$name" | grep '^TSC frequency:')
	case $line in
	*" kHz (from $*)") ;;
	*) no "$name: the text's frequency is not from '$*': $line" ;;
	esac
	"$ti" --json --sysroot "$TSC_TEST_VARIANTS/$name" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["tsc_khz_source"] == sys.argv[1], d["tsc_khz_source"]' "$code" ||
		no "$name: the JSON's tsc_khz_source is not $code"
done
# No source by its code in any text report: a code is not words.  The
# frequency's details are words too, the kernel's line without quotes
# around it, in the text and the JSON.
for r in "$TSC_TEST_VARIANTS"/*/ "$TSC_TEST_SYSROOTS"/*/; do
	{ "$ti" --sysroot "$r" 2> /dev/null |
		grep -E '\((from )?[a-z0-9]+-[a-z0-9-]+[,)]|from perf \(|^TSC frequency:.*"'
	"$ti" --watch --timeout 0.1 --sysroot "$r" 2> /dev/null | grep -E '\([a-z0-9]+-[a-z0-9-]+\)'
	"$ti" --json --sysroot "$r" 2> /dev/null | grep '"tsc_khz_detail": "\\"'
	} | sed "s|^|$(basename "$r"): |"
done > /tmp/cli.$$.codes
[ ! -s /tmp/cli.$$.codes ] || no "sources named by their code, or quoted: $(head -3 /tmp/cli.$$.codes)"

# --output: the report in the file, nothing on stdout, the exit status kept.
"$ti" -J --sysroot "$pg" --output /tmp/cli.$$.json > /tmp/cli.$$.out; rc=$?
[ "$rc" = 0 ] && [ ! -s /tmp/cli.$$.out ] && python3 -m json.tool /tmp/cli.$$.json > /dev/null ||
	no "--output: exit $rc, or stdout not empty, or the file is not the JSON"
"$ti" --sysroot "$TSC_TEST_VARIANTS/stable-0" --output /tmp/cli.$$.txt; rc=$?
[ "$rc" = 1 ] && grep -q "RDTSC usable: *no" /tmp/cli.$$.txt || no "--output, not usable: exit $rc"
expect 3 "cannot write /nonexistent/dir/x.prom" --format=prometheus --output /nonexistent/dir/x.prom

# --watch on a sysroot: change a file, see one change line, exit.
root=/tmp/cli.$$.root
rm -rf "$root"; cp -r "$TSC_TEST_VARIANTS/patched-good" "$root"
"$ti" --watch --count 1 --timeout 5 --sysroot "$root" > /tmp/cli.$$.out &
pid=$!
sleep 0.3
printf '0\n' > "$root/sys/devices/system/tsc/tsc0/tsc_stable.new"
mv "$root/sys/devices/system/tsc/tsc0/tsc_stable.new" "$root/sys/devices/system/tsc/tsc0/tsc_stable"
wait $pid; rc=$?
[ "$rc" = 1 ] || no "--watch: exit $rc, want 1 (TSC not usable at the end)"
grep -q "initial: TSC in use" /tmp/cli.$$.out || no "--watch: no initial line"
grep -q "change: TSC not used.*tsc_stable 0" /tmp/cli.$$.out || no "--watch: no change line"
sed 's/^/# /' /tmp/cli.$$.out
"$ti" --watch --json --timeout 0.5 --sysroot "$root" | python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' ||
	no "--watch --json lines are not JSON"
# --watch --format=log (tscinfo-watch.service): the same as key=value lines.
printf '1\n' > "$root/sys/devices/system/tsc/tsc0/tsc_stable"
"$ti" --watch --format=log --count 1 --timeout 5 --sysroot "$root" > /tmp/cli.$$.out &
pid=$!
sleep 0.3
printf '0\n' > "$root/sys/devices/system/tsc/tsc0/tsc_stable.new"
mv "$root/sys/devices/system/tsc/tsc0/tsc_stable.new" "$root/sys/devices/system/tsc/tsc0/tsc_stable"
wait $pid; rc=$?
[ "$rc" = 1 ] || no "--watch --format=log: exit $rc, want 1"
grep -q '^tscinfo: initial usable=1 tsc_stable=1 clocksource=tsc ' /tmp/cli.$$.out ||
	no "--watch --format=log: no initial line"
grep -q '^tscinfo: change usable=0 tsc_stable=0 clocksource=tsc .* step_ns=-\?[0-9]* why="tsc0/tsc_stable=0: the kernel marked the TSC unstable.*" why_codes=tsc_stable$' \
	/tmp/cli.$$.out || no "--watch --format=log: no change line"
sed 's/^/# /' /tmp/cli.$$.out
rm -rf "$root" /tmp/cli.$$.*
exit $fail
