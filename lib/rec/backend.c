// SPDX-License-Identifier: MIT
/*
 * The recorder as a backend (BT_SOFT_RECORD): bt_backend_soft_record.
 *
 * Built on the fast mode (backend/soft/fast.h): where the fast mode would
 * run a thread along a chain of int3s, this backend moves it into its
 * translation (recorder.h) instead, or steps one instruction where it
 * cannot go; everything else (setting up, signals, steps, fork, exec,
 * detach) is the fast mode's own.  A thread that is in its translation
 * is the recorder's: its traps and faults go to the recorder first, and
 * it leaves before anything looks at its registers or its history.
 *
 * Each process of a followed tree has its own recorder (rec_procs.h): a
 * fork child a copy of its parent's, taken at the parent's fork event; a
 * followed child that execs a fresh one.  A vfork child, until it execs
 * or exits, is a guest of its parent's recorder (it runs in that
 * memory); a child whose recorder could not be made is stepped by the
 * fast mode ("foreign" threads).
 *
 * Untraced code (module filters, --from before its symbol) runs natively:
 * backend_native.c, in every process of a followed tree (--from arms the
 * target's own process; a followed child records its traced modules'
 * code from its start).
 */
#include <stdint.h>
#include <sys/ptrace.h>

#include "backend/backend.h"
#include "backend/soft/fast.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "internal.h"
#include "rec/backend_native.h"
#include "rec/rec_procs.h"
#include "rec/recorder.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

static const struct bt_backend_ops *const fast = &bt_backend_soft_fast;

/*
 * The processes' recorders; the first is the target's own, whose pid
 * may be known only after init (attach).
 */
static struct rec_procs *procs_of(struct bt_target *t)
{
	struct rec_procs *s = bt_fast_above(t);

	if (s && s->p[0].pid != t->pid) {
		s->p[0].pid = t->pid;
		bt_recorder_set_pid(s->p[0].r, t->pid);
	}
	return s;
}

/*
 * The recorder of @th's process, NULL if it has none (not made, a vfork
 * child); the host callbacks answer for that process from now on.
 */
static struct bt_recorder *recorder_of(struct bt_target *t,
				       const struct bt_thread *th)
{
	struct rec_proc *p = rec_procs_pick(procs_of(t), bt_thread_tgid(t, th));

	return p ? p->r : NULL;
}

/* The process the recorder's call under way is for. */
static pid_t cur_pid(struct bt_target *t)
{
	struct rec_procs *s = procs_of(t);

	return s ? s->cur : t->pid;
}

/* ---- what the recorder asks (struct bt_recorder_host) ---------------- */

/* Traced code, whether it may change or not (rec_wp.c watches it). */
static int host_translatable(struct bt_target *t, uint64_t addr)
{
	pid_t pid = cur_pid(t);
	struct rec_procs *s = procs_of(t);

	if (pid == t->pid)
		return bt_fast_code_traced(t, addr);
	return rec_proc_code_stable(s, rec_procs_find(s, pid), addr);
}

/* Any int3 of btrace's in @pid: a debugger's breakpoint, the fast mode's. */
static int stop_in(struct bt_target *t, pid_t pid, uint64_t addr)
{
	return bt_aspace_kinds(bt_target_aspace(t, pid), addr) != 0;
}

/*
 * A debugger's breakpoint, or the dynamic loader's hook; not the int3s
 * that only native code meets (the fast mode's, the recorder's own).
 */
static int host_stop_at(struct bt_target *t, uint64_t addr)
{
	pid_t pid = cur_pid(t);
	unsigned kinds = bt_aspace_kinds(bt_target_aspace(t, pid), addr);

	return (kinds & BT_BP_MASK(BT_BP_USER)) ||
	       ((kinds & BT_BP_MASK(BT_BP_BACKEND)) && pid == t->pid &&
		bt_fast_hook_at(t, addr));
}

/* The hook is in before anything is translated, and goes with exec. */
static uint64_t host_stops_version(struct bt_target *t)
{
	return bt_aspace_version_of(bt_target_aspace(t, cur_pid(t)),
				    BT_BP_MASK(BT_BP_USER));
}

