// SPDX-License-Identifier: MIT
/*
 * The fast software backend: int3 on decision branches, direct transfers
 * recorded from the block cache, decision branches emulated.  See
 * soft_fast.h for the design; this file is the backend's ops and how a
 * thread is resumed, fast_int.h the map of the others (fast_bp.c,
 * fast_chain.c, fast_stop.c, fast_filter.c), fast.h what it lends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/ring.h"
#include "internal.h"
#include "backend/soft/fast_int.h"
#include "tracer/tracer.h"

void *bt_fast_above(struct bt_target *t)
{
	return fast_of(t) ? fast_of(t)->above : NULL;
}

void bt_fast_set_above(struct bt_target *t, void *above)
{
	fast_of(t)->above = above;
}

/* ---- setting up -------------------------------------------------------- */

/* A new address space: every int3 and decoded block is gone with it. */
static void fast_exec(struct bt_target *t, struct fast *f)
{
	size_t i;

	fast_bp_forget_all(f);	/* the tracer emptied the address space */
	bt_block_clear(f->blocks);
	bt_displace_reset(f->dsp);
	free(f->gone);
	f->gone = NULL;
	f->ngone = f->gone_cap = 0;
	f->nrestorers = 0;
	f->loader_hook = 0;
	f->nentries = 0;
	f->entries_done = 0;
	f->maps_stale = 1;
	for (i = 0; i < t->nthreads; i++) {
		struct fast_thread *ft = t->threads[i]->bk;

		if (ft) {
			ft->nchain = 0;
			ft->nret = 0;
		}
	}
}

/*
 * @th's exec, as the old program's blocks go (fast_setup()): the path up
 * to the system call, the call, and the branch into the new program, as
 * a step would have ended them.  The call was stepped under its lifted
 * int3 (FT_STEPOVER, which the resume then gives up), or ran in the
 * chain, past its link that ends in a system call: the chain's only one
 * (with more, which one exec'd is not known: they go as before).
 */
static void exec_done(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	struct user_regs_struct regs;
	uint64_t at = 0;
	size_t i;

	if (!ft || bt_thread_regs(th, &regs) < 0)
		return;
	if (ft->state == FT_STEPOVER) {
		at = ft->pre.rip;
	} else if (ft->state == FT_RUN) {
		for (i = 0; i < ft->nchain; i++) {
			if (ft->chain[i].term_class != BT_INSN_SYSCALL)
				continue;
			if (at)
				return;
			at = ft->chain[i].end;
		}
	}
	if (!at)
		return;
	fast_chain_commit(t, th, at);
	fast_acc_add(t, th, 1);
	fast_branch_append(t, th, at, regs.rip, BT_BR_SYSRET, 0);
}

/* First resume after launch, attach or exec: the process is there. */
static int fast_setup(struct bt_target *t, struct bt_thread *th)
{
	struct fast *f = fast_of(t);
	struct bt_aspace *as = fast_as(t);
	int ret;

	if (!as)
		return -bte_nomem;
	if (th->why == BT_TS_EVENT && th->event == PTRACE_EVENT_EXEC &&
	    f->setup_done && !((struct fast_thread *)th->bk)->foreign) {
		exec_done(t, th);
		fast_exec(t, f);
		f->setup_done = 0;
	}
	if (bt_aspace_lifted_all(as) && th->why == BT_TS_EVENT &&
	    th->event == PTRACE_EVENT_VFORK_DONE)
		bt_aspace_unlift_all(as);	/* the vfork child left */
	if (f->setup_done)
		return 0;
	f->setup_done = 1;
	ret = bt_aspace_fd(as);		/* the memory can be written */
	if (ret < 0)
		return ret;
	return fast_triggers(t, f);
}

/* ---- resuming ---------------------------------------------------------- */

/*
 * Did @th's stop come from inside the system call it was stepping, one
 * that comes back to the next instruction (a thread or process started)?
 */
