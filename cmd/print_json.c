// SPDX-License-Identifier: MIT
/*
 * The printer's JSON (print.h): a report as one document, the same for
 * every command.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>

#include "cmd.h"
#include "print.h"
#include "print_int.h"

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

/* ", "key": "value"" (null when empty) */
static void json_field(FILE *out, const char *key, const char *value)
{
	fprintf(out, ", \"%s\": ", key);
	print_json_string(out, nonempty(value));
}

/* ", "key": N" (ns), null where the trace has no time (0) */
static void json_time(FILE *out, const char *key, uint64_t ns)
{
	if (ns)
		fprintf(out, ", \"%s\": %" PRIu64, key, ns);
	else
		fprintf(out, ", \"%s\": null", key);
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
	if (br->kind == BT_BR_GAP)
		json_field(out, "gap", bt_gap_reason_name(br->gap));
	json_field(out, "from_sym", br->from ? from.sym : NULL);
	json_field(out, "to_sym", br->to ? to.sym : NULL);
	json_field(out, "from_src", from.src);
	json_field(out, "to_src", to.src);
	json_field(out, "insn", from.insn);
	json_time(out, "ts", br->ts);
	fputc('}', out);
}

/* Array elements: one a line. */
static void json_sep(FILE *out, size_t i)
{
	fputs(i ? ",\n    " : "\n    ", out);
}

static void json_end(FILE *out, size_t n)
{
	fputs(n ? "\n  ]" : "]", out);
}

static void json_branches(FILE *out, const struct print_thread *th,
			  const struct print_ctx *pc)
{
	const struct bt_history *h = th->hist;
	size_t i, first, end;

	window(th, h ? h->count : 0, &first, &end);
	fputs(", \"branches\": [", out);
	for (i = first; i < end; i++) {
		json_sep(out, i - first);
		json_branch(out, &h->branch[i], pc);
	}
	json_end(out, end - first);
}

static int json_insn(uint64_t addr, int gap, void *ctx)
{
	struct insn_out *ij = ctx;
	struct addr_desc d;

	json_sep(ij->out, ij->n++);
	if (!addr) {
		fputs("{\"gap\": ", ij->out);
		print_json_string(ij->out, bt_gap_reason_name(gap));
		fputc('}', ij->out);
		return 0;
	}
	describe(ij->pc, addr, 1, &d);
	fprintf(ij->out, "{\"addr\": \"%s\"", d.addr);
	json_field(ij->out, "sym", d.sym);
	json_field(ij->out, "src", d.src);
	json_field(ij->out, "insn", d.insn);
	fputc('}', ij->out);
	return 0;
}

static void json_insns(FILE *out, const struct print_thread *th,
		       const struct print_ctx *pc)
{
	struct insn_out ij = { out, pc, 0 };
	int ret = 0;

	fputs(", \"insns\": [", out);
	if (th->insns)
		ret = th->insns(th->insns_ctx, json_insn, &ij);
	json_end(out, ij.n);
	if (ret < 0)
		json_field(out, "error", bt_errstr(ret));
}

static void json_call(FILE *out, const struct bt_call *c,
		      const struct print_ctx *pc)
{
	struct addr_desc d;

	fprintf(out, "{\"depth\": %d", c->depth);
	if (c->gap) {
		json_field(out, "gap", bt_gap_reason_name(c->reason));
		fputc('}', out);
		return;
	}
	describe(pc, c->start, 0, &d);
	json_field(out, "func", func_name(pc, c->start));
	fprintf(out, ", \"addr\": \"%s\"", d.addr);
	json_field(out, "src", d.src);
	fprintf(out, ", \"branches\": %zu, \"instructions\": %" PRIu64,
		c->nbranches, c->ninsn);
	json_time(out, "ts", c->ts);
	if (c->ts)
		fprintf(out, ", \"duration\": %" PRIu64 "}", c->duration);
	else
		fputs(", \"duration\": null}", out);
}

