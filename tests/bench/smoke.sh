#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# tscbench smoke test (host-check): builds tscbench, runs it very briefly,
# checks that every available method got a measurement, every unavailable
# one a reason, that the JSON parses and has its documented fields, the
# command-line errors, and the plot when gnuplot is installed; the calibration
# start-up when this machine lets libtsc use the TSC.  < 20 s.
#   smoke.sh [LIBDIR TOOLDIR]   (default build/lib build/tools)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
libo=${1:-$top/build/lib}
toolo=${2:-$top/build/tools}
tb=$toolo/tscbench
d=$(mktemp -d)
fail=0
no() { echo "# FAIL: $*"; fail=1; }
trap 'rm -rf "$d"' EXIT

make -s -C "$top/tools/tscbench" O="$toolo" LIBO="$libo" > "$d/build.log" 2>&1 ||
	{ sed 's/^/# /' "$d/build.log"; echo "# FAIL: build"; exit 1; }

# A very short run: JSON to a file, every method.
"$tb" --quick --duration 0.2 --threads 2 --no-progress --json -o "$d/out.json" 2> "$d/err"
rc=$?
[ "$rc" -le 1 ] || { cat "$d/err"; no "tscbench --quick --json: exit $rc"; }
[ "$rc" = 1 ] && echo "# note: time went back during the run (exit 1)"
python3 -m json.tool "$d/out.json" > /dev/null || no "--json output is not JSON"
"$tb" --list > "$d/list" || no "--list failed"
python3 - "$d/out.json" "$d/list" <<'PY' || no "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
names = [l.split()[0] for l in open(sys.argv[2])]
ms = {m["name"]: m for m in d["methods"]}
assert sorted(ms) == sorted(names), ("methods differ from --list", sorted(ms), names)
for n, m in ms.items():
    if m["available"]:
        c = m["cost"]
        assert c and c["ns"]["median"] > 0 and c["batches"] >= 3, (n, "no cost")
        assert c["calls_per_batch"] >= 4, (n, "batches too short to time", c)
        assert m["throughput"] and m["throughput"][0]["mcalls_per_s"] > 0, (n, "no throughput")
        assert m["reason"] is None, n
    else:
        assert isinstance(m["reason"], str) and len(m["reason"]) > 10, (n, "no reason")
        assert m["cost"] is None, n
assert ms["rdtsc"]["available"] and abs(ms["rdtsc"]["cost"]["ratio_to_rdtsc"] - 1) < 1e-9
# The rows that read the clocksource as clock_gettime(MONOTONIC) does
# share its note: the vDSO or a system call (issue 33, N).
cg = ms["clock_gettime_monotonic"]["note"]
assert cg, "clock_gettime_monotonic: no note"
for n in ("clock_gettime_monotonic_raw", "clock_gettime_realtime", "clock_gettime_boottime",
          "clock_gettime_tai", "gettimeofday"):
    assert ms[n]["note"] == cg, (n, ms[n]["note"], cg)
for k in ("tool", "version", "config", "host", "libtsc", "drift", "backward", "startup", "goals"):
    assert k in d, k
