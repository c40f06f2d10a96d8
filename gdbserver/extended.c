// SPDX-License-Identifier: MIT
/*
 * Extended-remote (GDB's "target extended-remote"): after "!" the session
 * outlives its process, and GDB's run (vRun), attach (vAttach) and the
 * old restart (R) make the next one through the gs_spawner that
 * cmd/gdbserver.c gave (gdbserver.h).  With multiprocess (GDB's
 * inferiors) a second run or attach sets the process served aside
 * (procs.c); without it, it is refused, as gdbserver refuses it without
 * multiprocess.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

static void free_argv(char **argv)
{
	size_t i;

	for (i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static char **copy_argv(char *const *argv)
{
	size_t n = 0, i;
	char **c;

	while (argv[n])
		n++;
	c = calloc(n + 1, sizeof(*c));
	for (i = 0; c && i < n; i++) {
		c[i] = strdup(argv[i]);
		if (!c[i]) {
			free_argv(c);
			return NULL;
		}
	}
	return c;
}

int gs_server_extend(struct gs_server *s, const struct gs_spawner *sp,
		     char *const *argv)
{
	char **prog = NULL;

	if (argv && argv[0]) {
		prog = copy_argv(argv);
		if (!prog)
			return -bte_nomem;
	}
	free_argv(s->prog);
	s->prog = prog;
	s->spawner = sp;
	return 0;
}

void gs_extended_release(struct gs_server *s)
{
	gs_procs_release(s);
	free_argv(s->prog);
	s->prog = NULL;
}

void gs_cmd_extended(struct gs_server *s, char *pkt)
{
	if (!s->spawner)
		return;		/* a saved trace: not supported */
	s->extended = 1;
	gs_buf_adds(&s->reply, "OK");
}

/*
 * "E.reason": GDB shows the text (vAttach) or at least fails the command.
 * The reply goes out unescaped: the characters framing would take are
 * replaced.
 */
static void reply_why(struct gs_server *s, const char *why)
{
	const char *p;

	gs_buf_reset(&s->reply);
	gs_buf_adds(&s->reply, "E.");
	for (p = why; *p; p++)
		gs_buf_addf(&s->reply, "%c", strchr("$#}*", *p) ? '?' : *p);
}

/* Can a process start now?  Replies the error if not. */
static int can_start(struct gs_server *s)
{
	char why[64];

	if (!s->spawner || !s->extended) {
		gs_buf_reset(&s->reply);
		return 0;	/* not extended: not supported */
	}
	if (s->ops == &gs_no_proc_ops)
		return 1;
	/* with multiprocess, GDB's next inferior: this one waits */
	if (!s->gone && s->multiprocess) {
		if (gs_proc_park(s) == 0)
			return 1;
		gs_buf_adds(&s->reply, "E0c");	/* ENOMEM */
		return 0;
	}
	if (!s->gone) {
		snprintf(why, sizeof(why), "already debugging process %d",
			 (int)gs_proc_pid(s));
		reply_why(s, why);
		return 0;
	}
	gs_proc_drop(s);
	return 1;
}

/* A process made (or not): serve it, reply its first stop, or why not. */
static void started(struct gs_server *s, int ret, const struct gs_proc *p,
		    const char *why)
{
	if (ret < 0) {
		reply_why(s, why[0] ? why : bt_errstr(ret));
		gs_proc_next(s);	/* the one set aside, if any */
		return;
	}
	gs_proc_set(s, p);
	gs_put_stop(s);
	/* GDB takes the new process's thread as the general one, non-stop too */
	s->gthread = s->last.tid;
}

/*
 * vRun;PROGRAM;ARG...: hex-encoded.  An empty PROGRAM is the last one run
 * (or the command line's), with the arguments given now, as gdbserver
 * does.
 */
static char **vrun_argv(struct gs_server *s, char *list)
{
	size_t n = 1, i = 0, len;
	char **argv, *field, *next;

	for (field = list; *field; field++)
		n += *field == ';';
	argv = calloc(n + 1, sizeof(*argv));
	for (field = list; argv && field; field = next, i++) {
		next = strchr(field, ';');
		if (next)
			*next++ = '\0';
		len = strlen(field) / 2;
		argv[i] = calloc(1, len + 1);
		if (!argv[i] || strlen(field) % 2 ||
		    gs_unhex(field, len, (uint8_t *)argv[i]) < 0 ||
		    strlen(argv[i]) != len)
			goto bad;
		if (i == 0 && !len && s->prog) {
			free(argv[0]);
			argv[0] = strdup(s->prog[0]);
			if (!argv[0])
				goto bad;
		}
	}
	return argv;
bad:
	free_argv(argv);
	return NULL;
}

void gs_cmd_run(struct gs_server *s, char *pkt)
{
	char why[512] = "", **argv;
	struct gs_proc p = { 0 };
	int ret;

	if (!can_start(s))
		return;
	argv = vrun_argv(s, pkt + 5);
	if (!argv) {
		gs_buf_adds(&s->reply, "E16");	/* EINVAL */
		return;
	}
	if (!argv[0][0]) {
		reply_why(s, "no program to run: set remote exec-file PROGRAM, "
			     "or give one to btrace gdbserver");
		free_argv(argv);
		return;
	}
	ret = s->spawner->run(s->spawner->arg, argv, &p, why, sizeof(why));
	started(s, ret, &p, why);
	if (ret >= 0) {
		free_argv(s->prog);
		s->prog = argv;
	} else {
		free_argv(argv);
	}
}

void gs_cmd_attach(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 8;
	char why[512] = "";
	struct gs_proc proc = { 0 };
	uint64_t pid;
	int ret;

	if (!can_start(s))
		return;
	if (!gs_parse_hex(&p, &pid) || *p || !pid || pid > 0x7fffffff) {
		gs_buf_adds(&s->reply, "E16");	/* EINVAL */
		return;
	}
	ret = s->spawner->attach(s->spawner->arg, (pid_t)pid, &proc, why,
				 sizeof(why));
	started(s, ret, &proc, why);
}

/*
 * R: the last program again, from its start; no reply (GDB waits for
 * none, and asks "?" next).  The processes served are killed first.
 */
void gs_cmd_restart(struct gs_server *s, char *pkt)
{
	struct gs_proc p = { 0 };
	char why[512];

	if (!s->spawner || !s->extended)
		return;		/* not supported: the empty reply */
	s->replying = 0;
	do {
		if (s->ops != &gs_no_proc_ops && !s->gone && s->ops->kill)
			s->ops->kill(s->ctx);
		s->gone = 1;
		gs_proc_drop(s);	/* the next one waiting is served */
	} while (s->ops != &gs_no_proc_ops);
	if (!s->prog)
		return;
	if (s->spawner->run(s->spawner->arg, s->prog, &p, why, sizeof(why)) >= 0)
		gs_proc_set(s, &p);
}
