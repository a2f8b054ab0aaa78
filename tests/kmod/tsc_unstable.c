// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: mark the TSC unstable on purpose, the way the kernel
 * itself does it, so that the run-time path can be tested in a guest.
 * Never part of the series, never loaded outside the QEMU test guest.
 *
 *   insmod tsc_unstable.ko context=timer	from a timer (softirq), like
 *						the clocksource watchdog
 *   insmod tsc_unstable.ko context=process	from process context
 *
 * The moment of the decision, ktime_get_mono_fast_ns() (CLOCK_MONOTONIC)
 * taken just before mark_tsc_unstable(), stays readable in
 * /sys/module/tsc_unstable/parameters/decided_ns, so that user space can
 * time its own reaction from there rather than from the insmod; and
 * marked_ns, taken when mark_tsc_unstable() has returned.
 *
 * Both are taken with preemption off (softirq, or preempt_disable() in
 * process context): mark_tsc_unstable() hands the clocksource switch to a
 * work item on this CPU, so the switch always comes after marked_ns, and a
 * read begun after marked_ns that still got the TSC found a kernel that
 * did not refuse it on the flag alone. Loading the module when the TSC is
 * already unstable fails with -EALREADY: there would be no moment to time.
 */
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/timekeeping.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <asm/tsc.h>

static char *context = "timer";
module_param(context, charp, 0444);
MODULE_PARM_DESC(context, "where to call mark_tsc_unstable(): timer or process");

static unsigned long long decided_ns, marked_ns;
module_param(decided_ns, ullong, 0444);
MODULE_PARM_DESC(decided_ns, "CLOCK_MONOTONIC ns just before mark_tsc_unstable() (read only)");
module_param(marked_ns, ullong, 0444);
MODULE_PARM_DESC(marked_ns, "CLOCK_MONOTONIC ns once mark_tsc_unstable() returned (read only)");

static void mark(char *reason)
{
	WRITE_ONCE(decided_ns, ktime_get_mono_fast_ns());
	mark_tsc_unstable(reason);
	/* The flag's store is visible to every CPU before marked_ns is taken. */
	smp_mb();
	WRITE_ONCE(marked_ns, ktime_get_mono_fast_ns());
}

static DECLARE_COMPLETION(marked);

static void mark_from_timer(struct timer_list *timer)
{
	WARN_ON_ONCE(!in_serving_softirq());
	mark("tsckit test module (timer context)");
	complete(&marked);
}

static int __init tsc_unstable_init(void)
{
	struct timer_list timer;

	if (strcmp(context, "process") && strcmp(context, "timer")) {
		pr_err("tsc_unstable: context=%s: use timer or process\n", context);
		return -EINVAL;
	}
	if (check_tsc_unstable()) {
		pr_err("tsc_unstable: the TSC is already marked unstable\n");
		return -EALREADY;
	}
	if (!strcmp(context, "process")) {
		preempt_disable();
		mark("tsckit test module (process context)");
		preempt_enable();
		return 0;
	}
	timer_setup_on_stack(&timer, mark_from_timer, 0);
	mod_timer(&timer, jiffies + 1);
	wait_for_completion(&marked);
	timer_delete_sync(&timer);
	timer_destroy_on_stack(&timer);
	return 0;
}
module_init(tsc_unstable_init);

static void __exit tsc_unstable_exit(void)
{
}
module_exit(tsc_unstable_exit);

MODULE_DESCRIPTION("tsckit test only: mark the TSC unstable on request");
MODULE_LICENSE("GPL");
