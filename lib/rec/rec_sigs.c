// SPDX-License-Identifier: MIT
/*
 * The kernel's side of a fault the recorder consumes, undone.
 *
 * A fault is a forced signal (force_sig_fault): where the faulting thread
 * blocks SIGSEGV, or the process ignores it, the kernel unblocks SIGSEGV
 * in the thread and resets the process's action to SIG_DFL before the
 * tracer sees the stop.  For a fault of the program's own that is what
 * it would meet natively; for one the recorder consumes (its ring's guard
 * page, a store through a control block the program wrote, a write to
 * code it write-protected) the program would go on with its handler gone
 * and SIGSEGV unblocked: the next null check of a JVM, a crash handler
 * that returns, a worker thread that blocks every signal, would find it.
 *
 * So the recorder knows, for a thread in its translation, its signal
 * mask: read where the thread enters, since in the translation the mask
 * changes only through system calls that leave it (rt_sigprocmask,
 * rt_sigreturn) and through signals, which take the thread out.  It knows
 * the process's SIGSEGV action where the kernel would reset it: read
 * where a thread that blocks SIGSEGV enters, once per process, and again
 * after an rt_sigaction that sets it.  After a fault it consumed it puts
 * back what the kernel changed.
 *
 * Not covered: a fault consumed while the thread runs outside the
 * translation (a write to protected code from natively run or stepped
 * code: its mask is not known there), and an action that another thread
 * changes outside the translation while this one runs blocked in it.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#define SEGV_BIT	(1ull << (SIGSEGV - 1))

/*
 * Run rt_sigaction(SIGSEGV, @act, @oact) in @rt's stopped thread, where
 * no system call of its own is under way: at a trap (rc_syscall), or
 * (@fault) at a fault of its own code.
 */
static int64_t segv_action(struct bt_recorder *r, struct rthread *rt,
			   uint64_t act, uint64_t oact, int fault)
{
	int trapping = r->trapping;
	int64_t res;

	r->trapping |= fault;
	res = rc_syscall(r, rt->th, SYS_rt_sigaction, SIGSEGV, act, oact,
			 sizeof(uint64_t), 0);
	r->trapping = trapping;
	return res;
}

/*
 * Is r->segv @rt's process's action?  (A vfork child running in the
 * recorder's memory has actions of its own: posix_spawn's resets them.)
 */
static int segv_known(const struct bt_recorder *r, const struct rthread *rt)
{
	pid_t pid = rt->th->tgid ? rt->th->tgid : r->pid;

	return r->segv_known && r->segv_pid == pid;
}

void rc_sigs_need(struct bt_recorder *r, struct rthread *rt)
{
	uint64_t at = rt->tcb + TCB_SIGACT;

	if (segv_known(r, rt) || rt->slot < 0)
		return;
	r->segv_known = 0;
	if (segv_action(r, rt, 0, at, 0) == 0 &&
	    rc_mem_read(r, at, &r->segv, sizeof(r->segv)) == 0) {
		r->segv_known = 1;
		r->segv_pid = rt->th->tgid ? rt->th->tgid : r->pid;
	}
}

void rc_sigs_enter(struct bt_recorder *r, struct rthread *rt)
{
	rt->sigmask_known =
		ptrace(PTRACE_GETSIGMASK, rt->th->tid, sizeof(rt->sigmask),
		       &rt->sigmask) == 0;
	if (rt->sigmask & SEGV_BIT)
		r->segv_known = 0;	/* read again: another thread may
					   have set it meanwhile */
	rc_sigs_need(r, rt);
}

void rc_sigs_syscall(struct bt_recorder *r,
		     const struct user_regs_struct *regs)
{
	if (regs->rax == SYS_rt_sigaction && regs->rdi == SIGSEGV &&
	    regs->rsi)
		r->segv_known = 0;	/* read again where it matters */
}

void rc_sigs_consumed(struct bt_recorder *r, struct rthread *rt)
{
	struct bt_thread *th = rt->th;
	int blocked = rt->sigmask_known && (rt->sigmask & SEGV_BIT);
	int known = segv_known(r, rt);
	int ignored = known && r->segv.handler == (uint64_t)SIG_IGN;
	uint64_t now, at = rt->tcb + TCB_SIGACT;

	if (!blocked && !ignored)
		return;		/* the kernel changed nothing */
	if (blocked &&
	    ptrace(PTRACE_GETSIGMASK, th->tid, sizeof(now), &now) == 0) {
		now |= SEGV_BIT;
		ptrace(PTRACE_SETSIGMASK, th->tid, sizeof(now), &now);
	}
	if (!known || r->segv.handler == (uint64_t)SIG_DFL)
		return;
	if (rc_mem_write(r, at, &r->segv, sizeof(r->segv)) == 0)
		segv_action(r, rt, at, 0, 1);
}
