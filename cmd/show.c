// SPDX-License-Identifier: MIT
/*
 * btrace show: decode a trace file offline and show it as `btrace run`
 * showed the live process.  Code comes from the file; symbols and lines
 * from the ELF files when they are still there with the same build-id,
 * else from the function names saved in the file, else addresses.
 */
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
#include "timeline.h"
#include "view.h"

static const char show_about[] =
	"Show the branch history saved in trace FILE (written by run --save,\n"
	"run --save-on-crash, attach --save or the session's save), decoded\n"
	"with the code saved in the file: no binaries are needed.";

static const struct cmd_desc show_desc = {
	.name = "show",
	.id = CMD_SHOW,
	.usage = "show [options] FILE",
	.about = show_about,
	.min_args = 1,
	.max_args = 1,
	.missing = "no trace file",
};

/* Everything decoding and printing a trace needs, and its cleanup. */
struct show {
	const struct cmd_opts *o;
	const char *path;
	struct bt_trace *trace;
	struct bt_image *image;
	struct print_ctx pc;
	struct view_thread *views;
	struct print_thread *threads;	/* what the printer gets */
	size_t nthreads;
};

static ssize_t read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return bt_image_read(ctx, addr, buf, len);
}

static const char *saved_symbol(void *ctx, uint64_t addr, uint64_t *offset)
{
	return bt_trace_symbol(ctx, addr, offset);
}

static int show_setup(struct show *s, FILE *out)
{
	int ret;

	s->image = bt_image_alloc();
	if (!s->image)
		return -bte_nomem;
	ret = bt_trace_add_image(s->trace, s->image);
	if (ret < 0)
		return ret;
	s->pc.read = read_image;
	s->pc.read_ctx = s->image;
	if (bt_symtab_from_maps_opts(&s->pc.symtab, &s->trace->maps,
				     debuginfo_opts()) < 0)
		s->pc.symtab = NULL;
	if (s->pc.symtab)
		bt_symtab_set_fallback(s->pc.symtab, saved_symbol, s->trace);
	if (bt_disasm_alloc(&s->pc.dis) < 0)
		s->pc.dis = NULL;
	s->pc.color = !s->o->json && print_want_color(out, s->o->no_color);
	s->pc.time = s->o->time;
	return 0;
}

static void show_release(struct show *s)
{
	size_t i;

	for (i = 0; i < s->nthreads; i++)
		view_thread_release(&s->views[i]);
	free(s->views);
	free(s->threads);
	bt_disasm_free(s->pc.dis);
	bt_symtab_free(s->pc.symtab);
	bt_image_free(s->image);
	bt_trace_free(s->trace);
}

/* The thread to show by default: the one that stopped, else the first. */
static pid_t default_tid(const struct bt_trace *t)
{
	if (bt_trace_thread(t, t->stop.tid))
		return t->stop.tid;
	return t->nthreads ? t->thread[0].tid : 0;
}

static int load_error(const char *path, int err)
{
	const char *d = bt_errdetail();

	if (-err == bte_format || -err == bte_corrupt)
		fprintf(stderr, "btrace: cannot load '%s': %s%s%s\n", path,
			-err == bte_corrupt ? "corrupt trace file" :
					      "unrecognised format",
			d[0] ? ": " : "", d);
	else
		fprintf(stderr, "btrace: cannot load '%s': %s\n", path,
			bt_errno() ? strerror(bt_errno()) : bt_errstr(err));
	return EXIT_FAIL;
}

/*
 * Decode one thread, then check the part of its data the decoder read
 * (the file is mapped and checked as far as it is used).
 */
static int decode_thread(struct show *s, const struct bt_capture *cap,
			 struct view_thread *v)
{
	struct view_src src = { .cap = cap, .image = s->image,
				.symtab = s->pc.symtab };
	const struct bt_history *h;
	int ret;

	if (cap->tid == s->trace->stop.tid)
		src.stop_pc = s->trace->stop.pc;
	ret = view_thread_init(v, s->o->view, cap->tid, &src, s->o->last);
	if (ret < 0)
		return ret;
	if (v->pt.err) {
		fprintf(stderr, "btrace: cannot decode thread %d: %s\n",
			cap->tid, bt_errstr(v->pt.err));
		return 0;
	}
	h = v->pt.hist;
	ret = bt_trace_check(s->trace, cap, h->data_begin, cap->size);
	if (ret < 0) {
		load_error(s->path, ret);
		return -bte_corrupt;
	}
	return 0;
}

static int decode_threads(struct show *s)
{
	const struct bt_trace *t = s->trace;
	pid_t tid = s->o->tid ? s->o->tid : default_tid(t);
	size_t i, n = t->nthreads ? t->nthreads : 1;
	int ret;

	s->views = calloc(n, sizeof(*s->views));
	s->threads = calloc(n, sizeof(*s->threads));
	if (!s->views || !s->threads)
		return -bte_nomem;
	for (i = 0; i < t->nthreads; i++) {
		if (!s->o->all && t->thread[i].tid != tid)
			continue;
		ret = decode_thread(s, &t->thread[i], &s->views[s->nthreads]);
		s->nthreads++;
		if (ret < 0)
			return ret;
	}
	if (!s->nthreads) {
		fprintf(stderr, "btrace: no trace of thread %d in '%s'\n",
			tid, s->path);
		return -bte_notrace;
	}
	for (i = 0; i < s->nthreads; i++)
		s->threads[i] = s->views[i].pt;
	return 0;
}

static void show_print(struct show *s, FILE *out)
{
	const struct bt_trace *t = s->trace;
	struct print_report r = { .view = s->o->view, .backend = t->backend,
				  .pid = t->pid,
				  .stop = t->stop.reason ? &t->stop : NULL,
				  .threads = s->threads,
				  .nthreads = s->nthreads,
				  .stats = &t->stats };
	const struct bt_fault *f = NULL;
	struct view_src src = { .image = s->image, .symtab = s->pc.symtab };
	struct view_fault vf;

	/* a fault its handler took before: where the crash began */
	if (s->nthreads == 1)
		f = bt_trace_fault(t, s->threads[0].tid);
	if (f) {
		view_fault_init(&vf, s->o->view, f, &src, s->o->last);
		r.fault = &vf.pf;
	}
	print_report(out, &r, &s->pc, s->o->json);
	if (f)
		view_fault_release(&vf);
}

int cmd_show(int argc, char **argv)
{
	struct cmd_opts o = { 0 };
	struct show s = { .o = &o };
	FILE *out;
	int ret;

	ret = cmd_opts_parse(&show_desc, argc, argv, &o);
	if (ret >= 0)
		return ret;
	s.path = o.args[0];
	out = cmd_opts_open(&o);
	if (!out)
		return EXIT_FAIL;
	ret = bt_trace_map(&s.trace, s.path);
	if (ret < 0) {
		cmd_opts_close(&o, out);
		return load_error(s.path, ret);
	}
	ret = show_setup(&s, out);
	if (ret == 0)
		ret = decode_threads(&s);
	if (ret == -bte_nomem)
		fprintf(stderr, "btrace: out of memory\n");
	if (ret == 0)
		show_print(&s, out);
	if (ret == 0)
		ret = timeline_write_trace(s.trace, s.image, s.pc.symtab,
					   &(struct timeline_out){
						   o.timeline, o.svg, o.last,
						   o.timeline_counts });
	show_release(&s);
	if (cmd_opts_close(&o, out) < 0)
		ret = -1;
	return ret < 0 ? EXIT_FAIL : 0;
}
