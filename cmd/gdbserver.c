// SPDX-License-Identifier: MIT
/*
 * btrace gdbserver: GDB's remote protocol over a process btrace traces
 * (gdbserver/gdbserver.h), so that GDB's `record btrace` works on any
 * machine.  This file only sets things up: the options, the target, the
 * connection (stdio, TCP, a unix socket) and the signal that carries
 * GDB's Ctrl-C while the target runs; and, for extended-remote, how a
 * process GDB runs or attaches to is made (the same trace options).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "gdbserver.h"
#include "opts.h"
#include "print.h"
#include "signals.h"

struct gdbserver_args {
	struct cmd_opts o;	/* --backend, --buffer-size, --soft-mode... */
	const char *comm;	/* "-", HOST:PORT, unix:PATH */
	pid_t attach;
	int multi;		/* --multi: no process needed */
	int once;		/* --once: end with the first connection */
	const char *trace_file, *core;
	char **argv;		/* the program and its arguments */
	int handed;		/* the server owns the process */
};

static struct gs_server *serving;
/* A signal that would end btrace (signals.h): it lets the process go as
 * at GDB's going (on_quit()), then exits 128 + the signal. */
static volatile sig_atomic_t quit_sig;

static int set_attach(struct cmd_opts *o, const char *v)
{
	struct gdbserver_args *a = o->own;
	char *end;
	long pid;

	errno = 0;
	pid = strtol(v, &end, 10);
	if (errno || *end || pid <= 0 || pid != (pid_t)pid)
		return cmd_usage_error(o, "not a process id: '%s'", v);
	a->attach = (pid_t)pid;
	return 0;
}

/* A followed child would be a process GDB did not run or attach to. */
static int refuse_follow_fork(struct cmd_opts *o, const char *v)
{
	return cmd_usage_error(o, "--follow-fork: GDB's remote protocol here "
			       "serves no fork children");
}

static const struct cmd_option gdbserver_options[] = {
	CMD_OPT_FN("attach", 0, "PID", CMD_GDBSERVER, set_attach,
		   "serve a running process (detach leaves it\n"
		   "running)"),
	CMD_OPT_OWN_FLAG("multi", CMD_GDBSERVER, struct gdbserver_args, multi,
			 "start with no process: GDB's `run` and `attach`\n"
			 "(target extended-remote) make each"),
	CMD_OPT_OWN_FLAG("once", CMD_GDBSERVER, struct gdbserver_args, once,
			 "end when GDB disconnects (otherwise, on a port\n"
			 "or socket, the process waits for the next GDB;\n"
			 "monitor exit ends the server)"),
	CMD_OPT_OWN_STRING("trace", "FILE", CMD_GDBSERVER,
			   struct gdbserver_args, trace_file,
			   "serve a saved trace (btrace run --save) as a\n"
			   "stopped process, post-mortem"),
	CMD_OPT_OWN_STRING("core", "CORE", CMD_GDBSERVER,
			   struct gdbserver_args, core,
			   "with --trace: memory and registers from CORE"),
	CMD_OPT_FN("follow-fork", 0, NULL, CMD_GDBSERVER, refuse_follow_fork,
		   NULL),
	CMD_OPT_END,
};

static const struct cmd_desc gdbserver_desc = {
	.name = "gdbserver",
	.id = CMD_GDBSERVER,
	.usage = "gdbserver [options] COMM PROGRAM [ARGS...]\n"
		 "       btrace gdbserver [options] --attach PID COMM\n"
		 "       btrace gdbserver [options] --multi COMM\n"
		 "       btrace gdbserver --trace FILE [--core CORE] COMM",
	.about = "Serve a process under branch tracing to GDB's remote protocol:\n"
		 "GDB's own `record btrace` then works on any machine.  COMM is\n"
		 "'-' (stdin/stdout: target remote | btrace gdbserver - prog),\n"
		 "HOST:PORT or :PORT (TCP; loopback unless HOST says otherwise;\n"
		 "port 0 picks one) or unix:PATH.  With target extended-remote\n"
		 "GDB's run and attach start the next process after one ends.",
	.own = gdbserver_options,
	.in_order = 1,
	.min_args = 1,
	.max_args = -1,
	.missing = "no connection given (-, HOST:PORT or unix:PATH)",
};

