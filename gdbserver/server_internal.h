/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_GS_SERVER_INTERNAL_H
#define BTRACE_GS_SERVER_INTERNAL_H

/* The server's state, shared by server.c, xfer.c and btrace.c. */

#include "gdbserver.h"

/* Branch trace of one thread, as GDB enabled it (Qbtrace:bts/pt). */
struct gs_bt_thread {
	pid_t tid;
	int format;		/* GS_BT_BTS or GS_BT_PT */
	uint64_t start;		/* trace position when enabled */
	uint64_t pos;		/* after the last read, for delta and new */
	int read;		/* read at least once */
};

#define GS_HOSTIO_FDS 32

struct gs_server {
	struct gs_conn conn;
	const struct gs_target_ops *ops;
	void *ctx;
	struct gs_buf reply;
	struct gs_buf console;	/* monitor output, sent before the reply */
	int replying;		/* a reply is due for this packet */
	int ended;		/* enum gs_end once the session is over */
	int noack_after;	/* switch acks off after this reply */

	/* extended-remote: processes come and go (extended.c) */
	const struct gs_spawner *spawner;	/* NULL: one process only */
	char **prog;		/* what a vRun naming none runs; R */
	int extended;		/* gdb sent ! */
	pid_t last_pid;		/* of the process dropped */

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
	uint64_t bts_size;	/* Qbtrace-conf:bts:size, 0: the target's */

	int hostio_fd[GS_HOSTIO_FDS];	/* vFile:open's, -1: free */
	struct gs_buf *hostio_virt[GS_HOSTIO_FDS];	/* made-up files */
};

/* The process id of the process served (or of the last); 0: none. */
pid_t gs_proc_pid(const struct gs_server *s);

/* Append @tid as gdb writes thread ids (p<pid>.<tid> when multiprocess). */
void gs_put_tid(struct gs_server *s, struct gs_buf *b, pid_t tid);

/* The thread packets about "the current thread" mean (Hg), or 0. */
pid_t gs_current(struct gs_server *s);

/* Build the document of qXfer object @object, @annex into @out;
 * returns 0, 1 if the object is unknown (empty reply), or a negative
 * bt_error with an "E..." reply already in @out. */
int gs_xfer_doc(struct gs_server *s, const char *object, const char *annex,
		struct gs_buf *out);

/* Qbtrace:..., Qbtrace-conf:... into s->reply. */
void gs_btrace_packet(struct gs_server *s, const char *pkt);
/* qXfer:btrace:read / btrace-conf:read documents. */
int gs_btrace_doc(struct gs_server *s, const char *annex, struct gs_buf *out);
int gs_btrace_conf_doc(struct gs_server *s, struct gs_buf *out);
/* A thread is gone: forget its trace state. */
void gs_btrace_forget(struct gs_server *s);

/* The target of no process (extended-remote, between processes). */
extern const struct gs_target_ops gs_no_proc_ops;

/* Does the process served have the AVX registers? */
int gs_check_avx(struct gs_server *s);

/* The stop (or the exit) reply of the process into s->reply. */
void gs_put_stop(struct gs_server *s);

/*
 * Extended-remote (extended.c).  gs_proc_set() makes @p the process
 * served, with its state fresh; gs_proc_drop() releases the one served
 * (ended, killed or detached: s->gone) once it is no use.
 */
void gs_proc_set(struct gs_server *s, const struct gs_proc *p);
void gs_proc_drop(struct gs_server *s);
void gs_cmd_extended(struct gs_server *s, char *pkt);
void gs_cmd_run(struct gs_server *s, char *pkt);
void gs_cmd_attach(struct gs_server *s, char *pkt);
void gs_cmd_restart(struct gs_server *s, char *pkt);
void gs_extended_release(struct gs_server *s);

/* vFile:... into s->reply; the files it opened. */
void gs_hostio_packet(struct gs_server *s, const char *pkt);
void gs_hostio_init(struct gs_server *s);
void gs_hostio_release(struct gs_server *s);

/* The libraries-svr4 document from the target's memory. */
int gs_svr4_doc(struct gs_server *s, struct gs_buf *out);

#endif /* BTRACE_GS_SERVER_INTERNAL_H */
