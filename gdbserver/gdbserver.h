/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_GDBSERVER_H
#define BTRACE_GDBSERVER_H

/*
 * btrace gdbserver: GDB's remote protocol over a target that btrace
 * traces, so that GDB's own `record btrace` works on any machine.
 *
 * The server (server.c, which dispatches each packet to its family:
 * run.c, threads.c, memregs.c, query.c, xfer.c, btrace.c, extended.c,
 * hostio.c; their shared state in state.c) speaks the protocol and knows
 * nothing of ptrace; it drives a struct gs_target_ops: a live process
 * under bt_target (live.c), or a saved trace with its core file
 * (postmortem.c).  The branch trace is served in GDB's Branch Trace
 * Format (btrace.c).
 *
 * Used by cmd/gdbserver.c, the tests and the fuzz target; not installed.
 * Errors are negative bt_error codes; nothing here prints or exits.
 */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/branch.h"
#include "btrace/capture.h"
#include "btrace/target.h"
#include "packet.h"
#include "regs.h"

/* Branch trace formats a target can serve (gs_target_ops.trace_formats). */
enum { GS_BT_BTS = 1, GS_BT_PT = 2 };

/*
 * What the server needs of a target.  Every function gets the ctx given to
 * gs_server_alloc().  A NULL function is a thing this target cannot do
 * (a post-mortem target neither runs nor writes); the server answers
 * GDB with an error.
 */
struct gs_target_ops {
	pid_t (*pid)(void *ctx);
	int (*launched)(void *ctx);	/* 1: kill on quit; 0: attached */
	size_t (*threads)(void *ctx, pid_t *tids, size_t max);
	int (*get_regs)(void *ctx, pid_t tid, struct gs_regs *r);
	/* Set what differs between @r and @old (both of @tid). */
	int (*set_regs)(void *ctx, pid_t tid, const struct gs_regs *r,
			const struct gs_regs *old);
	ssize_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	ssize_t (*write)(void *ctx, uint64_t addr, const void *buf,
			 size_t len);
	int (*break_insert)(void *ctx, uint64_t addr);
	int (*break_remove)(void *ctx, uint64_t addr);
	/* Run as bt_target_resume(); may block until a stop. */
	int (*resume)(void *ctx, const struct bt_resume *r, size_t n,
		      struct bt_stop *stop);
	/* Async-signal-safe: make a running resume() return soon. */
	void (*interrupt)(void *ctx);
	void (*stop_signals)(void *ctx, uint64_t mask);
	int (*kill)(void *ctx);
	int (*detach)(void *ctx);
	/* After an exit or killed stop: let it end; its wait status. */
	int (*finish)(void *ctx, int *wstatus);
	/* The auxiliary vector, the executable's path: appended to @out. */
	int (*auxv)(void *ctx, struct gs_buf *out);
	int (*exe)(void *ctx, struct gs_buf *out);
	/*
	 * The siginfo_t of the signal thread @tid stopped with, appended to
	 * @out (qXfer:siginfo:read); < 0 if it has none.
	 */
	int (*siginfo)(void *ctx, pid_t tid, struct gs_buf *out);
	/* Thread name (/proc/PID/task/TID/comm) into @out, or < 0. */
	int (*thread_name)(void *ctx, pid_t tid, struct gs_buf *out);

	/* ---- branch trace ---- */
	int (*trace_formats)(void *ctx);	/* GS_BT_* bits */
	/*
	 * Thread @tid's trace: with @pos, what was recorded since *@pos
	 * (*@pos then moves on; returns 1 if some of it was overwritten,
	 * -bte_nosys if the trace has no positions); @pos NULL: all of it.
	 * With @cap NULL only *@pos is set, to the position now.
	 */
	int (*trace_read)(void *ctx, pid_t tid, uint64_t *pos,
			  struct bt_capture *cap);
	size_t (*trace_size)(void *ctx);	/* per-thread bytes */
	/*
	 * A file of the process under /proc/PID/ (@name: "maps",
	 * "task/TID/maps"...) made up by the target, for a process that is
	 * not there any more; NULL: the real /proc.
	 */
	int (*proc_file)(void *ctx, const char *name, struct gs_buf *out);
	/*
	 * The libraries-svr4 document made up by the target (its memory has
	 * no r_debug to walk); NULL or 1: walk the target's memory.
	 */
	int (*libraries)(void *ctx, struct gs_buf *out);
	/* monitor save FILE: a btrace trace file of the stop @stop. */
	int (*save)(void *ctx, const struct bt_stop *stop, const char *path);

