// SPDX-License-Identifier: MIT
/*
 * The remote protocol session: packets dispatched from one table, run
 * control, registers, memory and breakpoints (gdbserver.h).  Every packet
 * gets an answer: a reply, an error ("Exx", "E.text"), or the empty reply
 * for what is not supported, whatever its bytes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "btrace/error.h"
#include "server_internal.h"

#define MAX_THREADS 4096

static void reply_ok(struct gs_server *s)
{
	gs_buf_adds(&s->reply, "OK");
}

/* An error: "E" and two hex digits (EINVAL 16, EFAULT 0e, ESRCH 03...). */
static void reply_err(struct gs_server *s, int e)
{
	gs_buf_reset(&s->reply);
	gs_buf_addf(&s->reply, "E%02x", e & 0xff);
}

static int alive(const struct gs_server *s)
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
static int parse_tid(const char **p, pid_t *tid)
{
	uint64_t v;

	if (**p == 'p') {
		(*p)++;
		if (**p == '-' && (*p)[1] == '1') {
			*p += 2;
			*tid = -1;
			return 0;
		}
		if (!gs_parse_hex(p, &v))
			return -1;
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

static size_t thread_list(struct gs_server *s, pid_t *tids, size_t max)
{
	size_t n;

	if (!alive(s))
		return 0;
	n = s->ops->threads(s->ctx, tids, max);
	return n > max ? max : n;
}

static int thread_exists(struct gs_server *s, pid_t tid)
{
	pid_t tids[MAX_THREADS];
	size_t i, n = thread_list(s, tids, MAX_THREADS);

	for (i = 0; i < n; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

pid_t gs_current(struct gs_server *s)
{
	pid_t tids[MAX_THREADS];
	size_t n;

	if (s->gthread > 0 && thread_exists(s, s->gthread))
		return s->gthread;
	if (s->last.tid > 0 && thread_exists(s, s->last.tid))
		return s->last.tid;
	n = thread_list(s, tids, MAX_THREADS);
	return n ? tids[0] : 0;
}

/* ---- stop replies ---- */

/* rbp, rsp and rip with the stop, so that GDB needs no 'g' to unwind. */
static void put_expedited(struct gs_server *s, pid_t tid)
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
		gs_buf_addf(&s->reply, "%02x:", regs[i]);
		gs_buf_hex(&s->reply, v, n);
		gs_buf_adds(&s->reply, ";");
	}
}

static void put_exit(struct gs_server *s)
{
	if (WIFSIGNALED(s->wstatus))
		gs_buf_addf(&s->reply, "X%02x",
			    gs_signal_to_gdb(WTERMSIG(s->wstatus)));
	else
		gs_buf_addf(&s->reply, "W%02x", WEXITSTATUS(s->wstatus) & 0xff);
	if (s->multiprocess && gs_proc_pid(s) > 0)
		gs_buf_addf(&s->reply, ";process:%x", (unsigned)gs_proc_pid(s));
}

void gs_put_stop(struct gs_server *s)
{
	const struct bt_stop *st = &s->last;
	pid_t tid = st->tid > 0 ? st->tid : gs_current(s);
	int sig;

	if (s->gone) {
		put_exit(s);
		return;
	}
	switch (st->reason) {
	case BT_STOP_SIGNAL:
		sig = st->signal;
		break;
	case BT_STOP_INTERRUPT:
		sig = st->signal ? st->signal : SIGINT;
		break;
	case BT_STOP_NONE:
		sig = 0;
		break;
	default:
		sig = SIGTRAP;
	}
	/*
	 * The thread of a stop reply is the general thread from now on:
	 * GDB assumes so (it sends no Hg for it), as gdbserver does it.
	 */
	s->gthread = tid;
	gs_buf_addf(&s->reply, "T%02xthread:", gs_signal_to_gdb(sig));
	gs_put_tid(s, &s->reply, tid);
	gs_buf_adds(&s->reply, ";");
	if (st->reason == BT_STOP_BREAK && s->swbreak)
		gs_buf_adds(&s->reply, "swbreak:;");
	put_expedited(s, tid);
}

/*
 * The process ended (exit, or killed by its signal): let it go and
 * answer W or X.
 */
static void process_end(struct gs_server *s)
{
	int ws = 0;

	if (s->ops->finish && s->ops->finish(s->ctx, &ws) == 0)
		s->wstatus = ws;
	else if (s->last.reason == BT_STOP_KILLED)
		s->wstatus = s->last.signal & 0x7f;
	else
		s->wstatus = (s->last.status & 0xff) << 8;
	s->gone = 1;
	gs_btrace_forget(s);
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

	if (!alive(s)) {
		reply_err(s, ESRCH);
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
		reply_err(s, ret == -bte_invalid ? EINVAL : EIO);
		return;
	}
	s->last = stop;
	if (stop.reason == BT_STOP_EXIT || stop.reason == BT_STOP_KILLED)
		process_end(s);
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

/* One vCont action: "c", "C<sig>", "s", "S<sig>", "t" at *@p. */
static int parse_action(const char **p, struct bt_resume *a)
{
	uint64_t sig = 0;
	char c = *(*p)++;

	memset(a, 0, sizeof(*a));
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
		if (parse_tid(p, &a->tid) < 0)
			return -1;
		if (a->tid == -1)
			a->tid = 0;
	}
	return 0;
}

static void cmd_vcont(struct gs_server *s, char *pkt)
{
	struct bt_resume acts[64];
	const char *p = pkt + 5;
	size_t n = 0;

	while (*p == ';' && n < 64) {
		p++;
		if (parse_action(&p, &acts[n]) < 0) {
			reply_err(s, EINVAL);
			return;
		}
		n++;
	}
	if (*p || !n) {
		reply_err(s, EINVAL);
		return;
	}
	run(s, acts, n);
}

static void cmd_vcont_query(struct gs_server *s, char *pkt)
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
			reply_err(s, EINVAL);
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

static void cmd_cont(struct gs_server *s, char *pkt)
{
	old_resume(s, pkt, 0);
}

static void cmd_step(struct gs_server *s, char *pkt)
{
	old_resume(s, pkt, 1);
}

static void cmd_stop_reason(struct gs_server *s, char *pkt)
{
	gs_put_stop(s);
}

/* ---- ending ---- */

/*
 * Does the process ";<pid>" at @p (vKill, D) name differ from the one
 * served?  None named means the one served; garbage differs.
 */
static int other_pid(struct gs_server *s, const char *p)
{
	uint64_t pid;

	if (!*p)
		return 0;
	p += *p == ';';
	if (!gs_parse_hex(&p, &pid) || *p)
		return 1;
	return pid != (uint64_t)gs_proc_pid(s);
}

/*
 * Extended-remote goes on without the process (SIGKILL is its end, as
 * gdbserver reports it); otherwise the session is over.
 */
static void cmd_kill(struct gs_server *s, char *pkt)
{
	if (s->extended && *pkt == 'v' && (!alive(s) || other_pid(s, pkt + 5))) {
		reply_err(s, ESRCH);
		return;
	}
	if (alive(s) && s->ops->kill)
		s->ops->kill(s->ctx);
	if (!s->gone)
		s->wstatus = SIGKILL;
	s->gone = 1;
	if (*pkt == 'k')
		s->replying = 0;	/* gdb waits for no answer to k */
	else
		reply_ok(s);
	if (s->extended)
		gs_proc_drop(s);
	else
		s->ended = GS_END_KILLED;
}

static void cmd_detach(struct gs_server *s, char *pkt)
{
	if (other_pid(s, pkt + 1)) {
		reply_err(s, ESRCH);
		return;
	}
	if (alive(s) && s->ops->detach && s->ops->detach(s->ctx) < 0) {
		reply_err(s, EIO);
		return;
	}
	reply_ok(s);
	if (!s->extended) {
		s->ended = GS_END_DETACHED;
		return;
	}
	if (!s->gone)
		s->wstatus = 0;	/* gdbserver's "W00" after a detach */
	s->gone = 1;
	gs_proc_drop(s);
}

/* ---- threads ---- */

static void cmd_set_thread(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 2;
	pid_t tid;

	if ((pkt[1] != 'g' && pkt[1] != 'c') || parse_tid(&p, &tid) < 0 ||
	    *p) {
		reply_err(s, EINVAL);
		return;
	}
	if (tid > 0 && !thread_exists(s, tid)) {
		reply_err(s, ESRCH);
		return;
	}
	if (pkt[1] == 'g')
		s->gthread = tid;
	else
		s->cthread = tid;
	reply_ok(s);
}

static void cmd_thread_alive(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	pid_t tid;

	if (parse_tid(&p, &tid) < 0 || *p || tid <= 0 ||
	    !thread_exists(s, tid))
		reply_err(s, ESRCH);
	else
		reply_ok(s);
}

static void cmd_current(struct gs_server *s, char *pkt)
{
	pid_t tid = gs_current(s);

	if (!tid) {
		reply_err(s, ESRCH);
		return;
	}
	gs_buf_adds(&s->reply, "QC");
	gs_put_tid(s, &s->reply, tid);
}

static void cmd_threads_first(struct gs_server *s, char *pkt)
{
	pid_t tids[MAX_THREADS];
	size_t i, n = thread_list(s, tids, MAX_THREADS);

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

static void cmd_threads_next(struct gs_server *s, char *pkt)
{
	gs_buf_adds(&s->reply, "l");
}

/* qAttached[:pid]: 1 attached, 0 launched; E01 for no such process. */
static void cmd_attached(struct gs_server *s, char *pkt)
{
	int launched = s->ops->launched ? s->ops->launched(s->ctx) : 0;
	const char *p = pkt + 9;

	if (s->ops == &gs_no_proc_ops || (*p && (*p != ':' || other_pid(s, p + 1)))) {
		reply_err(s, 1);
		return;
	}
	gs_buf_adds(&s->reply, launched ? "0" : "1");
}

/* ---- registers ---- */

static int regs_of(struct gs_server *s, pid_t *tid, struct gs_regs *r)
{
	memset(r, 0, sizeof(*r));
	*tid = gs_current(s);
	if (!*tid || !s->ops->get_regs || s->ops->get_regs(s->ctx, *tid, r) < 0) {
		reply_err(s, ESRCH);
		return -1;
	}
	return 0;
}

static void cmd_read_regs(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	struct gs_regs r;
	pid_t tid;
	int i;

	if (regs_of(s, &tid, &r) < 0)
		return;
	for (i = 0; i < gs_regs_count(s->avx); i++)
		gs_buf_hex(&s->reply, v, gs_reg_get(&r, i, v));
}

static void put_regs(struct gs_server *s, pid_t tid, const struct gs_regs *r,
		     const struct gs_regs *old)
{
	if (!s->ops->set_regs || s->ops->set_regs(s->ctx, tid, r, old) < 0)
		reply_err(s, EIO);
	else
		reply_ok(s);
}

static void cmd_write_regs(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	struct gs_regs r, old;
	const char *p = pkt + 1;
	size_t left = strlen(p), size;
	pid_t tid;
	int i;

	if (regs_of(s, &tid, &r) < 0)
		return;
	old = r;
	/* a short G sets the registers it has */
	for (i = 0; i < gs_regs_count(s->avx) && left; i++) {
		size = gs_reg_size(i);
		if (left < 2 * size || gs_unhex(p, size, v) < 0 ||
		    gs_reg_set(&r, i, v, size) < 0) {
			reply_err(s, EINVAL);
			return;
		}
		p += 2 * size;
		left -= 2 * size;
	}
	if (left) {
		reply_err(s, EINVAL);
		return;
	}
	put_regs(s, tid, &r, &old);
}

static void cmd_read_reg(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	const char *p = pkt + 1;
	struct gs_regs r;
	uint64_t n;
	pid_t tid;

	if (!gs_parse_hex(&p, &n) || *p || n >= (uint64_t)gs_regs_count(s->avx)) {
		reply_err(s, EINVAL);
		return;
	}
	if (regs_of(s, &tid, &r) < 0)
		return;
	gs_buf_hex(&s->reply, v, gs_reg_get(&r, (int)n, v));
}

static void cmd_write_reg(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	const char *p = pkt + 1;
	struct gs_regs r, old;
	uint64_t n;
	size_t size;
	pid_t tid;

	if (!gs_parse_hex(&p, &n) || *p != '=' ||
	    n >= (uint64_t)gs_regs_count(s->avx)) {
		reply_err(s, EINVAL);
		return;
	}
	p++;
	size = gs_reg_size((int)n);
	if (strlen(p) != 2 * size || gs_unhex(p, size, v) < 0) {
		reply_err(s, EINVAL);
		return;
	}
	if (regs_of(s, &tid, &r) < 0)
		return;
	old = r;
	gs_reg_set(&r, (int)n, v, size);
	put_regs(s, tid, &r, &old);
}

/* ---- memory ---- */

/* "addr,len" then @sep; the length bounded by what a packet holds. */
static int parse_addr_len(const char **p, char sep, uint64_t *addr,
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

static void cmd_read_mem(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	uint64_t addr, len;
	uint8_t *buf;
	ssize_t n;

	if (parse_addr_len(&p, '\0', &addr, &len) < 0) {
		reply_err(s, EINVAL);
		return;
	}
	if (len > (GS_PACKET_MAX - 8) / 2)
		len = (GS_PACKET_MAX - 8) / 2;
	if (!len) {
		gs_buf_adds(&s->reply, "");
		return;
	}
	buf = malloc(len);
	if (!buf) {
		reply_err(s, ENOMEM);
		return;
	}
	n = s->gone || !s->ops->read ? -1 : s->ops->read(s->ctx, addr, buf, len);
	if (n <= 0)
		reply_err(s, EFAULT);
	else
		gs_buf_hex(&s->reply, buf, (size_t)n);
	free(buf);
}

static void write_mem(struct gs_server *s, uint64_t addr, const uint8_t *buf,
		      size_t len)
{
	ssize_t n;

	if (!len) {
		reply_ok(s);
		return;
	}
	if (!alive(s) || !s->ops->write) {
		reply_err(s, EPERM);
		return;
	}
	n = s->ops->write(s->ctx, addr, buf, len);
	if (n != (ssize_t)len)
		reply_err(s, EFAULT);
	else
		reply_ok(s);
}

static void cmd_write_mem(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	uint64_t addr, len;
	uint8_t *buf;

	if (parse_addr_len(&p, ':', &addr, &len) < 0 ||
	    strlen(p) != 2 * len) {
		reply_err(s, EINVAL);
		return;
	}
	buf = malloc(len + 1);
	if (!buf) {
		reply_err(s, ENOMEM);
		return;
	}
	if (gs_unhex(p, len, buf) < 0)
		reply_err(s, EINVAL);
	else
		write_mem(s, addr, buf, len);
	free(buf);
}

/* X: binary data, escaped; @pkt's length is what counts (NULs inside). */
static void cmd_write_bin(struct gs_server *s, char *pkt, size_t pktlen)
{
	const char *p = pkt + 1;
	uint64_t addr, len;
	size_t n;

	if (parse_addr_len(&p, ':', &addr, &len) < 0) {
		reply_err(s, EINVAL);
		return;
	}
	n = gs_unescape((uint8_t *)p, pktlen - (size_t)(p - pkt));
	if (n != len) {
		reply_err(s, EINVAL);
		return;
	}
	write_mem(s, addr, (const uint8_t *)p, len);
}

/* ---- breakpoints ---- */

static void cmd_break(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	uint64_t type, addr, kind;
	int ret;

	if (!gs_parse_hex(&p, &type) || *p++ != ',' ||
	    !gs_parse_hex(&p, &addr) || *p++ != ',' ||
	    !gs_parse_hex(&p, &kind) || (*p && *p != ';')) {
		reply_err(s, EINVAL);
		return;
	}
	if (type != 0)
		return;		/* hardware breakpoints, watchpoints: none */
	if (!s->ops->resume) {
		/* a saved trace: GDB's replay checks its breakpoints itself */
		reply_ok(s);
		return;
	}
	if (!alive(s) || !s->ops->break_insert) {
		reply_err(s, EPERM);
		return;
	}
	if (*pkt == 'Z')
		ret = s->ops->break_insert(s->ctx, addr);
	else
		ret = s->ops->break_remove(s->ctx, addr);
	if (ret < 0)
		reply_err(s, EFAULT);
	else
		reply_ok(s);
}

/* ---- queries ---- */

static int has_feature(const char *list, const char *feature)
{
	size_t n = strlen(feature);
	const char *p = list;

	while ((p = strstr(p, feature))) {
		if ((p == list || p[-1] == ';' || p[-1] == ':') &&
		    (p[n] == ';' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

static void cmd_supported(struct gs_server *s, char *pkt)
{
	int bt = s->ops->trace_formats ? s->ops->trace_formats(s->ctx) : 0;

	/* no process yet: the one run or attach makes will have one of these */
	if (s->ops == &gs_no_proc_ops && s->spawner)
		bt = GS_BT_BTS | GS_BT_PT;
	s->multiprocess = has_feature(pkt, "multiprocess+");
	s->swbreak = has_feature(pkt, "swbreak+");
	gs_buf_addf(&s->reply,
		    "PacketSize=%x;QStartNoAckMode+;QPassSignals+;"
		    "QProgramSignals+;qXfer:features:read+;"
		    "qXfer:threads:read+;qXfer:auxv:read+;qXfer:siginfo:read+;"
		    "qXfer:exec-file:read+;qXfer:libraries-svr4:read+;"
		    "vContSupported+;QThreadEvents+",
		    GS_PACKET_MAX);
	if (s->multiprocess)
		gs_buf_adds(&s->reply, ";multiprocess+");
	if (s->swbreak)
		gs_buf_adds(&s->reply, ";swbreak+");
	if (bt & GS_BT_BTS)
		gs_buf_adds(&s->reply, ";Qbtrace:bts+;Qbtrace-conf:bts:size+");
	if (bt & GS_BT_PT)
		gs_buf_adds(&s->reply, ";Qbtrace:pt+;Qbtrace-conf:pt:size+");
	if (bt)
		gs_buf_adds(&s->reply, ";Qbtrace:off+;qXfer:btrace:read+;"
				       "qXfer:btrace-conf:read+");
}

static void cmd_noack(struct gs_server *s, char *pkt)
{
	s->noack_after = 1;
	reply_ok(s);
}

static void cmd_pass_signals(struct gs_server *s, char *pkt)
{
	const char *p = strchr(pkt, ':') + 1;
	uint64_t mask = 0, g;
	int sig;

	while (*p) {
		if (!gs_parse_hex(&p, &g) || (*p && *p++ != ';')) {
			reply_err(s, EINVAL);
			return;
		}
		sig = g <= 0xff ? gs_signal_from_gdb((int)g) : -1;
		if (sig > 0 && sig <= 64)
			mask |= 1ull << (sig - 1);
	}
	s->pass = mask;
	if (alive(s) && s->ops->stop_signals)
		s->ops->stop_signals(s->ctx, ~mask);
	reply_ok(s);
}

static void cmd_ok(struct gs_server *s, char *pkt)
{
	reply_ok(s);
}

static void cmd_nonstop(struct gs_server *s, char *pkt)
{
	if (!strcmp(pkt, "QNonStop:0"))
		reply_ok(s);
	else
		reply_err(s, EINVAL);
}

static void cmd_btrace(struct gs_server *s, char *pkt)
{
	gs_btrace_packet(s, pkt);
}

static void cmd_hostio(struct gs_server *s, char *pkt)
{
	gs_hostio_packet(s, pkt);
}

/*
 * qXfer:object:read:annex:offset,length.  The document is made at offset
 * 0 and kept for the reads that follow (as gdbserver does).
 */
static void cmd_xfer(struct gs_server *s, char *pkt)
{
	char *object = pkt + 6, *op, *annex, *range;
	char key[sizeof(s->xfer_key)];
	const char *p;
	uint64_t off, len;
	size_t take, room;
	int ret;

	op = strchr(object, ':');
	if (!op)
		goto bad;
	*op++ = '\0';
	annex = strchr(op, ':');
	if (!annex)
		goto bad;
	*annex++ = '\0';
	if (strcmp(op, "read"))
		return;		/* writes: not supported */
	range = strrchr(annex, ':');
	if (!range)
		goto bad;
	*range++ = '\0';
	p = range;
	if (parse_addr_len(&p, '\0', &off, &len) < 0)
		goto bad;
	snprintf(key, sizeof(key), "%s:%s", object, annex);
	if (off == 0 || strcmp(s->xfer_key, key)) {
		gs_buf_reset(&s->xfer);
		s->xfer_key[0] = '\0';
		ret = gs_xfer_doc(s, object, annex, &s->xfer);
		if (ret == 1)
			return;		/* unknown object: empty reply */
		if (ret < 0 || s->xfer.oom) {
			gs_buf_reset(&s->reply);
			if (s->xfer.len && s->xfer.data[0] == 'E')
				gs_buf_add(&s->reply, s->xfer.data, s->xfer.len);
			else
				reply_err(s, ret == -bte_nomem ? ENOMEM : EIO);
			gs_buf_reset(&s->xfer);
			return;
		}
		snprintf(s->xfer_key, sizeof(s->xfer_key), "%s", key);
	}
	if (off > s->xfer.len) {
		reply_err(s, EINVAL);
		return;
	}
	room = len < GS_PACKET_MAX - 8 ? (size_t)len : GS_PACKET_MAX - 8;
	take = gs_bin_fit(s->xfer.data + off, s->xfer.len - off, room);
	gs_buf_adds(&s->reply, off + take < s->xfer.len ? "m" : "l");
	gs_buf_bin(&s->reply, s->xfer.data + off, take);
	return;
bad:
	reply_err(s, EINVAL);
}

/* ---- monitor commands (qRcmd) ---- */

static void mon_help(struct gs_server *s, const char *arg)
{
	gs_buf_adds(&s->console,
		    "btrace gdbserver monitor commands:\n"
		    "  monitor save FILE   save the branch trace of every thread,\n"
		    "                      with this stop, as a btrace trace file\n"
		    "                      (btrace show FILE, btrace gdbserver\n"
		    "                      --trace FILE)\n"
		    "  monitor help        this list\n");
}

static void mon_save(struct gs_server *s, const char *arg)
{
	int ret;

	while (*arg == ' ')
		arg++;
	if (!*arg) {
		gs_buf_adds(&s->console, "usage: monitor save FILE\n");
		return;
	}
	if (s->gone || !s->ops->save) {
		gs_buf_adds(&s->console, "btrace: no live process to save\n");
		return;
	}
	ret = s->ops->save(s->ctx, &s->last, arg);
	if (ret < 0)
		gs_buf_addf(&s->console, "btrace: cannot save '%s': %s\n", arg,
			    bt_errstr(ret));
	else
		gs_buf_addf(&s->console, "saved the trace of process %d to %s\n",
			    (int)s->ops->pid(s->ctx), arg);
}

static void cmd_rcmd(struct gs_server *s, char *pkt)
{
	static const struct {
		const char *name;
		void (*fn)(struct gs_server *s, const char *arg);
	} mons[] = { { "help", mon_help }, { "save", mon_save } };
	size_t n = strlen(pkt + 6) / 2, i, len;
	char *cmd;

	cmd = malloc(n + 1);
	if (!cmd || strlen(pkt + 6) % 2 ||
	    gs_unhex(pkt + 6, n, (uint8_t *)cmd) < 0) {
		free(cmd);
		reply_err(s, EINVAL);
		return;
	}
	cmd[n] = '\0';
	for (i = 0; i < sizeof(mons) / sizeof(mons[0]); i++) {
		len = strlen(mons[i].name);
		if (!strncmp(cmd, mons[i].name, len) &&
		    (cmd[len] == ' ' || !cmd[len])) {
			mons[i].fn(s, cmd + len);
			break;
		}
	}
	if (i == sizeof(mons) / sizeof(mons[0]))
		gs_buf_addf(&s->console, "btrace: unknown monitor command '%s'; "
			    "try 'monitor help'\n", cmd);
	free(cmd);
	reply_ok(s);
}

/* ---- dispatch ---- */

enum { EXACT = 0, PREFIX = 1 };

struct gs_cmd {
	const char *name;
	void (*fn)(struct gs_server *s, char *pkt);
	int match;
	const char *help;
};

static const struct gs_cmd commands[] = {
	{ "?", cmd_stop_reason, EXACT, "why the target stopped" },
	{ "qSupported", cmd_supported, PREFIX, "features" },
	{ "qXfer:", cmd_xfer, PREFIX, "objects: features, threads, auxv, siginfo, "
	  "exec-file, libraries-svr4, btrace, btrace-conf" },
	{ "qC", cmd_current, EXACT, "the current thread" },
	{ "qAttached", cmd_attached, PREFIX, "attached or launched" },
	{ "qfThreadInfo", cmd_threads_first, EXACT, "thread list" },
	{ "qsThreadInfo", cmd_threads_next, EXACT, "thread list, more" },
	{ "qSymbol:", cmd_ok, PREFIX, "no symbols wanted" },
	{ "qRcmd,", cmd_rcmd, PREFIX, "monitor commands: help, save FILE" },
	{ "QStartNoAckMode", cmd_noack, EXACT, "acks off" },
	{ "QPassSignals:", cmd_pass_signals, PREFIX, "signals not reported" },
	{ "QProgramSignals:", cmd_ok, PREFIX, "all signals go to the program" },
	{ "QThreadEvents:", cmd_ok, PREFIX, "no thread events" },
	{ "QNonStop:", cmd_nonstop, PREFIX, "all-stop only" },
	{ "Qbtrace:", cmd_btrace, PREFIX, "branch trace on, off" },
	{ "Qbtrace-conf:", cmd_btrace, PREFIX, "branch trace buffer size" },
	{ "vCont?", cmd_vcont_query, EXACT, "vCont actions" },
	{ "vCont;", cmd_vcont, PREFIX, "resume threads" },
	{ "vKill;", cmd_kill, PREFIX, "kill" },
	{ "vRun;", gs_cmd_run, PREFIX, "extended: run a program" },
	{ "vAttach;", gs_cmd_attach, PREFIX, "extended: attach to a process" },
	{ "!", gs_cmd_extended, EXACT, "extended-remote on" },
	{ "R", gs_cmd_restart, PREFIX, "extended: run the program again" },
	{ "vFile:", cmd_hostio, PREFIX, "read the target's files" },
	{ "g", cmd_read_regs, EXACT, "read registers" },
	{ "G", cmd_write_regs, PREFIX, "write registers" },
	{ "p", cmd_read_reg, PREFIX, "read a register" },
	{ "P", cmd_write_reg, PREFIX, "write a register" },
	{ "m", cmd_read_mem, PREFIX, "read memory" },
	{ "M", cmd_write_mem, PREFIX, "write memory" },
	{ "Z", cmd_break, PREFIX, "insert a breakpoint" },
	{ "z", cmd_break, PREFIX, "remove a breakpoint" },
	{ "H", cmd_set_thread, PREFIX, "set the thread" },
	{ "T", cmd_thread_alive, PREFIX, "is the thread alive" },
	{ "c", cmd_cont, PREFIX, "continue" },
	{ "C", cmd_cont, PREFIX, "continue with a signal" },
	{ "s", cmd_step, PREFIX, "step" },
	{ "S", cmd_step, PREFIX, "step with a signal" },
	{ "k", cmd_kill, EXACT, "kill" },
	{ "D", cmd_detach, PREFIX, "detach" },
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
		cmd_write_bin(s, pkt, len);
	} else if (strlen(pkt) != len) {
		reply_err(s, EINVAL);	/* a NUL inside a text packet */
	} else {
		c = cmd_find(pkt);
		if (c)
			c->fn(s, pkt);
		/* else: not supported, the empty reply */
	}
	if (s->reply.oom)
		reply_err(s, ENOMEM);
	*reply = s->replying ? &s->reply : NULL;
	return s->ended != 0;
}

/* ---- the session ---- */

int gs_check_avx(struct gs_server *s)
{
	struct gs_regs r;
	pid_t tid = gs_current(s);

	memset(&r, 0, sizeof(r));
	if (tid && s->ops->get_regs && s->ops->get_regs(s->ctx, tid, &r) == 0)
		return r.have_ymm;
	return 0;
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
	gs_buf_release(&s->reply);
	gs_buf_release(&s->console);
	gs_buf_release(&s->xfer);
	free(s->bt);
	free(s);
}

/* gdb is gone: a process it attached to runs on, one it started ends. */
static int disconnected(struct gs_server *s)
{
	if (!alive(s) || !s->ops->resume)
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
		ev = gs_conn_recv(&s->conn);
		if (ev <= 0) {
			ret = disconnected(s);
			return ev < 0 ? ev : ret;
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
			return ret ? s->ended : disconnected(s);
		if (s->noack_after) {
			s->noack_after = 0;
			s->conn.noack = 1;
		}
		if (ret)
			return s->ended;
	}
}
