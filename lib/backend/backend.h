/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_BACKEND_H
#define BTRACE_BACKEND_H

/*
 * The seam between process control (the tracer, lib/tracer/: ptrace,
 * threads, signals, the stop loop) and the ways of recording branches
 * (soft/soft.c, soft/soft_fast.c, perf/perf_backend.c), which the registry
 * (backend.c) lists.  Internal: front ends see only target.h.
 *
 * The tracer owns every ptrace wait.  A backend is told when a thread starts
 * and ends, decides how a stopped thread is resumed (PTRACE_CONT for the
 * hardware backends, stepping or breakpoints for soft), and gets first look
 * at each SIGTRAP so it can consume the traps it caused.
 *
 * The rules the tracer keeps, which a backend may rely on:
 * - Every thread gets thread_start() before its first resume(), from its
 *   first instruction for threads created under tracing.
 * - resume() is called only for a thread in a ptrace-stop, with the signal
 *   to inject (0: none).  A thread may be resumed after a stop that was not
 *   the backend's own (a signal, an event inside a syscall such as clone or
 *   exec, PTRACE_INTERRUPT): th->why says which (tracer/tracer.h).
 * - signal() comes right before the resume() that injects a signal which
 *   runs a handler: that resume enters the handler.
 * - trap() sees each SIGTRAP signal-delivery-stop first.  The tracer's own
 *   breakpoints (int3 hits, si_code SI_KERNEL at a known address) are
 *   recognised only after trap() returned 0.
 * - To step a thread over one of btrace's breakpoints, the tracer removes
 *   the int3, calls step() (or PTRACE_SINGLESTEP itself if step is NULL),
 *   waits for that thread alone, and puts the int3 back; the resulting
 *   SIGTRAP goes to trap() as usual.
 * - Per-thread trace data lives in th->ring (struct bt_ring) for backends
 *   that record in software; capture may be NULL for those, and the tracer
 *   copies the ring out as BT_FMT_SOFT.
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
	int soft_mode;		/* BT_BACKEND_SOFT: enum bt_soft_mode */
	/*
	 * th->ring is this many times the buffer size (0: 1): a backend whose
	 * own buffer of that size holds more branches (the recorder's ring in
	 * the process) keeps what it decodes from it.
	 */
	unsigned ring_scale;

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

	/* Resume stopped @th for one instruction; NULL: PTRACE_SINGLESTEP. */
	int (*step)(struct bt_target *t, struct bt_thread *th, int sig);

	/*
	 * @th stopped with SIGTRAP described by @si.  Returns 1 if the trap
	 * was the backend's own (consumed: the tracer resumes @th), 0 if it
	 * belongs to the program or to a btrace breakpoint.
	 */
	int (*trap)(struct bt_target *t, struct bt_thread *th,
		    const siginfo_t *si);

	/*
	 * A fork child @child, not followed, is stopped and about to be let
	 * go untraced: undo in its memory what the backend changed (int3s).
	 * @shared: a vfork child, running in its parent's memory until it
	 * execs or exits (the parent's next stop is PTRACE_EVENT_VFORK_DONE).
	 * May be NULL.
	 */
	void (*fork)(struct bt_target *t, pid_t child, int shared);

	/* bt_target_cont() is about to return: all threads stopped. May be NULL. */
	void (*stopped)(struct bt_target *t);

	/*
	 * Tracing ends (detach, finish, hand-over): every thread is stopped;
	 * take out of the process whatever the backend wrote into it.  May be
	 * NULL.
	 */
	void (*release)(struct bt_target *t);

	/*
	 * @th stopped for a signal that is not the backend's own trap,
	 * before the tracer judges or shows it: make its registers the
	 * program's own (a pc in code the backend placed in the process
	 * back at the instruction it stands for).  Returns 1 if the signal
	 * was the backend's own doing and is handled (not delivered: @th is
	 * resumed as after a consumed trap), else 0.  May be NULL.
	 */
	int (*signalled)(struct bt_target *t, struct bt_thread *th);

	/* @th is about to receive @sig (handler entry is an interrupt branch). */
	void (*signal)(struct bt_target *t, struct bt_thread *th, int sig);

	/* Copy @th's trace out (capture.h); NULL: th->ring as BT_FMT_SOFT. */
	int (*capture)(struct bt_target *t, struct bt_thread *th,
		       struct bt_capture *cap);

	/*
	 * A backend with a capture() that records into th->ring all the
	 * same: bring th->ring up to date (what the thread ran is in it),
	 * so that the tracer can read it from a position.  NULL with a
	 * capture(): the trace has no positions.  Also called at each
	 * thread's exit event (its memory still there), where it must not
	 * run the thread.
	 */
	void (*sync)(struct bt_target *t, struct bt_thread *th);

	/*
	 * A debugger set stopped @th's pc from @from to @to: the history is
	 * not continuous there.  May be NULL.
	 */
	void (*moved)(struct bt_target *t, struct bt_thread *th,
		      uint64_t from, uint64_t to);

	/*
	 * @len bytes of @buf are about to be written at @addr, every thread
	 * stopped: forget what was decoded or translated of the code there,
	 * and keep the backend's own int3s (in @buf, their original bytes
	 * updated).  May be NULL.
	 */
	void (*write)(struct bt_target *t, uint64_t addr, uint8_t *buf,
		      size_t len);

	/*
	 * A part of @th's history the backend held (bt_thread_hold), @len
	 * bytes at @data, into th->ring now, its first branch @acc
	 * instructions later than it counts; with @cut, the parts held
	 * before it were dropped (where its walk starts is unknown).
	 * Returns the instructions run after its last branch.  With @data
	 * NULL: @acc instructions ran since @th's last branch in its ring,
	 * count them on.  May be NULL for a backend that holds nothing.
	 */
	uint32_t (*replay)(struct bt_target *t, struct bt_thread *th,
			   void *data, size_t len, uint32_t acc, int cut);
};

/*
 * The registry (backend.c) lists these, with their names, modes and
 * capabilities, in the order auto tries them; a new backend adds its extern
 * here and one row to that table.
 */
extern const struct bt_backend_ops bt_backend_soft_step;
extern const struct bt_backend_ops bt_backend_pt;	/* perf_backend.c */
extern const struct bt_backend_ops bt_backend_bts;	/* perf_backend.c */
extern const struct bt_backend_ops bt_backend_soft_fast;
extern const struct bt_backend_ops bt_backend_soft_record;	/* rec/backend.c */

#endif /* BTRACE_BACKEND_H */
