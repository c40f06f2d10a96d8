// SPDX-License-Identifier: MIT
/* --debug-dir and --no-debuginfod for every front end (debuginfo.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"

/* As gdb says it, on stderr: JSON on stdout stays clean. */
static void say_fetch(void *ctx, const char *what)
{
	fprintf(stderr, "btrace: downloading separate debug info for %s...\n",
		what);
}

static char *dir;	/* owned copy of --debug-dir, or NULL */
static struct bt_symtab_opts opts = {
	.size = sizeof(opts),
	.fetch = say_fetch,
};

const struct bt_symtab_opts *debuginfo_opts(void)
{
	return &opts;
}

const char *debuginfo_dir(void)
{
	return dir ? dir : "/usr/lib/debug";
}

int debuginfo_set_dir(const char *dirs)
{
	struct bt_symtab_opts o = opts;
	char *copy = NULL;
	const char *d;
	int err;

	o.debug_dir = dirs;
	err = bt_symtab_check_opts(&o);
	if (err < 0) {
		d = bt_errdetail();
		fprintf(stderr, "btrace: cannot use %s: %s\n",
			d[0] ? d : "the debug directory",
			bt_errno() ? strerror(bt_errno()) : bt_errstr(err));
		return -1;
	}
	if (dirs && !(copy = strdup(dirs))) {
		fprintf(stderr, "btrace: out of memory\n");
		return -1;
	}
	free(dir);
	dir = copy;
	opts.debug_dir = dir;
	return 0;
}

void debuginfo_no_fetch(void)
{
	opts.no_debuginfod = 1;
}
