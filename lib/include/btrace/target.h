/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TARGET_H
#define BTRACE_TARGET_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/capture.h"

/*
 * A traced process: launched or attached with ptrace, every thread followed
 * as it is created, each thread's taken branches recorded into its own
 * overwrite ring by a backend (Intel PT, BTS, or the software stepper).
 *
 * Lifecycle:
 *	bt_target_launch() or bt_target_attach()
 *	loop: bt_target_cont() -> struct bt_stop; bt_target_capture() per thread
 *	then one of bt_target_finish() (let it meet its fate), bt_target_detach()
 *	(leave it running as before), bt_target_kill()
 *	bt_target_free()
 *
 * The target is sacred: detach restores every byte btrace wrote, keeps
 * pending signals and leaves no thread stopped.  bt_target_free() of a
 * target still attached detaches it (or kills it if btrace launched it and
 * it never ran free; see BT_TARGET_KILL_ON_FREE).
 *
 * A bt_target is used from one thread; only bt_target_interrupt() may be
 * called from elsewhere (a signal handler).
 */

enum bt_backend {
	BT_BACKEND_AUTO = 0,	/* pt, then bts, then soft (backend.c) */
	BT_BACKEND_PT,
	BT_BACKEND_BTS,
	BT_BACKEND_SOFT,
	BT_BACKEND_MAX
};

enum bt_soft_mode {
	BT_SOFT_RECORD = 0,	/* translated code records in the process */
	BT_SOFT_FAST,		/* stop only where the path is decided at run time */
	BT_SOFT_STEP,		/* single-step every instruction (the reference) */
};

struct bt_target_opts {
	size_t size;		/* sizeof(struct bt_target_opts), for growth */
	int backend;		/* enum bt_backend */
	int soft_mode;		/* enum bt_soft_mode */
	size_t buffer_size;	/* per-thread ring bytes, power of two; 0: default */
	int follow_fork;	/* trace children of fork/vfork too (their
				   threads join the target; stops in them are
				   reported, their exits are not); without it
				   a child goes free, our int3s taken out */
	const char *const *only;	/* module globs to trace, NULL-terminated */
	const char *const *exclude;	/* module globs not to trace */
	const char *from_sym;	/* run natively until this symbol, then trace */
	const char *until_sym;	/* stop when this symbol executes */
	/*
	 * A fault of the program's own code (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
	 * SIGTRAP with si_code > 0, not sent by a process) stops
	 * bt_target_cont() with BT_STOP_SIGNAL even where the program
	 * handles it, before its handler runs, as GDB stops.  Without it
	 * such a fault is kept (bt_target_fault()) and the handler runs.
	 */
	int stop_at_fault;
	/*
	 * Soft record mode: the directory where the blocks each program
	 * ran are kept for its next run, one file per build-id (see
	 * btrace(1), BTRACE_CODE_CACHE); NULL: $BTRACE_CODE_CACHE, else
	 * $XDG_CACHE_HOME/btrace/code, else ~/.cache/btrace/code; "":
	 * none kept.
	 */
	const char *code_cache;
};

#define BT_DEFAULT_BUFFER_SIZE (1u << 20)

enum bt_stop_reason {
	BT_STOP_NONE = 0,
	BT_STOP_SIGNAL,		/* a fatal signal is about to be delivered */
	BT_STOP_EXIT,		/* the process is exiting (still inspectable) */
	BT_STOP_INTERRUPT,	/* bt_target_interrupt() or Ctrl-C */
	BT_STOP_BREAK,		/* a btrace breakpoint was hit */
	BT_STOP_KILLED,		/* gone already (SIGKILL from outside) */
	BT_STOP_STEP,		/* a step of bt_target_resume() completed */
};

