// SPDX-License-Identifier: MIT
/*
 * Run control: vCont and the old c/C/s/S resume the process and reply
 * its next stop; k, vKill and D end it (cmds.h).  GDB's 0x03 while the
 * process runs interrupts it (gs_server_input()).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "btrace/error.h"
#include "cmds.h"

/*
 * The process ended (exit, or killed by its signal): let it go and
 * answer W or X.
 */
void gs_process_end(struct gs_server *s)
{
	int ws = 0, ret = -1;

	gs_procs_pause(s, 1);
	if (s->ops->finish)
		ret = s->ops->finish(s->ctx, &ws);
	gs_procs_pause(s, 0);
	if (ret == 0)
		s->wstatus = ws;
	else if (s->last.reason == BT_STOP_KILLED)
		s->wstatus = s->last.signal & 0x7f;
	else
		s->wstatus = (s->last.status & 0xff) << 8;
	s->gone = 1;
	gs_bt_forget(s);
}

/* ---- run control ---- */

/*
 * Has gdb asked to stop, in what it sent and nobody read yet?  On a
 * socket, a 0x03 or the end (or a reset) of the connection, seen without
 * reading it; on a pipe, which cannot be peeked, any byte (gdb sends
 * nothing else while the target runs).  Async-signal-safe.
 */
static int peer_stops(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char peek[64];
	ssize_t n, i;

	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	n = recv(fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)	/* a pipe (ENOTSOCK), a reset connection: stop */
		return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
	for (i = 0; i < n && peek[i] != 0x03; i++)
		;
	return n == 0 || i < n;
}

/* Is there input from gdb now (a 0x03, or the end of the connection)? */
static int input_waiting(struct gs_server *s)
{
	size_t i;

	for (i = s->conn.rpos; i < s->conn.rlen; i++)
		if (s->conn.rbuf[i] == 0x03)
			return 1;
	return peer_stops(s->conn.in);
}

static void run(struct gs_server *s, const struct bt_resume *r, size_t n)
{
	struct bt_stop stop;
	int ret;

	if (s->nonstop) {
		gs_ns_resume(s, r, n);
		return;
	}
	if (!gs_alive(s)) {
		gs_reply_err(s, ESRCH);
		return;
	}
	if (!s->ops->resume) {
		gs_buf_adds(&s->reply, "E.A saved trace does not run: replay it "
				       "(record btrace, reverse-step, record goto).");
		return;
	}
	s->running = 1;
	if (input_waiting(s) && s->ops->interrupt)
		s->ops->interrupt(s->ctx);
	ret = s->ops->resume(s->ctx, r, n, &stop);
	s->running = 0;
	if (ret < 0) {
		gs_reply_err(s, ret == -bte_invalid ? EINVAL : EIO);
		return;
	}
	s->last = stop;
	if (stop.reason == BT_STOP_EXIT || stop.reason == BT_STOP_KILLED)
		gs_process_end(s);
	gs_put_stop(s);
	if (s->gone)
		gs_proc_drop(s);	/* extended: the next run may come */
}

/*
 * SIGIO comes for more than a 0x03: a socket (TCP, or the socketpair of
 * GDB's "target remote | cmd") also signals when a large reply drains
 * and it becomes writable.
 */
void gs_server_input(struct gs_server *s)
{
	int saved = errno;

	if (s && s->running && s->ops->interrupt && peer_stops(s->conn.in))
		s->ops->interrupt(s->ctx);
	errno = saved;
}

void gs_server_quit(struct gs_server *s)
{
	int saved = errno;

	if (s) {
		s->conn.quit = 1;
		if (s->running && s->ops->interrupt)
			s->ops->interrupt(s->ctx);
	}
	errno = saved;
}

/*
 * One vCont action: "c", "C<sig>", "s", "S<sig>", "t" at *@p; *@pid is
 * the process its thread id names (0 if none).
 */
static int parse_action(const char **p, struct bt_resume *a, pid_t *pid)
{

	uint64_t sig = 0;
	char c = *(*p)++;

	memset(a, 0, sizeof(*a));
	*pid = 0;
	switch (c) {
	case 'c':
		a->action = BT_RESUME_CONT;
		break;
	case 's':
		a->action = BT_RESUME_STEP;
		break;
	case 't':
		a->action = BT_RESUME_STOP;
		break;
	case 'C':
	case 'S':
		a->action = c == 'C' ? BT_RESUME_CONT : BT_RESUME_STEP;
		if (!gs_parse_hex(p, &sig) || sig > 0xff)
			return -1;
		a->signal = gs_signal_from_gdb((int)sig);
		if (a->signal < 0)
			return -1;
		break;
	default:
		return -1;
	}
	if (**p == ':') {
		(*p)++;
		if (gs_parse_ptid(p, pid, &a->tid) < 0)
			return -1;
		if (a->tid == -1)
			a->tid = 0;
	}
	return 0;
}

