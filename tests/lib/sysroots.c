// SPDX-License-Identifier: MIT OR LGPL-2.1
/* Every captured and hand-made sysroot opens, gives reasons and a safe
 * decision: only the ones listed may use the TSC, and then with factors.
 * Every reason has a code, [a-z0-9_]+, listed in tsc_reasons(3). */
#include <dirent.h>

#include "t.h"

static char man[65536];		/* tsc_reasons.3 */
static int codes_seen;

static void read_man(void)
{
	char path[4096];
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/../../lib/man/tsc_reasons.3",
		 t_env("TSC_TEST_SYSROOTS"));
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (f) {
		len = fread(man, 1, sizeof(man) - 1, f);
		fclose(f);
	}
	man[len] = 0;
}

/* A line of the man page's table starts with the code and a tab. */
static bool documented(const char *code)
{
	size_t n = strlen(code);
	const char *p;

	for (p = man; (p = strstr(p, code)); p += n)
		if ((p == man || p[-1] == '\n') && p[n] == '\t')
			return true;
	return false;
}

static void codes(struct tsc *t, const char *name)
{
	struct tsc_reason r[64];
	int n = tsc_reasons(t, r, 64), i;
	const char *c;

	for (i = 0; i < n && i < 64; i++) {
		for (c = r[i].code; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
				break;
		CHECK(*r[i].code && !*c && c - r[i].code < TSC_REASON_CODE_LEN,
		      "%s: reason \"%s\": code \"%.*s\" is not [a-z0-9_]+", name, r[i].text,
		      TSC_REASON_CODE_LEN, r[i].code);
		CHECK(documented(r[i].code), "%s: code %s is not in tsc_reasons(3)'s table",
		      name, r[i].code);
		codes_seen++;
	}
}

static const char *const usable[] = {
	"patched-good", "no-tsc0", "khz-only", "mult-0", "shift-64", "mult-inconsistent",
	"vdso-flag-0", "vdso-garbage", "qemu64", "no-rdtscp",
	/* only explain the decision: a note when unreadable */
	"available-garbage", "cmdline-nul",
};

static void one(const char *base, const char *name)
{
	char dir[4096];
	struct tsc_info i;
	struct tsc *t;
	bool want = false;
	size_t k;

	for (k = 0; k < sizeof(usable) / sizeof(usable[0]); k++)
		want |= !strcmp(usable[k], name);
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	TSC_OPTS(o, .sysroot = dir, .no_watcher = true);
	t = tsc_open(&o);
	CHECK(t, "%s: open: %s", name, strerror(errno));
	if (!t)
		return;
	tsc_get_info(t, &i, sizeof(i));
	CHECK(tsc_reasons(t, NULL, 0) > 3, "%s: few reasons", name);
	codes(t, name);
	CHECK(i.usable == tsc_in_use(t), "%s: info and fast path disagree", name);
	CHECK(!i.usable || (i.mult && i.shift < 64 && i.src), "%s: usable without factors", name);
	CHECK(i.usable == want, "%s: usable %d, want %d", name, i.usable, want);
	if (i.usable != want)
		t_print_reasons(t);
	/* reads work either way */
	CHECK(tsc_now_ns(t) <= tsc_now_ns(t), "%s: reads went back", name);
	tsc_close(t);
}

static int scan(const char *base, bool variants)
{
	struct dirent *e;
	DIR *d = opendir(base);
	int n = 0;

	CHECK(d, "no %s", base);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || e->d_type != DT_DIR)
			continue;
		if (variants)
			one(base, e->d_name);
		else {
			/* captured dumps: just open and decide */
			char dir[4096];
			struct tsc *t;

			snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
			TSC_OPTS(o, .sysroot = dir, .no_watcher = true);
			t = tsc_open(&o);
			CHECK(t, "%s: open", e->d_name);
			if (t)
				codes(t, e->d_name);
			tsc_close(t);
		}
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	int n;

	read_man();
	n = scan(t_env("TSC_TEST_VARIANTS"), true);

	CHECK(n >= 20, "only %d hand-made sysroots", n);
	n = scan(t_env("TSC_TEST_SYSROOTS"), false);
	CHECK(n >= 1, "no captured sysroots");
	printf("# %d reasons' codes checked\n", codes_seen);
	DONE();
}
