// SPDX-License-Identifier: MIT
/*
 * A wait status, turned into what happened and acted on, in the manner of
 * strace's next_event() and dispatch: bt_event_read() says which kind of
 * stop (struct bt_event), bt_event_dispatch() takes what it changes in
 * the threads and decides what becomes of the thread (an enum
 * bt_outcome): resumed, held, or a stop reported.  Around it: stops of
 * our int3s, signals judged the way the kernel will deliver them, the
 * PTRACE_EVENT_* stops (clone, fork, exec, exit), exits and reaping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

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

/*
 * What @sig will do to the process, judged the way the kernel will: a
 * handler runs; an ignored or non-fatal default passes; otherwise it kills.
 * A fault the kernel raised while it is blocked or ignored kills too (the
 * kernel resets it to the default before delivering it).
 */
int bt_sig_fate(struct bt_target *t, struct bt_thread *th, int sig,
		const siginfo_t *si)
{
	uint64_t bit = 1ull << (sig - 1);
	uint64_t caught = bt_proc_sigmask(th->tid, 0, "SigCgt");
	uint64_t ignored = bt_proc_sigmask(th->tid, 0, "SigIgn");
	uint64_t blocked = bt_proc_sigmask(th->tid, 0, "SigBlk");

	if (sig_is_fault(sig) && si->si_code > 0 && si->si_code != SI_KERNEL &&
	    ((ignored | blocked) & bit))
		return BT_SIG_FATAL;
	if (caught & bit)
		return BT_SIG_HANDLED;
	if (ignored & bit)
		return BT_SIG_PASS;
	return sig_default_fatal(sig) ? BT_SIG_FATAL : BT_SIG_PASS;
}

struct sigcode {
	int sig;	/* 0: any signal */
	int code;
	const char *name, *words;
};

/* siginfo.h's si_code values, in words; those of a fault first. */
static const struct sigcode sigcodes[] = {
	{ SIGSEGV, SEGV_MAPERR, "SEGV_MAPERR", "address not mapped" },
	{ SIGSEGV, SEGV_ACCERR, "SEGV_ACCERR", "no permission for the access" },
	{ SIGSEGV, 3, "SEGV_BNDERR", "failed address bound checks" },
	{ SIGSEGV, 4, "SEGV_PKUERR", "protection key check failed" },
	{ SIGSEGV, 10, "SEGV_CPERR", "control protection fault" },
	{ SIGBUS, BUS_ADRALN, "BUS_ADRALN", "invalid address alignment" },
	{ SIGBUS, BUS_ADRERR, "BUS_ADRERR",
	  "no memory behind the address, such as past a file's end" },
	{ SIGBUS, BUS_OBJERR, "BUS_OBJERR", "object-specific hardware error" },
	{ SIGBUS, BUS_MCEERR_AR, "BUS_MCEERR_AR",
	  "hardware memory error consumed" },
	{ SIGBUS, BUS_MCEERR_AO, "BUS_MCEERR_AO",
	  "hardware memory error detected" },
	{ SIGFPE, FPE_INTDIV, "FPE_INTDIV", "integer divide by zero" },
	{ SIGFPE, FPE_INTOVF, "FPE_INTOVF", "integer overflow" },
	{ SIGFPE, FPE_FLTDIV, "FPE_FLTDIV", "floating-point divide by zero" },
	{ SIGFPE, FPE_FLTOVF, "FPE_FLTOVF", "floating-point overflow" },
	{ SIGFPE, FPE_FLTUND, "FPE_FLTUND", "floating-point underflow" },
	{ SIGFPE, FPE_FLTRES, "FPE_FLTRES", "floating-point inexact result" },
	{ SIGFPE, FPE_FLTINV, "FPE_FLTINV",
	  "invalid floating-point operation" },
	{ SIGFPE, FPE_FLTSUB, "FPE_FLTSUB", "subscript out of range" },
	{ SIGILL, ILL_ILLOPC, "ILL_ILLOPC", "illegal opcode" },
	{ SIGILL, ILL_ILLOPN, "ILL_ILLOPN", "illegal operand" },
	{ SIGILL, ILL_ILLADR, "ILL_ILLADR", "illegal addressing mode" },
	{ SIGILL, ILL_ILLTRP, "ILL_ILLTRP", "illegal trap" },
	{ SIGILL, ILL_PRVOPC, "ILL_PRVOPC", "privileged opcode" },
	{ SIGILL, ILL_PRVREG, "ILL_PRVREG", "privileged register" },
	{ SIGILL, ILL_COPROC, "ILL_COPROC", "coprocessor error" },
	{ SIGILL, ILL_BADSTK, "ILL_BADSTK", "internal stack error" },
	{ SIGTRAP, TRAP_BRKPT, "TRAP_BRKPT", "breakpoint" },
	{ SIGTRAP, TRAP_TRACE, "TRAP_TRACE", "trace trap" },
	{ SIGTRAP, 3, "TRAP_BRANCH", "branch trap" },
	{ SIGTRAP, 4, "TRAP_HWBKPT", "hardware breakpoint or watchpoint" },
	{ SIGSYS, 1, "SYS_SECCOMP", "system call refused by seccomp" },
	{ 0, SI_USER, "SI_USER", "sent with kill()" },
	{ 0, SI_TKILL, "SI_TKILL", "sent with tgkill() (raise, abort)" },
	{ 0, SI_QUEUE, "SI_QUEUE", "sent with sigqueue()" },
	{ 0, SI_TIMER, "SI_TIMER", "a POSIX timer expired" },
	{ 0, SI_MESGQ, "SI_MESGQ", "a message arrived on a message queue" },
	{ 0, SI_ASYNCIO, "SI_ASYNCIO", "asynchronous I/O completed" },
	{ 0, SI_SIGIO, "SI_SIGIO", "a queued SIGIO" },
	{ 0, SI_KERNEL, "SI_KERNEL", "raised by the kernel" },
};

