// SPDX-License-Identifier: MIT
/*
 * --timeline FILE and --svg FILE: every thread's call history as spans
 * along time, written as Chrome Trace Event JSON (here) or as a flame
 * chart (timeline_svg.c).  See timeline.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "print.h"
#include "timeline.h"
#include "timeline_span.h"
#include "view.h"

const char *tl_clock_name(int clock)
{
	return clock == TL_CLOCK_INSN ? "instructions" :
	       clock == TL_CLOCK_TIME ? "us" : "branches";
}

const char *tl_func(const struct tl *tl, uint64_t addr, char *buf,
		    size_t size)
{
	struct bt_sym sym;

	if (tl->symtab && bt_symtab_lookup(tl->symtab, addr, &sym) == 0 &&
	    sym.name)
		return sym.name;
	snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

/* The entry of @addr's function, or @addr where no symbol says. */
static uint64_t func_entry(struct bt_symtab *symtab, uint64_t addr)
{
	struct bt_sym sym;

	if (symtab && bt_symtab_lookup(symtab, addr, &sym) == 0 && sym.name)
		return addr - sym.offset;
	return addr;
}

const char *tl_src(const struct tl *tl, uint64_t addr, char *buf,
		   size_t size)
{
	struct bt_sym sym;

	buf[0] = '\0';
	addr = func_entry(tl->symtab, addr);
	if (tl->symtab && bt_symtab_lookup(tl->symtab, addr, &sym) == 0 &&
	    sym.file && sym.line)
		snprintf(buf, size, "%s:%d", sym.file, sym.line);
	return buf;
}

const char *tl_stop_label(const struct bt_stop *stop, char *buf,
			  size_t size)
{
	char sig[16];

	switch (stop->reason) {
	case BT_STOP_SIGNAL:
	case BT_STOP_KILLED:
		return print_signame(stop->signal, buf, size);
	case BT_STOP_EXIT:
		snprintf(buf, size, "exit %d", stop->status);
		return buf;
	case BT_STOP_INTERRUPT:
		snprintf(buf, size, "interrupt%s%s", stop->signal ? " " : "",
			 stop->signal ? print_signame(stop->signal, sig,
						      sizeof(sig)) : "");
		return buf;
	case BT_STOP_BREAK:
		snprintf(buf, size, "breakpoint %d", stop->breakpoint);
		return buf;
	}
	snprintf(buf, size, "stop");
	return buf;
}

/* ---- segments into spans ---- */

/*
 * How long segment @c lasts on @clock: the one place a segment becomes
 * time.  Never 0, so that every call is seen.
 */
static uint64_t span_clock(const struct bt_call *c, int clock)
{
	uint64_t n = clock == TL_CLOCK_INSN ? c->ninsn : c->nbranches;

	if (clock == TL_CLOCK_TIME)
		return c->duration / 1000;
	return n ? n : 1;
}

/*
 * Where segment @c starts on the time clock (us from @t0), or @t, where
 * it would start on the others.
 */
static uint64_t span_start(const struct bt_call *c, int clock, uint64_t t0,
			   uint64_t t)
{
	if (clock != TL_CLOCK_TIME)
		return t;
	return c->ts > t0 ? (c->ts - t0) / 1000 : 0;
}

/*
 * The clock the whole file uses: time if the trace has timestamps, else
 * instructions if any segment has them; *@t0 the earliest time.
 */
static int pick_clock(const struct bt_calls *const *calls, size_t n,
		      int counts, uint64_t *t0)
{
	size_t i, j;
	int insn = 0;

	*t0 = 0;
	for (i = 0; i < n; i++)
		for (j = 0; calls[i] && j < calls[i]->count; j++) {
			const struct bt_call *c = &calls[i]->call[j];

			insn |= c->ninsn != 0;
			if (c->ts && (!*t0 || c->ts < *t0))
				*t0 = c->ts;
		}
	if (*t0 && !counts)
		return TL_CLOCK_TIME;
	return insn ? TL_CLOCK_INSN : TL_CLOCK_BRANCH;
}

