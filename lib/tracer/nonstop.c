// SPDX-License-Identifier: MIT
/*
 * Non-stop: each thread resumed and stopped on its own while the others
 * run or stay stopped, for a debugger in GDB's non-stop mode (target.h,
 * bt_target_ns_*).  The stop loop of loop.c stops every thread at every
 * stop; here a stop is one thread's, and waiting never blocks on threads
 * that run: bt_target_ns_poll() takes what waitpid has now (WNOHANG) for
 * each of the target's threads, asked by id (so that several targets of
 * one tracer keep their own), and acts on it as the stop loop does
 * (bt_event_read(), bt_event_dispatch(), bt_thread_resume()).
 *
 * A thread is stopped on request with PTRACE_INTERRUPT and waited for
 * alone (waitpid on its id), so that the request is answered before the
 * caller goes on.  What that wait meets first (a breakpoint, a signal) is
 * a stop like any other: kept in a queue that bt_target_ns_poll() hands
 * out first.  Pausing (every running thread stopped for a moment, as
 * gdbserver does around memory writes) uses the same wait.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "backend/backend.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

struct bt_ns {
	struct bt_stop *queue;	/* stops met on the way, oldest first */
	size_t nqueue, capqueue;
	pid_t *paused;		/* stopped by bt_target_ns_pause() */
	size_t npaused, cappaused;
};

void bt_ns_free(struct bt_ns *ns)
{
	if (!ns)
		return;
	free(ns->queue);
	free(ns->paused);
	free(ns);
}

static struct bt_ns *ns_of(struct bt_target *t)
{
	if (!t->ns)
		t->ns = calloc(1, sizeof(*t->ns));
	if (!t->ns)
		bt_fail(bte_nomem, ENOMEM, "non-stop state");
	return t->ns;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, ncap * size);
	if (!p)
		return bt_fail(bte_nomem, ENOMEM, "non-stop state");
	*arr = p;
	*cap = ncap;
	return 0;
}

static int queue_push(struct bt_target *t, const struct bt_stop *stop)
{
	struct bt_ns *ns = ns_of(t);

	if (!ns || grow((void **)&ns->queue, &ns->capqueue, ns->nqueue,
			sizeof(*ns->queue)) < 0)
		return -bte_nomem;
	ns->queue[ns->nqueue++] = *stop;
	return 0;
}

static int queue_pop(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_ns *ns = t->ns;

	if (!ns || !ns->nqueue)
		return 0;
	*stop = ns->queue[0];
	memmove(ns->queue, ns->queue + 1, --ns->nqueue * sizeof(*ns->queue));
	return 1;
}

/*
 * A stop of one thread is reported: the backend's record of it brought up
 * to date and its registers the program's own (the all-stop loop does
 * this for every thread through the backend's stopped()).
 */
static void reported(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th = bt_thread_find(t, stop->tid);

	if (th && th->state == BT_TH_STOPPED) {
		th->stepping = 0;
		if (t->ops->sync)
			t->ops->sync(t, th);
		if (stop->reason != BT_STOP_EXIT &&
		    stop->reason != BT_STOP_KILLED &&
		    stop->reason != BT_STOP_BREAK)
			bt_stop_fill_pc(th, stop);
	}
	t->last = *stop;
}

/*
 * Act on waitpid's @status for @who as the stop loop does, except that
 * thread @halting (0: none), interrupted, stays at its interrupt stop.
 * Returns BT_OUT_REPORT with *@stop filled, BT_OUT_RESUME when the thread
 * went on, BT_OUT_HOLD when it stays stopped unreported (or ended), or < 0.
 */
static int ns_event(struct bt_target *t, pid_t who, int status,
		    struct bt_stop *stop, pid_t halting)
{
	struct bt_thread *th;
	struct bt_event ev;
	int ret;

	memset(stop, 0, sizeof(*stop));
	ret = bt_event_read(t, who, status, &ev);
	if (ret == 0)
		ret = bt_event_dispatch(t, &ev, stop);
	if (ret < 0)
		return ret;
	if (ret == BT_OUT_REPORT) {
		reported(t, stop);
		return ret;
	}
	if (ret != BT_OUT_RESUME)
		return BT_OUT_HOLD;
	/* who, not ev.th: an exec gave the id to its thread */
	th = bt_thread_find(t, who);
	if (!th || (ev.kind == BT_EV_INTERRUPT && who == halting))
		return BT_OUT_HOLD;
	ret = bt_thread_resume(t, th);
	return ret < 0 ? ret : BT_OUT_RESUME;
}

