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
 * With module filters or --from the recorder is not made (it does not run
 * untraced code natively) and this backend is the fast mode.
 */
#include <stdint.h>
#include <sys/ptrace.h>

#include "backend/backend.h"
#include "backend/soft/fast.h"
#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

static const struct bt_backend_ops *const fast = &bt_backend_soft_fast;

static struct bt_recorder *recorder_of(struct bt_target *t)
{
	return bt_fast_above(t);
}

/* ---- what the recorder asks (struct bt_recorder_host) ---------------- */

static int host_translatable(struct bt_target *t, uint64_t addr)
{
	return bt_fast_code_stable(t, addr);
}

/* Any int3 of btrace's: a debugger's breakpoint, the fast mode's. */
static int host_stop_at(struct bt_target *t, uint64_t addr)
{
	return bt_aspace_kinds(bt_target_aspace(t, t->pid), addr) != 0;
}

static uint64_t host_stops_version(struct bt_target *t)
{
	return bt_aspace_version(bt_target_aspace(t, t->pid));
}

/* The program's code as it sees it: every int3 of btrace hidden. */
static int host_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (bt_target_mem(ctx, addr, buf, len) != (ssize_t)len)
		return -bte_io;
	return 0;
}

static void host_insns(struct bt_target *t, struct bt_thread *th, uint32_t n)
{
	bt_fast_history_insns(t, th, n);
}

static void host_branch(struct bt_target *t, struct bt_thread *th,
			uint64_t from, uint64_t to, int kind)
{
	bt_fast_history_branch(t, th, from, to, kind, 0);
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
	.insns = host_insns,
	.branch = host_branch,
	.gap = host_gap,
	.time = bt_fast_history_time,
	.maps_changed = bt_fast_maps_changed,
};

/* ---- lifetime --------------------------------------------------------- */

static int record_init(struct bt_target *t)
{
	const struct bt_target_opts *o = &t->opts;
	int filtered = (o->only && o->only[0]) || (o->exclude && o->exclude[0]);
	struct bt_recorder *r;
	int ret;

	ret = fast->init(t);
	if (ret < 0 || filtered || o->from_sym)
		return ret;
	ret = bt_recorder_alloc(&r, t, &host);
	if (ret < 0) {
		fast->fini(t);
		return ret;
	}
	bt_fast_set_above(t, r);
	return 0;
}

static void record_fini(struct bt_target *t)
{
	struct bt_recorder *r = recorder_of(t);

	fast->fini(t);
	bt_recorder_free(r);
}

/* A new address space (exec, not a followed fork child's): start over. */
static int exec_stop(const struct bt_target *t, const struct bt_thread *th)
{
	return th->why == BT_TS_EVENT && th->event == PTRACE_EVENT_EXEC &&
	       !(th->tgid && th->tgid != t->pid);
}

static void record_thread_end(struct bt_target *t, struct bt_thread *th)
{
	bt_recorder_thread_end(recorder_of(t), th);
	fast->thread_end(t, th);
}

/* ---- resuming --------------------------------------------------------- */

/*
 * Run @th, at original pc @regs->rip, where the fast mode would run a
 * chain: into its translation, or one step where it cannot go (and after
 * it left one).  Never an int3 in the program's code.
 */
static int record_run(struct bt_target *t, struct bt_thread *th,
		      struct user_regs_struct *regs)
{
	struct bt_recorder *r = recorder_of(t);
	int ret;

	/*
	 * A step outstanding when an event stopped the thread (clone, fork
	 * inside the stepped syscall) is issued again: its trap is the one
	 * that tells what the instruction did.
	 */
	if (bt_fast_stepping(th, NULL) && th->why == BT_TS_EVENT)
		return bt_fast_restep(th);
	if (bt_recorder_left_step(r, th))
		return bt_fast_step_insn(t, th, regs);
	if (host_translatable(t, regs->rip)) {
		ret = bt_recorder_enter(r, th, regs);
		if (ret < 0)
			return ret;
		if (ret == 1)
			return bt_fast_cont(th);
	}
	return bt_fast_step_insn(t, th, regs);
}

