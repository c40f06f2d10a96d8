// SPDX-License-Identifier: MIT
/*
 * Dispatch (recorder.h): a thread enters its translation, stops at the
 * translation's exits (a direct exit not linked yet, a lookup miss, a
 * leave), faults on its ring's guard page, and leaves with its registers
 * mapped back to the program's own at the original pc.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_ring.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#define STEP_MAX	256		/* steps to reach a safe point */

/* ---- entering ------------------------------------------------------------ */

/*
 * Ready to take @th in: memory mapped, the translations of stops that
 * changed forgotten, code its last system call took away invalidated, its
 * slot taken.  Its rthread, or NULL (declined) with *@err set on errors.
 */
static struct rthread *enter_prepare(struct bt_recorder *r,
				     struct bt_thread *th, int *err)
{
	struct rthread *rt;
	uint64_t v;

	*err = 0;
	if (r->broken || !rc_ours(r, th))
		return NULL;
	if (rc_setup(r, th) < 0)
		return NULL;	/* the host runs it its own way */
	if (rc_mem_open(r) < 0)
		return NULL;
	v = r->host.stops_version(r->t);
	if (v != r->version && !rc_others_in(r, NULL)) {
		rc_cache_flush(r);
		r->version = v;
	}
	rt = rc_rt_get(r, th);
	if (!rt) {
		*err = -bte_nomem;
		return NULL;
	}
	if (rt->gone_end) {	/* its mmap, munmap, mprotect or mremap ran */
		r->host.maps_changed(r->t);
		rc_code_gone(r, rt->gone_start, rt->gone_end);
		rt->gone_start = rt->gone_end = 0;
	}
	if (rt->slot < 0 && rc_slot_take(r, th, rt) < 0)
		return NULL;
	rc_tcb_check(r, rt);	/* written by the program while out */
	return rt;
}

/*
 * @th stands inside a system call at @pc, right after its syscall insn
 * (a restart re-runs it): the translation of the block of that insn,
 * entered at the point after it that fixes rcx.  0 if there is none.
 */
static uint64_t enter_in_syscall(struct bt_recorder *r, struct bt_thread *th,
				 uint64_t pc)
{
	struct rx_point p;
	uint8_t code[2];
	struct zone *z;
	struct rb *b;
	uint64_t trans;
	size_t n, i;

	if (rc_mem_read(r, pc - 2, code, 2) < 0 || code[0] != 0x0f ||
	    code[1] != 0x05)
		return 0;
	if (rc_translate(r, th, pc - 2, RX_PEND_NONE, &trans) < 0)
		return 0;
	b = rc_block_find(r, pc - 2);
	z = rc_zone_of(r, trans);
	if (!b || b->term != RB_SYSCALL || b->ninsn != 1 || !z)
		return 0;
	if (!rc_point_at(r, trans, &n))
		return 0;
	for (i = rc_point_index(r, r->pt_at); i < z->npts; i++) {
		zpt_get(z, i, &p);
		if (p.mask == RM_FIXRCX && p.orig == pc)
			return p.trans;
	}
	return 0;
}

int bt_recorder_enter(struct bt_recorder *r, struct bt_thread *th,
		      struct user_regs_struct *regs)
{
	uint64_t pc = regs->rip, trans = 0;
	struct rthread *rt;
	int ret;

	rc_tables_checked(r, th);	/* before it runs with another */
	rt = enter_prepare(r, th, &ret);
	if (!rt)
		return ret;
	r->cur = th;
	if ((int64_t)regs->orig_rax >= 0)
		trans = enter_in_syscall(r, th, pc);
	else if (rc_translate(r, th, pc, RX_PEND_NONE, &trans) < 0)
		trans = 0;
	r->cur = NULL;
	if (!trans || rc_ring_sync(r, rt, pc) < 0)
		return 0;
	rc_sigs_enter(r, rt);
	if (!rt->in)
		rt->prog_gs = regs->gs_base;
	regs->rip = trans;
	regs->gs_base = rt->tcb;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, regs) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)",
			       th->tid);
	rt->in = 1;
	return 1;
}

/* ---- stops of a thread that is in ------------------------------------------
 */

static void regs_restore(struct bt_recorder *r, struct rthread *rt,
			 struct user_regs_struct *regs, int mask, uint64_t orig)
{
	uint64_t tcb[TCB_RDX / 8 + 1];

