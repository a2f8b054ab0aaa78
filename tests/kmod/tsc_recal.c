// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: change tsc_khz after boot the two ways that do not
 * go through a clocksource registration, so that the TSC sysfs files can
 * be checked after each. Never part of the series, never loaded outside
 * the QEMU test guest.
 *
 *   insmod tsc_recal.ko mode=khz updated=0x<tsc_khz_updated> [delta_khz=N]
 *
 * Stores tsc_khz + N (1000), as hyperv_stop_tsc_emulation() and the !SMP
 * recalibrate_cpu_khz() store a new tsc_khz, then calls what they call
 * after it: tsc_khz_updated(), at the address given (from /proc/kallsyms;
 * 0 on a kernel without it, where they called nothing). rmmod stores the
 * old tsc_khz back the same way.
 *
 *   insmod tsc_recal.ko mode=refine cs=0x<clocksource_tsc> \
 *	work=0x<tsc_irqwork> start=0x<tsc_start.N> [skew_ppm=P] [hold_ms=M]
 *
 * Runs the refined calibration again with the TSC marked unstable while it
 * runs, the moment between its check of tsc_unstable on entry and the one
 * at its out: label. As at boot before the refinement, the tsc clocksource
 * is unregistered with mult and shift 0; the refinement's work item is
 * queued with its start (the static tsc_start) reset, on another CPU than
 * this one. A hardware watchpoint on tsc_khz holds that CPU, for up to
 * hold_ms (1000), right after the refinement stores the new tsc_khz;
 * meanwhile this CPU marks the TSC unstable. The watchpoint also moves
 * the refined value by skew_ppm (2000), as the refined calibration moves
 * the early one at boot (by 0.16% under QEMU TCG), so that a refined value
 * equal to the one published before is no matter of luck. Then the
 * refinement goes on: it finds the TSC unstable, registers no tsc
 * clocksource and unregisters tsc-early (not registered: a no-op).
 * refined_khz (read only) is the tsc_khz it stored, skew included; the
 * load fails with -EAGAIN when the moment was not caught.
 */
#include <linux/clocksource.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <asm/tsc.h>

static char *mode = "khz";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "khz or refine");
static unsigned long updated;
module_param(updated, ulong, 0444);
MODULE_PARM_DESC(updated, "mode=khz: address of tsc_khz_updated(), 0 for none");
static int delta_khz = 1000;
module_param(delta_khz, int, 0444);
MODULE_PARM_DESC(delta_khz, "mode=khz: how much to add to tsc_khz");
static unsigned long cs, work, start;
module_param(cs, ulong, 0444);
MODULE_PARM_DESC(cs, "mode=refine: address of clocksource_tsc");
module_param(work, ulong, 0444);
MODULE_PARM_DESC(work, "mode=refine: address of tsc_irqwork");
module_param(start, ulong, 0444);
MODULE_PARM_DESC(start, "mode=refine: address of tsc_refine_calibration_work()'s tsc_start");
static int skew_ppm = 2000;
module_param(skew_ppm, int, 0444);
MODULE_PARM_DESC(skew_ppm, "mode=refine: how far to move the refined tsc_khz");
static int hold_ms = 1000;
module_param(hold_ms, int, 0444);
MODULE_PARM_DESC(hold_ms, "mode=refine: longest hold after the store of tsc_khz");
static unsigned int refined_khz;
module_param(refined_khz, uint, 0444);
MODULE_PARM_DESC(refined_khz, "mode=refine: the tsc_khz the refinement stored (read only)");

static unsigned int saved_khz;
static bool khz_mode;

static void khz_store(unsigned int khz)
{
	WRITE_ONCE(tsc_khz, khz);
	if (updated)
		((void (*)(void))updated)();
}

static bool armed, held, marked;

/* #DB, right after the refinement's store of tsc_khz. */
static void khz_stored(struct perf_event *bp, struct perf_sample_data *data,
		       struct pt_regs *regs)
{
	unsigned int khz;
	int i;

