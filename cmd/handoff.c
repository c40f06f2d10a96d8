// SPDX-License-Identifier: MIT
/*
 * btrace handoff: trace until the next stop, save,
 * and hand the stopped process back to the debugger that lent it (the GDB
 * plugin; docs/gdb.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "handoff.h"

static const char *const reasons[] = {
	[BT_STOP_NONE] = "none",	   [BT_STOP_SIGNAL] = "signal",
	[BT_STOP_EXIT] = "exit",	   [BT_STOP_INTERRUPT] = "interrupt",
	[BT_STOP_BREAK] = "break",	   [BT_STOP_KILLED] = "killed",
	[BT_STOP_STEP] = "step",
};

/* An address ("0x401136") or a function of the process ("main"). */
static int insert_break(struct bt_target *t, struct bt_symtab **st,
			const char *spec)
{
	uint64_t addr;
	char *end;
	int ret;

	errno = 0;
	addr = strtoull(spec, &end, 0);
	if (errno || *end || !addr) {
		if (!*st && bt_symtab_from_pid(st, bt_target_pid(t)) < 0)
			*st = NULL;
		addr = *st ? bt_symtab_addr(*st, spec) : 0;
	}
	if (!addr) {
		fprintf(stderr, "btrace: no function or address '%s'\n", spec);
		return -1;
	}
	ret = bt_target_break_insert(t, addr);
	if (ret < 0) {
		fprintf(stderr, "btrace: cannot set a breakpoint at 0x%" PRIx64
			": %s\n", addr, bt_errstr(ret));
		return -1;
	}
	return 0;
}

static void print_stop_line(const struct bt_stop *s)
{
	int r = s->reason;

	printf("btrace-stop: reason=%s tid=%d signal=%d si_code=%d "
	       "status=%d breakpoint=%d pc=0x%" PRIx64 " addr=0x%" PRIx64 "\n",
	       r >= 0 && r < (int)BT_ARRAY_SIZE(reasons) ? reasons[r] : "?",
	       s->tid, s->signal, s->si_code, s->status, s->breakpoint, s->pc,
	       s->addr);
	fflush(stdout);
}

int attach_handoff(struct bt_target *t, const struct handoff_opts *o)
{
	struct bt_symtab *st = NULL;
	struct bt_stop stop = { 0 };
	size_t i;
	int ret;

	for (i = 0; i < o->nbreaks; i++)
		if (insert_break(t, &st, o->breaks[i]) < 0)
			goto err;
	bt_symtab_free(st);
	/*
	 * The debugger left the process in a SIGSTOP group stop so that it
	 * ran nothing untraced; end that stop now that btrace holds it.
	 */
	kill(bt_target_pid(t), SIGCONT);
	ret = bt_target_cont(t, &stop);
	if (ret < 0) {
		fprintf(stderr, "btrace: tracing %d failed: %s\n",
			bt_target_pid(t), bt_errstr(ret));
		goto err;
	}
	if (o->save) {
		ret = bt_trace_save(t, &stop, o->save);
		if (ret < 0)
			fprintf(stderr, "btrace: cannot save '%s': %s%s%s\n",
				o->save, bt_errstr(ret),
				bt_errdetail()[0] ? ": " : "", bt_errdetail());
		else
			fprintf(stderr, "btrace: trace saved to %s\n", o->save);
	}
	print_stop_line(&stop);
	if (stop.reason == BT_STOP_EXIT || stop.reason == BT_STOP_KILLED)
		ret = bt_target_detach(t);
	else
		ret = bt_target_detach_stopped(t);
	if (ret < 0) {
		fprintf(stderr, "btrace: cannot hand %d back: %s\n",
			bt_target_pid(t), bt_errstr(ret));
		return EXIT_FAIL;
	}
	return 0;
err:
	bt_target_detach(t);
	return EXIT_FAIL;
}

#define HANDOFF_MAX_BREAKS 256

static const char handoff_usage[] =
	"usage: btrace handoff [--save FILE] [--break ADDR|FUNC]... "
	"[--backend NAME] PID\n"
	"\n"
	"Trace process PID (left stopped by a debugger) until its next stop,\n"
	"save the trace, print a 'btrace-stop:' line and leave the process\n"
	"stopped for the debugger to attach again (the GDB plugin's\n"
	"btrace continue; docs/gdb.md).\n";

static int handoff_usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "btrace handoff: %s%s%s%s\n%s", what, arg ? " '" : "",
		arg ? arg : "", arg ? "'" : "", handoff_usage);
	return EXIT_USAGE;
}

int cmd_handoff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "save", required_argument, NULL, 's' },
		{ "break", required_argument, NULL, 'b' },
		{ "backend", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bt_target_opts topts = { .size = sizeof(topts) };
	const char *breaks[HANDOFF_MAX_BREAKS];
	struct handoff_opts ho = { .breaks = breaks };
	struct bt_target *t;
	char *end;
	long pid;
	int c, ret;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+s:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			ho.save = optarg;
			break;
		case 'b':
			if (ho.nbreaks == HANDOFF_MAX_BREAKS)
				return handoff_usage_error("too many breakpoints",
							   NULL);
			breaks[ho.nbreaks++] = optarg;
			break;
		case 'B':
			topts.backend = bt_backend_parse(optarg);
			if (topts.backend < 0)
				return handoff_usage_error("unknown backend",
							   optarg);
			break;
		case 'h':
			fputs(handoff_usage, stdout);
			return 0;
		default:
			return handoff_usage_error("unknown option or missing value:",
						   argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return handoff_usage_error("one process id expected", NULL);
	errno = 0;
	pid = strtol(argv[optind], &end, 10);
	if (errno || *end || pid <= 0 || pid != (pid_t)pid)
		return handoff_usage_error("not a process id:", argv[optind]);
	ret = bt_target_attach(&t, &topts, pid);
	if (ret < 0) {
		const char *d = bt_errdetail();

		fprintf(stderr, "btrace: cannot attach to %ld: %s%s%s%s\n", pid,
			bt_errstr(ret), d[0] ? " (" : "", d, d[0] ? ")" : "");
		return EXIT_FAIL;
	}
	ret = attach_handoff(t, &ho);
	bt_target_free(t);
	return ret;
}
