// SPDX-License-Identifier: MIT
/*
 * The one printer of the front ends (print.h): branches, instructions,
 * call history, threads and the capture as aligned text (one line per
 * entry, the most recent last, like a debugger's backtrace read upside
 * down) or as JSON (print_json.c); a stop in words: print_stop.c.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "print.h"
#include "print_int.h"

#define SYM_MAX 48	/* symbol column width cap; longer names are cut */

enum { C_OFF, C_DIM, C_SYM, C_SRC, C_KIND, C_CALL, C_RET, C_GAP, C_BAD,
       C_HEAD, C_MAX };

static const char *const colors[C_MAX] = {
	[C_OFF] = "\033[0m",	[C_DIM] = "\033[2m",
	[C_SYM] = "\033[1m",	[C_SRC] = "\033[36m",
	[C_KIND] = "\033[33m",	[C_CALL] = "\033[32m",
	[C_RET] = "\033[34m",	[C_GAP] = "\033[1;35m",
	[C_BAD] = "\033[1;31m", [C_HEAD] = "\033[1m",
};

int print_want_color(FILE *out, int no_color)
{
	const char *term = getenv("TERM");

	if (no_color || getenv("NO_COLOR"))
		return 0;
	if (!term || !strcmp(term, "dumb"))
		return 0;
	return isatty(fileno(out));
}

const char *print_signame(int sig, char *buf, size_t size)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "SIG%d", sig);
	return buf;
}

void describe(const struct print_ctx *pc, uint64_t addr, int insn,
	      struct addr_desc *d)
{
	struct bt_sym sym;
	uint8_t code[BT_INSN_MAX_LEN];
	ssize_t n;

	memset(d, 0, sizeof(*d));
	snprintf(d->addr, sizeof(d->addr), "0x%" PRIx64, addr);
	if (pc->symtab && bt_symtab_lookup(pc->symtab, addr, &sym) == 0) {
		/* Without a name the address alone says it all. */
		if (sym.name)
			bt_sym_format(&sym, addr, d->sym, sizeof(d->sym));
		if (sym.file && sym.line)
			snprintf(d->src, sizeof(d->src), "%s:%d", sym.file,
				 sym.line);
	}
	if (!insn || !pc->read || !pc->dis)
		return;
	n = pc->read(pc->read_ctx, addr, code, sizeof(code));
	if (n > 0 && bt_insn_format(pc->dis, code, n, addr, d->insn,
				    sizeof(d->insn)) < 0)
		d->insn[0] = '\0';
}


/* The function containing @addr, for the call history. */
const char *func_name(const struct print_ctx *pc, uint64_t addr)
{
	struct bt_sym sym;

	if (pc->symtab && bt_symtab_lookup(pc->symtab, addr, &sym) == 0)
		return sym.name;
	return NULL;
}

/* The window of @n entries a thread shows: [*first, *end). */
void window(const struct print_thread *th, size_t n, size_t *first,
	    size_t *end)
{
	*first = 0;
	*end = n;
	if (!th->window)
		return;
	*end = th->end < n ? th->end : n;
	*first = th->first < *end ? th->first : *end;
}

/* ---- text ---- */

/* Columns of the instruction rows, fixed: they are printed as they come. */
#define INSN_ADDR_W 10
#define INSN_SYM_W 28
#define INSN_SRC_W 20

struct row {
	int gap;
	const struct bt_branch *br;
	char idx[24];
	char time[24];
	struct addr_desc from, to;
};

struct widths {
	int time, idx, faddr, fsym, fsrc, insn, kind, taddr, tsym;
};

/* @s in @color, cut or padded to @width columns (0: as it is). */
static void put(FILE *out, const struct print_ctx *pc, int color,
		const char *s, int width)
{
	int len = (int)strlen(s);

	if (pc->color && *s)
		fputs(colors[color], out);
	if (width > 1 && len > width) {
		fprintf(out, "%.*s~", width - 1, s);
		len = width;
	} else {
		fputs(s, out);
	}
	if (pc->color && *s)
		fputs(colors[C_OFF], out);
	if (width > len)
		fprintf(out, "%*s", width - len, "");
}