void gs_cmd_vcont(struct gs_server *s, char *pkt)
{
	struct bt_resume acts[64];
	const char *p = pkt + 5;
	pid_t pids[64], pid = 0;
	size_t n = 0, i;

	while (*p == ';' && n < 64) {
		p++;
		if (parse_action(&p, &acts[n], &pids[n]) < 0) {
			gs_reply_err(s, EINVAL);
			return;
		}
		n++;
	}
	if (*p || !n) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (s->nonstop) {
		gs_ns_vcont(s, acts, pids, n);
		return;
	}
	/* all-stop: one process runs at a time, the one named */
	for (i = 0; i < n; i++) {
		if (pids[i] && pid && pids[i] != pid) {
			gs_reply_err(s, EINVAL);
			return;
		}
		pid = pids[i] ? pids[i] : pid;
	}
	/* the process named runs, and is the one served from now on */
	if (gs_proc_switch(s, pid) < 0) {
		gs_reply_err(s, ESRCH);
		return;
	}
	run(s, acts, n);
}

void gs_cmd_vcont_query(struct gs_server *s, char *pkt)
{
	gs_buf_adds(&s->reply, "vCont;c;C;s;S;t");
}

/* The old c, C, s, S: the Hc thread steps, everything continues. */
static void old_resume(struct gs_server *s, char *pkt, int step)
{
	struct bt_resume acts[2];
	const char *p = pkt + 1;
	uint64_t sig = 0;
	pid_t tid;

	memset(acts, 0, sizeof(acts));
	if (*pkt == 'C' || *pkt == 'S') {
		if (!gs_parse_hex(&p, &sig) || sig > 0xff ||
		    gs_signal_from_gdb((int)sig) < 0) {
			gs_reply_err(s, EINVAL);
			return;
		}
	}
	tid = s->cthread > 0 ? s->cthread : gs_current(s);
	acts[0].tid = step ? tid : 0;
	acts[0].action = step ? BT_RESUME_STEP : BT_RESUME_CONT;
	acts[0].signal = gs_signal_from_gdb((int)sig);
	acts[1].action = BT_RESUME_STOP;
	run(s, acts, step ? 2 : 1);
}

void gs_cmd_cont(struct gs_server *s, char *pkt)
{
	old_resume(s, pkt, 0);
}

void gs_cmd_step(struct gs_server *s, char *pkt)
{
	old_resume(s, pkt, 1);
}

void gs_cmd_stop_reason(struct gs_server *s, char *pkt)
{
	if (s->nonstop)
		gs_ns_status(s);
	else
		gs_put_stop(s);
}



/* ---- ending ---- */

/*
 * Extended-remote goes on without the process (SIGKILL is its end, as
 * gdbserver reports it); otherwise the session is over.
 */
/* The process ";<pid>" at @p names (none: the one served) is served. */
static int proc_named(struct gs_server *s, const char *p)
{
	uint64_t pid;

	if (!*p)
		return 0;
	p += *p == ';';
	if (!gs_parse_hex(&p, &pid) || *p || pid > 0x7fffffff)
		return -1;
	return gs_proc_switch(s, (pid_t)pid);
}

void gs_cmd_kill(struct gs_server *s, char *pkt)
{
	pid_t served = gs_proc_pid(s);

	if (*pkt == 'v' && s->extended &&
	    (proc_named(s, pkt + 5) < 0 || !gs_alive(s) || gs_other_pid(s, pkt + 5))) {
		gs_reply_err(s, ESRCH);
		return;
	}
	if (gs_alive(s) && s->ops->kill)
		s->ops->kill(s->ctx);
	if (!s->gone)
		s->wstatus = SIGKILL;
	s->gone = 1;
	if (*pkt == 'k')
		s->replying = 0;	/* gdb waits for no answer to k */
	else
		gs_reply_ok(s);
	if (s->extended) {
		gs_proc_drop(s);
		gs_proc_switch(s, served);
	} else {
		s->ended = GS_END_KILLED;
	}
}

void gs_cmd_detach(struct gs_server *s, char *pkt)
{
	pid_t served = gs_proc_pid(s);
	int ret;

	if ((s->extended && proc_named(s, pkt + 1) < 0) ||
	    gs_other_pid(s, pkt + 1)) {
		gs_reply_err(s, ESRCH);
		return;
	}
	gs_procs_pause(s, 1);
	ret = gs_alive(s) && s->ops->detach ? s->ops->detach(s->ctx) : 0;
	gs_procs_pause(s, 0);
	if (ret < 0) {
		gs_reply_err(s, EIO);
		return;
	}
	gs_reply_ok(s);
	if (!s->extended) {
		s->ended = GS_END_DETACHED;
		return;
	}
	if (!s->gone)
		s->wstatus = 0;	/* gdbserver's "W00" after a detach */
	s->gone = 1;
	gs_proc_drop(s);
	gs_proc_switch(s, served);
}

