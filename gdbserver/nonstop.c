// SPDX-License-Identifier: MIT
/*
 * Non-stop mode (QNonStop:1): every thread runs and stops on its own.
 * vCont answers OK at once; each stop is queued as its stop reply, the
 * oldest sent as a %Stop notification, and GDB takes the rest one by one
 * with vStopped until OK.  `?` queues a reply for every stopped thread.
 * Between packets the serve loop (gs_ns_wait()) takes the target's stops
 * (the ns_* ops, which never block) and sleeps in ppoll() on GDB's
 * connection, woken by SIGCHLD when a thread stops or ends.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"
#include "internal.h"

/* ---- the queue of stop replies ---- */

static struct gs_buf *nsq_push(struct gs_server *s)
{
	struct gs_buf *grown;
	size_t cap;

	if (s->nnsq == s->capnsq) {
		cap = s->capnsq ? s->capnsq * 2 : 8;
		grown = realloc(s->nsq, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		s->nsq = grown;
		s->capnsq = cap;
	}
	gs_buf_init(&s->nsq[s->nnsq]);
	return &s->nsq[s->nnsq++];
}

static void nsq_pop(struct gs_server *s)
{
	if (!s->nnsq)
		return;
	gs_buf_release(&s->nsq[0]);
	memmove(s->nsq, s->nsq + 1, --s->nnsq * sizeof(*s->nsq));
}

void gs_ns_release(struct gs_server *s)
{
	while (s->nnsq)
		nsq_pop(s);
	free(s->nsq);
	s->nsq = NULL;
	s->capnsq = 0;
	s->notif_out = 0;
}

/* The reply to send of the oldest stop not taken, into s->reply. */
static void reply_head(struct gs_server *s)
{
	gs_buf_add(&s->reply, s->nsq[0].data ? s->nsq[0].data : "",
		   s->nsq[0].len);
	s->notif_out = 1;
}

/*
 * A stop of the process served: its reply queued.  The process's end is
 * W or X, the process let go (drop_gone() hands it to the spawner).
 */
static void ns_take(struct gs_server *s, const struct bt_stop *st)
{
	struct gs_buf *b = nsq_push(s);

	s->last = *st;
	if (st->reason == BT_STOP_EXIT || st->reason == BT_STOP_KILLED) {
		gs_process_end(s);
		if (b)
			gs_put_exit(s, b);
	} else if (b) {
		gs_put_stop_of(s, b, st);
	}
}

/* The processes that ended are dropped (extended-remote: others stay). */
static void drop_gone(struct gs_server *s)
{
	pid_t served = gs_proc_pid(s), pid;
	size_t i;

	if (!s->spawner)
		return;
	if (s->gone && s->ops != &gs_no_proc_ops)
		gs_proc_drop(s);
	for (i = 0; i < s->nprocs; i++) {
		if (!s->procs[i].gone)
			continue;
		pid = s->procs[i].ops->pid ? s->procs[i].ops->pid(s->procs[i].ctx) : 0;
		if (gs_proc_switch(s, pid) < 0)
			break;
		gs_proc_drop(s);
		i = (size_t)-1;	/* the table moved: from the start */
	}
	gs_proc_switch(s, served);
}

/* ---- packets ---- */

static void on_sigchld(int sig)
{
}

/* QNonStop:1 and :0.  A saved trace runs nothing: all-stop only. */
void gs_cmd_nonstop(struct gs_server *s, char *pkt)
{
	struct sigaction sa = { .sa_handler = on_sigchld,
				.sa_flags = SA_RESTART };
	int can = s->ops->ns_resume || (s->ops == &gs_no_proc_ops && s->spawner);

	if (!strcmp(pkt, "QNonStop:0")) {
		s->nonstop = 0;
		gs_reply_ok(s);
	} else if (!strcmp(pkt, "QNonStop:1") && can) {
		/* SIGCHLD wakes gs_ns_wait()'s ppoll (it is blocked else) */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGCHLD, &sa, NULL);
		s->nonstop = 1;
		gs_reply_ok(s);
	} else {
		gs_reply_err(s, EINVAL);
	}
}