struct bt_stop {
	int reason;		/* enum bt_stop_reason */
	pid_t tid;		/* the thread that stopped */
	int signal;		/* SIGNAL, KILLED, INTERRUPT: the signal */
	int si_code;		/* SIGNAL: from siginfo */
	int status;		/* EXIT: the exit status */
	int breakpoint;		/* BREAK: the breakpoint number */
	uint64_t pc;		/* where the thread stopped */
	uint64_t addr;		/* SIGNAL: si_addr for faults */
	/*
	 * SIGNAL, INTERRUPT: how a signal came, from its siginfo.  A fault
	 * of the program's (si_code > 0 and not SI_KERNEL) has addr; a
	 * signal sent by a process (si_code SI_USER, SI_TKILL, SI_QUEUE,
	 * si_code <= 0 in general) has the sender.  Trace files written
	 * before these fields load with sender 0: unknown.
	 */
	pid_t sender;		/* si_pid: who sent it, 0 unknown */
	uint32_t sender_uid;	/* si_uid */
	char sender_comm[16];	/* /proc/si_pid/comm as the signal was
				   taken, "" if that process was gone */
	int64_t value;		/* SI_QUEUE, SI_TIMER, SI_MESGQ: si_value */
};

/*
 * What si_code says of how signal @sig came, in words and as its name:
 * "address not mapped", "SEGV_MAPERR"; "sent with kill()", "SI_USER".
 * *@words and *@name are NULL when nothing is known of it.  Returns 1 when
 * the signal was sent by a process (stop->sender is meaningful), 2 for a
 * fault of the program's code (si_addr is meaningful), 0 otherwise.
 */
int bt_sigcode_describe(int sig, int si_code, const char **words,
			const char **name);

/*
 * Is @si (of signal @sig) a fault of the program's code: a synchronous
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGTRAP raised by an instruction
 * (si_code > 0, not SI_KERNEL), not one sent by a process?  1 or 0.
 */
int bt_signal_is_fault(int sig, const siginfo_t *si);

/*
 * A fault of the program's code that the program's own handler took
 * (a crash reporter, Redis's bug report, Python's faulthandler): the
 * thread's history up to the fault, kept while the handler runs on, so
 * that a crash the handler re-raises still shows where it began.
 */
struct bt_fault {
	struct bt_stop stop;	/* the fault, as the BT_STOP_SIGNAL stop
				   it would have been: tid, signal, si_code,
				   addr, pc (the faulting instruction) */
	struct bt_capture cap;	/* the thread's trace up to the fault */
	uint64_t after;		/* branch records since the fault (the
				   handler's and on, gaps included);
				   UINT64_MAX: unknown */
	uint64_t count;		/* faults the thread's handlers took */
	int after_lost;		/* records since the fault were lost
				   before they were written (a ring in
				   the process overflowed): the handler
				   ran more branches than after */
};

/* Release what @f owns (its capture); accepts NULL. */
void bt_fault_release(struct bt_fault *f);

struct bt_stats {
	uint64_t instructions;	/* instructions the backend saw, 0 if unknown */
	uint64_t branches;	/* taken branches recorded */
	uint64_t stops;		/* ptrace stops btrace caused or handled */
	uint64_t displaced;	/* soft fast mode: instructions run from a
				 * slot under an int3 of ours */
	uint64_t ring_bytes;	/* soft record mode: bytes of the process's
				 * rings taken into the histories (decoded
				 * when read; what the ring would overwrite
				 * first is dropped undecoded) */
	uint64_t ring_read;	/* soft record mode: bytes of them read from
				 * the process to decode them (only what was
				 * written since the last time) */
};

struct bt_target;

/*
 * Launch @argv[0] (searched in PATH) with @argv under tracing; it is stopped
 * at its first instruction when this returns.
 * Returns 0; -bte_noent if the program is not found, -bte_perm if not
 * executable, -bte_format if not an ELF file, -bte_invalid if @o asks for
 * what the backend cannot honour (enum bt_backend_cap), -bte_nosys if the
 * backend is not available here (nothing is left running in any failure
 * case).
 */
int bt_target_launch(struct bt_target **target, const struct bt_target_opts *o,
		     char *const argv[]);

/*
 * Attach to every thread of process @pid; they are stopped when this
 * returns.  Returns 0; -bte_noent (no such process, or a zombie), -bte_perm
 * (see bt_errdetail() for ptrace_scope or credentials), -bte_busy (already
 * traced by another debugger), -bte_invalid and -bte_nosys as
 * bt_target_launch() (before any ptrace request).
 */
int bt_target_attach(struct bt_target **target, const struct bt_target_opts *o,
		     pid_t pid);