# Unknown is null, never a 0 or "none" (issue 33): the frequency, the
# factors with their source, a bound only with a calibration's factors.
l = d["libtsc"]
assert l["tsc_khz"] is None or l["tsc_khz"] > 0, l
assert (l["source"] is None) == (l["mult"] is None) == (l["shift"] is None), l
assert l["source"] != "none" and (l["mult"] is None or l["mult"] > 0), l
assert l["error_bound_ppb"] is None or l["source"] == "calibration", l
# No placeholder number anywhere: not libtsc's UINT64_MAX "no figure
# yet", not a CPU -1; a cross-CPU check with nothing back has no worst.
def numbers(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from numbers(v)
    elif isinstance(o, list):
        for v in o:
            yield from numbers(v)
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        yield o
bad = [v for v in numbers(d) if v in (-1, 2**64 - 1)]
assert not bad, ("placeholder numbers in the JSON", bad)
x = d["backward"].get("cross_cpu")
if x and "error" not in x and x["backward"] == 0:
    assert x["from_cpu"] is None and x["to_cpu"] is None and x["worst_ns"] is None, x
for name, o in d["startup"].items():
    if isinstance(o, dict) and "calibration_ms" in o:
        assert o["calibration_ms"] is None or o["calibration_ms"] > 0, (name, o)
s = d["drift"]["series"][0]
assert len(s["samples"]) >= 5 and "ppm" in s["monotonic_raw"], "drift samples"
t = d["backward"]["thread"]
assert t["reads"] > 0
assert t["backward"] or t["worst_ns"] is None, ("worst_ns with none back", t)
assert d["startup"]["default"]["opens"] >= 1
# The calibration start-up: --quick follows for 2 s.
assert d["config"]["calib_follow_s"] == 2, d["config"]
c = d["startup"]["calibration"]
assert c is not None and c["follow_s"] == 2, c
if not c["applicable"]:
    assert isinstance(c["reason"], str) and len(c["reason"]) > 10, ("no reason", c)
    print("# calibration start-up not applicable: %s" % c["reason"])
else:
    assert c["reason"] is None and "error" not in c, c
    assert 0 < c["open_ms"] < 1000, c["open_ms"]
    assert c["took_over"], ("calibrated TSC not in use after %s s" % c["end_s"], c["history"])
    assert c["use_ms"] > 0 and c["use_ms"] >= c["open_ms"], c
    assert 0 < c["bound_use_ppb"] <= 1000, c
    assert c["bound_end_ppb"] <= c["bound_use_ppb"], c
    assert c["end_tsc_usable"] and c["end_source"] == "calibration", c
    assert c["end_s"] >= 2 and c["tsc_khz"] > 0, c
    assert c["reads"] > 1000 and c["backward"] == 0, ("reads went back", c)
    assert c["worst_ns"] is None, ("worst_ns with none back", c)
    h = c["history"]
    assert h and all(h[i][0] <= h[i + 1][0] for i in range(len(h) - 1)), h
    print("# figure: calibration: tsc_open() %.3f ms, TSC in use after %.1f ms at %d ppb, "
          "%d ppb after %.1f s, %d refinements, %d reads, %d back" % (c["open_ms"],
          c["use_ms"], c["bound_use_ppb"], c["bound_end_ppb"], c["end_s"], c["refinements"],
          c["reads"], c["backward"]))
names = [g["name"] for g in d["goals"]]
for g in d["goals"]:
    # Not measured: no value, nothing met (the note says why).
    assert g["judged"] == (g["met"] is not None) or (g["value"] is None and g["met"] is None), g
    if g["name"].startswith("bound after"):
        assert not g["judged"], ("judged after less than 10 s", g)
print("# goals: %s" % ", ".join(names))
assert c["applicable"] == ("calibrated TSC in use after" in names), names
for g in d["goals"]:
    print("# figure: %s = %s %s (goal %s, %s)" % (g["name"], g["value"], g["unit"], g["limit"],
          "figure only" if not g["judged"] else "met" if g["met"] else "missed"))
PY

# Without the calibration start-up: null.
"$tb" -q -d 0 --threads 0 --opens 0 --cross-cpu 0 --methods rdtsc --calib-follow 0 \
	--no-progress --json -o "$d/nocal.json" || no "--calib-follow 0: exit $?"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["startup"]["calibration"] is None and d["config"]["calib_follow_s"] == 0, d["startup"]' \
	"$d/nocal.json" || no "--calib-follow 0: startup.calibration is not null"

# The table.
"$tb" -q -d 0.1 --threads 1 --opens 1 --calib-follow 0.5 --no-progress > "$d/out.txt"
rc=$?
[ "$rc" -le 1 ] || no "tscbench (table): exit $rc"
for w in "Cost per call" "Throughput" "Drift over" "tsc_open()" "rdtsc " \
	"Calibration start-up (force_calibrate, with a watcher)"; do
	grep -q "$w" "$d/out.txt" || no "table lacks '$w'"
done
# No placeholder words: a worst of 0 where nothing went back, factors
# "from none", "1 CPUs".
phw='worst 0 (ticks|ns)|0 backward, worst|from none|\(none\)|(^|[^0-9])1 CPUs'
placeholders() {	# placeholders FILE WHAT
	if grep -nE "$phw" "$1" > "$d/ph"; then
		no "$2: placeholders:"
		sed 's/^/#   /' "$d/ph"
	fi
}
placeholders "$d/out.txt" "the table"

# One CPU and no factors: taskset -c 0, RDTSC made to trap (PR_SET_TSC)
# so that libtsc has no factors; the static build, as Debian 12's ld.so
# (glibc 2.36-9+deb12u14) executes RDTSC while it loads a program.  The cross-CPU check is "not measured",
# the header says "1 CPU", no factors are words, not "none", in the table
# and the plot's legend; in JSON null.
plot=
command -v gnuplot > /dev/null && plot=1
# Where the vDSO itself reads the TSC (the clocksource tsc kind), a task
# under PR_TSC_SIGSEGV dies at its first clock_gettime(), whoever calls
# it: not tried there (the kvm-clock kind, whose vDSO makes the system
# call, runs these).
vdso_reads_tsc() {
	! python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(26, 2, 0, 0, 0)	# PR_SET_TSC, PR_TSC_SIGSEGV
time.clock_gettime(time.CLOCK_MONOTONIC)' 2> /dev/null
}
segv_note="not tried: this machine's vDSO reads the TSC (clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)), so a task under PR_TSC_SIGSEGV dies at its first clock_gettime()"
if vdso_reads_tsc; then
	echo "# one CPU, no RDTSC: $segv_note"
elif command -v taskset > /dev/null; then
	taskset -c 0 python3 -c '
import ctypes, os, sys
ctypes.CDLL(None).prctl(26, 2, 0, 0, 0)	# PR_SET_TSC, PR_TSC_SIGSEGV
os.execv(sys.argv[1], sys.argv[1:])' "$tb-static" -q -d 0.1 --threads 0 --opens 1 --calib-follow 0 \
		--methods clock_gettime_monotonic --no-progress --json="$d/one.json" \
		${plot:+-p "$d/one.png"} > "$d/one.txt" 2> "$d/one.err"
	rc=$?
	[ "$rc" -le 1 ] || no "one CPU, no RDTSC: exit $rc: $(cat "$d/one.err")"
	placeholders "$d/one.txt" "one CPU, no RDTSC: the table"
	# No ticks nor ratio to bare RDTSC: words, not "nan" and "0.000".
	! grep -nE '(^|[^a-z])nan([^a-z]|$)| 0\.000  ' "$d/one.txt" ||
		no "one CPU, no RDTSC: 'nan' or '0.000' in the cost table"
	[ ! -f "$d/one.png.gp" ] || ! grep -n 'none' "$d/one.png.gp" ||
		no "one CPU, no RDTSC: 'none' in the plot's legend"
	for w in '^tscbench (libtsc [^)]*): .*, 1 CPU, Linux' \
		"^across CPUs: not measured: one CPU in this process's affinity set\$" \
		'^time going back in one thread: 0 of [0-9]* reads, none went back$' \
		'^tsc_open(): .* of 1, no factors (fallback clock)$' \
		'default options, no factors (fallback clock)$' \
		'^n/a: RDTSC could not run: RDTSC raises SIGSEGV in this task (prctl PR_SET_TSC)$' \
		'^clock_gettime_monotonic .* n/a  *n/a  '; do
		grep -q "$w" "$d/one.txt" || no "one CPU, no RDTSC: the table lacks '$w'"
	done
	python3 - "$d/one.json" <<'PY' || no "one CPU, no RDTSC: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
def strings(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)
    elif isinstance(o, str):
        yield o
assert "none" not in list(strings(d)), "a \"none\" in the JSON"
assert d["libtsc"]["source"] is None, ("libtsc has factors: no case here", d["libtsc"])
b = d["backward"]
assert b["cross_cpu"] is None, b
assert b["thread"]["backward"] or b["thread"]["worst_ns"] is None, b
o = d["startup"]["default"]
assert o["source"] is None and o["error_bound_ppb"] is None and o["mult_spread_ppm"] is None, o
s = d["drift"]["series"][0]
assert s["source"] is None and s["error_bound_ppb"] is None, s
for m in d["methods"]:
    if m["cost"]:
        assert m["cost"]["ticks"] is None and m["cost"]["ratio_to_rdtsc"] is None, m
PY
else
	no "taskset (util-linux) is not installed: one CPU not tried"
fi

# The calibration start-up from no factors: force_calibrate begins on the
# fallback clock, its source is null, never "none", in JSON (open_source,
# end_source, the history's), and words in the table.  Where the kernel
# does not let libtsc use the TSC, a user and mount namespace shows it
# what would: no tsc= on the command line, "tsc" its clocksource.
cs=/sys/devices/system/clocksource/clocksource0
calib_none() {	# calib_none: the JSON to $d/cn.json, the table to $d/cn.txt
	printf 'quiet\n' > "$d/cmdline"
	printf 'tsc\n' > "$d/cur"
	printf 'tsc hpet acpi_pm\n' > "$d/avail"
	unshare -rm sh -c 'mount --bind "$1/cmdline" /proc/cmdline &&
		mount --bind "$1/cur" "$2/current_clocksource" &&
		mount --bind "$1/avail" "$2/available_clocksource" &&
		"$3" -q -d 0 --threads 0 --opens 0 --cross-cpu 0 --methods rdtsc \
			--calib-follow 0.5 --no-progress --json="$1/cn.json" -o "$1/cn.txt"' \
		sh "$d" "$cs" "$tb"
}
if [ -f "$d/out.json" ] && python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["startup"]["calibration"]
sys.exit(0 if c and c["applicable"] else 1)' "$d/out.json"; then
	"$tb" -q -d 0 --threads 0 --opens 0 --cross-cpu 0 --methods rdtsc --calib-follow 0.5 \
		--no-progress --json="$d/cn.json" -o "$d/cn.txt"
	rc=$?
elif [ -f "$cs/current_clocksource" ] && unshare -rm true 2> /dev/null; then
	calib_none
	rc=$?
else
	rc=skip
	echo "# calibration start-up from no factors not tried: not applicable here, no unshare -rm"
fi
if [ "$rc" != skip ]; then
	[ "$rc" -le 1 ] || no "calibration start-up from no factors: exit $rc"
	placeholders "$d/cn.txt" "calibration start-up from no factors: the table"
	! grep -n 'none\|18446744073709' "$d/cn.txt" | grep -v 'none went back$' ||
		no "calibration start-up from no factors: 'none' or UINT64_MAX in the table"
	python3 - "$d/cn.json" <<'PY' || no "calibration start-up from no factors: JSON"
import json, sys
c = json.load(open(sys.argv[1]))["startup"]["calibration"]
assert c and c["applicable"], ("not applicable", c)
srcs = [c["open_source"], c["end_source"]] + [h[3] for h in c["history"]]
assert "none" not in srcs, ("\"none\" for no factors", srcs)
assert all(s is None or isinstance(s, str) for s in srcs), srcs
print("# calibration start-up from no factors: sources %s" % sorted(set(map(str, srcs))))
PY
fi

# The TSC frequency and where it comes from: what tscinfo says, read by
# the same code (tools/common/freq.c), in JSON and in the table's words.
# A calibration's figure may differ by its bound: each run makes its own.
make -s -C "$top/tools/tscinfo" O="$toolo" LIBO="$libo" > "$d/build.log" 2>&1 ||
	{ sed 's/^/# /' "$d/build.log"; no "build tscinfo"; }
# Where libtsc calibrates (no kernel factors), tscbench ran long enough
# for the calibration to end; tscinfo reports at once, so it waits for one.
copt=
python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["host"].get("tsc_khz_source") != "calibration")' \
	"$d/out.json" && copt=--calibrate