static int parse_args(struct gdbserver_args *a, int argc, char **argv)
{
	struct cmd_opts *o = &a->o;
	int ret;

	o->own = a;
	ret = cmd_opts_parse(&gdbserver_desc, argc, argv, o);
	if (ret >= 0)
		return ret;
	a->comm = o->args[0];
	a->argv = o->args + 1;
	if (a->core && !a->trace_file)
		return cmd_usage_error(o, "--core needs --trace");
	if (a->attach && a->trace_file)
		return cmd_usage_error(o, "--attach and --trace exclude each other");
	if (a->multi && a->trace_file)
		return cmd_usage_error(o, "--multi and --trace exclude each other");
	if ((a->attach || a->trace_file) && o->nargs > 1)
		return cmd_usage_error(o, "unexpected '%s': no program with %s",
				       a->argv[0],
				       a->attach ? "--attach" : "--trace");
	if (!a->attach && !a->trace_file && !a->multi && o->nargs < 2)
		return cmd_usage_error(o, "no program to run");
	return -1;
}

/* ---- the connection ---- */

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "btrace: socket path too long: '%s'\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 1) < 0) {
		fprintf(stderr, "btrace: cannot listen on '%s': %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(stderr, "Listening on %s\n", path);
	return fd;
}

static int listen_tcp(const char *comm)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL, *ai;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	const char *colon = strrchr(comm, ':');
	char host[256], port[32], got[NI_MAXSERV];
	int fd = -1, one = 1, err;

	if (!colon || colon - comm >= (long)sizeof(host) || !colon[1] ||
	    strlen(colon + 1) >= sizeof(port)) {
		fprintf(stderr, "btrace gdbserver: bad connection '%s' (-, HOST:PORT "
			"or unix:PATH)\n", comm);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - comm), comm);
	snprintf(port, sizeof(port), "%s", colon + 1);
	err = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &res);
	if (err) {
		fprintf(stderr, "btrace: cannot listen on '%s': %s\n", comm,
			gai_strerror(err));
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1) < 0) {
			err = errno;
			close(fd);
			fd = -1;
			errno = err;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "btrace: cannot listen on '%s': %s\n", comm,
			strerror(errno));
		return -1;
	}
	getsockname(fd, (struct sockaddr *)&ss, &len);
	getnameinfo((struct sockaddr *)&ss, len, NULL, 0, got, sizeof(got),
		    NI_NUMERICSERV);
	fprintf(stderr, "Listening on port %s\n", got);
	return fd;
}

static int accept_one(int lfd)
{
	int fd, one = 1;

	do
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR && !quit_sig);
	if (fd < 0) {
		if (!quit_sig)	/* else the signal's own message */
			fprintf(stderr, "btrace: accept: %s\n",
				strerror(errno));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	fprintf(stderr, "Remote debugging connected\n");
	return fd;
}

/*
 * GDB's Ctrl-C arrives as a byte while the target runs: O_ASYNC makes
 * the kernel send SIGIO to this thread (the tracer), whose handler asks
 * the target to stop (bt_target_interrupt() is async-signal-safe, and
 * from the tracer thread it also wakes the wait).  No SA_RESTART: the
 * wait returns.
 */
static void on_input(int sig)
{
	gs_server_input(serving);
}

static void on_quit(int sig)
{
	quit_sig = sig;
	gs_server_quit(serving);
}

/* What btrace says when on_quit()'s signal let process @pid go (0: not
 * known here). */
static void say_let_go(pid_t pid)
{
	char name[16];

	print_signame(quit_sig, name, sizeof(name));
	if (pid > 0)
		fprintf(stderr, "btrace: %s: process %d let go\n", name, pid);
	else
		fprintf(stderr, "btrace: %s: the process let go\n", name);
}

static void input_signal(int fd)
{
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	struct sigaction sa = { .sa_handler = on_input };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGIO, &sa, NULL);
	fcntl(fd, F_SETOWN_EX, &owner);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
}

/*
 * In stdio mode the protocol owns stdin and stdout: they move to fds of
 * their own, and the program gets /dev/null and stderr (as gdbserver
 * does), so that its output cannot corrupt the protocol.
 */
static int stdio_take(int *in, int *out)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	*in = fcntl(0, F_DUPFD_CLOEXEC, 3);
	*out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (null < 0 || *in < 0 || *out < 0 || dup2(null, 0) < 0 ||
	    dup2(2, 1) < 0) {
		fprintf(stderr, "btrace: cannot set up stdio: %s\n",
			strerror(errno));
		return -1;
	}
	close(null);
	return 0;
}

/* ---- the target ---- */

static void trace_opts(const struct gdbserver_args *a,
		       struct bt_target_opts *topts)
{
	memset(topts, 0, sizeof(*topts));
	topts->size = sizeof(*topts);
	topts->backend = a->o.backend;
	topts->buffer_size = a->o.buffer_size;
	run_trace_apply(&a->o.trace, topts);
}

/* @t launched or attached: the live target GDB gets, at its first stop. */
static int spawned(const struct gdbserver_args *a, struct bt_target *t,
		   struct gs_proc *p, char *why, size_t len)
{
	struct gs_live *live;
	pid_t tids[1];

