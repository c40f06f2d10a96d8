/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_DEBUGINFO_H
#define BTRACE_CMD_DEBUGINFO_H

/*
 * Where symbols and lines are looked for, shared by run, attach, show,
 * decode and the session: --debug-dir DIR (gdb's debug-file-directory)
 * and --no-debuginfod.  A front end adds DEBUGINFO_LONGOPTS to its
 * getopt_long table and DEBUGINFO_HELP to its help, passes option codes
 * OPT_DEBUG_DIR and OPT_NO_DEBUGINFOD to debuginfo_option(), and makes
 * every symtab with debuginfo_opts().  Downloads from debuginfod are said
 * on stderr, never on stdout where JSON goes.
 */

#include "btrace/symbols.h"

enum {
	OPT_DEBUG_DIR = 768,	/* run_trace.h: 512 up */
	OPT_NO_DEBUGINFOD,
};

#define DEBUGINFO_LONGOPTS                                                 \
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },           \
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD }

#define DEBUGINFO_HELP                                                        \
	"      --debug-dir DIR    separate debug files under DIR (by build-id\n"  \
	"                         and .gnu_debuglink; ':' between several)\n"   \
	"                         instead of /usr/lib/debug\n"                   \
	"      --no-debuginfod    fetch nothing from the debuginfod servers of\n" \
	"                         DEBUGINFOD_URLS\n"

/*
 * Take option @opt with argument @arg (NULL for a flag).  Returns 0, or
 * EXIT_USAGE after saying why (a debug directory that does not exist).
 */
int debuginfo_option(int opt, const char *arg);

/* The options to make symtabs with. */
const struct bt_symtab_opts *debuginfo_opts(void);

/*
 * The session's debug-dir command: @dirs as --debug-dir, NULL for the
 * default.  Returns 0, or -1 after saying why.
 */
int debuginfo_set_dir(const char *dirs);

/* The debug directories in use, "/usr/lib/debug" by default. */
const char *debuginfo_dir(void);

#endif /* BTRACE_CMD_DEBUGINFO_H */
