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
 * handlers, sigreturn, clone, fork, exec and exit (each stepped), code that
 * may change, untraced modules, and anything the translator refuses.
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
 * - Nothing the program can see holds a translated address once a thread
 *   has left: return addresses pushed are the original ones, and a fault
 *   in translated code is reported at the original instruction.
 *
 * The engine's files, along DynamoRIO's seams: rec_cache.c (the process's
 * memory, decoded blocks, zones of translations and their points, the
 * lookup tables), rec_link.c (translating, linking, and invalidation of
 * code that goes away), rec_slot.c (a thread's ring and control block),
 * rec_drain.c (the ring decoder, pure), rec_dispatch.c (entering,
 * trapping, leaving, faults mapped back to the original pc), recorder.c
 * (lifetime and threads); recorder_int.h holds what they share.
 *
 * Internal to the library.
 */

#include <signal.h>
#include <stdint.h>
#include <sys/user.h>

struct bt_target;
struct bt_thread;
struct bt_recorder;

struct bt_recorder_host {
	/* May code at @addr run translated (traced, not code that changes)? */
	int (*translatable)(struct bt_target *t, uint64_t addr);
	/* Must translated code leave before @addr (a breakpoint, a hook)? */
	int (*stop_at)(struct bt_target *t, uint64_t addr);
	/* Changes whenever stop_at's answers may have changed. */
	uint64_t (*stops_version)(struct bt_target *t);
	/* The original code, btrace's int3s hidden; 0 or < 0. */
	int (*read)(void *t, uint64_t addr, void *buf, size_t len);
	/* What the ring says, oldest first: @n more instructions ran ... */
	void (*insns)(struct bt_target *t, struct bt_thread *th, uint32_t n);
	/* ... a branch was taken ... */
	void (*branch)(struct bt_target *t, struct bt_thread *th,
		       uint64_t from, uint64_t to, int kind);
	/* ... or the history is not continuous before @to ... */
	void (*gap)(struct bt_target *t, struct bt_thread *th, uint64_t to,
		    int reason);
	/* ... or it was @ns of CLOCK_MONOTONIC there (NULL: not wanted). */
	void (*time)(struct bt_target *t, struct bt_thread *th, uint64_t ns);
	/* The process's mappings of code may have changed. */
	void (*maps_changed)(struct bt_target *t);
};

/* Returns 0 or -bte_nomem; bt_recorder_free accepts NULL. */
int bt_recorder_alloc(struct bt_recorder **r, struct bt_target *t,
		      const struct bt_recorder_host *host);
void bt_recorder_free(struct bt_recorder *r);

/* A new address space (exec): translations, rings and tables are gone. */
void bt_recorder_reset(struct bt_recorder *r);

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

/* @th, in, stopped with SIGTRAP: an exit of the translation? */
int bt_recorder_trap(struct bt_recorder *r, struct bt_thread *th,
		     const siginfo_t *si);

/*
 * Did @th leave at an instruction it must step before it enters again
 * (bt_recorder_trap() said BT_RECORDER_LEFT_STEP, and no step was made
 * since)?  Asking forgets it.
 */
int bt_recorder_left_step(struct bt_recorder *r, struct bt_thread *th);

/* @th, in, stopped with another signal: its ring's guard page?  0 or 1. */
int bt_recorder_fault(struct bt_recorder *r, struct bt_thread *th,
		      const siginfo_t *si);

/* Bring @th (stopped, in) back to the program's own state; see above. */
void bt_recorder_leave(struct bt_recorder *r, struct bt_thread *th);

/* @th is gone or detached: what its ring still holds is decoded. */
void bt_recorder_thread_end(struct bt_recorder *r, struct bt_thread *th);

/*
 * The code in [@lo, @hi) changed (a debugger wrote it): its translations
 * are never entered again.
 */
void bt_recorder_invalidate(struct bt_recorder *r, uint64_t lo,
			    uint64_t hi);

/* Blocks translated so far (statistics). */
uint64_t bt_recorder_blocks(const struct bt_recorder *r);

#endif /* BTRACE_RECORDER_H */
