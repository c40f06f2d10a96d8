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
#include "run_trace.h"
#include "session.h"

#define ATTACH_MAX_EX 64

struct attach_args {
	struct bt_target_opts topts;
	struct bt_session_opts sopts;
	const char *ex[ATTACH_MAX_EX];
	const char *breaks[ATTACH_MAX_EX];
	pid_t pid;
	char save_cmd[4096];	/* --save FILE: a "save FILE" command */
	struct run_trace trace;	/* --soft-mode, --only, ... */
};

static void attach_usage(FILE *f)
{
	fprintf(f,
		"usage: btrace attach [options] PID\n"
		"\n"
		"Trace every thread of process PID until Ctrl-C, a fatal signal\n"
		"or a breakpoint, show the last branches, then open the session.\n"
		"\n"
		"  --backend NAME     auto, pt, bts or soft (default auto)\n"
		"  --buffer-size N    ring bytes per thread, a power of two\n"
		"  --last N           branches shown at a stop (default %d)\n"
		"  -b, --break SPEC   stop at SYMBOL, ADDR or FILE:LINE\n"
		"  -ex, --ex CMD      run session command CMD first (repeatable)\n"
		"  --batch            exit after the -ex commands (detaching)\n"
		"  --save FILE        at the first stop, save the trace to FILE\n"
		"  --soft-mode record|fast|step, --only GLOB, --exclude GLOB,\n"
		"  --from SYMBOL, --until SYMBOL, --follow-fork   as for btrace run\n",
		BT_SESSION_LAST_DEFAULT);
}

/* The value of option @argv[*i]: "--opt=value" or the next argument. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);

	if (!strncmp(argv[*i], name, len) && argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (strcmp(argv[*i], name))
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "btrace: option '%s' needs a value\n", name);
		exit(EXIT_USAGE);
	}
	return argv[++*i];
}

static int parse_size(const char *arg, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || end == arg || !v || arg[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int push(const char **list, size_t *n, const char *v)
{
	if (*n >= ATTACH_MAX_EX) {
		fprintf(stderr, "btrace: too many -ex or --break options\n");
		return -1;
	}
	list[(*n)++] = v;
	return 0;
}

/* The options of run_trace.h; 1 if argv[*i] is one (*v NULL if bad). */
static int trace_option(struct attach_args *a, int argc, char **argv, int *i,
			const char **v)
{
	static const struct { const char *name; int opt; } opts[] = {
		{ "--soft-mode", OPT_SOFT_MODE }, { "--only", OPT_ONLY },
		{ "--exclude", OPT_EXCLUDE }, { "--from", OPT_FROM },
		{ "--until", OPT_UNTIL },
	};
	size_t k;

	if (!strcmp(argv[*i], "--follow-fork")) {
		*v = "";
		return run_trace_option(&a->trace, OPT_FOLLOW_FORK, NULL) == 0;
	}
	for (k = 0; k < BT_ARRAY_SIZE(opts); k++) {
		*v = opt_value(argc, argv, i, opts[k].name);
		if (!*v)
			continue;
		if (run_trace_option(&a->trace, opts[k].opt, *v))
			*v = NULL;
		return 1;
	}
	return 0;
}

static int parse_option(struct attach_args *a, int argc, char **argv, int *i)
{
	const char *v;

	if ((v = opt_value(argc, argv, i, "--backend"))) {
		a->topts.backend = bt_backend_parse(v);
		if (a->topts.backend < 0) {
			fprintf(stderr, "btrace: unknown backend '%s'\n", v);
			return -1;
		}
	} else if ((v = opt_value(argc, argv, i, "--buffer-size"))) {
		if (parse_size(v, &a->topts.buffer_size) ||
		    (a->topts.buffer_size & (a->topts.buffer_size - 1))) {
			fprintf(stderr, "btrace: bad buffer size '%s' (a power "
				"of two)\n", v);
			return -1;
		}
	} else if ((v = opt_value(argc, argv, i, "--last"))) {
		a->sopts.last = cmd_parse_count(v, CMD_MAX_LAST);
		if (!a->sopts.last) {
			fprintf(stderr, "btrace: --last wants a number from 1 to "
				"%u, not '%s'\n", CMD_MAX_LAST, v);
			return -1;
		}
	} else if ((v = opt_value(argc, argv, i, "-ex")) ||
		   (v = opt_value(argc, argv, i, "--ex"))) {
		return push(a->ex, &a->sopts.nex, v);
	} else if ((v = opt_value(argc, argv, i, "-b")) ||
		   (v = opt_value(argc, argv, i, "--break"))) {
		return push(a->breaks, &a->sopts.nbreaks, v);
	} else if ((v = opt_value(argc, argv, i, "--save"))) {
		snprintf(a->save_cmd, sizeof(a->save_cmd), "save %s", v);
		return push(a->ex, &a->sopts.nex, a->save_cmd);
	} else if (!strcmp(argv[*i], "--batch")) {
		a->sopts.batch = 1;
	} else if (trace_option(a, argc, argv, i, &v)) {
		return v ? 0 : -1;
	} else {
		fprintf(stderr, "btrace: unknown option '%s'\n", argv[*i]);
		return -1;
	}
	return 0;
}

static int parse_args(struct attach_args *a, int argc, char **argv)
{
	char *end;
	long pid;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			attach_usage(stdout);
			exit(0);
		}
		if (parse_option(a, argc, argv, &i))
			return -1;
	}
	if (i != argc - 1) {
		attach_usage(stderr);
		return -1;
	}
	errno = 0;
	pid = strtol(argv[i], &end, 10);
	if (errno || *end || pid <= 0 || pid != (pid_t)pid) {
		fprintf(stderr, "btrace: '%s' is not a process id\n", argv[i]);
		return -1;
	}
	a->pid = pid;
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

void cmd_attach_error(pid_t pid, int err)
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
	fprintf(stderr, "btrace: cannot attach to %d: %s\n", pid, why);
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args a;
	struct bt_target *t;
	pid_t tids[1];
	size_t n;
	int err;

	memset(&a, 0, sizeof(a));
	a.topts.size = sizeof(a.topts);
	a.sopts.ex = a.ex;
	a.sopts.breaks = a.breaks;
	a.sopts.attached = 1;
	a.sopts.cont_first = 1;
	if (parse_args(&a, argc, argv))
		return EXIT_USAGE;
	if (a.pid == getpid()) {
		fprintf(stderr, "btrace: cannot attach to %d: that is btrace "
			"itself\n", a.pid);
		return EXIT_FAIL;
	}
	/* Before attaching: no signal may end btrace holding the target. */
	bt_session_signals();
	run_trace_apply(&a.trace, &a.topts);
	err = bt_target_attach(&t, &a.topts, a.pid);
	if (err == -bte_nosys && a.topts.backend != BT_BACKEND_AUTO) {
		/* the backend was refused before any ptrace request */
		fprintf(stderr, "btrace: backend '%s' is not available here: "
			"%s\n", bt_backend_name(a.topts.backend), bt_errdetail());
		return EXIT_FAIL;
	}
	if (err) {
		cmd_attach_error(a.pid, err);
		return EXIT_FAIL;
	}
	n = bt_target_threads(t, tids, 0);
	fprintf(stderr, "btrace: attached to process %d (%zu thread%s, %s "
		"backend); Ctrl-C stops it\n", a.pid, n, n == 1 ? "" : "s",
		bt_target_backend_name(t));
	if (a.topts.backend == BT_BACKEND_AUTO)
		run_trace_say_backend(t);
	return bt_session_main(t, &a.sopts);
}