"$toolo/tscinfo" --json --no-cost $copt > "$d/ti.json"
[ $? -le 1 ] || no "tscinfo --json: exit status above 1"
"$toolo/tscinfo" --no-cost $copt > "$d/ti.txt"
python3 - "$d/out.json" "$d/ti.json" <<'PY' || no "the frequency differs from tscinfo's"
import json, sys
b = json.load(open(sys.argv[1]))["host"]
t = json.load(open(sys.argv[2]))
print("# tscbench: %s kHz from %s; tscinfo: %s kHz from %s" % (b.get("tsc_khz"),
      b.get("tsc_khz_source"), t["tsc_khz"], t["tsc_khz_source"]))
assert b["tsc_khz_source"] == t["tsc_khz_source"], "sources differ"
if t["tsc_khz_source"] == "calibration":
    assert abs(b["tsc_khz"] - t["tsc_khz"]) <= t["tsc_khz"] / 1000, "figures differ"
else:
    assert b["tsc_khz"] == t["tsc_khz"], "figures differ"
    assert b["tsc_khz_detail"] == t["tsc_khz_detail"], "details differ"
PY
a=$(sed -n 's/^TSC frequency: *//p' "$d/out.txt")
b=$(sed -n 's/^TSC frequency: *//p' "$d/ti.txt")
echo "# table: TSC frequency: $a"
case $b in
*"(from calibration"*)
	echo "$a" | grep -qE '^[0-9]+ kHz \(from calibration' ||
		no "the table's 'TSC frequency: $a' is not a calibration's, as tscinfo's '$b'" ;;