/* vStopped: GDB took the oldest reply; the next, or OK when none is left. */
void gs_cmd_vstopped(struct gs_server *s, char *pkt)
{
	if (!s->nonstop) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (s->notif_out)
		nsq_pop(s);
	if (s->nnsq) {
		reply_head(s);
		return;
	}
	s->notif_out = 0;
	gs_reply_ok(s);
}

/* The stop replies of the process served's stopped threads, queued. */
static void status_proc(struct gs_server *s, void *arg)
{
	pid_t tids[GS_MAX_THREADS];
	struct bt_stop st;
	struct gs_buf *b;
	size_t i, n = gs_thread_list(s, tids, GS_MAX_THREADS);

	for (i = 0; i < n; i++) {
		if (s->ops->thread_state &&
		    s->ops->thread_state(s->ctx, tids[i]) != BT_THREAD_STOPPED)
			continue;
		memset(&st, 0, sizeof(st));
		st.tid = tids[i];
		if (s->last.tid == tids[i])
			st = s->last;
		b = nsq_push(s);
		if (b)
			gs_put_stop_of(s, b, &st);
	}
}

/* ?: a reply for each stopped thread, the first now, the rest by vStopped. */
void gs_ns_status(struct gs_server *s)
{
	while (s->nnsq)
		nsq_pop(s);
	s->notif_out = 0;
	/* none stopped (no process yet, or its end told already): OK */
	gs_procs_each(s, status_proc, NULL);
	if (s->nnsq)
		reply_head(s);
	else
		gs_reply_ok(s);
}

struct ns_acts {
	const struct bt_resume *r;
	const pid_t *pids;	/* each action's process, 0: any */
	size_t n;
	int ret;
};

/* The actions for the process served (none named, or it), in order. */
static void resume_proc(struct gs_server *s, void *arg)
{
	struct ns_acts *a = arg;
	struct bt_resume mine[64];
	pid_t pid = gs_proc_pid(s);
	size_t i, k = 0;
	int ret;

	if (!gs_alive(s) || !s->ops->ns_resume)
		return;
	for (i = 0; i < a->n && k < 64; i++)
		if (!a->pids || !a->pids[i] || a->pids[i] == pid)
			mine[k++] = a->r[i];
	ret = k ? s->ops->ns_resume(s->ctx, mine, k) : 0;
	if (ret < 0 && !a->ret)
		a->ret = ret;
}

static void ns_resume_all(struct gs_server *s, struct ns_acts *a)
{
	if (!gs_alive(s)) {
		gs_reply_err(s, ESRCH);
		return;
	}
	if (!s->ops->ns_resume) {
		gs_reply_err(s, EINVAL);
		return;
	}
	gs_procs_each(s, resume_proc, a);
	if (a->ret < 0) {
		gs_reply_err(s, a->ret == -bte_invalid ? EINVAL : EIO);
		return;
	}
	gs_reply_ok(s);
}

/* The old c, s... in non-stop: the actions are the process served's. */
void gs_ns_resume(struct gs_server *s, const struct bt_resume *r, size_t n)
{
	pid_t pids[64];
	struct ns_acts a = { r, pids, n < 64 ? n : 64, 0 };
	size_t i;

	for (i = 0; i < a.n; i++)
		pids[i] = gs_proc_pid(s);
	ns_resume_all(s, &a);
}

/*
 * vCont in non-stop: each thread as its action says, an action naming a
 * process for that process's threads only; OK at once.
 */
