/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_RUN_TRACE_H
#define BTRACE_CMD_RUN_TRACE_H

/*
 * What is traced, as the options of run, attach and gdbserver chose it
 * (opts.c): the software backend's mode, module filters and triggers.
 */

#include <stddef.h>

#include "btrace/target.h"

#define RUN_TRACE_MAX_GLOBS 16

struct run_trace {
	int soft_mode;		/* enum bt_soft_mode */
	const char *only[RUN_TRACE_MAX_GLOBS + 1];	/* NULL-terminated */
	const char *exclude[RUN_TRACE_MAX_GLOBS + 1];
	size_t nonly, nexclude;
	const char *from, *until;
	int follow_fork;
	int stop_at_fault;	/* --stop-at-fault */
	const char *code_cache;	/* --code-cache DIR; "": --no-code-cache */
	int soft_mode_given;	/* --soft-mode was on the command line */
};

/* Fill @o (backend, size and the rest already set) from @rt. */
void run_trace_apply(const struct run_trace *rt, struct bt_target_opts *o);

/*
 * Refuse what the backend of @o (with --backend auto: every backend it may
 * take) cannot honour, as the registry's capabilities say: --only,
 * --exclude, --from, --until, and --soft-mode for a hardware backend.
 * Returns 0, or EXIT_USAGE after a one-line message on stderr.
 */
struct cmd_opts;
int run_trace_check(const struct cmd_opts *o);

/*
 * With --backend auto, when a better backend was passed over (unusable
 * here, or unable to honour @rt): say on stderr which one was taken and,
 * in short, why (the software backend is much slower).
 */
struct bt_target;
void run_trace_say_backend(const struct bt_target *t,
			   const struct run_trace *rt);

#endif /* BTRACE_CMD_RUN_TRACE_H */