/* Like put(), but never cut: addresses. */
static void put_addr(FILE *out, const struct print_ctx *pc, const char *s,
		     int width)
{
	put(out, pc, C_DIM, s, 0);
	if (width > (int)strlen(s))
		fprintf(out, "%*s", width - (int)strlen(s), "");
}

static void put_gap(FILE *out, const struct print_ctx *pc, int reason)
{
	if (pc->color)
		fputs(colors[C_GAP], out);
	fprintf(out, "-- gap: %s --", bt_gap_reason_name(reason));
	if (pc->color)
		fputs(colors[C_OFF], out);
}

/* An address, then its symbol and source line where known. */
static void put_desc(FILE *out, const struct print_ctx *pc,
		     const struct addr_desc *d)
{
	put(out, pc, C_DIM, d->addr, 0);
	if (d->sym[0]) {
		fputs("  ", out);
		put(out, pc, C_SYM, d->sym, 0);
	}
	if (d->src[0]) {
		fputs("  ", out);
		put(out, pc, C_SRC, d->src, 0);
	}
}

void print_addr(FILE *out, const struct print_ctx *pc, uint64_t addr)
{
	struct addr_desc d;

	describe(pc, addr, 0, &d);
	put_desc(out, pc, &d);
}

/*
 * One instruction, or a gap (@addr 0), after @indent columns: address,
 * symbol and line where there are symbols, and the instruction.
 */
static void insn_row(FILE *out, const struct print_ctx *pc, int indent,
		     uint64_t addr, int gap)
{
	struct addr_desc d;

	fprintf(out, "%*s", indent, "");
	if (!addr) {
		put_gap(out, pc, gap);
		fputc('\n', out);
		return;
	}
	describe(pc, addr, 1, &d);
	put_addr(out, pc, d.addr, INSN_ADDR_W);
	fputs("  ", out);
	if (pc->symtab) {
		put(out, pc, C_SYM, d.sym, INSN_SYM_W);
		fputs("  ", out);
		put(out, pc, C_SRC, d.src, INSN_SRC_W);
		fputs("  ", out);
	}
	put(out, pc, C_OFF, d.insn[0] ? d.insn : "(no code)", 0);
	fputc('\n', out);
}

static int kind_color(int kind)
{
	switch (kind) {
	case BT_BR_CALL:
	case BT_BR_ICALL:
		return C_CALL;
	case BT_BR_RET:
	case BT_BR_SYSRET:
		return C_RET;
	case BT_BR_INTR:
	case BT_BR_GAP:
		return C_GAP;
	}
	return C_KIND;
}

static int maxw(int w, const char *s, int cap)
{
	int len = (int)strlen(s);

	if (len > cap)
		len = cap;
	return len > w ? len : w;
}

static void widen(struct widths *w, const struct row *r)
{
	w->time = maxw(w->time, r->time, 24);
	w->idx = maxw(w->idx, r->idx, 16);
	if (r->gap)
		return;
	w->faddr = maxw(w->faddr, r->from.addr, 24);
	w->fsym = maxw(w->fsym, r->from.sym, SYM_MAX);
	w->fsrc = maxw(w->fsrc, r->from.src, SYM_MAX);
	w->insn = maxw(w->insn, r->from.insn, SYM_MAX);
	w->kind = maxw(w->kind, bt_branch_kind_name(r->br->kind), 16);
	w->taddr = maxw(w->taddr, r->to.addr, 24);
	w->tsym = maxw(w->tsym, r->to.sym, SYM_MAX);
}

