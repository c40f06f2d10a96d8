// SPDX-License-Identifier: MIT
/*
 * btrace gdbserver's pieces without a process: the packet parser, the
 * binary escape, signal numbers, registers, the Branch Trace Format, and
 * the server itself over a fake target whose trace is a real capture ring
 * (so that all, new and delta reads and the overflow are the real ones).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/ring.h"
#include "gdbserver.h"

/* ---- packets ---- */

static int feed(struct gs_parser *p, const char *bytes)
{
	int ev = GS_EV_NONE;

	while (*bytes && ev == GS_EV_NONE)
		ev = gs_parser_feed(p, (uint8_t)*bytes++);
	return ev;
}

static void parse_packet(void **state)
{
	struct gs_parser p;

	gs_parser_init(&p);
	assert_int_equal(feed(&p, "$qSupported#37"), GS_EV_PACKET);
	assert_string_equal((char *)p.pkt, "qSupported");
	assert_int_equal(feed(&p, "$#00"), GS_EV_PACKET);
	assert_int_equal(p.len, 0);
	assert_int_equal(feed(&p, "+"), GS_EV_ACK);
	assert_int_equal(feed(&p, "-"), GS_EV_NAK);
	assert_int_equal(feed(&p, "\x03"), GS_EV_INTERRUPT);
	gs_parser_release(&p);
}

static void parse_packet_badsum(void **state)
{
	struct gs_parser p;

	gs_parser_init(&p);
	assert_int_equal(feed(&p, "$g#00"), GS_EV_BADSUM);
	assert_int_equal(feed(&p, "$g#zz"), GS_EV_BADSUM);
	/* noise between packets, a packet cut by a new '$' */
	assert_int_equal(feed(&p, "xyz$abc$g#67"), GS_EV_PACKET);
	assert_string_equal((char *)p.pkt, "g");
	gs_parser_release(&p);
}

static void parse_packet_toolong(void **state)
{
	struct gs_parser p;
	size_t i;
	int ev = GS_EV_NONE;

	gs_parser_init(&p);
	gs_parser_feed(&p, '$');
	for (i = 0; i < GS_PACKET_MAX + 10; i++)
		assert_int_equal(gs_parser_feed(&p, 'a'), GS_EV_NONE);
	gs_parser_feed(&p, '#');
	gs_parser_feed(&p, '0');
	ev = gs_parser_feed(&p, '0');
	assert_int_equal(ev, GS_EV_TOOLONG);
	assert_int_equal(feed(&p, "$g#67"), GS_EV_PACKET);
	gs_parser_release(&p);
}

static void escape_roundtrip(void **state)
{
	const uint8_t data[] = { 'a', '#', '$', '}', '*', 0, 0x7d ^ 0x20, 'z' };
	struct gs_buf b;
	size_t n;

	gs_buf_init(&b);
	gs_buf_bin(&b, data, sizeof(data));
	assert_int_equal(b.len, sizeof(data) + 4);
	assert_null(memchr(b.data, '#', b.len));
	assert_null(memchr(b.data, '*', b.len));
	n = gs_unescape((uint8_t *)b.data, b.len);
	assert_int_equal(n, sizeof(data));
	assert_memory_equal(b.data, data, sizeof(data));
	assert_int_equal(gs_bin_fit(data, sizeof(data), 3), 2);
	gs_buf_release(&b);
}

static void signals_roundtrip(void **state)
{
	int sig;

	assert_int_equal(gs_signal_to_gdb(SIGSEGV), 11);
	assert_int_equal(gs_signal_to_gdb(SIGUSR1), 30);
	assert_int_equal(gs_signal_to_gdb(SIGBUS), 10);
	assert_int_equal(gs_signal_to_gdb(SIGCHLD), 20);
	assert_int_equal(gs_signal_to_gdb(34), 46);
	for (sig = 1; sig <= 64; sig++) {
		if (sig == SIGSTKFLT)
			continue;	/* GDB has no number for it */
		assert_int_equal(gs_signal_from_gdb(gs_signal_to_gdb(sig)), sig);
	}
	assert_int_equal(gs_signal_from_gdb(0x8f), -1);
}

