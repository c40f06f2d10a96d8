/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_H
#define BTRACE_CMD_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

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
int cmd_gdbserver(int argc, char **argv);

/* Say on stderr why bt_target_attach() of @pid failed, and the remedy. */
void cmd_attach_error(pid_t pid, int err);
/* The same line into @why (@len bytes), without "btrace: ". */
void cmd_attach_why(pid_t pid, int err, char *why, size_t len);

/* Say on stderr why bt_target_launch() of @prog failed; EXIT_FAIL. */
int cmd_launch_error(const char *prog, int backend, int err);
/* The same line into @why (@len bytes), without "btrace: ". */
void cmd_launch_why(const char *prog, int backend, int err, char *why,
		    size_t len);

/* Options: opts.h.  Output: print.h. */

#endif /* BTRACE_CMD_H */