int bt_sigcode_describe(int sig, int si_code, const char **words,
			const char **name)
{
	size_t i;

	*words = *name = NULL;
	for (i = 0; i < BT_ARRAY_SIZE(sigcodes); i++) {
		if (sigcodes[i].code != si_code ||
		    (sigcodes[i].sig && sigcodes[i].sig != sig))
			continue;
		*words = sigcodes[i].words;
		*name = sigcodes[i].name;
		break;
	}
	if (si_code == SI_USER || si_code == SI_TKILL || si_code == SI_QUEUE)
		return 1;
	if (si_code > 0 && si_code != SI_KERNEL && sig_is_fault(sig))
		return 2;
	return 0;
}

/*
 * How the signal in @th->si came: the fault's address, or the process
 * that sent it, whose name is read now (it may exit before anyone looks).
 */
static void stop_fill_siginfo(const struct bt_thread *th,
			      struct bt_stop *stop)
{
	const siginfo_t *si = &th->si;
	const char *words, *name;
	char path[64];
	ssize_t n;
	int fd;

	stop->si_code = si->si_code;
	switch (bt_sigcode_describe(stop->signal, si->si_code, &words, &name)) {
	case 2:
		stop->addr = (uint64_t)si->si_addr;
		return;
	case 1:
		break;
	default:
		if (si->si_code == SI_TIMER || si->si_code == SI_MESGQ)
			stop->value = (int64_t)(intptr_t)si->si_value.sival_ptr;
		return;
	}
	stop->sender = si->si_pid;
	stop->sender_uid = si->si_uid;
	if (si->si_code == SI_QUEUE)
		stop->value = (int64_t)(intptr_t)si->si_value.sival_ptr;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)si->si_pid);
	fd = si->si_pid > 0 ? bt_open(path, O_RDONLY) : -1;
	if (fd < 0)
		return;
	n = read(fd, stop->sender_comm, sizeof(stop->sender_comm) - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	stop->sender_comm[n] = '\0';
	stop->sender_comm[strcspn(stop->sender_comm, "\n")] = '\0';
}

struct bt_break *bt_break_at(struct bt_target *t, pid_t tgid, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].number && t->breaks[i].inserted &&
		    t->breaks[i].addr == addr &&
		    (!t->breaks[i].pid || t->breaks[i].pid == tgid))
			return &t->breaks[i];
	return NULL;
}

void bt_stop_fill_pc(struct bt_thread *th, struct bt_stop *stop)
{
	stop->tid = th->tid;
	if (bt_thread_pc(th, &stop->pc) < 0)
		stop->pc = 0;
}

