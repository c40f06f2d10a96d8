/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TRACER_INT_H
#define BTRACE_TRACER_INT_H

/*
 * What the files of lib/tracer/ share among themselves; backends see only
 * tracer.h.  The files, a seam each:
 *	thread.c	the thread table, registers, rings, /proc status lines
 *	event.c		a wait status turned into what happened, and acted on
 *	resume.c	restarting threads, steps, stopping every thread
 *	loop.c		bt_target_cont() and bt_target_resume(): the stop loop
 *	break.c		memory as the program sees it, user breakpoints
 *	aspace.c	a process's memory and int3s (aspace.h, backends too)
 *	launch.c	launch and attach
 *	letgo.c		detach, hand-over, finish, kill
 *	target.c	creating and freeing a target, queries
 *	target_debug.c	register sets, memory writes, captures from a position
 *	nonstop.c	threads stopped and resumed one at a time (non-stop)
 *	fault.c		faults the program's handler takes: their history kept
 */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/target.h"
#include "tracer/tracer.h"

/*
 * fork and vfork are always seen: a child we do not follow is let go
 * without our int3s in its copy of the memory.
 */
#define PTRACE_OPTS                                                        \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |   \
	 PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
	 PTRACE_O_TRACEVFORKDONE)

/* What a signal will do to the process (bt_sig_fate()). */
enum bt_sig_fate { BT_SIG_PASS, BT_SIG_HANDLED, BT_SIG_FATAL };

/* thread.c */

int bt_thread_add(struct bt_target *t, pid_t tid, int state,
		  struct bt_thread **out);
void bt_thread_gone(struct bt_target *t, struct bt_thread *th);
void bt_thread_free(struct bt_thread *th);
size_t bt_target_main_alive(const struct bt_target *t);
size_t bt_target_alive(const struct bt_target *t);
struct bt_thread *bt_thread_any(const struct bt_target *t, int stopped);
int bt_proc_status(pid_t pid, pid_t tid, const char *key, char *buf,
		   size_t size);
uint64_t bt_proc_sigmask(pid_t pid, pid_t tid, const char *key);
struct bt_thread *bt_target_main_thread(struct bt_target *t);

/* fault.c */

void bt_fault_mark(struct bt_target *t, struct bt_thread *th,
		   const struct bt_stop *fault);
void bt_fault_guard(struct bt_thread *th, size_t len);
void bt_fault_free(struct bt_thread *th);

/* event.c */

int bt_sig_fate(struct bt_target *t, struct bt_thread *th, int sig,
		const siginfo_t *si);
/* The breakpoint at @addr in process @tgid (0: one of every process). */
struct bt_break *bt_break_at(struct bt_target *t, pid_t tgid, uint64_t addr);
void bt_stop_fill_pc(struct bt_thread *th, struct bt_stop *stop);
int bt_judge_break(struct bt_target *t, struct bt_thread *th,
		   struct bt_stop *stop);
int bt_judge_signal(struct bt_target *t, struct bt_thread *th,
		    struct bt_stop *stop);
int bt_process_exiting(const struct bt_target *t);
int bt_report_exit(struct bt_target *t, struct bt_thread *last,
		   struct bt_stop *stop);
int bt_report_gone(struct bt_target *t, pid_t tid, struct bt_stop *stop);
int bt_on_reaped(struct bt_target *t, pid_t tid, int status,
		 struct bt_stop *stop);

/*
 * One waitpid report turned into what happened (strace's next_event()):
 * bt_event_read() classifies it, the backend asked first about its traps
 * and faults; bt_event_dispatch() acts on it and says what becomes of the
 * thread.  While stopping everything, bt_event_collect() takes what a
 * report changes and acts on nothing: its signals and steps are judged
 * by the next run.
 */