/*
 * Resume every thread under tracing until the next stop, described in
 * *@stop.  All threads are stopped again when this returns.
 * Returns 0, or a negative bt_error if tracing itself failed.
 */
int bt_target_cont(struct bt_target *target, struct bt_stop *stop);

/*
 * Ask a running bt_target_cont() to stop soon (BT_STOP_INTERRUPT).
 * Async-signal-safe.  Called in the thread that runs bt_target_cont() (a
 * signal handler: Ctrl-C), it also wakes a wait on threads that run free
 * or sleep in a syscall; called from another thread, the request is seen
 * at the next ptrace stop of any traced thread.  Any stop that call returns
 * answers the request; one made between calls makes the next call return
 * BT_STOP_INTERRUPT at once.
 */
void bt_target_interrupt(struct bt_target *target);

/*
 * The last fault thread @tid's handler took (struct bt_fault), into *@f
 * (the caller releases it with bt_fault_release()).  Each such fault
 * replaces the one before; what the thread recorded before it is kept
 * whole however long the handler runs (the ring's part that held it is
 * copied out before it is overwritten).  With stop_at_fault none are kept.
 * Returns 1 with *@f filled; 0 if the thread took none (*@f zeroed);
 * -bte_noent for an unknown thread; -bte_nomem.
 */
int bt_target_fault(struct bt_target *target, pid_t tid, struct bt_fault *f);

/*
 * Copy thread @tid's trace out of its ring into @cap (see capture.h); the
 * caller releases it with bt_capture_release().
 * Returns 0, -bte_noent for an unknown thread.
 */
int bt_target_capture(struct bt_target *target, pid_t tid,
		      struct bt_capture *cap);

/* The threads traced now (up to @max into @tids); returns how many exist. */
size_t bt_target_threads(const struct bt_target *target, pid_t *tids,
			 size_t max);

/*
 * Every thread traced since launch or attach, in the order they came: those
 * traced now and those that ended (a thread gone keeps its ring, which
 * bt_target_capture() reads, while the gone threads' rings hold no more
 * than eight rings' worth, at least 64 MiB: past that the first gone has
 * its records dropped, counted lost).  Which threads have ended at a stop
 * is the scheduler's doing; which were created is the program's.  Up to
 * @max into @tids; returns how many there are.
 */
size_t bt_target_threads_all(const struct bt_target *target, pid_t *tids,
			     size_t max);

/* The process's id (its main thread's); 0 for a NULL @target. */
pid_t bt_target_pid(const struct bt_target *target);

/*
 * The process of thread @tid, traced now or ended: the target's own, or a
 * followed fork child (--follow-fork), whose symbols and code are its own
 * once it has exec'd.  0 for a thread never traced.
 */
pid_t bt_target_thread_pid(const struct bt_target *target, pid_t tid);

/*
 * The backend tracing @target: its enum bt_backend (BT_BACKEND_AUTO for a
 * NULL @target) and its name ("pt", "bts", "soft"; "?" for NULL).
 */
int bt_target_backend(const struct bt_target *target);
const char *bt_target_backend_name(const struct bt_target *target);

/*
 * Counters since launch or attach into *@stats (zeros for a NULL @target).
 * The instructions and branches are those decoded: what a backend held
 * undecoded in the threads' histories is decoded first.
 */
void bt_target_stats(struct bt_target *target, struct bt_stats *stats);

/* The ring size per thread in bytes, as the backend got it; 0 for NULL. */
size_t bt_target_buffer_size(const struct bt_target *target);

/*
 * Read target memory as the program sees it (btrace's breakpoints hidden).
 * Returns the bytes read (may be short at an unmapped page) or a negative
 * bt_error.
 */
ssize_t bt_target_read(struct bt_target *target, uint64_t addr, void *buf,
		       size_t len);

/*
 * The same in the memory of thread @tid's process (a followed fork child's
 * is its own).  -bte_noent for an unknown thread, -bte_exited for one gone.
 */
ssize_t bt_target_read_thread(struct bt_target *target, pid_t tid,
			      uint64_t addr, void *buf, size_t len);

/*
 * The pc of stopped thread @tid into *@pc.
 * Returns 0; -bte_invalid if the target is not stopped; -bte_noent for an
 * unknown thread; -bte_ptrace or -bte_exited if its registers cannot be
 * read.
 */