/* The spans of one lane while they are built: the open ones on a stack. */
struct builder {
	struct tl_lane *lane;
	struct bt_symtab *symtab;
	size_t *open;		/* indices into lane->span */
	size_t nopen;
	uint64_t base;		/* the window's start, or the last gap's end */
	int shallowest;		/* since @base; INT_MAX: nothing yet */
};

static void close_to(struct builder *b, int depth, uint64_t t)
{
	struct tl_span *s;

	while (b->nopen) {
		s = &b->lane->span[b->open[b->nopen - 1]];
		if (s->depth <= depth)
			break;
		s->end = t;
		b->nopen--;
	}
}

static struct tl_span *push(struct builder *b, int depth, uint64_t start)
{
	struct tl_span *s = &b->lane->span[b->lane->n];

	memset(s, 0, sizeof(*s));
	s->depth = depth;
	s->start = start;
	b->open[b->nopen++] = b->lane->n++;
	return s;
}

static void add_gap(struct builder *b, const struct bt_call *c, uint64_t t,
		    uint64_t len)
{
	struct tl_span *s;

	close_to(b, -1, t);
	s = push(b, 0, t);
	s->gap = 1;
	s->reason = c->reason;
	s->end = t + len;
	b->nopen--;
	b->base = t + len;
	b->shallowest = INT_MAX;
}

/*
 * Segment @c at @t: deeper frames have returned; the frame at its depth
 * goes on if it is the same function, else a new call starts.  A frame
 * shallower than any since the window's start was entered before it:
 * its span starts there.
 */
static void add_segment(struct builder *b, const struct bt_call *c,
			uint64_t t)
{
	struct tl_span *top;
	int d = c->depth;

	close_to(b, d, t);
	top = b->nopen ? &b->lane->span[b->open[b->nopen - 1]] : NULL;
	if (top && top->depth == d &&
	    func_entry(b->symtab, top->addr) == func_entry(b->symtab, c->start))
		return;
	if (top && top->depth == d)
		close_to(b, d - 1, t);
	top = push(b, d, d < b->shallowest ? b->base : t);
	top->addr = c->start;
	if (d < b->shallowest)
		b->shallowest = d;
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct tl_span *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;
}

/* @calls into @lane's spans; the SVG's window starts @last from the end. */
static int lane_build(struct tl_lane *lane, const struct bt_calls *calls,
		      struct bt_symtab *symtab, int clock, uint64_t t0,
		      size_t last)
{
	struct builder b = { .lane = lane, .symtab = symtab,
			     .shallowest = INT_MAX };
	size_t i, recent = last && calls->count > last ? calls->count - last : 0;
	uint64_t t = 0, len;

	lane->span = calloc(calls->count + 1, sizeof(*lane->span));
	b.open = calloc(calls->count + 1, sizeof(*b.open));
	if (!lane->span || !b.open) {
		free(b.open);
		return -bte_nomem;
	}
	for (i = 0; i < calls->count; i++) {
		const struct bt_call *c = &calls->call[i];

		t = span_start(c, clock, t0, t);
		if (i == recent)
			lane->recent = t;
		len = span_clock(c, clock);
		if (c->gap)
			add_gap(&b, c, t, len);
		else
			add_segment(&b, c, t);
		t += len;
	}
	for (i = 0; i < b.nopen; i++) {
		lane->span[b.open[i]].end = t;
		lane->span[b.open[i]].open = 1;
	}
	lane->len = t;
	free(b.open);
	qsort(lane->span, lane->n, sizeof(*lane->span), span_cmp);
	return 0;
}

/* ---- the threads of a trace ---- */

