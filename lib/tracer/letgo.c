// SPDX-License-Identifier: MIT
/*
 * Letting go: detach (the program goes on), detach stopped (handed to
 * another debugger), finish (a launched program runs to its end), kill.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* Reap threads that were let go at their exit: no zombie left behind. */
static void reap_dying(struct bt_target *t)
{
	int status;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->state != BT_TH_RUNNING || !th->exiting)
			continue;
		/* A leader we also forked is for our caller's waitpid. */
		if (th->tid == t->pid && bt_proc_parent(t->pid) == getpid())
			continue;
		if (waitpid(th->tid, &status, __WALL | WNOHANG) == th->tid &&
		    (WIFEXITED(status) || WIFSIGNALED(status)))
			bt_thread_gone(t, th);
	}
}

/*
 * A thread stopped while single-stepping can hold the step's SIGTRAP
 * queued: let go, it would die of it (synchronous signals come first).
 * Resume it once: the kernel dequeues the trap before running anything,
 * reports it, and it is dropped.
 */
static void drain_trap(struct bt_target *t, struct bt_thread *th)
{
	int status, tries;

	for (tries = 0; tries < 4; tries++) {
		if (!(bt_proc_sigmask(t->pid, th->tid, "SigPnd") &
		      (1ull << (SIGTRAP - 1))))
			return;
		if (bt_thread_restart(th, PTRACE_CONT, 0) < 0 ||
		    bt_wait_thread(t, th->tid, &status) != th->tid ||
		    !WIFSTOPPED(status))
			return;
	}
}

/*
 * Detach @th from a ptrace-stop, delivering @sig (0: none).  While the
 * process enters its group stop or dies, a thread can be out of its
 * ptrace-stop (ESRCH): wait for its next report, then detach from that
 * one.
 */
static int detach_quiet(struct bt_target *t, struct bt_thread *th, int sig)
{
	int status, tries;

	for (tries = 0; tries < 64; tries++) {
		bt_thread_give_siginfo(th, sig);
		if (ptrace(PTRACE_DETACH, th->tid, 0, sig) == 0)
			return 0;
		if (errno != ESRCH)
			break;
		if (bt_wait_thread(t, th->tid, &status) < 0)
			return errno == ECHILD ? 0 : -1;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return 0;
	}
	return bt_fail(bte_ptrace, errno, "ptrace(DETACH, %d)", th->tid);
}

/*
 * A thread that hit one of our int3s while everything was being stopped
 * holds its SIGTRAP, not yet judged: it is ours, not the program's.
 * Rewind it before the int3s go, so that nothing of btrace is delivered.
 */
static void settle_breaks(struct bt_target *t)
{
	struct bt_stop ignored;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->state == BT_TH_STOPPED && th->why == BT_TS_SIGNAL &&
		    th->sig == SIGTRAP && !th->sig_checked &&
		    bt_judge_break(t, th, &ignored) == 1)
			th->at_break = 0;
	}
}

/*
 * The signal @th gets as it is let go: the one it was stopped for, but
 * for a trap of the kernel's single-stepping (TRAP_TRACE, or TRAP_BRKPT
 * after a stepped system call): only a tracer steps, so it is btrace's,
 * even where no backend claimed it (a step the stop-all cut short).
 */
static int let_go_signal(const struct bt_thread *th)
{
	if (th->sig == SIGTRAP && th->why == BT_TS_SIGNAL &&
	    (th->si.si_code == TRAP_TRACE || th->si.si_code == TRAP_BRKPT))
		return 0;
	return th->sig;
}

/*
 * Detach every stopped thread, each with the signal it was stopped for:
 * a pending signal is delivered as it would have been.  Group-stopped
 * threads stay stopped: the program was stopped.
 */
static int detach_all(struct bt_target *t)
{
	int ret = 0, pass, r;
	size_t i;

	/*
	 * Threads that take no signal go first: a fatal one ends the whole
	 * process, and SIGKILL wakes the threads still traced out of their
	 * stops (detach_quiet then detaches them at their exit stop).
	 */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < t->nthreads; i++) {
			struct bt_thread *th = t->threads[i];

			if (th->state != BT_TH_STOPPED ||
			    !let_go_signal(th) != !pass)
				continue;
			r = detach_quiet(t, th, let_go_signal(th));
			if (r < 0 && !ret)
				ret = r;
			/* Not ours any more: never waited for (its parent's). */
			bt_thread_gone(t, th);
		}
	t->traced = 0;
	return ret;
}

/*
 * The start of every letting go: all threads stopped, none left on an int3
 * of btrace's, every int3 out.  Returns the first error; the rest is done.
 */
static int letgo_begin(struct bt_target *t)
{
	int ret = bt_target_stop_all(t), r;

	bt_pin_release(t, 1);
	settle_breaks(t);
	r = bt_breaks_remove_all(t);
	return ret ? ret : r;
}

int bt_target_detach(struct bt_target *t)
{
	int ret, r;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_detach(NULL)");
	if (!t->traced || t->gone)
		return 0;
	ret = letgo_begin(t);
	r = detach_all(t);
	if (!ret)
		ret = r;
	reap_dying(t);
	return ret;
}

