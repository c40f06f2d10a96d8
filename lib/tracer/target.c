// SPDX-License-Identifier: MIT
/*
 * Process control: launch and attach with ptrace, the threads, the stop
 * loop, signals, breakpoints, and letting go (finish, detach, kill).
 *
 * Every thread is attached with PTRACE_SEIZE (a launched child too), so
 * that PTRACE_INTERRUPT can stop a running thread and group-stops are told
 * apart from our own stops (PTRACE_EVENT_STOP with the stop signal) and
 * kept with PTRACE_LISTEN: a program stopped by SIGSTOP stays stopped.
 *
 * All waiting is done here, with waitpid(-1, __WALL): threads are driven
 * concurrently, so a thread blocked in a syscall waiting for another one
 * does not block the trace.  The backend decides how each thread resumes.
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
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"

/*
 * fork and vfork are always seen: a child we do not follow is let go
 * without our int3s in its copy of the memory.
 */
#define PTRACE_OPTS                                                        \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |   \
	 PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
	 PTRACE_O_TRACEVFORKDONE)

static int target_stop_all(struct bt_target *t);
static int flush_traps(struct bt_target *t);
static pid_t getppid_of(pid_t pid);
static int detach_quiet(struct bt_thread *th, int sig);
static int break_poke(struct bt_target *t, struct bt_break *b, int insert);
static int break_write(pid_t tid, uint64_t addr, uint8_t byte, uint8_t *old);

/* Threads */

static struct bt_thread *thread_find(const struct bt_target *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tid == tid &&
		    t->threads[i]->state != BT_TH_GONE)
			return t->threads[i];
	return NULL;
}

/* Any thread with @tid, the exited ones too (their rings stay). */
struct bt_thread *bt_thread_find_any(const struct bt_target *t, pid_t tid)
{
	struct bt_thread *th = thread_find(t, tid);
	size_t i;

	for (i = t->nthreads; !th && i > 0; i--)
		if (t->threads[i - 1]->tid == tid)
			th = t->threads[i - 1];
	return th;
}

static int proc_status(pid_t pid, pid_t tid, const char *key, char *buf,
		       size_t size);

/* The process of thread @tid: ours, or a child we follow. */
static pid_t thread_tgid(const struct bt_target *t, pid_t tid)
{
	char buf[32];

	if (tid == t->pid || proc_status(tid, 0, "Tgid", buf, sizeof(buf)) < 0)
		return t->pid;
	return atoi(buf);
}

static int thread_add(struct bt_target *t, pid_t tid, int state,
		      struct bt_thread **out)
{
	struct bt_thread *th, **grown;
	size_t size = t->opts.buffer_size;
	int ret;

	if (t->nthreads == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;

		grown = realloc(t->threads, cap * sizeof(*grown));
		if (!grown)
			return bt_fail(bte_nomem, errno, "thread table");
		t->threads = grown;
		t->cap = cap;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return bt_fail(bte_nomem, errno, "thread %d", tid);
	th->tid = tid;
	th->state = state;
	th->tgid = thread_tgid(t, tid);
	if (t->ops->ring_scale)
		size *= t->ops->ring_scale;
	th->ring = bt_ring_alloc(size);
	if (!th->ring) {
		free(th);
		return bt_fail(bte_nomem, errno, "ring of %zu bytes", size);
	}
	t->threads[t->nthreads++] = th;
	if (t->ops->thread_start) {
		ret = t->ops->thread_start(t, th);
		if (ret < 0)
			return ret;
	}
	*out = th;
	return 0;
}

static void thread_gone(struct bt_target *t, struct bt_thread *th)
{
	if (th->state == BT_TH_GONE)
		return;
	th->state = BT_TH_GONE;
	th->sig = 0;
	if (t->ops->thread_end)
		t->ops->thread_end(t, th);
}

static void thread_free(struct bt_thread *th)
{
	if (!th)
		return;
	bt_ring_free(th->ring);
	free(th);
}

/* Live threads of the process itself (not of followed children). */
static size_t main_alive(const struct bt_target *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE &&
		    t->threads[i]->tgid == t->pid)
			n++;
	return n;
}

static size_t threads_alive(const struct bt_target *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE)
			n++;
	return n;
}

/* A live thread to read memory and write breakpoints through. */
static struct bt_thread *thread_any(const struct bt_target *t, int stopped)
{
	struct bt_thread *th = thread_find(t, t->pid);
	size_t i;

	if (th && !th->exiting && (!stopped || th->state == BT_TH_STOPPED))
		return th;
	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		if (th->state == BT_TH_GONE || th->exiting)
			continue;
		if (!stopped || th->state == BT_TH_STOPPED)
			return th;
	}
	/* An exiting thread still has the memory until it is reaped. */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			return t->threads[i];
	return NULL;
}

struct bt_thread *bt_thread_find(const struct bt_target *t, pid_t tid)
{
	return thread_find(t, tid);
}

struct bt_thread *bt_thread_stopped(const struct bt_target *t)
{
	return thread_any(t, 1);
}

int bt_thread_regs(struct bt_thread *th, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, th->tid, 0, regs) < 0)
		return bt_fail(errno == ESRCH ? bte_exited : bte_ptrace, errno,
			       "ptrace(GETREGS, %d)", th->tid);
	return 0;
}

int bt_thread_pc(struct bt_thread *th, uint64_t *pc)
{
	struct user_regs_struct regs;
	int ret = bt_thread_regs(th, &regs);

	if (ret == 0)
		*pc = regs.rip;
	return ret;
}

int bt_thread_record(struct bt_target *t, struct bt_thread *th,
		     uint64_t from, uint64_t to, uint32_t ninsn, int kind,
		     int flags)
{
	struct bt_rec_branch rec;

	memset(&rec, 0, sizeof(rec));
	rec.from = from;
	rec.to = to;
	rec.ninsn = ninsn;
	rec.kind = kind;
	rec.flags = flags;
	t->stats.branches++;
	return bt_ring_write(th->ring, BT_REC_BRANCH, &rec.from,
			     sizeof(rec) - sizeof(rec.hdr));
}

int bt_thread_gap(struct bt_thread *th, uint64_t from, uint64_t to,
		  int reason)
{
	struct bt_rec_branch rec;

	memset(&rec, 0, sizeof(rec));
	rec.from = from;
	rec.to = to;
	rec.kind = BT_BR_GAP;
	rec.gap = (uint16_t)reason;
	return bt_ring_write(th->ring, BT_REC_BRANCH, &rec.from,
			     sizeof(rec) - sizeof(rec.hdr));
}

/* /proc */

/* The value of "@key:" in /proc/@pid[/task/@tid]/status into @buf. */
static int proc_status(pid_t pid, pid_t tid, const char *key, char *buf,
		       size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -bte_noent;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return bt_errno_to_bte(errno);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(buf, size, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		buf[strcspn(buf, "\n")] = '\0';
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static uint64_t proc_sigmask(pid_t pid, pid_t tid, const char *key)
{
	char buf[64];

	if (proc_status(pid, tid, key, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 16);
}

/* Signals */

static int sig_default_fatal(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return 0;
	default:
		return sig > 0 && sig < NSIG;
	}
}

static int sig_is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	       sig == SIGILL || sig == SIGTRAP;
}

enum sig_fate { SIG_PASS, SIG_HANDLED, SIG_FATAL };

/*
 * What @sig will do to the process, judged the way the kernel will: a
 * handler runs; an ignored or non-fatal default passes; otherwise it kills.
 * A fault the kernel raised while it is blocked or ignored kills too (the
 * kernel resets it to the default before delivering it).
 */
static int sig_fate(struct bt_target *t, struct bt_thread *th, int sig,
		    const siginfo_t *si)
{
	uint64_t bit = 1ull << (sig - 1);
	uint64_t caught = proc_sigmask(th->tid, 0, "SigCgt");
	uint64_t ignored = proc_sigmask(th->tid, 0, "SigIgn");
	uint64_t blocked = proc_sigmask(th->tid, 0, "SigBlk");

	if (sig_is_fault(sig) && si->si_code > 0 && si->si_code != SI_KERNEL &&
	    ((ignored | blocked) & bit))
		return SIG_FATAL;
	if (caught & bit)
		return SIG_HANDLED;
	if (ignored & bit)
		return SIG_PASS;
	return sig_default_fatal(sig) ? SIG_FATAL : SIG_PASS;
}

static struct bt_break *break_at(struct bt_target *t, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].number && t->breaks[i].inserted &&
		    t->breaks[i].addr == addr)
			return &t->breaks[i];
	return NULL;
}

