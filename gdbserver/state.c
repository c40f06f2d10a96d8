// SPDX-License-Identifier: MIT
/*
 * The server's state (state.h): the process served and its threads, the
 * stop reply, the parsing every packet family shares.  It knows no
 * packet family; they and server.c know it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "btrace/error.h"
#include "state.h"

/* Between processes: everything the server asks is "not there". */
const struct gs_target_ops gs_no_proc_ops = { 0 };

void gs_reply_ok(struct gs_server *s)
{
	gs_buf_adds(&s->reply, "OK");
}

/* An error: "E" and two hex digits (EINVAL 16, EFAULT 0e, ESRCH 03...). */
void gs_reply_err(struct gs_server *s, int e)
{
	gs_buf_reset(&s->reply);
	gs_buf_addf(&s->reply, "E%02x", e & 0xff);
}

int gs_alive(const struct gs_server *s)
{
	return !s->gone && s->ops->threads;
}

pid_t gs_proc_pid(const struct gs_server *s)
{
	return s->ops->pid ? s->ops->pid(s->ctx) : s->last_pid;
}

pid_t gs_server_pid(const struct gs_server *s)
{
	return gs_proc_pid(s);
}

/* ---- thread ids ---- */

void gs_put_tid(struct gs_server *s, struct gs_buf *b, pid_t tid)
{
	if (s->multiprocess)
		gs_buf_addf(b, "p%x.%x", (unsigned)gs_proc_pid(s),
			    (unsigned)tid);
	else
		gs_buf_addf(b, "%x", (unsigned)tid);
}

/*
 * A thread id at *@p: "p<pid>.<tid>", "<tid>", "-1" (all), "0" (any);
 * "p<pid>" and "p<pid>.-1" are the whole process (-1).  Returns 0 with
 * *@tid set, -1 if malformed.
 */
int gs_parse_ptid(const char **p, pid_t *pid, pid_t *tid)
{
	uint64_t v;

	*pid = 0;
	if (**p == 'p') {
		(*p)++;
		if (**p == '-' && (*p)[1] == '1') {
			*p += 2;
			*tid = -1;
			return 0;
		}
		if (!gs_parse_hex(p, &v) || v > 0x7fffffff)
			return -1;
		*pid = (pid_t)v;
		if (**p != '.') {
			*tid = -1;
			return 0;
		}
		(*p)++;
	}
	if (**p == '-' && (*p)[1] == '1') {
		*p += 2;
		*tid = -1;
		return 0;
	}
	if (!gs_parse_hex(p, &v) || v > 0x7fffffff)
		return -1;
	*tid = (pid_t)v;
	return 0;
}

int gs_parse_tid(const char **p, pid_t *tid)
{
	pid_t pid;

	return gs_parse_ptid(p, &pid, tid);
}

size_t gs_thread_list(struct gs_server *s, pid_t *tids, size_t max)
{
	size_t n;

	if (!gs_alive(s))
		return 0;
	n = s->ops->threads(s->ctx, tids, max);
	return n > max ? max : n;
}