static int step_event(const struct bt_thread *th)
{
	return th->why == BT_TS_EVENT &&
	       (th->event == PTRACE_EVENT_CLONE ||
		th->event == PTRACE_EVENT_FORK ||
		th->event == PTRACE_EVENT_VFORK ||
		th->event == PTRACE_EVENT_VFORK_DONE);
}

int bt_fast_resume_begin(struct bt_target *t, struct bt_thread *th, int sig,
			 struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	int ret;

	ret = fast_setup(t, th);
	if (ret < 0)
		return ret;
	ret = bt_thread_regs(th, regs);
	if (ret < 0)
		return ret;
	if (ft->foreign && ft->state == FT_STEP && !sig &&
	    step_event(th))	/* the step goes on: its trap is after it */
		ret = bt_thread_restart(th, PTRACE_SINGLESTEP, 0);
	else if (ft->foreign)
		ret = fast_step_start(th, sig ? FT_SIGSTEP : FT_STEP, regs,
				      sig);
	else if (ft->state == FT_NATIVE && !(ft->need_step && !sig))
		ret = bt_thread_restart(th, PTRACE_CONT, sig);
	else
		goto commit;
	return ret < 0 ? ret : 1;
commit:
	if (ft->state == FT_STEPOVER) {	/* another stop cut its step short */
		fast_bp_unlift(t, th);
		ft->state = FT_RUN;
	}
	if (sig)
		ft->need_sys = 0;	/* the handler first: it comes back */
	ft->back_native = ft->state == FT_NATIVE;
	fast_thread_unslot(t, th, regs, 1);
	fast_chain_commit(t, th, regs->rip);
	if (!sig)
		return 0;
	ret = fast_step_start(th, FT_SIGSTEP, regs, sig);
	return ret < 0 ? ret : 1;
}

int bt_fast_resume_owed(const struct bt_thread *th)
{
	const struct fast_thread *ft = th->bk;

	return ft->need_step || ft->back_native;
}

/* Step @th over the int3 of ours it stopped at, the int3 lifted. */
static int step_over(struct bt_target *t, struct bt_thread *th,
		     struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast_bp *b = fast_bp_find(fast_of(t), regs->rip);

	ft->need_step = 0;
	if (b)
		fast_bp_lift(t, th, b->addr);
	return fast_step_start(th, FT_STEPOVER, regs, 0);
}