int bt_target_pc(struct bt_target *target, pid_t tid, uint64_t *pc);

/*
 * Breakpoints that stop bt_target_cont() with BT_STOP_BREAK (an int3 of
 * the debugger's kind in the process's address space; one at an address
 * that has one already returns that one's number).
 * Insert returns a positive breakpoint number; -bte_invalid for a NULL
 * @target; -bte_exited if the process is not traced; -bte_nomem; -bte_io
 * if the memory at @addr cannot be written.  Remove takes that number and
 * returns 0; -bte_invalid for a bad number; -bte_noent for one not
 * inserted; or the write's error (the breakpoint is gone all the same).
 */
int bt_target_break_insert(struct bt_target *target, uint64_t addr);
int bt_target_break_remove(struct bt_target *target, int number);

/*
 * Let a stopped target go on as it would have without btrace: deliver the
 * pending fatal signal, or let the exit complete; stop tracing and reap it.
 * *@wstatus gets its wait status.  Returns 0 or a negative bt_error.
 */
int bt_target_finish(struct bt_target *target, int *wstatus);

/*
 * Stop tracing and leave the process running exactly as before (every
 * int3 out, a pending signal delivered, no thread left stopped).
 * Returns 0 (also for a target no longer traced); -bte_invalid for NULL;
 * else the first error met stopping the threads, taking the int3s out or
 * detaching (-bte_ptrace, -bte_io): the rest is done all the same.
 */
int bt_target_detach(struct bt_target *target);

/*
 * Stop tracing and leave the process stopped, for another debugger to
 * attach (the GDB plugin's hand-back, docs/gdb.md): every thread is left
 * in a SIGSTOP group stop, and the signal of the last stop is not
 * delivered - a fault re-executes and faults again once resumed; the
 * caller re-sends a signal that was sent (abort, kill).
 * Returns 0 or a negative bt_error.
 */
int bt_target_detach_stopped(struct bt_target *target);

/*
 * SIGKILL the process and reap it.
 * Returns 0 (also for a target already gone); -bte_invalid for NULL.
 */
int bt_target_kill(struct bt_target *target);

/* Free; detaches (attached) or kills (launched) a target still traced. */
void bt_target_free(struct bt_target *target);

/*
 * ---- For debuggers (btrace gdbserver) ----
 *
 * What a debugger needs beyond watching: every signal reported, threads
 * resumed one by one (some stepped, some held), registers and memory
 * written, and a thread's trace read a piece at a time.  The rules of
 * the target stay: btrace's own breakpoints and the backend's changes to
 * the process stay invisible, and every instruction run is traced.
 */

/*
 * Signals in @mask (bit sig - 1) stop bt_target_cont() and
 * bt_target_resume() with BT_STOP_SIGNAL whenever they are about to reach
 * the program, even when it handles or ignores them.  The default, 0,
 * stops only for the signals that would kill it.  The signal is then
 * pending in its thread: bt_target_cont() delivers it,
 * bt_target_resume() delivers what its caller says.
 */
void bt_target_stop_signals(struct bt_target *target, uint64_t mask);

enum bt_resume_action {
	BT_RESUME_CONT = 0,	/* run */
	BT_RESUME_STEP,		/* one instruction, then BT_STOP_STEP */
	BT_RESUME_STOP,		/* stay stopped */
};

/* What one thread does in bt_target_resume(). */
struct bt_resume {
	pid_t tid;		/* the thread; 0: every thread not listed */
	int action;		/* enum bt_resume_action */
	int signal;		/* deliver it as the thread resumes (0: none);
				   replaces the signal the thread stopped with */
};

/*
 * bt_target_cont() with an action per thread: the first entry of the
 * @n in @resume whose tid matches a thread (or is 0) says what it does;
 * a thread no entry matches stays stopped.  Threads created meanwhile run.
 * A stepped thread stops with BT_STOP_STEP once its instruction completed
 * (a signal, a breakpoint or another thread's stop may come first); the
 * instruction is traced as any other.  A signal that stopped a thread
 * before and was reported is delivered only if its entry says so; one
 * collected but never reported is reported first, before anything runs.
 * Returns as bt_target_cont(); -bte_invalid if no thread would run.
 */