static void json_calls(FILE *out, const struct print_thread *th,
		       const struct print_ctx *pc)
{
	size_t i, first, end;

	window(th, th->calls ? th->calls->count : 0, &first, &end);
	fputs(", \"calls\": [", out);
	for (i = first; i < end; i++) {
		json_sep(out, i - first);
		json_call(out, &th->calls->call[i], pc);
	}
	json_end(out, end - first);
}

/* The session's threads: where each is. */
static void json_where(FILE *out, const struct print_thread *th,
		       const struct print_ctx *pc)
{
	struct addr_desc d;

	describe(pc, th->pc, 0, &d);
	fprintf(out, ", \"current\": %s", th->current ? "true" : "false");
	if (th->pc)
		fprintf(out, ", \"pc\": \"%s\"", d.addr);
	else
		fputs(", \"pc\": null", out);
	json_field(out, "sym", th->pc ? d.sym : NULL);
	json_field(out, "src", d.src);
}

static void json_thread(FILE *out, int view, const struct print_thread *th,
			const struct print_ctx *pc)
{
	fprintf(out, "{\"tid\": %d", th->tid);
	if (th->err)
		json_field(out, "error", bt_errstr(th->err));
	if (view == PRINT_THREADS) {
		json_where(out, th, pc);
	} else if (view == PRINT_INFO) {
		fprintf(out, ", \"captured\": %zu, \"decoded\": %zu, \"lost\": %"
			PRIu64, th->captured, th->hist ? th->hist->count : 0,
			th->lost);
	} else {
		fprintf(out, ", \"lost\": %" PRIu64,
			th->hist ? th->hist->lost : 0);
		if (view == PRINT_INSNS)
			json_insns(out, th, pc);
		else if (view == PRINT_CALLS)
			json_calls(out, th, pc);
		else
			json_branches(out, th, pc);
	}
	fputc('}', out);
}

/*
 * "siginfo": how the signal came: {"si_code", "code" (its name), "what"
 * (in words), "fault" (the program's code faulted; "addr" is where),
 * "sender" ({"pid", "uid", "comm"} of a sent signal, pid null when the
 * trace file does not say), "value" (sigqueue's)}; null for a stop
 * without a signal.
 */
static void json_siginfo(FILE *out, const struct bt_stop *stop, int kind,
			 const char *words, const char *name)
{
	if (!has_siginfo(stop)) {
		fputs(", \"siginfo\": null", out);
		return;
	}
	fprintf(out, ", \"siginfo\": {\"si_code\": %d", stop->si_code);
	json_field(out, "code", name);
	json_field(out, "what", words);
	fprintf(out, ", \"fault\": %s", kind == 2 ? "true" : "false");
	if (kind == 1) {
		fputs(", \"sender\": {\"pid\": ", out);
		if (stop->sender)
			fprintf(out, "%d, \"uid\": %u", (int)stop->sender,
				(unsigned)stop->sender_uid);
		else
			fputs("null, \"uid\": null", out);
		json_field(out, "comm", stop->sender && stop->sender_comm[0] ?
				       stop->sender_comm : NULL);
		fputc('}', out);
	} else {
		fputs(", \"sender\": null", out);
	}
	if (stop->si_code == SI_QUEUE || stop->si_code == SI_TIMER ||
	    stop->si_code == SI_MESGQ)
		fprintf(out, ", \"value\": %" PRId64 "}", stop->value);
	else
		fputs(", \"value\": null}", out);
}