static void stop_fill_pc(struct bt_thread *th, struct bt_stop *stop)
{
	stop->tid = th->tid;
	if (bt_thread_pc(th, &stop->pc) < 0)
		stop->pc = 0;
}

/* A SIGTRAP from one of our int3s: rewind to it and report. */
static int judge_break(struct bt_target *t, struct bt_thread *th,
		       struct bt_stop *stop)
{
	struct user_regs_struct regs;
	struct bt_break *b;

	if (th->si.si_code != SI_KERNEL || bt_thread_regs(th, &regs) < 0)
		return 0;
	b = break_at(t, regs.rip - 1);
	if (!b)
		return 0;
	regs.rip--;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)", th->tid);
	th->sig = 0;
	th->at_break = b->addr;
	stop->reason = BT_STOP_BREAK;
	stop->breakpoint = b->number;
	stop->tid = th->tid;
	stop->pc = b->addr;
	return 1;
}

/*
 * Judge the signal @th stopped with: 1 and *@stop filled if it is a stop
 * to report (a breakpoint, a fatal signal, Ctrl-C), 0 if the program
 * gets it on resume.
 */
static int judge_signal(struct bt_target *t, struct bt_thread *th,
			struct bt_stop *stop)
{
	int sig = th->sig, ret;

	th->sig_checked = 1;
	if (sig == SIGTRAP) {
		ret = judge_break(t, th, stop);
		if (ret)
			return ret;
	}
	if (sig > 0 && sig <= 64 && (t->stop_sigs & (1ull << (sig - 1))))
		goto report;	/* a debugger's: it decides what the program gets */
	switch (sig_fate(t, th, sig, &th->si)) {
	case SIG_HANDLED:
		if (t->ops->signal)
			t->ops->signal(t, th, sig);
		return 0;
	case SIG_PASS:
		return 0;
	}
report:
	th->stepping = 0;
	stop->reason = sig == SIGINT ? BT_STOP_INTERRUPT : BT_STOP_SIGNAL;
	stop->signal = sig;
	stop->si_code = th->si.si_code;
	if (sig_is_fault(sig) && th->si.si_code > 0)
		stop->addr = (uint64_t)th->si.si_addr;
	stop_fill_pc(th, stop);
	return 1;
}

/* Exit */

/* Every thread left is exiting: the process is. */
static int process_exiting(const struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE &&
		    t->threads[i]->tgid == t->pid && !t->threads[i]->exiting)
			return 0;
	return 1;
}

/*
 * The process is exiting and a thread sits at its PTRACE_EVENT_EXIT with
 * the memory still there: report it, from the thread that called exit.
 */
static int report_exit(struct bt_target *t, struct bt_thread *last,
		       struct bt_stop *stop)
{
	struct bt_thread *th = thread_find(t, t->exit_tid);

	if (!th || th->state != BT_TH_STOPPED)
		th = last;
	t->exit_reported = 1;
	if (WIFSIGNALED(t->exit_msg)) {
		stop->reason = BT_STOP_KILLED;
		stop->signal = WTERMSIG(t->exit_msg);
	} else {
		stop->reason = BT_STOP_EXIT;
		stop->status = WEXITSTATUS(t->exit_msg);
	}
	stop_fill_pc(th, stop);
	return 1;
}

/* The last thread is reaped: nothing left to inspect. */
static int report_gone(struct bt_target *t, pid_t tid, struct bt_stop *stop)
{
	int ws = t->have_wstatus ? t->wstatus : t->last_wstatus;

	t->gone = 1;
	t->exit_reported = 1;
	stop->tid = tid;
	if (WIFSIGNALED(ws)) {
		stop->reason = BT_STOP_KILLED;
		stop->signal = WTERMSIG(ws);
	} else {
		stop->reason = BT_STOP_EXIT;
		stop->status = WEXITSTATUS(ws);
	}
	return 1;
}

static int on_exit_event(struct bt_target *t, struct bt_thread *th, int quiet,
			 struct bt_stop *stop)
{
	struct user_regs_struct regs;
	unsigned long msg = 0;

	th->exiting = 1;
	th->why = BT_TS_EXIT;
	/* A followed child ends as it would: only our process's end stops. */
	if (th->tgid != t->pid)
		return quiet ? 0 : 2;
	ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
	if (!t->exit_tid || WIFEXITED(msg))
		t->exit_msg = msg;
	if (bt_thread_regs(th, &regs) == 0 &&
	    regs.orig_rax == SYS_exit_group && !t->exit_tid)
		t->exit_tid = th->tid;
	if (quiet)
		return 0;
	if (process_exiting(t) && !t->exit_reported)
		return report_exit(t, th, stop);
	/* exit_group's caller waits for the others, to be the one shown. */
	if (th->tid == t->exit_tid)
		return 0;
	return 2;
}

static int on_reaped(struct bt_target *t, pid_t tid, int status,
		     struct bt_stop *stop)
{
	struct bt_thread *th = thread_find(t, tid), *last = NULL;
	size_t i;

	if (!th)
		return 0;
	if (th->tgid != t->pid) {
		thread_gone(t, th);
		return 0;
	}
	t->last_wstatus = status;
	if (tid == t->pid) {
		t->wstatus = status;
		t->have_wstatus = 1;
	}
	thread_gone(t, th);
	if (!main_alive(t))
		return report_gone(t, tid, stop);
	if (!process_exiting(t) || t->exit_reported)
		return 0;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED &&
		    t->threads[i]->why == BT_TS_EXIT)
			last = t->threads[i];
	return last ? report_exit(t, last, stop) : 0;
}

/* Events */

static int on_new_thread(struct bt_target *t, pid_t tid)
{
	struct bt_thread *th;
	int ret;

	/*
	 * Known already, or even gone: the new thread can start, run and
	 * end before its parent's clone event is read.  (A later thread
	 * that reuses the tid is added by its own first stop, on_wait.)
	 */
	if (bt_thread_find_any(t, tid))
		return 0;
	ret = thread_add(t, tid, BT_TH_RUNNING, &th);
	if (ret < 0)
		return ret;
	th->fresh = 1;
	return 0;
}

/* execve in a thread other than the leader: it takes the leader's id. */
static void on_exec(struct bt_target *t, struct bt_thread *th)
{
	unsigned long former = th->tid;
	struct bt_thread *old;
	size_t i;

	ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &former);
	for (i = 0; i < t->nthreads; i++) {
		old = t->threads[i];
		if (old == th || old->state == BT_TH_GONE)
			continue;
		if (old->tid == (pid_t)former) {
			/* The stop came under the new id for the old thread. */
			old->tid = th->tid;
			thread_gone(t, th);
			old->state = BT_TH_STOPPED;
			old->why = BT_TS_EVENT;
			return;
		}
		thread_gone(t, old);
	}
}

