// SPDX-License-Identifier: MIT
/*
 * btrace show: decode a trace file offline and show it as `btrace run`
 * showed the live process.  Code comes from the file; symbols and lines
 * from the ELF files when they are still there with the same build-id,
 * else from the function names saved in the file, else addresses.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "calls.h"
#include "print.h"

#define SHOW_DEFAULT_LAST 32

struct show_opts {
	size_t last;
	int json;
	int insn;
	int calls;
	int all;
	int no_color;
	pid_t tid;
	const char *path;
};

static const char show_usage[] =
	"usage: btrace show [--last N] [--insn | --calls | --json]\n"
	"                   [--thread TID | --all]\n"
	"                   [--no-color] FILE\n";

static const char show_help[] =
	"Show the branch history saved in trace FILE (written by run --save,\n"
	"run --save-on-crash, attach --save or the session's save), decoded\n"
	"with the code saved in the file: no binaries are needed.\n\n"
	"  -n, --last N       branches to show (default 32)\n"
	"  -i, --insn         every instruction of those branches' blocks\n"
	"  -c, --calls        the function-call history of those branches,\n"
	"                     indented by call depth (as GDB's record\n"
	"                     function-call-history)\n"
	"  -j, --json         one JSON document instead of text\n"
	"  -t, --thread TID   that thread (default: the one that stopped)\n"
	"  -a, --all          every thread\n"
	"      --no-color     no colours, even on a terminal\n"
	"  -h, --help         this help\n";

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("btrace show: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	fputs(show_usage, stderr);
	return EXIT_USAGE;
}

/* Returns -1 to go on, or the exit status (0 for --help). */
static int parse_args(int argc, char **argv, struct show_opts *o)
{
	enum { OPT_NO_COLOR = 256 };
	static const struct option longopts[] = {
		{ "last", required_argument, NULL, 'n' },
		{ "insn", no_argument, NULL, 'i' },
		{ "calls", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "thread", required_argument, NULL, 't' },
		{ "all", no_argument, NULL, 'a' },
		{ "no-color", no_argument, NULL, OPT_NO_COLOR },
		{ "no-colour", no_argument, NULL, OPT_NO_COLOR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->last = SHOW_DEFAULT_LAST;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:icjt:ah", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->last = cmd_parse_count(optarg, CMD_MAX_LAST);
			if (!o->last)
				return usage_error("--last wants a number from 1 to 10000000, not '%s'",
						   optarg);
			break;
		case 'i':
			o->insn = 1;
			break;
		case 'c':
			o->calls = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 't':
			o->tid = cmd_parse_count(optarg, 0x7fffffff);
			if (!o->tid)
				return usage_error("--thread wants a thread id, not '%s'",
						   optarg);
			break;
		case 'a':
			o->all = 1;
			break;
		case OPT_NO_COLOR:
			o->no_color = 1;
			break;
		case 'h':
			printf("%s\n%s", show_usage, show_help);
			return 0;
		case ':':
			return usage_error("option '%s' needs a value",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "no trace file" :
				   "one trace file at a time");
	if (o->insn + o->json + o->calls > 1)
		return usage_error("--insn, --calls and --json do not go together");
	o->path = argv[optind];
	return -1;
}

/* Everything decoding and printing a trace needs, and its cleanup. */
struct show {
	struct bt_trace *trace;
	struct bt_image *image;
	struct print_ctx pc;
	struct print_thread *threads;
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

static int show_setup(struct show *s, const struct show_opts *o)
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
	if (bt_symtab_from_maps(&s->pc.symtab, &s->trace->maps) < 0)
		s->pc.symtab = NULL;
	if (s->pc.symtab)
		bt_symtab_set_fallback(s->pc.symtab, saved_symbol, s->trace);
	if (bt_disasm_alloc(&s->pc.dis) < 0)
		s->pc.dis = NULL;
	s->pc.color = !o->json && print_want_color(stdout, o->no_color);
	return 0;
}

static void show_release(struct show *s)
{
	size_t i;

	for (i = 0; i < s->nthreads; i++)
		bt_history_free((struct bt_history *)s->threads[i].hist);
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
static int decode_thread(struct show *s, const struct show_opts *o,
			 const struct bt_capture *cap,
			 const struct bt_decode_opts *dopts,
			 struct bt_history **hist)
{
	int ret = bt_decode(cap, dopts, hist);

	if (ret < 0) {
		fprintf(stderr, "btrace: cannot decode thread %d: %s\n",
			cap->tid, bt_errstr(ret));
		return 0;
	}
	ret = bt_trace_check(s->trace, cap, (*hist)->data_begin, cap->size);
	if (ret < 0) {
		load_error(o->path, ret);
		return -bte_corrupt;
	}
	return 0;
}

static int decode_threads(struct show *s, const struct show_opts *o)
{
	struct bt_decode_opts dopts = { .size = sizeof(dopts), .last = o->last,
					.image = s->image };
	const struct bt_trace *t = s->trace;
	pid_t tid = o->tid ? o->tid : default_tid(t);
	struct bt_history *hist;
	size_t i;
	int ret;

	s->threads = calloc(t->nthreads ? t->nthreads : 1,
			    sizeof(*s->threads));
	if (!s->threads)
		return -bte_nomem;
	for (i = 0; i < t->nthreads; i++) {
		if (!o->all && t->thread[i].tid != tid)
			continue;
		hist = NULL;
		ret = decode_thread(s, o, &t->thread[i], &dopts, &hist);
		s->threads[s->nthreads].tid = t->thread[i].tid;
		s->threads[s->nthreads++].hist = hist;
		if (ret < 0)
			return ret;
	}
	if (!s->nthreads) {
		fprintf(stderr, "btrace: no trace of thread %d in '%s'\n",
			tid, o->path);
		return -bte_notrace;
	}
	return 0;
}

/* --insn: one line per instruction, gaps marked. */
struct insn_ctx {
	struct show *s;
	int count;
};

static int print_insn(uint64_t addr, int gap, void *arg)
{
	struct insn_ctx *ic = arg;
	const struct print_ctx *pc = &ic->s->pc;
	char sym[160] = "", text[96] = "";
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_sym bs;
	ssize_t n;

	if (!addr) {
		printf("  [gap: %s]\n", bt_gap_reason_name(gap));
		return 0;
	}
	if (pc->symtab && bt_symtab_lookup(pc->symtab, addr, &bs) == 0)
		bt_sym_format(&bs, addr, sym, sizeof(sym));
	n = bt_image_read(ic->s->image, addr, code, sizeof(code));
	if (n <= 0 || !pc->dis ||
	    bt_insn_format(pc->dis, code, n, addr, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(no code)");
	printf("  0x%-14" PRIx64 " %-32s %s\n", addr, sym, text);
	ic->count++;
	return 0;
}

/*
 * The instructions after the last branch, up to where the thread stopped:
 * straight-line code by definition, walked through the image.
 */
static void print_tail(struct insn_ctx *ic, const struct bt_history *hist,
		       uint64_t stop_pc)
{
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_insn insn;
	uint64_t pc;
	int n, guard;

	if (!hist || !hist->count || !stop_pc || !ic->s->pc.dis)
		return;
	pc = hist->branch[hist->count - 1].to;
	for (guard = 0; pc && guard < 100000; guard++) {
		print_insn(pc, 0, ic);
		if (pc == stop_pc)
			return;
		n = bt_image_read(ic->s->image, pc, code, sizeof(code));
		if (n <= 0 || bt_insn_decode(ic->s->pc.dis, code, n, pc,
					     &insn) < 0 ||
		    insn.iclass != BT_INSN_OTHER)
			return;
		pc += insn.len;
	}
}

static int show_insns(struct show *s, const struct show_opts *o)
{
	struct bt_decode_opts dopts = { .size = sizeof(dopts), .last = o->last,
					.image = s->image };
	struct insn_ctx ic = { .s = s };
	const struct bt_capture *cap;
	size_t i;
	int ret;

	for (i = 0; i < s->nthreads; i++) {
		cap = bt_trace_thread(s->trace, s->threads[i].tid);
		printf("thread %d: instructions of the last %zu branches\n",
		       s->threads[i].tid, o->last);
		ret = bt_decode_insns(cap, &dopts, print_insn, &ic);
		if (ret < 0) {
			fprintf(stderr, "btrace: cannot list instructions of thread %d: %s\n",
				s->threads[i].tid, bt_errstr(ret));
			return ret;
		}
		if (s->threads[i].tid == s->trace->stop.tid)
			print_tail(&ic, s->threads[i].hist, s->trace->stop.pc);
	}
	return 0;
}

static const char *show_func(void *ctx, uint64_t addr)
{
	struct show *s = ctx;
	struct bt_sym sym;

	if (s->pc.symtab && bt_symtab_lookup(s->pc.symtab, addr, &sym) == 0)
		return sym.name;
	return NULL;
}

/* --calls: as the session's calls, one line per function segment. */
static int show_calls(struct show *s)
{
	struct call_seg *segs, *g;
	const char *f;
	size_t i, j, n;

	for (i = 0; i < s->nthreads; i++) {
		if (!s->threads[i].hist)
			continue;
		if (calls_build(s->threads[i].hist, show_func, s, &segs, &n))
			return -bte_nomem;
		printf("thread %d: calls of the last %zu branches\n",
		       s->threads[i].tid, s->threads[i].hist->count);
		for (j = 0; j < n; j++) {
			g = &segs[j];
			printf("%6lld  %*s", (long long)j - (long long)n,
			       2 * g->depth, "");
			if (g->gap) {
				printf("[gap: %s]\n",
				       bt_gap_reason_name(g->gap - 1));
				continue;
			}
			f = show_func(s, g->start);
			if (f)
				printf("%s", f);
			else
				printf("%#" PRIx64, g->start);
			printf("  (%zu branch%s", g->nbr, g->nbr == 1 ? "" : "es");
			if (g->ninsn)
				printf(", %" PRIu64 " instructions", g->ninsn);
			printf(")\n");
		}
		free(segs);
	}
	return 0;
}

int cmd_show(int argc, char **argv)
{
	struct show s = { 0 };
	struct show_opts o;
	struct print_report r;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = bt_trace_map(&s.trace, o.path);
	if (ret < 0)
		return load_error(o.path, ret);
	ret = show_setup(&s, &o);
	if (ret == 0)
		ret = decode_threads(&s, &o);
	if (ret == -bte_nomem)
		fprintf(stderr, "btrace: out of memory\n");
	if (ret < 0)
		goto out;
	r = (struct print_report){ .backend = s.trace->backend,
				   .pid = s.trace->pid,
				   .stop = s.trace->stop.reason ?
					   &s.trace->stop : NULL,
				   .threads = s.threads,
				   .nthreads = s.nthreads,
				   .stats = &s.trace->stats };
	if (o.insn)
		ret = show_insns(&s, &o);
	else if (o.calls)
		ret = show_calls(&s);
	else if (o.json)
		print_report_json(stdout, &r, &s.pc);
	else
		print_report_text(stdout, &r, &s.pc);
out:
	show_release(&s);
	return ret < 0 ? EXIT_FAIL : 0;
}