static void json_stop(FILE *out, const struct bt_stop *stop,
		      const struct print_ctx *pc)
{
	struct addr_desc d;
	char sig[32];
	int has_sig = stop->reason == BT_STOP_SIGNAL ||
		      stop->reason == BT_STOP_KILLED ||
		      (stop->reason == BT_STOP_INTERRUPT && stop->signal);

	const char *words = NULL, *name = NULL;
	int kind = has_siginfo(stop) ?
		bt_sigcode_describe(stop->signal, stop->si_code, &words,
				    &name) : 0;

	describe(pc, stop->pc, stop->pc != 0, &d);
	fprintf(out, "{\"tid\": %d, \"reason\": ", stop->tid);
	print_json_string(out, reason_name(stop->reason));
	json_field(out, "signal", has_sig ? print_signame(stop->signal, sig,
							  sizeof(sig)) : NULL);
	if (stop->reason == BT_STOP_EXIT)
		fprintf(out, ", \"status\": %d", stop->status);
	else
		fputs(", \"status\": null", out);
	fprintf(out, ", \"pc\": \"0x%" PRIx64 "\"", stop->pc);
	if (stop->reason == BT_STOP_SIGNAL && kind == 2)
		fprintf(out, ", \"addr\": \"0x%" PRIx64 "\"", stop->addr);
	else
		fputs(", \"addr\": null", out);
	json_siginfo(out, stop, kind, words, name);
	json_field(out, "sym", stop->pc ? d.sym : NULL);
	json_field(out, "src", d.src);
	json_field(out, "insn", d.insn);
	fputc('}', out);
}

static void json_fault(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc)
{
	const struct print_fault *f = r->fault;

	fputs(",\n \"fault\": {\"stop\": ", out);
	json_stop(out, f->stop, pc);
	if (f->after != UINT64_MAX)
		fprintf(out, ", \"after\": %" PRIu64, f->after);
	else
		fputs(", \"after\": null", out);
	fprintf(out, ", \"after_lost\": %s", f->after_lost ? "true" : "false");
	fprintf(out, ", \"count\": %" PRIu64 ", \"thread\": ", f->count);
	json_thread(out, r->view, f->thread, pc);
	fputc('}', out);
}

static void json_session(FILE *out, const struct print_session *s,
			 const struct print_ctx *pc)
{
	json_field(out, "state", s->state);
	json_field(out, "origin", s->origin);
	fprintf(out, ", \"buffer_size\": %zu", s->buffer_size);
}

static void json_breakpoints(FILE *out, const struct print_session *s,
			     const struct print_ctx *pc)
{
	struct addr_desc d;
	size_t i;

	fputs(",\n \"breakpoints\": [", out);
	for (i = 0; i < s->nbps; i++) {
		describe(pc, s->bps[i].addr, 0, &d);
		fprintf(out, "%s{\"number\": %d, \"addr\": \"%s\"",
			i ? ", " : "", s->bps[i].number, d.addr);
		json_field(out, "sym", d.sym);
		json_field(out, "src", d.src);
		json_field(out, "spec", s->bps[i].spec);
		fputc('}', out);
	}
	fputc(']', out);
}

void print_report_json(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc)
{
	int info = r->view == PRINT_INFO && r->session;
	size_t i;

	fputs("{\"btrace\": 1, \"backend\": ", out);
	print_json_string(out, r->backend);
	fprintf(out, ", \"pid\": %d", r->pid);
	if (r->root && r->root != r->pid)
		fprintf(out, ", \"root_pid\": %d", r->root);
	if (info)
		json_session(out, r->session, pc);
	fputs(",\n \"stop\": ", out);
	if (r->stop)
		json_stop(out, r->stop, pc);
	else
		fputs("null", out);
	fputs(",\n \"threads\": [", out);
	for (i = 0; i < r->nthreads; i++) {
		if (i)
			fputs(", ", out);
		json_thread(out, r->view, &r->threads[i], pc);
	}
	fputs("]", out);
	if (info)
		json_breakpoints(out, r->session, pc);
	if (r->stats)
		fprintf(out, ",\n \"stats\": {\"instructions\": %" PRIu64
			", \"branches\": %" PRIu64 ", \"stops\": %" PRIu64
			", \"displaced\": %" PRIu64 ", \"ring_bytes\": %" PRIu64
			", \"ring_read\": %" PRIu64 "}",
			r->stats->instructions, r->stats->branches,
			r->stats->stops, r->stats->displaced,
			r->stats->ring_bytes, r->stats->ring_read);
	if (r->fault && r->view != PRINT_INFO && r->view != PRINT_THREADS)
		json_fault(out, r, pc);
	fputs("}\n", out);
}
