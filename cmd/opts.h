/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_OPTS_H
#define BTRACE_CMD_OPTS_H

/*
 * One option parser for the subcommands.  Every option is a row of one
 * table (cmd_options[] in opts.c) that says which commands take it, how
 * its value goes into struct cmd_opts, and its line of --help; a command
 * names itself (struct cmd_desc) and calls cmd_opts_parse(), which builds
 * the getopt_long_only() table and the help from those rows.  An option of
 * one command alone may sit in that command's own table (cmd_desc.own),
 * parsed the same way into a struct the command points cmd_opts.own at.
 *
 * To add an option: a field here (or in the command's own struct), a row
 * in the table with the commands that take it: a flag or a string goes
 * into its field by the row alone (CMD_OPT_FLAG, CMD_OPT_STRING), anything
 * else through a function (CMD_OPT_FN).  To add a command: a bit
 * in enum cmd_id, its cmd_desc, and its bit on the rows it shares.
 *
 * Long options also work with one dash (gdb's "-ex CMD", "-batch"); a
 * single letter after one dash is the short option.
 */

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "run_trace.h"

enum cmd_id {
	CMD_RUN = 1 << 0,
	CMD_ATTACH = 1 << 1,
	CMD_SHOW = 1 << 2,
	CMD_DECODE = 1 << 3,
	CMD_GDBSERVER = 1 << 4,
};

/* -ex commands and --break specs, each. */
#define CMD_MAX_EX 64

/* The most branches --last may ask for, in every front end. */
#define CMD_MAX_LAST 10000000u

/* --last's default: branches, call segments, instructions alike. */
#define CMD_DEFAULT_LAST 32

struct cmd_desc;

struct cmd_opts {
	const struct cmd_desc *cmd;	/* the command parsing */

	/* What is shown, and where. */
	size_t last;		/* --last N; 0 where --all asked for all */
	int view;		/* enum print_view: --insn, --calls */
	int json;		/* --json */
	int no_color;		/* --no-color */
	int time;		/* --time: a column of time before the stop */
	const char *output;	/* -o FILE; NULL or "-": standard output */
	const char *timeline;	/* --timeline FILE: Chrome Trace Event JSON */
	const char *svg;	/* --svg FILE: a flame chart */
	int timeline_counts;	/* --timeline-clock instructions */

	/* What is traced (run, attach). */
	int backend;		/* --backend, enum bt_backend */
	size_t buffer_size;	/* --buffer-size; 0: the default */
	struct run_trace trace;	/* --soft-mode, --only, ... */
	const char *save;	/* --save FILE */
	const char *save_dir;	/* --save-on-crash DIR */

	/* The session (run -i, attach). */
	int interactive;	/* run -i */
	int batch;		/* --batch */
	const char *ex[CMD_MAX_EX];	/* -ex CMD, in order */
	size_t nex;
	const char *breaks[CMD_MAX_EX];	/* --break SPEC */
	size_t nbreaks;

	/* Which threads (show). */
	pid_t tid;		/* --thread TID; 0: the one that stopped */
	int all;		/* --all */

	void *own;		/* the command's own options (cmd_desc.own) */

	/* After parsing: the operands (PROGRAM ARGS..., PID, FILE). */
	char **args;
	int nargs;
};

/* How a row without a set() stores its value into its field. */
enum cmd_store {
	CMD_STORE_FN = 0,	/* set() does */
	CMD_STORE_FLAG,		/* an int: 1 */
	CMD_STORE_STRING,	/* a const char *: the value */
};

/*
 * One option, a row made by one of the CMD_OPT_* macros below.  @set
 * takes its value (NULL for a flag) and returns 0, or EXIT_USAGE after
 * cmd_usage_error(); without one, the value goes into a field as @store
 * says.
 */
struct cmd_option {
	const char *name;	/* the long name, without "--" */
	int letter;		/* the short option, or 0 */
	const char *arg;	/* the value's name in --help; NULL: a flag */
	unsigned cmds;		/* the commands that take it: CMD_* bits */
	int (*set)(struct cmd_opts *o, const char *value);
	const char *help;	/* --help text; "\n" starts another line */
	int store;		/* enum cmd_store */
	int own;		/* the field is in *cmd_opts.own, not cmd_opts */
	size_t field;		/* offsetof() the field */
	const char *empty;	/* a string: "" refused with this message;
				   NULL: taken */
};

/* A row whose @set function takes the value. */
#define CMD_OPT_FN(name, letter, arg, cmds, set, help) \
	{ name, letter, arg, cmds, set, help, CMD_STORE_FN, 0, 0, NULL }

/* A flag that sets int cmd_opts.@field to 1. */
#define CMD_OPT_FLAG(name, letter, cmds, field, help) \
	{ name, letter, NULL, cmds, NULL, help, CMD_STORE_FLAG, 0, \
	  offsetof(struct cmd_opts, field), NULL }

/* A value kept in cmd_opts.@field; @empty: NULL, or the message for "". */
#define CMD_OPT_STRING(name, letter, arg, cmds, field, empty, help) \
	{ name, letter, arg, cmds, NULL, help, CMD_STORE_STRING, 0, \
	  offsetof(struct cmd_opts, field), empty }

/* The same two for a field of the command's own struct @type. */
#define CMD_OPT_OWN_FLAG(name, cmds, type, field, help) \
	{ name, 0, NULL, cmds, NULL, help, CMD_STORE_FLAG, 1, \
	  offsetof(type, field), NULL }
#define CMD_OPT_OWN_STRING(name, arg, cmds, type, field, help) \
	{ name, 0, arg, cmds, NULL, help, CMD_STORE_STRING, 1, \
	  offsetof(type, field), NULL }

/* The end of a command's own table. */
#define CMD_OPT_END { NULL, 0, NULL, 0, NULL, NULL, CMD_STORE_FN, 0, 0, NULL }

struct cmd_desc {
	const char *name;		/* "run" */
	unsigned id;			/* CMD_RUN */
	const char *usage;		/* the synopsis, after "usage: btrace " */
	const char *about;		/* what it does, for --help */
	const struct cmd_option *own;	/* its own options, NULL-name ended */
	int in_order;			/* options end at the first operand */
	int min_args, max_args;		/* operands; max -1: no limit */
	const char *missing;		/* fewer than min_args: "no program" */
};

/*
 * Parse @argv (argv[0] is the command's name) into @o, zeroed by the
 * caller but for o->own, defaults filled in first.  Returns -1 to go on
 * (the operands in o->args), or the exit status to return: 0 after
 * --help, EXIT_USAGE (or what an option's @set returned) after a one-line
 * message on stderr.
 */
int cmd_opts_parse(const struct cmd_desc *d, int argc, char **argv,
		   struct cmd_opts *o);

/* "btrace CMD: MESSAGE; see 'btrace CMD --help'" on stderr; EXIT_USAGE. */
int __attribute__((format(printf, 2, 3)))
cmd_usage_error(const struct cmd_opts *o, const char *fmt, ...);

/*
 * Where the report goes: -o FILE, created or truncated (not inherited by
 * the traced program), or standard output.  NULL after a one-line message
 * on stderr.  cmd_opts_close() closes it (standard output is flushed) and
 * returns 0, or -1 after saying that writing failed.
 */
FILE *cmd_opts_open(const struct cmd_opts *o);
int cmd_opts_close(const struct cmd_opts *o, FILE *out);

/* A positive decimal count up to @max, or 0 if @s is not one. */
size_t cmd_parse_count(const char *s, size_t max);

#endif /* BTRACE_CMD_OPTS_H */
