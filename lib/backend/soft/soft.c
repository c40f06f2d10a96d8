// SPDX-License-Identifier: MIT
/*
 * The single-step software backend (BT_SOFT_STEP), the reference every
 * faster backend is checked against.
 *
 * Each thread runs one instruction per PTRACE_SINGLESTEP.  Before a step
 * the instruction at pc is decoded (insn.c); after it, the new pc tells
 * what happened: pc + length is a fall-through, anything else a taken
 * branch, recorded with the number of instructions of its block.
 *
 * What makes stepping subtle is that the trap of a step is not the only
 * stop a stepping thread can report (see backend.h):
 * - events inside a syscall (clone, fork, exec) and PTRACE_INTERRUPT or
 *   signal stops come while the step is still outstanding.  The step is
 *   then simply issued again: if the instruction completed, its trap is
 *   already queued (synchronous SIGTRAP is dequeued before anything else),
 *   and a syscall interrupted for a restart is re-run by the kernel.
 * - the step that injects a signal with a handler stops at the handler's
 *   first instruction, with nothing executed: an interrupt branch from the
 *   interrupted pc, read back from the signal frame the kernel built.
 * - a syscall instruction ends where the kernel returns: rt_sigreturn and
 *   execve land elsewhere, which is a branch like any other.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "internal.h"
#include "tracer/tracer.h"

struct soft_thread {
	uint64_t pc;		/* where the outstanding step was issued */
	struct bt_insn insn;	/* the instruction at pc */
	int stepping;		/* a step is outstanding */
	int entering;		/* that step enters a signal handler */
	uint32_t ninsn;		/* instructions since the last branch */
	uint64_t sysno;		/* rax when the step was issued */
};

/* A stop every instruction (25-40 us each): a time record per 1 ms of run
 * at most, or they would take as much ring as the branches. */
#define STEP_CLOCK_GRAIN 1000000ull

static int soft_thread_start(struct bt_target *t, struct bt_thread *th)
{
	struct soft_thread *st = calloc(1, sizeof(*st));

	if (!st)
		return bt_fail(bte_nomem, errno, "soft thread %d", th->tid);
	th->bk = st;
	return 0;
}

static void soft_thread_end(struct bt_target *t, struct bt_thread *th)
{
	free(th->bk);
	th->bk = NULL;
}

/* Decode the instruction at @pc; an undecodable one steps as "other". */
static void soft_decode(struct bt_target *t, struct bt_thread *th, uint64_t pc,
			struct bt_insn *insn)
{
	uint8_t code[BT_INSN_MAX_LEN];
	ssize_t n;

	n = bt_thread_mem(t, th, pc, code, sizeof(code));
	if (n <= 0 || bt_insn_decode(t->dis, code, n, pc, insn) < 0) {
		memset(insn, 0, sizeof(*insn));
		insn->addr = pc;
	}
}

static int soft_record(struct bt_target *t, struct bt_thread *th,
		       uint64_t to, int kind, int flags);

/*
 * @th stepping stopped for a signal before its trap.  At the same pc the
 * instruction has not run (a fault, a signal that was pending); after a
 * syscall instruction the syscall may be restarted; anywhere else the
 * instruction ran and trapped (int3, int n): count it.
 */
static void soft_signalled(struct bt_target *t, struct bt_thread *th)
{
	struct soft_thread *st = th->bk;
	uint64_t pc;

	if (bt_thread_pc(th, &pc) < 0 || pc == st->pc)
		return;
	if (st->insn.iclass == BT_INSN_SYSCALL && pc == st->pc + st->insn.len)
		return;
	st->stepping = 0;
	st->ninsn++;
	t->stats.instructions++;
	if (pc != st->pc + st->insn.len)
		soft_record(t, th, pc, BT_BR_INTR, 0);
}

static int soft_step(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct soft_thread *st = th->bk;
	struct user_regs_struct regs;
	int ret;

	/*
	 * An outstanding step whose trap has not come yet is issued again
	 * unchanged (see the top of this file), unless the instruction
	 * already ran and raised the signal we stopped for (int3).
	 */
	if (st->stepping && th->why == BT_TS_SIGNAL)
		soft_signalled(t, th);
	if (!st->stepping) {
		ret = bt_thread_regs(th, &regs);
		if (ret < 0)
			return ret;
		st->pc = regs.rip;
		st->sysno = regs.rax;
		soft_decode(t, th, st->pc, &st->insn);
		st->stepping = 1;
	}
	if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, sig) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SINGLESTEP, %d)",
			       th->tid);
	return 0;
}

static void soft_signal(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct soft_thread *st = th->bk;

	st->entering = 1;
}

static int soft_record(struct bt_target *t, struct bt_thread *th,
		       uint64_t to, int kind, int flags)
{
	struct soft_thread *st = th->bk;
	int ret;

	ret = bt_thread_record(t, th, st->pc, to, st->ninsn, kind, flags);
	st->ninsn = 0;
	return ret;
}

