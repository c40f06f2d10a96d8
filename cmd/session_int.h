/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_SESSION_INT_H
#define BTRACE_CMD_SESSION_INT_H

/*
 * What the session's parts share: session.c (signals, the history cache,
 * output, stops, the session's life), session_cmds.c (the commands) and
 * session_input.c (their table, the command line, completion, input).
 */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "btrace/btrace.h"
#include "session.h"

struct print_report;
struct view_thread;

enum sess_state {
	SESS_LIVE,	/* stopped, can go on */
	SESS_EXITING,	/* stopped in its exit: continue lets it finish */
	SESS_GONE,	/* exited, killed or detached: history only */
};

/* /s (source lines: always shown now), /d (blocks), /j (JSON) */
enum sess_mods { MOD_SRC = 1, MOD_DIS = 2, MOD_JSON = 4 };

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
	pid_t view_pid;			/* whose symtab and image are loaded */
	struct bt_image *image;
	struct bt_disasm *dis;
	struct sess_bp *bps;
	size_t nbps;
	FILE *out;			/* reports (-o, else stdout) */
	size_t last;			/* --last: shown at a stop */
	int view;			/* --calls, --insn: what a stop shows */
	int json;			/* --json: every report a document */
	int color;
	int blocks;			/* last/d */
	int interactive;
	int done;			/* leave the command loop */
	int failed;			/* a command failed */
};

struct sess_cmd {
	const char *name;
	int (*fn)(struct bt_session *s, int argc, char **argv, int mods);
	const char *help;		/* "usage\n  text"; NULL for aliases */
};

/* session.c: signals */
extern volatile sig_atomic_t sig_quit;	 /* the signal that asked to quit */
extern volatile sig_atomic_t sig_cancel; /* SIGINT at the prompt */
extern volatile sig_atomic_t sig_prompt; /* waiting at a terminal prompt */

/* session.c: symbols, code, the history cache, output */
struct bt_symtab *sess_symtab(struct bt_session *s);
/* The code image: the mappings at this stop, and live memory beyond. */
struct bt_image *sess_image(struct bt_session *s);
/* The trace of @tid at this stop, captured and decoded on first use. */
struct sess_thread *sess_thread(struct bt_session *s, pid_t tid);
/* The decoded history of the current thread, or NULL after a message. */
struct sess_thread *sess_history(struct bt_session *s);
/* A message that is not a report: not into a JSON stream. */
void __attribute__((format(printf, 2, 3)))
sess_note(struct bt_session *s, const char *fmt, ...);
/* "breakpoint 1 at 0x401136  main+0x4  t.c:12\n", in the notes. */
void sess_note_addr(struct bt_session *s, const char *what, uint64_t addr);
/* A report on this stop: @json adds the stop and the counts to it. */
void sess_print(struct bt_session *s, struct print_report *r, int json);
/* @th's view at this stop (view.h); -1 after a message. */
int sess_view_init(struct bt_session *s, struct view_thread *v, int view,
		   struct sess_thread *th, size_t last);
/* Trace until the next stop; SIGINT meanwhile interrupts the target. */
int sess_cont(struct bt_session *s);

/* session_cmds.c: the commands (argv[0] is the name; mods: sess_mods) */
int do_last(struct bt_session *s, int argc, char **argv, int mods);
int do_insn(struct bt_session *s, int argc, char **argv, int mods);
int do_calls(struct bt_session *s, int argc, char **argv, int mods);
int do_threads(struct bt_session *s, int argc, char **argv, int mods);
int do_thread(struct bt_session *s, int argc, char **argv, int mods);
int do_continue(struct bt_session *s, int argc, char **argv, int mods);
int do_break(struct bt_session *s, int argc, char **argv, int mods);
int do_delete(struct bt_session *s, int argc, char **argv, int mods);
int do_info(struct bt_session *s, int argc, char **argv, int mods);
int do_detach(struct bt_session *s, int argc, char **argv, int mods);
int do_kill(struct bt_session *s, int argc, char **argv, int mods);
int do_quit(struct bt_session *s, int argc, char **argv, int mods);
int do_save(struct bt_session *s, int argc, char **argv, int mods);
int do_debug_dir(struct bt_session *s, int argc, char **argv, int mods);
/* Set a breakpoint at SYMBOL, ADDR or FILE:LINE; -1 after a message. */
int sess_break(struct bt_session *s, const char *spec);

/* session_input.c */
/* Run one command line.  Returns 0, or -1 if the command failed. */
int sess_exec(struct bt_session *s, char *line);
/* Read and run commands until the end of input, quit or a signal. */
void sess_loop(struct bt_session *s);
/* Forget the symbol names completion loaded (symbols reload). */
void sym_names_free(void);

#endif /* BTRACE_CMD_SESSION_INT_H */
