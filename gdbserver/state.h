/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_GS_STATE_H
#define BTRACE_GS_STATE_H

/*
 * The server's state (state.c), shared by every packet family (cmds.h)
 * and by server.c, which dispatches to them.  What a family needs of
 * another's state lives here, so that the families depend on this file
 * and server.c on them, never the other way round.
 */

#include "gdbserver.h"

/* Branch trace of one thread, as GDB enabled it (Qbtrace:bts/pt). */
struct gs_bt_thread {
	pid_t tid;
	int format;		/* GS_BT_BTS or GS_BT_PT */
	uint64_t start;		/* trace position when enabled */
	uint64_t pos;		/* after the last read, for delta and new */
	int read;		/* read at least once */
	uint64_t size;		/* its buffer's bytes (btrace-conf) */
	size_t keep;		/* the newest branches shown; 0: all */
};

/* A process waiting while another is served (procs.c). */
struct gs_pstate {
	const struct gs_target_ops *ops;
	void *ctx;
	struct bt_stop last;
	int gone, wstatus, avx;
	pid_t gthread, cthread;
	struct gs_bt_thread *bt;
	size_t nbt;
};

#define GS_HOSTIO_FDS 32

/* The most threads a thread list holds. */
#define GS_MAX_THREADS 4096

struct gs_server {
	struct gs_conn conn;
	const struct gs_target_ops *ops;
	void *ctx;
	struct gs_buf reply;
	struct gs_buf console;	/* monitor output, sent before the reply */
	int replying;		/* a reply is due for this packet */
	int ended;		/* enum gs_end once the session is over */
	int noack_after;	/* switch acks off after this reply */
	int keep;		/* outlive gdb's connection (gs_server_keep) */
	int quit;		/* monitor exit: end at this reply */

	/* extended-remote: processes come and go (extended.c) */
	const struct gs_spawner *spawner;	/* NULL: one process only */
	char **prog;		/* what a vRun naming none runs; R */
	int extended;		/* gdb sent ! */
	pid_t last_pid;		/* of the process dropped */
	struct gs_pstate *procs;	/* the others (multiprocess), waiting */
	size_t nprocs;

	/* what gdb said it supports */
	int multiprocess;
	int swbreak;

	pid_t gthread, cthread;	/* Hg, Hc: 0 any, -1 all */
	struct bt_stop last;	/* the last stop reported */
	int gone;		/* the process ended and was reaped */
	int wstatus;
	uint64_t pass;		/* QPassSignals (host numbers, bit sig-1) */
	int avx;		/* the target has the AVX registers */
	volatile sig_atomic_t running;

	/* qXfer reads come in pieces: the document of offset 0 is kept */
	char xfer_key[128];
	struct gs_buf xfer;

	struct gs_bt_thread *bt;
	size_t nbt;
	uint64_t bts_size;	/* Qbtrace-conf:bts:size, 0: the target's;
				   for the threads enabled after it */

	/* non-stop (nonstop.c) */
	int nonstop;		/* QNonStop:1 */
	struct gs_buf *nsq;	/* stop replies GDB has not taken (vStopped),
				   oldest first; [0] is out while notif_out */
	size_t nnsq, capnsq;
	int notif_out;		/* a %Stop or ?'s reply is out: vStopped due */

	int hostio_fd[GS_HOSTIO_FDS];	/* vFile:open's, -1: free */
	struct gs_buf *hostio_virt[GS_HOSTIO_FDS];	/* made-up files */
};

/* Between processes: everything the server asks is "not there". */
extern const struct gs_target_ops gs_no_proc_ops;

/* The process id of the process served (or of the last); 0: none. */
pid_t gs_proc_pid(const struct gs_server *s);

/* Is a process served, not ended? */
int gs_alive(const struct gs_server *s);

/*
 * gs_proc_set() makes @p the process served (@p->ops NULL: none), with
 * its state fresh; gs_proc_drop() hands the one served (ended, killed or
 * detached: s->gone) to the spawner once it is no use (extended-remote;
 * without a spawner the caller keeps its process).
 */
void gs_proc_set(struct gs_server *s, const struct gs_proc *p);
void gs_proc_drop(struct gs_server *s);

/*
 * Several processes (procs.c).  gs_proc_switch() makes process @pid the
 * one served (0 or the one served: nothing to do); -1 if there is none
 * such.  gs_proc_park() sets the one served aside (for a second run or
 * attach): none is served until gs_proc_set() or gs_proc_switch().
 * gs_proc_next() serves a waiting one when none is (after a drop).
 * gs_procs_each() calls @fn with each process served in turn, the one
 * served as before afterwards.  gs_procs_release() hands every process
 * to the spawner.
 */
int gs_proc_switch(struct gs_server *s, pid_t pid);
int gs_proc_park(struct gs_server *s);
void gs_proc_next(struct gs_server *s);
size_t gs_proc_count(const struct gs_server *s);
void gs_procs_each(struct gs_server *s,
		   void (*fn)(struct gs_server *s, void *arg), void *arg);
void gs_procs_release(struct gs_server *s);
/* Non-stop: pause (1) or unpause (0) every process but the one served. */
void gs_procs_pause(struct gs_server *s, int pause);

/*
 * A thread id with its process: "p<pid>.<tid>" sets *@pid (0 when none is
 * named), otherwise as gs_parse_tid().
 */
int gs_parse_ptid(const char **p, pid_t *pid, pid_t *tid);

/* A thread is gone, or the process: forget the branch trace state. */
void gs_bt_forget(struct gs_server *s);

/* Does the process served have the AVX registers? */
int gs_check_avx(struct gs_server *s);

/* "OK"; an error "E" and two hex digits (EINVAL 16, EFAULT 0e...). */
void gs_reply_ok(struct gs_server *s);
void gs_reply_err(struct gs_server *s, int e);

/* ---- thread ids ---- */

/* Append @tid as gdb writes thread ids (p<pid>.<tid> when multiprocess). */
void gs_put_tid(struct gs_server *s, struct gs_buf *b, pid_t tid);

/*
 * A thread id at *@p: "p<pid>.<tid>", "<tid>", "-1" (all), "0" (any);
 * "p<pid>" and "p<pid>.-1" are the whole process (-1).  Returns 0 with
 * *@tid set, -1 if malformed.
 */
int gs_parse_tid(const char **p, pid_t *tid);

/*
 * Does the process ";<pid>" at @p (vKill, D) name differ from the one
 * served?  None named means the one served; garbage differs.
 */
int gs_other_pid(struct gs_server *s, const char *p);

/* The threads of the process served, at most @max; none once it ended. */
size_t gs_thread_list(struct gs_server *s, pid_t *tids, size_t max);
int gs_thread_exists(struct gs_server *s, pid_t tid);

/* The thread packets about "the current thread" mean (Hg), or 0. */
pid_t gs_current(struct gs_server *s);

/* The stop (or the exit) reply of the process into s->reply. */
void gs_put_stop(struct gs_server *s);
/* The stop reply of @st, and the exit reply (W, X) of the process, to @b. */
void gs_put_stop_of(struct gs_server *s, struct gs_buf *b,
		    const struct bt_stop *st);
void gs_put_exit(struct gs_server *s, struct gs_buf *b);

/* The process ended (its exit or killed stop in s->last): let it go. */
void gs_process_end(struct gs_server *s);

/*
 * "addr,len" at *@p then @sep; the length bounded by what a packet
 * holds.  Returns 0, or -1 if malformed.
 */
int gs_parse_addr_len(const char **p, char sep, uint64_t *addr,
		      uint64_t *len);

#endif /* BTRACE_GS_STATE_H */