	if ((mask & (RM_RAX | RM_RCX | RM_RDX)) &&
	    rc_mem_read(r, rt->tcb, tcb, sizeof(tcb)) == 0) {
		if (mask & RM_RAX)
			regs->rax = tcb[TCB_RAX / 8];
		if (mask & RM_RCX)
			regs->rcx = tcb[TCB_RCX / 8];
		if (mask & RM_RDX)
			regs->rdx = tcb[TCB_RDX / 8];
	}
	if (mask & RM_FIXRCX)
		regs->rcx = orig;
}

/*
 * Where @regs stand for the program, if at a safe point: 1 with *@orig,
 * the outcomes still pending there in *@pend and @regs restored; 0 if
 * inside a generated sequence.
 */
static int safe_point(struct bt_recorder *r, struct rthread *rt,
		      struct user_regs_struct *regs, uint64_t *orig,
		      uint8_t *pend)
{
	size_t n, i;
	struct rx_point *p = rc_point_at(r, regs->rip, &n);

	for (i = 0; i < n; i++) {
		switch (p[i].kind) {
		case RX_POINT_SAFE:
			regs_restore(r, rt, regs, p[i].mask, p[i].orig);
			/* fall through */
		case RX_POINT_EXIT_DIRECT:
			*orig = p[i].orig;
			*pend = p[i].pend;
			return 1;
		}
	}
	return 0;
}

/*
 * Does the system call @nr, run by a thread that leaves for it, keep the
 * thread and the tracer bound to one CPU (tracer.h)?  Not those that would
 * see the binding or hand it on (to a child, to a program exec'd: a vfork
 * child runs its parent's translations until its exec).
 */
static int pin_keeps(long nr)
{
	switch (nr) {
	case SYS_sched_setaffinity:
	case SYS_sched_getaffinity:
	case SYS_clone:
	case SYS_clone3:
	case SYS_fork:
	case SYS_vfork:
	case SYS_execve:
	case SYS_execveat:
		return 0;
	}
	return nr >= 0;
}

/*
 * The thread leaves at original @orig, @regs the program's own, for the
 * system call @sys (-1: for longer); the outcomes @pend it carried there
 * go into its ring first.
 */
static void leave_at(struct bt_recorder *r, struct rthread *rt,
		     struct user_regs_struct *regs, uint64_t orig, uint8_t pend,
		     long sys)
{
	uint8_t tnt = (uint8_t)(REC_TNT | pend);

	if (!pin_keeps(sys))
		bt_pin_release(r->t, sys == SYS_sched_setaffinity);

	if (pend != RX_PEND_NONE)
		rc_ring_put(r, rt, &tnt, 1);
	rc_drain_as(r, rt, orig, 1);
	regs->rip = orig;
	regs->gs_base = rt->prog_gs;
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	rt->in = 0;
	rt->sigmask_known = 0;	/* out, it may change it unseen */
}

/*
 * A record of @rt's crossed its ring's bottom: moved to the top (rec_ring.h);
 * with @sample, the records of the pass that ended are a sample of hot code
 * (rec_hot.c).
 */
static int wrap_fault(struct bt_recorder *r, struct rthread *rt,
		      struct user_regs_struct *regs, const siginfo_t *si,
		      int sample)
{
	uint64_t addr = (uint64_t)si->si_addr, head, len, branch;
	const struct rx_point *p;

	if (si->si_signo != SIGSEGV || addr >= rt->base ||
	    addr < rt->base - 4096)
		return 0;
	p = rc_point_kind(r, regs->rip, RX_POINT_STORE);
	if (!p || rc_head_read(r, rt, &head) < 0)
		return 0;
	branch = p->orig;	/* p holds until rc_point_at()'s next call */
	len = head - regs->rcx;
	rc_ring_wrap(rt, head);
	rc_hi_reset(r, rt);
	regs->rcx = rt->top - len;
	if (branch) {
		uint8_t rec[REC_ADDR_LEN];

		rec[0] = REC_SYNC;
		memcpy(rec + 1, &branch, 8);
		if (rc_mem_write(r, rt->top - REC_ADDR_LEN, rec, sizeof(rec)) <
		    0)
			return 0;
		regs->rcx -= REC_ADDR_LEN;
	}
	if (ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs) < 0)
		return 0;
	if (sample)
		rc_hot_wrapped(r, rt, regs, head);
	return 1;
}

