/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_RECORDER_H
#define BTRACE_RECORDER_H

/*
 * The recorder (BT_SOFT_RECORD): threads run translated copies of the
 * program's code that write their own branches into per-thread overwrite
 * rings inside the process (rec_xlate.h, rec_ring.h).  A thread stops only
 * where no translation exists yet (a lookup miss), where its ring wraps,
 * and where the translation must leave.
 *
 * This is the recorder's engine; lib/rec/backend.c makes it the backend
 * bt_backend_soft_record, which lends it what it knows (struct
 * bt_recorder_host) and hands a thread to the fast mode (backend/soft/
 * fast.h) wherever it is outside the translation: signals and their
 * handlers, sigreturn, clone, fork, exec and exit (each stepped), untraced
 * modules, and anything the translator refuses.
 * The contract:
 * - bt_recorder_enter() moves a stopped thread at an original pc into its
 *   translation; from then on the thread is "in" (bt_recorder_in()).
 * - Every stop of a thread that is in goes first to bt_recorder_trap()
 *   (SIGTRAP) or bt_recorder_fault() (other signals): the recorder
 *   consumes its own.
 * - bt_recorder_leave() brings a thread that is in back to the program's
 *   own pc and registers, its ring decoded into th->ring through the
 *   host's callbacks (so the history stays one, in order, with what the
 *   fast mode records itself).  The backend calls it before a signal is
 *   judged, when a stop is reported, before a capture and before detach.
 * - A thread may leave natively for untraced code (the host's untraced()
 *   says where): it stays "in" until its next stop, where
 *   bt_recorder_trap() (then BT_RECORDER_NOT_OURS), bt_recorder_fault() or
 *   bt_recorder_leave() find it outside every zone, decode its ring and
 *   hand it to the host's native(), out.
 * - Nothing the program can see holds a translated address once a thread
 *   has left: return addresses pushed are the original ones, and a fault
 *   in translated code is reported at the original instruction.
 *
 * The engine's files, along DynamoRIO's seams: rec_cache.c (the process's
 * memory, decoded blocks, zones of translations and their points, the
 * lookup tables), rec_link.c (translating, linking, and invalidation of
 * code that goes away), rec_wp.c (code the program writes: pages
 * write-protected, the write caught), rec_slot.c (a thread's ring and control block),
 * rec_drain.c (the ring decoder, pure), rec_mirror.c (the tables as the
 * tracer maps them, written with a store), rec_dispatch.c (entering,
 * trapping, leaving, faults mapped back to the original pc), rec_native.c
 * (untraced code: native exits, the int3s native code comes back at),
 * rec_profile.c (the blocks each file ran, kept across runs: the code
 * cache), recorder.c (lifetime and threads); recorder_int.h holds what
 * they share.
 *
 * Internal to the library.
 */

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct bt_target;
struct bt_thread;
struct bt_recorder;

struct bt_recorder_host {
	/* May code at @addr run translated (traced)?  Its mapping's
	 * BT_MAP_* as the maps last said, 0 if not. */
	int (*translatable)(struct bt_target *t, uint64_t addr);
	/* Must translated code leave before @addr (a breakpoint, a hook)? */
	int (*stop_at)(struct bt_target *t, uint64_t addr);
	/* Changes whenever stop_at's answers may have changed. */
	uint64_t (*stops_version)(struct bt_target *t);
	/* The original code, btrace's int3s hidden; 0 or < 0. */
	int (*read)(void *t, uint64_t addr, void *buf, size_t len);
	/* @th's history is not continuous before @to (its ring started
	 * over); what the ring held is walked into the history itself
	 * (bt_recorder_replay) */
	void (*gap)(struct bt_target *t, struct bt_thread *th, uint64_t to,
		    int reason);
	/* The process's mappings of code may have changed. */
	void (*maps_changed)(struct bt_target *t);
	/* May a translation leave natively to @addr (untraced code)? */
	int (*untraced)(struct bt_target *t, uint64_t addr);
	/* Native code may run from now on: bt_recorder_native_on() and the
	 * host's own re-entry points (bt_recorder_reentry_add()). */
	void (*native_on)(struct bt_target *t);
	/* @th left its translation natively to @left_to: the host runs it. */
	void (*native)(struct bt_target *t, struct bt_thread *th,
		       uint64_t left_to);
	/* The instructions counted since @th's last branch, taken: they
	 * belong to the first branch of records held (NULL: none). */
	uint32_t (*acc_take)(struct bt_target *t, struct bt_thread *th);
	/* ... and given back: @n ran after the last branch written. */
	void (*acc_give)(struct bt_target *t, struct bt_thread *th,
			 uint32_t n);
};