*)	[ -n "$a" ] && [ "$a" = "$b" ] || no "the table's 'TSC frequency: $a' is not tscinfo's '$b'" ;;
esac

# clock_gettime's verdict comes from the costs tscbench measured, by
# tscinfo's rule: with tests/lib/gettimeshim.c making clock_gettime() cost
# a system call, "system call"; with the system call 20 times dearer,
# "vDSO": one clocksource, two verdicts, each tscinfo's under the same shim.
shim=${TSC_TEST_GETTIMESHIM:-}
if [ ! -f "$shim" ]; then
	shim=$d/gettimeshim.so
	cc -O2 -fPIC -shared -o "$shim" "$top/tests/lib/gettimeshim.c" -ldl ||
		no "build tests/lib/gettimeshim.c"
fi
verdict() {	# verdict MODE: "KIND FROM" of tscbench, then of tscinfo, one line each
	env LD_PRELOAD="$shim" TSC_TEST_GETTIME="$1" "$tb" -q -d 0 --threads 0 --opens 0 \
		--cross-cpu 0 --calib-follow 0 --no-progress \
		--methods clock_gettime_monotonic,syscall_clock_gettime \
		--json="$d/v.json" -o "$d/v.txt" || no "TSC_TEST_GETTIME=$1 tscbench: exit $?"
	python3 -c 'import json, sys; h = json.load(open(sys.argv[1]))["host"]
print(h.get("clock_gettime", "?"), h.get("clock_gettime_from", "?"))' "$d/v.json"
	env LD_PRELOAD="$shim" TSC_TEST_GETTIME="$1" "$toolo/tscinfo" --json > "$d/vi.json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["clock_gettime"], d["clock_gettime_from"])' "$d/vi.json"
}
for mode in as-is syscall slow-syscall; do
	verdict $mode > "$d/verdicts"
	bench=$(sed -n 1p "$d/verdicts") info=$(sed -n 2p "$d/verdicts")
	line=$(grep '^clocksource .*; clock_gettime: ' "$d/v.txt")
	echo "# $mode: tscbench $bench, tscinfo $info: $line"
	[ "$bench" = "$info" ] || no "$mode: tscbench says '$bench', tscinfo '$info'"
	! grep -q 'inferred' "$d/v.txt" || no "$mode: the table infers what it measured: $(grep inferred "$d/v.txt")"
	case $bench in
	*current_clocksource_vdso) continue ;;	# the kernel's word decides
	esac
	case $mode in
	syscall) want="syscall measured" words="clock_gettime: system call, .* (measured)$" ;;
	slow-syscall) want="vdso measured" words="clock_gettime: vDSO, .* (measured)$" ;;
	*) want=$bench words="clock_gettime: .* (measured)$" ;;
	esac
	[ "$bench" = "$want" ] || no "$mode: tscbench says '$bench', want '$want'"
	echo "$line" | grep -q "$words" || no "$mode: the table's line is not '$words': $line"
