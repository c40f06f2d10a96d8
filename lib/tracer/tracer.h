/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TRACER_H
#define BTRACE_TRACER_H

/*
 * The traced process as lib/tracer/ keeps it, shared with the backends
 * (backend.h).  Not part of the public API.
 */

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "btrace/insn.h"
#include "btrace/ring.h"
#include "btrace/target.h"

struct bt_aspace;
struct bt_ns;
struct bt_target;

enum bt_thread_state {
	BT_TH_STOPPED = 0,	/* in a ptrace-stop that the tracer has seen */
	BT_TH_RUNNING,		/* resumed: a waitpid report is due */
	BT_TH_LISTENING,	/* group-stopped, restarted with PTRACE_LISTEN */
	BT_TH_GONE,		/* exited and reaped; kept for its ring */
};

/*
 * On a signal handler's entry rsp points at the rt_sigframe: the return
 * address (sa_restorer), then the ucontext whose mcontext holds the
 * interrupted rip: uc_flags, uc_link, uc_stack (40 bytes), then gregs
 * r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.  That rip is where
 * the handler's return goes: a restarted system call's own address.
 */
#define BT_SIGFRAME_RIP (8 + 40 + 16 * 8)

/* Why a stopped thread is stopped: how it must be resumed. */
enum bt_thread_stop {
	BT_TS_NONE = 0,
	BT_TS_TRAP,	/* a SIGTRAP the backend consumed (its own step) */
	BT_TS_SIGNAL,	/* signal-delivery-stop; the signal is in th->si */
	BT_TS_EVENT,	/* PTRACE_EVENT_* stop other than EXIT and STOP */
	BT_TS_EXIT,	/* PTRACE_EVENT_EXIT: resume lets it die */
	BT_TS_INTERRUPT,/* PTRACE_EVENT_STOP from PTRACE_INTERRUPT, or new */
	BT_TS_GROUP,	/* group-stop (PTRACE_EVENT_STOP with a stop signal) */
};

/* A thread's history held back from its ring (journal.c). */
struct bt_journal {
	uint8_t *buf;
	size_t start, len, cap;	/* its entries: [start, len) of buf */
	uint64_t min;		/* bytes of ring records they make, at least */
	int cut;		/* entries before them were dropped */
	int settling;
};

struct bt_thread {
	pid_t tid;
	pid_t tgid;		/* its process: the target's, or a followed child */
	int state;		/* enum bt_thread_state */
	int why;		/* enum bt_thread_stop, while stopped */
	int event;		/* PTRACE_EVENT_* of the last event stop */
	/*
	 * The signal to inject on the next resume (0: none), with its
	 * siginfo.  sig_checked says the tracer has judged it already (passed
	 * on, or reported as a stop); an unchecked one was collected while
	 * stopping all threads and is judged by the next bt_target_cont().
	 */
	int sig;
	int sig_checked;
	siginfo_t si;
	int group_sig;		/* BT_TS_GROUP: the stop signal */
	int interrupting;	/* PTRACE_INTERRUPT sent, its stop not seen */
	int fresh;		/* new thread: its first stop not seen yet */
	int parked;		/* a fork child not followed, until let go */
	int exiting;		/* passed PTRACE_EVENT_EXIT: dying */
	uint64_t at_break;	/* stopped by this breakpoint: step over it */
	/* bt_target_resume(): this run, the thread stays stopped (hold) or
	   is stepped (stepping, until its step completed) */
	int hold;
	int stepping;
	/* clock.c: CLOCK_MONOTONIC at its last stop, at the last time record
	   in its ring, and of a stop not written yet (0: none) */
	uint64_t stop_ns, time_ns, owed_ns;
	struct bt_ring *ring;
	struct bt_journal jrn;	/* journal.c: held history, not in ring yet */
	/*
	 * The last fault its handler took (fault.c), and the ring position
	 * a record must not reach before what the ring held then is copied
	 * out (0: none).
	 */
	struct bt_fault_keep *fault;
	uint64_t fault_guard;
	/*
	 * journal.c: branch records written into its ring (gaps included),
	 * and the times records were lost before they were written (an
	 * overflow gap of the backend's, held parts dropped undecoded)
	 */
	uint64_t nbranch, nlost;
	cpu_set_t *pin_mask;	/* pin.c: its mask before the pin, or NULL */
	void *bk;		/* backend's per-thread data */
};