	/*
	 * ---- non-stop (NULL: all-stop only) ----
	 * As bt_target_ns_resume(), bt_target_ns_stop(), bt_target_ns_poll()
	 * (never blocks), bt_target_ns_pause() and bt_target_ns_unpause(),
	 * and bt_target_thread_state().
	 */
	int (*ns_resume)(void *ctx, const struct bt_resume *r, size_t n);
	int (*ns_stop)(void *ctx, pid_t tid);
	int (*ns_poll)(void *ctx, struct bt_stop *stop);
	int (*ns_pause)(void *ctx);
	int (*ns_unpause)(void *ctx);
	int (*thread_state)(void *ctx, pid_t tid);
};

/* How a session ended (gs_serve()). */
enum gs_end {
	GS_END_DETACHED = 1,	/* D: the process runs on */
	GS_END_KILLED,		/* k, vKill */
	GS_END_EXITED,		/* the process ended (or, extended, none
				   is left); gdb went away */
	GS_END_DISCONNECTED,	/* gdb went away, or said monitor exit; the
				   process was let go (attached) or killed
				   (launched) */
	GS_END_AWAIT,		/* gdb went away; the process waits stopped,
				   traced, for the next (gs_server_keep()) */
};

struct gs_server;

/*
 * A server for @ops/@ctx on a connection that reads @in and writes @out;
 * @first is the stop the process is in (the launch, the attach, the
 * saved stop).  @ops NULL: no process yet (extended-remote, where GDB
 * starts one with vRun or vAttach).  Returns 0 or -bte_nomem.
 * gs_server_free() accepts NULL; it closes nothing.
 */
int gs_server_alloc(struct gs_server **s, const struct gs_target_ops *ops,
		    void *ctx, int in, int out, const struct bt_stop *first);
void gs_server_free(struct gs_server *s);

/* A process the server drives: its target, and the stop it is in. */
struct gs_proc {
	const struct gs_target_ops *ops;
	void *ctx;
	struct bt_stop first;
};

/*
 * Where extended-remote's processes come from (vRun, vAttach, R).
 * run() starts @argv (argv[0] the program, as given), attach() attaches
 * to @pid; each leaves the process stopped and fills @p, or returns a
 * negative bt_error with a one-line reason in @why (no "btrace: ", for
 * GDB's "E.reason" reply).  release() ends what the server is done with
 * (a launched process still there is killed, an attached one let go) and
 * frees it.  All get @arg.
 */
struct gs_spawner {
	int (*run)(void *arg, char *const *argv, struct gs_proc *p, char *why,
		   size_t len);
	int (*attach)(void *arg, pid_t pid, struct gs_proc *p, char *why,
		      size_t len);
	void (*release)(void *arg, struct gs_proc *p);
	void *arg;
};

/*
 * Accept extended-remote ("!"): then the session outlives its process
 * (exit, kill, detach) and GDB's run and attach make another through @sp.
 * @argv (NULL-ended, copied; NULL: none) is the program a vRun that names
 * none runs.  From this call on the server owns its process, the one
 * given to gs_server_alloc() included, and hands each to @sp->release()
 * when done with it (gs_server_free() at the latest).  @sp must outlive
 * the server.  Returns 0 or -bte_nomem.
 */
int gs_server_extend(struct gs_server *s, const struct gs_spawner *sp,
		     char *const *argv);

