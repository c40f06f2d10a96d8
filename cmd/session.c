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
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "opts.h"
#include "print.h"
#include "save.h"
#include "session.h"
#include "timeline.h"
#include "view.h"

#define SESS_PROMPT "(btrace) "
#define SESS_HISTORY_MAX 1000
#define SESS_MAX_ARGS 16

enum sess_state {
	SESS_LIVE,	/* stopped, can go on */
	SESS_EXITING,	/* stopped in its exit: continue lets it finish */
	SESS_GONE,	/* exited, killed or detached: history only */
};

/* /s (source lines: always shown now), /d (blocks), /j (JSON) */
enum sess_mods { MOD_SRC = 1, MOD_DIS = 2, MOD_JSON = 4 };

/* One thread's trace at the current stop, captured and decoded once. */
struct sess_thread {
	pid_t tid;
	int err;			/* capture or decode failure, or 0 */
	struct bt_capture cap;
	struct bt_history *hist;
};

struct sess_bp {
	int number;
	uint64_t addr;
	char *spec;
};

struct bt_session {
	struct bt_target *target;
	const struct bt_session_opts *opts;
	pid_t pid;
	pid_t cur;			/* the current thread */
	int state;			/* enum sess_state */
	struct bt_stop stop;
	struct sess_thread *threads;	/* cache of the current stop */
	size_t nthreads;
	struct bt_symtab *symtab;
	int symtab_stale;
	struct bt_image *image;
	struct bt_disasm *dis;
	struct sess_bp *bps;
	size_t nbps;
	FILE *out;			/* reports (-o, else stdout) */
	size_t last;			/* --last: shown at a stop */
	int view;			/* --calls, --insn: what a stop shows */
	int json;			/* --json: every report a document */
	int color;
	int blocks;			/* last/d */
	int interactive;
	int done;			/* leave the command loop */
	int failed;			/* a command failed */
};

struct sess_cmd {
	const char *name;
	int (*fn)(struct bt_session *s, int argc, char **argv, int mods);
	const char *help;		/* "usage\n  text"; NULL for aliases */
};

/* ---- signals ---- */

static volatile sig_atomic_t sig_quit;	 /* the signal that asked to quit */
static volatile sig_atomic_t sig_cancel; /* SIGINT at the prompt */
static volatile sig_atomic_t sig_tracing; /* inside bt_target_cont() */
static volatile sig_atomic_t sig_prompt; /* waiting at a terminal prompt */
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
	struct sigaction sa;

	/* No SA_RESTART: a blocking read or wait must see the signal. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* A closed pipe must not kill btrace with the target still held. */
	signal(SIGPIPE, SIG_IGN);
}

int bt_session_quit_requested(void)
{
	return sig_quit != 0;
}

static void sig_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* ---- symbols, code and the history cache ---- */

static ssize_t sess_read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct bt_session *s = ctx;
	ssize_t n;

	if (s->state == SESS_GONE)
		return 0;
	n = bt_target_read(s->target, addr, buf, len);
	return n < 0 ? 0 : n;
}

static struct bt_symtab *sess_symtab(struct bt_session *s)
{
	struct bt_symtab *st;

	if (s->symtab_stale && s->state != SESS_GONE &&
	    bt_symtab_from_pid_opts(&st, s->pid, debuginfo_opts()) == 0) {
		bt_symtab_free(s->symtab);
		s->symtab = st;
	}
	s->symtab_stale = 0;
	return s->symtab;
}