int gs_thread_exists(struct gs_server *s, pid_t tid)
{
	pid_t tids[GS_MAX_THREADS];
	size_t i, n = gs_thread_list(s, tids, GS_MAX_THREADS);

	for (i = 0; i < n; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

pid_t gs_current(struct gs_server *s)
{
	pid_t tids[GS_MAX_THREADS];
	size_t n;

	if (s->gthread > 0 && gs_thread_exists(s, s->gthread))
		return s->gthread;
	if (s->last.tid > 0 && gs_thread_exists(s, s->last.tid))
		return s->last.tid;
	n = gs_thread_list(s, tids, GS_MAX_THREADS);
	return n ? tids[0] : 0;
}

/* ---- stop replies ---- */

/* rbp, rsp and rip with the stop, so that GDB needs no 'g' to unwind. */
static void put_expedited(struct gs_server *s, struct gs_buf *b, pid_t tid)
{
	static const int regs[] = { 6, 7, 16 };
	struct gs_regs r;
	uint8_t v[GS_REG_MAX_SIZE];
	size_t i, n;

	memset(&r, 0, sizeof(r));
	if (!s->ops->get_regs || s->ops->get_regs(s->ctx, tid, &r) < 0)
		return;
	for (i = 0; i < 3; i++) {
		n = gs_reg_get(&r, regs[i], v);
		gs_buf_addf(b, "%02x:", regs[i]);
		gs_buf_hex(b, v, n);
		gs_buf_adds(b, ";");
	}
}

void gs_put_exit(struct gs_server *s, struct gs_buf *b)
{
	if (WIFSIGNALED(s->wstatus))
		gs_buf_addf(b, "X%02x", gs_signal_to_gdb(WTERMSIG(s->wstatus)));
	else
		gs_buf_addf(b, "W%02x", WEXITSTATUS(s->wstatus) & 0xff);
	if (s->multiprocess && gs_proc_pid(s) > 0)
		gs_buf_addf(b, ";process:%x", (unsigned)gs_proc_pid(s));
}

/*
 * The signal GDB is told of: a stop asked for by non-stop's vCont;t is
 * signal 0, an all-stop interrupt SIGINT.
 */
static int stop_signal(const struct gs_server *s, const struct bt_stop *st)
{
	switch (st->reason) {
	case BT_STOP_SIGNAL:
		return st->signal;
	case BT_STOP_INTERRUPT:
		return st->signal || s->nonstop ? st->signal : SIGINT;
	case BT_STOP_NONE:
		return 0;
	default:
		return SIGTRAP;
	}
}

void gs_put_stop_of(struct gs_server *s, struct gs_buf *b,
		    const struct bt_stop *st)
{
	pid_t tid = st->tid > 0 ? st->tid : gs_current(s);

	/*
	 * The thread of a stop reply is the general thread from now on:
	 * GDB assumes so (it sends no Hg for it), as gdbserver does it; not
	 * in non-stop, where stops come behind GDB's back.
	 */
	if (!s->nonstop)
		s->gthread = tid;
	gs_buf_addf(b, "T%02xthread:", gs_signal_to_gdb(stop_signal(s, st)));
	gs_put_tid(s, b, tid);
	gs_buf_adds(b, ";");
	if (st->reason == BT_STOP_BREAK && s->swbreak)
		gs_buf_adds(b, "swbreak:;");
	put_expedited(s, b, tid);
}

void gs_put_stop(struct gs_server *s)
{
	if (s->gone)
		gs_put_exit(s, &s->reply);
	else
		gs_put_stop_of(s, &s->reply, &s->last);
}

/*
 * Does the process ";<pid>" at @p (vKill, D) name differ from the one
 * served?  None named means the one served; garbage differs.
 */
int gs_other_pid(struct gs_server *s, const char *p)
{
	uint64_t pid;

	if (!*p)
		return 0;
	p += *p == ';';
	if (!gs_parse_hex(&p, &pid) || *p)
		return 1;
	return pid != (uint64_t)gs_proc_pid(s);
}

/* "addr,len" then @sep; the length bounded by what a packet holds. */
int gs_parse_addr_len(const char **p, char sep, uint64_t *addr,
		      uint64_t *len)
{
	if (!gs_parse_hex(p, addr) || **p != ',')
		return -1;
	(*p)++;
	if (!gs_parse_hex(p, len) || **p != sep)
		return -1;
	if (sep)
		(*p)++;
	return *len > GS_PACKET_MAX ? -1 : 0;
}

int gs_check_avx(struct gs_server *s)
{
	struct gs_regs r;
	pid_t tid = gs_current(s);

	memset(&r, 0, sizeof(r));
	if (tid && s->ops->get_regs && s->ops->get_regs(s->ctx, tid, &r) == 0)
		return r.have_ymm;
	return 0;
}

void gs_bt_forget(struct gs_server *s)
{
	free(s->bt);
	s->bt = NULL;
	s->nbt = 0;
}

/*
 * A new process (or none, @p->ops NULL): the state that belonged to the
 * old one goes (threads, branch trace, documents), GDB's signal settings
 * stay.
 */
void gs_proc_set(struct gs_server *s, const struct gs_proc *p)
{
	s->ops = p->ops ? p->ops : &gs_no_proc_ops;
	s->ctx = p->ops ? p->ctx : NULL;
	s->last = p->first;
	s->gone = !p->ops;
	s->wstatus = 0;
	s->gthread = s->cthread = 0;
	s->xfer_key[0] = '\0';
	gs_bt_forget(s);
	s->avx = gs_check_avx(s);
	if (s->ops->stop_signals && s->ops->resume)
		s->ops->stop_signals(s->ctx, ~s->pass);
}

/* Only a server with a spawner owns its process; the others keep it. */
void gs_proc_drop(struct gs_server *s)
{
	struct gs_proc p = { .ops = s->ops, .ctx = s->ctx };

	if (!s->spawner || s->ops == &gs_no_proc_ops)
		return;
	s->last_pid = gs_proc_pid(s);
	s->ops = &gs_no_proc_ops;
	s->ctx = NULL;
	s->spawner->release(s->spawner->arg, &p);
	gs_bt_forget(s);
	gs_proc_next(s);	/* another waits: it is served now */
}
