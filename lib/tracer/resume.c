// SPDX-License-Identifier: MIT
/*
 * Restarting stopped threads: as the backend decides, one step over a
 * breakpoint, single steps and system calls run in a stopped thread, and
 * bringing every thread to a ptrace-stop.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

static const char *restart_name(int op)
{
	switch (op) {
	case PTRACE_CONT:
		return "CONT";
	case PTRACE_SINGLESTEP:
		return "SINGLESTEP";
	case PTRACE_LISTEN:
		return "LISTEN";
	case PTRACE_SYSCALL:
		return "SYSCALL";
	default:
		return "restart";
	}
}

void bt_thread_give_siginfo(struct bt_thread *th, int sig)
{
	if (sig && th->si.si_signo == sig)
		ptrace(PTRACE_SETSIGINFO, th->tid, 0, &th->si);
}

int bt_thread_restart(struct bt_thread *th, int op, int sig)
{
	bt_thread_give_siginfo(th, sig);
	if (ptrace(op, th->tid, 0, (void *)(long)sig) == 0)
		return 0;
	return bt_fail(errno == ESRCH ? bte_exited : bte_ptrace, errno,
		       "ptrace(%s, %d)", restart_name(op), (int)th->tid);
}

/*
 * @th was restarted (@ret the restart's result): now @state.  One killed
 * meanwhile runs to its end, which waitpid reports: no error.  One whose
 * end was reaped meanwhile (a system call run in it for the backend, its
 * step met the end: bt_thread_step) stays gone: made running again, it
 * was waited for forever, a thread that no report would ever come for
 * (an exit held for the others, a stop of every thread).
 */
static int restarted(struct bt_thread *th, int ret, int state)
{
	if (th->state == BT_TH_GONE)
		return 0;
	if (ret < 0 && bt_errno() != ESRCH)
		return ret;
	th->state = ret < 0 ? BT_TH_RUNNING : state;
	return 0;
}

static int thread_resume_plain(struct bt_target *t, struct bt_thread *th)
{
	int sig = th->sig;

	th->sig = 0;
	th->sig_checked = 0;
	return restarted(th, t->ops->resume(t, th, sig), BT_TH_RUNNING);
}

/*
 * One instruction of @th (bt_target_resume()), through the backend as a
 * step over a breakpoint is.  After an event stop inside the stepped
 * instruction (a clone or exec system call) the step is issued again: the
 * backend still waits for its trap.
 */
static int thread_step(struct bt_target *t, struct bt_thread *th)
{
	int sig = th->sig, ret;

	th->sig = 0;
	th->sig_checked = 0;
	if (th->stepping == 2 && th->why == BT_TS_EVENT) {
		ret = bt_thread_restart(th, PTRACE_SINGLESTEP, 0);
	} else {
		th->stepping = 2;	/* issued */
		if (t->ops->step)
			ret = t->ops->step(t, th, sig);
		else
			ret = bt_thread_restart(th, PTRACE_SINGLESTEP, sig);
	}
	return restarted(th, ret, BT_TH_RUNNING);
}

int bt_thread_resume(struct bt_target *t, struct bt_thread *th)
{
	if (th->state != BT_TH_STOPPED || th->parked)
		return 0;
	if (th->hold && th->why != BT_TS_EXIT)
		return 0;
	/* Dying: on to its end. */
	if (th->why == BT_TS_EXIT)
		return restarted(th, bt_thread_restart(th, PTRACE_CONT, 0),
				 BT_TH_RUNNING);
	/* Group-stopped: it stays so, and its next event is still seen. */
	if (th->why == BT_TS_GROUP)
		return restarted(th, bt_thread_restart(th, PTRACE_LISTEN, 0),
				 BT_TH_LISTENING);
	if (th->stepping)
		return thread_step(t, th);
	return thread_resume_plain(t, th);
}

/*
 * Step @th over the breakpoint it stopped at: the int3 lifted in its
 * process's memory (a followed child's is its own copy), one step of @th
 * alone, the int3 back.  What that step reports is collected quietly.
 */
int bt_thread_step_over(struct bt_target *t, struct bt_thread *th)
{
	struct bt_break *b = bt_break_at(t, th->tgid ? th->tgid : t->pid,
					 th->at_break);
	struct bt_aspace *as = bt_target_aspace(t, th->tgid);
	int sig = th->sig, status, ret, lifted;
	pid_t who = 0;

	th->at_break = 0;
	if (!b)
		return 0;
	if (!as)
		return -bte_nomem;
	/* Not in this memory (set after the fork): nothing to lift. */
	ret = bt_aspace_lift(as, b->addr);
	if (ret < 0 && ret != -bte_noent)
		return ret;
	lifted = ret == 0;
	th->sig = 0;
	if (t->ops->step)
		ret = t->ops->step(t, th, sig);
	else
		ret = bt_thread_restart(th, PTRACE_SINGLESTEP, sig);
	if (ret == 0) {
		th->state = BT_TH_RUNNING;
		while ((ret = bt_target_wait(t, th->tid, &who, &status)) == 0)
			;
		if (ret > 0)
			ret = bt_event_collect(t, who, status);
	}
	/* An exec meanwhile emptied the table: then nothing goes back. */
	as = bt_target_aspace(t, th->tgid);
	if (lifted && as)
		bt_aspace_unlift(as, b->addr);
	return ret < 0 ? ret : 0;
}

