// SPDX-License-Identifier: MIT
/*
 * Thread packets: H sets the general or the continue thread, T asks if
 * one lives, qC, qfThreadInfo/qsThreadInfo list them, qAttached
 * (cmds.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

/* H: a thread of another process makes that process the one served. */
void gs_cmd_set_thread(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 2;
	pid_t pid, tid;

	if ((pkt[1] != 'g' && pkt[1] != 'c') ||
	    gs_parse_ptid(&p, &pid, &tid) < 0 || *p) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (gs_proc_switch(s, pid) < 0) {
		gs_reply_err(s, ESRCH);
		return;
	}
	if (tid > 0 && !gs_thread_exists(s, tid)) {
		gs_reply_err(s, ESRCH);
		return;
	}
	if (pkt[1] == 'g')
		s->gthread = tid;
	else
		s->cthread = tid;
	gs_reply_ok(s);
}

/* T: asked of the thread's process; the one served stays. */
void gs_cmd_thread_alive(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	pid_t pid, tid, served = gs_proc_pid(s);
	int alive;

	if (gs_parse_ptid(&p, &pid, &tid) < 0 || *p || tid <= 0 ||
	    gs_proc_switch(s, pid) < 0) {
		gs_reply_err(s, ESRCH);
		return;
	}
	alive = gs_thread_exists(s, tid);
	gs_proc_switch(s, served);
	if (alive)
		gs_reply_ok(s);
	else
		gs_reply_err(s, ESRCH);
}

void gs_cmd_current(struct gs_server *s, char *pkt)
{
	pid_t tid = gs_current(s);

	if (!tid) {
		gs_reply_err(s, ESRCH);
		return;
	}
	gs_buf_adds(&s->reply, "QC");
	gs_put_tid(s, &s->reply, tid);
}

/* The threads of the process served, appended to the list in s->reply. */
static void list_threads(struct gs_server *s, void *arg)
{
	pid_t tids[GS_MAX_THREADS];
	size_t i, n = gs_thread_list(s, tids, GS_MAX_THREADS);

	for (i = 0; i < n; i++) {
		gs_buf_adds(&s->reply, s->reply.len ? "," : "m");
		gs_put_tid(s, &s->reply, tids[i]);
	}
}

/* Every process's threads. */
void gs_cmd_threads_first(struct gs_server *s, char *pkt)
{
	gs_procs_each(s, list_threads, NULL);
	if (!s->reply.len)
		gs_buf_adds(&s->reply, "l");
}

void gs_cmd_threads_next(struct gs_server *s, char *pkt)
{
	gs_buf_adds(&s->reply, "l");
}

/* qAttached[:pid]: 1 attached, 0 launched; E01 for no such process. */
void gs_cmd_attached(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 9, *q = p + 1;
	pid_t served = gs_proc_pid(s);
	uint64_t pid = 0;
	int launched;

	if (*p && (*p != ':' || !gs_parse_hex(&q, &pid) || *q ||
		   pid > 0x7fffffff || gs_proc_switch(s, (pid_t)pid) < 0)) {
		gs_reply_err(s, 1);
		return;
	}
	launched = s->ops->launched ? s->ops->launched(s->ctx) : 0;
	if (s->ops == &gs_no_proc_ops || (*p && gs_other_pid(s, p + 1)))
		gs_reply_err(s, 1);
	else
		gs_buf_adds(&s->reply, launched ? "0" : "1");
	gs_proc_switch(s, served);
}