/*
 * Wait for thread @tid, interrupted, to stop.  Returns 1 when it stopped
 * for the interrupt (it stays stopped, nothing to report), 0 when it
 * stopped with a stop to report (queued) or ended, < 0 on failure.
 */
static int halt_wait(struct bt_target *t, pid_t tid)
{
	struct bt_thread *th;
	struct bt_stop stop;
	int status, ret;
	pid_t who = 0;

	for (;;) {
		ret = bt_target_wait(t, tid, &who, &status);
		if (ret == 0)
			continue;
		if (ret < 0)	/* not there to wait for: it ended */
			return bt_errno() == ECHILD ? 0 : ret;
		ret = ns_event(t, who, status, &stop, tid);
		if (ret < 0)
			return ret;
		if (ret == BT_OUT_REPORT)
			return queue_push(t, &stop);
		th = bt_thread_find(t, tid);
		if (!th)
			return 0;
		if (ret == BT_OUT_RESUME || th->state != BT_TH_STOPPED)
			continue;
		/* held at its exit, waiting for the others: no interrupt */
		if (th->why != BT_TS_INTERRUPT)
			return 0;
		if (t->ops->sync)
			t->ops->sync(t, th);
		return 1;
	}
}

/* Interrupt running thread @th and wait for it; as halt_wait(). */
static int halt(struct bt_target *t, struct bt_thread *th)
{
	if (th->state != BT_TH_RUNNING || th->exiting)
		return 0;
	if (!th->fresh) {
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			return 0;	/* gone meanwhile: waitpid says so */
		th->interrupting = 1;
	}
	return halt_wait(t, th->tid);
}

int bt_target_ns_stop(struct bt_target *t, pid_t tid)
{
	struct bt_stop stop;
	struct bt_thread *th;
	size_t i;
	int ret;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_ns_stop(NULL)");
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	if (tid && !bt_thread_find(t, tid))
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		if ((tid && th->tid != tid) || th->state != BT_TH_RUNNING)
			continue;
		ret = halt(t, th);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		memset(&stop, 0, sizeof(stop));
		stop.reason = BT_STOP_INTERRUPT;
		bt_stop_fill_pc(th, &stop);
		t->last = stop;
		ret = queue_push(t, &stop);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int bt_target_ns_pause(struct bt_target *t)
{
	struct bt_thread *th;
	struct bt_ns *ns;
	size_t i;
	int ret;

	if (!t || !t->traced || t->gone)
		return 0;
	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		/* a new thread waits at its first stop before it runs anything */
		if (th->state != BT_TH_RUNNING || th->exiting || th->fresh)
			continue;
		ns = ns_of(t);
		if (!ns || grow((void **)&ns->paused, &ns->cappaused,
				ns->npaused, sizeof(pid_t)) < 0)
			return -bte_nomem;
		ret = halt(t, th);
		if (ret < 0)
			return ret;
		if (ret == 1)
			ns->paused[ns->npaused++] = th->tid;
	}
	return 0;
}

int bt_target_ns_unpause(struct bt_target *t)
{
	struct bt_thread *th;
	size_t i;
	int ret = 0, r;

	if (!t || !t->ns)
		return 0;
	for (i = 0; i < t->ns->npaused; i++) {
		th = bt_thread_find(t, t->ns->paused[i]);
		if (!th || th->state != BT_TH_STOPPED || !t->traced)
			continue;
		r = bt_thread_resume(t, th);
		if (r < 0 && !ret)
			ret = r;
	}
	t->ns->npaused = 0;
	return ret;
}

/*
 * Step @th over the breakpoint it stopped at, the other threads paused
 * (the int3 is out while it steps).  Returns 1 when that step was the
 * one asked for and completed (a stop is queued), 0, or < 0.
 */