/*
 * A debugger's breakpoint: its number here, its int3 (kind BT_BP_USER) in
 * the address spaces (aspace.h).
 */
struct bt_break {
	uint64_t addr;
	int number;		/* > 0; 0 for a free slot */
	int inserted;		/* its int3 is in the process's memory */
	/* 0: in every process of the tree (set in the first one, inherited
	 * by fork); else one location of @number in that process only (a
	 * program exec'd in the tree: --until found in its own modules) */
	pid_t pid;
};

/* pin.c: the target's threads and the tracer bound to one CPU */
struct bt_pin {
	/* the backend's word that @th runs where every system call that
	   could see the pin is seen (NULL: never pin) */
	int (*ok)(struct bt_target *t, struct bt_thread *th);
	int mode;		/* BTRACE_PIN's (pin.c) */
	int never;		/* the program set its own mask */
	int near;		/* stops in a row that came soon after a run */
	size_t n;		/* threads pinned, 0: none */
	uint64_t last;		/* CLOCK_MONOTONIC ns at the last stop */
	uint64_t ran, busy;	/* moving averages: the target's run up to a
				   stop, the tracer's work after it (ns) */
	cpu_set_t orig;		/* the first thread's mask before */
	cpu_set_t self;		/* the tracer's */
};

struct bt_target {
	pid_t pid;
	pid_t tracer;		/* the thread that may call ptrace */
	int launched;		/* we forked it: kill rather than detach */
	int traced;		/* threads attached and not yet released */
	int gone;		/* every thread has exited and been reaped */
	int wstatus;		/* wait status once gone */
	int have_wstatus;
	struct bt_target_opts opts;
	const struct bt_backend_ops *ops;
	void *bk;		/* backend's per-target data */

	struct bt_thread **threads;
	size_t nthreads, cap;
	/* gone threads whose rings count against the budget (thread.c), the
	 * first gone first from gone_first on, and the bytes they hold */
	struct bt_thread **gone_q;
	size_t gone_first, ngone, gone_cap, gone_held;

	struct bt_break *breaks;
	size_t nbreaks;
	int next_break;

	/* The memory and int3s of the process, and of followed fork children */
	struct bt_aspace *as;
	struct bt_aspace **forks;
	size_t nforks;

	struct bt_disasm *dis;
	struct bt_stats stats;
	struct bt_stop last;	/* the last stop reported */
	pid_t exit_tid;		/* the thread that called exit_group */
	unsigned long exit_msg;	/* PTRACE_EVENT_EXIT message: wait status */
	int exit_reported;	/* BT_STOP_EXIT (or KILLED) was reported */
	int last_wstatus;	/* of the last thread reaped */
	volatile sig_atomic_t interrupt;
	uint64_t stop_sigs;	/* bt_target_stop_signals() */
	int planned;		/* bt_target_resume() runs: signals as told */
	struct bt_ns *ns;	/* non-stop's queue and pauses (nonstop.c) */
	uint64_t spin_ns;	/* how long the next wait polls (wait.c) */
	struct bt_pin pin;
};

/*
 * The address space (aspace.h) of process @tgid, the target's (@tgid 0 or
 * the target's pid) or a followed fork child's: where its memory is read
 * and written and its int3s kept.  Made at first use; NULL if there is no
 * memory for it (-bte_nomem in bt_errdetail()).
 */
struct bt_aspace *bt_target_aspace(struct bt_target *t, pid_t tgid);

/*
 * The parent of process @pid, or 0.  A followed fork child's at its first
 * stop is the process that forked it (stopped at its fork event).
 */