/* A SIGTRAP from one of our int3s: rewind to it and report. */
int bt_judge_break(struct bt_target *t, struct bt_thread *th,
		   struct bt_stop *stop)
{
	struct user_regs_struct regs;
	struct bt_break *b;

	if (th->si.si_code != SI_KERNEL || bt_thread_regs(th, &regs) < 0)
		return 0;
	b = bt_break_at(t, th->tgid ? th->tgid : t->pid, regs.rip - 1);
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

/* A fault the program's handler takes: its stop and history kept. */
static void fault_keep(struct bt_target *t, struct bt_thread *th)
{
	struct bt_stop fault;

	memset(&fault, 0, sizeof(fault));
	fault.reason = BT_STOP_SIGNAL;
	fault.signal = th->sig;
	stop_fill_siginfo(th, &fault);
	bt_stop_fill_pc(th, &fault);
	bt_fault_mark(t, th, &fault);
}

/*
 * A fatal signal that is a followed process's fate, not its crash: sent
 * by another process (a pool's terminate(), kill from a shell), or the
 * kernel's SIGPIPE for a pipe whose reader left (a pipeline's writer
 * ends so).  That process dies as it would and the rest of the tree is
 * traced on, as a user of perf sees a tree.  Anything else that kills
 * it is its own crash and the stop: a fault, abort(), raise(), a kill
 * of its own pid.  The first process's death by any signal ends the run
 * and is reported (who sent it: stop_fill_siginfo()).
 */
static int sig_is_fate(const struct bt_target *t, const struct bt_thread *th,
		       int sig, const siginfo_t *si)
{
	int sent = si->si_code == SI_USER || si->si_code == SI_TKILL ||
		   si->si_code == SI_QUEUE;

	if (!th->tgid || th->tgid == t->pid || !sent)
		return 0;
	/* SIGPIPE of a write: SI_USER from the writer itself (the kernel's) */
	if (sig == SIGPIPE && si->si_code == SI_USER)
		return 1;
	return si->si_pid != th->tgid;
}

/*
 * Judge the signal @th stopped with: 1 and *@stop filled if it is a stop
 * to report (a breakpoint, a fatal signal, Ctrl-C), 0 if the program
 * gets it on resume.
 */
int bt_judge_signal(struct bt_target *t, struct bt_thread *th,
		    struct bt_stop *stop)
{
	int sig = th->sig, ret;

