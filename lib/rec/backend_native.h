/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_REC_BACKEND_NATIVE_H
#define BTRACE_REC_BACKEND_NATIVE_H

/*
 * The recorder's backend (backend.c) and untraced code (--only, --exclude,
 * and --from before its symbol): backend_native.c.  A thread in untraced
 * code runs natively as the fast mode's untraced thread (fast.h); it gets
 * there through a native exit of its translation (rec_native.c) or from
 * the backend, and comes back at an int3 of the recorder's.
 */

#include <signal.h>
#include <stdint.h>
#include <sys/user.h>

struct bt_target;
struct bt_thread;
struct bt_recorder;

/*
 * The host's untraced(), native_on() and native() (bt_recorder_host),
 * for the process of the recorder picked last.
 */
int rec_native_untraced(struct bt_target *t, uint64_t addr);
/* Code at @addr that a re-entry int3 may stand on: traced, not changing. */
int rec_native_reentry_ok(struct bt_target *t, uint64_t addr);
void rec_native_on(struct bt_target *t);
void rec_native_host(struct bt_target *t, struct bt_thread *th,
		     uint64_t left_to);

/*
 * Run stopped @th, out of its translation at untraced @regs->rip,
 * natively.  Returns 1 (resumed), 0 if the pc is not untraced code, or a
 * negative bt_error.
 */
int rec_native_run(struct bt_target *t, struct bt_thread *th,
		   struct user_regs_struct *regs);

/*
 * @th, out of its translation, stopped with SIGTRAP: an int3 of the
 * recorder's?  A native thread came back there (the gap recorded), or a
 * chain or step of the fast mode's ran into it; either way @th stands at
 * it for the backend to run.  1 if so, 0 if not ours.
 */
int rec_native_trap(struct bt_target *t, struct bt_thread *th,
		    const siginfo_t *si);

/*
 * Re-entry int3s where no symbol says so (rec_entries.c): the program's
 * entry point and every function start of the traced modules' unwind
 * tables.
 */
void rec_native_entries(struct bt_target *t, struct bt_recorder *r);

/* The program's entry point in process @pid (its auxiliary vector's
 * AT_ENTRY), 0 if unknown. */
uint64_t rec_auxv_entry(pid_t pid);

#endif /* BTRACE_REC_BACKEND_NATIVE_H */
