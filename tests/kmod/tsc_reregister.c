// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: register the tsc clocksource again from scratch, as
 * the refined calibration registers it at boot, while user space reads
 * tsc_khz, tsc_mult and tsc_shift. Never part of the series, never loaded
 * outside the QEMU test guest.
 *
 *   insmod tsc_reregister.ko cs=0x<clocksource_tsc from /proc/kallsyms> \
 *	[cycles=N] [hold_ms=M]
 *
 * Each cycle unregisters the tsc clocksource (timekeeping moves to the
 * next best, hpet), clears its mult and shift as they are before its
 * first registration, and registers it again with tsc_khz: the kernel
 * then uses the same factors as before. A hardware watchpoint on its
 * mult holds that CPU for hold_ms right after registration stores mult,
 * before it stores shift (clocks_calc_mult_shift()), so that a read in
 * that moment, a few instructions long at boot, is no matter of luck:
 * files that showed the live clocksource would give the new mult with
 * shift 0. held counts the holds.
 */
#include <linux/clocksource.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <asm/tsc.h>

static unsigned long cs;
module_param(cs, ulong, 0444);
MODULE_PARM_DESC(cs, "address of clocksource_tsc, from /proc/kallsyms");
static int cycles = 20;
module_param(cycles, int, 0444);
MODULE_PARM_DESC(cycles, "how many times to register the tsc clocksource again");
static int hold_ms = 20;
module_param(hold_ms, int, 0444);
MODULE_PARM_DESC(hold_ms, "how long to hold after the store of mult");
static int held;
module_param(held, int, 0444);
MODULE_PARM_DESC(held, "how many times the watchpoint held (read only)");

static struct clocksource *tsc_cs;
static bool registering;

/* #DB, after the store to tsc_cs->mult and before the next instruction. */
static void mult_stored(struct perf_event *bp, struct perf_sample_data *data,
			struct pt_regs *regs)
{
	if (!READ_ONCE(registering) || !READ_ONCE(tsc_cs->mult))
		return;
	held++;
	mdelay(hold_ms);
}

static int __init tsc_reregister_init(void)
{
	struct perf_event * __percpu *wp;
	struct perf_event_attr attr;
	int i, err = 0;

	tsc_cs = (struct clocksource *)cs;
	if (!tsc_cs || strcmp(tsc_cs->name, "tsc")) {
		pr_err("tsc_reregister: cs=%#lx is not the tsc clocksource\n", cs);
		return -EINVAL;
	}
	if (!tsc_cs->mult) {
		pr_err("tsc_reregister: the tsc clocksource is not registered\n");
		return -ENODEV;
	}

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&tsc_cs->mult;
	attr.bp_len = HW_BREAKPOINT_LEN_4;
	attr.bp_type = HW_BREAKPOINT_W;
	wp = register_wide_hw_breakpoint(&attr, mult_stored, NULL);
	if (IS_ERR_PCPU(wp))
		return PTR_ERR_PCPU(wp);

	for (i = 0; i < cycles && !err; i++) {
		err = clocksource_unregister(tsc_cs);
		if (err)
			break;
		tsc_cs->mult = 0;
		tsc_cs->shift = 0;
		WRITE_ONCE(registering, true);
		err = clocksource_register_khz(tsc_cs, tsc_khz);
		WRITE_ONCE(registering, false);
	}
	unregister_wide_hw_breakpoint(wp);
	pr_info("tsc_reregister: %d registrations, %d held: mult %u shift %u\n",
		i, held, tsc_cs->mult, tsc_cs->shift);
	return err;
}
module_init(tsc_reregister_init);

static void __exit tsc_reregister_exit(void)
{
}
module_exit(tsc_reregister_exit);

MODULE_DESCRIPTION("tsckit test only: register the tsc clocksource again");
MODULE_LICENSE("GPL");