int bt_target_resume(struct bt_target *target, const struct bt_resume *resume,
		     size_t n, struct bt_stop *stop);

/*
 * Registers of stopped thread @tid as ptrace's PTRACE_GETREGSET gives
 * them: @type is the note type (NT_PRSTATUS: struct user_regs_struct,
 * NT_PRFPREG: struct user_fpregs_struct, NT_X86_XSTATE: the XSAVE area),
 * into @buf of *@size bytes; *@size is set to the bytes filled.
 * Returns 0; -bte_noent (no such thread), -bte_invalid (not stopped),
 * -bte_nosys (the kernel has no such set), -bte_ptrace.
 */
int bt_target_get_regset(struct bt_target *target, pid_t tid, int type,
			 void *buf, size_t *size);

/*
 * Set them.  A new pc for a traced thread is a discontinuity of its
 * history: the backend records a gap (BT_GAP_MOVED) where it can.
 * Returns as bt_target_get_regset().
 */
int bt_target_set_regset(struct bt_target *target, pid_t tid, int type,
			 const void *buf, size_t size);

/*
 * The siginfo of the signal stopped thread @tid holds, the one it gets
 * when resumed (as PTRACE_GETSIGINFO gives it at a signal-delivery-stop),
 * into *@si.  Returns 0; -bte_noent (no such thread, or it holds no
 * signal), -bte_invalid (not stopped).
 */
int bt_target_siginfo(struct bt_target *target, pid_t tid, siginfo_t *si);

/*
 * Write @len bytes at @addr of the stopped target's memory, as the
 * program would see them afterwards: btrace's breakpoints stay in over
 * the new bytes, and what the backend knew of the code there (decoded
 * blocks, translations) is forgotten.  Writes read-only pages too (a
 * debugger's breakpoints, patched code).
 * Returns the bytes written (short at an unmapped page) or a negative
 * bt_error (-bte_io, -bte_exited).
 */
ssize_t bt_target_write(struct bt_target *target, uint64_t addr,
			const void *buf, size_t len);

/*
 * The trace of thread @tid recorded since position *@pos, as
 * bt_target_capture() gives it (0: everything the ring holds); *@pos is
 * set to the position after it, for the next call.  The cost follows
 * what is new, not the ring's size.  With @cap NULL only *@pos is set:
 * the position now.
 * Returns 0; 1 if records after *@pos were overwritten before this call
 * (@cap then starts at the oldest record still there); -bte_nosys for a
 * backend whose trace has no positions (pt, bts: the hardware's ring);
 * -bte_noent for an unknown thread.
 */
int bt_target_capture_since(struct bt_target *target, pid_t tid,
			    uint64_t *pos, struct bt_capture *cap);

/*
 * ---- Non-stop: one thread at a time (GDB's non-stop mode) ----
 *
 * Each thread is resumed and stopped on its own; a stop is one thread's,
 * the others go on running (or stay stopped) meanwhile.  These calls never
 * wait for threads that run; the caller polls for stops (in a loop that
 * also watches its own input).  The rest of the API works on stopped
 * threads as ever; memory and breakpoints may be written while threads
 * run between bt_target_ns_pause() and bt_target_ns_unpause().  Do not mix
 * with bt_target_cont() or bt_target_resume() while threads run.
 */

/*
 * Resume each stopped thread the first matching entry of @resume names
 * (tid 0: any) with its action: BT_RESUME_CONT, BT_RESUME_STEP (then
 * BT_STOP_STEP), or BT_RESUME_STOP (a running thread is stopped as by
 * bt_target_ns_stop()).  Threads no entry names, and running threads given
 * CONT or STEP, are left as they are.  A signal is delivered as the
 * thread resumes, as by bt_target_resume().  Returns 0; -bte_invalid (a
 * bad signal), -bte_exited, or the failure of a restart.
 */
int bt_target_ns_resume(struct bt_target *target,
			const struct bt_resume *resume, size_t n);

/*
 * Stop running thread @tid (0: every running thread) and wait until it
 * has: its stop is then the next bt_target_ns_poll() gives (BT_STOP_INTERRUPT
 * with signal 0; or whatever stopped it first, a breakpoint, a signal).
 * Returns 0; -bte_noent (no such thread), -bte_exited, or < 0.
 */