/* The code image: the mappings at this stop, and live memory beyond. */
static struct bt_image *sess_image(struct bt_session *s)
{
	if (!s->image)
		s->image = view_image(s->state == SESS_GONE ? 0 : s->pid,
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
static struct sess_thread *sess_thread(struct bt_session *s, pid_t tid)
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
static struct sess_thread *sess_history(struct bt_session *s)
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

static void __attribute__((format(printf, 2, 3)))
sess_note(struct bt_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(sess_notes(s), fmt, ap);
	va_end(ap);
}

/* "breakpoint 1 at 0x401136  main+0x4  t.c:12\n", in the notes. */
static void sess_note_addr(struct bt_session *s, const char *what,
			   uint64_t addr)
{
	struct print_ctx pc;

	sess_pc(s, &pc, s->json);
	fputs(what, sess_notes(s));
	print_addr(sess_notes(s), &pc, addr);
	fputc('\n', sess_notes(s));
}

/* A report on this stop: @json adds the stop and the counts to it. */
static void sess_print(struct bt_session *s, struct print_report *r,
		       int json)
{
	struct print_ctx pc;
	struct bt_stats stats = { 0 };

	r->backend = bt_target_backend_name(s->target);
	r->pid = s->pid;
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

/* ---- argument parsing ---- */

static int parse_count(const char *arg, size_t *n)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || end == arg || arg[0] == '-' || v == 0) {
		fprintf(stderr, "btrace: '%s' is not a positive count\n", arg);
		return -1;
	}
	*n = v;
	return 0;
}

/*
 * A window over @count entries, newest last: "N" (the last N), "-A,-B"
 * (from the A-th newest to the B-th newest), "-A" (the A-th newest on).
 * Sets [*first, *end) as array indices.
 */
static int parse_window(const char *arg, size_t def, size_t count,
			size_t *first, size_t *end)
{
	long long a, b;
	char *p;
	size_t n;

	if (!arg) {
		n = def < count ? def : count;
		*first = count - n;
		*end = count;
		return 0;
	}
	if (arg[0] != '-') {
		if (parse_count(arg, &n))
			return -1;
		n = n < count ? n : count;
		*first = count - n;
		*end = count;
		return 0;
	}
	a = strtoll(arg, &p, 10);
	b = -1;
	if (*p == ',')
		b = strtoll(p + 1, &p, 10);
	if (*p || a >= 0 || b >= 0 || b < a) {
		fprintf(stderr, "btrace: bad window '%s' (try -200,-100)\n", arg);
		return -1;
	}
	if ((unsigned long long)-a > count)
		a = -(long long)count;
	if ((unsigned long long)-b > count) {
		*first = *end = 0;
		return 0;
	}
	*first = count + a;
	*end = count + b + 1;
	return 0;
}

/* ---- views of the current thread: last, insn, calls ---- */

/* Where the current thread is: the tail of its instructions ends there. */
static uint64_t sess_pc_of(struct bt_session *s, pid_t tid)
{
	uint64_t pc;

	if (s->state == SESS_LIVE && bt_target_pc(s->target, tid, &pc) == 0)
		return pc;
	return tid == s->stop.tid ? s->stop.pc : 0;
}

static int sess_view_init(struct bt_session *s, struct view_thread *v,
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

/* last and calls: the last N (default as at the stop), or -A,-B. */
static int sess_window(struct bt_session *s, int view, int argc, char **argv,
		       int json)
{
	struct print_report r = { .view = view, .nthreads = 1 };
	struct sess_thread *th = sess_history(s);
	struct view_thread v = { 0 };
	size_t n;

	if (!th)
		return -1;
	if (argc > 2) {
		fprintf(stderr, "btrace: usage: %s [N | -A,-B]\n", argv[0]);
		return -1;
	}
	if (sess_view_init(s, &v, view, th, 0))
		return -1;
	n = view == PRINT_CALLS ? v.calls->count : th->hist->count;
	if (parse_window(argc > 1 ? argv[1] : NULL, s->last, n, &v.pt.first,
			 &v.pt.end)) {
		view_thread_release(&v);
		return -1;
	}
	v.pt.window = 1;
	r.threads = &v.pt;
	sess_print(s, &r, json);
	view_thread_release(&v);
	return 0;
}

/* The newest instructions, kept in a ring as they come. */
struct insn_ring {
	uint64_t *addr;		/* 0: a gap, its reason in gap[] */
	int *gap;
	size_t size, count;
};

static int ring_add(uint64_t addr, int gap, void *ctx)
{
	struct insn_ring *b = ctx;
	size_t at = b->count % b->size;

	b->addr[at] = addr;
	b->gap[at] = gap;
	b->count++;
	return sig_quit ? 1 : 0;
}

static int ring_replay(void *ctx, bt_insn_fn fn, void *fn_ctx)
{
	struct insn_ring *b = ctx;
	size_t i, n = b->count < b->size ? b->count : b->size;
	int ret = 0;

	for (i = b->count - n; i < b->count && !ret; i++)
		ret = fn(b->addr[i % b->size], b->gap[i % b->size], fn_ctx);
	return ret;
}

/* insn [N]: the last N instructions: those of the last N blocks, cut. */
static int sess_insns(struct bt_session *s, int argc, char **argv, int json)
{
	struct print_report r = { .view = PRINT_INSNS, .nthreads = 1 };
	struct insn_ring b = { .size = CMD_DEFAULT_LAST };
	struct sess_thread *th = sess_history(s);
	struct view_thread v = { 0 };
	int err = -1;

	if (!th || (argc > 1 && parse_count(argv[1], &b.size)))
		return -1;
	b.addr = calloc(b.size, sizeof(*b.addr));
	b.gap = calloc(b.size, sizeof(*b.gap));
	if (!b.addr || !b.gap) {
		fprintf(stderr, "btrace: out of memory\n");
		goto out;
	}
	/* Each block holds at least one instruction: N blocks suffice. */
	if (sess_view_init(s, &v, PRINT_INSNS, th, b.size))
		goto out;
	err = v.pt.insns(v.pt.insns_ctx, ring_add, &b);
	if (err < 0) {
		fprintf(stderr, "btrace: instruction history: %s\n",
			bt_errstr(err));
		goto out;
	}
	v.pt.insns = ring_replay;
	v.pt.insns_ctx = &b;
	r.threads = &v.pt;
	sess_print(s, &r, json);
	err = 0;
out:
	view_thread_release(&v);
	free(b.addr);
	free(b.gap);
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
static int sess_cont(struct bt_session *s)
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

static int need_live(struct bt_session *s)
{
	if (s->state == SESS_LIVE)
		return 0;
	fprintf(stderr, "btrace: process %d %s\n", s->pid,
		s->state == SESS_EXITING ? "is exiting; only history is left"
					 : "is gone; only history is left");
	return -1;
}

static int json_mod(struct bt_session *s, int mods)
{
	return s->json || (mods & MOD_JSON);
}

static int do_last(struct bt_session *s, int argc, char **argv, int mods)
{
	int ret;

	s->blocks = !!(mods & MOD_DIS);
	ret = sess_window(s, PRINT_BRANCHES, argc, argv, json_mod(s, mods));
	s->blocks = 0;
	return ret;
}

static int do_insn(struct bt_session *s, int argc, char **argv, int mods)
{
	return sess_insns(s, argc, argv, json_mod(s, mods));
}

static int do_calls(struct bt_session *s, int argc, char **argv, int mods)
{
	return sess_window(s, PRINT_CALLS, argc, argv, json_mod(s, mods));
}

/* The threads there are: live ones, or those traced before it went. */
static size_t sess_tids(struct bt_session *s, pid_t *tids, size_t max)
{
	size_t n, i;

	if (s->state != SESS_GONE) {
		n = bt_target_threads(s->target, tids, max);
		return n < max ? n : max;
	}
	for (i = 0; i < s->nthreads && i < max; i++)
		tids[i] = s->threads[i].tid;
	return i;
}

static int do_threads(struct bt_session *s, int argc, char **argv, int mods)
{
	struct print_report r = { .view = PRINT_THREADS, .stop = &s->stop };
	struct print_thread th[1024] = { 0 };
	pid_t tids[1024];
	size_t n, i;

	n = sess_tids(s, tids, BT_ARRAY_SIZE(tids));
	for (i = 0; i < n; i++) {
		th[i].tid = tids[i];
		th[i].current = tids[i] == s->cur;
		if (s->state == SESS_GONE ||
		    bt_target_pc(s->target, tids[i], &th[i].pc) < 0)
			th[i].pc = 0;
	}
	r.threads = th;
	r.nthreads = n;
	sess_print(s, &r, json_mod(s, mods));
	return 0;
}

static int do_thread(struct bt_session *s, int argc, char **argv, int mods)
{
	pid_t tids[1024];
	size_t n, i;
	char *end;
	long tid;

	if (argc != 2) {
		sess_note(s, "current thread: %d\n", s->cur);
		return argc == 1 ? 0 : -1;
	}
	tid = strtol(argv[1], &end, 10);
	n = *end ? 0 : sess_tids(s, tids, BT_ARRAY_SIZE(tids));
	for (i = 0; i < n && tids[i] != tid; i++)
		;
	if (i >= n) {
		fprintf(stderr, "btrace: no thread %s; see 'threads'\n",
			argv[1]);
		return -1;
	}
	s->cur = tid;
	sess_note(s, "[current thread is %d]\n", s->cur);
	return 0;
}

static int do_continue(struct bt_session *s, int argc, char **argv, int mods)
{
	char sig[32];
	int wstatus, err;

	if (s->state == SESS_EXITING) {
		err = bt_target_finish(s->target, &wstatus);
		s->state = SESS_GONE;
		if (err) {
			fprintf(stderr, "btrace: %s\n", bt_errstr(err));
			return -1;
		}
		if (WIFSIGNALED(wstatus))
			sess_note(s, "process %d was killed by %s\n", s->pid,
				  print_signame(WTERMSIG(wstatus), sig,
						sizeof(sig)));
		else
			sess_note(s, "process %d exited with status %d\n",
				  s->pid, WEXITSTATUS(wstatus));
		return 0;
	}
	if (need_live(s))
		return -1;
	return sess_cont(s);
}

/* SYMBOL, ADDR or FILE:LINE to an address; 0 after a message. */
static uint64_t resolve_spec(struct bt_session *s, const char *spec)
{
	struct bt_symtab *st = sess_symtab(s);
	const char *colon = strrchr(spec, ':');
	char *end, file[512];
	uint64_t addr = 0;
	long line;

	if (isdigit((unsigned char)spec[0])) {
		addr = strtoull(spec, &end, 0);
		if (*end || !addr)
			fprintf(stderr, "btrace: bad address '%s'\n", spec);
		return *end ? 0 : addr;
	}
	if (!st) {
		fprintf(stderr, "btrace: no symbols for process %d\n", s->pid);
		return 0;
	}
	if (colon && colon != spec && isdigit((unsigned char)colon[1])) {
		line = strtol(colon + 1, &end, 10);
		snprintf(file, sizeof(file), "%.*s", (int)(colon - spec), spec);
		if (!*end)
			addr = bt_symtab_line_addr(st, file, line);
		if (!addr)
			fprintf(stderr, "btrace: no code for line '%s'\n",
				spec);
		return addr;
	}
	addr = bt_symtab_addr(st, spec);
	if (!addr)
		fprintf(stderr, "btrace: no function '%s'\n", spec);
	return addr;
}

static int sess_break(struct bt_session *s, const char *spec)
{
	struct sess_bp *p;
	char what[64];
	uint64_t addr;
	int num;

	addr = resolve_spec(s, spec);
	if (!addr)
		return -1;
	num = bt_target_break_insert(s->target, addr);
	if (num < 0) {
		fprintf(stderr, "btrace: cannot set a breakpoint at %#" PRIx64
			": %s\n", addr, bt_errstr(num));
		return -1;
	}
	p = realloc(s->bps, (s->nbps + 1) * sizeof(*p));
	if (!p) {
		bt_target_break_remove(s->target, num);
		return -1;
	}
	s->bps = p;
	p[s->nbps++] = (struct sess_bp){ num, addr, strdup(spec) };
	snprintf(what, sizeof(what), "breakpoint %d at ", num);
	sess_note_addr(s, what, addr);
	return 0;
}

static int do_break(struct bt_session *s, int argc, char **argv, int mods)
{
	if (argc != 2) {
		fprintf(stderr, "btrace: usage: break SYMBOL|ADDR|FILE:LINE\n");
		return -1;
	}
	if (need_live(s))
		return -1;
	return sess_break(s, argv[1]);
}

static int delete_one(struct bt_session *s, size_t i)
{
	int err = 0;

	if (s->state == SESS_LIVE)
		err = bt_target_break_remove(s->target, s->bps[i].number);
	sess_note(s, "deleted breakpoint %d\n", s->bps[i].number);
	free(s->bps[i].spec);
	memmove(&s->bps[i], &s->bps[i + 1], (--s->nbps - i) * sizeof(*s->bps));
	if (err)
		fprintf(stderr, "btrace: %s\n", bt_errstr(err));
	return err ? -1 : 0;
}

static int do_delete(struct bt_session *s, int argc, char **argv, int mods)
{
	size_t i;
	long num;
	char *end;
	int ret = 0;

	if (argc == 1) {
		while (s->nbps)
			ret |= delete_one(s, s->nbps - 1);
		return ret;
	}
	for (int a = 1; a < argc; a++) {
		num = strtol(argv[a], &end, 10);
		for (i = 0; !*end && i < s->nbps; i++)
			if (s->bps[i].number == num)
				break;
		if (*end || i >= s->nbps) {
			fprintf(stderr, "btrace: no breakpoint %s\n", argv[a]);
			ret = -1;
			continue;
		}
		ret |= delete_one(s, i);
	}
	return ret;
}

/* One thread as info shows it: what was captured, decoded, lost. */
static void info_thread(struct bt_session *s, pid_t tid,
			struct print_thread *pt)
{
	struct sess_thread *th = sess_thread(s, tid);

	pt->tid = tid;
	if (!th || th->err) {
		pt->err = th ? th->err : -bte_nomem;
		return;
	}
	pt->hist = th->hist;
	pt->captured = th->cap.size;
	pt->lost = th->cap.lost;
	pt->lost_unit = th->cap.format == BT_FMT_PT ? "bytes" : "records";
}

static int do_info(struct bt_session *s, int argc, char **argv, int mods)
{
	static const char *const states[] = { "stopped", "exiting", "gone" };
	struct print_session ps = {
		.state = states[s->state],
		.origin = s->opts->attached ? "attached" : "launched",
		.buffer_size = bt_target_buffer_size(s->target),
	};
	struct print_report r = { .view = PRINT_INFO, .session = &ps };
	struct print_thread th[1024] = { 0 };
	struct print_bp bps[256];
	struct bt_stats stats = { 0 };
	pid_t tids[1024];
	size_t n, i;

	n = sess_tids(s, tids, BT_ARRAY_SIZE(tids));
	for (i = 0; i < n; i++)
		info_thread(s, tids[i], &th[i]);
	for (i = 0; i < s->nbps && i < BT_ARRAY_SIZE(bps); i++)
		bps[i] = (struct print_bp){ s->bps[i].number, s->bps[i].addr,
					    s->bps[i].spec };
	ps.bps = bps;
	ps.nbps = i;
	bt_target_stats(s->target, &stats);
	r.stats = &stats;
	r.threads = th;
	r.nthreads = n;
	sess_print(s, &r, json_mod(s, mods));
	return 0;
}

static int do_detach(struct bt_session *s, int argc, char **argv, int mods)
{
	int err;

	if (s->state == SESS_GONE) {
		s->done = 1;
		return 0;
	}
	err = bt_target_detach(s->target);
	s->state = SESS_GONE;
	s->done = 1;
	if (err) {
		fprintf(stderr, "btrace: cannot detach from %d: %s (%s)\n",
			s->pid, bt_errstr(err), bt_errdetail());
		return -1;
	}
	sess_note(s, "detached from process %d\n", s->pid);
	return 0;
}

static int do_kill(struct bt_session *s, int argc, char **argv, int mods)
{
	int err;

	s->done = 1;
	if (s->state == SESS_GONE)
		return 0;
	err = bt_target_kill(s->target);
	s->state = SESS_GONE;
	if (err) {
		fprintf(stderr, "btrace: cannot kill %d: %s\n", s->pid,
			bt_errstr(err));
		return -1;
	}
	sess_note(s, "killed process %d\n", s->pid);
	return 0;
}

static int do_quit(struct bt_session *s, int argc, char **argv, int mods)
{
	if (s->opts->attached)
		return do_detach(s, argc, argv, mods);
	return do_kill(s, argc, argv, mods);
}

static int do_help(struct bt_session *s, int argc, char **argv, int mods);

/* save FILE: the trace of every thread, as btrace show reads it. */
static int do_save(struct bt_session *s, int argc, char **argv, int mods)
{
	if (argc != 2) {
		fprintf(stderr, "btrace: usage: save FILE\n");
		return -1;
	}
	if (s->state == SESS_GONE) {
		fprintf(stderr, "btrace: process %d is gone: nothing to save\n",
			s->pid);
		return -1;
	}
	return save_trace(s->target, &s->stop, argv[1]) < 0 ? -1 : 0;
}

static void sym_names_free(void);

/* debug-dir [DIR]: gdb's set/show debug-file-directory. */
static int do_debug_dir(struct bt_session *s, int argc, char **argv,
			int mods)
{
	(void)mods;
	if (argc > 2) {
		fprintf(stderr, "btrace: usage: debug-dir [DIR]\n");
		return -1;
	}
	if (argc == 2) {
		if (debuginfo_set_dir(argv[1]) < 0)
			return -1;
		/* Symbols are looked for again, at their next use. */
		s->symtab_stale = 1;
		sym_names_free();
		if (s->state == SESS_GONE)
			printf("process %d is gone: its symbols stay as they were\n",
			       s->pid);
	}
	printf("separate debug files are looked for in %s\n",
	       debuginfo_dir());
	return 0;
}

static const struct sess_cmd commands[] = {
	{ "last", do_last,
	  "last[/d][/j] [N | -A,-B]\n"
	  "  the last N branches of the current thread, as btrace run shows\n"
	  "  them (default: as many as at the stop); -A,-B shows the window\n"
	  "  from the A-th to the B-th newest; /d adds the code of each\n"
	  "  branch's block, /j (or --json) prints a JSON document" },
	{ "insn", do_insn,
	  "insn[/j] [N]\n"
	  "  the last N instructions (default 32)" },
	{ "calls", do_calls,
	  "calls[/j] [N | -A,-B]\n"
	  "  the function-call history, indented by call depth (default:\n"
	  "  the last segments, as many as branches at the stop)" },
	{ "threads", do_threads,
	  "threads[/j]\n  the traced threads; * is current" },
	{ "thread", do_thread, "thread [TID]\n  show or switch the current thread" },
	{ "continue", do_continue,
	  "continue\n"
	  "  trace until the next stop; Ctrl-C stops the target" },
	{ "break", do_break,
	  "break SYMBOL|ADDR|FILE:LINE\n  stop when that code is reached" },
	{ "delete", do_delete, "delete [N...]\n  delete breakpoints (all if none)" },
	{ "info", do_info,
	  "info[/j]\n  backend, buffer size and fill, records lost, stats" },
	{ "save", do_save,
	  "save FILE\n  write the trace to FILE (mode 0600) for btrace show" },
	{ "debug-dir", do_debug_dir,
	  "debug-dir [DIR]\n"
	  "  show or set where separate debug files are looked for (gdb's\n"
	  "  debug-file-directory; ':' between several); symbols reload" },
	{ "detach", do_detach,
	  "detach\n  stop tracing, leave the process running, exit" },
	{ "kill", do_kill, "kill\n  kill the process and exit" },
	{ "quit", do_quit,
	  "quit\n  exit: detach if attached, kill if launched" },
	{ "help", do_help, "help [COMMAND]\n  this help, or a command's" },
	{ "c", do_continue, NULL },
	{ "b", do_break, NULL },
	{ "q", do_quit, NULL },
	{ "exit", do_quit, NULL },
};

/* Exact name, else a unique prefix among the documented commands. */
static const struct sess_cmd *cmd_find(const char *name)
{
	const struct sess_cmd *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < BT_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++) {
		if (!commands[i].help || strncmp(commands[i].name, name, len))
			continue;
		if (found)
			return NULL;
		found = &commands[i];
	}
	return found;
}

static int do_help(struct bt_session *s, int argc, char **argv, int mods)
{
	const struct sess_cmd *c;
	size_t i;

	if (argc > 1) {
		c = cmd_find(argv[1]);
		if (!c) {
			fprintf(stderr, "btrace: no command '%s'\n", argv[1]);
			return -1;
		}
		for (i = 0; !c->help; i++) /* an alias: show its command */
			if (commands[i].fn == c->fn && commands[i].help)
				c = &commands[i];
		sess_note(s, "%s\n", c->help);
		return 0;
	}
	sess_note(s, "commands (a unique prefix will do; c, b, q also work;\n"
		  "/j or --json after a command prints JSON):\n");
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++) {
		const char *h = commands[i].help, *nl;

		if (!h)
			continue;
		nl = strchr(h, '\n');
		sess_note(s, "  %-28.*s %s\n", (int)(nl - h), h, nl + 3);
	}
	return 0;
}

static int parse_mods(const char *m)
{
	int mods = 0;

	for (; *m; m++) {
		if (*m == 's')
			mods |= MOD_SRC;
		else if (*m == 'd')
			mods |= MOD_DIS;
		else if (*m == 'j')
			mods |= MOD_JSON;
		else if (*m != '/')
			return -1;
	}
	return mods;
}

/* Run one command line.  Returns 0, or -1 if the command failed. */
static int sess_exec(struct bt_session *s, char *line)
{
	char *argv[SESS_MAX_ARGS + 1], *p, *slash;
	const struct sess_cmd *c;
	int argc = 0, mods = 0, m;

	for (p = strtok(line, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
		if (argc && p[0] == '/' && (m = parse_mods(p)) >= 0) {
			mods |= m;
			continue;
		}
		if (argc && !strcmp(p, "--json")) {
			mods |= MOD_JSON;
			continue;
		}
		if (argc == SESS_MAX_ARGS) {
			fprintf(stderr, "btrace: too many arguments\n");
			return -1;
		}
		argv[argc++] = p;
	}
	argv[argc] = NULL;
	if (!argc || argv[0][0] == '#')
		return 0;
	slash = strchr(argv[0], '/');
	if (slash) {
		m = parse_mods(slash);
		if (m < 0) {
			fprintf(stderr, "btrace: unknown modifier '%s'\n",
				slash);
			return -1;
		}
		mods |= m;
		*slash = '\0';
	}
	c = cmd_find(argv[0]);
	if (!c) {
		fprintf(stderr, "btrace: unknown command '%s'; try 'help'\n",
			argv[0]);
		return -1;
	}
	m = c->fn(s, argc, argv, mods);
	fflush(s->out);
	fflush(stdout);
	return m;
}

/* ---- input ---- */

static char **sym_names;	/* completion candidates, sorted */
static size_t sym_count;
static const char *const *cmpl_words;

static int sym_collect(const char *name, uint64_t addr, void *ctx)
{
	char **n;

	if (!name || !name[0])
		return 0;
	if (sym_count % 1024 == 0) {
		n = realloc(sym_names, (sym_count + 1024) * sizeof(*n));
		if (!n)
			return 1;
		sym_names = n;
	}
	sym_names[sym_count] = strdup(name);
	if (sym_names[sym_count])
		sym_count++;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sym_names_load(struct bt_session *s)
{
	struct bt_symtab *st = sess_symtab(s);
	size_t i, j;

	if (sym_names || !st)
		return;
	bt_symtab_foreach(st, sym_collect, NULL);
	if (!sym_count)
		return;
	qsort(sym_names, sym_count, sizeof(*sym_names), str_cmp);
	for (i = j = 1; i < sym_count; i++) {
		if (!strcmp(sym_names[i], sym_names[j - 1]))
			free(sym_names[i]);
		else
			sym_names[j++] = sym_names[i];
	}
	sym_count = j;
}

static void sym_names_free(void)
{
	size_t i;

	for (i = 0; i < sym_count; i++)
		free(sym_names[i]);
	free(sym_names);
	sym_names = NULL;
	sym_count = 0;
}

static char *cmd_generator(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text);

	if (!state)
		i = 0;
	while (i < BT_ARRAY_SIZE(commands)) {
		const struct sess_cmd *c = &commands[i++];

		if (c->help && !strncmp(c->name, text, len))
			return strdup(c->name);
	}
	return NULL;
}

static char *sym_generator(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text);

	if (!state) {
		size_t lo = 0, hi = sym_count;

		while (lo < hi) {	/* the first name >= text */
			size_t mid = (lo + hi) / 2;

			if (strcmp(sym_names[mid], text) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
	}
	if (i < sym_count && !strncmp(sym_names[i], text, len))
		return strdup(sym_names[i++]);
	return NULL;
}

static char *word_generator(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text);

	if (!state)
		i = 0;
	for (; cmpl_words && cmpl_words[i]; i++)
		if (!strncmp(cmpl_words[i], text, len))
			return strdup(cmpl_words[i++]);
	return NULL;
}

static struct bt_session *cmpl_session;

static char **sess_complete(const char *text, int start, int end)
{
	static char tidbuf[64][16];
	static const char *tidwords[65];
	const struct sess_cmd *c;
	char first[32];
	pid_t tids[64];
	size_t n, i;
	int k = 0;

	rl_attempted_completion_over = 1;
	while (k < start && isspace((unsigned char)rl_line_buffer[k]))
		k++;
	if (k == start)
		return rl_completion_matches(text, cmd_generator);
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(rl_line_buffer + k,
							     " \t/"),
		 rl_line_buffer + k);
	c = cmd_find(first);
	if (c && c->fn == do_help)
		return rl_completion_matches(text, cmd_generator);
	if (c && c->fn == do_thread && cmpl_session->state != SESS_GONE) {
		n = bt_target_threads(cmpl_session->target, tids, 64);
		for (i = 0; i < n && i < 64; i++) {
			snprintf(tidbuf[i], sizeof(tidbuf[i]), "%d", tids[i]);
			tidwords[i] = tidbuf[i];
		}
		tidwords[i] = NULL;
		cmpl_words = tidwords;
		return rl_completion_matches(text, word_generator);
	}
	if (c && c->fn == do_break) {
		sym_names_load(cmpl_session);
		return rl_completion_matches(text, sym_generator);
	}
	return NULL;
}

static char *rl_result;
static int rl_have;

static void rl_on_line(char *line)
{
	rl_result = line;
	rl_have = 1;
	rl_callback_handler_remove();
}

/* Discard the line being edited after Ctrl-C, as shells do. */
static void rl_cancel(void)
{
	rl_free_line_state();
	rl_crlf();
	rl_replace_line("", 0);
	rl_on_new_line();
	rl_redisplay();
}

/*
 * One line from readline; NULL at end of input or when a signal asked to
 * quit.  The caller frees the line.
 */
static char *read_tty(void)
{
	sigset_t old;
	fd_set fds;
	int r;

	rl_have = 0;
	rl_callback_handler_install(SESS_PROMPT, rl_on_line);
	while (!rl_have) {
		sig_block(&old);
		if (sig_quit) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			rl_callback_handler_remove();
			printf("\n");
			return NULL;
		}
		if (sig_cancel) {
			sig_cancel = 0;
			sigprocmask(SIG_SETMASK, &old, NULL);
			rl_cancel();
			continue;
		}
		FD_ZERO(&fds);
		FD_SET(STDIN_FILENO, &fds);
		sig_prompt = 1;
		r = pselect(STDIN_FILENO + 1, &fds, NULL, NULL, NULL, &old);
		sig_prompt = 0;
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r > 0)
			rl_callback_read_char();
		else if (r < 0 && errno != EINTR)
			break;
	}
	if (!rl_have) {
		rl_callback_handler_remove();
		return NULL;
	}
	if (!rl_result)
		printf("\n");	/* Ctrl-D */
	return rl_result;
}

