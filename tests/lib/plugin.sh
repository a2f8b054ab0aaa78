#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1
# libtsc.a linked into a dlopen()ed plugin (issue 32 item 6): a plugin
# that opens a handle with a watcher (tsc_default(), or tsc_open()
# without tsc_close()) and is dlclose()d must not leave the watcher
# running unmapped code: the object stays loaded.  Each case runs in a
# child that sleeps 2.5 s after dlclose() (the watcher wakes once a
# second); a crash fails it.  A plugin that never starts a watcher still
# unloads.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
inc="-I$top/lib/include -I$TSC_TEST_LIBDIR/include"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
no() { echo "# FAIL: $*"; fail=1; }

cat > "$d/plugin.c" <<'EOF'
#include <tsc.h>

/* 0: tsc_default(); 1: tsc_open() with a watcher, never closed;
 * 2: tsc_open() without a watcher, closed. */
int plugin_use(int how)
{
	TSC_OPTS(none, .no_watcher = true);
	struct tsc *t;

	if (how == 0)
		return tsc_default() ? 0 : -1;
	t = tsc_open(how == 1 ? NULL : &none);
	if (!t)
		return -1;
	(void)tsc_now_ns(t);
	if (how == 2)
		tsc_close(t);
	return 0;
}
EOF
cat > "$d/host.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int how = atoi(argv[2]), (*use)(int);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

	if (!h || !(use = (int (*)(int))dlsym(h, "plugin_use")) || use(how)) {
		printf("cannot use the plugin: %s\n", dlerror());
		return 2;
	}
	dlclose(h);
	usleep(2500000);
	/* Still loaded?  3 kept (the watcher's code), 4 unloaded. */
	return dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) ? 3 : 4;
}
EOF
cc -O2 -fPIC -shared $inc -o "$d/plugin.so" "$d/plugin.c" "$TSC_TEST_LIBDIR/libtsc.a" -lpthread ||
	{ echo "# FAIL: build the plugin"; exit 1; }
cc -O2 -o "$d/host" "$d/host.c" -ldl || { echo "# FAIL: build the host"; exit 1; }

for how in 0 1 2; do
	case $how in
	0) what="tsc_default()"; want=3 ;;
	1) what="tsc_open() with its watcher, not closed"; want=3 ;;
	2) what="tsc_open() without a watcher, closed"; want=4 ;;
	esac
	"$d/host" "$d/plugin.so" $how > "$d/out" 2>&1
	rc=$?
	sed 's/^/# /' "$d/out"
	if [ $rc -gt 128 ]; then
		no "$what: the process died of signal $((rc - 128)) after dlclose() (the watcher ran unmapped code)"
	elif [ $rc != $want ]; then
		no "$what: exit $rc, want $want (3: the plugin stays loaded, 4: it unloads)"
	else
		echo "# $what: $([ $want = 3 ] && echo "alive 2.5 s after dlclose(), the plugin kept" || echo "unloaded at dlclose()")"
	fi
done
exit $fail