	th->sig_checked = 1;
	if (sig == SIGTRAP) {
		ret = bt_judge_break(t, th, stop);
		if (ret)
			return ret;
	}
	if (sig > 0 && sig <= 64 && (t->stop_sigs & (1ull << (sig - 1))))
		goto report;	/* a debugger's: it decides what the program gets */
	switch (bt_sig_fate(t, th, sig, &th->si)) {
	case BT_SIG_HANDLED:
		if (bt_signal_is_fault(sig, &th->si)) {
			if (t->opts.stop_at_fault)
				goto report;	/* before the handler, as GDB */
			fault_keep(t, th);
		}
		if (t->ops->signal)
			t->ops->signal(t, th, sig);
		return 0;
	case BT_SIG_PASS:
		return 0;
	case BT_SIG_FATAL:
		if (sig_is_fate(t, th, sig, &th->si))
			return 0;	/* it dies; the tree goes on */
		break;
	}
report:
	th->stepping = 0;
	stop->reason = sig == SIGINT ? BT_STOP_INTERRUPT : BT_STOP_SIGNAL;
	stop->signal = sig;
	stop_fill_siginfo(th, stop);
	bt_stop_fill_pc(th, stop);
	return 1;
}

/* Every thread left is exiting: the process is. */
int bt_process_exiting(const struct bt_target *t)
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
int bt_report_exit(struct bt_target *t, struct bt_thread *last,
		   struct bt_stop *stop)
{
	struct bt_thread *th = bt_thread_find(t, t->exit_tid);

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
	bt_stop_fill_pc(th, stop);
	return 1;
}

/* The last thread is reaped: nothing left to inspect. */
int bt_report_gone(struct bt_target *t, pid_t tid, struct bt_stop *stop)
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

/*
 * Another thread than the first called exit_group (@caller, held at its
 * exit to be the one the report shows): the first thread is ending too,
 * killed, and the kernel reports its end only once the others, the
 * caller among them, are reaped; a killed thread makes no exit stop.
 * Waited for as any other, it held the report, and the caller, for ever
 * (a worker's _exit() run natively under --only).
 */
static void first_ends(struct bt_target *t, const struct bt_thread *caller)
{
	struct bt_thread *first = bt_thread_find(t, t->pid);

	if (first && first != caller && first->state != BT_TH_GONE)
		first->exiting = 1;
}

/* PTRACE_EVENT_EXIT: @th is dying; what its process's end will be. */
static void exit_take(struct bt_target *t, struct bt_thread *th)
{
	struct user_regs_struct regs;
	unsigned long msg = 0;

	th->exiting = 1;
	th->why = BT_TS_EXIT;
	/*
	 * What it ran since its last stop, read while its memory is there
	 * (a thread that ends in code run natively never stops again).  A
	 * backend's sync() only reads at an exit event: the thread can only
	 * run to its end.
	 */
	if (t->ops->sync)
		t->ops->sync(t, th);
	if (th->tgid != t->pid)
		return;
	ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
	if (!t->exit_tid || WIFEXITED(msg))
		t->exit_msg = msg;
	if (bt_thread_regs(th, &regs) == 0 &&
	    regs.orig_rax == SYS_exit_group && !t->exit_tid) {
		t->exit_tid = th->tid;
		first_ends(t, th);
	}
}

static int exit_decide(struct bt_target *t, struct bt_thread *th,
		       struct bt_stop *stop)
{
	/* A followed child ends as it would: only our process's end stops. */
	if (th->tgid != t->pid)
		return BT_OUT_RESUME;
	if (bt_process_exiting(t) && !t->exit_reported) {
		bt_report_exit(t, th, stop);
		return BT_OUT_REPORT;
	}
	/* exit_group's caller waits for the others, to be the one shown. */
	if (th->tid == t->exit_tid)
		return BT_OUT_HOLD;
	return BT_OUT_RESUME;
}

int bt_on_reaped(struct bt_target *t, pid_t tid, int status,
		 struct bt_stop *stop)
{
	struct bt_thread *th = bt_thread_find(t, tid), *last = NULL;
	size_t i;

	if (!th)
		return 0;
	if (th->tgid != t->pid) {
		bt_thread_gone(t, th);
		return 0;
	}
	t->last_wstatus = status;
	if (tid == t->pid) {
		t->wstatus = status;
		t->have_wstatus = 1;
	}
	bt_thread_gone(t, th);
	if (!bt_target_main_alive(t))
		return bt_report_gone(t, tid, stop);
	if (!bt_process_exiting(t) || t->exit_reported)
		return 0;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED &&
		    t->threads[i]->why == BT_TS_EXIT)
			last = t->threads[i];
	return last ? bt_report_exit(t, last, stop) : 0;
}

static int on_new_thread(struct bt_target *t, pid_t tid)
{
	struct bt_thread *th;
	int ret;

	/*
	 * Known already, or even gone: the new thread can start, run and
	 * end before its parent's clone event is read.  (A later thread
	 * that reuses the tid is added by its own first stop, stop_unknown().)
	 */
	if (bt_thread_find_any(t, tid))
		return 0;
	ret = bt_thread_add(t, tid, BT_TH_RUNNING, &th);
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
		/* other processes of the tree (followed forks) go on */
		if (old == th || old->state == BT_TH_GONE ||
		    old->tgid != th->tgid)
			continue;
		if (old->tid == (pid_t)former) {
			/* The stop came under the new id for the old thread. */
			old->tid = th->tid;
			bt_thread_gone(t, th);
			old->state = BT_TH_STOPPED;
			old->why = BT_TS_EVENT;
			return;
		}
		bt_thread_gone(t, old);
	}
}

/*
 * A child we do not follow: at its first stop, take our int3s out of its
 * copy of the memory and let it go.  A vfork child shares the memory of
 * the parent, which it leaves alone until exec or exit: nothing to undo.
 */