/* The thread that stopped first, then the others in the file's order. */
static size_t lane_order(const struct bt_trace *tr, size_t i)
{
	size_t s;

	for (s = 0; s < tr->nthreads; s++)
		if (tr->thread[s].tid == tr->stop.tid)
			break;
	if (s == tr->nthreads)
		return i;
	return i == 0 ? s : i <= s ? i - 1 : i;
}

static int lane_from_capture(struct tl *tl, struct tl_lane *lane,
			     const struct bt_capture *cap,
			     struct bt_image *image, struct view_thread *v)
{
	struct view_src src = { .cap = cap, .image = image,
				.symtab = tl->symtab };
	int ret;

	lane->tid = cap->tid;
	if (cap->tid == tl->tr->stop.tid)
		src.stop_pc = tl->tr->stop.pc;
	ret = view_thread_init(v, PRINT_CALLS, cap->tid, &src, 0);
	if (ret < 0 || v->pt.err || !tl->tr->mapping)
		return ret;
	/* a mapped file is checked as far as it is read (show.c) */
	return bt_trace_check(tl->tr, cap, v->pt.hist->data_begin, cap->size);
}

static void tl_release(struct tl *tl)
{
	size_t i;

	for (i = 0; tl->lane && i < tl->nlanes; i++)
		free(tl->lane[i].span);
	free(tl->lane);
}

/* Decode every thread of @tl->tr and cut its history into spans. */
static int tl_build(struct tl *tl, struct bt_image *image, size_t last,
		    int counts)
{
	const struct bt_trace *tr = tl->tr;
	struct view_thread *v = calloc(tr->nthreads + 1, sizeof(*v));
	const struct bt_calls **calls = calloc(tr->nthreads + 1,
					       sizeof(*calls));
	size_t i;
	int ret = -bte_nomem;

	tl->lane = calloc(tr->nthreads + 1, sizeof(*tl->lane));
	if (!v || !calls || !tl->lane)
		goto out;
	tl->nlanes = tr->nthreads;
	for (i = 0; i < tr->nthreads; i++) {
		ret = lane_from_capture(tl, &tl->lane[i],
					&tr->thread[lane_order(tr, i)], image,
					&v[i]);
		if (ret < 0)
			goto out;
		tl->lane[i].err = v[i].pt.err;
		calls[i] = v[i].calls;
	}
	tl->clock = pick_clock(calls, tr->nthreads, counts, &tl->t0);
	for (i = 0; i < tr->nthreads; i++) {
		if (calls[i])
			ret = lane_build(&tl->lane[i], calls[i], tl->symtab,
					 tl->clock, tl->t0, last);
		if (ret < 0)
			goto out;
		if (tl->lane[i].len > tl->end)
			tl->end = tl->lane[i].len;
	}
	/* time: the threads as they ran, the stop where its thread ended */
	if (tl->clock == TL_CLOCK_TIME && tl->nlanes &&
	    tl->lane[0].tid == tr->stop.tid && tl->lane[0].len)
		tl->end = tl->lane[0].len;
	for (i = 0; tl->clock != TL_CLOCK_TIME && i < tl->nlanes; i++)
		tl->lane[i].offset = tl->end - tl->lane[i].len;
	ret = 0;
out:
	for (i = 0; v && i < tr->nthreads; i++)
		view_thread_release(&v[i]);
	free(v);
	free(calls);
	return ret;
}

/* ---- Chrome Trace Event JSON ---- */

/*
 * @t on the clock as the format's microseconds: one unit, one
 * microsecond.  Integers, because viewers compute an end as ts + dur in
 * floating point: with decimals (1 unit as 1 ns), a callee's end came out
 * past its caller's and speedscope nested them wrong.
 */
static void put_us(FILE *out, const char *key, uint64_t t)
{
	fprintf(out, ", \"%s\": %" PRIu64, key, t);
}

static void json_meta(FILE *out, pid_t pid, pid_t tid, const char *name,
		      const char *key, const char *value)
{
	fprintf(out, ",\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": ",
		(int)pid, (int)tid);
	print_json_string(out, name);
	fprintf(out, ", \"args\": {\"%s\": ", key);
	print_json_string(out, value);
	fputs("}}", out);
}