pid_t bt_proc_parent(pid_t pid);

/*
 * Do processes @a and @b share their memory (a vfork child and its
 * parent until the child execs or exits)?  kcmp(2); 0 where it cannot
 * tell (no kcmp in the kernel).
 */
int bt_proc_shares_vm(pid_t a, pid_t b);

/* The process of @th: its tgid; the target's for NULL or one not known. */
pid_t bt_thread_tgid(const struct bt_target *t, const struct bt_thread *th);

/* The thread @tid (not gone), or NULL. */
struct bt_thread *bt_thread_find(const struct bt_target *t, pid_t tid);

/* A stopped thread of the target's own process, or NULL. */
struct bt_thread *bt_thread_stopped(const struct bt_target *t);

/* Registers of stopped thread @th.  0 or -bte_ptrace/-bte_exited. */
int bt_thread_regs(struct bt_thread *th, struct user_regs_struct *regs);

/* The thread's pc (rip). */
int bt_thread_pc(struct bt_thread *th, uint64_t *pc);

/*
 * Read up to @len bytes of target memory at @addr as the program sees
 * them (breakpoint bytes hidden), through any live thread.
 */
ssize_t bt_target_mem(struct bt_target *t, uint64_t addr, void *buf,
		      size_t len);

/* The same through thread @th: its own process's memory (followed forks). */
ssize_t bt_thread_mem(struct bt_target *t, struct bt_thread *th,
		      uint64_t addr, void *buf, size_t len);

/*
 * Thread @tid of @t, in a ptrace-stop, in *@out; or -bte_invalid (no
 * target, not stopped) or -bte_noent (no such thread), with the reason.
 */
int bt_stopped_thread(struct bt_target *t, pid_t tid, struct bt_thread **out);

/* Append a gap (enum bt_gap_reason) from @from to @to to @th's ring. */
/* Thread @tid, live or gone (a gone thread keeps its ring), or NULL. */
struct bt_thread *bt_thread_find_any(const struct bt_target *t, pid_t tid);
/* A thread of process @tgid not gone, or NULL (its threads all are). */
struct bt_thread *bt_process_thread(const struct bt_target *t, pid_t tgid);

/*
 * Copy @view of @th's ring into @cap (BT_FMT_SOFT): 0, with cap->status
 * set where the copy found torn or corrupt records, or < 0.
 */
int bt_thread_ring_capture(struct bt_thread *th, struct bt_ring_view *view,
			   struct bt_capture *cap);

int bt_thread_gap(struct bt_thread *th, uint64_t from, uint64_t to,
		  int reason);

/*
 * pin.c: while the target's stops come in bursts, its threads and the
 * tracer run on one CPU.  bt_pin_allow() is a backend's: @ok says
 * whether a thread runs where the system calls that would see the pin
 * are seen, and released first (bt_pin_release(): @for_good where the
 * program set its own mask).  bt_pin_stop() is the wait's, at each stop:
 * the wait began at @start_ns, the stop came at @end_ns.
 */
void bt_pin_allow(struct bt_target *t,
		  int (*ok)(struct bt_target *t, struct bt_thread *th));
void bt_pin_release(struct bt_target *t, int for_good);
void bt_pin_stop(struct bt_target *t, uint64_t start_ns, uint64_t end_ns);

/* clock.c: CLOCK_MONOTONIC now, in ns. */
uint64_t bt_clock_ns(void);

/*
 * clock.c: a (TSC, CLOCK_MONOTONIC ns) pair read together, the tightest
 * of a few reads: how TSC values (the recorder's, PT's) are tied to the
 * history's clock.
 */
void bt_clock_tsc_pair(uint64_t *tsc, uint64_t *ns);

/*
 * Append a BT_REC_TIME to @th's ring: it was @ns (CLOCK_MONOTONIC)
 * @ninsn instructions after its last branch record.  Returns 0, or what
 * bt_ring_write() returns.
 */