/*
 * A child we do not follow: at its first stop, take our int3s out of its
 * copy of the memory and let it go.  A vfork child shares the memory of
 * the parent, which it leaves alone until exec or exit: nothing to undo.
 */
static void fork_release(struct bt_target *t, pid_t child, int shared)
{
	struct bt_thread *th = thread_find(t, child);
	int status;
	size_t i;

	if (th) {
		/* Its first stop came before the parent's event. */
		thread_gone(t, th);
		th->tid = -th->tid;
	} else {
		while (waitpid(child, &status, __WALL) < 0 && errno == EINTR)
			;
	}
	for (i = 0; i < t->nbreaks && !shared; i++) {
		const struct bt_break *b = &t->breaks[i];
		long word;

		if (!b->number || !b->inserted)
			continue;
		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, child, b->addr, 0);
		if (errno)
			continue;
		word = (word & ~0xffL) | b->orig;
		ptrace(PTRACE_POKEDATA, child, b->addr, word);
	}
	if (t->ops->fork)
		t->ops->fork(t, child, shared);
	ptrace(PTRACE_DETACH, child, 0, 0);
}

static int on_event(struct bt_target *t, struct bt_thread *th, int event)
{
	unsigned long msg = 0;

	th->event = event;
	th->why = BT_TS_EVENT;
	switch (event) {
	case PTRACE_EVENT_CLONE:
		ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
		return on_new_thread(t, msg);
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
		if (t->opts.follow_fork)
			return on_new_thread(t, msg);
		fork_release(t, msg, event == PTRACE_EVENT_VFORK);
		return 0;
	case PTRACE_EVENT_EXEC:
		on_exec(t, th);
		return 0;
	default:
		return 0;
	}
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/*
 * The step bt_target_resume() asked of @th completed (the backend has
 * recorded it).  Reported, unless all threads are only being stopped: a
 * step that completes then is not asked for again.
 */
static int step_done(struct bt_target *t, struct bt_thread *th, int quiet,
		     struct bt_stop *stop)
{
	th->stepping = 0;
	if (quiet)
		return 0;
	stop->reason = BT_STOP_STEP;
	stop_fill_pc(th, stop);
	return 1;
}

/*
 * A ptrace-stop of known thread @th.  Returns 1 with *@stop filled for a
 * stop to report, 2 if @th is to be resumed, 0 if it stays stopped (as
 * everything does when @quiet: only collecting stops).
 */
static int on_stopped(struct bt_target *t, struct bt_thread *th, int status,
		      int quiet, struct bt_stop *stop)
{
	int event = status >> 16, sig = WSTOPSIG(status), ret;

	th->state = BT_TH_STOPPED;
	th->why = BT_TS_NONE;
	if (th->fresh || event == PTRACE_EVENT_STOP) {
		th->fresh = 0;
		th->interrupting = 0;
		th->why = BT_TS_INTERRUPT;
		if (event == PTRACE_EVENT_STOP && is_stop_signal(sig)) {
			th->why = BT_TS_GROUP;
			th->group_sig = sig;
		}
		return quiet ? 0 : 2;
	}
	if (event == PTRACE_EVENT_EXIT)
		return on_exit_event(t, th, quiet, stop);
	if (event) {
		ret = on_event(t, th, event);
		return ret < 0 ? ret : (quiet ? 0 : 2);
	}
	if (sig == (SIGTRAP | 0x80))	/* a syscall stop: not ours to see */
		return quiet ? 0 : 2;
	if (ptrace(PTRACE_GETSIGINFO, th->tid, 0, &th->si) < 0)
		memset(&th->si, 0, sizeof(th->si));
	if (sig == SIGTRAP && t->ops->trap && t->ops->trap(t, th, &th->si)) {
		th->why = BT_TS_TRAP;
		if (th->stepping)
			return step_done(t, th, quiet, stop);
		return quiet ? 0 : 2;
	}
	/*
	 * A trap of the kernel's single-stepping no backend claimed: a step
	 * of btrace's (only a tracer steps), the backend's own that the
	 * stop-all cut short, or one where the backend leaves such traps
	 * alone.  Never the program's signal (as let_go_signal()).
	 */
	if (sig == SIGTRAP &&
	    (th->si.si_code == TRAP_TRACE || th->si.si_code == TRAP_BRKPT)) {
		th->why = BT_TS_TRAP;
		if (th->stepping)
			return step_done(t, th, quiet, stop);
		return quiet ? 0 : 2;
	}
	if (t->ops->signalled && t->ops->signalled(t, th)) {
		th->why = BT_TS_TRAP;	/* the backend's own fault, handled */
		return quiet ? 0 : 2;
	}
	th->why = BT_TS_SIGNAL;
	th->sig = sig;
	th->sig_checked = 0;
	if (quiet)
		return 0;
	return judge_signal(t, th, stop) ? 1 : 2;
}

/* One waitpid report, for thread @tid.  Returns as on_stopped(). */
static int on_wait(struct bt_target *t, pid_t tid, int status, int quiet,
		   struct bt_stop *stop)
{
	struct bt_thread *th;
	int ret;

	if (WIFEXITED(status) || WIFSIGNALED(status))
		return on_reaped(t, tid, status, stop);
	if (!WIFSTOPPED(status))
		return 0;
	t->stats.stops++;
	th = thread_find(t, tid);
	if (!th) {
		/* A new thread whose first stop beat its parent's event. */
		ret = thread_add(t, tid, BT_TH_RUNNING, &th);
		if (ret < 0)
			return ret;
		th->fresh = 1;
		if (th->tgid != t->pid && !t->opts.follow_fork) {
			/* A fork child to let go at its parent's event. */
			th->state = BT_TH_STOPPED;
			th->fresh = 0;
			th->parked = 1;
			return 0;
		}
	}
	return on_stopped(t, th, status, quiet, stop);
}

/* Resuming */

static int ptrace_resume_err(struct bt_thread *th, const char *what)
{
	/* Killed meanwhile: its exit is reported by waitpid. */
	if (errno == ESRCH) {
		th->state = BT_TH_RUNNING;
		return 0;
	}
	return bt_fail(bte_ptrace, errno, "ptrace(%s, %d)", what, th->tid);
}

static int thread_resume_plain(struct bt_target *t, struct bt_thread *th)
{
	int sig = th->sig, ret;

	th->sig = 0;
	th->sig_checked = 0;
	ret = t->ops->resume(t, th, sig);
	if (ret < 0 && bt_errno() != ESRCH)
		return ret;
	th->state = BT_TH_RUNNING;
	return 0;
}

/*
 * One instruction of @th (bt_target_resume()), through the backend as a
 * step over a breakpoint is.  After an event stop inside the stepped
 * instruction (a clone or exec system call) the step is issued again: the
 * backend still waits for its trap.
 */
static int thread_step(struct bt_target *t, struct bt_thread *th)
{
	int sig = th->sig, ret = 0;

	th->sig = 0;
	th->sig_checked = 0;
	if (th->stepping == 2 && th->why == BT_TS_EVENT) {
		if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, 0) < 0)
			return ptrace_resume_err(th, "SINGLESTEP");
		th->state = BT_TH_RUNNING;
		return 0;
	}
	th->stepping = 2;	/* issued */
	if (t->ops->step)
		ret = t->ops->step(t, th, sig);
	else if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, sig) < 0)
		return ptrace_resume_err(th, "SINGLESTEP");
	if (ret < 0 && bt_errno() != ESRCH)
		return ret;
	th->state = BT_TH_RUNNING;
	return 0;
}