void gs_ns_vcont(struct gs_server *s, const struct bt_resume *r,
		 const pid_t *pids, size_t n)
{
	struct ns_acts a = { r, pids, n, 0 };
	pid_t served = gs_proc_pid(s);
	size_t i;

	for (i = 0; i < n; i++) {
		if (pids[i] && gs_proc_switch(s, pids[i]) < 0) {
			gs_reply_err(s, ESRCH);
			return;
		}
		gs_proc_switch(s, served);
	}
	ns_resume_all(s, &a);
}

static void stop_proc(struct gs_server *s, void *arg)
{
	if (gs_alive(s) && s->ops->ns_stop && s->ops->ns_stop(s->ctx, 0) < 0)
		*(int *)arg = -1;
}

/* vCtrlC: the running threads stop; GDB is told of each (SIGINT-less). */
void gs_cmd_ctrlc(struct gs_server *s, char *pkt)
{
	int failed = 0;

	if (!gs_alive(s) || !s->ops->ns_stop) {
		gs_reply_err(s, ESRCH);
		return;
	}
	gs_procs_each(s, stop_proc, &failed);
	if (failed)
		gs_reply_err(s, EIO);
	else
		gs_reply_ok(s);
}

/* ---- between packets ---- */

/*
 * The target's stops, queued; the oldest goes out as %Stop when no
 * notification is out.  Returns 0, or < 0 if the connection failed.
 */
static void poll_proc(struct gs_server *s, void *arg)
{
	struct bt_stop st;

	while (gs_alive(s) && s->ops->ns_poll &&
	       s->ops->ns_poll(s->ctx, &st) > 0)
		ns_take(s, &st);
}

static int ns_service(struct gs_server *s)
{
	struct gs_buf note;
	int ret;

	gs_procs_each(s, poll_proc, NULL);
	drop_gone(s);
	if (s->notif_out || !s->nnsq)
		return 0;
	s->notif_out = 1;
	gs_buf_init(&note);
	gs_buf_adds(&note, "Stop:");
	gs_buf_add(&note, s->nsq[0].data ? s->nsq[0].data : "", s->nsq[0].len);
	ret = note.oom ? -bte_nomem :
			 gs_conn_notify(&s->conn, note.data, note.len);
	gs_buf_release(&note);
	return ret;
}

int gs_ns_wait(struct gs_server *s)
{
	struct pollfd pfd = { .fd = s->conn.in, .events = POLLIN };
	struct timespec tick = { 1, 0 };
	sigset_t chld, old;
	int ret, n, ready;

	if (!s->nonstop)
		return 0;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		/* blocked from the poll of the target to ppoll: no wake lost */
		sigprocmask(SIG_BLOCK, &chld, &old);
		ready = 0;
		ret = ns_service(s);
		if (ret == 0 && (gs_conn_pending(&s->conn) || s->conn.quit)) {
			ready = 1;
		} else if (ret == 0) {
			n = ppoll(&pfd, 1, gs_alive(s) ? &tick : NULL, &old);
			if (n > 0)
				ready = 1;
			else if (n < 0 && errno != EINTR)
				ret = bt_fail(bte_io, errno, "poll");
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (ret < 0 || ready)
			return ret;
	}
}

/*
 * GDB went away: the threads stop (the process waits stopped for the
 * next, or is let go), what they had to report is dropped.
 */
static void halt_proc(struct gs_server *s, void *arg)
{
	struct bt_stop st;

	if (!gs_alive(s) || !s->ops->ns_stop)
		return;
	s->ops->ns_stop(s->ctx, 0);
	while (gs_alive(s) && s->ops->ns_poll(s->ctx, &st) > 0)
		if (st.reason == BT_STOP_EXIT || st.reason == BT_STOP_KILLED)
			ns_take(s, &st);
}

void gs_ns_disconnected(struct gs_server *s)
{
	if (s->nonstop) {
		gs_procs_each(s, halt_proc, NULL);
		drop_gone(s);
	}
	while (s->nnsq)
		nsq_pop(s);
	s->notif_out = 0;
	s->nonstop = 0;
}
