/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_FAST_H
#define BTRACE_FAST_H

/*
 * What the fast mode (soft_fast.h) lends to a backend built on top of it
 * (the recorder's, lib/rec/backend.c): bt_backend_soft_fast's ops for
 * everything that backend leaves to it, and the few pieces below.  The
 * fast mode never calls up: it knows nothing of what is built on it.
 *
 * Such a backend runs a thread its own way where the fast mode would run
 * it along a chain of int3s, and lets the fast mode step whatever it does
 * not run (signals and their handlers, sigreturn, clone, fork, exec, code
 * that may change, untraced code).  The history of a thread is one: what
 * the backend holds of it goes in order with what the fast mode appends
 * (bt_thread_hold(), bt_thread_settle()), the instructions the fast mode
 * counted since a branch passed on through bt_fast_history_take() and
 * bt_fast_history_carry().
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "backend/soft/soft_fast.h"

struct bt_target;
struct bt_thread;

/*
 * The per-target state of the backend on top, kept beside the fast
 * mode's own (t->bk) and never looked at by it.  NULL before
 * bt_fast_set_above(), and when the fast mode has no state.
 */
void *bt_fast_above(struct bt_target *t);
void bt_fast_set_above(struct bt_target *t, void *above);

/*
 * Code at @addr that may run without the fast mode watching: tracing is
 * armed (--from reached), its module is traced, and it is mapped from a
 * file, not writable (code that does not change).
 */
int bt_fast_code_stable(struct bt_target *t, uint64_t addr);

/*
 * Code at @addr that is traced while tracing is armed, whether it may
 * change or not: its mapping's BT_MAP_* as the maps last said; 0 if not.
 */
int bt_fast_code_traced(struct bt_target *t, uint64_t addr);

/* The process's mappings of code may have changed. */
void bt_fast_maps_changed(struct bt_target *t);

/* The instructions counted since @th's last branch, taken (they go with
 * a part of its history held back: bt_thread_hold), and given back
 * (counted already) after the last branch of such a part. */
uint32_t bt_fast_history_take(struct bt_target *t, struct bt_thread *th);
void bt_fast_history_carry(struct bt_target *t, struct bt_thread *th,
			   uint32_t n);
/* @th's history is not continuous from @from to @to (BT_GAP_*). */
void bt_fast_history_gap(struct bt_target *t, struct bt_thread *th,
			 uint64_t from, uint64_t to, int reason);

/*
 * The first half of resuming stopped @th (bt_backend_soft_fast.resume is
 * both): set up after launch, attach or exec; @regs read; what @th ran
 * since its last resume committed to its history and its pc the
 * program's own.  Where the fast mode runs @th itself (a followed fork
 * child, untraced code, a signal to deliver) it does so here.
 * Returns 1 if @th was resumed, 0 if it stands at @regs->rip for the
 * caller to run (no signal), or a negative bt_error.
 */
int bt_fast_resume_begin(struct bt_target *t, struct bt_thread *th, int sig,
			 struct user_regs_struct *regs);

/* After bt_fast_resume_begin(): must the fast mode run @th its own way
 * (step over an int3 of its own, back into untraced code)? */
int bt_fast_resume_owed(const struct bt_thread *th);

/* The second half: run @th from @regs along a chain of int3s, or step it. */
int bt_fast_resume_run(struct bt_target *t, struct bt_thread *th,
		       struct user_regs_struct *regs);

/*
 * Step the instruction at @regs->rip of stopped @th; its trap goes to
 * bt_backend_soft_fast.trap, which records what it did.  0 or -bte_*.
 */
int bt_fast_step_insn(struct bt_target *t, struct bt_thread *th,
		      const struct user_regs_struct *regs);

/* Is @th's bt_fast_step_insn() outstanding?  *@from: where it began. */
int bt_fast_stepping(const struct bt_thread *th, uint64_t *from);

/* Issue that step again (an event stopped it in a system call). */
int bt_fast_restep(struct bt_thread *th);

/* That step ended without a trap of its own: the instruction ran. */
void bt_fast_step_ran(struct bt_target *t, struct bt_thread *th);

/* Let @th run on (PTRACE_CONT), the fast mode expecting no step of it. */
int bt_fast_cont(struct bt_thread *th);

/*
 * Untraced code (fast_native.c).  Code at @addr is in a module traced by
 * the filters (or in none)?
 */
int bt_fast_traced(struct bt_target *t, uint64_t addr);

/* Tracing is armed (--from reached, or none given)? */
int bt_fast_armed(struct bt_target *t);
/* --from's address in the target's own process, 0 while not found. */
uint64_t bt_fast_from_addr(struct bt_target *t);

/* --until's breakpoint number, one in every process of the tree (0 while
 * no process has it); a followed program that found it first sets it. */
int bt_fast_until_number(struct bt_target *t);
void bt_fast_until_number_set(struct bt_target *t, int number);

/* Is @addr the dynamic loader's hook, where a pending trigger resolves? */
int bt_fast_hook_at(struct bt_target *t, uint64_t addr);

/*
 * @th runs natively from @left_to, the first untraced address it went to
 * (its history has the branch there): the fast mode's own untraced state,
 * resumed with PTRACE_CONT until it comes back.
 */
void bt_fast_native_set(struct bt_thread *th, uint64_t left_to);

/* Does @th run natively?  *@left_to: where it went. */
int bt_fast_native(const struct bt_thread *th, uint64_t *left_to);

/* @th, native, came back into traced code at @at: a gap for @reason
 * (BT_GAP_UNTRACED; BT_GAP_DISABLED where --from was reached). */
void bt_fast_native_back(struct bt_target *t, struct bt_thread *th,
			 uint64_t at, int reason);

/* The entry of function @name in process @pid's modules mapped now, 0
 * if none defines it. */
uint64_t bt_fast_sym_addr(struct bt_target *t, pid_t pid, const char *name);

/*
 * @th, running its chain natively, stopped at @at on an int3 not the fast
 * mode's: the chain is committed up to @at, which stands for the caller
 * to run.
 */
void bt_fast_chain_cut(struct bt_target *t, struct bt_thread *th,
		       uint64_t at);

/* @fn for each function symbol of the modules mapped now in process
 * @pid (the target's or a followed child's); @fn's non-zero stops the
 * walk and is returned. */
int bt_fast_syms_each(struct bt_target *t, pid_t pid,
		      int (*fn)(struct bt_target *t, const char *name,
				uint64_t addr, void *ctx),
		      void *ctx);

/* Is the module mapped from @path (NULL: anonymous) traced by the
 * filters (--only, --exclude)? */
int bt_fast_module_traced(const struct bt_target *t, const char *path);

#endif /* BTRACE_FAST_H */
