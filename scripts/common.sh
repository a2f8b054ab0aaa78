# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # variables for the sourcing scripts
# Shared paths and helpers for the test-bed scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
# The kernel the series is for: Debian's newest source package, from the
# suite below (scripts/apt-backports pins it). When Debian moves on
# (7.3.5, or 7.4 replacing 7.3), this line moves the project.
SRC_PKG=linux-source-7.3 SRC_SUITE=trixie-backports
SRC_TARBALL=/usr/src/$SRC_PKG.tar.xz
TREE=$BUILD/linux		# git tree: pristine source + series
# Test kernels: "default" (kernel/config/*.config: lockdep and the
# atomic-sleep checks) and the sanitizer kernels, each the default one
# plus kernel/config/kernels/NAME.config, built in build/obj-NAME.
# TSCKIT_KERNEL selects the one a script works on.
KERNEL_NAME=${TSCKIT_KERNEL:-default}
SANITIZER_KERNELS="kcsan kasan"
case " default $SANITIZER_KERNELS " in
*" $KERNEL_NAME "*) ;;
*) echo "error: no test kernel '$KERNEL_NAME' (default $SANITIZER_KERNELS)" >&2; exit 1 ;;
esac
if [ "$KERNEL_NAME" = default ]; then
	OBJ=$BUILD/obj		# kernel build output (O=)
else
	OBJ=$BUILD/obj-$KERNEL_NAME
fi
SERIES=$TOP/kernel/series	# one directory per series, applied in name order
BASE_TAG=tsckit-base		# the pristine source commit in $TREE
JOBS=${JOBS:-$(nproc)}

export CCACHE_DIR=${CCACHE_DIR:-/var/cache/tsckit-ccache}
# Paths relative to the checkout, so another clone hits the same cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$TOP}

die() { echo "error: $*" >&2; exit 1; }
say() { echo "==> $*" >&2; }

# The series, in the order they apply: the directories of $SERIES that
# have a cover-letter.txt, by name.
series_dirs() {
	local d
	for d in "$SERIES"/*/; do
		[ -f "$d/cover-letter.txt" ] && echo "${d%/}"
	done
}

# The patches as git am sees them: every numbered patch but the cover
# letter, of the series DIR, or of all series in order.
series_patches() {
	local d p
	for d in ${1:-$(series_dirs)}; do
		for p in "$d"/[0-9][0-9][0-9][0-9]-*.patch; do
			[ -f "$p" ] && [ "${p##*/}" != 0000-cover-letter.patch ] && echo "$p"
		done
	done
}

# The tag that marks the last commit of series NAME in $TREE.
series_tag() { echo "series/$1"; }

# Make for the kernel tree, out of tree, through ccache.
kmake() {
	make -C "$TREE" O="$OBJ" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc" "$@"
}