static void regs_layout(void **state)
{
	struct gs_regs r;
	uint8_t v[16];
	size_t total = 0;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < GS_NREGS; i++)
		total += gs_reg_size(i);
	assert_int_equal(total, 816);
	assert_int_equal(gs_reg_size(GS_NREGS), 0);
	r.gp.rip = 0x401000;
	assert_int_equal(gs_reg_get(&r, 16, v), 8);
	assert_memory_equal(v, "\x00\x10\x40\0\0\0\0\0", 8);
	/* all empty: the full tag is 0xffff; st0 = 1.0 (valid) */
	assert_int_equal(gs_reg_get(&r, 34, v), 4);
	assert_memory_equal(v, "\xff\xff\0\0", 4);
	r.fp.ftw = 1;
	((uint8_t *)r.fp.st_space)[7] = 0x80;
	((uint8_t *)r.fp.st_space)[8] = 0xff;
	((uint8_t *)r.fp.st_space)[9] = 0x3f;
	gs_reg_get(&r, 34, v);
	assert_memory_equal(v, "\xfc\xff\0\0", 4);
	/* and back: a written full tag becomes the abridged one */
	assert_int_equal(gs_reg_set(&r, 34, (const uint8_t *)"\xf0\xff\0\0", 4), 0);
	assert_int_equal(r.fp.ftw, 3);
	assert_int_equal(gs_reg_set(&r, 17, (const uint8_t *)"\x46\x02\0\0", 4), 0);
	assert_int_equal(r.gp.eflags, 0x246);
	assert_int_equal(gs_reg_set(&r, 17, v, 8), -1);
	assert_non_null(strstr(gs_tdesc(1), "org.gnu.gdb.i386.avx"));
	assert_null(strstr(gs_tdesc(0), "org.gnu.gdb.i386.avx"));
	assert_non_null(strstr(gs_tdesc(0), "regnum=\"57\""));
}

/* ---- the Branch Trace Format ---- */

static const struct bt_branch br3[] = {
	{ .from = 0x1010, .to = 0x2000, .kind = BT_BR_CALL },
	{ .from = 0x2008, .to = 0x1015, .kind = BT_BR_RET },
	{ .from = 0x1020, .to = 0x1000, .kind = BT_BR_COND },
};

static void bts_xml_all(void **state)
{
	struct gs_buf b;

	gs_buf_init(&b);
	assert_int_equal(gs_btrace_bts_xml(br3, 3, 0x1004, 0, &b), 0);
	assert_non_null(strstr(b.data,
		"<btrace version=\"1.0\">\n"
		"<block begin=\"0x1000\" end=\"0x1004\"/>\n"
		"<block begin=\"0x1015\" end=\"0x1020\"/>\n"
		"<block begin=\"0x2000\" end=\"0x2008\"/>\n"
		"</btrace>\n"));
	gs_buf_release(&b);
}

static void bts_xml_delta(void **state)
{
	struct gs_buf b;

	gs_buf_init(&b);
	assert_int_equal(gs_btrace_bts_xml(br3, 3, 0x1004, 1, &b), 0);
	assert_non_null(strstr(b.data,
		"<block begin=\"0x2000\" end=\"0x2008\"/>\n"
		"<block begin=\"0x0\" end=\"0x1010\"/>\n</btrace>"));
	gs_buf_reset(&b);
	/* nothing new: the pc alone */
	assert_int_equal(gs_btrace_bts_xml(NULL, 0, 0x1004, 1, &b), 0);
	assert_non_null(strstr(b.data, "<block begin=\"0x0\" end=\"0x1004\"/>"));
	gs_buf_release(&b);
}

static void bts_xml_gap(void **state)
{
	struct bt_branch br[4];
	struct gs_buf b;

	memcpy(br, br3, sizeof(br3));
	br[3] = br[2];
	br[2] = (struct bt_branch){ .to = 0x1015, .kind = BT_BR_GAP,
				    .gap = BT_GAP_OVERFLOW };
	gs_buf_init(&b);
	assert_int_equal(gs_btrace_bts_xml(br, 4, 0x1004, 0, &b), 0);
	assert_non_null(strstr(b.data, "<block begin=\"0x1000\" end=\"0x1004\"/>\n</btrace>"));
	gs_buf_reset(&b);
	assert_int_equal(gs_btrace_bts_xml(br, 4, 0x1004, 1, &b), -bte_torn);
	gs_buf_release(&b);
}

static void pt_xml(void **state)
{
	uint8_t raw[] = { 0x02, 0x82, 0xab };
	struct bt_capture cap = { .format = BT_FMT_PT, .data = raw,
				  .size = sizeof(raw) };
	struct gs_buf b;

	cap.cpu.vendor = BT_CPU_INTEL;
	cap.cpu.family = 6;
	cap.cpu.model = 0x55;
	cap.cpu.stepping = 4;
	gs_buf_init(&b);
	assert_int_equal(gs_btrace_pt_xml(&cap, &b), 0);
	assert_non_null(strstr(b.data, "<pt>\n<pt-config>\n<cpu vendor=\"GenuineIntel\" "
				       "family=\"6\" model=\"85\" stepping=\"4\"/>"));
	assert_non_null(strstr(b.data, "<raw>\n0282ab\n</raw>"));
	gs_buf_release(&b);
}

/* ---- the server over a fake target ---- */

#define TID 100
#define TID2 200	/* a second thread, where a test wants one */

struct fake {
	struct bt_ring *ring;
	int two;		/* TID2 exists too */
	pid_t stop_tid;		/* the thread resume() stops, 0: TID */
	uint64_t pc;
	uint8_t mem[256];	/* at 0x1000 */
	int resumed;
	struct bt_resume last[4];
	size_t nlast;
	int ns_pending;		/* non-stop: TID2's stop poll() gives, 0: none */
};

