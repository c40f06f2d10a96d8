// SPDX-License-Identifier: MIT
/* The subcommands' options: one table, one parser (opts.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "opts.h"
#include "print.h"

#define MIN_BUFFER 4096u
#define MAX_BUFFER (1u << 30)
#define HELP_COLUMN 25

int cmd_usage_error(const struct cmd_opts *o, const char *fmt, ...)
{
	const char *name = o && o->cmd ? o->cmd->name : "";
	va_list ap;

	fprintf(stderr, "btrace %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'btrace %s --help'\n", name);
	return EXIT_USAGE;
}

/* The decimal number @s starts with (no sign, no space): 0, or -1. */
static int parse_decimal(const char *s, unsigned long long *v, char **end)
{
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno ? -1 : 0;
}

size_t cmd_parse_count(const char *s, size_t max)
{
	unsigned long long v;
	char *end;

	if (parse_decimal(s, &v, &end) || *end || v == 0 || v > max)
		return 0;
	return v;
}

/* "64K", "1M", "4096": a power of two in range, or 0. */
static size_t parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	if (parse_decimal(s, &v, &end) || v > MAX_BUFFER)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v < MIN_BUFFER || v > MAX_BUFFER || (v & (v - 1)))
		return 0;
	return v;
}

/* ---- what is shown ---- */

static int set_last(struct cmd_opts *o, const char *v)
{
	o->last = cmd_parse_count(v, CMD_MAX_LAST);
	if (!o->last)
		return cmd_usage_error(o, "--last wants a number from 1 to %u, not '%s'",
				       CMD_MAX_LAST, v);
	return 0;
}

static int set_view(struct cmd_opts *o, int view)
{
	if (o->view != PRINT_BRANCHES && o->view != view)
		return cmd_usage_error(o, "--insn and --calls do not go together");
	o->view = view;
	return 0;
}

static int set_insn(struct cmd_opts *o, const char *v)
{
	return set_view(o, PRINT_INSNS);
}

static int set_calls(struct cmd_opts *o, const char *v)
{
	return set_view(o, PRINT_CALLS);
}

/* ---- what is traced ---- */

/*
 * "auto, pt, bts or soft" (@modes 0) or "record, fast or step": the
 * registry's backends or soft modes, in its order.
 */
static void registry_list(int modes, char *buf, size_t size)
{
	const struct bt_backend_info *b;
	const char *names[16];
	size_t i, n = 0, len = 0;

	if (!modes)
		names[n++] = "auto";
	for (i = 0; (b = bt_backend_info(i)) && n < BT_ARRAY_SIZE(names); i++) {
		if (modes && b->mode)
			names[n++] = b->mode;
		else if (!modes && strcmp(b->name, names[n - 1]))
			names[n++] = b->name;	/* once for its modes */
	}
	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s",
				!i ? "" : i + 1 < n ? ", " : " or ", names[i]);
}

static int set_timeline_clock(struct cmd_opts *o, const char *v)
{
	if (!strcmp(v, "time") || !strcmp(v, "instructions")) {
		o->timeline_counts = !strcmp(v, "instructions");
		return 0;
	}
	return cmd_usage_error(o, "--timeline-clock is time or instructions, not '%s'",
			       v);
}

static int set_backend(struct cmd_opts *o, const char *v)
{
	char names[64];

	o->backend = bt_backend_parse(v);
	if (o->backend >= 0)
		return 0;
	registry_list(0, names, sizeof(names));
	return cmd_usage_error(o, "unknown backend '%s' (%s)", v, names);
}

static int set_buffer_size(struct cmd_opts *o, const char *v)
{
	o->buffer_size = parse_size(v);
	if (!o->buffer_size)
		return cmd_usage_error(o, "--buffer-size wants a power of two from 4K to 1G, not '%s'",
				       v);
	return 0;
}

