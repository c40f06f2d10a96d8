// SPDX-License-Identifier: MIT
/*
 * The fast mode's stops (soft_fast.h): a trap at an int3 of its own
 * (a decision branch evaluated, an instruction run displaced or stepped),
 * the end of a step and what the instruction did, and a thread's pc put
 * back from a displaced slot to where the program has it.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/insn.h"
#include "internal.h"
#include "backend/soft/fast_int.h"
#include "tracer/tracer.h"

/* ---- stops ------------------------------------------------------------- */

static int set_regs(struct bt_thread *th, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, th->tid, 0, r) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)",
			       (int)th->tid);
	return 0;
}

static int emu_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return fast_read(ctx, addr, buf, len);
}

/* Record the taken branch @from -> @to of class @iclass and follow it. */
static void branch_taken(struct bt_target *t, struct bt_thread *th,
			 uint64_t from, uint64_t to, int iclass,
			 const struct user_regs_struct *after)
{
	struct fast_thread *ft = th->bk;
	uint64_t ret = 0;

	fast_branch_append(t, th, from, to, bt_insn_branch_kind(iclass), 0);
	if (fast_addr_traced(t, to))
		return;
	/*
	 * Into untraced code: where will it come back?  A call pushed the
	 * return address; a jump (a tail call, a PLT stub, the lazy binding
	 * stub that pushed two words more) finds it a little deeper.
	 */
	if (iclass == BT_INSN_CALL || iclass == BT_INSN_ICALL) {
		fast_read(t, after->rsp, &ret, sizeof(ret));
	} else if (iclass == BT_INSN_JUMP || iclass == BT_INSN_IJUMP) {
		uint64_t slot[3] = { 0 };
		size_t i;

		fast_read(t, after->rsp, slot, sizeof(slot));
		for (i = 0; i < 3 && !ret; i++)
			if (fast_addr_chained(t, slot[i]))
				ret = slot[i];
	}
	fast_native_enter(t, th, to, ret);
	(void)ft;
}

/*
 * The slot where the instruction under @b runs displaced, made on first
 * use: @th is stopped at a trap of ours, where a system call may be run
 * to map scratch memory.  0, or a negative bt_error (step instead).
 */
static int bp_slot(struct bt_target *t, struct bt_thread *th,
		   struct fast_bp *b)
{
	struct fast *f = fast_of(t);
	struct bt_aspace *as = fast_as(t);
	uint8_t code[BT_INSN_MAX_LEN];
	int fd;

	if (b->slot)
		return 0;
	if (ft_foreign(th) || bt_aspace_lifted_all(as))
		return -bte_nosys;	/* a vfork child runs in this memory */
	if (fast_code_read(t, b->addr, code) < 0)
		return -bte_io;
	fd = bt_aspace_fd(as);
	if (fd < 0)
		return fd;
	return bt_displace_make(f->dsp, t, th, fd, code, sizeof(code),
				b->addr, &b->slot);
}

/*
 * Does the system call under @b run displaced (bt_displace_sys_make)?
 * Then the int3 stays for the other threads while it runs, however long
 * it blocks.  Not in a vfork child's shared memory, nor the calls that do
 * not come back to the next instruction or start a thread or process
 * there: those are stepped with the int3 lifted.  0, or < 0 (step it).
 */
static int bp_sys(struct bt_target *t, struct bt_thread *th,
		  const struct fast_bp *b, const struct user_regs_struct *regs)
{
	static const uint64_t stepped[] = {
		SYS_rt_sigreturn, SYS_clone, SYS_fork, SYS_vfork, SYS_execve,
		SYS_execveat, 435 /* clone3 */,
	};
	struct bt_aspace *as = fast_as(t);
	uint8_t code[2];
	uint64_t slot;
	size_t i;
	int fd;

	if (b->iclass != BT_INSN_SYSCALL || ft_foreign(th) ||
	    bt_aspace_lifted_all(as))
		return -bte_nosys;
	for (i = 0; i < BT_ARRAY_SIZE(stepped); i++)
		if (regs->rax == stepped[i])
			return -bte_nosys;
	if (fast_read(t, b->addr, code, 2) < 0 || code[0] != 0x0f ||
	    code[1] != 0x05)
		return -bte_nosys;	/* int $0x80, sysenter */
	fd = bt_aspace_fd(as);
	if (fd < 0)
		return fd;
	return bt_displace_sys_make(fast_of(t)->dsp, t, th, fd, b->addr,
				    &slot);
}

