/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_SESSION_H
#define BTRACE_CMD_SESSION_H

#include <stddef.h>
#include <stdio.h>

#include "btrace/target.h"

/*
 * The interactive session over a traced process: `btrace attach` and
 * `btrace run -i`.  Commands come from one table (see session_input.c):
 * last, insn, calls, threads, thread, continue, break, delete, info, save,
 * detach, kill, quit, help.  What they show goes through the printer of
 * run and show (print.h): the same text, or with /j (--json) the same
 * JSON document.  On a terminal they are read with readline (history in
 * ~/.btrace_history, completion of commands and symbols); otherwise from
 * stdin, one a line.
 *
 * Safety: from bt_session_signals() on, no signal from outside kills
 * btrace outright (signals.h: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and
 * the others whose default is to terminate).  During a `continue` (and
 * the first trace) SIGINT stops the target; at an interactive prompt it
 * discards the line; anywhere else it, like the others, ends the session,
 * which then detaches from (or kills, if launched) the target before
 * btrace exits with 128 + the signal.
 */

struct cmd_opts;

struct bt_session_opts {
	/*
	 * The command's options (opts.h): -ex, --break, --batch, --save,
	 * and how stops are shown (--last, --calls, --insn, --json,
	 * --no-color).
	 */
	const struct cmd_opts *o;
	FILE *out;		/* where reports go (-o); prompts stay */
	int cont_first;		/* trace until the first stop before commands */
	int attached;		/* quit detaches (attached) or kills (launched) */
};


/*
 * Install the session's handlers of the signals of cmd_catch_signals()
 * and ignore SIGPIPE.  Call before attaching, so that no signal can end
 * btrace between the attach and the session; after launching, so that
 * the program does not inherit what btrace ignores.
 */
void bt_session_signals(void);

/* Non-zero once SIGTERM, SIGHUP (or SIGINT outside a trace) asked to quit. */
int bt_session_quit_requested(void);

/*
 * Run the session over @target (stopped), then detach, kill or leave it as
 * the commands said, and free it.  Returns the exit status for btrace:
 * 0, or 1 if tracing failed or, without a terminal, a command failed.
 */
int bt_session_main(struct bt_target *target,
		    const struct bt_session_opts *opts);

#endif /* BTRACE_CMD_SESSION_H */