int bt_recorder_fault(struct bt_recorder *r, struct bt_thread *th,
		      const siginfo_t *si)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	struct user_regs_struct regs;

	if (rt && rt->in && bt_thread_regs(th, &regs) == 0 &&
	    ((rc_zone_of(r, regs.rip) && wrap_fault(r, rt, &regs, si, 1)) ||
	     rc_fault_repair(r, rt, &regs, si))) {
		rc_sigs_consumed(r, rt);
		return 1;
	}
	return r ? rc_wp_fault(r, th, si) : 0;	/* a write to code */
}

/* A direct exit: @orig needs its translation; link it and go there. */
static int exit_direct(struct bt_recorder *r, struct rthread *rt,
		       struct user_regs_struct *regs, struct rx_point pt)
{
	struct rx_point *p;
	struct zone *z;
	uint64_t trans;

	if (!r->host.translatable(r->t, pt.orig) ||
	    rc_translate(r, rt->th, pt.orig, pt.pend, &trans) < 0) {
		leave_at(r, rt, regs, pt.orig, pt.pend, -1);
		return BT_RECORDER_LEFT;
	}
	/* translating may have moved the points: find it again */
	p = rc_point_kind(r, pt.trans, RX_POINT_EXIT_DIRECT);
	z = p ? rc_zone_of(r, p->trans) : NULL;
	if (z) {
		size_t i = rc_point_index(r, p);
		struct rx_point q;

		if (i > 0) {	/* an int3 in a threaded nop (thread_point) */
			zpt_get(z, i - 1, &q);
			r->lead_exits += q.trans == pt.trans - 1 &&
					 q.kind == RX_POINT_EXIT_DIRECT &&
					 (q.mask & RX_THREADED);
		}
		rc_link_exit(r, z, i, trans);
	}
	rc_zones_flush(r);	/* a far jump it may have made */
	regs->rip = trans;
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	return BT_RECORDER_GO_ON;
}

/*
 * The lookup missed target rdx, or (aux 0) an entry found rdx was not its
 * own: a table entry changed under the probe.  Either way rdx's
 * translation is entered in a table; the lookup retries, or the entry
 * goes straight to it.
 */
static int exit_ibl(struct bt_recorder *r, struct rthread *rt,
		    struct user_regs_struct *regs, struct rx_point pt)
{
	const struct rx_point *p = &pt;
	uint64_t target = regs->rdx, trans;
	struct rb *b;

	if (rc_native_exit(r, rt->th, regs->rip, target, &trans) == 0) {
		/* untraced: a native exit, entered as a translation */
	} else if (!r->host.translatable(r->t, target) ||
	    rc_translate(r, rt->th, target, RX_PEND_NONE, &trans) < 0) {
		regs_restore(r, rt, regs, p->mask, 0);
		leave_at(r, rt, regs, target, RX_PEND_NONE, -1);
		return BT_RECORDER_LEFT;
	}
	if (p->aux)
		rc_ic_learn(r, rt, p->aux, target);
	b = rc_block_find(r, target);
	if (b && rb_trans(b, RX_PEND_NONE))	/* found by the lookup */
		rc_profile_ran(r, b, RB_PROF_RAN | RB_PROF_IBL |
				      RB_PROF_VAR(RX_PEND_NONE));
	if (rc_table_insert(r, target, trans - RX_ENTRY_LEN, 1) &&
	    p->aux) {
		regs->rip = p->aux;	/* the retry finds it */
	} else {
		regs_restore(r, rt, regs, p->mask, 0);
		regs->rip = trans;
	}
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	return BT_RECORDER_GO_ON;
}

/* Handle the exit whose int3 is at @at; a verdict, 0 if none is there. */
static int exit_at(struct bt_recorder *r, struct rthread *rt,
		   struct user_regs_struct *regs, uint64_t at)
{
	size_t n, i;
	struct rx_point *p = rc_point_at(r, at, &n);

	for (i = 0; i < n; i++) {
		/* a copy: rc_point_at()'s points hold until its next call */
		struct rx_point pt = p[i];

		switch (pt.kind) {
		case RX_POINT_EXIT_DIRECT:
			return exit_direct(r, rt, regs, pt);
		case RX_POINT_EXIT_IBL:
			return exit_ibl(r, rt, regs, pt);
		case RX_POINT_EXIT_LEAVE:
			regs_restore(r, rt, regs, pt.mask, pt.orig);
			if (pt.mask & RM_RCX) {	/* a syscall's exit */
				rc_note_syscall(rt, regs);
				r->mods_stale = 1;	/* mmap, dlopen */
				if (regs->rax == SYS_execve ||
				    regs->rax == SYS_execveat)
					rc_profile_harvest(r);
				rc_sigs_syscall(r, regs);
			}
			leave_at(r, rt, regs, pt.orig, pt.pend,
				 pt.mask & RM_RCX ? (long)regs->rax : -1);
			if (pt.mask & RM_RCX)
				rc_wp_syscall(r, rt->th, regs);
			return BT_RECORDER_LEFT_STEP;
		}
	}
	return 0;
}