/*
 * Outlive GDB's connection, as gdbserver without --once: when GDB goes
 * away (its `disconnect`) and a process is still served (or, extended,
 * may be made), gs_serve() returns GS_END_AWAIT and leaves it stopped
 * with its branch trace; gs_server_reconnect() then serves the next
 * connection, on @in/@out (not closed by the server), as if fresh: what
 * GDB negotiates (acks, extended, multiprocess) starts over, the process,
 * its stop and the threads' recording stay.  `monitor exit` ends the
 * server as a disconnect without gs_server_keep() would.
 */
void gs_server_keep(struct gs_server *s);
void gs_server_reconnect(struct gs_server *s, int in, int out);

/* The process id of the process served, or of the last one; 0: none. */
pid_t gs_server_pid(const struct gs_server *s);

/*
 * Serve until the session ends; returns an enum gs_end, or a negative
 * bt_error if the connection failed (the process is let go as at a
 * disconnect).
 */
int gs_serve(struct gs_server *s);

/*
 * The peer has something to say while the target runs (SIGIO): stop it.
 * Async-signal-safe; does nothing while the target is stopped.
 */
void gs_server_input(struct gs_server *s);

/*
 * btrace is to end (a signal that would have ended it): the connection
 * reads as closed from now on, as if GDB went away (the process is let
 * go, or killed if launched), and a running target is stopped first.
 * Async-signal-safe; @s may be NULL.
 */
void gs_server_quit(struct gs_server *s);

/* ---- pieces, for tests and the fuzz target ---- */

/*
 * Handle one packet payload (escapes still in) as the session would; the
 * reply (without framing) is in *@reply, NULL when none is due.  Returns
 * 0 to go on, 1 once the session has ended.
 */
int gs_server_handle(struct gs_server *s, char *pkt, size_t len,
		     const struct gs_buf **reply);

/* Host signal numbers to GDB's (include/gdb/signals.def) and back. */
int gs_signal_to_gdb(int sig);
int gs_signal_from_gdb(int gsig);

/*
 * The Branch Trace Format of @n branches (oldest first) of a thread now at
 * @pc: blocks of sequential instructions, newest first, as GDB's
 * linux-btrace.c makes them from BTS records.  @delta: the oldest block
 * is kept with begin 0 for GDB to stitch; otherwise it is dropped (its
 * start is unknown).  The history ends at its newest gap (gaps cannot be
 * told in this format); a delta with a gap in it is refused (-bte_torn).
 * Returns 0, -bte_torn or -bte_nomem.
 */
int gs_btrace_bts_xml(const struct bt_branch *br, size_t n, uint64_t pc,
		      int delta, struct gs_buf *out);

/* The same for raw Intel PT bytes (<pt> with its <pt-config>). */
int gs_btrace_pt_xml(const struct bt_capture *cap, struct gs_buf *out);

/* The live target: @t launched or attached, stopped. */
extern const struct gs_target_ops gs_live_ops;
struct gs_live;
int gs_live_alloc(struct gs_live **live, struct bt_target *t);
/* Frees @live, not its target (the caller's). */
void gs_live_free(struct gs_live *live);
struct bt_target *gs_live_target(const struct gs_live *live);

/*
 * The post-mortem target: trace file @trace, and core file @core (NULL:
 * none) of the same stop.  Returns 0; -bte_noent, -bte_perm, -bte_io if a
 * file cannot be read; -bte_format or -bte_corrupt (bt_errdetail() says
 * where, for the trace file) if one is not what it should be; -bte_nomem.
 */
extern const struct gs_target_ops gs_pm_ops;
struct gs_pm;
int gs_pm_open(struct gs_pm **pm, const char *trace, const char *core);
void gs_pm_free(struct gs_pm *pm);
/* The saved stop; the process ids the trace and the core name. */
const struct bt_stop *gs_pm_stop(const struct gs_pm *pm);
pid_t gs_pm_trace_pid(const struct gs_pm *pm);
pid_t gs_pm_core_pid(const struct gs_pm *pm);

#endif /* BTRACE_GDBSERVER_H */