static int ns_step_over(struct bt_target *t, struct bt_thread *th)
{
	int stepping = th->stepping, ret;
	struct bt_stop stop;

	ret = bt_target_ns_pause(t);
	if (ret == 0)
		ret = bt_thread_step_over(t, th);
	if (ret == 0 && stepping && !th->stepping &&
	    th->state == BT_TH_STOPPED && th->why == BT_TS_TRAP) {
		memset(&stop, 0, sizeof(stop));
		stop.reason = BT_STOP_STEP;
		bt_stop_fill_pc(th, &stop);
		reported(t, &stop);
		ret = queue_push(t, &stop);
		if (ret == 0)
			ret = 1;
	}
	bt_target_ns_unpause(t);
	return ret;
}

/* Stopped @th goes on as @a says (CONT or STEP, with its signal). */
static int ns_resume_one(struct bt_target *t, struct bt_thread *th,
			 const struct bt_resume *a)
{
	int ret;

	ret = bt_thread_resume_signal(t, th, a->signal);
	if (ret < 0)
		return ret;
	th->hold = 0;
	th->stepping = a->action == BT_RESUME_STEP;
	if (th->at_break) {
		ret = ns_step_over(t, th);
		if (ret != 0 || th->state != BT_TH_STOPPED)
			return ret < 0 ? ret : 0;
	}
	return bt_thread_resume(t, th);
}

static const struct bt_resume *action_of(const struct bt_resume *r, size_t n,
					 pid_t tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].tid == tid || r[i].tid == 0)
			return &r[i];
	return NULL;
}

int bt_target_ns_resume(struct bt_target *t, const struct bt_resume *r,
			size_t n)
{
	const struct bt_resume *a;
	struct bt_thread *th;
	size_t i;
	int ret;

	if (!t || (!r && n))
		return bt_fail(bte_invalid, 0, "bt_target_ns_resume(NULL)");
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	/* the table grows as threads start: walk it by index */
	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		a = action_of(r, n, th->tid);
		if (!a || th->state == BT_TH_GONE || th->parked)
			continue;
		if (a->action == BT_RESUME_STOP) {
			ret = th->state == BT_TH_RUNNING ?
				      bt_target_ns_stop(t, th->tid) : 0;
		} else if (th->state == BT_TH_STOPPED) {
			ret = ns_resume_one(t, th, a);
		} else {
			ret = 0;	/* running already */
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * What waitpid has now for one of the target's own threads, each asked
 * by its id: another target of the same tracer (GDB's inferiors) keeps
 * its own.  A thread stopped here may still report (killed by another's
 * exit_group); a new thread is asked once its parent's event made it
 * known.  Returns 1 with *@who and *@status, 0 if none has anything.
 */
static int poll_own(struct bt_target *t, pid_t *who, int *status)
{
	struct bt_thread *th;
	size_t i;
	pid_t r;

	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		if (th->state == BT_TH_GONE || th->parked || th->tid <= 0)
			continue;
		do
			r = waitpid(th->tid, status, __WALL | WNOHANG);
		while (r < 0 && errno == EINTR);
		if (r == th->tid) {
			*who = r;
			return 1;
		}
	}
	return 0;
}

int bt_target_ns_poll(struct bt_target *t, struct bt_stop *stop)
{
	int status, ret;
	pid_t who;

	if (!t || !stop)
		return bt_fail(bte_invalid, 0, "bt_target_ns_poll(NULL)");
	memset(stop, 0, sizeof(*stop));
	if (queue_pop(t, stop))
		return 1;
	while (t->traced && !t->gone) {
		if (!bt_target_alive(t))
			return bt_report_gone(t, 0, stop);
		if (!poll_own(t, &who, &status))
			return 0;
		ret = ns_event(t, who, status, stop, 0);
		if (ret < 0 || ret == BT_OUT_REPORT)
			return ret < 0 ? ret : 1;
	}
	return 0;
}

int bt_target_thread_state(const struct bt_target *t, pid_t tid)
{
	const struct bt_thread *th = t ? bt_thread_find(t, tid) : NULL;

	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	if (th->exiting && th->state != BT_TH_STOPPED)
		return BT_THREAD_ENDING;
	return th->state == BT_TH_STOPPED ? BT_THREAD_STOPPED :
					    BT_THREAD_RUNNING;
}