static pid_t f_pid(void *ctx) { return TID; }
static int f_launched(void *ctx) { return 1; }

static size_t f_threads(void *ctx, pid_t *tids, size_t max)
{
	struct fake *f = ctx;

	if (max)
		tids[0] = TID;
	if (f->two && max > 1)
		tids[1] = TID2;
	return f->two ? 2 : 1;
}

static int f_get_regs(void *ctx, pid_t tid, struct gs_regs *r)
{
	struct fake *f = ctx;

	if (tid != TID && (tid != TID2 || !f->two))
		return -bte_noent;
	memset(r, 0, sizeof(*r));
	r->gp.rip = f->pc;
	r->gp.rax = 0x1122334455667788ull;
	return 0;
}

static int f_set_regs(void *ctx, pid_t tid, const struct gs_regs *r,
		      const struct gs_regs *old)
{
	((struct fake *)ctx)->pc = r->gp.rip;
	return 0;
}

static ssize_t f_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr < 0x1000 || addr >= 0x1100)
		return -bte_io;
	if (len > 0x1100 - addr)
		len = 0x1100 - addr;
	memcpy(buf, f->mem + (addr - 0x1000), len);
	return (ssize_t)len;
}

static ssize_t f_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr < 0x1000 || addr + len > 0x1100)
		return -bte_io;
	memcpy(f->mem + (addr - 0x1000), buf, len);
	return (ssize_t)len;
}

static int f_resume(void *ctx, const struct bt_resume *r, size_t n,
		    struct bt_stop *stop)
{
	struct fake *f = ctx;

	f->resumed++;
	f->nlast = n < 4 ? n : 4;
	memcpy(f->last, r, f->nlast * sizeof(*r));
	memset(stop, 0, sizeof(*stop));
	stop->reason = BT_STOP_SIGNAL;
	stop->signal = SIGUSR1;
	stop->tid = f->stop_tid ? f->stop_tid : TID;
	return 0;
}

/* The siginfo of the signal resume() stopped with: its thread's only. */
static int f_siginfo(void *ctx, pid_t tid, struct gs_buf *out)
{
	struct fake *f = ctx;
	siginfo_t si;

	if (!f->resumed || tid != (f->stop_tid ? f->stop_tid : TID))
		return -1;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_TKILL;
	gs_buf_add(out, &si, sizeof(si));
	return 0;
}

static int f_formats(void *ctx) { return GS_BT_BTS; }

static int f_trace_read(void *ctx, pid_t tid, uint64_t *pos,
			struct bt_capture *cap)
{
	struct fake *f = ctx;
	struct bt_ring_view v;
	int lost = 0;

	bt_ring_view_init(&v, f->ring);
	if (pos && !cap) {
		*pos = v.head;
		return 0;
	}
	memset(cap, 0, sizeof(*cap));
	cap->format = BT_FMT_SOFT;
	cap->tid = tid;
	if (pos && *pos < v.tail)
		lost = 1;
	else if (pos)
		v.tail = *pos;
	bt_ring_copy(&v, &cap->data, &cap->size);
	if (pos)
		*pos = v.head;
	return lost;
}

static size_t f_size(void *ctx) { return 4096; }

static const struct gs_target_ops fake_ops = {
	.pid = f_pid, .launched = f_launched, .threads = f_threads,
	.get_regs = f_get_regs, .set_regs = f_set_regs, .read = f_read,
	.write = f_write, .resume = f_resume, .trace_formats = f_formats,
	.trace_read = f_trace_read, .trace_size = f_size,
	.siginfo = f_siginfo,
};

/* Non-stop: TID is stopped, TID2 runs; resuming TID2 makes it hit a
 * breakpoint, stopping it makes it stop (signal 0). */
static int f_ns_resume(void *ctx, const struct bt_resume *r, size_t n)
{
	struct fake *f = ctx;

	f->resumed++;
	f->nlast = n < 4 ? n : 4;
	memcpy(f->last, r, f->nlast * sizeof(*r));
	f->ns_pending = n && r[0].action == BT_RESUME_STOP ? BT_STOP_INTERRUPT :
							     BT_STOP_BREAK;
	return 0;
}

static int f_ns_stop(void *ctx, pid_t tid)
{
	((struct fake *)ctx)->ns_pending = BT_STOP_INTERRUPT;
	return 0;
}

static int f_ns_poll(void *ctx, struct bt_stop *stop)
{
	struct fake *f = ctx;

	memset(stop, 0, sizeof(*stop));
	if (!f->ns_pending)
		return 0;
	stop->reason = f->ns_pending;
	stop->tid = TID2;
	f->ns_pending = 0;
	return 1;
}

static int f_thread_state(void *ctx, pid_t tid)
{
	return tid == TID ? BT_THREAD_STOPPED : BT_THREAD_RUNNING;
}