	if (a->o.backend == BT_BACKEND_AUTO)
		run_trace_say_backend(t, &a->o.trace);
	if (gs_live_alloc(&live, t) < 0) {
		bt_target_free(t);
		snprintf(why, len, "%s", bt_errstr(-bte_nomem));
		fprintf(stderr, "btrace: %s\n", why);
		return -bte_nomem;
	}
	memset(p, 0, sizeof(*p));
	p->ops = &gs_live_ops;
	p->ctx = live;
	/* GDB takes the first stop as a SIGTRAP, as from gdbserver */
	p->first.reason = BT_STOP_STEP;
	p->first.tid = bt_target_threads(t, tids, 1) ? bt_target_pid(t) : 0;
	return 0;
}

static int spawn_run(void *arg, char *const *argv, struct gs_proc *p,
		     char *why, size_t len)
{
	struct bt_target_opts topts;
	struct bt_target *t;
	int err;

	trace_opts(arg, &topts);
	err = bt_target_launch(&t, &topts, argv);
	if (err < 0) {
		cmd_launch_why(argv[0], topts.backend, err, why, len);
		fprintf(stderr, "btrace: %s\n", why);
		return err;
	}
	fprintf(stderr, "Process %s created; pid = %d\n", argv[0],
		bt_target_pid(t));
	return spawned(arg, t, p, why, len);
}

static int spawn_attach(void *arg, pid_t pid, struct gs_proc *p, char *why,
			size_t len)
{
	struct bt_target_opts topts;
	struct bt_target *t;
	int err;

	trace_opts(arg, &topts);
	err = bt_target_attach(&t, &topts, pid);
	if (err < 0) {
		cmd_attach_why(pid, err, why, len);
		fprintf(stderr, "btrace: %s\n", why);
		return err;
	}
	fprintf(stderr, "Attached; pid = %d\n", pid);
	return spawned(arg, t, p, why, len);
}

/* bt_target_free() kills what it launched, lets go what it attached to. */
static void spawn_release(void *arg, struct gs_proc *p)
{
	struct gs_live *live = p->ctx;

	bt_target_free(gs_live_target(live));
	gs_live_free(live);
}

/*
 * GDB went away and the process waits (GS_END_AWAIT): the next GDB on
 * @lfd gets it, as from gdbserver without --once.  Returns what the
 * last connection ended with.
 */
static int serve_again(int lfd, int *fd)
{
	int ret = GS_END_AWAIT;

	while (ret == GS_END_AWAIT) {
		if (quit_sig)
			return GS_END_DISCONNECTED;
		fprintf(stderr, "Remote side has terminated connection.  "
			"btrace gdbserver will reopen the connection.\n");
		close(*fd);
		*fd = accept_one(lfd);
		if (*fd < 0)
			return GS_END_DISCONNECTED;
		gs_server_reconnect(serving, *fd, *fd);
		input_signal(*fd);
		ret = gs_serve(serving);
	}
	return ret;
}

/*
 * Serve @p (ops NULL: none yet); with @sp, extended-remote is offered and
 * the server owns the process.  With @lfd (not -1), the server outlives
 * each connection on it.
 */
static int serve(struct gdbserver_args *a, const struct gs_proc *p,
		 const struct gs_spawner *sp, int in, int out, int lfd)
{
	pid_t pid;
	int ret;

	ret = gs_server_alloc(&serving, p->ops, p->ctx, in, out, &p->first);
	if (ret == 0 && sp)
		ret = gs_server_extend(serving, sp, a->attach ? NULL : a->argv);
	if (ret < 0) {
		fprintf(stderr, "btrace: %s\n", bt_errstr(ret));
		gs_server_free(serving);
		return EXIT_FAIL;
	}
	a->handed = sp != NULL;
	if (lfd >= 0)
		gs_server_keep(serving);
	input_signal(in);
	ret = gs_serve(serving);
	if (ret == GS_END_AWAIT)
		ret = serve_again(lfd, &in);
	signal(SIGIO, SIG_IGN);
	pid = gs_server_pid(serving);
	gs_server_free(serving);
	serving = NULL;
	if (lfd >= 0)
		close(in);
	switch (ret) {
	case GS_END_DETACHED:
		fprintf(stderr, "Detached from process %d\n", pid);
		return 0;
	case GS_END_KILLED:
		return 0;
	case GS_END_EXITED:
		return 0;
	case GS_END_DISCONNECTED:
		if (quit_sig) {
			say_let_go(pid);
			return 0;
		}
		fprintf(stderr, "Remote side has terminated connection.  "
			"btrace gdbserver will now exit.\n");
		return 0;
	default:
		fprintf(stderr, "btrace: connection to gdb failed: %s\n",
			bt_errstr(ret));
		return EXIT_FAIL;
	}
}