/* The program's code as it sees it: every int3 of btrace hidden. */
static int host_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct bt_target *t = ctx;
	pid_t pid = cur_pid(t);
	ssize_t n;

	if (pid == t->pid)
		n = bt_target_mem(t, addr, buf, len);
	else
		n = bt_aspace_read(bt_target_aspace(t, pid), addr, buf, len);
	return n == (ssize_t)len ? 0 : -bte_io;
}

static void host_maps_changed(struct bt_target *t)
{
	pid_t pid = cur_pid(t);
	struct rec_proc *p = rec_procs_find(procs_of(t), pid);

	if (pid == t->pid) {
		bt_fast_maps_changed(t);
	} else if (p) {
		p->maps_stale = 1;
		p->until_look = 1;	/* a library mapped, maybe */
	}
}

static void host_gap(struct bt_target *t, struct bt_thread *th, uint64_t to,
		     int reason)
{
	bt_fast_history_gap(t, th, 0, to, reason);
}

static const struct bt_recorder_host host = {
	.translatable = host_translatable,
	.stop_at = host_stop_at,
	.stops_version = host_stops_version,
	.read = host_read,
	.gap = host_gap,
	.maps_changed = host_maps_changed,
	.untraced = rec_native_untraced,
	.native_on = rec_native_on,
	.native = rec_native_host,
	.acc_take = bt_fast_history_take,
	.acc_give = bt_fast_history_carry,
};

/* ---- lifetime --------------------------------------------------------- */

/*
 * A thread may be pinned (tracer.h) while it runs translated code and no
 * untraced code runs natively: the translations leave at every system
 * call that could see the pin (rec_dispatch.c releases it there).
 */
static int pin_ok(struct bt_target *t, struct bt_thread *th)
{
	struct rec_procs *s = procs_of(t);
	struct rec_proc *p;

	/* not recorder_of(): asked from the wait, it must not change the
	   process the call under way is for */
	p = s ? rec_procs_find(s, rec_procs_host(s, bt_thread_tgid(t, th)))
	      : NULL;
	return p && bt_recorder_in(p->r, th) && !bt_recorder_native(p->r);
}

static int record_init(struct bt_target *t)
{
	struct rec_procs *s;
	struct bt_recorder *r;
	int ret;

	ret = fast->init(t);
	if (ret < 0)
		return ret;
	ret = bt_recorder_alloc(&r, t, &host);
	s = ret < 0 ? NULL : rec_procs_alloc(t, t->pid, r, &host);
	if (!s) {
		fast->fini(t);
		return ret < 0 ? ret : -bte_nomem;
	}
	bt_fast_set_above(t, s);
	bt_pin_allow(t, pin_ok);
	return 0;
}

static void record_fini(struct bt_target *t)
{
	struct rec_procs *s = procs_of(t);

	fast->fini(t);
	rec_procs_free(s);
}

static void record_thread_end(struct bt_target *t, struct bt_thread *th)
{
	bt_recorder_step_unlift(recorder_of(t, th), th);
	bt_recorder_thread_end(recorder_of(t, th), th);
	fast->thread_end(t, th);
	rec_proc_thread_end(t, th);
}

/* ---- resuming --------------------------------------------------------- */

/* Step the instruction at @regs->rip, an int3 of the recorder's there
 * lifted meanwhile. */
static int step_insn(struct bt_target *t, struct bt_thread *th,
		     struct user_regs_struct *regs, struct bt_recorder *r)
{
	bt_recorder_step_lift(r, th, regs->rip);
	return bt_fast_step_insn(t, th, regs);
}

/*
 * Did @th end while we ran a system call in it (a zone's mmap, a look at
 * SIGSEGV's action: another thread's exit_group, a SIGKILL)?  Its end was
 * reaped there (bt_thread_step) and its backend's state went with it:
 * nothing is left to resume.
 */
static int reaped(const struct bt_thread *th)
{
	return th->state == BT_TH_GONE;
}

