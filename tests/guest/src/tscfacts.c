// SPDX-License-Identifier: GPL-2.0
/*
 * tscfacts STOPFILE: read tsc0's tsc_khz, tsc_mult and tsc_shift over and
 * over, as a program that wants a coherent set would (mult, shift, khz,
 * then mult again), until STOPFILE is gone, while the kernel registers
 * the tsc clocksource again (tests/kmod/tsc_reregister.ko). Every set
 * read must be the one read before the start, the one the kernel uses
 * again after each registration: tsc_reregister registers with the same
 * tsc_khz. A set that differs, or whose mult is not
 * clocks_calc_mult_shift()'s for its khz and shift, is one the kernel
 * never used; each such set is printed once, with how often it was
 * read. (The ABI lets tsc_khz leave the factors only after cpufreq
 * rescaled it or Hyper-V reported a new rate; the guest has neither.) Writes "# fact
 * tscfacts/bad=N" and "# fact tscfacts/reads=N" to $TSCKIT_RESULTS.
 * Exits 1 on a bad set.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define DIR "/sys/devices/system/tsc/tsc0/"

static unsigned int read_u32(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0) {
		perror("pread");
		exit(2);
	}
	buf[n] = 0;
	return strtoul(buf, NULL, 10);
}

static int open_file(const char *name)
{
	int fd = open(name, O_RDONLY);

	if (fd < 0) {
		perror(name);
		exit(2);
	}
	return fd;
}

/* Does mult come from khz and shift as clocks_calc_mult_shift() makes it? */
static int derived(unsigned int khz, unsigned int mult, unsigned int shift)
{
	unsigned long long m;

	if (!khz || shift > 32)
		return 0;
	m = ((1000000ULL << shift) + khz / 2) / khz;
	return m == mult;
}

/* The distinct bad sets, and how often each was read. */
static struct bad_set {
	unsigned int mult, shift, khz, again;
	unsigned long long n;
} bad_sets[16];
static int nr_bad_sets;

static void note_bad(unsigned int mult, unsigned int shift, unsigned int khz,
		     unsigned int again)
{
	struct bad_set *b;
	int i;

	for (i = 0; i < nr_bad_sets; i++) {
		b = &bad_sets[i];
		if (b->mult == mult && b->shift == shift && b->khz == khz &&
		    b->again == again) {
			b->n++;
			return;
		}
	}
	if (nr_bad_sets == sizeof(bad_sets) / sizeof(bad_sets[0]))
		return;
	b = &bad_sets[nr_bad_sets++];
	b->mult = mult;
	b->shift = shift;
	b->khz = khz;
	b->again = again;
	b->n = 1;
}

int main(int argc, char **argv)
{
	int i;
	unsigned long long reads = 0, bad = 0;
	unsigned int khz0, mult0, shift0;
	int fk, fm, fs;
	FILE *res;

	if (argc != 2) {
		fprintf(stderr, "usage: tscfacts STOPFILE\n");
		return 2;
	}
	fk = open_file(DIR "tsc_khz");
	fm = open_file(DIR "tsc_mult");
	fs = open_file(DIR "tsc_shift");
	mult0 = read_u32(fm);
	shift0 = read_u32(fs);
	khz0 = read_u32(fk);
	printf("tscfacts: before: tsc_khz %u tsc_mult %u tsc_shift %u\n",
	       khz0, mult0, shift0);
	if (!derived(khz0, mult0, shift0)) {
		printf("FAIL: tscfacts: the first set is not derived from tsc_khz\n");
		return 1;
	}
	while (access(argv[1], F_OK) == 0) {
		unsigned int mult = read_u32(fm);
		unsigned int shift = read_u32(fs);
		unsigned int khz = read_u32(fk);
		unsigned int again = read_u32(fm);

		reads++;
		if (mult == mult0 && again == mult0 && shift == shift0 &&
		    khz == khz0)
			continue;
		bad++;
		note_bad(mult, shift, khz, again);
	}
	for (i = 0; i < nr_bad_sets; i++) {
		struct bad_set *b = &bad_sets[i];

		printf("FAIL: tscfacts: read tsc_mult %u tsc_shift %u tsc_khz %u, then tsc_mult %u (%llu times): not a set the kernel used (%s)\n",
		       b->mult, b->shift, b->khz, b->again, b->n,
		       b->mult == b->again && derived(b->khz, b->mult, b->shift) ?
		       "derived, yet not the one in use" :
		       "mult not derived from khz and shift");
	}
	printf("# figure: tscfacts: %llu sets read, %llu bad\n", reads, bad);
	res = fopen(getenv("TSCKIT_RESULTS") ?: "/dev/null", "a");
	if (res) {
		fprintf(res, "# fact tscfacts/reads=%llu\n", reads);
		fprintf(res, "# fact tscfacts/bad=%llu\n", bad);
		fclose(res);
	}
	return bad ? 1 : 0;
}