/* The handler is entered: nothing executed, the frame says from where. */
static int soft_enter_handler(struct bt_target *t, struct bt_thread *th,
			      const struct user_regs_struct *regs)
{
	struct soft_thread *st = th->bk;
	uint64_t from = st->pc;

	if (bt_thread_mem(t, th, regs->rsp + BT_SIGFRAME_RIP, &from,
			  sizeof(from)) != sizeof(from))
		from = st->pc;
	st->entering = 0;
	st->pc = from;
	return soft_record(t, th, regs->rip, BT_BR_INTR, 0);
}

/* A syscall instruction completed and the kernel returned to @to. */
static int soft_syscall_done(struct bt_target *t, struct bt_thread *th,
			     const struct user_regs_struct *regs)
{
	struct soft_thread *st = th->bk;

	if (regs->rip == st->pc + st->insn.len)
		return 0;
	return soft_record(t, th, regs->rip, BT_BR_SYSRET,
			   st->sysno == SYS_rt_sigreturn ?
				   BT_BRF_SIGRETURN : 0);
}

/*
 * The step of st->insn trapped one instruction late (insn.h, late_trap):
 * the next instruction ran too, and the trap is its step.
 */
static void soft_late_trap(struct bt_target *t, struct bt_thread *th)
{
	struct soft_thread *st = th->bk;

	st->pc += st->insn.len;
	soft_decode(t, th, st->pc, &st->insn);
	st->ninsn++;
	t->stats.instructions++;
}

static int soft_trap_step(struct bt_target *t, struct bt_thread *th,
			  const siginfo_t *si)
{
	struct soft_thread *st = th->bk;
	struct user_regs_struct regs;
	int kind;

	/* TRAP_TRACE: a step; TRAP_BRKPT: a stepped syscall returning;
	 * SIGTRAP: stopped at a signal handler's entry. */
	if (!st->stepping || (si->si_code != TRAP_TRACE &&
			      si->si_code != TRAP_BRKPT &&
			      si->si_code != SIGTRAP))
		return 0;
	if (bt_thread_regs(th, &regs) < 0)
		return 0;
	st->stepping = 0;
	/*
	 * The syscall-exit report of a syscall the thread was inside when
	 * the step was issued (exec at launch, an event stop): nothing ran.
	 */
	if (si->si_code == TRAP_BRKPT && regs.rip == st->pc &&
	    st->insn.iclass != BT_INSN_SYSCALL && !st->entering)
		return 1;
	t->stats.instructions++;
	if (st->entering) {
		t->stats.instructions--;
		soft_enter_handler(t, th, &regs);
		return 1;
	}
	/*
	 * A rep string instruction steps once per iteration, in place: not a
	 * branch, and one instruction, counted once it is done.
	 */
	if (st->insn.rep && regs.rip == st->pc) {
		t->stats.instructions--;
		return 1;
	}
	st->ninsn++;
	if (st->insn.late_trap && regs.rip != st->pc + st->insn.len)
		soft_late_trap(t, th);
	if (st->insn.iclass == BT_INSN_SYSCALL) {
		soft_syscall_done(t, th, &regs);
		return 1;
	}
	if (regs.rip == st->pc + st->insn.len && st->insn.len)
		return 1;
	kind = bt_insn_branch_kind(st->insn.iclass);
	if (kind == BT_BR_NONE)
		kind = BT_BR_IJUMP;
	soft_record(t, th, regs.rip, kind, 0);
	return 1;
}

/* A step's trap, between the times of the stops around its instruction. */
static int soft_trap(struct bt_target *t, struct bt_thread *th,
		     const siginfo_t *si)
{
	struct soft_thread *st = th->bk;
	int ret;

	bt_thread_time_owed_every(th, st->ninsn, STEP_CLOCK_GRAIN);
	ret = soft_trap_step(t, th, si);
	if (ret)
		bt_thread_time_stop_every(th, st->ninsn, STEP_CLOCK_GRAIN);
	return ret;
}

/* A debugger moved the pc: what ran before does not lead to @to. */
static void soft_moved(struct bt_target *t, struct bt_thread *th,
		       uint64_t from, uint64_t to)
{
	struct soft_thread *st = th->bk;

	if (!st)
		return;
	st->ninsn = 0;
	st->stepping = 0;
	bt_thread_gap(th, from, to, BT_GAP_MOVED);
}

const struct bt_backend_ops bt_backend_soft_step = {
	.name = "soft",
	.id = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_STEP,
	.thread_start = soft_thread_start,
	.thread_end = soft_thread_end,
	.resume = soft_step,
	.step = soft_step,
	.trap = soft_trap,
	.signal = soft_signal,
	.moved = soft_moved,
};