enum bt_event_kind {
	BT_EV_NONE,	 /* nothing to act on (not a stop or an end) */
	BT_EV_REAPED,	 /* the thread ended and is reaped: status */
	BT_EV_PARKED,	 /* an unfollowed fork child, before the fork event */
	BT_EV_INTERRUPT, /* a new thread's first stop, or PTRACE_EVENT_STOP */
	BT_EV_EXIT,	 /* PTRACE_EVENT_EXIT: the thread is dying */
	BT_EV_PTRACE,	 /* clone, fork, vfork, vfork-done or exec: event */
	BT_EV_SYSCALL,	 /* a syscall-stop: not ours to see */
	BT_EV_TRAP,	 /* a trap of btrace's: the backend's or a step's */
	BT_EV_HANDLED,	 /* a fault the backend caused and handled */
	BT_EV_SIGNAL,	 /* a signal for the program: sig, th->si */
};

struct bt_event {
	int kind;		/* enum bt_event_kind */
	struct bt_thread *th;	/* NULL for NONE and REAPED */
	pid_t tid;
	int status;		/* the wait status */
	int sig;		/* WSTOPSIG(status) */
	int event;		/* PTRACE_EVENT_* (status >> 16), or 0 */
	int step_done;		/* TRAP: the step bt_target_resume() asked */
};

/* What becomes of the event's thread. */
enum bt_outcome {
	BT_OUT_HOLD,	/* it stays stopped (or is gone) */
	BT_OUT_RESUME,	/* restart it: bt_thread_resume() */
	BT_OUT_REPORT,	/* a stop to report, in the caller's bt_stop */
};

/*
 * Classify @status, waitpid's report for @tid, into *@ev.  A thread not
 * known yet is added; a stopped one is marked stopped.  Returns 0, or
 * -bte_nomem.
 */
int bt_event_read(struct bt_target *t, pid_t tid, int status,
		  struct bt_event *ev);

/* Act on @ev: an enum bt_outcome (*@stop filled for REPORT), or < 0. */
int bt_event_dispatch(struct bt_target *t, struct bt_event *ev,
		      struct bt_stop *stop);

/* Read and take @status while stopping everything.  0, or < 0. */
int bt_event_collect(struct bt_target *t, pid_t tid, int status);

/* resume.c */

int bt_thread_resume(struct bt_target *t, struct bt_thread *th);

/*
 * wait.c: the next stop of @tid (-1: any thread) in *@who, *@status: 1;
 * 0 where interrupted (EINTR, or t->interrupt while polling); < 0 on
 * errors (-bte_exited where nothing is left to wait for).
 */
int bt_target_wait(struct bt_target *t, pid_t tid, pid_t *who, int *status);
/* waitpid(@tid, __WALL) that reaps the other threads of @tid's process
 * as they end where @tid is its first (whose end waits for theirs). */
pid_t bt_wait_thread(struct bt_target *t, pid_t tid, int *status);
int bt_thread_step_over(struct bt_target *t, struct bt_thread *th);
int bt_target_stop_all(struct bt_target *t);

/* break.c */

int bt_target_aspace_fork(struct bt_target *t, pid_t parent, pid_t child);
/* An address space an earlier process of pid @tgid left is not a new
 * one's. */
void bt_target_aspace_forget(struct bt_target *t, pid_t tgid);
int bt_break_poke(struct bt_target *t, struct bt_break *b, int insert);
/* Fork child @child has the int3s of @parent's own locations (its copy
 * of the memory, and of the address space): they are its own too. */
int bt_breaks_fork(struct bt_target *t, pid_t parent, pid_t child);
/* Process @pid's own locations are no more (exec, its end): forgotten. */
void bt_breaks_of_gone(struct bt_target *t, pid_t pid);
int bt_breaks_remove_all(struct bt_target *t);

/* letgo.c */

int bt_target_finish_reap(struct bt_target *t, int *wstatus);

/* nonstop.c */

void bt_ns_free(struct bt_ns *ns);

/* target.c */

int bt_target_alloc(const struct bt_target_opts *o, struct bt_target **out);
void bt_target_release(struct bt_target *t);

#endif /* BTRACE_TRACER_INT_H */