static int thread_resume(struct bt_target *t, struct bt_thread *th)
{
	if (th->state != BT_TH_STOPPED || th->parked)
		return 0;
	if (th->hold && th->why != BT_TS_EXIT)
		return 0;
	if (th->why == BT_TS_EXIT) {
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
			return ptrace_resume_err(th, "CONT");
		th->state = BT_TH_RUNNING;
		return 0;
	}
	if (th->why == BT_TS_GROUP) {
		if (ptrace(PTRACE_LISTEN, th->tid, 0, 0) < 0)
			return ptrace_resume_err(th, "LISTEN");
		th->state = BT_TH_LISTENING;
		return 0;
	}
	if (th->stepping)
		return thread_step(t, th);
	return thread_resume_plain(t, th);
}

static int target_wait(struct bt_target *t, pid_t tid, pid_t *who, int *status)
{
	pid_t r;

	r = waitpid(tid, status, __WALL);
	if (r < 0) {
		if (errno == EINTR)
			return 0;
		return bt_fail(errno == ECHILD ? bte_exited : bte_io, errno,
			       "waitpid(%d)", tid);
	}
	*who = r;
	return 1;
}

/*
 * Step @th over the breakpoint it stopped at: the int3 out, one step of
 * @th alone, the int3 back.  What that step reports is collected quietly.
 */
static int step_over(struct bt_target *t, struct bt_thread *th)
{
	struct bt_break *b = break_at(t, th->at_break);
	struct bt_stop ignored;
	int sig = th->sig, status, ret, child;
	pid_t who = 0;

	th->at_break = 0;
	if (!b)
		return 0;
	/* A followed child steps over in its own copy of the memory. */
	child = th->tgid != t->pid;
	ret = child ? break_write(th->tid, b->addr, b->orig, NULL) :
		      break_poke(t, b, 0);
	if (ret < 0)
		return ret;
	th->sig = 0;
	if (t->ops->step)
		ret = t->ops->step(t, th, sig);
	else if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, sig) < 0)
		ret = bt_fail(bte_ptrace, errno, "ptrace(SINGLESTEP, %d)",
			      th->tid);
	if (ret == 0) {
		th->state = BT_TH_RUNNING;
		while ((ret = target_wait(t, th->tid, &who, &status)) == 0)
			;
		if (ret > 0)
			ret = on_wait(t, who, status, 1, &ignored);
	}
	if (child && th->state == BT_TH_STOPPED)
		break_write(th->tid, b->addr, 0xcc, NULL);
	else if (!child && thread_any(t, 1))
		break_poke(t, b, 1);
	return ret < 0 ? ret : 0;
}

/*
 * One single step of stopped thread @th, waited for here.  Returns 0 when
 * it trapped (its siginfo in *@si), the signal number when another signal
 * (or a SIGTRAP sent, not the kernel's) stopped it first (dequeued and not
 * delivered: the caller decides), or
 * -bte_exited if it ended (the report is target.c's, as in
 * bt_thread_syscall).  Event stops on the way are stepped past.
 */
int bt_thread_step(struct bt_target *t, struct bt_thread *th, siginfo_t *si)
{
	int status, ret, i;
	pid_t who;

	/*
	 * A PTRACE_INTERRUPT still outstanding (the thread stopped for
	 * something else first) stops it before it runs anything: that
	 * stop is taken here, and the step issued again.
	 */
	for (i = 0; i < 16; i++) {
		if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, 0) < 0)
			return bt_fail(bte_exited, errno,
				       "ptrace(SINGLESTEP, %d)", th->tid);
		while ((ret = target_wait(t, th->tid, &who, &status)) == 0)
			;
		if (ret < 0)
			return ret;
		t->stats.stops++;
		if (!WIFSTOPPED(status) ||
		    (status >> 16) == PTRACE_EVENT_EXIT) {
			struct bt_stop ignored;

			on_wait(t, th->tid, status, 1, &ignored);
			return bt_fail(bte_exited, ESRCH, "thread %d ended",
				       th->tid);
		}
		if (status >> 16) {
			if ((status >> 16) == PTRACE_EVENT_STOP)
				th->interrupting = 0;
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, th->tid, 0, si) < 0)
			memset(si, 0, sizeof(*si));
		/* a trap of the kernel's (si_code > 0), not one sent */
		if (WSTOPSIG(status) == SIGTRAP && si->si_code > 0)
			return 0;
		return WSTOPSIG(status);
	}
	return bt_fail(bte_internal, 0, "step of %d did not complete", th->tid);
}

int bt_thread_syscall(struct bt_target *t, struct bt_thread *th,
		      uint64_t insn, long nr, const uint64_t args[6],
		      int64_t *result)
{
	struct user_regs_struct saved, r;
	uint64_t resend = 0;
	int i, ret = 0, sig;

	if (th->interrupting)
		return bt_fail(bte_busy, 0, "thread %d is being interrupted",
			       th->tid);
	ret = bt_thread_regs(th, &saved);
	if (ret < 0)
		return ret;
	r = saved;
	r.rip = insn;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &r) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)", th->tid);
	/* Bounded: each round is a stop of this thread alone. */
	for (i = 0; i < 64; i++) {
		siginfo_t si;

		sig = bt_thread_step(t, th, &si);
		if (sig == -bte_exited)
			return sig;	/* dying: target.c took the report */
		if (sig < 0) {
			ret = sig;
			goto out;
		}
		if (sig > 0 && sig <= 64)
			resend |= 1ull << (sig - 1);
		if (ptrace(PTRACE_GETREGS, th->tid, 0, &r) == 0 &&
		    r.rip == insn + 2) {
			*result = (int64_t)r.rax;
			goto out;
		}
	}
	ret = bt_fail(bte_internal, 0, "syscall %ld in %d did not complete",
		      nr, th->tid);
out:
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	/* Signals that came meanwhile are judged at their next stop. */
	for (sig = 1; sig <= 64; sig++)
		if (resend & (1ull << (sig - 1)))
			syscall(SYS_tgkill, th->tgid ? th->tgid : t->pid,
				th->tid, sig);
	return ret;
}

/* Stopping everything */

static int threads_pending(const struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		const struct bt_thread *th = t->threads[i];

		if (th->state == BT_TH_LISTENING ||
		    (th->state == BT_TH_RUNNING && !th->exiting))
			return 1;
	}
	return 0;
}

/*
 * Bring every thread to a ptrace-stop.  What they report on the way is
 * collected, not acted on: signals wait for the next bt_target_cont().
 */
static int target_stop_all(struct bt_target *t)
{
	struct bt_stop ignored;
	int status, ret;
	size_t i;
	pid_t who = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->fresh || th->exiting)
			continue;
		if (th->state == BT_TH_RUNNING || th->state == BT_TH_LISTENING)
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0)
				th->interrupting = 1;
	}
	while (threads_pending(t)) {
		ret = target_wait(t, -1, &who, &status);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		ret = on_wait(t, who, status, 1, &ignored);
		if (ret < 0)
			return ret;
	}
	return flush_traps(t);
}

/*
 * A thread stopped by PTRACE_INTERRUPT may have the SIGTRAP of a step that
 * completed just before still queued (job control traps come before
 * signals).  Left there it would reach the program after a detach: let it
 * come out now, which stops again before any instruction runs.
 */
static int flush_traps(struct bt_target *t)
{
	struct bt_stop ignored;
	int status, ret;
	size_t i;
	pid_t who = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->state != BT_TH_STOPPED || th->why != BT_TS_INTERRUPT ||
		    !(proc_sigmask(th->tid, 0, "SigPnd") &
		      (1ull << (SIGTRAP - 1))))
			continue;
		ret = thread_resume_plain(t, th);
		while (ret == 0 &&
		       (ret = target_wait(t, th->tid, &who, &status)) == 0)
			;
		if (ret > 0)
			ret = on_wait(t, who, status, 1, &ignored);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The thread to show for an interrupt: the main one if it is there. */
