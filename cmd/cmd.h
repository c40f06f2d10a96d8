/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_H
#define BTRACE_CMD_H

#include <stddef.h>
#include <stdio.h>

/* Shared by the front ends in cmd/. */

#define BT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A subcommand: argv[0] is its name; returns the process exit status. */
struct cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* Exit statuses: 2 for usage errors, 1 for the rest. */
int cmd_doctor(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_handoff(int argc, char **argv);
int cmd_decode(int argc, char **argv);

#define EXIT_USAGE 2
#define EXIT_FAIL 1

int cmd_run(int argc, char **argv);
int cmd_attach(int argc, char **argv);

/* Options: opts.h.  Output: print.h. */

#endif /* BTRACE_CMD_H */
