/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_DEBUGINFO_H
#define BTRACE_CMD_DEBUGINFO_H

/*
 * Where symbols and lines are looked for, shared by run, attach, show,
 * decode and the session: --debug-dir DIR (gdb's debug-file-directory)
 * and --no-debuginfod, rows of the option table (opts.c).  Every symtab
 * is made with debuginfo_opts().  Downloads from debuginfod are said on
 * stderr, never on stdout where JSON goes.
 */

#include "btrace/symbols.h"

/* --no-debuginfod: fetch nothing. */
void debuginfo_no_fetch(void);

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