/*
 * Run @th, at original pc @regs->rip, where the fast mode would run a
 * chain: into its translation, natively in untraced code, or one step
 * where it cannot go (and after it left one).  Never an int3 in the
 * program's code.
 */
static int record_run(struct bt_target *t, struct bt_thread *th,
		      struct user_regs_struct *regs, struct bt_recorder *r)
{
	int ret;

	/*
	 * A step outstanding when an event stopped the thread (clone, fork
	 * inside the stepped syscall) is issued again: its trap is the one
	 * that tells what the instruction did.
	 */
	if (bt_fast_stepping(th, NULL) && th->why == BT_TS_EVENT)
		return bt_fast_restep(th);
	bt_recorder_gs_own(r, th, regs);
	if (bt_recorder_left_step(r, th))
		return step_insn(t, th, regs, r);
	if (host_translatable(t, regs->rip)) {
		ret = bt_recorder_enter(r, th, regs);
		if (reaped(th))
			return 0;
		if (ret < 0)
			return ret;
		if (ret == 1)
			return bt_fast_cont(th);
	}
	ret = rec_native_run(t, th, regs);
	if (reaped(th))
		return 0;
	if (ret)
		return ret < 0 ? ret : 0;
	return step_insn(t, th, regs, r);
}

/*
 * A thread of a followed child's process: into its process's
 * translation, on in untraced code it runs natively, stepped where it
 * has no recorder, or with a signal to deliver (the fast mode steps
 * into the handler, or delivers it natively).
 */
static int child_resume(struct bt_target *t, struct bt_thread *th, int sig,
			struct bt_recorder *r)
{
	struct user_regs_struct regs;
	struct rec_proc *p;
	int ret;

	if (!r || sig)
		return fast->resume(t, th, sig);
	p = rec_procs_find(procs_of(t), bt_thread_tgid(t, th));
	if (p)
		rec_proc_until(t, p);
	ret = bt_thread_regs(th, &regs);
	if (ret < 0)
		return ret;
	if (bt_fast_native(th, NULL)) {
		if (th->why != BT_TS_EVENT || th->event != PTRACE_EVENT_EXEC)
			return bt_thread_restart(th, PTRACE_CONT, 0);
		/* a new program, whose own map says what runs natively */
		bt_fast_native_back(t, th, regs.rip, BT_GAP_UNTRACED);
	}
	return record_run(t, th, &regs, r);
}

static int record_resume(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct bt_recorder *r;
	struct user_regs_struct regs;
	int ret;

	if (!procs_of(t))
		return fast->resume(t, th, sig);
	rec_proc_events(t, th);
	if (reaped(th))
		return 0;
	r = recorder_of(t, th);
	if (bt_recorder_in(r, th)) {
		if (!sig)
			return bt_fast_cont(th);
		bt_recorder_leave(r, th);
		if (reaped(th))
			return 0;
	}
	if (bt_thread_tgid(t, th) != t->pid)
		return child_resume(t, th, sig, r);
	ret = bt_fast_resume_begin(t, th, sig, &regs);
	if (ret)
		return ret < 0 ? ret : 0;
	if (bt_fast_resume_owed(th))
		return bt_fast_resume_run(t, th, &regs);
	return record_run(t, th, &regs, r);
}

static int record_step(struct bt_target *t, struct bt_thread *th, int sig)
{
	return fast->step(t, th, sig);
}

/* ---- stops ------------------------------------------------------------ */

/*
 * @th stopped with SIGTRAP.  In its translation: an exit of it, the
 * recorder's.  Stepped by the fast mode over the program's own int3 (one
 * no breakpoint of btrace's stands on): the int3 ran, and its SIGTRAP is
 * the program's.  Anything else is the fast mode's to judge.
 */
