#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# make install DESTDIR=...: the files, the soname and links, and a program
# built against the installed library through pkg-config, shared and static.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d)
fail=0
no() { echo "# FAIL: $*"; fail=1; }

# An older install's headers one level up (before 0.5.0), which "cc
# -ltsc" would find first, and a header of another package beside them.
mkdir -p "$d/root/opt/tsckit/include"
printf '#include <tsc-version.h>\n' > "$d/root/opt/tsckit/include/tsc.h"
printf '#define TSC_VERSION "0.4.0"\n' > "$d/root/opt/tsckit/include/tsc-version.h"
printf '#define OTHER 1\n' > "$d/root/opt/tsckit/include/other.h"
make -s -C "$top" install PREFIX=/opt/tsckit DESTDIR="$d/root" > "$d/log" 2>&1 ||
	{ sed 's/^/# /' "$d/log"; no "make install failed"; }
if [ -e "$d/root/opt/tsckit/include/tsc.h" ] || [ -e "$d/root/opt/tsckit/include/tsc-version.h" ]; then
	no "make install left an older libtsc's include/tsc.h or tsc-version.h"
fi
[ -e "$d/root/opt/tsckit/include/other.h" ] || no "make install removed another package's header"
# How programs find the library: ldconfig, or the directory it went to
# (where it runs, without DESTDIR) for ld.so.conf.d or LD_LIBRARY_PATH,
# and pkg-config's path.
grep -q ldconfig "$d/log" || no "make install does not say to run ldconfig"
grep -Eq "(^|[[:space:]])/opt/tsckit/lib[[:space:]].*(ld\.so\.conf|LD_LIBRARY_PATH)" "$d/log" ||
	no "make install does not name /opt/tsckit/lib for ld.so.conf.d or LD_LIBRARY_PATH"
grep -q "PKG_CONFIG_PATH=/opt/tsckit/lib/pkgconfig" "$d/log" ||
	no "make install does not name PKG_CONFIG_PATH=/opt/tsckit/lib/pkgconfig"
grep -E "ld\.so\.conf|LD_LIBRARY_PATH|PKG_CONFIG_PATH" "$d/log" | grep -q "$d" &&
	no "make install's hint names the DESTDIR, not where the library runs from"
r=$d/root/opt/tsckit
for f in lib/libtsc.a lib/libtsc.so lib/libtsc.so.0 lib/pkgconfig/libtsc.pc include/libtsc/tsc.h \
	include/libtsc/tsc-version.h share/man/man3/tsc_open.3 share/man/man1/tscinfo.1 bin/tscinfo \
	bin/tscbench share/man/man1/tscbench.1 share/bash-completion/completions/tscinfo \
	share/bash-completion/completions/tscbench lib/systemd/system/tscinfo-watch.service \
	lib/systemd/system/tscinfo-metrics.service lib/systemd/system/tscinfo-metrics.timer; do
	[ -e "$r/$f" ] || no "missing $f"
done
grep -qx 'ExecStart=/opt/tsckit/bin/tscinfo --watch --format=log' \
	"$r/lib/systemd/system/tscinfo-watch.service" || no "the watch unit does not run /opt/tsckit/bin/tscinfo"
[ -L "$r/lib/libtsc.so" ] && [ -L "$r/lib/libtsc.so.0" ] || no "libtsc.so links are not symlinks"
readelf -d "$r/lib/libtsc.so" | grep -q 'SONAME.*\[libtsc.so.0\]' || no "soname is not libtsc.so.0"
n=$(ls "$r/share/man/man3" | wc -l)
[ "$n" -ge 8 ] || no "only $n man pages in man3"
# The pages installed are the generated ones: .TH with lib/VERSION.
v=$(cat "$top/lib/VERSION")
for f in man1/tscinfo.1 man1/tsc-capture-sysroot.1 man1/tscbench.1 man3/tsc_open.3; do
	grep -q "^\.TH .* \"[a-z]* $v\" " "$r/share/man/$f" ||
		no "$f: $(grep '^\.TH' "$r/share/man/$f"), not version $v"
done

export PKG_CONFIG_PATH="$r/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$d/root"
cc -o "$d/p" "$top/tests/lib/example.c" $(pkg-config --cflags --libs libtsc) || no "cannot build against it"
LD_LIBRARY_PATH="$r/lib" "$d/p" || no "the program does not run"
LD_LIBRARY_PATH="$r/lib" ldd "$d/p" | grep -q "$r/lib/libtsc.so.0" || no "not linked to the installed .so"
cc -static -o "$d/ps" "$top/tests/lib/example.c" $(pkg-config --static --cflags --libs libtsc) || no "static build failed"
"$d/ps" | sed 's/^/# /' || no "the static program does not run"
rm -rf "$d"
exit $fail