/*
 * @th stopped on our int3 @b (regs->rip is back at the instruction).
 * Evaluate the branch and move the thread on, or leave it there to be
 * stepped.  Returns 0 or a negative bt_error.
 */
static int bp_hit(struct bt_target *t, struct bt_thread *th,
		  struct fast_bp *b, struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct user_regs_struct r = *regs;
	struct bt_emu_result res;

	if (b->iclass == BT_INSN_OTHER && bp_slot(t, th, b) == 0) {
		regs->rip = b->slot;	/* the next resume goes on from there */
		return set_regs(th, regs);
	}
	if (bp_sys(t, th, b, regs) == 0) {
		ft->need_sys = 1;	/* the next resume runs it */
		return set_regs(th, regs);
	}
	if (b->kind == BP_STEP || !b->emu_ok ||
	    bt_emu_eval(&b->emu, &r, emu_read, t, &res) < 0)
		goto step;
	if (res.push && bt_aspace_write_raw(fast_as(t), r.rsp, &res.push_value,
					    8) != 8)
		goto step;
	if (set_regs(th, &r) < 0)
		return -bte_ptrace;
	fast_acc_add(t, th, 1);
	*regs = r;
	/* as single-stepping sees it: going on at the next one is no branch */
	if (res.taken && res.next != b->addr + b->emu.len)
		branch_taken(t, th, b->addr, res.next, b->iclass, &r);
	return 0;
step:
	ft->need_step = 1;
	return set_regs(th, regs);
}

/* What a step of the instruction at @pre should have done without a signal. */
static uint64_t step_expected(struct bt_target *t, const struct bt_insn *in,
			      const struct user_regs_struct *pre,
			      const uint8_t *code)
{
	struct fast *f = fast_of(t);
	struct user_regs_struct r = *pre;
	struct bt_emu_result res;
	struct bt_emu_insn ei;

	if (in->rep)
		return 0;	/* may stay on itself */
	if (bt_emu_decode(f->emu, code, in->len, in->addr, &ei) == 0 &&
	    bt_emu_eval(&ei, &r, emu_read, t, &res) == 0)
		return res.next;
	return in->addr + in->len;
}

/*
 * Decode the instruction at @pc into @in, its bytes into @code, from
 * @th's process (a followed fork child's memory is its own).
 */
static void step_decode(struct bt_target *t, struct bt_thread *th,
			uint64_t pc, uint8_t code[BT_INSN_MAX_LEN],
			struct bt_insn *in)
{
	if (!ft_foreign(th)) {
		fast_code_read(t, pc, code);
	} else {
		memset(code, 0, BT_INSN_MAX_LEN);
		bt_thread_mem(t, th, pc, code, BT_INSN_MAX_LEN);
	}
	if (bt_insn_decode(fast_of(t)->dis, code, BT_INSN_MAX_LEN, pc, in) < 0) {
		memset(in, 0, sizeof(*in));
		in->addr = pc;
		in->iclass = BT_INSN_FAR;
	}
}

/*
 * Stopped for a signal inside a system call, @regs just after it: the
 * call is restarted (the kernel moves the pc back to it) or fails with
 * EINTR once the handler is set up.  The single-stepping reference does
 * not count it there.
 */
static int sys_interrupted(const struct user_regs_struct *regs)
{
	int64_t ret = (int64_t)regs->rax;

	return ret == -512 || ret == -513 || ret == -514 || ret == -516;
}