static int record_trap(struct bt_target *t, struct bt_thread *th,
		       const siginfo_t *si)
{
	struct bt_recorder *r = recorder_of(t, th);
	struct user_regs_struct regs;
	uint64_t from;

	if (!procs_of(t))
		return fast->trap(t, th, si);
	bt_recorder_step_unlift(r, th);
	if (bt_recorder_in(r, th)) {
		/* killed since the trap: its end is what to report */
		if (bt_thread_regs(th, &regs) < 0)
			return 1;
		if (bt_recorder_trap(r, th, si, &regs) != BT_RECORDER_NOT_OURS)
			return 1;
		if (bt_recorder_in(r, th))
			return 0;
		/* it had left natively: its trap is judged as such below */
	}
	if (rec_native_trap(t, th, si))
		return 1;
	if (bt_fast_stepping(th, &from) && si->si_code == SI_KERNEL &&
	    bt_thread_regs(th, &regs) == 0 && regs.rip - 1 == from &&
	    !stop_in(t, bt_thread_tgid(t, th), from)) {
		bt_fast_step_ran(t, th);
		return 0;
	}
	return fast->trap(t, th, si);
}

/*
 * A signal stop: a fault on a ring's guard page, or a write to code the
 * recorder write-protected, is the recorder's own; anything else is judged at the program's own pc, out of the translation.
 */
static int record_signalled(struct bt_target *t, struct bt_thread *th)
{
	struct bt_recorder *r = recorder_of(t, th);

	bt_recorder_step_unlift(r, th);
	if (bt_recorder_fault(r, th, &th->si))
		return 1;
	if (bt_recorder_in(r, th))
		bt_recorder_leave(r, th);
	return fast->signalled(t, th);
}

/* Every stopped thread out of its translation (a stop is reported). */
static void leave_all(struct bt_target *t)
{
	size_t i;

	if (procs_of(t))
		for (i = 0; i < t->nthreads; i++)
			bt_recorder_leave(recorder_of(t, t->threads[i]),
					  t->threads[i]);
}

static void record_stopped(struct bt_target *t)
{
	leave_all(t);
	fast->stopped(t);
}

/*
 * The pages the recorder write-protected in @pid given back their
 * protection through a thread of it that is not inside a system call
 * (nor exiting, when nothing is to give back).
 */
static void unprotect_proc(struct bt_target *t, struct bt_recorder *r,
			   pid_t pid)
{
	size_t i;

	for (i = 0; r && i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (bt_thread_tgid(t, th) == pid && th->state == BT_TH_STOPPED &&
		    (th->why == BT_TS_TRAP || th->why == BT_TS_SIGNAL ||
		     th->why == BT_TS_INTERRUPT)) {
			bt_recorder_unprotect(r, th);
			return;
		}
	}
}

/*
 * Every thread stopped and out of its translation: each process's
 * protections given back, then its recorder's memory unmapped.
 */
static void record_release(struct bt_target *t)
{
	struct rec_procs *s = procs_of(t);
	size_t i;

	leave_all(t);
	for (i = 0; s && i < s->n; i++) {
		rec_procs_pick(s, s->p[i].pid);
		unprotect_proc(t, s->p[i].r, s->p[i].pid);
	}
	fast->release(t);
	for (i = 0; s && i < s->n; i++) {
		rec_procs_pick(s, s->p[i].pid);
		bt_recorder_release(s->p[i].r);
		/* a fork child's re-entry int3s are its own copies */
		bt_aspace_remove_kind(bt_target_aspace(t, s->p[i].pid),
				      BT_BP_RECORDER);
	}
	if (!s)
		bt_aspace_remove_kind(bt_target_aspace(t, t->pid),
				      BT_BP_RECORDER);
}

/* ---- the history ------------------------------------------------------ */

/* What @th ran, in its ring: its recorder ring decoded, then the fast
 * mode's part. */
static void record_sync(struct bt_target *t, struct bt_thread *th)
{
	if (th->why == BT_TS_EXIT)
		bt_recorder_exiting(recorder_of(t, th), th);
	else
		bt_recorder_leave(recorder_of(t, th), th);
	fast->sync(t, th);
}

/* A part of @th's history its recorder held (bt_thread_settle). */
static uint32_t record_replay(struct bt_target *t, struct bt_thread *th,
			      void *data, size_t len, uint32_t acc, int cut)
{
	if (!data) {
		bt_fast_history_carry(t, th, acc);
		return 0;
	}
	return bt_recorder_replay(recorder_of(t, th), th, data, len, acc, cut);
}