static void fork_release(struct bt_target *t, pid_t parent, pid_t child,
			 int shared)
{
	struct bt_thread *th = bt_thread_find(t, child);
	struct bt_aspace *as;
	int status;

	if (th) {
		/* Its first stop came before the parent's event. */
		bt_thread_gone(t, th);
		th->tid = -th->tid;
	} else {
		while (waitpid(child, &status, __WALL) < 0 && errno == EINTR)
			;
	}
	as = bt_target_aspace(t, parent);
	if (as && !shared)
		bt_aspace_fork_clean(as, child, BT_BP_ALL);
	if (t->ops->fork)
		t->ops->fork(t, child, shared);
	ptrace(PTRACE_DETACH, child, 0, 0);
}

/* A followed fork child: its own memory, a copy with our int3s in it. */
static int on_fork_followed(struct bt_target *t, struct bt_thread *th,
			    pid_t child)
{
	int ret = bt_target_aspace_fork(t, th->tgid, child);

	if (ret == 0)
		ret = bt_breaks_fork(t, th->tgid, child);
	return ret < 0 ? ret : on_new_thread(t, child);
}

/*
 * A new program in @th's process: the int3s went with the old memory.
 * The debugger's breakpoints keep their numbers, out of memory.
 */
static void exec_memory(struct bt_target *t, struct bt_thread *th)
{
	struct bt_aspace *as = bt_target_aspace(t, th->tgid);
	size_t i;

	if (as)
		bt_aspace_exec(as);
	for (i = 0; i < t->nbreaks && th->tgid == t->pid; i++)
		if (!t->breaks[i].pid)
			t->breaks[i].inserted = 0;
	/* a child's own locations were its old program's */
	if (th->tgid && th->tgid != t->pid)
		bt_breaks_of_gone(t, th->tgid);
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
			return on_fork_followed(t, th, msg);
		fork_release(t, th->tgid, msg, event == PTRACE_EVENT_VFORK);
		return 0;
	case PTRACE_EVENT_EXEC:
		on_exec(t, th);
		exec_memory(t, th);
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

/* A stopped known thread: which kind of stop, the backend asked first. */
static int stop_kind(struct bt_target *t, struct bt_thread *th,
		     const struct bt_event *ev)
{
	if (th->fresh || ev->event == PTRACE_EVENT_STOP)
		return BT_EV_INTERRUPT;
	if (ev->event == PTRACE_EVENT_EXIT)
		return BT_EV_EXIT;
	if (ev->event)
		return BT_EV_PTRACE;
	if (ev->sig == (SIGTRAP | 0x80))
		return BT_EV_SYSCALL;
	if (ptrace(PTRACE_GETSIGINFO, th->tid, 0, &th->si) < 0) {
		if (errno == ESRCH) {
			/*
			 * Out of its stop already: a SIGKILL (another
			 * thread's exit_group) wakes a thread from a
			 * ptrace-stop.  Its signal is nobody's (read as
			 * sent, a trap of ours was the program's SIGTRAP);
			 * its end is what comes next.
			 */
			th->state = BT_TH_RUNNING;
			th->exiting = 1;
			return BT_EV_NONE;
		}
		memset(&th->si, 0, sizeof(th->si));
	}
	if (ev->sig == SIGTRAP && t->ops->trap && t->ops->trap(t, th, &th->si))
		return BT_EV_TRAP;
	/*
	 * A trap of the kernel's single-stepping no backend claimed: a step
	 * of btrace's (only a tracer steps), the backend's own that the
	 * stop-all cut short, or one where the backend leaves such traps
	 * alone.  Never the program's signal (as letgo.c's let_go_signal()).
	 */
	if (ev->sig == SIGTRAP &&
	    (th->si.si_code == TRAP_TRACE || th->si.si_code == TRAP_BRKPT))
		return BT_EV_TRAP;
	if (t->ops->signalled && t->ops->signalled(t, th))
		return BT_EV_HANDLED;
	return BT_EV_SIGNAL;
}

/* The first stop of @tid, before its parent's clone or fork event. */
static int stop_unknown(struct bt_target *t, pid_t tid, struct bt_event *ev)
{
	struct bt_thread *th;
	int ret;

	/* a new process's first stop, or a thread's */
	if (tid != t->pid)
		bt_target_aspace_forget(t, tid);
	ret = bt_thread_add(t, tid, BT_TH_RUNNING, &th);
	if (ret < 0)
		return ret;
	th->fresh = 1;
	ev->th = th;
	if (th->tgid != t->pid && !t->opts.follow_fork) {
		/* A fork child to let go at its parent's event. */
		th->state = BT_TH_STOPPED;
		th->fresh = 0;
		th->parked = 1;
		ev->kind = BT_EV_PARKED;
	}
	return 0;
}

int bt_event_read(struct bt_target *t, pid_t tid, int status,
		  struct bt_event *ev)
{
	struct bt_thread *th;
	int ret;

	memset(ev, 0, sizeof(*ev));
	ev->tid = tid;
	ev->status = status;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		ev->kind = BT_EV_REAPED;
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	t->stats.stops++;
	ev->sig = WSTOPSIG(status);
	ev->event = status >> 16;
	th = bt_thread_find(t, tid);
	if (!th) {
		ret = stop_unknown(t, tid, ev);
		if (ret < 0 || ev->kind == BT_EV_PARKED)
			return ret;
		th = ev->th;
	}
	ev->th = th;
	th->state = BT_TH_STOPPED;
	th->why = BT_TS_NONE;
	th->stop_ns = bt_clock_ns();
	ev->kind = stop_kind(t, th, ev);
	return 0;
}

/*
 * What @ev changes in the threads' state, whether the stop is acted on
 * or only collected.  Returns 1 with *@stop filled where the change is a
 * stop to report (the process's end, seen at a reaping), 0, or < 0.
 */
static int event_take(struct bt_target *t, struct bt_event *ev,
		      struct bt_stop *stop)
{
	struct bt_thread *th = ev->th;

	switch (ev->kind) {
	case BT_EV_REAPED:
		return bt_on_reaped(t, ev->tid, ev->status, stop);
	case BT_EV_INTERRUPT:
		th->fresh = 0;
		th->interrupting = 0;
		th->why = BT_TS_INTERRUPT;
		if (ev->event == PTRACE_EVENT_STOP && is_stop_signal(ev->sig)) {
			th->why = BT_TS_GROUP;
			th->group_sig = ev->sig;
		}
		return 0;
	case BT_EV_EXIT:
		exit_take(t, th);
		return 0;
	case BT_EV_PTRACE:
		return on_event(t, th, ev->event);
	case BT_EV_TRAP:
		th->why = BT_TS_TRAP;
		/* a step done while collecting is not asked again */
		ev->step_done = th->stepping;
		th->stepping = 0;
		return 0;
	case BT_EV_HANDLED:
		th->why = BT_TS_TRAP;	/* the backend's own fault, handled */
		return 0;
	case BT_EV_SIGNAL:
		th->why = BT_TS_SIGNAL;
		th->sig = ev->sig;
		th->sig_checked = 0;
		return 0;
	default:
		return 0;
	}
}

/* What becomes of the thread of @ev, taken: resumed, held or reported. */
static int event_decide(struct bt_target *t, struct bt_event *ev,
			struct bt_stop *stop)
{
	switch (ev->kind) {
	case BT_EV_NONE:
	case BT_EV_REAPED:
	case BT_EV_PARKED:
		return BT_OUT_HOLD;
	case BT_EV_EXIT:
		return exit_decide(t, ev->th, stop);
	case BT_EV_TRAP:
		if (!ev->step_done)
			return BT_OUT_RESUME;
		/* the step bt_target_resume() asked for, recorded */
		stop->reason = BT_STOP_STEP;
		bt_stop_fill_pc(ev->th, stop);
		return BT_OUT_REPORT;
	case BT_EV_SIGNAL:
		return bt_judge_signal(t, ev->th, stop) ? BT_OUT_REPORT :
							  BT_OUT_RESUME;
	default:
		return BT_OUT_RESUME;
	}
}

int bt_event_dispatch(struct bt_target *t, struct bt_event *ev,
		      struct bt_stop *stop)
{
	int ret = event_take(t, ev, stop);

	if (ret < 0)
		return ret;
	return ret ? BT_OUT_REPORT : event_decide(t, ev, stop);
}

int bt_event_collect(struct bt_target *t, pid_t tid, int status)
{
	struct bt_stop ignored;
	struct bt_event ev;
	int ret;

	memset(&ignored, 0, sizeof(ignored));
	ret = bt_event_read(t, tid, status, &ev);
	if (ret == 0)
		ret = event_take(t, &ev, &ignored);
	return ret < 0 ? ret : 0;
}