int bt_recorder_trap(struct bt_recorder *r, struct bt_thread *th,
		     const siginfo_t *si, struct user_regs_struct *regs)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	int v;

	if (!rt || !rt->in || si->si_code != SI_KERNEL)
		return BT_RECORDER_NOT_OURS;
	rt->head = 0;
	rc_tcb_check(r, rt);	/* what the program wrote there, repaired */
	rt->head_known = rt->head != 0;	/* read there: kept to the end */
	if (rc_native_out(r, rt, regs, regs->rip - 1)) {
		rt->head_known = 0;
		return BT_RECORDER_NOT_OURS;	/* a native thread's trap */
	}
	r->trapping = 1;
	rc_sigs_need(r, rt);
	r->cur = th;
	v = exit_at(r, rt, regs, regs->rip - 1);
	r->cur = NULL;
	r->trapping = 0;
	if (v == BT_RECORDER_GO_ON && r->hot_test) {
		uint64_t head;

		if (rc_head_read(r, rt, &head) == 0)
			rc_hot_wrapped(r, rt, regs, head);
	}
	if (v == BT_RECORDER_GO_ON)
		rc_time_stall(r, rt);
	rt->head_known = 0;
	if (v == BT_RECORDER_LEFT_STEP)
		rt->left_step = 1;
	return v;
}

void bt_recorder_exiting(struct bt_recorder *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	struct user_regs_struct regs;

	if (rt && th->tid == r->pid)	/* the process ends, likely */
		rc_profile_harvest(r);
	if (!rt || !rt->in || th->state != BT_TH_STOPPED ||
	    bt_thread_regs(th, &regs) < 0)
		return;
	if (!rc_native_out(r, rt, &regs, regs.rip))
		rc_drain(r, rt, 0);
}

void bt_recorder_leave(struct bt_recorder *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	struct user_regs_struct regs;
	struct bt_resend resend;
	uint64_t orig = 0;
	uint8_t pend = RX_PEND_NONE;
	int i, sig;

	if (!rt || !rt->in || th->state != BT_TH_STOPPED)
		return;
	bt_resend_init(&resend);
	rc_tcb_check(r, rt);
	if (bt_thread_regs(th, &regs) == 0 &&
	    rc_native_out(r, rt, &regs, regs.rip))
		return;
	for (i = 0; i < STEP_MAX; i++) {
		siginfo_t si;

		if (bt_thread_regs(th, &regs) < 0)
			goto dead;
		if (safe_point(r, rt, &regs, &orig, &pend))
			break;
		sig = bt_thread_step(r->t, th, &si);
		if (sig < 0)
			goto dead;
		if (sig == 0 && si.si_code == SI_KERNEL &&
		    bt_thread_regs(th, &regs) == 0 &&
		    rc_point_at(r, regs.rip - 1, &(size_t){ 0 })) {
			int v;

			r->trapping = 1;	/* stopped by our own step */
			r->cur = th;
			v = exit_at(r, rt, &regs, regs.rip - 1);
			r->cur = NULL;
			r->trapping = 0;

			if (v == BT_RECORDER_LEFT || v == BT_RECORDER_LEFT_STEP)
				goto out;	/* it left on its own way out */
			continue;
		}
		if (sig > 0 && bt_thread_regs(th, &regs) == 0 &&
		    (wrap_fault(r, rt, &regs, &si, 0) ||
		     rc_fault_repair(r, rt, &regs, &si))) {
			rc_sigs_consumed(r, rt);
			continue;
		}
		bt_resend_add(&resend, sig, &si);
	}
	if (i == STEP_MAX)
		goto dead;
	leave_at(r, rt, &regs, orig, pend, -1);
	goto out;
dead:
	rc_drain(r, rt, 0);
	rt->in = 0;
	rt->sigmask_known = 0;
out:
	bt_resend_flush(&resend, th->tgid ? th->tgid : r->pid, th->tid);
}