/*
 * Tests: BTRACE_TEST_SYSCALL_KILL=N kills the process (SIGKILL) as the
 * Nth system call run for the backend in a thread other than its
 * process's first begins: the end of a process that another thread's
 * exit_group brings while one of ours is under way, at a place chosen.
 */
static void test_kill(struct bt_target *t, struct bt_thread *th)
{
	static long left = -1;
	pid_t tgid = bt_thread_tgid(t, th);

	if (left < 0) {
		const char *s = getenv("BTRACE_TEST_SYSCALL_KILL");

		left = s && *s ? atol(s) : 0;
	}
	if (th->tid != tgid && left > 0 && --left == 0)
		kill(tgid, SIGKILL);
}

/*
 * One single step of stopped thread @th, waited for here.  Returns 0 when
 * it trapped (its siginfo in *@si), the signal number when another signal
 * (or a SIGTRAP sent, not the kernel's) stopped it first (dequeued and not
 * delivered: the caller decides), or
 * -bte_exited if it ended (the stop loop took the report, as in
 * bt_thread_syscall).  Event stops on the way are stepped past.
 */
int bt_thread_step(struct bt_target *t, struct bt_thread *th, siginfo_t *si)
{
	int status, ret, i;
	pid_t who;

	/*
	 * A PTRACE_INTERRUPT still outstanding (the thread stopped for
	 * something else first) stops it before it runs anything: that
	 * stop is taken here, and the step issued again.
	 */
	for (i = 0; i < 16; i++) {
		ret = bt_thread_restart(th, PTRACE_SINGLESTEP, 0);
		if (ret < 0)
			return bt_fail(bte_exited, bt_errno(),
				       "ptrace(SINGLESTEP, %d)", th->tid);
		while ((ret = bt_target_wait(t, th->tid, &who, &status)) == 0)
			;
		if (ret < 0)
			return ret;
		t->stats.stops++;
		if (!WIFSTOPPED(status) ||
		    (status >> 16) == PTRACE_EVENT_EXIT) {
			bt_event_collect(t, th->tid, status);
			return bt_fail(bte_exited, ESRCH, "thread %d ended",
				       th->tid);
		}
		if (status >> 16) {
			if ((status >> 16) == PTRACE_EVENT_STOP)
				th->interrupting = 0;
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, th->tid, 0, si) < 0)
			memset(si, 0, sizeof(*si));
		/* a trap of the kernel's (si_code > 0), not one sent */
		if (WSTOPSIG(status) == SIGTRAP && si->si_code > 0)
			return 0;
		return WSTOPSIG(status);
	}
	return bt_fail(bte_internal, 0, "step of %d did not complete", th->tid);
}

int bt_thread_syscall(struct bt_target *t, struct bt_thread *th,
		      uint64_t insn, long nr, const uint64_t args[6],
		      int64_t *result)
{
	struct user_regs_struct saved, r;
	struct bt_resend resend;
	int i, ret = 0, sig;

	bt_resend_init(&resend);
	if (th->interrupting)
		return bt_fail(bte_busy, 0, "thread %d is being interrupted",
			       th->tid);
	ret = bt_thread_regs(th, &saved);
	if (ret < 0)
		return ret;
	r = saved;
	r.rip = insn;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &r) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)", th->tid);
	test_kill(t, th);
	/* Bounded: each round is a stop of this thread alone. */
	for (i = 0; i < 64; i++) {
		siginfo_t si;

		sig = bt_thread_step(t, th, &si);
		if (sig == -bte_exited)
			return sig;	/* dying: the stop loop took the report */
		if (sig < 0) {
			ret = sig;
			goto out;
		}
		bt_resend_add(&resend, sig, &si);
		if (ptrace(PTRACE_GETREGS, th->tid, 0, &r) == 0 &&
		    r.rip == insn + 2) {
			*result = (int64_t)r.rax;
			goto out;
		}
	}
	ret = bt_fail(bte_internal, 0, "syscall %ld in %d did not complete",
		      nr, th->tid);
out:
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	/* Signals that came meanwhile are judged at their next stop. */
	bt_resend_flush(&resend, bt_thread_tgid(t, th), th->tid);
	return ret;
}

