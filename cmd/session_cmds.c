// SPDX-License-Identifier: MIT
/*
 * The session's commands (session.h): views of the current thread (last,
 * insn, calls), threads, continue, breakpoints, info, save, debug-dir and
 * the ways out.  Their table is in session_input.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "opts.h"
#include "print.h"
#include "save.h"
#include "session.h"
#include "session_int.h"
#include "view.h"

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

int do_last(struct bt_session *s, int argc, char **argv, int mods)
{
	int ret;

	s->blocks = !!(mods & MOD_DIS);
	ret = sess_window(s, PRINT_BRANCHES, argc, argv, json_mod(s, mods));
	s->blocks = 0;
	return ret;
}

int do_insn(struct bt_session *s, int argc, char **argv, int mods)
{
	return sess_insns(s, argc, argv, json_mod(s, mods));
}

int do_calls(struct bt_session *s, int argc, char **argv, int mods)
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

int do_threads(struct bt_session *s, int argc, char **argv, int mods)
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

int do_thread(struct bt_session *s, int argc, char **argv, int mods)
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

int do_continue(struct bt_session *s, int argc, char **argv, int mods)
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

int sess_break(struct bt_session *s, const char *spec)
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

int do_break(struct bt_session *s, int argc, char **argv, int mods)
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

int do_delete(struct bt_session *s, int argc, char **argv, int mods)
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

int do_info(struct bt_session *s, int argc, char **argv, int mods)
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

int do_detach(struct bt_session *s, int argc, char **argv, int mods)
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

int do_kill(struct bt_session *s, int argc, char **argv, int mods)
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

int do_quit(struct bt_session *s, int argc, char **argv, int mods)
{
	if (s->opts->attached)
		return do_detach(s, argc, argv, mods);
	return do_kill(s, argc, argv, mods);
}


/* save FILE: the trace of every thread, as btrace show reads it. */
int do_save(struct bt_session *s, int argc, char **argv, int mods)
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


/* debug-dir [DIR]: gdb's set/show debug-file-directory. */
int do_debug_dir(struct bt_session *s, int argc, char **argv,
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