static int record_capture(struct bt_target *t, struct bt_thread *th,
			  struct bt_capture *cap)
{
	bt_recorder_leave(recorder_of(t, th), th);
	return fast->capture(t, th, cap);
}

/* A debugger writes code: the fast mode's int3s, and translations of it. */
static void record_write(struct bt_target *t, uint64_t addr, uint8_t *buf,
			 size_t len)
{
	struct bt_recorder *r = recorder_of(t, NULL);

	fast->write(t, addr, buf, len);
	if (r)
		bt_recorder_invalidate(r, addr, addr + len);
}

/* ---- the fast mode's own --------------------------------------------- */

static int record_probe(char *why, size_t size)
{
	return fast->probe(why, size);
}

/*
 * A followed child's first thread.  A fork child: its copies of its
 * parent's re-entry int3s go; its recorder, a copy of its parent's made
 * here (whether the parent's fork event was read or not), puts them
 * back.  A vfork child runs in its parent's memory: a guest of its
 * parent's recorder, in its translations; every int3 there is lifted
 * until the parent's VFORK_DONE (rec_proc_events()), for where it is
 * stepped.
 */
static int record_thread_start(struct bt_target *t, struct bt_thread *th)
{
	struct bt_aspace *as = NULL;
	pid_t parent = 0;
	int shared = 0, ret;

	if (th->tgid && th->tgid != t->pid && th->tid == th->tgid) {
		struct rec_procs *s = procs_of(t);

		parent = bt_proc_parent(th->tgid);
		/* a parent without a recorder has no int3 of the kind */
		as = rec_procs_find(s, rec_procs_host(s, parent)) ?
		     bt_target_aspace(t, parent) : NULL;
		shared = as && bt_proc_shares_vm(parent, th->tgid);
		if (shared)	/* else stepped, as before */
			rec_procs_guest_add(s, th->tgid, parent);
		if (shared && bt_aspace_count(as)) {
			if (!bt_aspace_lifted_all(as))
				bt_aspace_lift_all(as);
		} else if (as && bt_aspace_count(as)) {
			bt_aspace_fork_clean(as, th->tgid,
					     BT_BP_MASK(BT_BP_RECORDER));
		}
	}
	ret = fast->thread_start(t, th);	/* the fast mode's int3s go */
	/* its recorder now, not at its parent's event: until then it would
	 * be stepped, and its untraced code with it */
	if (ret == 0 && as && !shared && t->opts.follow_fork)
		rec_proc_fork_copy(t, parent, th->tgid);
	return ret;
}

/* A vfork child runs in this memory: no int3 of ours either. */
static void record_fork(struct bt_target *t, pid_t child, int shared)
{
	struct bt_aspace *as = bt_target_aspace(t, t->pid);

	fast->fork(t, child, shared);
	if (shared && as && bt_aspace_count(as) && !bt_aspace_lifted_all(as))
		bt_aspace_lift_all(as);
}

static void record_signal(struct bt_target *t, struct bt_thread *th, int sig)
{
	fast->signal(t, th, sig);
}

static void record_moved(struct bt_target *t, struct bt_thread *th,
			 uint64_t from, uint64_t to)
{
	fast->moved(t, th, from, to);
}

const struct bt_backend_ops bt_backend_soft_record = {
	.name = "soft",
	.id = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_RECORD,
	.ring_scale = 8,	/* 32 bytes a branch here, 3.6 there on average */
	.probe = record_probe,
	.init = record_init,
	.fini = record_fini,
	.thread_start = record_thread_start,
	.thread_end = record_thread_end,
	.resume = record_resume,
	.step = record_step,
	.trap = record_trap,
	.fork = record_fork,
	.release = record_release,
	.stopped = record_stopped,
	.signal = record_signal,
	.signalled = record_signalled,
	.capture = record_capture,
	.sync = record_sync,
	.moved = record_moved,
	.write = record_write,
	.replay = record_replay,
};