done

# Command line.
expect() {	# expect STATUS PATTERN ARGS...
	want=$1 pat=$2
	shift 2
	"$tb" "$@" > "$d/o" 2> "$d/e"
	rc=$?
	[ "$rc" = "$want" ] || no "tscbench $*: exit $rc, want $want"
	grep -q -- "$pat" "$d/o" "$d/e" || no "tscbench $*: no '$pat' in output"
}
expect 2 "Try 'tscbench --help'" --bogus
expect 2 "invalid option -- 'z'" -z
expect 2 "invalid --duration" --duration -1
expect 2 "invalid --duration" --duration abc
expect 2 "requires an argument" --duration
expect 2 "unknown method 'nope'" --methods rdtsc,nope
expect 2 "invalid --rounds" --rounds 1
expect 2 "invalid --calib-follow '-1'" --calib-follow -1
expect 2 "invalid --calib-follow 'abc'" --calib-follow abc
expect 2 "invalid --calib-follow '86401'" --calib-follow 86401
expect 2 "invalid --calib-follow ''" --calib-follow ""
expect 2 "requires an argument" --calib-follow
expect 2 "unexpected argument" extra
expect 3 "cannot write" -q -d 0 -o /nonexistent/dir/x.json
# The JSON file goes only as --json=FILE (an optional argument).
expect 2 "the file goes in the option's word: --json=$d/j1.json" -J"$d/j1.json"
expect 2 "the JSON file goes in the option's word: --json=$d/x.json" -J "$d/x.json"
expect 2 "the JSON file goes in the option's word: --json=$d/x.json" --json "$d/x.json"
[ ! -e "$d/j1.json" ] && [ ! -e "$d/x.json" ] || no "-J FILE wrote a file"
# A dump that is not there fails before the run, as tscinfo --sysroot.
expect 3 "open-sysroot /nonexistent: No such file or directory" -q -d 0 --threads 0 \
	--cross-cpu 0 --calib-follow 0 --methods rdtsc --opens 1 --open-sysroot /nonexistent