static void print_row(FILE *out, const struct row *r, const struct widths *w,
		      const struct print_ctx *pc)
{
	if (w->time)
		fprintf(out, "  %*s", w->time, r->time);
	fprintf(out, "  %*s  ", w->idx, r->idx);
	if (r->gap) {
		put_gap(out, pc, r->br->gap);
		fputc('\n', out);
		return;
	}
	put(out, pc, C_DIM, r->from.addr, w->faddr);
	fputs("  ", out);
	if (w->fsym) {
		put(out, pc, C_SYM, r->from.sym, w->fsym);
		fputs("  ", out);
	}
	if (w->fsrc) {
		put(out, pc, C_SRC, r->from.src, w->fsrc);
		fputs("  ", out);
	}
	if (w->insn) {
		put(out, pc, C_OFF, r->from.insn, w->insn);
		fputs("  ", out);
	}
	put(out, pc, kind_color(r->br->kind),
	    bt_branch_kind_name(r->br->kind), w->kind);
	fputs(" -> ", out);
	put(out, pc, C_DIM, r->to.addr, r->to.sym[0] || r->to.src[0] ?
					   w->taddr : 0);
	if (r->to.sym[0] || r->to.src[0]) {
		fputs("  ", out);
		put(out, pc, C_SYM, r->to.sym, r->to.src[0] ? w->tsym : 0);
	}
	if (r->to.src[0]) {
		fputs("  ", out);
		put(out, pc, C_SRC, r->to.src, 0);
	}
	fputc('\n', out);
}

#define BLOCK_MAX 4096	/* bytes of one block shown with its branch */

/*
 * The code of branch @i's block, [the previous branch's target, its own
 * address], under its row; a block not known or too long to be one
 * straight run shows only the branch instruction.
 */
static void print_block(FILE *out, const struct bt_history *h, size_t i,
			int indent, const struct print_ctx *pc)
{
	const struct bt_branch *b = &h->branch[i];
	uint8_t code[BLOCK_MAX + BT_INSN_MAX_LEN];
	uint64_t start = 0, at;
	char text[96];
	ssize_t n;
	int len;

	if (i && h->branch[i - 1].kind != BT_BR_GAP)
		start = h->branch[i - 1].to;
	if (!start || start > b->from || b->from - start >= BLOCK_MAX) {
		fprintf(out, "%*s...\n", indent, "");
		start = b->from;
	}
	n = pc->read && pc->dis ? pc->read(pc->read_ctx, start, code,
					   b->from - start + BT_INSN_MAX_LEN)
				: 0;
	for (at = start; n > 0 && at < b->from; at += len) {
		len = bt_insn_format(pc->dis, code + (at - start),
				     n - (at - start), at, text, sizeof(text));
		if (len <= 0)
			break;
		insn_row(out, pc, indent, at, 0);
	}
	insn_row(out, pc, indent, b->from, 0);
}

/*
 * "-1.234 ms": how long before the stop (pc->time_ref, else the end of
 * @h) time @ts was; "?" where the trace has no time.
 */
static void time_before(char *buf, size_t size, const struct bt_history *h,
			uint64_t ts, const struct print_ctx *pc)
{
	uint64_t ref = pc->time_ref ? pc->time_ref : h->end_ts;

	if (!ts || !h->end_ts)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "-%.3f ms",
			 ref > ts ? (double)(ref - ts) / 1e6 : 0.0);
}

/* "1.234 ms", "56.789 us", "12 ns", "3.210 s": a duration of @ns. */
static void duration_text(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, size, "%.3f us", (double)ns / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 " ns", ns);
}

static void text_branches(FILE *out, const struct print_thread *th,
			  const struct print_ctx *pc)
{
	const struct bt_history *h = th->hist;
	struct widths w = { 0 };
	size_t i, first, end;
	struct row *rows;

	window(th, h ? h->count : 0, &first, &end);
	if (first == end) {
		fprintf(out, "  (no branches recorded for thread %d)\n",
			th->tid);
		return;
	}
	rows = calloc(end - first, sizeof(*rows));
	if (!rows)
		return;
	for (i = first; i < end; i++) {
		struct row *r = &rows[i - first];

		r->br = &h->branch[i];
		r->gap = r->br->kind == BT_BR_GAP;
		snprintf(r->idx, sizeof(r->idx), "-%zu", h->count - i);
		if (pc->time)
			time_before(r->time, sizeof(r->time), h, r->br->ts, pc);
		if (!r->gap) {
			describe(pc, r->br->from, 1, &r->from);
			describe(pc, r->br->to, 0, &r->to);
		}
		widen(&w, r);
	}
	for (i = first; i < end; i++) {
		if (pc->blocks && !rows[i - first].gap)
			print_block(out, h, i, w.idx + 6, pc);
		print_row(out, &rows[i - first], &w, pc);
	}
	free(rows);
}