static int set_soft_mode(struct cmd_opts *o, const char *v)
{
	char modes[64];
	int mode = bt_soft_mode_parse(v);

	if (mode >= 0) {
		o->trace.soft_mode = mode;
		o->trace.soft_mode_given = 1;
		return 0;
	}
	registry_list(1, modes, sizeof(modes));
	return cmd_usage_error(o, "--soft-mode is %s, not '%s'", modes, v);
}

static int add_glob(struct cmd_opts *o, const char **globs, size_t *n,
		    const char *opt, const char *v)
{
	if (!v[0])
		return cmd_usage_error(o, "%s wants a module glob", opt);
	if (*n == RUN_TRACE_MAX_GLOBS)
		return cmd_usage_error(o, "at most %d %s options",
				       RUN_TRACE_MAX_GLOBS, opt);
	globs[(*n)++] = v;
	globs[*n] = NULL;
	return 0;
}

static int set_only(struct cmd_opts *o, const char *v)
{
	return add_glob(o, o->trace.only, &o->trace.nonly, "--only", v);
}

static int set_exclude(struct cmd_opts *o, const char *v)
{
	return add_glob(o, o->trace.exclude, &o->trace.nexclude, "--exclude",
			v);
}

static int set_no_code_cache(struct cmd_opts *o, const char *v)
{
	o->trace.code_cache = "";
	return 0;
}

/* ---- the session ---- */

static int push(struct cmd_opts *o, const char **list, size_t *n,
		const char *what, const char *v)
{
	if (*n == CMD_MAX_EX)
		return cmd_usage_error(o, "at most %d %s options", CMD_MAX_EX,
				       what);
	list[(*n)++] = v;
	return 0;
}

static int set_ex(struct cmd_opts *o, const char *v)
{
	return push(o, o->ex, &o->nex, "-ex", v);
}

static int set_break(struct cmd_opts *o, const char *v)
{
	return push(o, o->breaks, &o->nbreaks, "--break", v);
}

/* ---- which threads ---- */

static int set_thread(struct cmd_opts *o, const char *v)
{
	o->tid = cmd_parse_count(v, 0x7fffffff);
	if (!o->tid)
		return cmd_usage_error(o, "--thread wants a thread id, not '%s'",
				       v);
	return 0;
}

static int set_debug_dir(struct cmd_opts *o, const char *v)
{
	(void)o;
	return debuginfo_set_dir(v) < 0 ? EXIT_USAGE : 0;
}

static int set_no_debuginfod(struct cmd_opts *o, const char *v)
{
	(void)o;
	(void)v;
	debuginfo_no_fetch();
	return 0;
}

/* The registry's backends (backend.c), as backend_select.sh checks. */
#define BACKEND_HELP "auto (default), pt, bts or soft"

#define TRACED (CMD_RUN | CMD_ATTACH)
/* How it is traced: gdbserver too. */
#define TRACING (CMD_RUN | CMD_ATTACH | CMD_GDBSERVER)
#define SHOWN (CMD_RUN | CMD_ATTACH | CMD_SHOW | CMD_DECODE)
/* Where a whole trace is at hand: every thread along time. */
#define TIMED (CMD_RUN | CMD_ATTACH | CMD_SHOW)

/*
 * Every shared option.  A name may come twice, for disjoint commands,
 * where its short letter differs (-i is run's --interactive but show's
 * --insn; -b is run's --backend but attach's --break).
 */