expect 3 "open-sysroot /etc/passwd: not a directory" -q -d 0 --threads 0 \
	--cross-cpu 0 --calib-follow 0 --methods rdtsc --opens 1 --open-sysroot /etc/passwd
expect 3 "sysroot /nonexistent: No such file or directory" -q -d 0 --threads 0 \
	--cross-cpu 0 --calib-follow 0 --methods rdtsc --sysroot /nonexistent
expect 3 "sysroot /etc/passwd: not a directory" -q -d 0 --threads 0 \
	--cross-cpu 0 --calib-follow 0 --methods rdtsc --sysroot /etc/passwd
expect 2 "sysroot needs a directory" --sysroot ""
expect 0 "Usage:" --help
expect 0 "libtsc" -V
expect 0 "syscall_clock_gettime" --list

# The wall reads' goals (issue 32): on a dump that trusts the TSC, each
# clock against tsc_now_ns(), the vDSO and 1..N threads, measured (met
# or not is timing: not asserted); on one that does not, one line saying
# why not.  Speed itself is tscbench's to report, never a test's.
"$top/tests/sysroots/make-variants" "$d/v" > /dev/null || no "make-variants"
wall_goals() {	# wall_goals VARIANT EXPECT(measured|not)
	"$tb" -q -d 0 --threads 2 --opens 0 --cross-cpu 0 --calib-follow 0 --no-progress \
		--sysroot "$d/v/$1" --json="$d/w.json" \
		--methods rdtsc,tsc_now_ns,clock_gettime_monotonic,clock_gettime_monotonic_raw,clock_gettime_realtime,clock_gettime_boottime,clock_gettime_tai,tsc_clock_gettime_monotonic,tsc_clock_gettime_monotonic_raw,tsc_clock_gettime_realtime,tsc_clock_gettime_boottime,tsc_clock_gettime_tai,tsc_clock_gettime_ordered_monotonic \
		> "$d/w.txt" 2> "$d/w.err" || { sed 's/^/# /' "$d/w.err"; no "--sysroot $1: exit $?"; return; }
	grep -q "libtsc opened on the dump $d/v/$1 (--sysroot)" "$d/w.txt" ||
		no "--sysroot $1: the head does not name the dump"
	python3 - "$d/w.json" "$2" "$d/v/$1" <<'PY' || no "--sysroot $1: wall goals"
import json, sys
d = json.load(open(sys.argv[1]))
want, root = sys.argv[2], sys.argv[3]
assert d["libtsc"]["sysroot"] == root, d["libtsc"]
g = [x for x in d["goals"] if x["name"].startswith("tsc_clock_gettime")]
if want == "not":
    assert len(g) == 1 and g[0]["value"] is None and g[0]["met"] is None, g
    assert "not measured" in g[0]["note"] and "--sysroot" in g[0]["note"], g
    sys.exit(0)
assert d["libtsc"]["tsc_usable"], d["libtsc"]
names = [x["name"] for x in g]
for c in ("MONOTONIC", "MONOTONIC_RAW", "REALTIME", "BOOTTIME", "TAI"):
    for n, lim in (("tsc_clock_gettime(%s) / tsc_now_ns", 1.15),
                   ("tsc_clock_gettime(%s) / vDSO", 0.6),
                   ("tsc_clock_gettime(%s), N / 1 thread", 1.15)):
        x = [y for y in g if y["name"] == n % c]
        assert len(x) == 1, (n % c, names)
        x = x[0]
        assert x["limit"] == lim and not x["strict"] and x["unit"] == "x", x
        assert isinstance(x["value"], float) and x["value"] > 0, x
        assert isinstance(x["met"], bool) and x["met"] == (x["value"] <= lim), x
        print("# figure: %s = %.3f (goal <= %g)" % (x["name"], x["value"], lim))
PY
}
wall_goals patched-good measured
wall_goals stable-0 not