static const struct gs_target_ops fake_ns_ops = {
	.pid = f_pid, .launched = f_launched, .threads = f_threads,
	.get_regs = f_get_regs, .set_regs = f_set_regs, .read = f_read,
	.write = f_write, .resume = f_resume, .trace_formats = f_formats,
	.trace_read = f_trace_read, .trace_size = f_size,
	.ns_resume = f_ns_resume, .ns_stop = f_ns_stop, .ns_poll = f_ns_poll,
	.thread_state = f_thread_state,
};

static void branch(struct fake *f, uint64_t from, uint64_t to, int kind)
{
	struct bt_rec_branch r = { .from = from, .to = to, .kind = kind };

	assert_int_equal(bt_ring_write(f->ring, BT_REC_BRANCH, &r.from,
				       sizeof(r) - sizeof(r.hdr)), 0);
}

/* The reply to @pkt (a copy: the server keeps its buffer). */
static const char *ask(struct gs_server *s, const char *pkt)
{
	static char out[65536];
	const struct gs_buf *reply;
	char *copy = strdup(pkt);

	gs_server_handle(s, copy, strlen(copy), &reply);
	free(copy);
	snprintf(out, sizeof(out), "%s", reply && reply->data ? reply->data : "");
	return out;
}

struct fixture {
	struct gs_server *s;
	struct fake f;
};

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	struct bt_stop first = { .reason = BT_STOP_STEP, .tid = TID };

	assert_non_null(x);
	x->f.ring = bt_ring_alloc(1024);
	x->f.pc = 0x1004;
	assert_int_equal(gs_server_alloc(&x->s, &fake_ops, &x->f, -1, -1,
					 &first), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;

	gs_server_free(x->s);
	bt_ring_free(x->f.ring);
	free(x);
	return 0;
}

static void server_basics(void **state)
{
	struct gs_server *s = ((struct fixture *)*state)->s;

	assert_non_null(strstr(ask(s, "qSupported:multiprocess+;swbreak+"),
			       "Qbtrace:bts+"));
	assert_null(strstr(ask(s, "qSupported"), "Qbtrace:pt+"));
	assert_string_equal(ask(s, "qC"), "QC64");
	assert_string_equal(ask(s, "?"), "T05thread:64;06:0000000000000000;"
					 "07:0000000000000000;10:0410000000000000;");
	assert_string_equal(ask(s, "qAttached"), "0");
	assert_string_equal(ask(s, "qfThreadInfo"), "m64");
	assert_string_equal(ask(s, "qsThreadInfo"), "l");
	assert_string_equal(ask(s, "Hg64"), "OK");
	assert_string_equal(ask(s, "Hg65"), "E03");
	assert_string_equal(ask(s, "T64"), "OK");
	assert_string_equal(ask(s, "p0"), "8877665544332211");
	assert_string_equal(ask(s, "P10=0810000000000000"), "OK");
	assert_string_equal(ask(s, "p10"), "0810000000000000");
	assert_string_equal(ask(s, "p3b"), "0000000000000000");
	/* no AVX here: no ymm registers */
	assert_string_equal(ask(s, "p4c"), "E16");
	assert_string_equal(ask(s, "p999"), "E16");
	assert_int_equal(strlen(ask(s, "g")), 2 * (816 - 256));
	assert_string_equal(ask(s, "M1000,2:abcd"), "OK");
	assert_string_equal(ask(s, "m1000,3"), "abcd00");
	assert_string_equal(ask(s, "m10ff,4"), "00");
	assert_string_equal(ask(s, "m0,4"), "E0e");
	assert_string_equal(ask(s, "X1002,1:}]"), "OK");
	assert_string_equal(ask(s, "m1002,1"), "7d");
	assert_string_equal(ask(s, "vCont?"), "vCont;c;C;s;S;t");
	assert_string_equal(ask(s, "vMustReplyEmpty"), "");
	assert_string_equal(ask(s, "qXfer:features:read:target.xml:0,10"),
			    "m<?xml version=\"1");
	assert_string_equal(ask(s, "qXfer:nothing:read::0,10"), "");
	assert_string_equal(ask(s, "Z1,1000,1"), "");
}

static void server_vcont(void **state)
{
	struct fixture *x = *state;
	struct gs_server *s = x->s;

	ask(s, "qSupported:multiprocess+");
	assert_string_equal(ask(s, "vCont;s:p64.64;c"),
			    "T1ethread:p64.64;06:0000000000000000;"
			    "07:0000000000000000;10:0410000000000000;");
	assert_int_equal(x->f.nlast, 2);
	assert_int_equal(x->f.last[0].tid, TID);
	assert_int_equal(x->f.last[0].action, BT_RESUME_STEP);
	assert_int_equal(x->f.last[1].tid, 0);
	assert_int_equal(x->f.last[1].action, BT_RESUME_CONT);
	assert_string_equal(ask(s, "vCont;C1e:p64.64;c"), "T1ethread:p64.64;06:0000000000000000;"
			    "07:0000000000000000;10:0410000000000000;");
	assert_int_equal(x->f.last[0].signal, SIGUSR1);
	assert_string_equal(ask(s, "vCont;x"), "E16");
	assert_string_equal(ask(s, "vCont;C1e:p64.64;C999"), "E16");
	assert_string_equal(ask(s, "vCont"), "");
}

