// SPDX-License-Identifier: MIT
/*
 * btrace attach: trace a running process until Ctrl-C, a fatal signal or a
 * breakpoint, show the stop and open the session (session.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "btrace/doctor.h"
#include "cmd.h"
#include "opts.h"
#include "run_trace.h"
#include "session.h"

static const char attach_about[] =
	"Trace every thread of process PID until Ctrl-C, a fatal signal, its\n"
	"exit or a breakpoint, show the last branches (or, with --calls, the\n"
	"call history; with --insn, the instructions), then open the session.";

static const struct cmd_desc attach_desc = {
	.name = "attach",
	.id = CMD_ATTACH,
	.usage = "attach [options] PID",
	.about = attach_about,
	.min_args = 1,
	.max_args = 1,
	.missing = "no process id",
};

static int parse_pid(const struct cmd_opts *o, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(o->args[0], &end, 10);
	if (errno || *end || v <= 0 || v != (pid_t)v)
		return cmd_usage_error(o, "'%s' is not a process id",
				       o->args[0]);
	*pid = v;
	return 0;
}

/* A field of /proc/PID/status ("State", "TracerPid", "Uid"), or "". */
static void proc_status(pid_t pid, const char *field, char *buf, size_t size)
{
	char path[64], line[256];
	size_t len = strlen(field);
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, len) || line[len] != ':')
			continue;
		snprintf(buf, size, "%s", line + len + 1 + strspn(line + len + 1,
								  " \t"));
		buf[strcspn(buf, "\n")] = '\0';
		break;
	}
	fclose(f);
}

static int ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Why a permission failure: yama's ptrace_scope, or credentials. */
static void perm_reason(pid_t pid, char *buf, size_t size)
{
	static const char *const scopes[] = {
		"", "only descendants may be traced",
		"only CAP_SYS_PTRACE may trace", "tracing is disabled",
	};
	int scope = ptrace_scope();
	char uid[128];

	if (scope > 0 && (scope > 1 || geteuid() != 0) && scope < 4) {
		snprintf(buf, size, "ptrace_scope is %d: %s; see btrace doctor",
			 scope, scopes[scope]);
		return;
	}
	proc_status(pid, "Uid", uid, sizeof(uid));
	uid[strcspn(uid, " \t")] = '\0';
	snprintf(buf, size,
		 "credentials: the process runs as uid %s, btrace as uid %d",
		 uid[0] ? uid : "?", (int)geteuid());
}

void cmd_attach_why(pid_t pid, int err, char *out, size_t len)
{
	char state[64], tracer[32], why[256];

	proc_status(pid, "State", state, sizeof(state));
	proc_status(pid, "TracerPid", tracer, sizeof(tracer));
	if (state[0] == 'Z' || state[0] == 'X')
		snprintf(why, sizeof(why), "no such process (it is a zombie)");
	else if (err == -bte_noent || !state[0])
		snprintf(why, sizeof(why), "no such process");
	else if (err == -bte_busy || (tracer[0] && strcmp(tracer, "0")))
		snprintf(why, sizeof(why),
			 "already traced by another debugger (pid %s)", tracer);
	else if (err == -bte_perm) {
		snprintf(why, sizeof(why), "operation not permitted (");
		perm_reason(pid, why + strlen(why), sizeof(why) - strlen(why));
		strncat(why, ")", sizeof(why) - strlen(why) - 1);
	} else if (bt_errdetail()[0])
		snprintf(why, sizeof(why), "%s (%s)", bt_errstr(err),
			 bt_errdetail());
	else
		snprintf(why, sizeof(why), "%s", bt_errstr(err));
	snprintf(out, len, "cannot attach to %d: %s", pid, why);
}

void cmd_attach_error(pid_t pid, int err)
{
	char why[320];

	cmd_attach_why(pid, err, why, sizeof(why));
	fprintf(stderr, "btrace: %s\n", why);
}

int cmd_attach(int argc, char **argv)
{
	struct bt_target_opts topts = { .size = sizeof(topts) };
	struct bt_session_opts so = { .attached = 1, .cont_first = 1 };
	struct cmd_opts o = { 0 };
	struct bt_target *t;
	pid_t pid = 0, tids[1];
	FILE *out;
	size_t n;
	int err;

	err = cmd_opts_parse(&attach_desc, argc, argv, &o);
	if (err >= 0)
		return err;
	if (parse_pid(&o, &pid))
		return EXIT_USAGE;
	if (pid == getpid()) {
		fprintf(stderr, "btrace: cannot attach to %d: that is btrace "
			"itself\n", pid);
		return EXIT_FAIL;
	}
	out = cmd_opts_open(&o);
	if (!out)
		return EXIT_FAIL;
	/* Before attaching: no signal may end btrace holding the target. */
	bt_session_signals();
	topts.backend = o.backend;
	topts.buffer_size = o.buffer_size;
	run_trace_apply(&o.trace, &topts);
	err = bt_target_attach(&t, &topts, pid);
	if (err == -bte_nosys && topts.backend != BT_BACKEND_AUTO) {
		/* the backend was refused before any ptrace request */
		fprintf(stderr, "btrace: backend '%s' is not available here: "
			"%s\n", bt_backend_name(topts.backend), bt_errdetail());
		cmd_opts_close(&o, out);
		return EXIT_FAIL;
	}
	if (err) {
		cmd_attach_error(pid, err);
		cmd_opts_close(&o, out);
		return EXIT_FAIL;
	}
	n = bt_target_threads(t, tids, 0);
	fprintf(stderr, "btrace: attached to process %d (%zu thread%s, %s "
		"backend); Ctrl-C stops it\n", pid, n, n == 1 ? "" : "s",
		bt_target_backend_name(t));
	if (topts.backend == BT_BACKEND_AUTO)
		run_trace_say_backend(t, &o.trace);
	so.o = &o;
	so.out = out;
	err = bt_session_main(t, &so);
	if (cmd_opts_close(&o, out) < 0 && !err)
		err = EXIT_FAIL;
	return err;
}