/* Instructions as they come, in the fixed columns. */
static int insn_text_row(uint64_t addr, int gap, void *ctx)
{
	struct insn_out *it = ctx;

	insn_row(it->out, it->pc, 2, addr, gap);
	it->n++;
	return 0;
}

static void text_insns(FILE *out, const struct print_thread *th,
		       const struct print_ctx *pc)
{
	struct insn_out it = { out, pc, 0 };
	int ret = th->insns ? th->insns(th->insns_ctx, insn_text_row, &it)
			    : 0;

	if (ret < 0)
		fprintf(out, "  (no instructions of thread %d: %s)\n", th->tid,
			bt_errstr(ret));
	else if (!it.n)
		fprintf(out, "  (no instructions recorded for thread %d)\n",
			th->tid);
}

static void call_row(FILE *out, const struct bt_call *c, const char *idx,
		     int idxw, const struct print_ctx *pc)
{
	struct addr_desc d;
	const char *f;
	char name[32], dur[32];

	fprintf(out, "  %*s  %*s", idxw, idx, 2 * c->depth, "");
	if (c->gap) {
		put_gap(out, pc, c->reason);
		fputc('\n', out);
		return;
	}
	f = func_name(pc, c->start);
	if (!f) {
		snprintf(name, sizeof(name), "0x%" PRIx64, c->start);
		f = name;
	}
	put(out, pc, C_SYM, f, 0);
	fprintf(out, "  (%zu branch%s", c->nbranches,
		c->nbranches == 1 ? "" : "es");
	if (c->ninsn)
		fprintf(out, ", %" PRIu64 " instructions", c->ninsn);
	if (c->ts) {
		duration_text(dur, sizeof(dur), c->duration);
		fprintf(out, ", %s", dur);
	}
	fputc(')', out);
	describe(pc, c->start, 0, &d);
	if (d.src[0]) {
		fputs("  ", out);
		put(out, pc, C_SRC, d.src, 0);
	}
	fputc('\n', out);
}

static void text_calls(FILE *out, const struct print_thread *th,
		       const struct print_ctx *pc)
{
	size_t i, first, end, n = th->calls ? th->calls->count : 0;
	char idx[24];
	int idxw;

	window(th, n, &first, &end);
	if (first == end) {
		fprintf(out, "  (no calls recorded for thread %d)\n", th->tid);
		return;
	}
	idxw = snprintf(idx, sizeof(idx), "-%zu", n - first);
	for (i = first; i < end; i++) {
		snprintf(idx, sizeof(idx), "-%zu", n - i);
		call_row(out, &th->calls->call[i], idx, idxw, pc);
	}
}

static void print_stop_as(FILE *out, const char *what,
			  const struct bt_stop *stop,
			  const struct print_ctx *pc)
{
	struct addr_desc d;
	char words[160], how[256];

	stop_words(stop, words, sizeof(words));
	stop_how(stop, how, sizeof(how));
	fputs(what, out);
	put(out, pc, stop->reason == BT_STOP_EXIT ? C_HEAD : C_BAD, words, 0);
	fprintf(out, " in thread %d%s%s\n", stop->tid, how[0] ? ": " : "",
		how);
	if (stop->reason == BT_STOP_KILLED || !stop->pc)
		return;
	describe(pc, stop->pc, 1, &d);
	fputs("   => ", out);
	put_desc(out, pc, &d);
	if (d.insn[0]) {
		fputs("  ", out);
		put(out, pc, C_OFF, d.insn, 0);
	}
	fputc('\n', out);
}