/*
 * Hand the process to another debugger: a process-wide SIGSTOP is queued
 * before the threads are let go, so the first one to run takes the whole
 * process into a group stop before any instruction; the stop's own signal
 * is dropped (a fault re-executes, the new tracer re-sends the others).
 */
int bt_target_detach_stopped(struct bt_target *t)
{
	int ret, r;
	size_t i;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_detach_stopped(NULL)");
	if (!t->traced || t->gone)
		return 0;
	ret = letgo_begin(t);
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			drain_trap(t, t->threads[i]);
	if (kill(t->pid, SIGSTOP) < 0 && !ret)
		ret = bt_fail(bte_exited, errno, "kill(%d, SIGSTOP)", t->pid);
	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		th->sig = 0;
		if (th->state != BT_TH_STOPPED)
			continue;
		r = detach_quiet(t, th, 0);
		if (r < 0 && !ret)
			ret = r;
		th->state = BT_TH_RUNNING;
	}
	t->traced = 0;
	reap_dying(t);
	return ret;
}

/* Wait for the launched child @t to end; *@wstatus its status. */
int bt_target_finish_reap(struct bt_target *t, int *wstatus)
{
	siginfo_t si;
	int status, sig;
	pid_t r;

	for (;;) {
		r = waitpid(-1, &status, __WALL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return bt_fail(bte_io, errno, "waitpid(%d)", t->pid);
		}
		if (r == t->pid && (WIFEXITED(status) || WIFSIGNALED(status)))
			break;
		if (!WIFSTOPPED(status))
			continue;
		/* A thread that came up while letting go: let it go too. */
		sig = WSTOPSIG(status);
		if (status >> 16 || sig == SIGTRAP ||
		    ptrace(PTRACE_GETSIGINFO, r, 0, &si) < 0)
			sig = 0;
		ptrace(PTRACE_DETACH, r, 0, sig);
	}
	t->gone = 1;
	t->wstatus = status;
	t->have_wstatus = 1;
	*wstatus = status;
	return 0;
}

/* What an attached process's end will be: it is not ours to reap. */
static int finish_predict(const struct bt_target *t)
{
	switch (t->last.reason) {
	case BT_STOP_SIGNAL:
	case BT_STOP_KILLED:
		return t->last.signal & 0x7f;
	case BT_STOP_INTERRUPT:
		return t->last.signal ? t->last.signal : 0;
	case BT_STOP_EXIT:
		return (t->last.status & 0xff) << 8;
	default:
		return 0;
	}
}

int bt_target_finish(struct bt_target *t, int *wstatus)
{
	int ws = 0, ret = 0;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_finish(NULL)");
	if (!wstatus)
		wstatus = &ws;
	if (t->gone) {
		*wstatus = t->have_wstatus ? t->wstatus : t->last_wstatus;
		return 0;
	}
	if (!t->launched) {
		*wstatus = finish_predict(t);
		return bt_target_detach(t);
	}
	if (t->traced) {
		ret = bt_target_stop_all(t);
		bt_pin_release(t, 1);
		settle_breaks(t);
		bt_breaks_remove_all(t);
		detach_all(t);
	}
	if (ret == 0)
		ret = bt_target_finish_reap(t, wstatus);
	return ret;
}

/*
 * Wait for killed thread @th to be gone, resuming it through the exit
 * stops it still makes.  A process we attached to but also forked (a
 * test's child) keeps its leader's status for its own waitpid.
 */
static void kill_reap(struct bt_target *t, struct bt_thread *th)
{
	int keep = !t->launched && th->tid == t->pid &&
		   bt_proc_parent(t->pid) == getpid();
	struct bt_stop ignored;
	siginfo_t si;
	int status;

	for (;;) {
		if (keep) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, th->tid, &si,
				   WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0 &&
			    errno != EINTR)
				break;
			if (si.si_pid && si.si_code != CLD_TRAPPED) {
				bt_thread_gone(t, th);
				return;
			}
			if (!si.si_pid)
				continue;
		}
		if (waitpid(th->tid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFSTOPPED(status)) {
			/* PTRACE_EVENT_EXIT still stops a killed thread. */
			bt_thread_restart(th, PTRACE_CONT, 0);
			continue;
		}
		bt_on_reaped(t, th->tid, status, &ignored);
		return;
	}
	bt_thread_gone(t, th);
}

int bt_target_kill(struct bt_target *t)
{
	struct bt_thread *leader;
	size_t i;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_kill(NULL)");
	if (t->gone || (!t->traced && !t->launched))
		return 0;
	kill(t->pid, SIGKILL);
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tgid != t->pid &&
		    t->threads[i]->state != BT_TH_GONE)
			kill(t->threads[i]->tgid, SIGKILL);
	/* A thread in some ptrace-stops (exec) only dies once resumed. */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			bt_thread_restart(t->threads[i], PTRACE_CONT, 0);
	/* The leader is reported last, once the others are reaped. */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tid != t->pid &&
		    t->threads[i]->state != BT_TH_GONE)
			kill_reap(t, t->threads[i]);
	leader = bt_thread_find(t, t->pid);
	if (leader)
		kill_reap(t, leader);
	if (t->launched && !t->have_wstatus) {
		int status;

		if (waitpid(t->pid, &status, __WALL) == t->pid) {
			t->wstatus = status;
			t->have_wstatus = 1;
		}
	}
	t->gone = 1;
	t->traced = 0;
	return 0;
}