/* A step of the instruction at ft->pre ended at @post: record it. */
static void step_done(struct bt_target *t, struct bt_thread *th,
		      const struct user_regs_struct *post)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	const struct user_regs_struct *pre = &ft->pre;
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_insn in;
	int state = ft->state;

	if (state == FT_STEPOVER)
		fast_bp_unlift(t, th);
	ft->state = FT_RUN;
	if (ft->back_native) {
		ft->back_native = 0;
		ft->state = FT_NATIVE;
		return;
	}
	if (post->rip != pre->rip && post->rip != pre->rip + 2 &&
	    (post->orig_rax == SYS_execve || post->orig_rax == SYS_execveat)) {
		/* its exec: the syscall (2 bytes, as int 0x80) is gone with
		 * the old memory, not to be decoded there; one that failed
		 * returned past it */
		fast_acc_add(t, th, 1);
		fast_branch_append(t, th, pre->rip, post->rip, BT_BR_SYSRET, 0);
		return;
	}
	step_decode(t, th, pre->rip, code, &in);
	if (state == FT_SIGSTEP && post->rip != pre->rip &&
	    post->rip != step_expected(t, &in, pre, code)) {
		uint64_t restorer = 0, from = pre->rip;

		/* from where the frame goes back to: a system call that is
		 * restarted, not the instruction after it */
		if (fast_read(t, post->rsp + BT_SIGFRAME_RIP, &from, 8) < 0)
			from = pre->rip;
		/* the handler's frame returns through the restorer */
		fast_branch_append(t, th, from, post->rip, BT_BR_INTR, 0);
		if (fast_read(t, post->rsp, &restorer, 8) == 0 &&
		    !fast_is_restorer(f, restorer) &&
		    f->nrestorers < BT_ARRAY_SIZE(f->restorers)) {
			f->restorers[f->nrestorers++] = restorer;
			bt_block_invalidate(f->blocks, restorer, restorer + 1);
		}
		return;
	}
	if (in.rep && post->rip == pre->rip)
		return;		/* one more iteration */
	if (in.iclass == BT_INSN_SYSCALL && sys_interrupted(post))
		return;		/* it runs again, or fails: not counted */
	fast_acc_add(t, th, 1);
	if (in.late_trap && post->rip != in.addr + in.len) {
		/* the next one ran too, and the trap is its step (insn.h) */
		step_decode(t, th, in.addr + in.len, code, &in);
		fast_acc_add(t, th, 1);
	}
	if (post->rip == in.addr + in.len)
		return;		/* fell through (a jump to the next one too) */
	if (in.iclass == BT_INSN_OTHER || in.iclass == BT_INSN_INT3)
		fast_branch_append(t, th, in.addr, post->rip, BT_BR_INTR, 0);
	else if (in.iclass == BT_INSN_SYSCALL)
		fast_branch_append(t, th, in.addr, post->rip, BT_BR_SYSRET,
		    pre->rax == SYS_rt_sigreturn ||
		    post->orig_rax == SYS_rt_sigreturn ? BT_BRF_SIGRETURN : 0);
	else
		branch_taken(t, th, in.addr, post->rip, in.iclass, post);
}

/*
 * Run the system call @th stopped at (bp_sys said it may) in the slot
 * made for it: it comes back at the slot's int3 (fast_trap), or is
 * stopped inside (fast_thread_unslot).
 */
int fast_sys_enter(struct bt_target *t, struct bt_thread *th,
		   struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;

	ft->need_sys = 0;
	ft->pre = *regs;
	ft->state = FT_SYSCALL;
	regs->rip = bt_displace_sys(fast_of(t)->dsp);
	if (set_regs(th, regs) < 0)
		return -bte_ptrace;
	return bt_thread_restart(th, PTRACE_CONT, 0);
}

/*
 * @th, in its displaced system call, stopped at @regs: back where the
 * program has it.  Before the call, at the syscall; after it (at the int3
 * or past it), after the syscall, with the rcx the call left there.
 */
static void sys_leave(struct bt_target *t, struct bt_thread *th,
		      struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	uint64_t slot = bt_displace_sys(fast_of(t)->dsp), at = ft->pre.rip;

	ft->state = FT_RUN;
	if (regs->rip == slot) {
		regs->rip = at;
	} else if (regs->rip == slot + 2 || regs->rip == slot + 3) {
		/* past the int3 it is done; before it, a signal may have
		 * stopped it inside (sys_interrupted) */
		if (regs->rip == slot + 3 || !sys_interrupted(regs))
			fast_acc_add(t, th, 1);
		regs->rip = regs->rcx = at + 2;
	} else {
		return;		/* it went elsewhere by itself */
	}
	set_regs(th, regs);
}

