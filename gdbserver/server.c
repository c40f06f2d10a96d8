// SPDX-License-Identifier: MIT
/*
 * The remote protocol session: packets dispatched from one table to their
 * families (cmds.h), the server's life and its loop (gdbserver.h).  Every
 * packet gets an answer: a reply, an error ("Exx", "E.text"), or the empty reply
 * for what is not supported, whatever its bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

/* ---- dispatch ---- */

enum { EXACT = 0, PREFIX = 1 };

struct gs_cmd {
	const char *name;
	void (*fn)(struct gs_server *s, char *pkt);
	int match;
	const char *help;
};

static const struct gs_cmd commands[] = {
	{ "?", gs_cmd_stop_reason, EXACT, "why the target stopped" },
	{ "qSupported", gs_cmd_supported, PREFIX, "features" },
	{ "qXfer:", gs_cmd_xfer, PREFIX, "objects: features, threads, auxv, siginfo, "
	  "exec-file, libraries-svr4, btrace, btrace-conf" },
	{ "qC", gs_cmd_current, EXACT, "the current thread" },
	{ "qAttached", gs_cmd_attached, PREFIX, "attached or launched" },
	{ "qfThreadInfo", gs_cmd_threads_first, EXACT, "thread list" },
	{ "qsThreadInfo", gs_cmd_threads_next, EXACT, "thread list, more" },
	{ "qSymbol:", gs_cmd_ok, PREFIX, "no symbols wanted" },
	{ "qRcmd,", gs_cmd_rcmd, PREFIX, "monitor commands: help, save FILE, exit" },
	{ "QStartNoAckMode", gs_cmd_noack, EXACT, "acks off" },
	{ "QPassSignals:", gs_cmd_pass_signals, PREFIX, "signals not reported" },
	{ "QProgramSignals:", gs_cmd_ok, PREFIX, "all signals go to the program" },
	{ "QThreadEvents:", gs_cmd_ok, PREFIX, "no thread events" },
	{ "QNonStop:", gs_cmd_nonstop, PREFIX, "non-stop on, off" },
	{ "vStopped", gs_cmd_vstopped, EXACT, "non-stop: the next stop" },
	{ "vCtrlC", gs_cmd_ctrlc, EXACT, "non-stop: stop every thread" },
	{ "Qbtrace:", gs_cmd_btrace, PREFIX, "branch trace on, off" },
	{ "Qbtrace-conf:", gs_cmd_btrace, PREFIX, "branch trace buffer size" },
	{ "vCont?", gs_cmd_vcont_query, EXACT, "vCont actions" },
	{ "vCont;", gs_cmd_vcont, PREFIX, "resume threads" },
	{ "vKill;", gs_cmd_kill, PREFIX, "kill" },
	{ "vRun;", gs_cmd_run, PREFIX, "extended: run a program" },
	{ "vAttach;", gs_cmd_attach, PREFIX, "extended: attach to a process" },
	{ "!", gs_cmd_extended, EXACT, "extended-remote on" },
	{ "R", gs_cmd_restart, PREFIX, "extended: run the program again" },
	{ "vFile:", gs_cmd_hostio, PREFIX, "read the target's files" },
	{ "g", gs_cmd_read_regs, EXACT, "read registers" },
	{ "G", gs_cmd_write_regs, PREFIX, "write registers" },
	{ "p", gs_cmd_read_reg, PREFIX, "read a register" },
	{ "P", gs_cmd_write_reg, PREFIX, "write a register" },
	{ "m", gs_cmd_read_mem, PREFIX, "read memory" },
	{ "M", gs_cmd_write_mem, PREFIX, "write memory" },
	{ "Z", gs_cmd_break, PREFIX, "insert a breakpoint" },
	{ "z", gs_cmd_break, PREFIX, "remove a breakpoint" },
	{ "H", gs_cmd_set_thread, PREFIX, "set the thread" },
	{ "T", gs_cmd_thread_alive, PREFIX, "is the thread alive" },
	{ "c", gs_cmd_cont, PREFIX, "continue" },
	{ "C", gs_cmd_cont, PREFIX, "continue with a signal" },
	{ "s", gs_cmd_step, PREFIX, "step" },
	{ "S", gs_cmd_step, PREFIX, "step with a signal" },
	{ "k", gs_cmd_kill, EXACT, "kill" },
	{ "D", gs_cmd_detach, PREFIX, "detach" },
};

static const struct gs_cmd *cmd_find(const char *pkt)
{
	size_t i, n;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		n = strlen(commands[i].name);
		if (commands[i].match == EXACT ? !strcmp(pkt, commands[i].name) :
						 !strncmp(pkt, commands[i].name, n))
			return &commands[i];
	}
	return NULL;
}

