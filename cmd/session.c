// SPDX-License-Identifier: MIT
/*
 * The interactive session: commands over a stopped bt_target, from one
 * table.  The decoded history of each thread is cached per stop, so that
 * repeated `last`, `calls` and `insn` cost no new decode.
 *
 * Input comes from readline on a terminal (callback interface, so that a
 * signal wakes the prompt through pselect) or from a plain line reader on
 * stdin.  Signal handlers only set flags or call bt_target_interrupt();
 * the loop looks at the flags and ends the session cleanly.
 *
 * Here: signals, the cache, output, stops and the session's life; the
 * commands are in session_cmds.c, their table, parsing, completion and
 * the input loop in session_input.c (session_int.h between them).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "opts.h"
#include "print.h"
#include "session.h"
#include "session_int.h"
#include "signals.h"
#include "timeline.h"
#include "view.h"

/* ---- signals ---- */

volatile sig_atomic_t sig_quit;	 /* the signal that asked to quit */
volatile sig_atomic_t sig_cancel; /* SIGINT at the prompt */
static volatile sig_atomic_t sig_tracing; /* inside bt_target_cont() */
volatile sig_atomic_t sig_prompt; /* waiting at a terminal prompt */
static struct bt_target *volatile sig_target;

static void on_signal(int sig)
{
	if (sig == SIGINT && sig_tracing) {
		bt_target_interrupt(sig_target);
		return;
	}
	if (sig == SIGINT && sig_prompt) {
		sig_cancel = 1;
		return;
	}
	sig_quit = sig;
	if (sig_tracing)
		bt_target_interrupt(sig_target);
}

void bt_session_signals(void)
{
	cmd_catch_signals(on_signal);
}

int bt_session_quit_requested(void)
{
	return sig_quit != 0;
}

/* ---- symbols, code and the history cache ---- */

static ssize_t sess_read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct bt_session *s = ctx;
	ssize_t n;

	if (s->state == SESS_GONE)
		return 0;
	n = bt_target_read_thread(s->target, s->cur, addr, buf, len);
	return n < 0 ? 0 : n;
}

/*
 * The process of the current thread: under --follow-fork a child's, whose
 * symbols and code are its own once it has exec'd.
 */
static pid_t sess_cur_pid(const struct bt_session *s)
{
	pid_t pid = bt_target_thread_pid(s->target, s->cur);

	return pid ? pid : s->pid;
}

/* The same, the symbols and the image of another process dropped. */
static pid_t sess_view_pid(struct bt_session *s)
{
	pid_t pid = sess_cur_pid(s);

	if (pid != s->view_pid) {
		bt_image_free(s->image);
		s->image = NULL;
		s->symtab_stale = 1;
		s->view_pid = pid;
	}
	return pid;
}

struct bt_symtab *sess_symtab(struct bt_session *s)
{
	struct bt_symtab *st;
	pid_t pid = sess_view_pid(s);

	if (s->symtab_stale && s->state != SESS_GONE &&
	    bt_symtab_from_pid_opts(&st, pid, debuginfo_opts()) == 0) {
		bt_symtab_free(s->symtab);
		s->symtab = st;
	}
	s->symtab_stale = 0;
	return s->symtab;
}

/* The code image: the mappings at this stop, and live memory beyond. */
struct bt_image *sess_image(struct bt_session *s)
{
	pid_t pid = sess_view_pid(s);

	if (!s->image)
		s->image = view_image(s->state == SESS_GONE ? 0 : pid,
				      sess_read_mem, s);
	return s->image;
}

static ssize_t sess_read_code(void *ctx, uint64_t addr, void *buf,
			      size_t len)
{
	struct bt_image *img = sess_image(ctx);

	return img ? bt_image_read(img, addr, buf, len) : 0;
}

static void sess_cache_clear(struct bt_session *s)
{
	size_t i;

	for (i = 0; i < s->nthreads; i++) {
		bt_capture_release(&s->threads[i].cap);
		bt_history_free(s->threads[i].hist);
	}
	free(s->threads);
	s->threads = NULL;
	s->nthreads = 0;
}

/* A new stop: everything cached describes the past. */
static void sess_invalidate(struct bt_session *s)
{
	sess_cache_clear(s);
	bt_image_free(s->image);
	s->image = NULL;
	s->symtab_stale = 1;
}

