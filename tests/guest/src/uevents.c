// SPDX-License-Identifier: GPL-2.0
/*
 * uevents READYFILE SECONDS: the kernel's change uevents for tsc0 and
 * clocksource0, as a udev rule would get them, while someone marks the
 * TSC unstable. Listens on NETLINK_KOBJECT_UEVENT, creates READYFILE once
 * it does, prints each event for the two devices, and stops when tsc0 has
 * said TSC_STABLE=0 and clocksource0 has named a clocksource other than
 * tsc with CURRENT_CLOCKSOURCE_VDSO=0, or after SECONDS.
 *
 * The socket asks for a large receive buffer (SO_RCVBUFFORCE as root,
 * else SO_RCVBUF). If it overflows all the same (recv() fails with
 * ENOBUFS: the kernel dropped events), the overflow is counted and said,
 * and the listening goes on: a later event still counts. But an event
 * that did not come may have been dropped rather than never sent, so a
 * run that ends without both events after an overflow fails, and says it
 * cannot tell which; one that got both passes, its overflows reported.
 *
 * Writes "# fact uevent/tsc0/TSC_STABLE" (and clocksource0's
 * CURRENT_CLOCKSOURCE and CURRENT_CLOCKSOURCE_VDSO, from the last event
 * of each, the counts, and uevent/overflows) to $TSCKIT_RESULTS. Exit 0
 * when both came, 1 when not, 2 on a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TSC0	"/devices/system/tsc/tsc0"
#define CS0	"/devices/system/clocksource/clocksource0"
/* Many events at a burst of clocksource switches: 4 MiB, not ~200 KiB. */
#define RCVBUF	(4 << 20)

struct device_events {
	const char *devpath;
	int count;
	char vars[2][64];	/* the last event's values of keys[] */
	const char *keys[2];
};

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* One kernel uevent: "ACTION@DEVPATH", then KEY=VALUE strings, NUL ended. */
static void take(struct device_events *d, const char *buf, ssize_t n)
{
	ssize_t off;
	int k;

	if (strncmp(buf, "change@", 7) || strcmp(buf + 7, d->devpath))
		return;
	d->count++;
	memset(d->vars, 0, sizeof(d->vars));
	printf("uevent: %s", buf);
	for (off = strlen(buf) + 1; off < n; off += strlen(buf + off) + 1) {
		printf(" %s", buf + off);
		for (k = 0; k < 2; k++) {
			size_t len = d->keys[k] ? strlen(d->keys[k]) : 0;

			if (len && !strncmp(buf + off, d->keys[k], len) && buf[off + len] == '=')
				snprintf(d->vars[k], sizeof(d->vars[k]), "%s", buf + off + len + 1);
		}
	}
	printf("\n");
}

/* Room for a burst of events: beyond rmem_max only as root (FORCE). */
static void grow_rcvbuf(int fd)
{
	int size = RCVBUF, got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)))
		fprintf(stderr, "uevents: SO_RCVBUF: %s; keeping the default\n", strerror(errno));
	if (!getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) && got < size)
		printf("uevents: receive buffer %d bytes, not %d (not root?)\n", got, size);
}

int main(int argc, char **argv)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	struct device_events tsc = { TSC0, 0, { "" }, { "TSC_STABLE", NULL } };
	struct device_events cs = { CS0, 0, { "" },
				    { "CURRENT_CLOCKSOURCE", "CURRENT_CLOCKSOURCE_VDSO" } };
	const char *out = getenv("TSCKIT_RESULTS");
	long long end, secs;
	char buf[8192], *rest;
	int fd, done = 0, overflows = 0, err = 0;
	FILE *res;

	secs = argc == 3 ? strtoll(argv[2], &rest, 10) : 0;
	if (argc != 3 || *rest || secs <= 0 || secs > INT_MAX / 1000) {
		fprintf(stderr, "usage: uevents READYFILE SECONDS\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (fd < 0) {
		fprintf(stderr, "uevents: NETLINK_KOBJECT_UEVENT: %s\n", strerror(errno));
		return 2;
	}
	grow_rcvbuf(fd);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "uevents: NETLINK_KOBJECT_UEVENT: %s\n", strerror(errno));
		return 2;
	}
	if (close(open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644))) {
		fprintf(stderr, "uevents: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	end = mono_ms() + secs * 1000;
	while (!done && !err) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = end - mono_ms();
		ssize_t n;
		int ret;

		if (left <= 0)
			break;
		/* left is at most SECONDS * 1000 <= INT_MAX: never negative. */
		ret = poll(&pfd, 1, (int)left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "uevents: poll: %s\n", strerror(errno));
			err = 1;
			break;
		}
		if (ret == 0)
			break;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/* The kernel dropped events: say so, listen on. */
			overflows++;
			printf("uevents: receive buffer overflowed (%d so far): events were lost\n",
			       overflows);
			continue;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			fprintf(stderr, "uevents: recv: %s\n", n ? strerror(errno) : "end of stream");
			err = 1;
			break;
		}
		buf[n] = '\0';
		take(&tsc, buf, n);
		take(&cs, buf, n);
		done = !strcmp(tsc.vars[0], "0") && cs.vars[0][0] &&
		       strcmp(cs.vars[0], "tsc") && !strcmp(cs.vars[1], "0");
	}
	res = fopen(out && *out ? out : "/dev/null", "a");
	if (res) {
		fprintf(res, "# fact uevent/tsc0/count=%d\n", tsc.count);
		fprintf(res, "# fact uevent/tsc0/TSC_STABLE=%s\n", tsc.vars[0]);
		fprintf(res, "# fact uevent/clocksource0/count=%d\n", cs.count);
		fprintf(res, "# fact uevent/clocksource0/CURRENT_CLOCKSOURCE=%s\n", cs.vars[0]);
		fprintf(res, "# fact uevent/clocksource0/CURRENT_CLOCKSOURCE_VDSO=%s\n", cs.vars[1]);
		fprintf(res, "# fact uevent/overflows=%d\n", overflows);
		fclose(res);
	}
	if (overflows)
		printf("# figure: uevents: %d receive buffer overflows; %s\n", overflows,
		       done ? "the awaited events came all the same" :
		       "an awaited event may have been dropped, not unsent: cannot tell");
	if (!done)
		printf("uevents: no TSC_STABLE=0 on tsc0 and switch with CURRENT_CLOCKSOURCE_VDSO=0 on clocksource0 within %s s%s\n",
		       argv[2], overflows ? " (events were lost to overflows)" : "");
	return done ? 0 : 1;
}