static int record_resume(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct bt_recorder *r = recorder_of(t);
	struct user_regs_struct regs;
	int ret;

	if (!r)
		return fast->resume(t, th, sig);
	if (exec_stop(t, th))
		bt_recorder_reset(r);
	if (bt_recorder_in(r, th)) {
		if (!sig)
			return bt_fast_cont(th);
		bt_recorder_leave(r, th);
	}
	ret = bt_fast_resume_begin(t, th, sig, &regs);
	if (ret)
		return ret < 0 ? ret : 0;
	if (bt_fast_resume_owed(th))
		return bt_fast_resume_run(t, th, &regs);
	return record_run(t, th, &regs);
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
	struct bt_recorder *r = recorder_of(t);
	struct user_regs_struct regs;
	uint64_t from;

	if (!r)
		return fast->trap(t, th, si);
	if (bt_recorder_in(r, th)) {
		/* killed since the trap: its end is what to report */
		if (bt_thread_regs(th, &regs) < 0)
			return 1;
		return bt_recorder_trap(r, th, si) != BT_RECORDER_NOT_OURS;
	}
	if (bt_fast_stepping(th, &from) && si->si_code == SI_KERNEL &&
	    bt_thread_regs(th, &regs) == 0 && regs.rip - 1 == from &&
	    !host_stop_at(t, from)) {
		bt_fast_step_ran(t, th);
		return 0;
	}
	return fast->trap(t, th, si);
}

/*
 * A signal stop: a fault on a ring's guard page is the recorder's own;
 * anything else is judged at the program's own pc, out of the translation.
 */
static int record_signalled(struct bt_target *t, struct bt_thread *th)
{
	struct bt_recorder *r = recorder_of(t);

	if (bt_recorder_in(r, th)) {
		if (bt_recorder_fault(r, th, &th->si))
			return 1;
		bt_recorder_leave(r, th);
	}
	return fast->signalled(t, th);
}

/* Every stopped thread out of its translation (a stop is reported). */
static void leave_all(struct bt_target *t)
{
	struct bt_recorder *r = recorder_of(t);
	size_t i;

	if (r)
		for (i = 0; i < t->nthreads; i++)
			bt_recorder_leave(r, t->threads[i]);
}

static void record_stopped(struct bt_target *t)
{
	leave_all(t);
	fast->stopped(t);
}

static void record_release(struct bt_target *t)
{
	leave_all(t);
	fast->release(t);
}

/* ---- the history ------------------------------------------------------ */

/* What @th ran, in its ring: its recorder ring decoded, then the fast
 * mode's part. */
static void record_sync(struct bt_target *t, struct bt_thread *th)
{
	bt_recorder_leave(recorder_of(t), th);
	fast->sync(t, th);
}

static int record_capture(struct bt_target *t, struct bt_thread *th,
			  struct bt_capture *cap)
{
	bt_recorder_leave(recorder_of(t), th);
	return fast->capture(t, th, cap);
}

/* A debugger writes code: the fast mode's int3s, and translations of it. */
static void record_write(struct bt_target *t, uint64_t addr, uint8_t *buf,
			 size_t len)
{
	struct bt_recorder *r = recorder_of(t);

	fast->write(t, addr, buf, len);
	if (r)
		bt_recorder_invalidate(r, addr, addr + len);
}

/* ---- the fast mode's own --------------------------------------------- */

static int record_probe(char *why, size_t size)
{
	return fast->probe(why, size);
}

static int record_thread_start(struct bt_target *t, struct bt_thread *th)
{
	return fast->thread_start(t, th);
}

static void record_fork(struct bt_target *t, pid_t child, int shared)
{
	fast->fork(t, child, shared);
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
};
