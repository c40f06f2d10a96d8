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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "save.h"
#include "calls.h"
#include "session.h"

#define SESS_PROMPT "(btrace) "
#define SESS_HISTORY_MAX 1000
#define SESS_MAX_ARGS 16
#define SESS_BLOCK_MAX 4096	/* bytes of one block shown by last /d */
#define SESS_INSN_DEFAULT 32
#define SESS_CALLS_DEFAULT 20

enum sess_state {
	SESS_LIVE,	/* stopped, can go on */
	SESS_EXITING,	/* stopped in its exit: continue lets it finish */
	SESS_GONE,	/* exited, killed or detached: history only */
};

enum sess_mods { MOD_SRC = 1, MOD_DIS = 2 };

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
	size_t last;
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
	    bt_symtab_from_pid(&st, s->pid) == 0) {
		bt_symtab_free(s->symtab);
		s->symtab = st;
	}
	s->symtab_stale = 0;
	return s->symtab;
}

/* The code image: the mappings at this stop, and live memory beyond. */
static struct bt_image *sess_image(struct bt_session *s)
{
	struct bt_maps maps = { 0 };

	if (s->image)
		return s->image;
	s->image = bt_image_alloc();
	if (!s->image)
		return NULL;
	if (s->state != SESS_GONE && bt_maps_read(s->pid, &maps) == 0) {
		bt_image_add_maps(s->image, &maps, sess_read_mem, s);
		bt_maps_release(&maps);
	}
	bt_image_set_fallback(s->image, sess_read_mem, s);
	return s->image;
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

/* "0x401136 <work+0x16>" */
static char *fmt_addr(struct bt_session *s, uint64_t addr, char *buf,
		      size_t size)
{
	struct bt_symtab *st = sess_symtab(s);
	struct bt_sym sym;
	char name[256];

	if (st && bt_symtab_lookup(st, addr, &sym) == 0 && sym.name) {
		bt_sym_format(&sym, addr, name, sizeof(name));
		snprintf(buf, size, "%#" PRIx64 " <%s>", addr, name);
	} else {
		snprintf(buf, size, "%#" PRIx64, addr);
	}
	return buf;
}

/* "file.c:12", or "" */
static char *fmt_line(struct bt_session *s, uint64_t addr, char *buf,
		      size_t size)
{
	struct bt_symtab *st = sess_symtab(s);
	struct bt_sym sym;

	buf[0] = '\0';
	if (st && bt_symtab_lookup(st, addr, &sym) == 0 && sym.file)
		snprintf(buf, size, "%s:%d", sym.file, sym.line);
	return buf;
}

static const char *sess_func(struct bt_session *s, uint64_t addr)
{
	struct bt_symtab *st = sess_symtab(s);
	struct bt_sym sym;

	if (st && bt_symtab_lookup(st, addr, &sym) == 0)
		return sym.name;
	return NULL;
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

/* ---- output of branches ---- */

static void print_insn_line(struct bt_session *s, const char *indent,
			    uint64_t addr, const char *text, int mods)
{
	char a[320], l[160];

	printf("%s%-40s %s", indent, fmt_addr(s, addr, a, sizeof(a)), text);
	if (mods & MOD_SRC && fmt_line(s, addr, l, sizeof(l))[0])
		printf("    %s", l);
	printf("\n");
}

/* Disassemble the block [start, end]: end is the branch instruction. */
static void print_block(struct bt_session *s, uint64_t start, uint64_t end,
			int mods)
{
	uint8_t code[SESS_BLOCK_MAX + BT_INSN_MAX_LEN];
	struct bt_image *img = sess_image(s);
	char text[128];
	uint64_t at;
	ssize_t n;
	int len;

	if (!img || !s->dis)
		return;
	if (!start || start > end || end - start >= SESS_BLOCK_MAX) {
		if (start)
			printf("\t\t...\n");
		start = end;
	}
	n = bt_image_read(img, start, code, end - start + BT_INSN_MAX_LEN);
	for (at = start; n > 0 && at <= end; at += len) {
		len = bt_insn_format(s->dis, code + (at - start),
				     n - (at - start), at, text, sizeof(text));
		if (len <= 0) {
			print_insn_line(s, "\t\t", at, "(bad)", mods);
			return;
		}
		print_insn_line(s, "\t\t", at, text, mods);
	}
	if (n <= 0)
		printf("\t\t(no code at %#" PRIx64 ")\n", start);
}

static void print_branch(struct bt_session *s, const struct bt_history *h,
			 size_t i, int mods)
{
	const struct bt_branch *b = &h->branch[i];
	long long idx = (long long)i - (long long)h->count;
	char from[320], to[320], lf[160], lt[160];

	if (b->kind == BT_BR_GAP) {
		printf("%6lld  [gap: %s]\n", idx, bt_gap_reason_name(b->gap));
		return;
	}
	if (mods & MOD_DIS && i > 0)
		print_block(s, h->branch[i - 1].to, b->from, mods);
	else if (mods & MOD_DIS)
		print_block(s, 0, b->from, mods);
	printf("%6lld  %-40s -> %-40s %s", idx,
	       fmt_addr(s, b->from, from, sizeof(from)),
	       fmt_addr(s, b->to, to, sizeof(to)), bt_branch_kind_name(b->kind));
	if (mods & MOD_SRC) {
		fmt_line(s, b->from, lf, sizeof(lf));
		fmt_line(s, b->to, lt, sizeof(lt));
		if (lf[0] || lt[0])
			printf("  %s -> %s", lf[0] ? lf : "?", lt[0] ? lt : "?");
	}
	printf("\n");
}

static void print_last(struct bt_session *s, const struct bt_history *h,
		       size_t first, size_t end, int mods)
{
	size_t i;

	for (i = first; i < end && !sig_quit; i++)
		print_branch(s, h, i, mods);
}

/* ---- stops ---- */

static const char *sig_name(int sig)
{
	static char buf[16];
	const char *abbrev = sigabbrev_np(sig);

	if (!abbrev) {
		snprintf(buf, sizeof(buf), "signal %d", sig);
		return buf;
	}
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}

static void print_stop_headline(struct bt_session *s)
{
	const struct bt_stop *st = &s->stop;
	char a[320], l[160];

	fmt_addr(s, st->pc, a, sizeof(a));
	fmt_line(s, st->pc, l, sizeof(l));
	switch (st->reason) {
	case BT_STOP_SIGNAL:
		printf("thread %d received %s at %s %s", st->tid,
		       sig_name(st->signal), a, l);
		if (st->signal == SIGSEGV || st->signal == SIGBUS ||
		    st->signal == SIGFPE || st->signal == SIGILL)
			printf(" (fault address %#" PRIx64 ")", st->addr);
		printf("\n");
		break;
	case BT_STOP_EXIT:
		printf("process %d is exiting with status %d\n", s->pid,
		       st->status);
		break;
	case BT_STOP_INTERRUPT:
		printf("interrupted: thread %d at %s %s\n", st->tid, a, l);
		break;
	case BT_STOP_BREAK:
		printf("breakpoint %d, thread %d at %s %s\n", st->breakpoint,
		       st->tid, a, l);
		break;
	case BT_STOP_KILLED:
		printf("process %d was killed by %s\n", s->pid,
		       sig_name(st->signal ? st->signal : SIGKILL));
		break;
	default:
		printf("stopped: thread %d at %s\n", st->tid, a);
	}
}

/* Show a stop: what happened, and the last branches of that thread. */
static void sess_show_stop(struct bt_session *s)
{
	struct sess_thread *th;
	size_t first, end;

	print_stop_headline(s);
	if (!s->cur)
		return;
	th = sess_thread(s, s->cur);
	if (!th || th->err || !th->hist) {
		printf("no trace for thread %d: %s\n", s->cur,
		       th ? bt_errstr(th->err) : "out of memory");
		return;
	}
	parse_window(NULL, s->last, th->hist->count, &first, &end);
	printf("last %zu branches of thread %d:\n", end - first, s->cur);
	print_last(s, th->hist, first, end, 0);
	fflush(stdout);
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

static int do_last(struct bt_session *s, int argc, char **argv, int mods)
{
	struct sess_thread *th = sess_history(s);
	size_t first, end;

	if (!th)
		return -1;
	if (argc > 2) {
		fprintf(stderr, "btrace: usage: last[/sd] [N | -A,-B]\n");
		return -1;
	}
	if (parse_window(argc > 1 ? argv[1] : NULL, s->last, th->hist->count,
			 &first, &end))
		return -1;
	if (th->hist->lost)
		printf("(%" PRIu64 " older records were overwritten)\n",
		       th->hist->lost);
	print_last(s, th->hist, first, end, mods);
	return 0;
}

struct insn_buf {
	uint64_t *addr;		/* 0: a gap, reason in gap[] */
	int *gap;
	size_t size, count;	/* ring of the newest @size */
};

static int insn_collect(uint64_t addr, int gap, void *ctx)
{
	struct insn_buf *b = ctx;
	size_t at = b->count % b->size;

	b->addr[at] = addr;
	b->gap[at] = gap;
	b->count++;
	return sig_quit ? 1 : 0;
}

static void print_insn(struct bt_session *s, uint64_t addr, long long idx,
		       int mods)
{
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_image *img = sess_image(s);
	char text[128], pre[32];
	ssize_t n;

	n = img ? bt_image_read(img, addr, code, sizeof(code)) : 0;
	if (n <= 0 || !s->dis ||
	    bt_insn_format(s->dis, code, n, addr, text, sizeof(text)) <= 0)
		snprintf(text, sizeof(text), "(unknown)");
	snprintf(pre, sizeof(pre), "%6lld  ", idx);
	print_insn_line(s, pre, addr, text, mods);
}

/*
 * Feed @fn the instructions of [start, end) (@end excluded, as the stop pc)
 * or [start, end] (@incl: a block ending in its branch).  A block that
 * cannot be walked exactly to @end becomes a gap and its last instruction.
 */
static void block_insns(struct bt_session *s, uint64_t start, uint64_t end,
			int incl, struct insn_buf *b)
{
	uint8_t code[SESS_BLOCK_MAX + BT_INSN_MAX_LEN];
	struct bt_image *img = sess_image(s);
	struct bt_insn insn;
	uint64_t at = start;
	ssize_t n = 0;

	if (start && start <= end && end - start < SESS_BLOCK_MAX && img && s->dis)
		n = bt_image_read(img, start, code, end - start + BT_INSN_MAX_LEN);
	while (n > 0 && at < end) {
		if (bt_insn_decode(s->dis, code + (at - start), n - (at - start),
				   at, &insn) || !insn.len)
			break;
		insn_collect(at, 0, b);
		at += insn.len;
	}
	if (at != end || n <= 0) {
		if (at == start && start == end && !incl)
			return;		/* an empty tail */
		insn_collect(0, start ? BT_GAP_NOCODE : BT_GAP_START, b);
	}
	if (incl)
		insn_collect(end, 0, b);
}

/*
 * The instruction history rebuilt from the branches and the code image,
 * for formats whose decoder does not give instructions (soft, BTS): the
 * blocks of the last @b->size branches, then what ran since the last one.
 */
static void insns_from_blocks(struct bt_session *s, const struct bt_history *h,
			      struct insn_buf *b)
{
	size_t i = h->count > b->size ? h->count - b->size : 0;
	const struct bt_branch *br;
	uint64_t pc;

	for (; i < h->count; i++) {
		br = &h->branch[i];
		if (br->kind == BT_BR_GAP) {
			insn_collect(0, br->gap, b);
			continue;
		}
		block_insns(s, i ? h->branch[i - 1].to : 0, br->from, 1, b);
	}
	if (h->count && s->state == SESS_LIVE &&
	    bt_target_pc(s->target, s->cur, &pc) == 0)
		block_insns(s, h->branch[h->count - 1].to, pc, 0, b);
}

static int do_insn(struct bt_session *s, int argc, char **argv, int mods)
{
	struct bt_decode_opts dopts = { .size = sizeof(dopts) };
	struct insn_buf b = { .size = SESS_INSN_DEFAULT };
	struct sess_thread *th = sess_history(s);
	size_t i, n;
	int err;

	if (!th)
		return -1;
	if (argc > 1 && parse_count(argv[1], &b.size))
		return -1;
	b.addr = calloc(b.size, sizeof(*b.addr));
	b.gap = calloc(b.size, sizeof(*b.gap));
	if (!b.addr || !b.gap) {
		err = -bte_nomem;
		goto out;
	}
	/* Each block holds at least one instruction: N blocks suffice. */
	dopts.last = b.size;
	dopts.image = sess_image(s);
	err = bt_decode_insns(&th->cap, &dopts, insn_collect, &b);
	if (err == -bte_nosys) {
		b.count = 0;
		insns_from_blocks(s, th->hist, &b);
		err = 0;
	}
	n = b.count < b.size ? b.count : b.size;
	for (i = b.count - n; i < b.count && !sig_quit; i++) {
		size_t at = i % b.size;
		long long idx = (long long)i - (long long)b.count;

		if (b.addr[at])
			print_insn(s, b.addr[at], idx, mods);
		else
			printf("%6lld  [gap: %s]\n", idx,
			       bt_gap_reason_name(b.gap[at]));
	}
out:
	if (err)
		fprintf(stderr, "btrace: instruction history: %s\n",
			bt_errstr(err));
	free(b.addr);
	free(b.gap);
	return err ? -1 : 0;
}

static const char *seg_func(void *ctx, uint64_t addr)
{
	return sess_func(ctx, addr);
}

static void print_seg(struct bt_session *s, const struct call_seg *g,
		      long long idx, int mods)
{
	const char *f;
	char l1[160];

	if (g->gap) {
		printf("%6lld  %*s[gap: %s]\n", idx, 2 * g->depth, "",
		       bt_gap_reason_name(g->gap - 1));
		return;
	}
	f = sess_func(s, g->start);
	if (f)
		printf("%6lld  %*s%s", idx, 2 * g->depth, "", f);
	else
		printf("%6lld  %*s%#" PRIx64, idx, 2 * g->depth, "", g->start);
	printf("  (%zu branch%s", g->nbr, g->nbr == 1 ? "" : "es");
	if (g->ninsn)
		printf(", %" PRIu64 " instructions", g->ninsn);
	printf(")");
	if (mods & MOD_SRC && fmt_line(s, g->start, l1, sizeof(l1))[0])
		printf("  %s", l1);
	printf("\n");
}

static int do_calls(struct bt_session *s, int argc, char **argv, int mods)
{
	struct sess_thread *th = sess_history(s);
	struct call_seg *segs;
	size_t n, first, end, i;

	if (!th)
		return -1;
	if (calls_build(th->hist, seg_func, s, &segs, &n)) {
		fprintf(stderr, "btrace: out of memory\n");
		return -1;
	}
	if (parse_window(argc > 1 ? argv[1] : NULL, SESS_CALLS_DEFAULT, n,
			 &first, &end)) {
		free(segs);
		return -1;
	}
	for (i = first; i < end && !sig_quit; i++)
		print_seg(s, &segs[i], (long long)i - (long long)n, mods);
	free(segs);
	return 0;
}

static int do_threads(struct bt_session *s, int argc, char **argv, int mods)
{
	pid_t tids[1024];
	size_t n, i;
	uint64_t pc;
	char a[320];

	if (s->state == SESS_GONE) {
		for (i = 0; i < s->nthreads; i++)
			printf("%c %d  (gone)\n",
			       s->threads[i].tid == s->cur ? '*' : ' ',
			       s->threads[i].tid);
		return 0;
	}
	n = bt_target_threads(s->target, tids, BT_ARRAY_SIZE(tids));
	n = n < BT_ARRAY_SIZE(tids) ? n : BT_ARRAY_SIZE(tids);
	for (i = 0; i < n; i++) {
		printf("%c %d", tids[i] == s->cur ? '*' : ' ', tids[i]);
		if (bt_target_pc(s->target, tids[i], &pc) == 0)
			printf("  %s", fmt_addr(s, pc, a, sizeof(a)));
		if (tids[i] == s->stop.tid)
			printf("  (stopped here)");
		printf("\n");
	}
	return 0;
}

static int do_thread(struct bt_session *s, int argc, char **argv, int mods)
{
	pid_t tids[1024];
	size_t n, i;
	char *end;
	long tid;

	if (argc != 2) {
		printf("current thread: %d\n", s->cur);
		return argc == 1 ? 0 : -1;
	}
	tid = strtol(argv[1], &end, 10);
	n = s->state == SESS_GONE
		    ? 0
		    : bt_target_threads(s->target, tids, BT_ARRAY_SIZE(tids));
	for (i = 0; !*end && i < n && i < BT_ARRAY_SIZE(tids); i++)
		if (tids[i] == tid)
			break;
	for (; s->state == SESS_GONE && i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			break;
	if (*end || (s->state != SESS_GONE && i >= n) ||
	    (s->state == SESS_GONE && i >= s->nthreads)) {
		fprintf(stderr, "btrace: no thread %s; see 'threads'\n",
			argv[1]);
		return -1;
	}
	s->cur = tid;
	printf("[current thread is %d]\n", s->cur);
	return 0;
}

static int do_continue(struct bt_session *s, int argc, char **argv, int mods)
{
	int wstatus, err;

	if (s->state == SESS_EXITING) {
		err = bt_target_finish(s->target, &wstatus);
		s->state = SESS_GONE;
		if (err) {
			fprintf(stderr, "btrace: %s\n", bt_errstr(err));
			return -1;
		}
		if (WIFSIGNALED(wstatus))
			printf("process %d was killed by %s\n", s->pid,
			       sig_name(WTERMSIG(wstatus)));
		else
			printf("process %d exited with status %d\n", s->pid,
			       WEXITSTATUS(wstatus));
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
	char a[320], l[160];
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
	printf("breakpoint %d at %s %s\n", num, fmt_addr(s, addr, a, sizeof(a)),
	       fmt_line(s, addr, l, sizeof(l)));
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
	printf("deleted breakpoint %d\n", s->bps[i].number);
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

static void info_thread(struct bt_session *s, pid_t tid)
{
	struct sess_thread *th = sess_thread(s, tid);
	size_t bsize = bt_target_buffer_size(s->target);

	if (!th || th->err) {
		printf("  thread %d: no trace (%s)\n", tid,
		       th ? bt_errstr(th->err) : "out of memory");
		return;
	}
	printf("  thread %d: %zu bytes captured", tid, th->cap.size);
	if (bsize)
		printf(" (%.1f%% of the buffer)",
		       100.0 * (double)th->cap.size / (double)bsize);
	printf(", %zu branches, %" PRIu64 " %s lost\n", th->hist->count,
	       th->cap.lost, th->cap.format == BT_FMT_PT ? "bytes" : "records");
}

static int do_info(struct bt_session *s, int argc, char **argv, int mods)
{
	static const char *const states[] = { "stopped", "exiting", "gone" };
	struct bt_stats st = { 0 };
	pid_t tids[1024];
	size_t n, i;
	char a[320];

	bt_target_stats(s->target, &st);
	printf("process %d (%s, %s), backend %s\n", s->pid,
	       s->opts->attached ? "attached" : "launched", states[s->state],
	       bt_target_backend_name(s->target));
	printf("buffer: %zu bytes per thread\n",
	       bt_target_buffer_size(s->target));
	if (s->state == SESS_GONE) {
		for (i = 0; i < s->nthreads; i++)
			info_thread(s, s->threads[i].tid);
	} else {
		n = bt_target_threads(s->target, tids, BT_ARRAY_SIZE(tids));
		for (i = 0; i < n && i < BT_ARRAY_SIZE(tids); i++)
			info_thread(s, tids[i]);
	}
	printf("stats: %" PRIu64 " instructions, %" PRIu64 " branches, %" PRIu64
	       " stops\n", st.instructions, st.branches, st.stops);
	if (!s->nbps)
		printf("no breakpoints\n");
	for (i = 0; i < s->nbps; i++)
		printf("breakpoint %d at %s (%s)\n", s->bps[i].number,
		       fmt_addr(s, s->bps[i].addr, a, sizeof(a)),
		       s->bps[i].spec);
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
	printf("detached from process %d\n", s->pid);
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
	printf("killed process %d\n", s->pid);
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

static const struct sess_cmd commands[] = {
	{ "last", do_last,
	  "last[/s][/d] [N | -A,-B]\n"
	  "  the last N branches of the current thread (default: as at the\n"
	  "  stop); -A,-B shows the window from the A-th to the B-th newest;\n"
	  "  /s adds source lines, /d the disassembly of each branch's block" },
	{ "insn", do_insn,
	  "insn[/s] [N]\n"
	  "  the last N instructions (default 32), where the backend can tell" },
	{ "calls", do_calls,
	  "calls[/s] [N | -A,-B]\n"
	  "  the function-call history (default the last 20 segments),\n"
	  "  indented by call depth; /s adds the source line of each" },
	{ "threads", do_threads, "threads\n  the traced threads; * is current" },
	{ "thread", do_thread, "thread [TID]\n  show or switch the current thread" },
	{ "continue", do_continue,
	  "continue\n"
	  "  trace until the next stop; Ctrl-C stops the target" },
	{ "break", do_break,
	  "break SYMBOL|ADDR|FILE:LINE\n  stop when that code is reached" },
	{ "delete", do_delete, "delete [N...]\n  delete breakpoints (all if none)" },
	{ "info", do_info,
	  "info\n  backend, buffer size and fill, records lost, stats" },
	{ "save", do_save,
	  "save FILE\n  write the trace to FILE (mode 0600) for btrace show" },
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
		printf("%s\n", c->help);
		return 0;
	}
	printf("commands (a unique prefix will do; c, b, q also work):\n");
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++) {
		const char *h = commands[i].help, *nl;

		if (!h)
			continue;
		nl = strchr(h, '\n');
		printf("  %-28.*s %s\n", (int)(nl - h), h, nl + 3);
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
	int ret = 0;

	if (sig_quit && s->state != SESS_GONE)
		fprintf(stderr, "btrace: %s: %s process %d\n",
			sig_name(sig_quit),
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
	s->last = opts->last ? opts->last : BT_SESSION_LAST_DEFAULT;
	s->symtab_stale = 1;
	s->interactive = isatty(STDIN_FILENO) && !opts->batch;
	if (bt_disasm_alloc(&s->dis))
		s->dis = NULL;
	sig_target = target;
}

static void sess_run_ex(struct bt_session *s)
{
	size_t i;
	char *line;

	for (i = 0; i < s->opts->nex && !s->done && !sig_quit; i++) {
		line = strdup(s->opts->ex[i]);
		if (!line || sess_exec(s, line))
			s->failed = 1;
		free(line);
	}
}

int bt_session_main(struct bt_target *target,
		    const struct bt_session_opts *opts)
{
	struct bt_session s;
	size_t i;
	int ret;

	sess_init(&s, target, opts);
	for (i = 0; i < opts->nbreaks && !sig_quit; i++)
		if (sess_break(&s, opts->breaks[i]))
			s.failed = s.done = 1;
	if (opts->cont_first && !s.done && sess_cont(&s))
		s.failed = s.done = 1;
	sess_run_ex(&s);
	if (!opts->batch && !s.done)
		sess_loop(&s);
	fflush(stdout);
	ret = sess_end(&s);
	sess_release(&s);
	if (sig_quit)
		return 128 + sig_quit;
	/* On a terminal a mistyped command is not a failure of btrace. */
	if (s.failed && !s.interactive)
		return EXIT_FAIL;
	return ret ? EXIT_FAIL : 0;
}