/* Returns 0 or -bte_nomem; bt_recorder_free accepts NULL. */
int bt_recorder_alloc(struct bt_recorder **r, struct bt_target *t,
		      const struct bt_recorder_host *host);
void bt_recorder_free(struct bt_recorder *r);

/*
 * A followed fork child @child of @parent's process (rec_fork.c): a
 * recorder for it that knows what its copy of the memory holds (zones,
 * tables, slots), its stops at @stops_version (the child's
 * host stops_version).  Returns 0 or -bte_nomem.
 */
int bt_recorder_fork(const struct bt_recorder *parent, pid_t child,
		     uint64_t stops_version, struct bt_recorder **out);

/* The process a recorder serves: the target's (alloc) or another. */
void bt_recorder_set_pid(struct bt_recorder *r, pid_t pid);
pid_t bt_recorder_pid(const struct bt_recorder *r);

/*
 * The threads of process @pid run in @r's memory until bt_recorder_
 * guest_end() (a vfork child, before its exec or exit): they enter @r's
 * translations, each with a slot of its own, and their rings are
 * decoded into their own histories.  0, or -bte_nomem (too many: they
 * are stepped).
 */
int bt_recorder_guest_add(struct bt_recorder *r, pid_t pid);
/* @pid's threads left @r's memory: what their rings hold is decoded and
 * their slots are free again. */
void bt_recorder_guest_end(struct bt_recorder *r, pid_t pid);

/*
 * @r's process forked a followed child, which maps the same pages of the
 * tables: from now on @r writes them through /proc/PID/mem, as the
 * child's recorder does (rec_mirror.c).
 */
void bt_recorder_forked(struct bt_recorder *r);

/* A new address space (exec): translations, rings and tables are gone. */
void bt_recorder_reset(struct bt_recorder *r);

/*
 * Letting go, every thread out of its translation: unmap the zones, the
 * tables and the ring slots from the process (through a thread stopped at
 * a trap or an interrupt) and forget them.  Returns 0; -bte_busy if no
 * thread could run the system calls (they stay mapped, never run again),
 * -bte_io if one failed.
 */
int bt_recorder_release(struct bt_recorder *r);

/*
 * Move stopped @th, at original pc @regs->rip, into its translation
 * (translating what is needed, mapping the memory the first time).
 * @regs are updated and set.  Returns 1 if in; 0 if declined (nothing
 * changed: the host runs the thread its own way); < 0 on errors.
 */
int bt_recorder_enter(struct bt_recorder *r, struct bt_thread *th,
		      struct user_regs_struct *regs);

/* Is @th running translated? */
int bt_recorder_in(const struct bt_recorder *r, const struct bt_thread *th);

enum bt_recorder_verdict {
	BT_RECORDER_NOT_OURS = 0, /* not the recorder's: host handles it */
	BT_RECORDER_GO_ON,	/* consumed; resume it as it is (PTRACE_CONT) */
	BT_RECORDER_LEFT_STEP,	/* consumed; it left: step the instruction */
	BT_RECORDER_LEFT,	/* consumed; it left at an address the host
				   runs its own way (untraced, changing code) */
};

/* @th, in, stopped with SIGTRAP at @regs (read at this stop; the
 * recorder's to change): an exit of the translation? */
