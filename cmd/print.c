// SPDX-License-Identifier: MIT
/*
 * Output shared by every front end: branch histories and stops as aligned
 * text (one line per branch, most recent last, like a debugger's
 * backtrace read upside down) or as JSON (see print.h for its shape).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "print.h"

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

/* What is known about one address. */
struct addr_desc {
	char addr[24];
	char sym[160];
	char src[160];		/* "file.c:12", or "" */
	char insn[96];		/* "call 0x401126", or "" */
};

static void describe(const struct print_ctx *pc, uint64_t addr, int insn,
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

/* ---- text ---- */

struct row {
	int gap;
	const struct bt_branch *br;
	char idx[24];
	struct addr_desc from, to;
};

struct widths {
	int idx, faddr, fsym, fsrc, insn, kind, taddr, tsym;
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

static void print_gap_row(FILE *out, const struct row *r,
			  const struct widths *w, const struct print_ctx *pc)
{
	fprintf(out, "  %*s  ", w->idx, r->idx);
	if (pc->color)
		fputs(colors[C_GAP], out);
	fprintf(out, "-- gap: %s --", bt_gap_reason_name(r->br->gap));
	if (pc->color)
		fputs(colors[C_OFF], out);
	fputc('\n', out);
}

static void print_row(FILE *out, const struct row *r, const struct widths *w,
		      const struct print_ctx *pc)
{
	if (r->gap) {
		print_gap_row(out, r, w, pc);
		return;
	}
	fprintf(out, "  %*s  ", w->idx, r->idx);
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

void print_history(FILE *out, pid_t tid, const struct bt_history *hist,
		   const struct print_ctx *pc)
{
	struct widths w = { 0 };
	struct row *rows;
	size_t i, n = hist ? hist->count : 0;

	if (!n) {
		fprintf(out, "  (no branches recorded for thread %d)\n", tid);
		return;
	}
	rows = calloc(n, sizeof(*rows));
	if (!rows)
		return;
	for (i = 0; i < n; i++) {
		struct row *r = &rows[i];

		r->br = &hist->branch[i];
		r->gap = r->br->kind == BT_BR_GAP;
		snprintf(r->idx, sizeof(r->idx), "-%zu", n - i);
		if (!r->gap) {
			describe(pc, r->br->from, 1, &r->from);
			describe(pc, r->br->to, 0, &r->to);
		}
		widen(&w, r);
	}
	for (i = 0; i < n; i++)
		print_row(out, &rows[i], &w, pc);
	free(rows);
}

static const char *reason_name(int reason)
{
	static const char *const names[] = {
		[BT_STOP_NONE] = "none",	 [BT_STOP_SIGNAL] = "signal",
		[BT_STOP_EXIT] = "exit",	 [BT_STOP_INTERRUPT] = "interrupt",
		[BT_STOP_BREAK] = "break",	 [BT_STOP_KILLED] = "killed",
		[BT_STOP_STEP] = "step",
	};

	if (reason < 0 || reason >= (int)BT_ARRAY_SIZE(names))
		return "?";
	return names[reason];
}

/* Signals whose si_addr says where the fault was. */
static int is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	       sig == SIGFPE;
}

/* "SIGSEGV (Segmentation fault) at address 0x0", "exit with status 3"... */
static void stop_words(const struct bt_stop *stop, char *buf, size_t size)
{
	char sig[32];

	print_signame(stop->signal, sig, sizeof(sig));
	switch (stop->reason) {
	case BT_STOP_SIGNAL:
		if (stop->signal == SIGSEGV || stop->signal == SIGBUS)
			snprintf(buf, size, "%s (%s) at address 0x%" PRIx64,
				 sig, strsignal(stop->signal), stop->addr);
		else
			snprintf(buf, size, "%s (%s)", sig,
				 strsignal(stop->signal));
		break;
	case BT_STOP_EXIT:
		snprintf(buf, size, "exit with status %d", stop->status);
		break;
	case BT_STOP_INTERRUPT:
		if (stop->signal)
			snprintf(buf, size, "interrupted by %s", sig);
		else
			snprintf(buf, size, "interrupted");
		break;
	case BT_STOP_BREAK:
		snprintf(buf, size, "breakpoint %d", stop->breakpoint);
		break;
	case BT_STOP_KILLED:
		snprintf(buf, size, "killed by %s", sig);
		break;
	default:
		snprintf(buf, size, "stopped");
	}
}

void print_stop(FILE *out, const struct bt_stop *stop,
		const struct print_ctx *pc)
{
	struct addr_desc d;
	char words[160];

	stop_words(stop, words, sizeof(words));
	fputs("stop: ", out);
	put(out, pc, stop->reason == BT_STOP_EXIT ? C_HEAD : C_BAD, words, 0);
	fprintf(out, " in thread %d\n", stop->tid);
	if (stop->reason == BT_STOP_KILLED || !stop->pc)
		return;
	describe(pc, stop->pc, 1, &d);
	fputs("   => ", out);
	put(out, pc, C_DIM, d.addr, 0);
	if (d.sym[0]) {
		fputs("  ", out);
		put(out, pc, C_SYM, d.sym, 0);
	}
	if (d.src[0]) {
		fputs("  ", out);
		put(out, pc, C_SRC, d.src, 0);
	}
	if (d.insn[0]) {
		fputs("  ", out);
		put(out, pc, C_OFF, d.insn, 0);
	}
	fputc('\n', out);
}

/* Branches in @hist, gaps not counted. */
static size_t count_branches(const struct bt_history *hist)
{
	size_t i, n = 0;

	for (i = 0; hist && i < hist->count; i++)
		n += hist->branch[i].kind != BT_BR_GAP;
	return n;
}

void print_report_text(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc)
{
	const struct bt_history *hist;
	size_t i;

	for (i = 0; i < r->nthreads; i++) {
		hist = r->threads[i].hist;
		if (pc->color)
			fputs(colors[C_HEAD], out);
		fprintf(out, "last %zu branches of thread %d, oldest first",
			count_branches(hist), r->threads[i].tid);
		if (hist && hist->lost)
			fprintf(out, " (%" PRIu64 " older ones overwritten)",
				hist->lost);
		fprintf(out, ":%s\n", pc->color ? colors[C_OFF] : "");
		print_history(out, r->threads[i].tid, hist, pc);
	}
	if (r->stop)
		print_stop(out, r->stop, pc);
	if (r->stats) {
		if (pc->color)
			fputs(colors[C_DIM], out);
		fprintf(out, "%s backend: %" PRIu64 " instructions, %" PRIu64
			" branches, %" PRIu64 " stops traced in pid %d%s\n",
			r->backend ? r->backend : "?", r->stats->instructions,
			r->stats->branches, r->stats->stops, r->pid,
			pc->color ? colors[C_OFF] : "");
	}
}

/* ---- JSON ---- */

void print_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

static void json_branch(FILE *out, const struct bt_branch *br,
			const struct print_ctx *pc)
{
	struct addr_desc from, to;

	describe(pc, br->from, br->kind != BT_BR_GAP, &from);
	describe(pc, br->to, 0, &to);
	fprintf(out, "{\"from\": \"0x%" PRIx64 "\", \"to\": \"0x%" PRIx64
		"\", \"kind\": ", br->from, br->to);
	print_json_string(out, bt_branch_kind_name(br->kind));
	if (br->kind == BT_BR_GAP) {
		fputs(", \"gap\": ", out);
		print_json_string(out, bt_gap_reason_name(br->gap));
	}
	fputs(", \"from_sym\": ", out);
	print_json_string(out, br->from ? nonempty(from.sym) : NULL);
	fputs(", \"to_sym\": ", out);
	print_json_string(out, br->to ? nonempty(to.sym) : NULL);
	fputs(", \"from_src\": ", out);
	print_json_string(out, nonempty(from.src));
	fputs(", \"to_src\": ", out);
	print_json_string(out, nonempty(to.src));
	fputs(", \"insn\": ", out);
	print_json_string(out, nonempty(from.insn));
	fputc('}', out);
}

void print_json_branches(FILE *out, const struct bt_history *hist,
			 const struct print_ctx *pc)
{
	size_t i;

	fputc('[', out);
	for (i = 0; hist && i < hist->count; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		json_branch(out, &hist->branch[i], pc);
	}
	fputs(hist && hist->count ? "\n  ]" : "]", out);
}

void print_json_stop(FILE *out, const struct bt_stop *stop,
		     const struct print_ctx *pc)
{
	struct addr_desc d;
	char sig[32];
	int has_sig = stop->reason == BT_STOP_SIGNAL ||
		      stop->reason == BT_STOP_KILLED ||
		      (stop->reason == BT_STOP_INTERRUPT && stop->signal);

	describe(pc, stop->pc, stop->pc != 0, &d);
	fprintf(out, "{\"tid\": %d, \"reason\": ", stop->tid);
	print_json_string(out, reason_name(stop->reason));
	fputs(", \"signal\": ", out);
	print_json_string(out, has_sig ? print_signame(stop->signal, sig,
							sizeof(sig)) : NULL);
	if (stop->reason == BT_STOP_EXIT)
		fprintf(out, ", \"status\": %d", stop->status);
	else
		fputs(", \"status\": null", out);
	fprintf(out, ", \"pc\": \"0x%" PRIx64 "\"", stop->pc);
	if (stop->reason == BT_STOP_SIGNAL && is_fault(stop->signal))
		fprintf(out, ", \"addr\": \"0x%" PRIx64 "\"", stop->addr);
	else
		fputs(", \"addr\": null", out);
	fputs(", \"sym\": ", out);
	print_json_string(out, stop->pc ? nonempty(d.sym) : NULL);
	fputs(", \"src\": ", out);
	print_json_string(out, nonempty(d.src));
	fputs(", \"insn\": ", out);
	print_json_string(out, nonempty(d.insn));
	fputc('}', out);
}

void print_report_json(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc)
{
	const struct bt_history *hist;
	size_t i;

	fputs("{\"btrace\": 1, \"backend\": ", out);
	print_json_string(out, r->backend);
	fprintf(out, ", \"pid\": %d,\n \"stop\": ", r->pid);
	if (r->stop)
		print_json_stop(out, r->stop, pc);
	else
		fputs("null", out);
	fputs(",\n \"threads\": [", out);
	for (i = 0; i < r->nthreads; i++) {
		hist = r->threads[i].hist;
		fprintf(out, "%s{\"tid\": %d, \"lost\": %" PRIu64
			", \"branches\": ", i ? ", " : "", r->threads[i].tid,
			hist ? hist->lost : 0);
		print_json_branches(out, hist, pc);
		fputc('}', out);
	}
	fputs("]", out);
	if (r->stats)
		fprintf(out, ",\n \"stats\": {\"instructions\": %" PRIu64
			", \"branches\": %" PRIu64 ", \"stops\": %" PRIu64
			", \"displaced\": %" PRIu64 "}",
			r->stats->instructions, r->stats->branches,
			r->stats->stops, r->stats->displaced);
	fputs("}\n", out);
}