static void print_stop(FILE *out, const struct bt_stop *stop,
		       const struct print_ctx *pc)
{
	print_stop_as(out, "stop: ", stop, pc);
}

/* Branches in [first, end) of @hist, gaps not counted. */
static size_t count_branches(const struct bt_history *hist, size_t first,
			     size_t end)
{
	size_t i, n = 0;

	for (i = first; hist && i < end; i++)
		n += hist->branch[i].kind != BT_BR_GAP;
	return n;
}

static void head_begin(FILE *out, const struct print_ctx *pc)
{
	if (pc->color)
		fputs(colors[C_HEAD], out);
}

static void head_end(FILE *out, const struct print_ctx *pc)
{
	fprintf(out, ":%s\n", pc->color ? colors[C_OFF] : "");
}

/* "last 16 branches of thread 42, oldest first:", and the like. */
static void thread_head(FILE *out, int view, const struct print_thread *th,
			const struct print_ctx *pc)
{
	const struct bt_history *h = th->hist;
	size_t first, end, n;

	head_begin(out, pc);
	if (view == PRINT_INSNS) {
		fprintf(out, "instructions of thread %d, oldest first",
			th->tid);
	} else if (view == PRINT_CALLS) {
		n = th->calls ? th->calls->count : 0;
		window(th, n, &first, &end);
		if (th->window && end != n)
			fprintf(out, "call history of thread %d, segments -%zu to -%zu",
				th->tid, n - first, n - end + 1);
		else
			fprintf(out, "call history of thread %d, the last %zu segments",
				th->tid, end - first);
	} else {
		n = h ? h->count : 0;
		window(th, n, &first, &end);
		if (th->window && end != n)
			fprintf(out, "branches -%zu to -%zu of thread %d, oldest first",
				n - first, n - end + 1, th->tid);
		else
			fprintf(out, "last %zu branches of thread %d%s, oldest first",
				count_branches(h, first, end), th->tid,
				th->at_fault ? " up to its fault" : "");
	}
	if (h && h->lost)
		fprintf(out, " (%" PRIu64 " older ones overwritten)", h->lost);
	head_end(out, pc);
}

static void text_thread(FILE *out, int view, const struct print_thread *th,
			const struct print_ctx *pc)
{
	thread_head(out, view, th, pc);
	if (th->err) {
		fprintf(out, "  (no trace of thread %d: %s)\n", th->tid,
			bt_errstr(th->err));
		return;
	}
	if (view == PRINT_INSNS)
		text_insns(out, th, pc);
	else if (view == PRINT_CALLS)
		text_calls(out, th, pc);
	else
		text_branches(out, th, pc);
}

static void text_threads(FILE *out, const struct print_report *r,
			 const struct print_ctx *pc)
{
	const struct print_thread *th;
	size_t i;

	for (i = 0; i < r->nthreads; i++) {
		th = &r->threads[i];
		fprintf(out, "%c %d", th->current ? '*' : ' ', th->tid);
		if (th->pc) {
			fputs("  ", out);
			print_addr(out, pc, th->pc);
		} else if (th->err) {
			fprintf(out, "  (%s)", bt_errstr(th->err));
		}
		if (r->stop && r->stop->tid == th->tid)
			fputs("  (stopped here)", out);
		fputc('\n', out);
	}
}

static void text_stats(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc)
{
	if (pc->color)
		fputs(colors[C_DIM], out);
	fprintf(out, "%s backend: %" PRIu64 " instructions, %" PRIu64
		" branches, %" PRIu64 " stops traced in pid %d",
		r->backend ? r->backend : "?", r->stats->instructions,
		r->stats->branches, r->stats->stops, r->root ? r->root : r->pid);
	if (r->root && r->root != r->pid)
		fprintf(out, " and the processes it forked");
	fprintf(out, "%s\n", pc->color ? colors[C_OFF] : "");
}

