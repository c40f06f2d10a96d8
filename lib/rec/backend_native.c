// SPDX-License-Identifier: MIT
/*
 * The recorder's backend and untraced code (backend_native.h).
 *
 * The re-entry points: every function entry of a traced module (callbacks),
 * found in the symbols of the modules mapped when a thread first runs
 * natively (as the fast mode's) and in their unwind tables (stripped ones:
 * rec_entries.c), the program's entry point, and every return site of a
 * translated call.  The history is the fast mode's: the branch into
 * untraced code, then an untraced gap from where it went to where it came
 * back.
 *
 * Each process of a followed tree has its own: what is traced is read
 * from its own map, its re-entry points from its own modules, its int3s
 * are in its own memory (a fork child's copied with its recorder,
 * rec_native_fork()).  The host's calls answer for the process of the
 * recorder picked last (rec_procs.h).
 *
 * --from in a followed child (the target's own process is the fast
 * mode's): a program it exec'd runs natively, all of it, with one int3
 * of ours, at --from's entry, or where --from is in no module mapped yet
 * at the program's entry point, where the libraries it was linked with
 * are there and --from is looked for again (one a program dlopens later
 * is not waited for).  The thread that reaches it arms its process: the
 * history starts with a gap (BT_GAP_DISABLED) to it, and the re-entry
 * points are set as for any process, when code it runs is untraced.  A
 * fork child starts as its parent stands.
 */
#include <sys/ptrace.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "internal.h"
#include "backend/soft/fast.h"
#include "rec/backend_native.h"
#include "rec/rec_procs.h"
#include "rec/recorder.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

/* The process of the call under way: the target's own, or a child's. */
static struct rec_proc *child_of(struct bt_target *t)
{
	struct rec_procs *s = bt_fast_above(t);

	return s && s->cur != t->pid ? rec_procs_find(s, s->cur) : NULL;
}

/*
 * --from arms the target's own process; a followed child's untraced code
 * is that of the modules its own map says the filters leave out.
 */
int rec_native_untraced(struct bt_target *t, uint64_t addr)
{
	struct rec_proc *p = child_of(t);

	if (p)
		return rec_proc_code_untraced(bt_fast_above(t), p, addr);
	return bt_fast_armed(t) && !bt_fast_traced(t, addr);
}

/* A followed child before --from: where its one int3 goes (above). */
static void from_watch(struct bt_target *t, struct rec_proc *p, int hook)
{
	uint64_t addr;

	if (p->from_addr || (hook && p->from_hook))
		return;	/* found, or looked for already */
	addr = bt_fast_sym_addr(t, p->pid, t->opts.from_sym);
	if (addr) {
		if (bt_recorder_reentry_add(p->r, addr) == 0)
			p->from_addr = addr;
		return;
	}
	addr = hook ? rec_auxv_entry(p->pid) : 0;
	if (addr && bt_aspace_insert(bt_target_aspace(t, p->pid), addr,
				     BT_BP_RECORDER) == 0)
		p->from_hook = addr;
}

int rec_native_reentry_ok(struct bt_target *t, uint64_t addr)
{
	struct rec_proc *p = child_of(t);

	if (p)
		return rec_proc_code_stable(bt_fast_above(t), p, addr);
	return bt_fast_code_stable(t, addr);
}

static int entry_add(struct bt_target *t, const char *name, uint64_t addr,
		     void *ctx)
{
	(void)name;
	if (rec_native_reentry_ok(t, addr))
		bt_recorder_reentry_add(ctx, addr);
	return 0;
}

/* @p's re-entry points: function entries and the program's entry. */
static void entries_add(struct bt_target *t, struct rec_proc *p)
{
	bt_fast_syms_each(t, p->pid, entry_add, p->r);
	rec_native_entries(t, p->r);
}

void rec_native_on(struct bt_target *t)
{
	struct rec_procs *s = bt_fast_above(t);
	struct rec_proc *p = s ? rec_procs_find(s, s->cur) : NULL;
	struct bt_recorder *r = p ? p->r : NULL;

	if (!r || !bt_recorder_native_on(r))
		return;
	if (p->disarmed)	/* none are until --from */
		from_watch(t, p, 1);
	else
		entries_add(t, p);
}

/*
 * @th of followed child @p before --from met our int3 at @at: the program's
 * entry point, where --from is looked for again, or --from, which arms @p.
 * 1 if it was one of them (@th goes on from @at, natively or into its
 * translation), 0 if not.
 */
static int from_trap(struct bt_target *t, struct rec_proc *p,
		     struct bt_thread *th, uint64_t at)
{
	if (at == p->from_hook && at != p->from_addr) {
		bt_aspace_remove(bt_target_aspace(t, p->pid), at,
				 BT_BP_RECORDER);
		from_watch(t, p, 0);
		if (at != p->from_addr)
			return 1;	/* on natively, the int3 gone */
	}
	if (at != p->from_addr)
		return 0;
	p->disarmed = 0;
	/* its re-entry points once code it runs is untraced (--only) */
	bt_recorder_native_off(p->r);
	bt_fast_native_back(t, th, at, BT_GAP_DISABLED);
	return 1;
}

void rec_native_host(struct bt_target *t, struct bt_thread *th,
		     uint64_t left_to)
{
	rec_native_on(t);
	bt_fast_native_set(th, left_to);
}

int rec_native_run(struct bt_target *t, struct bt_thread *th,
		   struct user_regs_struct *regs)
{
	if (!rec_native_untraced(t, regs->rip))
		return 0;
	rec_native_host(t, th, regs->rip);
	return bt_thread_restart(th, PTRACE_CONT, 0) < 0 ? -bte_ptrace : 1;
}

int rec_native_trap(struct bt_target *t, struct bt_thread *th,
		    const siginfo_t *si)
{
	pid_t pid = bt_thread_tgid(t, th);
	struct bt_aspace *as = bt_target_aspace(t, pid);
	struct user_regs_struct regs;
	uint64_t at, from;
	unsigned kinds;

	if (si->si_code != SI_KERNEL || bt_thread_regs(th, &regs) < 0)
		return 0;
	at = regs.rip - 1;
	kinds = bt_aspace_kinds(as, at);
	if (!(kinds & BT_BP_MASK(BT_BP_RECORDER)) ||
	    (kinds & BT_BP_MASK(BT_BP_USER)))
		return 0;
	if (bt_fast_native(th, NULL)) {
		struct rec_proc *p = child_of(t);

		/* before --from, the fast mode's own native thread */
		if (pid == t->pid && !bt_fast_armed(t))
			return 0;
		if (p && p->disarmed) {
			if (!from_trap(t, p, th, at))
				return 0;
		} else {
			bt_fast_native_back(t, th, at, BT_GAP_UNTRACED);
		}
	} else if (bt_fast_stepping(th, &from)) {
		if (from != at)
			return 0;
		bt_fast_chain_cut(t, th, at);	/* it ran our int3, not its own */
	} else {
		if (kinds & BT_BP_MASK(BT_BP_BACKEND))
			return 0;	/* the stop of the fast mode's chain */
		bt_fast_chain_cut(t, th, at);
	}
	regs.rip = at;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0)
		return 1;	/* gone meanwhile: its end is what to report */
	return 1;
}