static int connect_and_serve(struct gdbserver_args *a,
			     const struct gs_proc *p, const struct gs_spawner *sp,
			     int in, int out)
{
	int lfd = -1, fd, ret;

	if (in >= 0)
		return serve(a, p, sp, in, out, -1);
	if (!strncmp(a->comm, "unix:", 5))
		lfd = listen_unix(a->comm + 5);
	else
		lfd = listen_tcp(a->comm);
	if (lfd < 0)
		return EXIT_FAIL;
	fd = accept_one(lfd);
	ret = fd < 0 ? EXIT_FAIL : serve(a, p, sp, fd, fd, a->once ? -1 : lfd);
	if (a->once && fd >= 0)
		close(fd);
	close(lfd);
	if (!strncmp(a->comm, "unix:", 5))
		unlink(a->comm + 5);
	return ret;
}

/*
 * A launched or attached process, or none with --multi; the server owns
 * it (through the spawner) from the start, as every later one.
 */
static int serve_live(struct gdbserver_args *a, int in, int out)
{
	const struct gs_spawner sp = { spawn_run, spawn_attach, spawn_release,
				       a };
	struct gs_proc p = { 0 };
	char why[1024];
	int ret = 0;

	if (a->attach)
		ret = spawn_attach(a, a->attach, &p, why, sizeof(why));
	else if (a->argv[0])
		ret = spawn_run(a, a->argv, &p, why, sizeof(why));
	if (ret < 0)
		return EXIT_FAIL;
	/*
	 * From here on, btrace ends by its own decision only: a signal that
	 * would end it lets the process go first (Ctrl-C in the terminal is
	 * GDB's, ignored here).
	 */
	cmd_catch_signals(on_quit);
	signal(SIGINT, SIG_IGN);
	ret = connect_and_serve(a, &p, &sp, in, out);
	if (p.ops && !a->handed) {
		spawn_release(a, &p);	/* no connection came */
		if (quit_sig)
			say_let_go(0);
	}
	return quit_sig ? 128 + quit_sig : ret;
}

static int pm_error(const char *trace, const char *core, int err)
{
	const char *d = bt_errdetail();

	if (core && (err == -bte_format || err == -bte_corrupt) && !d[0])
		fprintf(stderr, "btrace: cannot load '%s': %s\n", core,
			err == -bte_format ? "not an x86-64 ELF core file" :
					     "corrupt core file");
	else if (err == -bte_format || err == -bte_corrupt)
		fprintf(stderr, "btrace: cannot load '%s': %s%s%s\n", trace,
			err == -bte_corrupt ? "corrupt trace file" :
					      "not a btrace trace file",
			d[0] ? ": " : "", d);
	else
		fprintf(stderr, "btrace: cannot load '%s'%s%s%s: %s\n", trace,
			core ? " or '" : "", core ? core : "", core ? "'" : "",
			bt_errno() ? strerror(bt_errno()) : bt_errstr(err));
	return EXIT_FAIL;
}

static int serve_postmortem(struct gdbserver_args *a, int in, int out)
{
	struct gs_proc p = { 0 };
	struct gs_pm *pm;
	int ret;

	ret = gs_pm_open(&pm, a->trace_file, a->core);
	if (ret < 0)
		return pm_error(a->trace_file, a->core, ret);
	fprintf(stderr, "Serving the trace of process %d from %s%s%s\n",
		gs_pm_trace_pid(pm), a->trace_file, a->core ? " with " : "",
		a->core ? a->core : "");
	if (a->core && gs_pm_core_pid(pm) != gs_pm_trace_pid(pm))
		fprintf(stderr, "btrace: warning: the core is of process %d, "
			"the trace of process %d\n", gs_pm_core_pid(pm),
			gs_pm_trace_pid(pm));
	signal(SIGPIPE, SIG_IGN);
	p.ops = &gs_pm_ops;
	p.ctx = pm;
	p.first = *gs_pm_stop(pm);
	ret = connect_and_serve(a, &p, NULL, in, out);
	gs_pm_free(pm);
	return ret;
}

int cmd_gdbserver(int argc, char **argv)
{
	struct gdbserver_args a;
	int ret, in = -1, out = -1;

	memset(&a, 0, sizeof(a));
	ret = parse_args(&a, argc, argv);
	if (ret >= 0)
		return ret;
	if (!strcmp(a.comm, "-") && stdio_take(&in, &out) < 0)
		return EXIT_FAIL;
	if (a.trace_file)
		return serve_postmortem(&a, in, out);
	return serve_live(&a, in, out);
}