/* The trace of @tid at this stop, captured and decoded on first use. */
struct sess_thread *sess_thread(struct bt_session *s, pid_t tid)
{
	struct bt_decode_opts dopts = { .size = sizeof(dopts) };
	struct sess_thread *th, *n;
	size_t i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	n = realloc(s->threads, (s->nthreads + 1) * sizeof(*n));
	if (!n)
		return NULL;
	s->threads = n;
	th = &n[s->nthreads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->err = bt_target_capture(s->target, tid, &th->cap);
	if (th->err)
		return th;
	dopts.image = sess_image(s);
	th->err = bt_decode(&th->cap, &dopts, &th->hist);
	return th;
}

/* The decoded history of the current thread, or NULL after a message. */
struct sess_thread *sess_history(struct bt_session *s)
{
	struct sess_thread *th = sess_thread(s, s->cur);

	if (!th) {
		fprintf(stderr, "btrace: out of memory\n");
		return NULL;
	}
	if (th->err) {
		fprintf(stderr, "btrace: no trace for thread %d: %s\n", s->cur,
			bt_errstr(th->err));
		return NULL;
	}
	return th;
}

/* ---- output ---- */

/* The printer's view of this stop: its symbols and code. */
static void sess_pc(struct bt_session *s, struct print_ctx *pc, int json)
{
	memset(pc, 0, sizeof(*pc));
	pc->symtab = sess_symtab(s);
	pc->read = sess_read_code;
	pc->read_ctx = s;
	pc->dis = s->dis;
	pc->color = !json && s->color;
	pc->time = s->opts->o->time;
}

/* Where a message that is not a report goes: not into a JSON stream. */
static FILE *sess_notes(struct bt_session *s)
{
	return s->json ? stderr : s->out;
}

void __attribute__((format(printf, 2, 3)))
sess_note(struct bt_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(sess_notes(s), fmt, ap);
	va_end(ap);
}

/* "breakpoint 1 at 0x401136  main+0x4  t.c:12\n", in the notes. */
void sess_note_addr(struct bt_session *s, const char *what,
		    uint64_t addr)
{
	struct print_ctx pc;

	sess_pc(s, &pc, s->json);
	fputs(what, sess_notes(s));
	print_addr(sess_notes(s), &pc, addr);
	fputc('\n', sess_notes(s));
}

/* A report on this stop: @json adds the stop and the counts to it. */
void sess_print(struct bt_session *s, struct print_report *r,
		int json)
{
	struct print_ctx pc;
	struct bt_stats stats = { 0 };

	r->backend = bt_target_backend_name(s->target);
	r->pid = sess_cur_pid(s);
	r->root = s->pid;
	if (json && !r->stop && s->stop.reason != BT_STOP_NONE)
		r->stop = &s->stop;
	if (json && !r->stats) {
		bt_target_stats(s->target, &stats);
		r->stats = &stats;
	}
	sess_pc(s, &pc, json);
	pc.blocks = r->view == PRINT_BRANCHES && s->blocks;
	print_report(s->out, r, &pc, json);
	fflush(s->out);
}

/* ---- views of the current thread ---- */

/* Where the current thread is: the tail of its instructions ends there. */
static uint64_t sess_pc_of(struct bt_session *s, pid_t tid)
{
	uint64_t pc;

	if (s->state == SESS_LIVE && bt_target_pc(s->target, tid, &pc) == 0)
		return pc;
	return tid == s->stop.tid ? s->stop.pc : 0;
}

int sess_view_init(struct bt_session *s, struct view_thread *v,
		   int view, struct sess_thread *th, size_t last)
{
	struct view_src src = { .cap = &th->cap, .image = sess_image(s),
				.symtab = sess_symtab(s), .full = th->hist,
				.stop_pc = sess_pc_of(s, th->tid) };
	int err = view_thread_init(v, view, th->tid, &src, last);

	if (err)
		fprintf(stderr, "btrace: %s\n", bt_errstr(err));
	return err ? -1 : 0;
}

/* ---- stops ---- */

/* Show a stop as btrace run does: the thread's history, the stop. */
static void sess_show_stop(struct bt_session *s)
{
	struct print_report r = { .view = s->view, .stop = &s->stop };
	struct sess_thread *th = s->cur ? sess_thread(s, s->cur) : NULL;
	struct view_src src = { .image = sess_image(s),
				.symtab = sess_symtab(s) };
	struct view_thread v = { 0 };
	struct view_fault vf;
	struct bt_stats stats;
	struct bt_fault f;
	int fault;

	/* a fault its handler took before: where the crash began */
	fault = s->stop.tid > 0 &&
		bt_target_fault(s->target, s->stop.tid, &f) == 1;
	if (fault) {
		view_fault_init(&vf, s->view, &f, &src, s->last);
		r.fault = &vf.pf;
	}
	bt_target_stats(s->target, &stats);
	r.stats = &stats;
	if (th && !th->err && sess_view_init(s, &v, s->view, th, s->last) == 0)
		r.nthreads = 1;
	if (th && th->err) {
		v.pt.tid = th->tid;
		v.pt.err = th->err;
		r.nthreads = 1;
	}
	r.threads = &v.pt;
	sess_print(s, &r, s->json);
	view_thread_release(&v);
	if (fault) {
		view_fault_release(&vf);
		bt_fault_release(&f);
	}
}

static void sess_set_stop(struct bt_session *s, const struct bt_stop *stop)
{
	s->stop = *stop;
	sess_invalidate(s);
	if (stop->tid > 0)
		s->cur = stop->tid;
	if (stop->reason == BT_STOP_EXIT)
		s->state = SESS_EXITING;
	else if (stop->reason == BT_STOP_KILLED)
		s->state = SESS_GONE;
}

/* Trace until the next stop; SIGINT meanwhile interrupts the target. */
int sess_cont(struct bt_session *s)
{
	struct bt_stop stop = { 0 };
	int err;

	if (sig_quit)
		return 0;
	sig_target = s->target;
	sig_tracing = 1;
	err = bt_target_cont(s->target, &stop);
	sig_tracing = 0;
	if (err) {
		fprintf(stderr, "btrace: tracing process %d failed: %s (%s)\n",
			s->pid, bt_errstr(err), bt_errdetail());
		return -1;
	}
	sess_set_stop(s, &stop);
	sess_show_stop(s);
	return 0;
}

/* ---- commands ---- */
/* ---- the session ---- */

static void sess_release(struct bt_session *s)
{
	size_t i;

	sess_cache_clear(s);
	bt_image_free(s->image);
	bt_symtab_free(s->symtab);
	bt_disasm_free(s->dis);
	for (i = 0; i < s->nbps; i++)
		free(s->bps[i].spec);
	free(s->bps);
}

/* The end: leave the process as the commands said, or as quit does. */
static int sess_end(struct bt_session *s)
{
	char *no_args[] = { "quit", NULL };
	char sig[32];
	int ret = 0;

	if (sig_quit && s->state != SESS_GONE)
		fprintf(stderr, "btrace: %s: %s process %d\n",
			print_signame(sig_quit, sig, sizeof(sig)),
			s->opts->attached ? "detaching from" : "killing",
			s->pid);
	if (s->state != SESS_GONE)
		ret = do_quit(s, 1, no_args, 0);
	sig_target = NULL;
	bt_target_free(s->target);
	return ret;
}

static void sess_init(struct bt_session *s, struct bt_target *target,
		      const struct bt_session_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->target = target;
	s->opts = opts;
	s->pid = bt_target_pid(target);
	s->cur = s->pid;
	s->out = opts->out ? opts->out : stdout;
	s->last = opts->o->last;
	s->view = opts->o->view;
	s->json = opts->o->json;
	s->color = print_want_color(s->out, opts->o->no_color);
	s->symtab_stale = 1;
	s->interactive = isatty(STDIN_FILENO) && !opts->o->batch;
	if (bt_disasm_alloc(&s->dis))
		s->dis = NULL;
	sig_target = target;
}

static void sess_run_ex(struct bt_session *s)
{
	const struct cmd_opts *o = s->opts->o;
	size_t i;
	char *line;

	for (i = 0; i < o->nex && !s->done && !sig_quit; i++) {
		line = strdup(o->ex[i]);
		if (!line || sess_exec(s, line))
			s->failed = 1;
		free(line);
	}
}

int bt_session_main(struct bt_target *target,
		    const struct bt_session_opts *opts)
{
	const struct cmd_opts *o = opts->o;
	struct bt_session s;
	size_t i;
	int ret;

	sess_init(&s, target, opts);
	for (i = 0; i < o->nbreaks && !sig_quit; i++)
		if (sess_break(&s, o->breaks[i]))
			s.failed = s.done = 1;
	if (opts->cont_first && !s.done && sess_cont(&s))
		s.failed = s.done = 1;
	/* --save: at the first stop, before the -ex commands. */
	if (o->save && !s.done) {
		char *save[] = { "save", (char *)o->save, NULL };

		if (do_save(&s, 2, save, 0))
			s.failed = 1;
	}
	if ((o->timeline || o->svg) && !s.done &&
	    timeline_write_target(target, &s.stop, sess_symtab(&s),
				  &(struct timeline_out){ o->timeline, o->svg,
							  o->last,
							  o->timeline_counts })
	    < 0)
		s.failed = 1;
	sess_run_ex(&s);
	if (!o->batch && !s.done)
		sess_loop(&s);
	fflush(s.out);
	ret = sess_end(&s);
	sess_release(&s);
	if (sig_quit)
		return 128 + sig_quit;
	/* On a terminal a mistyped command is not a failure of btrace. */
	if (s.failed && !s.interactive)
		return EXIT_FAIL;
	return ret ? EXIT_FAIL : 0;
}