static struct bt_thread *thread_main(struct bt_target *t)
{
	struct bt_thread *th = thread_find(t, t->pid);
	size_t i;

	if (th && th->state == BT_TH_STOPPED)
		return th;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			return t->threads[i];
	return th;
}

/* The cont loop */

/* Stops collected while stopping everything, judged now. */
static int cont_pending(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th;
	size_t i;
	int ret;

	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		/* a thread held keeps what it has to report for later */
		if (th->state != BT_TH_STOPPED || th->hold)
			continue;
		if (th->at_break) {
			int stepping = th->stepping;

			ret = step_over(t, th);
			if (ret < 0)
				return ret;
			/* that instruction was the step asked for */
			if (stepping && !th->stepping &&
			    th->state == BT_TH_STOPPED && th->why == BT_TS_TRAP) {
				stop->reason = BT_STOP_STEP;
				stop_fill_pc(th, stop);
				return 1;
			}
		}
		if (th->why == BT_TS_SIGNAL && th->sig && !th->sig_checked &&
		    judge_signal(t, th, stop))
			return 1;
	}
	if (!t->exit_reported && threads_alive(t) && process_exiting(t)) {
		for (i = 0; i < t->nthreads; i++)
			if (t->threads[i]->state == BT_TH_STOPPED &&
			    t->threads[i]->why == BT_TS_EXIT)
				return report_exit(t, t->threads[i], stop);
	}
	return 0;
}

static int cont_resume_all(struct bt_target *t)
{
	size_t i;
	int ret;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		/* Ctrl-C stopped it; going on means the program goes on. */
		if (!t->planned && th->sig == SIGINT &&
		    t->last.reason == BT_STOP_INTERRUPT &&
		    t->last.tid == th->tid)
			th->sig = 0;
		/* exit_group's caller holds until the others are gone. */
		if (th->why == BT_TS_EXIT && th->tid == t->exit_tid &&
		    !t->exit_reported)
			continue;
		ret = thread_resume(t, th);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int cont_loop(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th;
	int status, ret;
	pid_t who = 0;

	for (;;) {
		if (t->interrupt) {
			t->interrupt = 0;
			stop->reason = BT_STOP_INTERRUPT;
			return 1;
		}
		ret = target_wait(t, -1, &who, &status);
		if (ret <= 0) {
			if (ret < 0 && !threads_alive(t))
				return report_gone(t, who, stop);
			if (ret < 0)
				return ret;
			continue;
		}
		ret = on_wait(t, who, status, 0, stop);
		if (ret < 0)
			return ret;
		if (ret == 1)
			return 1;
		if (ret == 2) {
			th = thread_find(t, who);
			if (th) {
				ret = thread_resume(t, th);
				if (ret < 0)
					return ret;
			}
		}
		if (t->gone)
			return 1;
	}
}

/* One run: resume what may run, wait for the stop, stop everything. */
static int target_run(struct bt_target *t, struct bt_stop *stop)
{
	struct bt_thread *th;
	int ret;

	ret = cont_pending(t, stop);
	if (ret == 0)
		ret = cont_resume_all(t);
	if (ret == 0)
		ret = cont_loop(t, stop);
	if (ret < 0)
		return ret;
	if (!t->gone) {
		ret = target_stop_all(t);
		if (ret < 0)
			return ret;
		if (t->ops->stopped)
			t->ops->stopped(t);
	}
	/*
	 * An interrupt asked for while this call ran is answered by the stop
	 * it returns, whatever its reason: latched, it would make the next
	 * call stop at once.  One Ctrl-C also comes both ways (btrace's and
	 * the program's SIGINT); this answers both.
	 */
	t->interrupt = 0;
	if (stop->reason == BT_STOP_INTERRUPT && !stop->signal) {
		th = thread_main(t);
		if (th)
			stop_fill_pc(th, stop);
	}
	t->last = *stop;
	return 0;
}

int bt_target_cont(struct bt_target *t, struct bt_stop *stop)
{
	if (!t || !stop)
		return bt_fail(bte_invalid, 0, "bt_target_cont(NULL)");
	memset(stop, 0, sizeof(*stop));
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	return target_run(t, stop);
}

void bt_target_stop_signals(struct bt_target *t, uint64_t mask)
{
	if (t)
		t->stop_sigs = mask;
}

static const struct bt_resume *resume_find(const struct bt_resume *r,
					   size_t n, pid_t tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].tid == tid || r[i].tid == 0)
			return &r[i];
	return NULL;
}

/*
 * Each thread's part in this run.  A signal reported before is replaced
 * by the one the caller gives; one not judged yet stays, to be reported
 * first.  A signal that runs a handler is announced to the backend, as
 * judge_signal() does for bt_target_cont().
 */
static int resume_plan(struct bt_target *t, const struct bt_resume *r,
		       size_t n)
{
	size_t i, runs = 0;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];
		const struct bt_resume *a = resume_find(r, n, th->tid);

		th->stepping = 0;
		th->hold = !a || a->action == BT_RESUME_STOP;
		if (th->state != BT_TH_STOPPED || th->hold)
			continue;
		runs++;
		th->stepping = a->action == BT_RESUME_STEP;
		if (th->sig && !th->sig_checked)
			continue;
		if (a->signal < 0 || a->signal >= NSIG)
			return bt_fail(bte_invalid, 0, "bad signal %d", a->signal);
		if (a->signal != th->sig)
			memset(&th->si, 0, sizeof(th->si));
		th->sig = a->signal;
		th->sig_checked = th->sig != 0;
		if (th->sig && th->why != BT_TS_EXIT &&
		    sig_fate(t, th, th->sig, &th->si) == SIG_HANDLED &&
		    t->ops->signal)
			t->ops->signal(t, th, th->sig);
	}
	return runs ? 0 : bt_fail(bte_invalid, 0, "no thread to resume");
}

static void resume_unplan(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		t->threads[i]->hold = t->threads[i]->stepping = 0;
	t->planned = 0;
}

int bt_target_resume(struct bt_target *t, const struct bt_resume *r, size_t n,
		     struct bt_stop *stop)
{
	int ret;

	if (!t || !stop || (!r && n))
		return bt_fail(bte_invalid, 0, "bt_target_resume(NULL)");
	memset(stop, 0, sizeof(*stop));
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	ret = resume_plan(t, r, n);
	if (ret == 0) {
		t->planned = 1;
		ret = target_run(t, stop);
	}
	resume_unplan(t);
	return ret;
}

void bt_target_interrupt(struct bt_target *t)
{
	int saved = errno;

	if (!t)
		return;
	t->interrupt = 1;
	/*
	 * Wake a waitpid blocked on threads running free.  Only the tracer
	 * thread may do this; from elsewhere the flag is seen at the next stop.
	 */
	if (syscall(SYS_gettid) == t->tracer)
		ptrace(PTRACE_INTERRUPT, t->pid, 0, 0);
	errno = saved;
}

/* Memory */

/* Read through @tid, split at the page so that a short read stays short. */
static ssize_t mem_read_raw(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	uint64_t page = 4096, split = ((addr / page) + 1) * page - addr;
	struct iovec local[2], remote[2];
	int n = 1;
	ssize_t r;

	local[0].iov_base = buf;
	local[0].iov_len = len;
	remote[0].iov_base = (void *)addr;
	remote[0].iov_len = len;
	if (split < len) {
		local[0].iov_len = remote[0].iov_len = split;
		local[1].iov_base = (uint8_t *)buf + split;
		local[1].iov_len = remote[1].iov_len = len - split;
		remote[1].iov_base = (void *)(addr + split);
		n = 2;
	}
	r = process_vm_readv(tid, local, n, remote, n, 0);
	if (r < 0)
		return bt_fail(errno == ESRCH ? bte_exited : bte_io, errno,
			       "read memory of %d at 0x%llx", tid,
			       (unsigned long long)addr);
	return r;
}