int bt_fast_resume_run(struct bt_target *t, struct bt_thread *th,
		       struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	int ret;

	if (!ft->need_step && !ft->back_native) {
		ret = fast_slot_enter(t, th, regs);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	if (ft->need_sys)
		return fast_sys_enter(t, th, regs);
	if (ft->need_step)
		return step_over(t, th, regs);
	if (!fast_addr_chained(t, regs->rip)) {
		if (!fast_addr_traced(t, regs->rip)) {
			fast_native_enter(t, th, regs->rip, 0);
			return bt_thread_restart(th, PTRACE_CONT, 0);
		}
		return fast_step_start(th, FT_STEP, regs, 0);
	}
	ft->may_restart = th->why == BT_TS_TRAP;
	ret = fast_chain_build(t, th, regs->rip);
	ft->may_restart = 0;
	if (ret == -bte_busy) {
		ret = fast_slot_restart(t, th, regs);
		if (ret)
			return ret < 0 ? ret : 0;
		ret = fast_chain_build(t, th, regs->rip);
	}
	if (ret < 0) {
		ft->nchain = 0;
		return fast_step_start(th, FT_STEP, regs, 0);
	}
	ft->state = FT_RUN;
	return bt_thread_restart(th, PTRACE_CONT, 0);
}

static int fast_resume(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct user_regs_struct regs;
	int ret;

	ret = bt_fast_resume_begin(t, th, sig, &regs);
	if (ret)
		return ret < 0 ? ret : 0;
	return bt_fast_resume_run(t, th, &regs);
}

int bt_fast_step_insn(struct bt_target *t, struct bt_thread *th,
		      const struct user_regs_struct *regs)
{
	return fast_step_start(th, FT_STEP, regs, 0);
}

int bt_fast_stepping(const struct bt_thread *th, uint64_t *from)
{
	const struct fast_thread *ft = th->bk;

	if (!ft || ft->state != FT_STEP)
		return 0;
	if (from)
		*from = ft->pre.rip;
	return 1;
}

int bt_fast_restep(struct bt_thread *th)
{
	return bt_thread_restart(th, PTRACE_SINGLESTEP, 0);
}

void bt_fast_step_ran(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;

	fast_acc_add(t, th, 1);
	ft->state = FT_RUN;
}

int bt_fast_cont(struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;

	ft->state = FT_RUN;
	return bt_thread_restart(th, PTRACE_CONT, 0);
}

/* The tracer steps @th over a debugger's breakpoint (int3 lifted). */
static int fast_step(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct fast_thread *ft = th->bk;
	struct user_regs_struct regs;
	int ret;

	ret = bt_thread_regs(th, &regs);
	if (ret < 0)
		return ret;
	if (ft->state == FT_NATIVE) {
		ft->back_native = 1;
		return fast_step_start(th, FT_STEP, &regs, sig);
	}
	fast_chain_commit(t, th, regs.rip);
	return fast_step_start(th, sig ? FT_SIGSTEP : FT_STEP, &regs, sig);
}

/* ---- the backend ------------------------------------------------------- */

static int fast_probe(char *why, size_t size)
{
	return 0;
}

static void fast_free(struct fast *f)
{
	if (!f)
		return;
	fast_bp_forget_all(f);
	free(f->bp);
	bt_block_cache_free(f->blocks);
	bt_disasm_free(f->dis);
	bt_emu_free(f->emu);
	bt_displace_free(f->dsp);
	free(f->region);
	free(f->entries);
	free(f->gone);
	free(f);
}

static int fast_init(struct bt_target *t)
{
	const struct bt_target_opts *o = &t->opts;
	struct fast *f;
	int ret;

	f = calloc(1, sizeof(*f));
	if (!f)
		return bt_fail(bte_nomem, ENOMEM, "fast backend");
	f->armed = !o->from_sym;
	f->maps_stale = 1;
	f->filtered = (o->only && o->only[0]) || (o->exclude && o->exclude[0]);
	t->bk = f;
	ret = bt_block_cache_alloc(&f->blocks);
	if (!ret)
		ret = bt_disasm_alloc(&f->dis);
	if (!ret)
		ret = bt_emu_alloc(&f->emu);
	if (!ret)
		ret = bt_displace_alloc(&f->dsp);
	if (ret < 0) {
		t->bk = NULL;
		fast_free(f);
	}
	return ret;
}

/*
 * bt_target_cont() returns: every thread stopped.  What each ran of its
 * chain goes into its ring now, so that stats and captures agree.
 */
static void fast_stopped(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];
		struct fast_thread *ft = th->bk;
		uint64_t pc;

		fast_thread_unslot_stopped(t, th);
		if (ft && ft->nchain && ft->state != FT_NATIVE &&
		    th->state == BT_TH_STOPPED && bt_thread_pc(th, &pc) == 0)
			fast_chain_commit(t, th, pc);
	}
}

static void fast_release(struct bt_target *t)
{
	struct fast *f = fast_of(t);
	size_t i;

	if (!f)
		return;
	/* no thread is left in a slot: they stay, but are never run again */
	for (i = 0; i < t->nthreads; i++)
		fast_thread_unslot_stopped(t, t->threads[i]);
	fast_bp_release(t);
}

static void fast_fini(struct bt_target *t)
{
	struct fast *f = fast_of(t);

	if (!f)
		return;
	fast_bp_release(t);
	fast_free(f);
	t->bk = NULL;
}

