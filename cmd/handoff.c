// SPDX-License-Identifier: MIT
/*
 * btrace attach --handoff: trace until the next stop, save, and hand the
 * stopped process back to the debugger that lent it (the GDB plugin).
 */
#include <errno.h>
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
