// SPDX-License-Identifier: MIT
/*
 * Launch and attach.
 *
 * Every thread is attached with PTRACE_SEIZE (a launched child too), so
 * that PTRACE_INTERRUPT can stop a running thread and group-stops are told
 * apart from our own stops (PTRACE_EVENT_STOP with the stop signal) and
 * kept with PTRACE_LISTEN: a program stopped by SIGSTOP stays stopped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* Is @path something execve can run as an ELF program? */
static int program_check(const char *path)
{
	unsigned char magic[4];
	struct stat st;
	int fd, n;

	if (stat(path, &st) < 0)
		return bt_fail(bt_errno_to_bte(errno), errno, "%s", path);
	if (S_ISDIR(st.st_mode))
		return bt_fail(bte_perm, EISDIR, "%s: is a directory", path);
	if (access(path, X_OK) < 0)
		return bt_fail(bte_perm, errno, "%s: not executable", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bt_fail(bt_errno_to_bte(errno), errno, "%s", path);
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n != sizeof(magic) || memcmp(magic, "\177ELF", 4))
		return bt_fail(bte_format, ENOEXEC, "%s: not an ELF file", path);
	return 0;
}

/* @name as execvp would find it, into @path. */
static int program_find(const char *name, char *path, size_t size)
{
	const char *dirs = getenv("PATH"), *p, *end;
	char bad[PATH_MAX] = "";

	if (!*name)
		return bt_fail(bte_noent, ENOENT, "empty program name");
	if (strchr(name, '/')) {
		snprintf(path, size, "%s", name);
		return program_check(path);
	}
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (p = dirs; ; p = end + 1) {
		end = strchrnul(p, ':');
		snprintf(path, size, "%.*s%s%s", (int)(end - p), p,
			 end > p ? "/" : "", name);
		if (access(path, F_OK) == 0) {
			if (program_check(path) == 0)
				return 0;
			if (!bad[0])
				snprintf(bad, sizeof(bad), "%s", path);
		}
		if (!*end)
			break;
	}
	/* Found but unusable: that reason, as execvp would give it. */
	if (bad[0]) {
		snprintf(path, size, "%s", bad);
		return program_check(path);
	}
	return bt_fail(bte_noent, ENOENT, "%s: not found in PATH", name);
}

/* The child: wait until traced, then exec; exec's errno goes up @err. */
static void launch_child(int go, int err, const char *path,
			 char *const argv[])
{
	sigset_t none;
	char c;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (read(go, &c, 1) != 1)
		_exit(127);
	close(go);
	execv(path, argv);
	e = errno;
	if (write(err, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Kill and reap a child that never got going. */
static void launch_abort(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) == pid && !WIFEXITED(status) &&
	       !WIFSIGNALED(status))
		;
}

/* Seize @pid, let it exec, and wait for it at its first instruction. */
/*
 * Stopped @pid at its exec event is still inside execve: a first single
 * step would only finish the system call (its syscall-exit trap, with
 * nothing run), so GDB's first stepi would not move.  Finish it here: the
 * program is first seen at its first instruction with execve's return
 * value in rax, as gdbserver shows a program it starts.  A signal that
 * stops it meanwhile is sent again, to be judged at its next stop.
 */
static int launch_leave_exec(struct bt_target *t, pid_t pid)
{
	int status, sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0)
			return bt_fail(bte_ptrace, errno,
				       "ptrace(SINGLESTEP, %d)", pid);
		while (waitpid(pid, &status, __WALL) < 0)
			if (errno != EINTR)
				return bt_fail(bte_io, errno, "waitpid(%d)", pid);
		if (!WIFSTOPPED(status))
			return bt_fail(bte_exited, 0, "%d died at exec", pid);
		t->stats.stops++;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		sig = WSTOPSIG(status);
	}
	if (sig)
		syscall(SYS_tgkill, pid, pid, sig);
	return 0;
}