ssize_t bt_thread_mem(struct bt_target *t, struct bt_thread *th,
		      uint64_t addr, void *buf, size_t len)
{
	ssize_t n;
	size_t i;

	n = mem_read_raw(th->tid, addr, buf, len);
	if (n <= 0)
		return n;
	for (i = 0; i < t->nbreaks; i++) {
		const struct bt_break *b = &t->breaks[i];

		if (b->number && b->inserted && b->addr >= addr &&
		    b->addr < addr + n)
			((uint8_t *)buf)[b->addr - addr] = b->orig;
	}
	if (t->ops->hide)
		t->ops->hide(t, addr, buf, (size_t)n);
	return n;
}

ssize_t bt_target_mem(struct bt_target *t, uint64_t addr, void *buf,
		      size_t len)
{
	struct bt_thread *th = thread_any(t, 0);

	if (!th)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	return bt_thread_mem(t, th, addr, buf, len);
}

ssize_t bt_target_read(struct bt_target *t, uint64_t addr, void *buf,
		       size_t len)
{
	if (!t || (!buf && len))
		return bt_fail(bte_invalid, 0, "bt_target_read(NULL)");
	if (!len)
		return 0;
	return bt_target_mem(t, addr, buf, len);
}

/* Breakpoints */

/* Write @byte at @addr of @tid's memory. */
static int break_write(pid_t tid, uint64_t addr, uint8_t byte, uint8_t *old)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, tid, addr, 0);
	if (errno)
		return bt_fail(bte_io, errno, "read 0x%llx",
			       (unsigned long long)addr);
	if (old)
		*old = word & 0xff;
	word = (word & ~0xffL) | byte;
	if (ptrace(PTRACE_POKEDATA, tid, addr, word) < 0)
		return bt_fail(bte_io, errno, "write 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

/*
 * Followed children got our int3s in their copy of the memory at fork:
 * write @b's byte (@insert: the int3) there too, through a stopped thread
 * of each.
 */
static void break_children(struct bt_target *t, const struct bt_break *b,
			   int insert)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		const struct bt_thread *th = t->threads[i];

		if (th->tgid != t->pid && th->state == BT_TH_STOPPED)
			break_write(th->tid, b->addr, insert ? 0xcc : b->orig,
				    NULL);
	}
}

/* Put the int3 in (@insert) or the original byte back. */
static int break_poke(struct bt_target *t, struct bt_break *b, int insert)
{
	struct bt_thread *th = thread_any(t, 1);
	uint8_t orig;
	int ret;

	if (!th)
		return bt_fail(bte_exited, 0, "no stopped thread of %d", t->pid);
	ret = break_write(th->tid, b->addr, insert ? 0xcc : b->orig, &orig);
	if (ret < 0)
		return ret;
	if (insert && !b->inserted)
		b->orig = orig;
	if (!insert)
		break_children(t, b, 0);
	b->inserted = insert;
	return 0;
}

int bt_target_break_insert(struct bt_target *t, uint64_t addr)
{
	struct bt_break *b = NULL, *grown;
	size_t i;
	int ret;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_break_insert(NULL)");
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d is not traced", t->pid);
	if (break_at(t, addr))
		return break_at(t, addr)->number;
	for (i = 0; i < t->nbreaks && !b; i++)
		if (!t->breaks[i].number)
			b = &t->breaks[i];
	if (!b) {
		grown = realloc(t->breaks, (t->nbreaks + 1) * sizeof(*grown));
		if (!grown)
			return bt_fail(bte_nomem, errno, "breakpoints");
		t->breaks = grown;
		b = &t->breaks[t->nbreaks++];
	}
	memset(b, 0, sizeof(*b));
	b->addr = addr;
	ret = break_poke(t, b, 1);
	if (ret < 0)
		return ret;
	b->number = ++t->next_break;
	return b->number;
}

/*
 * @th hit the int3 at @addr while everything was being stopped, and the
 * hit waits to be judged: with the breakpoint gone it never happened (the
 * thread back at the instruction, no signal), as gdbserver does it.
 */
static void break_unhit(struct bt_thread *th, uint64_t addr)
{
	struct user_regs_struct regs;

	if (th->state != BT_TH_STOPPED || th->why != BT_TS_SIGNAL ||
	    th->sig != SIGTRAP || th->sig_checked ||
	    th->si.si_code != SI_KERNEL || bt_thread_regs(th, &regs) < 0 ||
	    regs.rip - 1 != addr)
		return;
	regs.rip--;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0)
		return;
	th->sig = 0;
	th->sig_checked = 1;
}

int bt_target_break_remove(struct bt_target *t, int number)
{
	struct bt_break *b = NULL;
	size_t i;
	int ret = 0;

	if (!t || number <= 0)
		return bt_fail(bte_invalid, 0, "bad breakpoint %d", number);
	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].number == number)
			b = &t->breaks[i];
	if (!b)
		return bt_fail(bte_noent, 0, "no breakpoint %d", number);
	if (b->inserted && t->traced && !t->gone)
		ret = break_poke(t, b, 0);
	for (i = 0; i < t->nthreads; i++) {
		if (t->threads[i]->at_break == b->addr)
			t->threads[i]->at_break = 0;
		break_unhit(t->threads[i], b->addr);
	}
	b->number = 0;
	b->inserted = 0;
	return ret;
}

/* Every int3 out: the code as the program wrote it. */
static int breaks_remove_all(struct bt_target *t)
{
	int ret = 0, r;
	size_t i;

	for (i = 0; i < t->nbreaks; i++) {
		if (!t->breaks[i].number)
			continue;
		r = bt_target_break_remove(t, t->breaks[i].number);
		if (r < 0 && !ret)
			ret = r;
	}
	if (t->ops->release)
		t->ops->release(t);
	return ret;
}

/* Creating a target */

static int target_alloc(const struct bt_target_opts *o, struct bt_target **out)
{
	struct bt_target *t;
	int ret;

	if (o && o->size && o->size < offsetof(struct bt_target_opts, only))
		return bt_fail(bte_invalid, 0, "bt_target_opts too small");
	t = calloc(1, sizeof(*t));
	if (!t)
		return bt_fail(bte_nomem, errno, "bt_target");
	if (o)
		memcpy(&t->opts, o, o->size && o->size < sizeof(*o) ?
					    o->size : sizeof(*o));
	t->opts.size = sizeof(t->opts);
	if (!t->opts.buffer_size)
		t->opts.buffer_size = BT_DEFAULT_BUFFER_SIZE;
	if (t->opts.buffer_size < 64 ||
	    (t->opts.buffer_size & (t->opts.buffer_size - 1))) {
		ret = bt_fail(bte_invalid, 0,
			      "buffer size %zu is not a power of two",
			      t->opts.buffer_size);
		free(t);
		return ret;
	}
	t->tracer = syscall(SYS_gettid);
	ret = bt_backend_select(&t->opts, &t->ops);
	if (ret == 0)
		ret = bt_disasm_alloc(&t->dis);
	if (ret == 0 && t->ops->init)
		ret = t->ops->init(t);
	if (ret < 0) {
		bt_disasm_free(t->dis);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

static void target_release(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		thread_gone(t, t->threads[i]);
		thread_free(t->threads[i]);
	}
	if (t->ops->fini)
		t->ops->fini(t);
	bt_disasm_free(t->dis);
	free(t->threads);
	free(t->breaks);
	free(t);
}

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

/* Launch */

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
	ret = thread_add(t, pid, BT_TH_STOPPED, &th);
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
	ret = target_alloc(o, &t);
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
	target_release(t);
	return ret;
}