/* One line from a non-terminal stdin, without stdio's read-ahead. */
static char *read_plain(void)
{
	static char buf[4096];
	static size_t len;
	static int eof;
	sigset_t old;
	char *nl, *line;
	fd_set fds;
	ssize_t n;
	int r;

	for (;;) {
		nl = memchr(buf, '\n', len);
		if (nl || (eof && len) || len == sizeof(buf)) {
			size_t l = nl ? (size_t)(nl - buf) : len;

			line = strndup(buf, l);
			l += nl ? 1 : 0;
			memmove(buf, buf + l, len - l);
			len -= l;
			return line;
		}
		if (eof)
			return NULL;
		sig_block(&old);
		FD_ZERO(&fds);
		FD_SET(STDIN_FILENO, &fds);
		r = sig_quit ? -1 : pselect(STDIN_FILENO + 1, &fds, NULL, NULL,
					    NULL, &old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (sig_quit || (r < 0 && errno != EINTR))
			return NULL;
		if (r <= 0)
			continue;
		n = read(STDIN_FILENO, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = 1;
		else
			len += n;
	}
}

static char *history_path(void)
{
	const char *home = getenv("HOME");
	char *path;

	if (!home || !home[0])
		return NULL;
	if (asprintf(&path, "%s/.btrace_history", home) < 0)
		return NULL;
	return path;
}

static void sess_loop(struct bt_session *s)
{
	char *hist = NULL, *line;

	if (s->interactive) {
		hist = history_path();
		using_history();
		stifle_history(SESS_HISTORY_MAX);
		if (hist)
			read_history(hist);
		rl_catch_signals = 0;
		rl_readline_name = "btrace";
		rl_attempted_completion_function = sess_complete;
		cmpl_session = s;
	}
	while (!s->done && !sig_quit) {
		fflush(stdout);
		line = s->interactive ? read_tty() : read_plain();
		if (!line)
			break;
		if (s->interactive && line[strspn(line, " \t")])
			add_history(line);
		if (sess_exec(s, line))
			s->failed = 1;
		free(line);
	}
	if (hist && write_history(hist) != 0)
		fprintf(stderr, "btrace: cannot write %s\n", hist);
	free(hist);
	sym_names_free();
}

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