# Every write is checked: a full disk is a runtime error, said on stderr.
for args in --help --list "-q -d 0.1 --methods rdtsc --threads 0 --opens 0 --cross-cpu 0 --calib-follow 0 --no-progress"; do
	# shellcheck disable=SC2086
	"$tb" $args > /dev/full 2> "$d/err"; rc=$?
	[ "$rc" = 3 ] || no "tscbench $args > /dev/full: exit $rc, want 3"
	grep -qx "tscbench: write error: No space left on device" "$d/err" ||
		no "tscbench $args > /dev/full: no 'write error: No space left on device' on stderr"
done
# Where RDTSC may not run, on several CPUs: the cross-CPU check is not
# measured, and why is said in words, not as an errno's "No such device".
if vdso_reads_tsc; then
	echo "# no RDTSC, several CPUs: $segv_note"
elif [ "$(nproc)" -ge 2 ]; then
	python3 -c '
import ctypes, os, sys
ctypes.CDLL(None).prctl(26, 2, 0, 0, 0)	# PR_SET_TSC, PR_TSC_SIGSEGV
os.execv(sys.argv[1], sys.argv[1:])' "$tb-static" -q -d 0.1 --threads 0 --opens 0 --calib-follow 0 \
		--cross-cpu 50 --methods clock_gettime_monotonic --no-progress \
		--json="$d/segv.json" > "$d/segv.txt" 2> "$d/segv.err" ||
		no "no RDTSC, several CPUs: exit $?: $(cat "$d/segv.err")"
	why='RDTSC raises SIGSEGV in this task (prctl PR_SET_TSC)'
	grep -qxF "across CPUs: not measured: $why" "$d/segv.txt" ||
		no "no RDTSC, several CPUs: no 'across CPUs: not measured: $why': $(grep across "$d/segv.txt")"
	python3 -c 'import json, sys
x = json.load(open(sys.argv[1]))["backward"]["cross_cpu"]
assert x == {"error": sys.argv[2]}, x' "$d/segv.json" "$why" ||
		no "no RDTSC, several CPUs: JSON backward.cross_cpu is not {\"error\": \"$why\"}"
else
	echo "# one CPU here: the cross-CPU check where RDTSC may not run not tried"
fi
# A subset, and the plot when gnuplot is there.
if command -v gnuplot > /dev/null; then
	"$tb" -q -d 0.1 --methods rdtsc,tsc_now_ns --threads 0 --opens 0 --cross-cpu 0 \
		--calib-follow 0 --no-progress -p "$d/p.png" > /dev/null || no "--plot failed"
	head -c 8 "$d/p.png" | od -An -tx1 | grep -q '89 50 4e 47' || no "--plot: not a PNG"
else
	echo "# gnuplot not installed: --plot not tried"
fi
"$toolo/tscbench-static" --list > /dev/null || no "tscbench-static does not run"
exit $fail
