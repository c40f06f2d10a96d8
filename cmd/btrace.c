// SPDX-License-Identifier: MIT
/*
 * btrace: the command-line front end.  Subcommands are dispatched from one
 * table; each lives in cmd/<name>.c as cmd_<name>().
 */
#include <stdio.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cmd_entry commands[] = {
	{ "help", cmd_help, "show this help" },
	{ "run", cmd_run, "run a program and show its last branches when it stops" },
	{ "attach", cmd_attach, "trace a running process, then open a session" },
	{ "version", cmd_version, "print the version" },
	{ "doctor", cmd_doctor, "what can trace on this machine, and why not" },
	{ "show", cmd_show, "show the branches saved in a trace file" },
	{ "handoff", cmd_handoff, "trace a debugger's stopped process to its next stop (gdb plugin)" },
	{ "decode", cmd_decode, "decode raw PT or BTS streams offline" },
	{ "gdbserver", cmd_gdbserver, "serve a traced process (or a saved trace) to GDB's remote protocol" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: btrace <command> [options] [args]\n\ncommands:\n");
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nSee 'btrace <command> --help' and btrace(1).\n");
}

static int cmd_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	printf("btrace %s\n", BTRACE_VERSION);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name;
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		name = "help";
	else if (!strcmp(name, "--version"))
		name = "version";
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "btrace: unknown command '%s'; see 'btrace help'\n",
		name);
	return 2;
}