static const struct cmd_option cmd_options[] = {
	CMD_OPT_FN("last", 'n', "N", SHOWN, set_last,
		   "branches to show (default 32); with --calls, call\n"
		   "segments; with --insn, the branches whose\n"
		   "instructions are shown"),
	CMD_OPT_FN("insn", 'i', NULL, CMD_SHOW | CMD_DECODE, set_insn,
		   "every instruction of those branches' blocks"),
	CMD_OPT_FN("insn", 0, NULL, TRACED, set_insn,
		   "every instruction of those branches' blocks"),
	CMD_OPT_FN("calls", 'c', NULL, SHOWN, set_calls,
		   "the function-call history, indented by call depth\n"
		   "(the session's calls), instead of the branches"),
	CMD_OPT_FLAG("json", 'j', SHOWN, json,
		     "JSON documents instead of text"),
	CMD_OPT_FLAG("time", 0, SHOWN, time,
		     "a column of each branch's time before the stop\n"
		     "(-1.234 ms; '?' where the trace has none: BTS)"),
	CMD_OPT_STRING("output", 'o', "FILE", SHOWN, output,
		       "-o wants a file name",
		       "write the report to FILE, not to standard output"),
	CMD_OPT_STRING("timeline", 0, "FILE", TIMED, timeline,
		       "--timeline wants a file name",
		       "also write every thread's call history along\n"
		       "time to FILE as Chrome Trace Event JSON (Perfetto,\n"
		       "speedscope); time is the trace's timestamps, or\n"
		       "instructions where it has none (BTS)"),
	CMD_OPT_FN("timeline-clock", 0, "CLOCK", TIMED, set_timeline_clock,
		   "time (default) or instructions: what --timeline\n"
		   "and --svg draw along"),
	CMD_OPT_STRING("svg", 0, "FILE", TIMED, svg, "--svg wants a file name",
		       "also write a flame chart of each thread's last N\n"
		       "calls (--last) to FILE, an SVG for any browser"),
	CMD_OPT_FLAG("no-color", 0, SHOWN, no_color,
		     "no colours, even on a terminal"),
	CMD_OPT_FLAG("no-colour", 0, SHOWN, no_color, NULL),
	CMD_OPT_FN("backend", 'b', "NAME", CMD_RUN, set_backend, BACKEND_HELP),
	CMD_OPT_FN("backend", 0, "NAME", CMD_ATTACH | CMD_GDBSERVER,
		   set_backend, BACKEND_HELP),
	CMD_OPT_FN("buffer-size", 's', "SIZE", TRACING, set_buffer_size,
		   "per-thread trace buffer, a power of two\n"
		   "(suffixes K, M, G; default 1M)"),
	CMD_OPT_FN("soft-mode", 0, "MODE", TRACING, set_soft_mode,
		   "software backend: record (default: the program\n"
		   "records its own branches, in translated code),\n"
		   "fast (stop at run-time decisions) or step (every\n"
		   "instruction, the reference)"),
	CMD_OPT_STRING("code-cache", 0, "DIR", TRACING, trace.code_cache,
		       "--code-cache wants a directory",
		       "record mode: keep which blocks each program ran\n"
		       "in DIR, by build-id, to translate them at once\n"
		       "next time (default ~/.cache/btrace/code)"),
	CMD_OPT_FN("no-code-cache", 0, NULL, TRACING, set_no_code_cache,
		   "record mode: keep none"),
	CMD_OPT_FN("only", 0, "GLOB", TRACING, set_only,
		   "trace only modules matching GLOB (path or file\n"
		   "name; repeatable); others run natively"),
	CMD_OPT_FN("exclude", 0, "GLOB", TRACING, set_exclude,
		   "do not trace modules matching GLOB"),
	CMD_OPT_STRING("from", 0, "SYMBOL", TRACING, trace.from,
		       "--from wants a symbol name",
		       "run natively until SYMBOL executes"),
	CMD_OPT_STRING("until", 0, "SYMBOL", TRACING, trace.until,
		       "--until wants a symbol name",
		       "stop when SYMBOL executes and show the history"),
	CMD_OPT_FLAG("follow-fork", 0, TRACED, trace.follow_fork,
		     "trace the children of fork and vfork too"),
	CMD_OPT_FLAG("stop-at-fault", 0, TRACED, trace.stop_at_fault,
		     "stop at a fault of the program's code (SIGSEGV, SIGBUS,\n"
		     "SIGFPE, SIGILL, SIGTRAP) even where its own handler\n"
		     "takes it, before the handler runs, as GDB does;\n"
		     "without it the history up to such a fault is kept\n"
		     "and shown before the handler's"),
	CMD_OPT_STRING("save", 0, "FILE", TRACED, save, NULL,
		       "save the trace to FILE at the (first) stop"),
	CMD_OPT_STRING("save-on-crash", 0, "DIR", CMD_RUN, save_dir, NULL,
		       "only if it dies of a signal: save the trace to\n"
		       "DIR/btrace-PROGRAM-PID.trace"),
	CMD_OPT_FLAG("interactive", 'i', CMD_RUN, interactive,
		     "at the stop, open the session of btrace attach\n"
		     "(last, calls, continue, break...; quit kills)"),
	CMD_OPT_FN("break", 'b', "SPEC", CMD_ATTACH, set_break,
		   "stop at SYMBOL, ADDR or FILE:LINE (repeatable)"),
	CMD_OPT_FN("break", 0, "SPEC", CMD_RUN, set_break,
		   "with -i: stop at SYMBOL, ADDR or FILE:LINE\n"
		   "(repeatable)"),
	CMD_OPT_FN("ex", 0, "CMD", TRACED, set_ex,
		   "run session command CMD at the first stop\n"
		   "(repeatable; also -ex CMD); run: implies -i"),
	CMD_OPT_FLAG("batch", 0, TRACED, batch,
		     "exit after the -ex commands (attach detaches,\n"
		     "run kills); run: implies -i"),
	CMD_OPT_FN("thread", 't', "TID", CMD_SHOW, set_thread,
		   "that thread (default: the one that stopped)"),
	CMD_OPT_FLAG("all", 'a', CMD_SHOW, all, "every thread"),
	CMD_OPT_FN("debug-dir", 0, "DIR", SHOWN, set_debug_dir,
		   "separate debug files under DIR (by build-id and\n"
		   ".gnu_debuglink; ':' between several) instead of\n"
		   "/usr/lib/debug"),
	CMD_OPT_FN("no-debuginfod", 0, NULL, SHOWN, set_no_debuginfod,
		   "fetch nothing from the debuginfod servers of\n"
		   "DEBUGINFOD_URLS"),
};