int bt_target_ns_stop(struct bt_target *target, pid_t tid);

/*
 * The next stop of a thread, without waiting: 1 with *@stop filled (that
 * thread stays stopped, the others run on), 0 if none now.  The process's
 * end is a stop as in bt_target_cont().  Returns < 0 if tracing failed.
 */
int bt_target_ns_poll(struct bt_target *target, struct bt_stop *stop);

/*
 * Stop every running thread for a moment (a stop one meets on the way is
 * kept for bt_target_ns_poll()), and resume those it stopped.  Nothing to
 * do while no thread runs.  Return 0 or < 0.
 */
int bt_target_ns_pause(struct bt_target *target);
int bt_target_ns_unpause(struct bt_target *target);

enum bt_thread_run_state {
	BT_THREAD_STOPPED = 0,	/* in a stop: registers can be read */
	BT_THREAD_RUNNING,	/* resumed */
	BT_THREAD_ENDING,	/* past its exit, running to its end */
};

/* The enum bt_thread_run_state of thread @tid; -bte_noent if unknown. */
int bt_target_thread_state(const struct bt_target *target, pid_t tid);

/* Did btrace start the process (1) or attach to it (0)? */
int bt_target_launched(const struct bt_target *target);

/*
 * "auto", "pt", "bts", "soft" ("?" for an unknown one); and back: returns
 * the enum bt_backend, or -bte_invalid for an unknown name.
 */
const char *bt_backend_name(int backend);
int bt_backend_parse(const char *name);

/*
 * "record", "fast", "step" ("?" for an unknown one); and back: returns the
 * enum bt_soft_mode, or -bte_invalid for an unknown name.
 */
const char *bt_soft_mode_name(int soft_mode);
int bt_soft_mode_parse(const char *name);

/*
 * What a backend honours, one bit each: the options of struct
 * bt_target_opts that not every backend can keep, and the calls whose
 * answer depends on the backend.  A launch or attach whose options ask for
 * one the backend lacks fails with -bte_invalid before anything runs; auto
 * passes over a backend that lacks one.
 */
enum bt_backend_cap {
	BT_CAP_FILTER = 1 << 0,		/* only, exclude: module filters */
	BT_CAP_FROM = 1 << 1,		/* from_sym */
	BT_CAP_UNTIL = 1 << 2,		/* until_sym */
	BT_CAP_POSITIONS = 1 << 3,	/* bt_target_capture_since() */
};

/*
 * One row of the backend registry: a backend, for soft one of its modes.
 * The rows come in the order --backend auto tries them (hardware first,
 * then software, its default mode first); static, never freed.
 */
struct bt_backend_info {
	int backend;		/* enum bt_backend */
	int soft_mode;		/* soft: enum bt_soft_mode; -1 for the others */
	const char *name;	/* "pt", "bts", "soft" */
	const char *mode;	/* soft: "record", "fast", "step"; NULL others */
	const char *about;	/* one line for help and doctor */
	unsigned caps;		/* enum bt_backend_cap bits */
};

/* "filters", "from", "until", "positions": @cap's name (one bit); "?". */
const char *bt_backend_cap_name(unsigned cap);

/* Row @i of the registry; NULL past its end. */
const struct bt_backend_info *bt_backend_info(size_t i);

/*
 * The capabilities of @backend in @soft_mode (which only soft reads); for
 * auto, those of any backend it may take with that mode (it takes one that
 * honours the options, so what one of them has, auto has).  0 for an
 * unknown backend.
 */
unsigned bt_backend_caps(int backend, int soft_mode);

/* The capabilities that @o asks for: BT_CAP_FILTER if it has a filter... */
unsigned bt_target_opts_caps(const struct bt_target_opts *o);

/*
 * The backends --backend auto tries, in its order, into @ids (at most @max
 * of them); returns how many there are.
 */
size_t bt_backend_auto_order(int *ids, size_t max);

/*
 * Can @backend trace on this machine?  0 if yes; otherwise a negative
 * bt_error and a one-line reason with its remedy in @why.
 */
int bt_backend_probe(int backend, char *why, size_t size);

#endif /* BTRACE_TARGET_H */