static void info_thread(FILE *out, const struct print_thread *th,
			size_t bsize)
{
	if (th->err) {
		fprintf(out, "  thread %d: no trace (%s)\n", th->tid,
			bt_errstr(th->err));
		return;
	}
	fprintf(out, "  thread %d: %zu bytes captured", th->tid, th->captured);
	if (bsize)
		fprintf(out, " (%.1f%% of the buffer)",
			100.0 * (double)th->captured / (double)bsize);
	fprintf(out, ", %zu branches, %" PRIu64 " %s lost\n",
		th->hist ? th->hist->count : 0, th->lost,
		th->lost_unit ? th->lost_unit : "records");
}

static void text_info(FILE *out, const struct print_report *r,
		      const struct print_ctx *pc)
{
	const struct print_session *s = r->session;
	size_t i;

	fprintf(out, "process %d (%s, %s), backend %s\n", r->pid, s->origin,
		s->state, r->backend ? r->backend : "?");
	fprintf(out, "buffer: %zu bytes per thread\n", s->buffer_size);
	for (i = 0; i < r->nthreads; i++)
		info_thread(out, &r->threads[i], s->buffer_size);
	if (!s->nbps)
		fprintf(out, "no breakpoints\n");
	for (i = 0; i < s->nbps; i++) {
		fprintf(out, "breakpoint %d at ", s->bps[i].number);
		print_addr(out, pc, s->bps[i].addr);
		fprintf(out, "  (%s)\n", s->bps[i].spec);
	}
}

/* Did the program re-raise the fault's signal itself, to die of it? */
static int reraised(const struct print_report *r)
{
	const struct bt_stop *s = r->stop;
	const char *words, *name;

	return s && s->signal == r->fault->stop->signal &&
	       (s->reason == BT_STOP_SIGNAL || s->reason == BT_STOP_KILLED) &&
	       bt_sigcode_describe(s->signal, s->si_code, &words, &name) == 1 &&
	       s->sender == r->pid;
}

/*
 * The fault the program's handler took, first: the history up to it, the
 * fault, and what came after it.
 */
static void text_fault(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc)
{
	const struct print_fault *f = r->fault;
	char sig[32];

	text_thread(out, r->view, f->thread, pc);
	print_stop_as(out, "fault: ", f->stop, pc);
	print_signame(f->stop->signal, sig, sizeof(sig));
	fprintf(out, "the program handled %s at 0x%" PRIx64 "; its handler then ran ",
		sig, f->stop->pc);
	if (f->after != UINT64_MAX)
		fprintf(out, "%s%" PRIu64 " branches",
			f->after_lost ? "more than " : "", f->after);
	else
		fputs("on", out);
	if (reraised(r))
		fprintf(out, " and re-raised %s", sig);
	if (f->count > 1)
		fprintf(out, " (the last of %" PRIu64 " faults it handled)",
			f->count);
	fputs(":\n", out);
}

void print_report_text(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc0)
{
	struct print_ctx ctx = *pc0, *pc = &ctx;
	size_t i;

	/* --time: before the stop, the latest end of the threads' times */
	for (i = 0; pc->time && !pc0->time_ref && i < r->nthreads; i++)
		if (r->threads[i].hist &&
		    r->threads[i].hist->end_ts > ctx.time_ref)
			ctx.time_ref = r->threads[i].hist->end_ts;
	if (r->view == PRINT_THREADS) {
		text_threads(out, r, pc);
		return;
	}
	if (r->view == PRINT_INFO && r->session)
		text_info(out, r, pc);
	if (r->fault && r->view != PRINT_INFO)
		text_fault(out, r, pc);
	for (i = 0; r->view != PRINT_INFO && i < r->nthreads; i++)
		text_thread(out, r->view, &r->threads[i], pc);
	if (r->stop)
		print_stop(out, r->stop, pc);
	if (r->stats)
		text_stats(out, r, pc);
}

void print_report(FILE *out, const struct print_report *r,
		  const struct print_ctx *pc, int json)
{
	if (json)
		print_report_json(out, r, pc);
	else
		print_report_text(out, r, pc);
}
