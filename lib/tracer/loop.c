// SPDX-License-Identifier: MIT
/*
 * The stop loop: bt_target_cont() and bt_target_resume() resume what may
 * run, wait for the stop to report and stop everything again.
 *
 * All waiting is done with waitpid(-1, __WALL): threads are driven
 * concurrently, so a thread blocked in a syscall waiting for another one
 * does not block the trace.  The backend decides how each thread resumes.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* Stops collected while stopping everything, judged now. */
static int cont_pending(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th;
	size_t i;
	int ret;

	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		/* a thread held keeps what it has to report for later */
		if (th->state != BT_TH_STOPPED || th->hold)
			continue;
		if (th->at_break) {
			int stepping = th->stepping;

			ret = bt_thread_step_over(t, th);
			if (ret < 0)
				return ret;
			/* that instruction was the step asked for */
			if (stepping && !th->stepping &&
			    th->state == BT_TH_STOPPED && th->why == BT_TS_TRAP) {
				stop->reason = BT_STOP_STEP;
				bt_stop_fill_pc(th, stop);
				return 1;
			}
		}
		if (th->why == BT_TS_SIGNAL && th->sig && !th->sig_checked &&
		    bt_judge_signal(t, th, stop))
			return 1;
	}
	if (!t->exit_reported && bt_target_alive(t) && bt_process_exiting(t)) {
		for (i = 0; i < t->nthreads; i++)
			if (t->threads[i]->state == BT_TH_STOPPED &&
			    t->threads[i]->why == BT_TS_EXIT)
				return bt_report_exit(t, t->threads[i], stop);
	}
	return 0;
}

static int cont_resume_all(struct bt_target *t)
{
	size_t i;
	int ret;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		/* Ctrl-C stopped it; going on means the program goes on. */
		if (!t->planned && th->sig == SIGINT &&
		    t->last.reason == BT_STOP_INTERRUPT &&
		    t->last.tid == th->tid)
			th->sig = 0;
		/* exit_group's caller holds until the others are gone. */
		if (th->why == BT_TS_EXIT && th->tid == t->exit_tid &&
		    !t->exit_reported)
			continue;
		ret = bt_thread_resume(t, th);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int cont_loop(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th;
	struct bt_event ev;
	int status, ret;
	pid_t who = 0;

	for (;;) {
		if (t->interrupt) {
			t->interrupt = 0;
			stop->reason = BT_STOP_INTERRUPT;
			return 1;
		}
		ret = bt_target_wait(t, -1, &who, &status);
		if (ret <= 0) {
			if (ret < 0 && !bt_target_alive(t))
				return bt_report_gone(t, who, stop);
			if (ret < 0)
				return ret;
			continue;
		}
		ret = bt_event_read(t, who, status, &ev);
		if (ret == 0)
			ret = bt_event_dispatch(t, &ev, stop);
		if (ret < 0)
			return ret;
		if (ret == BT_OUT_REPORT)
			return 1;
		if (ret == BT_OUT_RESUME) {
			/* who, not ev.th: an exec gave the id to its thread */
			th = bt_thread_find(t, who);
			if (th) {
				ret = bt_thread_resume(t, th);
				if (ret < 0)
					return ret;
			}
		}
		if (t->gone)
			return 1;
	}
}

/* One run: resume what may run, wait for the stop, stop everything. */
static int target_run(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th;
	int ret;

	ret = cont_pending(t, stop);
	if (ret == 0)
		ret = cont_resume_all(t);
	if (ret == 0)
		ret = cont_loop(t, stop);
	if (ret < 0)
		return ret;
	if (!t->gone) {
		ret = bt_target_stop_all(t);
		if (ret < 0)
			return ret;
		if (t->ops->stopped)
			t->ops->stopped(t);
	}
	/*
	 * An interrupt asked for while this call ran is answered by the stop
	 * it returns, whatever its reason: latched, it would make the next
	 * call stop at once.  One Ctrl-C also comes both ways (btrace's and
	 * the program's SIGINT); this answers both.
	 */
	t->interrupt = 0;
	if (stop->reason == BT_STOP_INTERRUPT && !stop->signal) {
		th = bt_target_main_thread(t);
		if (th)
			bt_stop_fill_pc(th, stop);
	}
	t->last = *stop;
	return 0;
}

int bt_target_cont(struct bt_target *t, struct bt_stop *stop)
{
	if (!t || !stop)
		return bt_fail(bte_invalid, 0, "bt_target_cont(NULL)");
	memset(stop, 0, sizeof(*stop));
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	return target_run(t, stop);
}

void bt_target_stop_signals(struct bt_target *t, uint64_t mask)
{
	if (t)
		t->stop_sigs = mask;
}

static const struct bt_resume *resume_find(const struct bt_resume *r,
					   size_t n, pid_t tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].tid == tid || r[i].tid == 0)
			return &r[i];
	return NULL;
}