static int launch_parent(struct bt_target *t, pid_t pid, int go, int err)
{
	long opts = PTRACE_OPTS | PTRACE_O_EXITKILL;
	struct bt_thread *th;
	int status, e = 0, ret;
	ssize_t n;

	if (ptrace(PTRACE_SEIZE, pid, 0, opts) < 0)
		return bt_fail(bt_errno_to_bte(errno), errno,
			       "ptrace(SEIZE, %d)", pid);
	if (write(go, "g", 1) != 1)
		return bt_fail(bte_io, errno, "start %d", pid);
	do
		n = read(err, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(e))
		return bt_fail(bt_errno_to_bte(e), e, "exec");
	for (;;) {
		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return bt_fail(bte_io, errno, "waitpid(%d)", pid);
		}
		if (!WIFSTOPPED(status))
			return bt_fail(bte_exited, 0, "%d died before exec", pid);
		if (status >> 16 == PTRACE_EVENT_EXEC)
			break;
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	t->stats.stops++;
	ret = launch_leave_exec(t, pid);
	if (ret < 0)
		return ret;
	ret = bt_thread_add(t, pid, BT_TH_STOPPED, &th);
	if (ret < 0)
		return ret;
	th->why = BT_TS_EVENT;
	th->event = PTRACE_EVENT_EXEC;
	return 0;
}

int bt_target_launch(struct bt_target **target, const struct bt_target_opts *o,
		     char *const argv[])
{
	int go[2] = { -1, -1 }, err[2] = { -1, -1 }, ret;
	char path[PATH_MAX];
	struct bt_target *t;
	pid_t pid;

	if (!target || !argv || !argv[0])
		return bt_fail(bte_invalid, 0, "no program to launch");
	*target = NULL;
	ret = program_find(argv[0], path, sizeof(path));
	if (ret < 0)
		return ret;
	ret = bt_target_alloc(o, &t);
	if (ret < 0)
		return ret;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		ret = bt_fail(bte_io, errno, "pipe");
		goto err_pipes;
	}
	pid = fork();
	if (pid < 0) {
		ret = bt_fail(bt_errno_to_bte(errno), errno, "fork");
		goto err_pipes;
	}
	if (pid == 0)
		launch_child(go[0], err[1], path, argv);
	close(go[0]);
	close(err[1]);
	go[0] = err[1] = -1;
	t->pid = pid;
	t->launched = 1;
	t->traced = 1;
	ret = launch_parent(t, pid, go[1], err[0]);
	if (ret < 0) {
		launch_abort(pid);
		t->traced = 0;
		goto err_pipes;
	}
	close(go[1]);
	close(err[0]);
	*target = t;
	return 0;

err_pipes:
	if (go[0] >= 0) close(go[0]);
	if (go[1] >= 0) close(go[1]);
	if (err[0] >= 0) close(err[0]);
	if (err[1] >= 0) close(err[1]);
	bt_target_release(t);
	return ret;
}

/* Why may we not trace @pid: ptrace_scope, or credentials? */
static int attach_perm(pid_t pid, int e)
{
	char buf[64];
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope > 0 && geteuid() != 0)
		return bt_fail(bte_perm, e, "ptrace_scope is %d; see btrace doctor",
			       scope);
	if (scope == 3)
		return bt_fail(bte_perm, e, "ptrace_scope is 3: no attaching at all");
	if (bt_proc_status(pid, 0, "Uid", buf, sizeof(buf)) == 0)
		return bt_fail(bte_perm, e,
			       "credentials: process %d runs as uid %d, btrace as %d",
			       pid, atoi(buf), (int)geteuid());
	return bt_fail(bte_perm, e, "credentials");
}

static int attach_check(pid_t pid)
{
	char buf[64];
	int ret;

	ret = bt_proc_status(pid, 0, "State", buf, sizeof(buf));
	if (ret < 0)
		return bt_fail(bte_noent, ESRCH, "no such process");
	if (buf[0] == 'Z' || buf[0] == 'X')
		return bt_fail(bte_noent, ESRCH, "process %d is a zombie", pid);
	if (bt_proc_status(pid, 0, "TracerPid", buf, sizeof(buf)) == 0 &&
	    atoi(buf) != 0)
		return bt_fail(bte_busy, EBUSY, "already traced by process %d",
			       atoi(buf));
	if (bt_proc_status(pid, 0, "Tgid", buf, sizeof(buf)) == 0 &&
	    atoi(buf) != pid)
		return bt_fail(bte_invalid, 0,
			       "%d is a thread of process %d", pid, atoi(buf));
	return 0;
}