int bt_recorder_trap(struct bt_recorder *r, struct bt_thread *th,
		     const siginfo_t *si, struct user_regs_struct *regs);

/*
 * Did @th leave at an instruction it must step before it enters again
 * (bt_recorder_trap() said BT_RECORDER_LEFT_STEP, and no step was made
 * since)?  Asking forgets it.
 */
int bt_recorder_left_step(struct bt_recorder *r, struct bt_thread *th);

/*
 * @th stopped with another signal: its ring's guard page (if in), or a
 * write to a page of code the recorder write-protected (in or not: the
 * page's translations are dropped, and @th is left to step the write,
 * as after BT_RECORDER_LEFT_STEP)?  0 or 1.
 */
int bt_recorder_fault(struct bt_recorder *r, struct bt_thread *th,
		      const siginfo_t *si);

/*
 * Every thread is stopped (detach): pages of code the recorder
 * write-protected get back the program's own protection, through @th.
 */
void bt_recorder_unprotect(struct bt_recorder *r, struct bt_thread *th);

/* Bring @th (stopped, in) back to the program's own state; see above. */
void bt_recorder_leave(struct bt_recorder *r, struct bt_thread *th);

/*
 * @th stopped at its exit event (PTRACE_EVENT_EXIT), its memory still
 * there: what its ring got since its last stop is read.  It is not moved
 * (it can only run to its end): one that had left natively is out, one
 * killed inside its translation stays in.
 */
void bt_recorder_exiting(struct bt_recorder *r, struct bt_thread *th);

/* @th is gone or detached: what its ring still holds is decoded. */
void bt_recorder_thread_end(struct bt_recorder *r, struct bt_thread *th);

/*
 * What a thread's ring held at a drain is kept in its history undecoded
 * (bt_thread_hold()) until the history is read: decode the part of @len
 * bytes at @data into th->ring, its first branch @acc instructions later
 * than it says, after parts dropped with @cut; returns the instructions
 * after its last (the backend's replay()).  A recorder decodes its
 * threads' parts before the code they ran goes (invalidation, exec, its
 * end).
 */
uint32_t bt_recorder_replay(struct bt_recorder *r, struct bt_thread *th,
			    void *data, size_t len, uint32_t acc, int cut);

/*
 * The code in [@lo, @hi) changed (a debugger wrote it): its translations
 * are never entered again.
 */
void bt_recorder_invalidate(struct bt_recorder *r, uint64_t lo,
			    uint64_t hi);

/*
 * Untraced code (rec_native.c).  Native code may come back into
 * translated code from now on: translated calls' return sites get int3s of
 * the recorder's (BT_BP_RECORDER), which translations never see.  Returns
 * 1 the first time, 0 after.
 */
int bt_recorder_native_on(struct bt_recorder *r);

/* Does untraced code run natively in @r's process (above)? */
int bt_recorder_native(const struct bt_recorder *r);

/*
 * Native code ran before (a process before --from) but need not from now
 * on: the next native exit made turns it on again (the host's native_on).
 * Its int3s stay.
 */
void bt_recorder_native_off(struct bt_recorder *r);

/* One more such int3, at @addr (a traced function's entry).  0 or < 0. */
int bt_recorder_reentry_add(struct bt_recorder *r, uint64_t addr);

/*
 * @th is about to be stepped at @pc: an int3 of ours there is lifted
 * until bt_recorder_step_unlift() (at its next stop).
 */
void bt_recorder_step_lift(struct bt_recorder *r, struct bt_thread *th,
			   uint64_t pc);
void bt_recorder_step_unlift(struct bt_recorder *r, struct bt_thread *th);

/* @th (stopped, out) has another thread's control block at its gs base
 * (cloned by native code): it gets the program's value back. */
void bt_recorder_gs_own(struct bt_recorder *r, struct bt_thread *th,
			struct user_regs_struct *regs);

/* Blocks translated so far (statistics). */
uint64_t bt_recorder_blocks(const struct bt_recorder *r);

#endif /* BTRACE_RECORDER_H */
