# SPDX-License-Identifier: MIT OR LGPL-2.1
# What the tools' Makefiles share: $(TOOL), linked with libtsc.a, and
# $(TOOL)-static, fully static (guest); both with tools/common/.
# LIBTSC_LINK=shared links $(TOOL) with libtsc.so.0 instead, as a
# distribution package must (debian/rules), so that a fix shipped in the
# library reaches the tools; such a binary finds the library only once
# it is installed (or with LD_LIBRARY_PATH).
# make install adds its man pages and bash completion ($(TOOL).bash-completion).
# The including Makefile sets TOOL, SRCS, HDRS, LIBS and may set
# LIBSRCS (lib/src files compiled in: internals the tool calls, which
# libtsc.so.0 does not export), INSTALL_EXTRA (run by make install), and
# EXTRA_OBJS (objects of its own rules, linked into both) with the
# libraries they need, EXTRA_LIBS and EXTRA_LIBS_STATIC.

TOP	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
D	:= $(TOP)/tools/$(TOOL)
C	:= $(TOP)/tools/common
O	?= $(TOP)/build/tools
LIBO	?= $(TOP)/build/lib
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
COMPDIR	?= $(PREFIX)/share/bash-completion/completions

LIBTSC_LINK ?= static
ifeq ($(LIBTSC_LINK),shared)
# By path, not -L: an -L in LDFLAGS would find an installed libtsc first.
LINK_LIBTSC := $(LIBO)/libtsc.so
else ifeq ($(LIBTSC_LINK),static)
LINK_LIBTSC := $(LIBO)/libtsc.a
else
$(error LIBTSC_LINK=$(LIBTSC_LINK): say static (libtsc.a, the default) or shared (libtsc.so.0))
endif

CC	?= cc
CFLAGS	?= -O2 -g
WARN	:= -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	   -Wno-unused-parameter
TOOL_CFLAGS := $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(TOP)/lib/include -I$(LIBO)/include -I$(C) \
	   -I$(TOP)/lib/src
COMMON	:= opt.c json.c msg.c utf8.c freq.c klog.c
COMMON_HDRS := opt.h json.h msg.h utf8.h freq.h gettime.h
# freq.c reads CPUID through libtsc's helpers, which libtsc.so.0 does
# not export: compiled in, as LIBSRCS.
ALL_SRCS := $(addprefix $(D)/,$(SRCS)) $(addprefix $(C)/,$(COMMON)) \
	    $(addprefix $(TOP)/lib/src/,$(sort $(LIBSRCS) cpuid.c))
DEPS	:= $(ALL_SRCS) $(addprefix $(D)/,$(HDRS)) $(addprefix $(C)/,$(COMMON_HDRS)) \
	   $(LIBO)/libtsc.a $(TOP)/lib/include/tsc.h $(TOP)/lib/src/internal.h $(EXTRA_OBJS)

# Manual pages, section 1, as installed: .TH's version and date filled
# in (scripts/gen-man).  MANPAGES: the including Makefile's, else $(TOOL).1.
MANPAGES ?= $(TOOL).1
GEN_MANS := $(addprefix $(O)/man/man1/,$(MANPAGES))

.PHONY: all install clean lib FORCE
all: $(O)/$(TOOL) $(O)/$(TOOL)-static $(GEN_MANS)

$(O)/man/man1/%.1: $(D)/%.1 $(TOP)/lib/VERSION $(TOP)/debian/changelog $(TOP)/scripts/gen-man
	$(TOP)/scripts/gen-man $(O)/man $<

# Which libtsc $(TOOL) was linked with: rewritten (and so relinked) only
# when LIBTSC_LINK changes.
$(O)/.$(TOOL).link: FORCE
	@mkdir -p $(@D)
	@echo $(LIBTSC_LINK) | cmp -s - $@ || echo $(LIBTSC_LINK) > $@

$(LIBO)/libtsc.a: lib
	@:
lib:
	$(MAKE) -s -C $(TOP)/lib O=$(LIBO)

$(O)/$(TOOL): $(DEPS) $(O)/.$(TOOL).link
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TOOL_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(ALL_SRCS) \
		$(EXTRA_OBJS) $(LINK_LIBTSC) $(LIBS) $(EXTRA_LIBS)

$(O)/$(TOOL)-static: $(DEPS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(TOOL_CFLAGS) $(CFLAGS) $(LDFLAGS) -static -o $@ $(ALL_SRCS) \
		$(EXTRA_OBJS) $(LIBO)/libtsc.a $(LIBS) $(EXTRA_LIBS_STATIC)

install: $(O)/$(TOOL) $(GEN_MANS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPDIR)
	install -m 755 $(O)/$(TOOL) $(DESTDIR)$(BINDIR)/
	$(INSTALL_EXTRA)
	install -m 644 $(GEN_MANS) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(D)/$(TOOL).bash-completion $(DESTDIR)$(COMPDIR)/$(TOOL)

clean:
	rm -f $(O)/$(TOOL) $(O)/$(TOOL)-static $(O)/.$(TOOL).link $(GEN_MANS)