/*
 * Seize a thread other than the leader.  EPERM has two innocent causes
 * here.  The thread may be ours already: a seized thread that was inside
 * clone() had its child attached to us by PTRACE_O_TRACECLONE, and /proc
 * can list the child before its clone event reaches us.  Or the thread is
 * exiting: the kernel refuses those with EPERM while /proc still lists
 * them.  Returns 1 if seized now, 2 if already ours, 0 if gone, or -1
 * with errno for a real refusal.
 */
static int seize_other(const struct bt_target *t, pid_t tid)
{
	char buf[32];
	int tries;

	for (tries = 0; tries < 200; tries++) {
		if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_OPTS) == 0)
			return 1;
		if (errno == ESRCH)
			return 0;
		if (errno != EPERM)
			return -1;
		if (bt_proc_status(t->pid, tid, "TracerPid", buf, sizeof(buf)) < 0)
			return 0;
		if (atoi(buf) == t->tracer)
			return 2;
		/* Refused where the leader was not: exiting. */
		if (bt_thread_find(t, t->pid))
			return 0;
		usleep(1000);
	}
	errno = EPERM;
	return -1;
}

/* Seize one thread and ask it to stop. 1 if seized, 0 if gone. */
static int attach_thread(struct bt_target *t, pid_t tid)
{
	struct bt_thread *th;
	int ret;

	if (tid != t->pid) {
		ret = seize_other(t, tid);
		if (ret == 0)
			return 0;
		if (ret == 2) {
			/* Attached at clone: its first stop is on its way. */
			ret = bt_thread_add(t, tid, BT_TH_RUNNING, &th);
			if (ret < 0)
				return ret;
			th->fresh = 1;
			return 1;
		}
	} else {
		ret = ptrace(PTRACE_SEIZE, tid, 0, PTRACE_OPTS);
	}
	if (ret < 0) {
		if (errno == EPERM)
			return attach_perm(t->pid, errno);
		if (errno == ESRCH)
			return bt_fail(bte_noent, errno, "no such process");
		return bt_fail(bt_errno_to_bte(errno), errno,
			       "ptrace(SEIZE, %d)", tid);
	}
	ret = bt_thread_add(t, tid, BT_TH_RUNNING, &th);
	if (ret < 0)
		return ret;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0)
		th->interrupting = 1;
	return 1;
}

/* One pass over /proc/PID/task; returns how many threads were new. */
static int attach_pass(struct bt_target *t)
{
	char path[64];
	struct dirent *de;
	int n = 0, ret = 0;
	DIR *dir;
	pid_t tid;

	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	dir = opendir(path);
	if (!dir)
		return bt_fail(bte_noent, errno, "no such process");
	while (ret >= 0 && (de = readdir(dir))) {
		tid = atoi(de->d_name);
		if (tid <= 0 || bt_thread_find(t, tid))
			continue;
		ret = attach_thread(t, tid);
		n += ret > 0;
	}
	closedir(dir);
	return ret < 0 ? ret : n;
}

int bt_target_attach(struct bt_target **target, const struct bt_target_opts *o,
		     pid_t pid)
{
	struct bt_target *t;
	int ret;

	if (!target)
		return bt_fail(bte_invalid, 0, "bt_target_attach(NULL)");
	*target = NULL;
	if (pid <= 0)
		return bt_fail(bte_noent, ESRCH, "no such process");
	ret = attach_check(pid);
	if (ret < 0)
		return ret;
	ret = bt_target_alloc(o, &t);
	if (ret < 0)
		return ret;
	t->pid = pid;
	t->traced = 1;
	/* Threads created meanwhile by threads not yet seized: loop until a
	 * pass finds none (seized threads' children come through CLONE). */
	ret = attach_thread(t, pid);
	while (ret >= 0 && (ret = attach_pass(t)) > 0)
		;
	if (ret == 0)
		ret = bt_target_stop_all(t);
	if (ret == 0 && !bt_target_alive(t))
		ret = bt_fail(bte_noent, ESRCH, "process %d exited", pid);
	if (ret < 0) {
		bt_target_detach(t);
		bt_target_release(t);
		return ret;
	}
	*target = t;
	return 0;
}
