// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: hold a task inside the tsc_user #GP handler, after its
 * trap was decided and answered, so that a test can change kernel.tsc_user
 * meanwhile. Never part of the series, never loaded outside the QEMU test
 * guest.
 *
 *   insmod tsc_user_hold.ko comm=tschold hold_ms=1500
 *
 * The next trapped RDTSC/RDTSCP of a task named @comm waits hold_ms in the
 * tsc_user:tsc_user_trap tracepoint, which the handler reaches in the RCU
 * read section where it decided. While it waits, the parameter holding
 * reads 1; held counts the holds so far. Each hold is armed by writing 1
 * to the parameter arm.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

static char *comm = "tschold";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "hold only a task of this name");

static unsigned int hold_ms = 1500;
module_param(hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "how long to hold it, in ms");

static int arm, holding, held;
module_param(arm, int, 0644);
MODULE_PARM_DESC(arm, "1: hold the next trap of @comm");
module_param(holding, int, 0444);
MODULE_PARM_DESC(holding, "1 while a task is held (read only)");
module_param(held, int, 0444);
MODULE_PARM_DESC(held, "tasks held so far (read only)");

static struct tracepoint *trap_tp;

/* Preemption is off in a tracepoint: wait, do not sleep. */
static void hold(void *data, unsigned long ip, bool rdtscp, bool emulated)
{
	unsigned int ms;

	if (strcmp(current->comm, comm) || cmpxchg(&arm, 1, 0) != 1)
		return;
	WRITE_ONCE(holding, 1);
	for (ms = 0; ms < hold_ms; ms++)
		mdelay(1);
	WRITE_ONCE(held, held + 1);
	/* The task leaves the handler only after this store. */
	smp_store_release(&holding, 0);
}

static void find_trap_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "tsc_user_trap"))
		trap_tp = tp;
}

static int __init tsc_user_hold_init(void)
{
	for_each_kernel_tracepoint(find_trap_tp, NULL);
	if (!trap_tp) {
		pr_err("tsc_user_hold: no tsc_user_trap tracepoint\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(trap_tp, hold, NULL);
}
module_init(tsc_user_hold_init);

static void __exit tsc_user_hold_exit(void)
{
	tracepoint_probe_unregister(trap_tp, hold, NULL);
	tracepoint_synchronize_unregister();
}
module_exit(tsc_user_hold_exit);

MODULE_DESCRIPTION("tsckit test only: hold a task in the tsc_user trap handler");
MODULE_LICENSE("GPL");