/* Attach */

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
	if (proc_status(pid, 0, "Uid", buf, sizeof(buf)) == 0)
		return bt_fail(bte_perm, e,
			       "credentials: process %d runs as uid %d, btrace as %d",
			       pid, atoi(buf), (int)geteuid());
	return bt_fail(bte_perm, e, "credentials");
}

static int attach_check(pid_t pid)
{
	char buf[64];
	int ret;

	ret = proc_status(pid, 0, "State", buf, sizeof(buf));
	if (ret < 0)
		return bt_fail(bte_noent, ESRCH, "no such process");
	if (buf[0] == 'Z' || buf[0] == 'X')
		return bt_fail(bte_noent, ESRCH, "process %d is a zombie", pid);
	if (proc_status(pid, 0, "TracerPid", buf, sizeof(buf)) == 0 &&
	    atoi(buf) != 0)
		return bt_fail(bte_busy, EBUSY, "already traced by process %d",
			       atoi(buf));
	if (proc_status(pid, 0, "Tgid", buf, sizeof(buf)) == 0 &&
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
		if (proc_status(t->pid, tid, "TracerPid", buf, sizeof(buf)) < 0)
			return 0;
		if (atoi(buf) == t->tracer)
			return 2;
		/* Refused where the leader was not: exiting. */
		if (thread_find(t, t->pid))
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
			ret = thread_add(t, tid, BT_TH_RUNNING, &th);
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
	ret = thread_add(t, tid, BT_TH_RUNNING, &th);
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
		if (tid <= 0 || thread_find(t, tid))
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
	ret = target_alloc(o, &t);
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
		ret = target_stop_all(t);
	if (ret == 0 && !threads_alive(t))
		ret = bt_fail(bte_noent, ESRCH, "process %d exited", pid);
	if (ret < 0) {
		bt_target_detach(t);
		target_release(t);
		return ret;
	}
	*target = t;
	return 0;
}

/* Letting go */

/* Reap threads that were let go at their exit: no zombie left behind. */
static void reap_dying(struct bt_target *t)
{
	int status;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->state != BT_TH_RUNNING || !th->exiting)
			continue;
		/* A leader we also forked is for our caller's waitpid. */
		if (th->tid == t->pid && getppid_of(t->pid) == getpid())
			continue;
		if (waitpid(th->tid, &status, __WALL | WNOHANG) == th->tid &&
		    (WIFEXITED(status) || WIFSIGNALED(status)))
			thread_gone(t, th);
	}
}

/*
 * A thread that hit one of our int3s while everything was being stopped
 * holds its SIGTRAP, not yet judged: it is ours, not the program's.
 * Rewind it before the int3s go, so that nothing of btrace is delivered.
 */
static void settle_breaks(struct bt_target *t)
{
	struct bt_stop ignored;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (th->state == BT_TH_STOPPED && th->why == BT_TS_SIGNAL &&
		    th->sig == SIGTRAP && !th->sig_checked &&
		    judge_break(t, th, &ignored) == 1)
			th->at_break = 0;
	}
}

/*
 * The signal @th gets as it is let go: the one it was stopped for, but
 * for a trap of the kernel's single-stepping (TRAP_TRACE, or TRAP_BRKPT
 * after a stepped system call): only a tracer steps, so it is btrace's,
 * even where no backend claimed it (a step the stop-all cut short).
 */
static int let_go_signal(const struct bt_thread *th)
{
	if (th->sig == SIGTRAP && th->why == BT_TS_SIGNAL &&
	    (th->si.si_code == TRAP_TRACE || th->si.si_code == TRAP_BRKPT))
		return 0;
	return th->sig;
}

/*
 * Detach every stopped thread, each with the signal it was stopped for:
 * a pending signal is delivered as it would have been.  Group-stopped
 * threads stay stopped: the program was stopped.
 */
static int detach_all(struct bt_target *t)
{
	int ret = 0, pass, r;
	size_t i;

	/*
	 * Threads that take no signal go first: a fatal one ends the whole
	 * process, and SIGKILL wakes the threads still traced out of their
	 * stops (detach_quiet then detaches them at their exit stop).
	 */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < t->nthreads; i++) {
			struct bt_thread *th = t->threads[i];

			if (th->state != BT_TH_STOPPED ||
			    !let_go_signal(th) != !pass)
				continue;
			r = detach_quiet(th, let_go_signal(th));
			if (r < 0 && !ret)
				ret = r;
			/* Not ours any more: never waited for (its parent's). */
			thread_gone(t, th);
		}
	t->traced = 0;
	return ret;
}

int bt_target_detach(struct bt_target *t)
{
	int ret, r;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_detach(NULL)");
	if (!t->traced || t->gone)
		return 0;
	ret = target_stop_all(t);
	settle_breaks(t);
	r = breaks_remove_all(t);
	if (!ret)
		ret = r;
	r = detach_all(t);
	if (!ret)
		ret = r;
	reap_dying(t);
	return ret;
}

/* The parent of process @pid, or 0. */
static pid_t getppid_of(pid_t pid)
{
	char buf[32];

	if (proc_status(pid, 0, "PPid", buf, sizeof(buf)) < 0)
		return 0;
	return atoi(buf);
}

/*
 * A thread stopped while single-stepping can hold the step's SIGTRAP
 * queued: let go, it would die of it (synchronous signals come first).
 * Resume it once: the kernel dequeues the trap before running anything,
 * reports it, and it is dropped.
 */
static void drain_trap(struct bt_target *t, struct bt_thread *th)
{
	int status, tries;

	for (tries = 0; tries < 4; tries++) {
		if (!(proc_sigmask(t->pid, th->tid, "SigPnd") &
		      (1ull << (SIGTRAP - 1))))
			return;
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0 ||
		    waitpid(th->tid, &status, __WALL) != th->tid ||
		    !WIFSTOPPED(status))
			return;
	}
}

/*
 * Detach @th from a ptrace-stop, delivering @sig (0: none).  While the
 * process enters its group stop or dies, a thread can be out of its
 * ptrace-stop (ESRCH): wait for its next report, then detach from that
 * one.
 */
static int detach_quiet(struct bt_thread *th, int sig)
{
	int status, tries;

	for (tries = 0; tries < 64; tries++) {
		if (ptrace(PTRACE_DETACH, th->tid, 0, sig) == 0)
			return 0;
		if (errno != ESRCH)
			break;
		if (waitpid(th->tid, &status, __WALL) < 0)
			return errno == ECHILD ? 0 : -1;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return 0;
	}
	return bt_fail(bte_ptrace, errno, "ptrace(DETACH, %d)", th->tid);
}

/*
 * Hand the process to another debugger: a process-wide SIGSTOP is queued
 * before the threads are let go, so the first one to run takes the whole
 * process into a group stop before any instruction; the stop's own signal
 * is dropped (a fault re-executes, the new tracer re-sends the others).
 */
int bt_target_detach_stopped(struct bt_target *t)
{
	int ret, r;
	size_t i;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_detach_stopped(NULL)");
	if (!t->traced || t->gone)
		return 0;
	ret = target_stop_all(t);
	settle_breaks(t);
	r = breaks_remove_all(t);
	if (!ret)
		ret = r;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			drain_trap(t, t->threads[i]);
	if (kill(t->pid, SIGSTOP) < 0 && !ret)
		ret = bt_fail(bte_exited, errno, "kill(%d, SIGSTOP)", t->pid);
	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		th->sig = 0;
		if (th->state != BT_TH_STOPPED)
			continue;
		r = detach_quiet(th, 0);
		if (r < 0 && !ret)
			ret = r;
		th->state = BT_TH_RUNNING;
	}
	t->traced = 0;
	reap_dying(t);
	return ret;
}