/*
 * Stopped @th goes on with @sig (0: none), the debugger's choice: its
 * siginfo kept only for the signal it stopped with, and a signal that
 * runs a handler announced to the backend.  0 or -bte_invalid.
 */
int bt_thread_resume_signal(struct bt_target *t, struct bt_thread *th,
			    int sig)
{
	if (sig < 0 || sig >= NSIG)
		return bt_fail(bte_invalid, 0, "bad signal %d", sig);
	if (sig != th->sig)
		memset(&th->si, 0, sizeof(th->si));
	th->sig = sig;
	th->sig_checked = sig != 0;
	if (sig && th->why != BT_TS_EXIT &&
	    bt_sig_fate(t, th, sig, &th->si) == BT_SIG_HANDLED &&
	    t->ops->signal)
		t->ops->signal(t, th, sig);
	return 0;
}

/*
 * Each thread's part in this run.  A signal reported before is replaced
 * by the one the caller gives; one not judged yet stays, to be reported
 * first.  A signal that runs a handler is announced to the backend, as
 * bt_judge_signal() does for bt_target_cont().
 */
static int resume_plan(struct bt_target *t, const struct bt_resume *r,
		       size_t n)
{
	size_t i, runs = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];
		const struct bt_resume *a = resume_find(r, n, th->tid);

		th->stepping = 0;
		th->hold = !a || a->action == BT_RESUME_STOP;
		if (th->state != BT_TH_STOPPED || th->hold)
			continue;
		runs++;
		th->stepping = a->action == BT_RESUME_STEP;
		if (th->sig && !th->sig_checked)
			continue;
		if (bt_thread_resume_signal(t, th, a->signal) < 0)
			return -bte_invalid;
	}
	return runs ? 0 : bt_fail(bte_invalid, 0, "no thread to resume");
}

static void resume_unplan(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		t->threads[i]->hold = t->threads[i]->stepping = 0;
	t->planned = 0;
}

int bt_target_resume(struct bt_target *t, const struct bt_resume *r, size_t n,
		     struct bt_stop *stop)
{
	int ret;

	if (!t || !stop || (!r && n))
		return bt_fail(bte_invalid, 0, "bt_target_resume(NULL)");
	memset(stop, 0, sizeof(*stop));
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	ret = resume_plan(t, r, n);
	if (ret == 0) {
		t->planned = 1;
		ret = target_run(t, stop);
	}
	resume_unplan(t);
	return ret;
}

void bt_target_interrupt(struct bt_target *t)
{
	int saved = errno;

	if (!t)
		return;
	t->interrupt = 1;
	/*
	 * Wake a waitpid blocked on threads running free.  Only the tracer
	 * thread may do this; from elsewhere the flag is seen at the next stop.
	 */
	if (syscall(SYS_gettid) == t->tracer)
		ptrace(PTRACE_INTERRUPT, t->pid, 0, 0);
	errno = saved;
}