int bt_thread_time(struct bt_thread *th, uint64_t ns, uint32_t ninsn,
		   uint32_t flags);

/*
 * The time of @th's stop (th->stop_ns) into its ring, @ninsn instructions
 * after its last branch, when it ran long enough since the last time
 * written (else it is owed); bt_thread_time_owed(), before the branches
 * of a stop, writes an owed one at @ninsn if the thread ran long enough
 * since then.  Never fail (a time lost is interpolated over).
 */
void bt_thread_time_stop(struct bt_thread *th, uint32_t ninsn);
void bt_thread_time_owed(struct bt_thread *th, uint32_t ninsn);
/* The same with a grain of one's own (step mode: a stop every instruction). */
void bt_thread_time_stop_every(struct bt_thread *th, uint32_t ninsn,
			       uint64_t grain);
void bt_thread_time_owed_every(struct bt_thread *th, uint32_t ninsn,
			       uint64_t grain);

/*
 * journal.c: a record of @type for @th's history: into its ring, or, while
 * the thread's backend holds part of its history not decoded yet, behind
 * it.  Returns 0, or what bt_ring_write() returns.
 */
int bt_thread_put(struct bt_thread *th, uint16_t type, const void *payload,
		  size_t len);

/*
 * Hold a part of @th's history, for its backend's replay() to decode when
 * the history is read (bt_thread_settle): bt_thread_hold_room() gives
 * room for @len bytes of it (NULL: no memory), bt_thread_hold() puts the
 * first @len of them, written there, behind what is held; decoded, they
 * make @min bytes of ring records at least.  What is held before entries
 * that make more than the ring keeps is dropped undecoded, counted lost.
 * bt_thread_held(): the bytes held, records behind them included.
 */
void *bt_thread_hold_room(struct bt_thread *th, size_t len);
void bt_thread_hold(struct bt_thread *th, size_t len, uint64_t min);
size_t bt_thread_held(const struct bt_thread *th);

/* Write what @th's history holds into its ring, in order (before it is
 * read, or before what the backend needs to decode it goes). */
void bt_thread_settle(struct bt_target *t, struct bt_thread *th);
void bt_thread_journal_free(struct bt_thread *th);

/*
 * clock.c: @th's history holds a time record of @ns not written yet (in a
 * held part): the time records of its stops are judged from it.
 */
void bt_thread_time_seen(struct bt_thread *th, uint64_t ns);

/* Write a BT_REC_TIME as bt_thread_time() without judging the ones after
 * from it (a held part's, which bt_thread_time_seen() judged by). */
int bt_thread_time_put(struct bt_thread *th, uint64_t ns, uint32_t ninsn,
		       uint32_t flags);

/* Append one branch record to @th's ring; counts it in the stats. */
int bt_thread_record(struct bt_target *t, struct bt_thread *th,
		     uint64_t from, uint64_t to, uint32_t ninsn, int kind,
		     int flags);

/*
 * Run system call @nr(@args) in stopped thread @th, through the syscall
 * instruction (0f 05) at @insn, and put the thread's registers back.  @th
 * must be stopped where no system call is under way: at a SIGTRAP its
 * backend consumed (BT_TS_TRAP).  Other threads go on running.  A signal
 * that arrives meanwhile is sent again afterwards (tgkill), to be judged at
 * its next stop; an exit is recorded as the stop loop records any other.
 * Returns 0 with the kernel's return value in *@result (a negative errno
 * on failure); -bte_exited (errno ESRCH) if the thread ended; -bte_busy if
 * a PTRACE_INTERRUPT of @th is outstanding (its stop is the stop loop's
 * to see).
 * The rounds of stepping are ptrace stops: counted in the stats.
 */
int bt_thread_syscall(struct bt_target *t, struct bt_thread *th,
		      uint64_t insn, long nr, const uint64_t args[6],
		      int64_t *result);