static int fast_thread_start(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return bt_fail(bte_nomem, ENOMEM, "thread");
	th->bk = ft;
	if (!fast_of(t)->armed)
		ft->state = FT_NATIVE;
	if (th->tgid && th->tgid != t->pid) {
		/*
		 * A followed fork child has a memory of its own, with copies
		 * of our int3s: they go, and it is single-stepped.
		 */
		ft->foreign = 1;
		ft->state = FT_RUN;
		/* once, and only where our int3s are (not a later thread's
		 * process, nor an exec'd child's child) */
		if (th->tid == th->tgid && bt_proc_parent(th->tgid) == t->pid)
			fast_fork_followed(t, th->tgid);
	}
	return 0;
}

static void fast_thread_end(struct bt_target *t, struct bt_thread *th)
{
	if (th->bk)
		fast_bp_unlift(t, th);	/* gone in the middle of a step-over */
	free(th->bk);
	th->bk = NULL;
}

static void fast_signal(struct bt_target *t, struct bt_thread *th, int sig)
{
}

/* A signal stop: judged and shown at the program's own pc. */
static int fast_signalled(struct bt_target *t, struct bt_thread *th)
{
	struct fast *f = fast_of(t);

	if (!f)
		return 0;
	fast_thread_unslot_stopped(t, th);
	return 0;
}

/* What @th ran, in its ring: its chain up to where it stopped. */
static void fast_sync(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	uint64_t pc;

	fast_thread_unslot_stopped(t, th);
	if (ft && ft->state != FT_NATIVE && th->state == BT_TH_STOPPED &&
	    bt_thread_pc(th, &pc) == 0)
		fast_chain_commit(t, th, pc);
}

static int fast_capture(struct bt_target *t, struct bt_thread *th,
			struct bt_capture *cap)
{
	struct bt_ring_view view;
	int ret;

	fast_sync(t, th);
	bt_thread_settle(t, th);
	memset(cap, 0, sizeof(*cap));
	cap->format = BT_FMT_SOFT;
	cap->tid = th->tid;
	bt_cpu_read(&cap->cpu);
	bt_ring_view_init(&view, th->ring);
	ret = bt_ring_copy(&view, &cap->data, &cap->size);
	cap->lost = bt_ring_lost_records(th->ring);
	if (ret == -bte_torn || ret == -bte_corrupt) {
		cap->status = ret;
		ret = 0;
	}
	return ret < 0 ? ret : 0;
}

/*
 * A debugger moved the stopped thread's pc (fast_stopped committed its
 * chain already): the history breaks there.
 */
static void fast_moved(struct bt_target *t, struct bt_thread *th,
		       uint64_t from, uint64_t to)
{
	struct fast_thread *ft = th->bk;

	if (!ft || ft->foreign)
		return;
	ft->nchain = 0;
	ft->need_step = 0;
	if (ft->state != FT_NATIVE)
		fast_gap_append(t, th, from, to, BT_GAP_MOVED);
}

/*
 * A debugger writes the program's memory: int3s of ours there go (the
 * loader hook stays: the address space keeps it over the new byte), and
 * the code decoded or translated there is forgotten.
 */
static void fast_write(struct bt_target *t, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	struct fast *f = fast_of(t);
	size_t i;

	if (!f)
		return;
	for (i = 0; i < len && f->nbp; i++) {
		struct fast_bp *b = fast_bp_find(f, addr + i);

		if (b && !b->pinned)
			fast_bp_remove(t, addr + i);
	}
	bt_block_invalidate(f->blocks, addr, addr + len);
}

const struct bt_backend_ops bt_backend_soft_fast = {
	.name = "soft",
	.id = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_FAST,
	.probe = fast_probe,
	.init = fast_init,
	.fini = fast_fini,
	.thread_start = fast_thread_start,
	.thread_end = fast_thread_end,
	.resume = fast_resume,
	.step = fast_step,
	.trap = fast_trap,
	.fork = fast_fork,
	.release = fast_release,
	.stopped = fast_stopped,
	.signal = fast_signal,
	.signalled = fast_signalled,
	.capture = fast_capture,
	.sync = fast_sync,
	.moved = fast_moved,
	.write = fast_write,
};