static void json_span(FILE *out, const struct tl *tl,
		      const struct tl_lane *lane, const struct tl_span *s)
{
	char buf[32], src[160];

	fprintf(out, ",\n{\"ph\": \"%s\", \"pid\": %d, \"tid\": %d",
		s->gap ? "i" : "X", (int)tl->tr->pid, (int)lane->tid);
	put_us(out, "ts", lane->offset + s->start);
	if (s->gap) {
		snprintf(src, sizeof(src), "gap: %s",
			 bt_gap_reason_name(s->reason));
		fputs(", \"s\": \"t\", \"cat\": \"gap\", \"name\": ", out);
		print_json_string(out, src);
		fputc('}', out);
		return;
	}
	put_us(out, "dur", s->end - s->start);
	/* a call not returned by the stop: "open" among its categories */
	fprintf(out, ", \"cat\": \"%s\", \"name\": ",
		s->open ? "call,open" : "call");
	print_json_string(out, tl_func(tl, s->addr, buf, sizeof(buf)));
	/*
	 * The same args for every call of a function (its source, nothing
	 * of this call): speedscope tells frames apart by name and args.
	 */
	if (tl_src(tl, s->addr, src, sizeof(src))[0]) {
		fputs(", \"args\": {\"src\": ", out);
		print_json_string(out, src);
		fputc('}', out);
	}
	fputc('}', out);
}

static void json_threads(FILE *out, const struct tl *tl)
{
	const struct bt_trace *tr = tl->tr;
	char name[128], stop[32];
	size_t i, n;

	for (i = 0; i < tl->nlanes; i++) {
		n = snprintf(name, sizeof(name), "thread %d",
			     (int)tl->lane[i].tid);
		if (tl->lane[i].tid == tr->stop.tid && tr->stop.reason)
			n += snprintf(name + n, sizeof(name) - n,
				      " (stopped: %s)",
				      tl_stop_label(&tr->stop, stop,
						    sizeof(stop)));
		if (tl->lane[i].err)
			snprintf(name + n, sizeof(name) - n, " (no trace: %s)",
				 bt_errstr(tl->lane[i].err));
		json_meta(out, tr->pid, tl->lane[i].tid, "thread_name", "name",
			  name);
		fprintf(out, ",\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
			"\"name\": \"thread_sort_index\", \"args\": "
			"{\"sort_index\": %zu}}", (int)tr->pid,
			(int)tl->lane[i].tid, i);
	}
}

static void json_stop(FILE *out, const struct tl *tl)
{
	const struct bt_trace *tr = tl->tr;
	char label[48], stop[32];

	if (!tr->stop.reason)
		return;
	snprintf(label, sizeof(label), "stop: %s",
		 tl_stop_label(&tr->stop, stop, sizeof(stop)));
	fprintf(out, ",\n{\"ph\": \"i\", \"s\": \"p\", \"pid\": %d, "
		"\"tid\": %d", (int)tr->pid, (int)tr->stop.tid);
	put_us(out, "ts", tl->end);
	fputs(", \"cat\": \"stop\", \"name\": ", out);
	print_json_string(out, label);
	fprintf(out, ", \"args\": {\"pc\": \"0x%" PRIx64 "\"}}", tr->stop.pc);
}

static const char *clock_note(int clock)
{
	if (clock == TL_CLOCK_TIME)
		return "time: the trace's timestamps (CLOCK_MONOTONIC), in us "
		       "from the first event";
	return clock == TL_CLOCK_INSN ?
		"no timestamps in this trace: time is the instruction count, "
		"1 instruction drawn as 1 us; every thread ends at the stop" :
		"no timestamps in this trace: time is the branch count, "
		"1 branch drawn as 1 us; every thread ends at the stop";
}