int gs_server_handle(struct gs_server *s, char *pkt, size_t len,
		     const struct gs_buf **reply)
{
	const struct gs_cmd *c;

	gs_buf_reset(&s->reply);
	gs_buf_reset(&s->console);
	s->replying = 1;
	if (len && *pkt == 'X') {
		gs_cmd_write_bin(s, pkt, len);
	} else if (strlen(pkt) != len) {
		gs_reply_err(s, EINVAL);	/* a NUL inside a text packet */
	} else {
		c = cmd_find(pkt);
		if (c)
			c->fn(s, pkt);
		/* else: not supported, the empty reply */
	}
	if (s->reply.oom)
		gs_reply_err(s, ENOMEM);
	*reply = s->replying ? &s->reply : NULL;
	return s->ended != 0;
}

int gs_server_alloc(struct gs_server **out, const struct gs_target_ops *ops,
		    void *ctx, int in, int fd_out, const struct bt_stop *first)
{
	struct gs_server *s = calloc(1, sizeof(*s));
	struct gs_proc p = { 0 };

	if (!s)
		return -bte_nomem;
	gs_conn_init(&s->conn, in, fd_out);
	gs_buf_init(&s->reply);
	gs_buf_init(&s->console);
	gs_buf_init(&s->xfer);
	gs_hostio_init(s);
	p.ops = ops;
	p.ctx = ctx;
	if (first)
		p.first = *first;
	gs_proc_set(s, &p);
	*out = s;
	return 0;
}

void gs_server_free(struct gs_server *s)
{
	if (!s)
		return;
	gs_extended_release(s);
	gs_conn_release(&s->conn);
	gs_hostio_release(s);
	gs_ns_release(s);
	gs_buf_release(&s->reply);
	gs_buf_release(&s->console);
	gs_buf_release(&s->xfer);
	free(s->bt);
	free(s);
}

void gs_server_keep(struct gs_server *s)
{
	s->keep = 1;
}

/*
 * A new GDB negotiates afresh (gdbserver forgets the same at a
 * reconnection); the process, its stop and its recording stay.
 */
void gs_server_reconnect(struct gs_server *s, int in, int out)
{
	gs_conn_release(&s->conn);
	gs_conn_init(&s->conn, in, out);
	s->noack_after = 0;
	s->extended = 0;
	s->multiprocess = 0;
	s->swbreak = 0;
	s->xfer_key[0] = '\0';
	gs_hostio_release(s);
	gs_hostio_init(s);
}

/*
 * gdb is gone: kept for the next, or (gs_server_keep() not asked for,
 * monitor exit) a process it attached to runs on, one it started ends.
 * Without a process to come back to (not extended), the server ends, as
 * gdbserver does.
 */
static int disconnected(struct gs_server *s)
{
	gs_ns_disconnected(s);
	if (s->keep && !s->quit && (gs_alive(s) || s->extended))
		return GS_END_AWAIT;
	if (!gs_alive(s) || !s->ops->resume)
		return s->gone ? GS_END_EXITED : GS_END_DISCONNECTED;
	if (s->ops->launched && s->ops->launched(s->ctx)) {
		if (s->ops->kill)
			s->ops->kill(s->ctx);
	} else if (s->ops->detach) {
		s->ops->detach(s->ctx);
	}
	return GS_END_DISCONNECTED;
}

/* Monitor output goes to GDB's console as O packets before the reply. */
static int send_console(struct gs_server *s)
{
	struct gs_buf o;
	int ret;

	gs_buf_init(&o);
	gs_buf_adds(&o, "O");
	gs_buf_hex(&o, s->console.data, s->console.len);
	ret = o.oom ? -bte_nomem : gs_conn_send(&s->conn, o.data, o.len);
	gs_buf_release(&o);
	return ret;
}

int gs_serve(struct gs_server *s)
{
	const struct gs_buf *reply;
	int ev, ret;

	for (;;) {
		ret = gs_ns_wait(s);
		ev = ret < 0 ? ret : gs_conn_recv(&s->conn);
		if (ev <= 0) {
			/* a connection reset is GDB gone too */
			ret = disconnected(s);
			return ev < 0 && ret != GS_END_AWAIT ? ev : ret;
		}
		if (ev == GS_EV_INTERRUPT)
			continue;	/* stopped already: nothing to stop */
		if (ev == GS_EV_BADSUM || ev == GS_EV_TOOLONG) {
			ret = gs_conn_send(&s->conn, "E01", 3);
			if (ret < 0)
				return ret;
			continue;
		}
		ret = gs_server_handle(s, (char *)s->conn.parser.pkt,
				       s->conn.parser.len, &reply);
		if (s->console.len && send_console(s) < 0)
			return disconnected(s);
		if (reply && gs_conn_send(&s->conn, reply->data ? reply->data : "",
					  reply->len) < 0)
			return ret && !s->quit ? s->ended : disconnected(s);
		if (s->noack_after) {
			s->noack_after = 0;
			s->conn.noack = 1;
		}
		if (ret)
			return s->quit ? disconnected(s) : s->ended;
	}
}
