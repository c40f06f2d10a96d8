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

void gs_cmd_set_thread(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 2;
	pid_t tid;

	if ((pkt[1] != 'g' && pkt[1] != 'c') || gs_parse_tid(&p, &tid) < 0 ||
	    *p) {
		gs_reply_err(s, EINVAL);
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

void gs_cmd_thread_alive(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	pid_t tid;

	if (gs_parse_tid(&p, &tid) < 0 || *p || tid <= 0 ||
	    !gs_thread_exists(s, tid))
		gs_reply_err(s, ESRCH);
	else
		gs_reply_ok(s);
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

void gs_cmd_threads_first(struct gs_server *s, char *pkt)
{
	pid_t tids[GS_MAX_THREADS];
	size_t i, n = gs_thread_list(s, tids, GS_MAX_THREADS);

	if (!n) {
		gs_buf_adds(&s->reply, "l");
		return;
	}
	gs_buf_adds(&s->reply, "m");
	for (i = 0; i < n; i++) {
		if (i)
			gs_buf_adds(&s->reply, ",");
		gs_put_tid(s, &s->reply, tids[i]);
	}
}

void gs_cmd_threads_next(struct gs_server *s, char *pkt)
{
	gs_buf_adds(&s->reply, "l");
}

/* qAttached[:pid]: 1 attached, 0 launched; E01 for no such process. */
void gs_cmd_attached(struct gs_server *s, char *pkt)
{
	int launched = s->ops->launched ? s->ops->launched(s->ctx) : 0;
	const char *p = pkt + 9;

	if (s->ops == &gs_no_proc_ops || (*p && (*p != ':' || gs_other_pid(s, p + 1)))) {
		gs_reply_err(s, 1);
		return;
	}
	gs_buf_adds(&s->reply, launched ? "0" : "1");
}

