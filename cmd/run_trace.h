/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_RUN_TRACE_H
#define BTRACE_CMD_RUN_TRACE_H

/*
 * What is traced, as the options of run and attach chose it (opts.c):
 * the software backend's mode, module filters and triggers.
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
};

/* Fill @o (backend, size and the rest already set) from @rt. */
void run_trace_apply(const struct run_trace *rt, struct bt_target_opts *o);

/*
 * With --backend auto, when a better backend was passed over: say on stderr
 * which one was taken and, in short, why (the software backend is much
 * slower).
 */
struct bt_target;
void run_trace_say_backend(const struct bt_target *t);

#endif /* BTRACE_CMD_RUN_TRACE_H */