/*
 * The thread of a stop reply becomes the general thread (GDB sends no Hg
 * for it): what a later packet about "the current thread" means --
 * registers, siginfo, the branch trace.
 */
static void server_stop_thread(void **state)
{
	struct fixture *x = *state;
	struct gs_server *s = x->s;
	const char *r;

	x->f.two = 1;
	assert_string_equal(ask(s, "qfThreadInfo"), "m64,c8");
	assert_string_equal(ask(s, "qXfer:siginfo:read::0,200"), "E01");
	assert_string_equal(ask(s, "Hgc8"), "OK");
	assert_string_equal(ask(s, "qC"), "QCc8");
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");	/* for c8 */
	r = ask(s, "vCont;c");
	assert_memory_equal(r, "T1ethread:64;", 13);	/* SIGUSR1 */
	assert_string_equal(ask(s, "qC"), "QC64");
	/* 64's trace: never enabled (c8's was) */
	assert_string_equal(ask(s, "qXfer:btrace:read:all:0,1000"),
			    "E.Btrace not enabled.");
	r = ask(s, "qXfer:siginfo:read::0,200");
	assert_int_equal(r[0], 'l');
	assert_int_equal(r[1], SIGUSR1);	/* si_signo, then zeroes */
	assert_string_equal(ask(s, "qXfer:siginfo:read:x:0,200"), "E01");
	assert_string_equal(ask(s, "Hgc8"), "OK");
	assert_string_equal(ask(s, "qXfer:siginfo:read::0,200"), "E01");
	assert_non_null(strstr(ask(s, "qSupported"), "qXfer:siginfo:read+"));
}

static void server_btrace(void **state)
{
	struct gs_server *s = ((struct fixture *)*state)->s;
	const char *r;

	ask(s, "qSupported");
	assert_string_equal(ask(s, "qXfer:btrace:read:all:0,1000"),
			    "E.Btrace not enabled.");
	assert_string_equal(ask(s, "Qbtrace-conf:bts:size=0x100000"), "OK");
	assert_string_equal(ask(s, "Qbtrace:pt"),
			    "E.Target does not support branch tracing.");
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	assert_string_equal(ask(s, "Qbtrace:bts"), "E.Btrace already enabled.");
	r = ask(s, "qXfer:btrace-conf:read::0,1000");
	assert_non_null(strstr(r, "<bts size=\"0x1000\"/>"));
	assert_string_equal(ask(s, "qXfer:btrace:read:bogus:0,1000"),
			    "E.Bad annex.");
	assert_string_equal(ask(s, "Qbtrace:off"), "OK");
	assert_string_equal(ask(s, "Qbtrace:off"), "E.Btrace not enabled.");
}

/* The reads against the ring: delta is what is new, overflow is told. */
static void server_btrace_delta(void **state)
{
	struct fake f;
	struct gs_server *s;
	struct bt_stop first = { .reason = BT_STOP_STEP, .tid = TID };
	const char *r;
	int i;

	memset(&f, 0, sizeof(f));
	f.ring = bt_ring_alloc(1024);	/* 32 records of 32 bytes */
	f.pc = 0x1004;
	branch(&f, 0x500, 0x600, BT_BR_CALL);	/* before enabling */
	assert_int_equal(gs_server_alloc(&s, &fake_ops, &f, -1, -1, &first), 0);
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	/* nothing since: the delta is the pc alone */
	r = ask(s, "qXfer:btrace:read:delta:0,1000");
	assert_non_null(strstr(r, "<btrace version=\"1.0\">\n"
				  "<block begin=\"0x0\" end=\"0x1004\"/>\n</btrace>"));
	branch(&f, 0x1010, 0x2000, BT_BR_CALL);
	branch(&f, 0x2008, 0x1015, BT_BR_RET);
	r = ask(s, "qXfer:btrace:read:delta:0,1000");
	assert_non_null(strstr(r, "<block begin=\"0x1015\" end=\"0x1004\"/>\n"
				  "<block begin=\"0x2000\" end=\"0x2008\"/>\n"
				  "<block begin=\"0x0\" end=\"0x1010\"/>\n</btrace>"));
	/* a read in pieces serves the same document */
	r = ask(s, "qXfer:btrace:read:all:0,10");
	assert_string_equal(r, "m<!DOCTYPE btrace");
	r = ask(s, "qXfer:btrace:read:all:10,1000");
	assert_non_null(strstr(r, "<block begin=\"0x2000\" end=\"0x2008\"/>\n</btrace>"));
	assert_null(strstr(r, "0x500"));	/* before enabling */
	assert_int_equal(r[0], 'l');
	/* nothing new */
	r = ask(s, "qXfer:btrace:read:new:0,1000");
	assert_null(strstr(r, "<block"));
	/* the ring wraps: the delta overflows; new and all still read */
	for (i = 0; i < 40; i++)
		branch(&f, 0x3000 + i, 0x4000 + i, BT_BR_JUMP);
	assert_string_equal(ask(s, "qXfer:btrace:read:delta:0,1000"),
			    "E.Overflow.");
	r = ask(s, "qXfer:btrace:read:new:0,1000");
	assert_non_null(strstr(r, "<block begin=\"0x4027\" end=\"0x1004\"/>"));
	gs_server_free(s);
	bt_ring_free(f.ring);
}