/*
 * @th stopped at a clone or fork event of its own with a
 * PTRACE_INTERRUPT outstanding (the stop-all of a letting go came while it
 * made the call): let the call return, which stops it at once, before any
 * instruction runs (the interrupt's stop, or the trap of a step at the
 * call's end where none was outstanding any more).  0 with @th stopped
 * there (BT_TS_INTERRUPT or BT_TS_TRAP: a system call of btrace's can run),
 * -bte_busy if it is not such a thread, or another stop came (collected).
 */
int bt_thread_event_out(struct bt_target *t, struct bt_thread *th);

/*
 * Before @th is resumed or let go with @sig: the signal goes with the
 * siginfo it came with (th->si, read at its stop: its sender, sigqueue's
 * value), not one the kernel makes up for a stop of btrace's it is given
 * at (the trap of a step that walked the thread out of the translation).
 */
void bt_thread_give_siginfo(struct bt_thread *th, int sig);

/*
 * The one place a stopped thread is restarted (strace's ptrace_restart()):
 * ptrace @op (PTRACE_CONT, PTRACE_SINGLESTEP, PTRACE_LISTEN, ...) says
 * how, @sig is the signal delivered (0: none) with its own siginfo
 * (bt_thread_give_siginfo()).  The thread's state is the caller's to set.
 * Returns 0, -bte_exited (errno ESRCH) if the thread is no longer in a
 * ptrace-stop (killed meanwhile: waitpid reports its end), or -bte_ptrace.
 */
int bt_thread_restart(struct bt_thread *th, int op, int sig);
/* Stopped @th goes on with @sig, the debugger's choice (loop.c). */
int bt_thread_resume_signal(struct bt_target *t, struct bt_thread *th,
			    int sig);

/*
 * One single step of stopped thread @th, waited for.  Returns 0 when it
 * trapped (siginfo in *@si), a signal number when that signal stopped it
 * instead (dequeued, not delivered), -bte_exited if it ended.  A
 * PTRACE_INTERRUPT of @th still outstanding is taken on the way.  A
 * ptrace stop, counted.
 */
int bt_thread_step(struct bt_target *t, struct bt_thread *th, siginfo_t *si);

/*
 * Signals that reached a thread while btrace stepped it for its own ends
 * (a system call of btrace's, a walk out of the recorder's translation):
 * each is sent again once the steps are done, to be judged at its next
 * stop: a standard one once however often it came (the kernel keeps one
 * pending), a real-time one as often as it came, in order.  With the
 * siginfo it came with where the kernel lets another process queue one
 * (si_code < 0 and not SI_TKILL: sigqueue's value and sender, a timer's,
 * an AIO's); else (kill(), tgkill(), the kernel's own) with tgkill, so the
 * sender reads as btrace.
 */
#define BT_RESEND_MORE	16

struct bt_resend {
	uint64_t mask;
	siginfo_t si[64];
	/* a real-time signal is queued as often as it was sent: each
	 * instance after its first, in order (BT_RESEND_MORE at most) */
	siginfo_t more[BT_RESEND_MORE];
	unsigned nmore;
};

void bt_resend_init(struct bt_resend *r);
void bt_resend_add(struct bt_resend *r, int sig, const siginfo_t *si);
void bt_resend_flush(struct bt_resend *r, pid_t tgid, pid_t tid);

/*
 * The backend for @o into *@ops (backend.c).  Returns 0, or -bte_nosys /
 * -bte_perm with the reason in bt_errdetail().
 */
struct bt_backend_ops;
int bt_backend_select(const struct bt_target_opts *o,
		      const struct bt_backend_ops **ops);

/*
 * A location of breakpoint @number (0: a new number) at @addr, in process
 * @pid only (a program exec'd in the tree, at an address of its own), or
 * with @pid 0 in every process.  Returns the number, or < 0.
 */
int bt_target_break_insert_in(struct bt_target *t, pid_t pid, uint64_t addr,
			      int number);

#endif /* BTRACE_TRACER_H */