int fast_step_start(struct bt_thread *th, int state,
		    const struct user_regs_struct *regs, int sig)
{
	struct fast_thread *ft = th->bk;

	if (!ft)	/* ended and reaped: its state went with it */
		return bt_fail(bte_exited, ESRCH, "thread %d ended", th->tid);
	ft->state = state;
	ft->pre = *regs;
	return bt_thread_restart(th, PTRACE_SINGLESTEP, sig);
}

/* ---- displaced slots --------------------------------------------------- */

/*
 * @th stopped inside a slot: commit what it ran of its chain and put its
 * pc back where the program has it (soft_displace.h).  A thread at the
 * start of a slot is left there when @keep_start: it is about to run it.
 */
void fast_thread_unslot(struct bt_target *t, struct bt_thread *th,
			struct user_regs_struct *regs, int keep_start)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	uint64_t pc, orig;
	uint8_t len;

	if (ft && ft->state == FT_SYSCALL) {
		sys_leave(t, th, regs);
		return;
	}
	pc = bt_displace_unmap(f->dsp, regs->rip);
	if (pc == regs->rip ||
	    (keep_start && bt_displace_slot_of(f->dsp, regs->rip, &orig, &len)))
		return;
	fast_chain_commit(t, th, regs->rip);
	regs->rip = pc;
	set_regs(th, regs);
}

/* The same for a stopped thread, its registers read here. */
void fast_thread_unslot_stopped(struct bt_target *t, struct bt_thread *th)
{
	struct user_regs_struct regs;

	if (th->bk && !ft_foreign(th) && th->state == BT_TH_STOPPED &&
	    bt_thread_regs(th, &regs) == 0)
		fast_thread_unslot(t, th, &regs, 0);
}

/*
 * Start @th's chain with a displaced instruction: @th stands at a slot
 * (bp_hit moved it there), or at an int3 of ours whose instruction has a
 * slot.  Returns 1 with the thread continued; 0 if neither, or if the
 * chain after it cannot be built (then back at the int3, to be stepped
 * with it lifted); or a negative bt_error.
 */
int fast_slot_enter(struct bt_target *t, struct bt_thread *th,
		    struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	struct fast_bp *b = NULL;
	uint64_t orig;
	uint8_t len;

	if (!bt_displace_slot_of(f->dsp, regs->rip, &orig, &len)) {
		b = fast_bp_find(f, regs->rip);
		if (!b || !b->slot || b->iclass != BT_INSN_OTHER ||
		    !bt_displace_slot_of(f->dsp, b->slot, &orig, &len))
			return 0;
		regs->rip = b->slot;
	}
	if (fast_chain_build(t, th, orig + len) < 0) {
		ft->nchain = 0;
		ft->need_step = 1;
		regs->rip = orig;
		return set_regs(th, regs) < 0 ? -bte_ptrace : 0;
	}
	if (b && set_regs(th, regs) < 0)
		return -bte_ptrace;
	ft->displaced = orig;
	ft->state = FT_RUN;
	t->stats.displaced++;
	return bt_thread_restart(th, PTRACE_CONT, 0) < 0 ? -bte_ptrace : 1;
}

/*
 * A conditional of the chain from pc goes back to pc (a loop's head): the
 * instruction at pc gets an int3 and runs displaced, and the chain starts
 * after it, so that the conditional becomes an exit.  Returns as
 * fast_slot_enter().
 */
int fast_slot_restart(struct bt_target *t, struct bt_thread *th,
		      struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast_bp *b;
	int ret;

	if (fast_bp_insert(t, regs->rip, BP_TARGET, &b) < 0 ||
	    b->iclass != BT_INSN_OTHER || bp_slot(t, th, b) < 0)
		return 0;
	ret = fast_slot_enter(t, th, regs);
	ft->need_step = 0;	/* then the int3 at pc stops it at once */
	return ret;
}

/* ---- traps ------------------------------------------------------------- */

/*
 * @th reports an int3 trap at regs->rip - 1 where we have none: one we
 * took out after the thread hit it (another thread's chain no longer
 * needed it)?  Then it is ours: nothing but the int3 ran, the thread is
 * rewound and goes on.  Not if an int3 is there now (the program's), nor
 * at a debugger's breakpoint.  Returns 1 if ours.
 */
