// SPDX-License-Identifier: MIT OR LGPL-2.1
/*
 * print_prometheus() of a made-up report: reasons whose codes hold every
 * byte a label value must escape, and one that is not UTF-8, which
 * libtsc never gives (its codes are [a-z0-9_]+) but tscinfo must not
 * trust; a code said twice with two texts (listed once) and once more
 * with another kind (listed); a note (not listed: notes are no
 * metrics); every other fact unknown, so only
 * tsc_usable, tsc_kernel_series and the reasons may be written.
 * tests/metrics/check feeds the output to node_exporter.  "reasons-test
 * log": the --format=log line of the same report, which must stay one line.
 */
#include <string.h>

#include "tscinfo.h"

static void reason(struct report *r, enum tsc_reason_kind kind, const char *code,
		   const char *text)
{
	r->reasons[r->nreasons].kind = kind;
	strcpy(r->reasons[r->nreasons].code, code);
	strcpy(r->reasons[r->nreasons].text, text);
	r->nreasons++;
}

int main(int argc, char **argv)
{
	struct cfg cfg = { .format = FMT_PROMETHEUS };
	struct report r = { .cfg = &cfg };
	const char *odd = "say_\"no\"_C:\\tsc\\\nstop";

	r.info.vdso_clock = -1;
	r.info.tsc_user = -1;
	r.info.tsc_user_value = -1;
	r.info.prctl_tsc = -1;
	r.info.tsc_stable = -1;
	reason(&r, TSC_REASON_BLOCK, odd, "say \"no\" to C:\\tsc\\ and\nthen stop");
	reason(&r, TSC_REASON_OK, "trailing_\\", "trailing backslash \\");
	reason(&r, TSC_REASON_OK, "not_utf8_\xff\xc0\x80_utf8_\xc2\xb5s",
	       "not UTF-8: \xff\xc0\x80, UTF-8: \xc2\xb5s");
	reason(&r, TSC_REASON_BLOCK, odd, "the same condition, another number: 42");
	reason(&r, TSC_REASON_OK, odd, "the same code, another kind");
	/* A note is no metric: this one must not be written. */
	reason(&r, TSC_REASON_NOTE, "a_note", "a fact that decides nothing");
	if (argc > 1 && !strcmp(argv[1], "log"))
		print_log(stdout, "change", &r.info, &r.freq, NULL, r.reasons, r.nreasons, false);
	else
		print_prometheus(stdout, &r);
	return 0;
}
