# SPDX-License-Identifier: GPL-2.0
# tsckit. The two commands: make run (the demo) and make check (all tests).
# The rest are the steps they are made of, for working on the series.

S := scripts

.PHONY: run check check-kasan deps tree kernel guest export-series checkpatch \
	each-patch scenario emucheck soak clean distclean lib tools install host-check bench \
	fresh-check deb pkg-check metrics-check post-series

run:			## boot the patched kernel: tscinfo, a live loss of trust in the TSC; tscinfo here
	$(S)/demo

check:			## every test, host and guest; ends with "check: N passed, ..."
	$(S)/check

check-kasan:		## the scenarios on the kasan kernel (not in make check: time budget)
	$(S)/check kasan

fresh-check:		## make check in a new Debian 12 chroot (debootstrap): catches missing packages
	$(S)/fresh-check

deps:			## install the Debian packages the test bed needs
	$(S)/install-deps

tree: deps		## unpack the kernel source (scripts/common.sh) into build/linux, git am the series
	$(S)/kernel-tree

kernel: tree		## configure and build the test kernel in build/obj
	$(S)/kernel-build

guest: tree		## build the test kernel, the guest's test programs and initramfs
	TSCKIT_KERNEL=$(KERNEL) $(S)/guest-build

export-series:		## save the commits in build/linux as the series of kernel/series/
	$(S)/export-series

post-series:		## the series to post, From: and Signed-off-by: yours, in build/post/
	$(S)/post-series

checkpatch:		## checkpatch.pl --strict on every patch of the series
	$(S)/checkpatch-series

each-patch:		## build the whole kernel after each patch in turn
	$(S)/build-each-patch --full

scenario: guest		## boot one scenario: make scenario NAME=default [KERNEL=kcsan|kasan]
	$(S)/run-scenario $(NAME) $(KERNEL)

SEED ?= 1
COUNT ?= 20000
emucheck: guest		## RDTSC emulation against the CPU in QEMU: make emucheck SEED=n COUNT=m
	EMUCHECK_SEED=$(SEED) EMUCHECK_COUNT=$(COUNT) $(S)/run-scenario tsc-user-emucheck

MINUTES ?= 10
soak: tree		## everything at once on the kcsan kernel: make soak MINUTES=n
	TSCKIT_KERNEL=kcsan $(S)/guest-build
	SOAK_MINUTES=$(MINUTES) $(S)/run-scenario soak kcsan

lib:			## build libtsc (libtsc.a, libtsc.so.0, libtsc.pc) in build/lib
	$(MAKE) -C lib

# tscbench measures the TSC: built for x86-64 only (libtsc and tscinfo
# build for other 64-bit architectures too, where they read the fallback clock).
X86_64	= $(filter x86_64-%,$(shell $(CC) -dumpmachine))

tools: lib		## build tscinfo, tscbench (and their -static builds) in build/tools
	$(MAKE) -C tools/tscinfo
	$(if $(X86_64),$(MAKE) -C tools/tscbench,@echo "tscbench: x86-64 only, not built")

install: tools		## install libtsc, tscinfo and tscbench: make install PREFIX=/usr DESTDIR=/tmp/r
	$(MAKE) -C lib install
	$(MAKE) -C tools/tscinfo install
	$(if $(X86_64),$(MAKE) -C tools/tscbench install,@echo "tscbench: x86-64 only, not installed")

host-check:		## libtsc and tscinfo tests on this machine (TAP), no kernel tree
	$(MAKE) -s -C tests/lib check

deb:			## Debian packages libtsc0, libtsc-dev, tscinfo in build/deb/ (dpkg-buildpackage)
	$(S)/deb

pkg-check:		## make deb, then lintian and tests of the packages' contents (TAP)
	tests/pkg/check

metrics-check:		## tscinfo's metrics through a real node_exporter; the systemd units (TAP)
	tests/metrics/check

bench: tools		## tscbench here (10 s) and in the QEMU guest (default, hpet): build/bench/
	mkdir -p build/bench
	tests/sysroots/make-variants build/bench/variants
	build/tools/tscbench --json=build/bench/host.json --plot build/bench/host.png \
		--open-sysroot build/bench/variants/patched-good > build/bench/host.txt; \
		rc=$$?; cat build/bench/host.txt; [ $$rc -le 1 ]
	tools/tscbench/bench-guest build/bench

clean:			## remove outputs, keep the kernel tree and its objects
	rm -rf build/check build/scenarios build/guest

distclean:		## remove build/ entirely
	rm -rf build