void bt_resend_init(struct bt_resend *r)
{
	r->mask = 0;
	r->nmore = 0;
}

void bt_resend_add(struct bt_resend *r, int sig, const siginfo_t *si)
{
	if (sig <= 0 || sig > 64)
		return;
	if (!(r->mask & (1ull << (sig - 1)))) {
		r->mask |= 1ull << (sig - 1);
		r->si[sig - 1] = *si;
	} else if (sig >= 32 && r->nmore < BT_RESEND_MORE) {
		r->more[r->nmore] = *si;	/* real-time: queued again */
		r->more[r->nmore++].si_signo = sig;
	}			/* a standard one queued twice is one */
}

static void resend_one(pid_t tgid, pid_t tid, int sig, siginfo_t *si)
{
	if (si->si_signo == sig && si->si_code < 0 && si->si_code != SI_TKILL &&
	    syscall(SYS_rt_tgsigqueueinfo, tgid, tid, sig, si) == 0)
		return;
	syscall(SYS_tgkill, tgid, tid, sig);
}

void bt_resend_flush(struct bt_resend *r, pid_t tgid, pid_t tid)
{
	unsigned i;
	int sig;

	for (sig = 1; sig <= 64; sig++) {
		if (!(r->mask & (1ull << (sig - 1))))
			continue;
		resend_one(tgid, tid, sig, &r->si[sig - 1]);
		for (i = 0; i < r->nmore; i++)
			if (r->more[i].si_signo == sig)
				resend_one(tgid, tid, sig, &r->more[i]);
	}
	bt_resend_init(r);
}

int bt_thread_event_out(struct bt_target *t, struct bt_thread *th)
{
	siginfo_t si;
	pid_t who = 0;
	int status, ret;

	/* not a vfork's: its parent waits in the call for a child that is
	 * stopped, traced */
	if (th->state != BT_TH_STOPPED || th->why != BT_TS_EVENT ||
	    !th->interrupting ||
	    (th->event != PTRACE_EVENT_CLONE && th->event != PTRACE_EVENT_FORK))
		return -bte_busy;
	/* a step: if the interrupt is no longer there, its trap at the
	 * call's end stops it as soon */
	ret = bt_thread_restart(th, PTRACE_SINGLESTEP, 0);
	if (ret < 0)
		return ret;
	while ((ret = bt_target_wait(t, th->tid, &who, &status)) == 0)
		;
	if (ret < 0)
		return ret;
	t->stats.stops++;
	if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP &&
	    WSTOPSIG(status) == SIGTRAP) {	/* not a group stop */
		th->why = BT_TS_INTERRUPT;
		th->interrupting = 0;
		return 0;
	}
	if (WIFSTOPPED(status) && !(status >> 16) &&
	    WSTOPSIG(status) == SIGTRAP &&
	    ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) == 0 && si.si_code > 0) {
		th->why = BT_TS_TRAP;	/* ours: its step */
		th->interrupting = 0;
		return 0;
	}
	ret = bt_event_collect(t, th->tid, status);
	return ret < 0 ? ret : -bte_busy;
}

static int threads_pending(const struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		const struct bt_thread *th = t->threads[i];

		if (th->state == BT_TH_LISTENING ||
		    (th->state == BT_TH_RUNNING && !th->exiting))
			return 1;
	}
	return 0;
}

/*
 * A thread stopped by PTRACE_INTERRUPT may have the SIGTRAP of a step that
 * completed just before still queued (job control traps come before
 * signals).  Left there it would reach the program after a detach: let it
 * come out now, which stops again before any instruction runs.
 */
static int flush_traps(struct bt_target *t)
{
	int status, ret;
	size_t i;
	pid_t who = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->state != BT_TH_STOPPED || th->why != BT_TS_INTERRUPT ||
		    !(bt_proc_sigmask(th->tid, 0, "SigPnd") &
		      (1ull << (SIGTRAP - 1))))
			continue;
		ret = thread_resume_plain(t, th);
		while (ret == 0 &&
		       (ret = bt_target_wait(t, th->tid, &who, &status)) == 0)
			;
		if (ret > 0)
			ret = bt_event_collect(t, who, status);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Bring every thread to a ptrace-stop.  What they report on the way is
 * collected, not acted on: signals wait for the next bt_target_cont().
 */
int bt_target_stop_all(struct bt_target *t)
{
	int status, ret;
	size_t i;
	pid_t who = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->fresh || th->exiting)
			continue;
		if (th->state == BT_TH_RUNNING || th->state == BT_TH_LISTENING)
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0)
				th->interrupting = 1;
	}
	while (threads_pending(t)) {
		ret = bt_target_wait(t, -1, &who, &status);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		ret = bt_event_collect(t, who, status);
		if (ret < 0)
			return ret;
	}
	return flush_traps(t);
}