/*
 * Qbtrace-conf:bts:size: rounded up to a power-of-two number of pages
 * (at most the ring), reported, and the history it would hold is all
 * that is shown; threads enabled before it keep theirs.
 */
static void server_btrace_size(void **state)
{
	struct fixture *x = *state;
	struct gs_server *s = x->s;
	const char *r;
	int i;

	x->f.two = 1;
	assert_string_equal(ask(s, "Hgc8"), "OK");
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	assert_string_equal(ask(s, "Qbtrace-conf:bts:size=0x1"), "OK");
	assert_string_equal(ask(s, "Hg64"), "OK");
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	r = ask(s, "qXfer:btrace-conf:read::0,1000");
	assert_non_null(strstr(r, "<bts size=\"0x1000\"/>"));
	assert_string_equal(ask(s, "Hgc8"), "OK");
	r = ask(s, "qXfer:btrace-conf:read::0,1000");
	assert_non_null(strstr(r, "<bts size=\"0x1000\"/>"));	/* the ring */
	/* 4096 bytes of BTS: 170 branches; the ring holds 32 records */
	assert_string_equal(ask(s, "Qbtrace-conf:bts:size=0x1001"), "OK");
	assert_string_equal(ask(s, "Hg64"), "OK");
	assert_string_equal(ask(s, "Qbtrace:off"), "OK");
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	r = ask(s, "qXfer:btrace-conf:read::0,1000");
	assert_non_null(strstr(r, "<bts size=\"0x1000\"/>"));	/* at most */
	assert_string_equal(ask(s, "Qbtrace:off"), "OK");
	/* 24 bytes a branch: 4096 bytes hold the newest 170 of 200 */
	bt_ring_free(x->f.ring);
	x->f.ring = bt_ring_alloc(16384);
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	for (i = 0; i < 200; i++)
		branch(&x->f, 0x3000 + i, 0x4000 + i, BT_BR_JUMP);
	assert_string_equal(ask(s, "qXfer:btrace:read:delta:0,1000"),
			    "E.Overflow.");
	r = ask(s, "qXfer:btrace:read:all:0,ffff");
	assert_non_null(strstr(r, "<block begin=\"0x40c7\" end=\"0x1004\"/>\n"));
	assert_non_null(strstr(r, "<block begin=\"0x401e\" end=\"0x301f\"/>\n"
				  "</btrace>"));
	assert_null(strstr(r, "\"0x401d\""));
}

/*
 * gs_server_keep(): GDB going away leaves the process for the next
 * connection, which gets the same stop; monitor exit ends the server.
 */
static void server_reconnect(void **state)
{
	struct fake f;
	struct gs_server *s;
	struct bt_stop first = { .reason = BT_STOP_STEP, .tid = TID };
	char buf[256], exit_pkt[] = "qRcmd,65786974";	/* "exit" */
	const struct gs_buf *reply;
	ssize_t n;
	int sv[2];

	memset(&f, 0, sizeof(f));
	f.ring = bt_ring_alloc(1024);
	f.pc = 0x1004;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(gs_server_alloc(&s, &fake_ops, &f, sv[0], sv[0], &first), 0);
	gs_server_keep(s);
	assert_string_equal(ask(s, "Qbtrace:bts"), "OK");
	close(sv[1]);
	assert_int_equal(gs_serve(s), GS_END_AWAIT);
	close(sv[0]);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	gs_server_reconnect(s, sv[0], sv[0]);
	assert_int_equal(write(sv[1], "$?#3f", 5), 5);
	shutdown(sv[1], SHUT_WR);
	assert_int_equal(gs_serve(s), GS_END_AWAIT);
	n = read(sv[1], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "$T05thread:64;"));
	/* the recording stayed */
	assert_string_equal(ask(s, "Qbtrace:bts"), "E.Btrace already enabled.");
	/* monitor exit: the session is over */
	assert_int_equal(gs_server_handle(s, exit_pkt, strlen(exit_pkt), &reply), 1);
	assert_string_equal(reply->data, "OK");
	close(sv[0]);
	close(sv[1]);
	gs_server_free(s);
	bt_ring_free(f.ring);
}

/* "$payload#xx" appended to @out. */
static void put_frame(char *out, const char *payload)
{
	unsigned sum = 0;
	size_t i;

	for (i = 0; payload[i]; i++)
		sum += (uint8_t)payload[i];
	sprintf(out + strlen(out), "$%s#%02x", payload, sum & 0xff);
}