/* A row without a set(): its value into its field, as the row says. */
static int store(struct cmd_opts *o, const struct cmd_option *p,
		 const char *v)
{
	char *base = (char *)(p->own ? o->own : o) + p->field;

	switch (p->store) {
	case CMD_STORE_FLAG:
		*(int *)base = 1;
		return 0;
	case CMD_STORE_STRING:
		if (p->empty && !v[0])
			return cmd_usage_error(o, "%s", p->empty);
		*(const char **)base = v;
		return 0;
	}
	return cmd_usage_error(o, "option '--%s' goes nowhere", p->name);
}

/* The rows @d takes: its own first, then the shared ones. */
struct opt_rows {
	const struct cmd_option *row[BT_ARRAY_SIZE(cmd_options) + 32];
	size_t n;
};

static void collect(const struct cmd_desc *d, struct opt_rows *r)
{
	const struct cmd_option *p;
	size_t i;

	r->n = 0;
	for (p = d->own; p && p->name && r->n < BT_ARRAY_SIZE(r->row) - 1;
	     p++)
		r->row[r->n++] = p;
	for (i = 0; i < BT_ARRAY_SIZE(cmd_options) &&
		    r->n < BT_ARRAY_SIZE(r->row); i++)
		if (cmd_options[i].cmds & d->id)
			r->row[r->n++] = &cmd_options[i];
}

static void help_row(FILE *f, const struct cmd_option *p)
{
	char left[64];
	const char *h = p->help, *nl;
	int n;

	if (!h)
		return;
	if (p->letter)
		n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", p->letter,
			     p->name, p->arg ? " " : "", p->arg ? p->arg : "");
	else
		n = snprintf(left, sizeof(left), "      --%s%s%s", p->name,
			     p->arg ? " " : "", p->arg ? p->arg : "");
	fputs(left, f);
	if (n >= HELP_COLUMN)
		fprintf(f, "\n%*s", HELP_COLUMN, "");
	else
		fprintf(f, "%*s", HELP_COLUMN - n, "");
	for (; (nl = strchr(h, '\n')); h = nl + 1)
		fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
	fprintf(f, "%s\n", h);
}

