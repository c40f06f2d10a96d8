/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_BACKEND_H
#define BTRACE_BACKEND_H

/*
 * The seam between process control (target.c: ptrace, threads, signals,
 * the stop loop) and the ways of recording branches (soft.c, perf_pt.c,
 * perf_bts.c).  Internal: front ends see only target.h.
 *
 * target.c owns every ptrace wait.  A backend is told when a thread starts
 * and ends, decides how a stopped thread is resumed (PTRACE_CONT for the
 * hardware backends, stepping or breakpoints for soft), and gets first look
 * at each SIGTRAP so it can consume the traps it caused.
 */

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "btrace/capture.h"

struct bt_target;
struct bt_thread;

struct bt_backend_ops {
	const char *name;
	int id;			/* enum bt_backend */

	/* Usable here? 0, or -bte_nosys/-bte_perm and a reason in @why. */
	int (*probe)(char *why, size_t size);

	/* Per-target setup and teardown (private data in target->bk). */
	int (*init)(struct bt_target *t);
	void (*fini)(struct bt_target *t);

	/* A thread joins (stopped), or leaves (exit, detach). */
	int (*thread_start)(struct bt_target *t, struct bt_thread *th);
	void (*thread_end)(struct bt_target *t, struct bt_thread *th);

	/* Resume stopped @th, injecting @sig (0 for none). */
	int (*resume)(struct bt_target *t, struct bt_thread *th, int sig);

	/*
	 * @th stopped with SIGTRAP described by @si.  Returns 1 if the trap
	 * was the backend's own (consumed: target.c resumes @th), 0 if it
	 * belongs to the program or to a btrace breakpoint.
	 */
	int (*trap)(struct bt_target *t, struct bt_thread *th,
		    const siginfo_t *si);

	/* @th is about to receive @sig (handler entry is an interrupt branch). */
	void (*signal)(struct bt_target *t, struct bt_thread *th, int sig);

	/* Copy @th's trace out (capture.h). */
	int (*capture)(struct bt_target *t, struct bt_thread *th,
		       struct bt_capture *cap);
};

extern const struct bt_backend_ops bt_backend_soft;

#endif /* BTRACE_BACKEND_H */