	if (!READ_ONCE(armed))
		return;
	WRITE_ONCE(armed, false);
	khz = READ_ONCE(tsc_khz);
	khz += (u64)khz * skew_ppm / 1000000;
	WRITE_ONCE(tsc_khz, khz);
	WRITE_ONCE(refined_khz, khz);
	WRITE_ONCE(held, true);
	for (i = 0; i < hold_ms && !READ_ONCE(marked); i++)
		mdelay(1);
}

static int refine(void)
{
	struct perf_event * __percpu *wp;
	struct clocksource *tsc_cs = (struct clocksource *)cs;
	struct delayed_work *dwork = (struct delayed_work *)work;
	u64 *tsc_start = (u64 *)start;
	struct perf_event_attr attr;
	unsigned long timeout;
	int me, other, err;

	if (!tsc_cs || strcmp(tsc_cs->name, "tsc") || !dwork || !tsc_start) {
		pr_err("tsc_recal: cs=%#lx work=%#lx start=%#lx: give the tsc clocksource, tsc_irqwork and tsc_start\n",
		       cs, work, start);
		return -EINVAL;
	}
	if (check_tsc_unstable()) {
		pr_err("tsc_recal: the TSC is already marked unstable\n");
		return -EALREADY;
	}
	/* This CPU marks the TSC unstable; the refinement runs on another. */
	me = get_cpu();
	put_cpu();
	set_cpus_allowed_ptr(current, cpumask_of(me));
	other = cpumask_any_but(cpu_online_mask, me);
	if (other >= nr_cpu_ids) {
		pr_err("tsc_recal: mode=refine needs two CPUs\n");
		err = -ENODEV;
		goto out;
	}

	err = clocksource_unregister(tsc_cs);
	if (err)
		goto out;
	tsc_cs->mult = 0;
	tsc_cs->shift = 0;

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&tsc_khz;
	attr.bp_len = HW_BREAKPOINT_LEN_4;
	attr.bp_type = HW_BREAKPOINT_W;
	wp = register_wide_hw_breakpoint(&attr, khz_stored, NULL);
	if (IS_ERR_PCPU(wp)) {
		err = PTR_ERR_PCPU(wp);
		/* As the refinement would have left it. */
		clocksource_register_khz(tsc_cs, tsc_khz);
		goto out;
	}

	WRITE_ONCE(*tsc_start, ULLONG_MAX);
	WRITE_ONCE(armed, true);
	schedule_delayed_work_on(other, dwork, 0);
	/* The refinement takes its start, then its end a second later. */
	timeout = jiffies + 5 * HZ;
	while (!READ_ONCE(held) && time_before(jiffies, timeout))
		msleep(1);
	if (READ_ONCE(held)) {
		mark_tsc_unstable("tsckit test module (during the refinement)");
		WRITE_ONCE(marked, true);
	}
	WRITE_ONCE(armed, false);
	/* Until the refinement is done, whatever it did. */
	timeout = jiffies + 10 * HZ;
	while ((delayed_work_pending(dwork) || work_busy(&dwork->work)) &&
	       time_before(jiffies, timeout))
		msleep(10);
	unregister_wide_hw_breakpoint(wp);
	pr_info("tsc_recal: refinement %s: tsc_khz %u, clocksource tsc %s\n",
		marked ? "held, TSC marked unstable" : "not caught",
		tsc_khz, tsc_cs->mult ? "registered" : "not registered");
	err = marked ? 0 : -EAGAIN;
out:
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	return err;
}

static int __init tsc_recal_init(void)
{
	if (!strcmp(mode, "refine"))
		return refine();
	if (strcmp(mode, "khz")) {
		pr_err("tsc_recal: mode=%s: use khz or refine\n", mode);
		return -EINVAL;
	}
	saved_khz = tsc_khz;
	khz_mode = true;
	khz_store(saved_khz + delta_khz);
	pr_info("tsc_recal: tsc_khz %u -> %u, %s\n", saved_khz, tsc_khz,
		updated ? "tsc_khz_updated() called" : "nothing called");
	return 0;
}
module_init(tsc_recal_init);

static void __exit tsc_recal_exit(void)
{
	if (khz_mode)
		khz_store(saved_khz);
}
module_exit(tsc_recal_exit);

MODULE_DESCRIPTION("tsckit test only: change tsc_khz after boot");
MODULE_LICENSE("GPL");