static int gone_trap(struct bt_target *t, struct bt_thread *th,
		     struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct bt_aspace *as = fast_as(t);
	uint64_t at = regs->rip - 1;
	uint8_t byte;

	if (!fast_gone_has(fast_of(t), at) ||
	    bt_aspace_read_raw(as, at, &byte, 1) != 1 || byte == 0xcc ||
	    (bt_aspace_kinds(as, at) & BT_BP_MASK(BT_BP_USER)))
		return 0;
	regs->rip = at;
	if (ft->state == FT_NATIVE)
		ft->need_step = 0;	/* runs on natively */
	else
		fast_chain_commit(t, th, at);
	return set_regs(th, regs) == 0;
}

/*
 * @th stopped at an int3 (regs->rip after it): ours, or the program's
 * int3 or a btrace breakpoint (0)?  Ours is handled: 1.
 */
static int int3_trap(struct bt_target *t, struct bt_thread *th,
		     struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	struct fast_bp *b = fast_bp_find(f, regs->rip - 1);

	if (!b && gone_trap(t, th, regs))
		return 1;
	if (!b || (ft->state == FT_STEPOVER && b->addr == ft->lifted))
		return 0;	/* the program's int3 or a btrace break */
	/*
	 * Ours from here on: whatever fails below (the thread was killed
	 * meanwhile), its SIGTRAP must not reach the program.
	 */
	regs->rip--;
	if (b->addr == f->loader_hook) {
		/* a failure leaves them waiting */
		fast_triggers_resolve(t, f);
		if (ft->state == FT_NATIVE) {
			ft->need_step = 1;	/* and on natively */
			set_regs(th, regs);
			return 1;
		}
	}
	if (ft->state == FT_NATIVE) {
		fast_native_leave(t, th, b->addr);
		if (ft->state == FT_NATIVE) {
			ft->need_step = 1;
			set_regs(th, regs);
			return 1;
		}
	} else {
		/* a step that ran into an int3 is that int3's stop */
		ft->state = FT_RUN;
		fast_chain_commit(t, th, b->addr);
	}
	bp_hit(t, th, b, regs);
	return 1;
}

int fast_trap(struct bt_target *t, struct bt_thread *th, const siginfo_t *si)
{
	struct fast_thread *ft = th->bk;
	struct user_regs_struct regs;

	if (!ft)
		return 0;
	/*
	 * Killed since the trap (SIGKILL takes a tracee out of its stop):
	 * its end is what to report, not a SIGTRAP of unknown origin.
	 */
	if (bt_thread_regs(th, &regs) < 0)
		return 1;
	if (ft->state == FT_SYSCALL && si->si_code == SI_KERNEL &&
	    regs.rip == bt_displace_sys(fast_of(t)->dsp) + 3) {
		bt_thread_time_owed(th, ft->acc);
		sys_leave(t, th, &regs);	/* the call is done */
		bt_thread_time_stop(th, ft->acc);
		return 1;
	}
	if (si->si_code == SI_KERNEL && !ft->foreign)
		return int3_trap(t, th, &regs);
	/*
	 * The syscall-exit report of a system call the thread was inside
	 * when the step was issued (exec at launch): nothing ran.
	 */
	if (ft->state == FT_STEP && si->si_code == TRAP_BRKPT &&
	    regs.rip == ft->pre.rip) {
		ft->state = FT_RUN;
		return 1;
	}
	/*
	 * A followed process's step that ran into a breakpoint's int3 (one of
	 * its own program's: --until) is that breakpoint's stop, not the
	 * step's end: judged and shown as one.
	 */
	if (ft->foreign && ft->state == FT_STEP && si->si_code == SI_KERNEL &&
	    regs.rip - 1 == ft->pre.rip &&
	    (bt_aspace_kinds(bt_target_aspace(t, bt_thread_tgid(t, th)),
			     ft->pre.rip) & BT_BP_MASK(BT_BP_USER))) {
		ft->state = FT_RUN;
		return 0;
	}
	if (ft->state == FT_SIGSTEP || ft->state == FT_STEPOVER ||
	    ft->state == FT_STEP) {
		bt_thread_time_owed(th, ft->acc);
		step_done(t, th, &regs);
		bt_thread_time_stop(th, ft->acc);
		return 1;
	}
	return 0;
}