static void help(const struct cmd_desc *d, const struct opt_rows *r)
{
	size_t i;

	printf("usage: btrace %s\n\n%s\n\n", d->usage, d->about);
	for (i = 0; i < r->n; i++)
		help_row(stdout, r->row[i]);
	printf("  -h, --help             this help\n");
}

/* The getopt tables of @r: a long option's value is 256 + its row. */
static void build(const struct opt_rows *r, int in_order,
		  struct option *longopts, char *shortopts)
{
	char *s = shortopts;
	size_t i;

	if (in_order)
		*s++ = '+';
	*s++ = ':';
	for (i = 0; i < r->n; i++) {
		longopts[i] = (struct option){ r->row[i]->name,
					       r->row[i]->arg ? required_argument
							      : no_argument,
					       NULL, 256 + (int)i };
		if (r->row[i]->letter) {
			*s++ = r->row[i]->letter;
			if (r->row[i]->arg)
				*s++ = ':';
		}
	}
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i] = (struct option){ NULL, 0, NULL, 0 };
	strcpy(s, "h");
}

static const struct cmd_option *by_letter(const struct opt_rows *r, int c)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->row[i]->letter == c)
			return r->row[i];
	return NULL;
}

static int operands(const struct cmd_desc *d, struct cmd_opts *o, int argc,
		    char **argv)
{
	o->args = argv + optind;
	o->nargs = argc - optind;
	if (o->nargs < d->min_args)
		return cmd_usage_error(o, "%s", d->missing);
	if (d->max_args >= 0 && o->nargs > d->max_args)
		return cmd_usage_error(o, "unexpected '%s'",
				       o->args[d->max_args]);
	return -1;
}

int cmd_opts_parse(const struct cmd_desc *d, int argc, char **argv,
		   struct cmd_opts *o)
{
	struct opt_rows r;
	struct option longopts[BT_ARRAY_SIZE(r.row) + 2];
	char shortopts[2 * BT_ARRAY_SIZE(r.row) + 4];
	const struct cmd_option *p;
	int c, ret;

	o->cmd = d;
	o->last = CMD_DEFAULT_LAST;
	o->backend = BT_BACKEND_AUTO;
	collect(d, &r);
	build(&r, d->in_order, longopts, shortopts);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long_only(argc, argv, shortopts, longopts,
				     NULL)) != -1) {
		if (c == 'h') {
			help(d, &r);
			return 0;
		}
		if (c == ':')
			return cmd_usage_error(o, "option '%s' needs a value",
					       argv[optind - 1]);
		if (c == '?' && optopt >= 256)
			return cmd_usage_error(o, "option '--%s' takes no value",
					       r.row[optopt - 256]->name);
		p = c >= 256 ? r.row[c - 256] : by_letter(&r, c);
		if (!p)
			return cmd_usage_error(o, "unknown option '%s'",
					       argv[optind - 1]);
		ret = p->set ? p->set(o, optarg) : store(o, p, optarg);
		if (ret)
			return ret;
	}
	/* an option the backend cannot honour is refused, never ignored */
	if (d->id & TRACING) {
		ret = run_trace_check(o);
		if (ret)
			return ret;
	}
	return operands(d, o, argc, argv);
}

FILE *cmd_opts_open(const struct cmd_opts *o)
{
	FILE *f;

	if (!o->output || !strcmp(o->output, "-"))
		return stdout;
	/* "e": O_CLOEXEC, so that the traced program does not inherit it */
	f = fopen(o->output, "we");
	if (!f)
		fprintf(stderr, "btrace: cannot write '%s': %s\n", o->output,
			strerror(errno));
	return f;
}

int cmd_opts_close(const struct cmd_opts *o, FILE *out)
{
	int err;

	if (!out)
		return 0;
	err = fflush(out) != 0 || ferror(out);
	if (out != stdout && fclose(out) != 0)
		err = 1;
	if (err && out != stdout)
		fprintf(stderr, "btrace: cannot write '%s': %s\n", o->output,
			strerror(errno));
	return err ? -1 : 0;
}