/* Wait for the launched child @t to end; *@wstatus its status. */
static int finish_reap(struct bt_target *t, int *wstatus)
{
	siginfo_t si;
	int status, sig;
	pid_t r;

	for (;;) {
		r = waitpid(-1, &status, __WALL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return bt_fail(bte_io, errno, "waitpid(%d)", t->pid);
		}
		if (r == t->pid && (WIFEXITED(status) || WIFSIGNALED(status)))
			break;
		if (!WIFSTOPPED(status))
			continue;
		/* A thread that came up while letting go: let it go too. */
		sig = WSTOPSIG(status);
		if (status >> 16 || sig == SIGTRAP ||
		    ptrace(PTRACE_GETSIGINFO, r, 0, &si) < 0)
			sig = 0;
		ptrace(PTRACE_DETACH, r, 0, sig);
	}
	t->gone = 1;
	t->wstatus = status;
	t->have_wstatus = 1;
	*wstatus = status;
	return 0;
}

/* What an attached process's end will be: it is not ours to reap. */
static int finish_predict(const struct bt_target *t)
{
	switch (t->last.reason) {
	case BT_STOP_SIGNAL:
	case BT_STOP_KILLED:
		return t->last.signal & 0x7f;
	case BT_STOP_INTERRUPT:
		return t->last.signal ? t->last.signal : 0;
	case BT_STOP_EXIT:
		return (t->last.status & 0xff) << 8;
	default:
		return 0;
	}
}

int bt_target_finish(struct bt_target *t, int *wstatus)
{
	int ws = 0, ret = 0;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_finish(NULL)");
	if (!wstatus)
		wstatus = &ws;
	if (t->gone) {
		*wstatus = t->have_wstatus ? t->wstatus : t->last_wstatus;
		return 0;
	}
	if (!t->launched) {
		*wstatus = finish_predict(t);
		return bt_target_detach(t);
	}
	if (t->traced) {
		ret = target_stop_all(t);
		settle_breaks(t);
		breaks_remove_all(t);
		detach_all(t);
	}
	if (ret == 0)
		ret = finish_reap(t, wstatus);
	return ret;
}

/*
 * Wait for killed thread @th to be gone, resuming it through the exit
 * stops it still makes.  A process we attached to but also forked (a
 * test's child) keeps its leader's status for its own waitpid.
 */
static void kill_reap(struct bt_target *t, struct bt_thread *th)
{
	int keep = !t->launched && th->tid == t->pid &&
		   getppid_of(t->pid) == getpid();
	struct bt_stop ignored;
	siginfo_t si;
	int status;

	for (;;) {
		if (keep) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, th->tid, &si,
				   WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0 &&
			    errno != EINTR)
				break;
			if (si.si_pid && si.si_code != CLD_TRAPPED) {
				thread_gone(t, th);
				return;
			}
			if (!si.si_pid)
				continue;
		}
		if (waitpid(th->tid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFSTOPPED(status)) {
			/* PTRACE_EVENT_EXIT still stops a killed thread. */
			ptrace(PTRACE_CONT, th->tid, 0, 0);
			continue;
		}
		on_reaped(t, th->tid, status, &ignored);
		return;
	}
	thread_gone(t, th);
}

int bt_target_kill(struct bt_target *t)
{
	struct bt_thread *leader;
	size_t i;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_kill(NULL)");
	if (t->gone || (!t->traced && !t->launched))
		return 0;
	kill(t->pid, SIGKILL);
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tgid != t->pid &&
		    t->threads[i]->state != BT_TH_GONE)
			kill(t->threads[i]->tgid, SIGKILL);
	/* A thread in some ptrace-stops (exec) only dies once resumed. */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			ptrace(PTRACE_CONT, t->threads[i]->tid, 0, 0);
	/* The leader is reported last, once the others are reaped. */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tid != t->pid &&
		    t->threads[i]->state != BT_TH_GONE)
			kill_reap(t, t->threads[i]);
	leader = thread_find(t, t->pid);
	if (leader)
		kill_reap(t, leader);
	if (t->launched && !t->have_wstatus) {
		int status;

		if (waitpid(t->pid, &status, __WALL) == t->pid) {
			t->wstatus = status;
			t->have_wstatus = 1;
		}
	}
	t->gone = 1;
	t->traced = 0;
	return 0;
}

void bt_target_free(struct bt_target *t)
{
	if (!t)
		return;
	if (t->traced && !t->gone) {
		if (t->launched)
			bt_target_kill(t);
		else
			bt_target_detach(t);
	} else if (t->launched && !t->gone) {
		int ws;

		/* Let go but not yet reaped: no zombie left. */
		finish_reap(t, &ws);
	}
	target_release(t);
}

/* Queries */

int bt_target_capture(struct bt_target *t, pid_t tid, struct bt_capture *cap)
{
	struct bt_ring_view view;
	struct bt_thread *th;

	if (!t || !cap)
		return bt_fail(bte_invalid, 0, "bt_target_capture(NULL)");
	memset(cap, 0, sizeof(*cap));
	th = bt_thread_find_any(t, tid);
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	if (t->ops->capture)
		return t->ops->capture(t, th, cap);
	bt_ring_view_init(&view, th->ring);
	return bt_thread_ring_capture(th, &view, cap);
}

int bt_thread_ring_capture(struct bt_thread *th, struct bt_ring_view *view,
			   struct bt_capture *cap)
{
	int ret;

	cap->format = BT_FMT_SOFT;
	cap->tid = th->tid;
	bt_cpu_read(&cap->cpu);
	ret = bt_ring_copy(view, &cap->data, &cap->size);
	cap->lost = bt_ring_lost_records(th->ring);
	if (ret == -bte_corrupt || ret == -bte_torn) {
		cap->status = ret;	/* what could be read is there */
		return 0;
	}
	return ret < 0 ? ret : 0;
}

size_t bt_target_threads(const struct bt_target *t, pid_t *tids, size_t max)
{
	size_t i, n = 0;

	if (!t)
		return 0;
	for (i = 0; i < t->nthreads; i++) {
		if (t->threads[i]->state == BT_TH_GONE)
			continue;
		if (tids && n < max)
			tids[n] = t->threads[i]->tid;
		n++;
	}
	return n;
}

pid_t bt_target_pid(const struct bt_target *t)
{
	return t ? t->pid : 0;
}

int bt_target_backend(const struct bt_target *t)
{
	return t ? t->ops->id : BT_BACKEND_AUTO;
}

const char *bt_target_backend_name(const struct bt_target *t)
{
	return t ? t->ops->name : "?";
}

void bt_target_stats(const struct bt_target *t, struct bt_stats *stats)
{
	if (!stats)
		return;
	memset(stats, 0, sizeof(*stats));
	if (t)
		*stats = t->stats;
}

size_t bt_target_buffer_size(const struct bt_target *t)
{
	return t ? t->opts.buffer_size : 0;
}

int bt_target_pc(struct bt_target *t, pid_t tid, uint64_t *pc)
{
	struct bt_thread *th;
	int ret;

	if (!t || !pc)
		return bt_fail(bte_invalid, 0, "bt_target_pc(NULL)");
	ret = bt_stopped_thread(t, tid, &th);
	return ret < 0 ? ret : bt_thread_pc(th, pc);
}

int bt_stopped_thread(struct bt_target *t, pid_t tid, struct bt_thread **out)
{
	struct bt_thread *th;

	if (!t)
		return bt_fail(bte_invalid, 0, "no target");
	th = thread_find(t, tid);
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	if (th->state != BT_TH_STOPPED)
		return bt_fail(bte_invalid, 0, "thread %d is not stopped", tid);
	*out = th;
	return 0;
}