static void tl_write_json(FILE *out, const struct tl *tl)
{
	const struct bt_trace *tr = tl->tr;
	const char *exe = tr->exe ? strrchr(tr->exe, '/') : NULL;
	size_t i, j;

	exe = exe ? exe + 1 : tr->exe ? tr->exe : "process";
	fputs("{\"traceEvents\": [\n", out);
	fprintf(out, "{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": "
		"\"process_name\", \"args\": {\"name\": ", (int)tr->pid,
		(int)tr->pid);
	print_json_string(out, exe);
	fputs("}}", out);
	json_meta(out, tr->pid, tr->pid, "process_labels", "labels",
		  clock_note(tl->clock));
	json_threads(out, tl);
	for (i = 0; i < tl->nlanes; i++)
		for (j = 0; j < tl->lane[i].n; j++)
			json_span(out, tl, &tl->lane[i], &tl->lane[i].span[j]);
	json_stop(out, tl);
	fputs("\n],\n\"otherData\": {\"btrace\": 1, "
	      "\"clock\": ", out);
	print_json_string(out, tl_clock_name(tl->clock));
	fputs(", \"note\": ", out);
	print_json_string(out, clock_note(tl->clock));
	fputs(", \"backend\": ", out);
	print_json_string(out, tr->backend);
	fprintf(out, ", \"pid\": %d}}\n", (int)tr->pid);
}

/* ---- the files ---- */

static int write_file(const char *path, const char *what, const struct tl *tl,
		      int svg)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f) {
		fprintf(stderr, "btrace: cannot write '%s': %s\n", path,
			strerror(errno));
		return -bte_io;
	}
	if (svg)
		tl_write_svg(f, tl);
	else
		tl_write_json(f, tl);
	err = ferror(f) != 0;
	if (fclose(f) != 0 || err) {
		fprintf(stderr, "btrace: cannot write '%s': %s\n", path,
			strerror(errno));
		return -bte_io;
	}
	fprintf(stderr, "btrace: %s written to %s\n", what, path);
	return 0;
}

int timeline_write_trace(const struct bt_trace *tr, struct bt_image *image,
			 struct bt_symtab *symtab,
			 const struct timeline_out *to)
{
	struct tl tl = { .tr = tr, .symtab = symtab };
	int ret;

	if (!to->json && !to->svg)
		return 0;
	ret = tl_build(&tl, image, to->last, to->counts);
	if (ret < 0)
		fprintf(stderr, "btrace: no timeline: %s\n", bt_errstr(ret));
	if (ret == 0 && to->json)
		ret = write_file(to->json, "timeline", &tl, 0);
	if (ret == 0 && to->svg)
		ret = write_file(to->svg, "flame chart", &tl, 1);
	tl_release(&tl);
	return ret;
}

int timeline_write_target(struct bt_target *target, const struct bt_stop *stop,
			  struct bt_symtab *symtab,
			  const struct timeline_out *to)
{
	struct bt_symtab *own = NULL;
	struct bt_trace *tr = NULL;
	struct bt_image *image = NULL;
	int ret;

	if (!to->json && !to->svg)
		return 0;
	if (!symtab && bt_symtab_from_pid_opts(&own, bt_target_pid(target),
					       debuginfo_opts()) == 0)
		symtab = own;
	ret = bt_trace_from_target(&tr, target, stop);
	if (ret < 0) {
		fprintf(stderr, "btrace: no timeline: %s\n", bt_errstr(ret));
		goto out;
	}
	image = bt_image_alloc();
	ret = image ? bt_trace_add_image(tr, image) : -bte_nomem;
	if (ret == 0)
		ret = timeline_write_trace(tr, image, symtab, to);
	else
		fprintf(stderr, "btrace: no timeline: %s\n", bt_errstr(ret));
out:
	bt_image_free(image);
	bt_trace_free(tr);
	bt_symtab_free(own);
	return ret;
}