/* Does @hay hold each of @needles, in that order? */
static int in_order(const char *hay, const char *const *needles)
{
	for (; *needles; needles++) {
		hay = strstr(hay, *needles);
		if (!hay)
			return 0;
		hay += strlen(*needles);
	}
	return 1;
}

/*
 * Non-stop over a connection: vCont answers OK at once, each stop comes
 * as a %Stop notification and vStopped takes the queue; ? lists the
 * stopped threads only; vCont;t's stop is signal 0.  A target that
 * cannot run (no ns ops) and vStopped in all-stop are refused.
 */
static void server_nonstop(void **state)
{
	static const char *const want[] = {
		"$OK#", "$T05thread:64;", "$OK#", "$OK#", "%Stop:T05thread:c8;",
		"$OK#", "$OK#", "%Stop:T00thread:c8;", "$OK#", NULL,
	};
	struct bt_stop first = { .reason = BT_STOP_STEP, .tid = TID };
	struct gs_server *s;
	struct fake f;
	char in[512] = "", out[4096];
	size_t len = 0;
	ssize_t n;
	int sv[2];

	memset(&f, 0, sizeof(f));
	f.ring = bt_ring_alloc(1024);
	f.pc = 0x1004;
	f.two = 1;
	assert_int_equal(gs_server_alloc(&s, &fake_ops, &f, -1, -1, &first), 0);
	assert_string_equal(ask(s, "QNonStop:1"), "E16");
	assert_string_equal(ask(s, "vStopped"), "E16");
	assert_string_equal(ask(s, "QNonStop:0"), "OK");
	gs_server_free(s);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(gs_server_alloc(&s, &fake_ns_ops, &f, sv[0], sv[0],
					 &first), 0);
	put_frame(in, "QNonStop:1");
	put_frame(in, "?");
	put_frame(in, "vStopped");
	put_frame(in, "vCont;c:c8");
	put_frame(in, "vStopped");
	put_frame(in, "vCont;t:c8");
	put_frame(in, "vStopped");
	assert_int_equal(write(sv[1], in, strlen(in)), (ssize_t)strlen(in));
	shutdown(sv[1], SHUT_WR);
	gs_serve(s);
	close(sv[0]);
	while (len < sizeof(out) - 1 &&
	       (n = read(sv[1], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	assert_true(in_order(out, want));
	assert_int_equal(f.resumed, 2);
	assert_int_equal(f.last[0].tid, TID2);
	assert_int_equal(f.last[0].action, BT_RESUME_STOP);
	close(sv[1]);
	gs_server_free(s);
	bt_ring_free(f.ring);
}

/* ---- extended-remote: a spawner of fake processes ---- */

struct spawns {
	struct fake f;
	int runs, attaches, released;
	char prog[64];
};

static int sp_run(void *arg, char *const *argv, struct gs_proc *p,
		  char *why, size_t len)
{
	struct spawns *sp = arg;

	if (strcmp(argv[0], "prog")) {
		snprintf(why, len, "cannot run '%s': program not found", argv[0]);
		return -bte_noent;
	}
	snprintf(sp->prog, sizeof(sp->prog), "%s %s", argv[0],
		 argv[1] ? argv[1] : "-");
	sp->runs++;
	p->ops = &fake_ops;
	p->ctx = &sp->f;
	p->first.reason = BT_STOP_STEP;
	p->first.tid = TID;
	return 0;
}

static int sp_attach(void *arg, pid_t pid, struct gs_proc *p, char *why,
		     size_t len)
{
	struct spawns *sp = arg;

	if (pid != TID) {
		snprintf(why, len, "cannot attach to %d: no such process", pid);
		return -bte_noent;
	}
	sp->attaches++;
	return sp_run(arg, (char *[]){ "prog", NULL }, p, why, len);
}

static void sp_release(void *arg, struct gs_proc *p)
{
	((struct spawns *)arg)->released++;
}

static void server_extended(void **state)
{
	struct spawns sp = { .f = { .pc = 0x1004 } };
	const struct gs_spawner spawner = { sp_run, sp_attach, sp_release, &sp };
	struct gs_server *s;

	/* --multi: no process; extended only after "!" */
	assert_int_equal(gs_server_alloc(&s, NULL, NULL, -1, -1, NULL), 0);
	assert_int_equal(gs_server_extend(s, &spawner, NULL), 0);
	assert_non_null(strstr(ask(s, "qSupported:multiprocess+"),
			       "Qbtrace:bts+"));
	assert_string_equal(ask(s, "vRun;70726f67"), "");
	assert_string_equal(ask(s, "!"), "OK");
	assert_string_equal(ask(s, "?"), "W00");
	assert_string_equal(ask(s, "qAttached"), "E01");
	assert_string_equal(ask(s, "qfThreadInfo"), "l");
	assert_string_equal(ask(s, "vCont;c"), "E03");
	assert_non_null(strstr(ask(s, "vRun;"), "E.no program to run"));
	assert_string_equal(ask(s, "vRun;78"),
			    "E.cannot run 'x': program not found");
	assert_string_equal(ask(s, "vRun;7"), "E16");
	/* vRun;prog;arg: the first stop */
	assert_string_equal(ask(s, "vRun;70726f67;617267"),
			    "T05thread:p64.64;06:0000000000000000;"
			    "07:0000000000000000;10:0410000000000000;");
	assert_string_equal(sp.prog, "prog arg");
	assert_string_equal(ask(s, "qAttached:64"), "0");
	assert_string_equal(ask(s, "qAttached:65"), "E01");
	assert_string_equal(ask(s, "vKill;65"), "E03");
	assert_string_equal(ask(s, "vKill;64"), "OK");
	assert_int_equal(sp.released, 1);
	assert_string_equal(ask(s, "?"), "X09;process:64");
	/* an empty program: the last one run, with the arguments now */
	assert_int_equal(strncmp(ask(s, "vRun;"), "T05", 3), 0);
	assert_string_equal(sp.prog, "prog -");
	/* R: again, no reply */
	assert_string_equal(ask(s, "R00"), "");
	assert_int_equal(sp.runs, 3);
	assert_int_equal(sp.released, 2);
	/* detach goes on without a process; attach */
	assert_string_equal(ask(s, "D;65"), "E03");
	assert_string_equal(ask(s, "D;64"), "OK");
	assert_int_equal(sp.released, 3);
	assert_string_equal(ask(s, "?"), "W00;process:64");
	assert_string_equal(ask(s, "vAttach;65"),
			    "E.cannot attach to 101: no such process");
	assert_int_equal(strncmp(ask(s, "vAttach;64"), "T05", 3), 0);
	assert_int_equal(sp.attaches, 1);
	gs_server_free(s);
	assert_int_equal(sp.released, 4);
}

/* Without "!" the session ends with its process, which it keeps. */
/* Without multiprocess, one process at a time: a second run is refused. */
static void server_one_process(void **state)
{
	struct spawns sp = { .f = { .pc = 0x1004 } };
	const struct gs_spawner spawner = { sp_run, sp_attach, sp_release, &sp };
	struct gs_server *s;

	sp.f.ring = bt_ring_alloc(1024);
	assert_int_equal(gs_server_alloc(&s, NULL, NULL, -1, -1, NULL), 0);
	assert_int_equal(gs_server_extend(s, &spawner, NULL), 0);
	ask(s, "qSupported");
	assert_string_equal(ask(s, "!"), "OK");
	assert_int_equal(strncmp(ask(s, "vRun;70726f67"), "T05thread:64;", 13), 0);
	assert_string_equal(ask(s, "vRun;70726f67"),
			    "E.already debugging process 100");
	assert_int_equal(sp.runs, 1);
	gs_server_free(s);
	assert_int_equal(sp.released, 1);
	bt_ring_free(sp.f.ring);
}

static void server_not_extended(void **state)
{
	struct spawns sp = { .f = { .pc = 0x1004 } };
	const struct gs_spawner spawner = { sp_run, sp_attach, sp_release, &sp };
	struct bt_stop first = { .reason = BT_STOP_STEP, .tid = TID };
	char *argv[] = { "prog", NULL };
	const struct gs_buf *reply;
	struct gs_server *s;
	char pkt[] = "vKill;64";

	assert_int_equal(gs_server_alloc(&s, &fake_ops, &sp.f, -1, -1, &first), 0);
	assert_int_equal(gs_server_extend(s, &spawner, argv), 0);
	assert_string_equal(ask(s, "R00"), "");
	assert_string_equal(ask(s, "vAttach;64"), "");
	assert_int_equal(sp.runs, 0);
	assert_int_equal(gs_server_handle(s, pkt, strlen(pkt), &reply), 1);
	assert_int_equal(sp.released, 0);
	gs_server_free(s);
	assert_int_equal(sp.released, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_packet),
		cmocka_unit_test(parse_packet_badsum),
		cmocka_unit_test(parse_packet_toolong),
		cmocka_unit_test(escape_roundtrip),
		cmocka_unit_test(signals_roundtrip),
		cmocka_unit_test(regs_layout),
		cmocka_unit_test(bts_xml_all),
		cmocka_unit_test(bts_xml_delta),
		cmocka_unit_test(bts_xml_gap),
		cmocka_unit_test(pt_xml),
		cmocka_unit_test_setup_teardown(server_basics, setup, teardown),
		cmocka_unit_test_setup_teardown(server_vcont, setup, teardown),
		cmocka_unit_test_setup_teardown(server_stop_thread, setup,
						teardown),
		cmocka_unit_test_setup_teardown(server_btrace_size, setup, teardown),
		cmocka_unit_test_setup_teardown(server_btrace, setup, teardown),
		cmocka_unit_test(server_btrace_delta),
		cmocka_unit_test(server_reconnect),
		cmocka_unit_test(server_nonstop),
		cmocka_unit_test(server_extended),
		cmocka_unit_test(server_one_process),
		cmocka_unit_test(server_not_extended),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
