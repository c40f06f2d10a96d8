/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_RUN_TRACE_H
#define BTRACE_CMD_RUN_TRACE_H

/*
 * The options that choose what is traced, shared by `btrace run` and
 * `btrace attach`: the software backend's mode, module filters and
 * triggers.  A front end adds RUN_TRACE_LONGOPTS to its getopt_long table
 * and RUN_TRACE_HELP to its help, passes option codes OPT_TRACE_FIRST ..
 * OPT_TRACE_LAST to run_trace_option(), then fills its bt_target_opts
 * with run_trace_apply().
 */

#include <getopt.h>
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

enum {
	OPT_TRACE_FIRST = 512,
	OPT_SOFT_MODE = OPT_TRACE_FIRST,
	OPT_ONLY,
	OPT_EXCLUDE,
	OPT_FROM,
	OPT_UNTIL,
	OPT_FOLLOW_FORK,
	OPT_TRACE_LAST = OPT_FOLLOW_FORK,
};

#define RUN_TRACE_LONGOPTS                                                 \
	{ "soft-mode", required_argument, NULL, OPT_SOFT_MODE },           \
	{ "only", required_argument, NULL, OPT_ONLY },                     \
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },               \
	{ "from", required_argument, NULL, OPT_FROM },                     \
	{ "until", required_argument, NULL, OPT_UNTIL },                   \
	{ "follow-fork", no_argument, NULL, OPT_FOLLOW_FORK }

#define RUN_TRACE_HELP                                                       \
	"      --soft-mode MODE   software backend: record (default: the\n"    \
	"                         program records its own branches, in\n"      \
	"                         translated code), fast (stop at run-time\n"  \
	"                         decisions) or step (every instruction,\n"    \
	"                         the reference)\n"                            \
	"      --only GLOB        trace only modules matching GLOB (path or\n"  \
	"                         file name; repeatable); others run natively\n"\
	"      --exclude GLOB     do not trace modules matching GLOB\n"          \
	"      --from SYMBOL      run natively until SYMBOL executes\n"         \
	"      --until SYMBOL     stop when SYMBOL executes and show the\n"     \
	"                         history\n"                                    \
	"      --follow-fork      trace the children of fork and vfork too\n"

/*
 * Take option @opt with argument @arg (NULL for a flag).  Returns 0, or EXIT_USAGE after
 * printing why.
 */
int run_trace_option(struct run_trace *rt, int opt, const char *arg);

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
