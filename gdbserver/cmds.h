/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_GS_CMDS_H
#define BTRACE_GS_CMDS_H

/*
 * The packet families: what server.c's table dispatches to.  Each handler
 * gets the packet's payload (NUL-ended, escapes still in) and leaves its
 * answer in s->reply (gs_server_handle()); a handler that leaves it empty
 * answers "not supported".  The families share only the server's state
 * (state.h), never server.c.
 */

#include "state.h"

/* Run control (run.c): ?, vCont?, vCont;, c, C, s, S, k, vKill, D. */
void gs_cmd_stop_reason(struct gs_server *s, char *pkt);
void gs_cmd_vcont_query(struct gs_server *s, char *pkt);
void gs_cmd_vcont(struct gs_server *s, char *pkt);
void gs_cmd_cont(struct gs_server *s, char *pkt);
void gs_cmd_step(struct gs_server *s, char *pkt);
void gs_cmd_kill(struct gs_server *s, char *pkt);
void gs_cmd_detach(struct gs_server *s, char *pkt);

/* Threads (threads.c): H, T, qC, qfThreadInfo, qsThreadInfo, qAttached. */
void gs_cmd_set_thread(struct gs_server *s, char *pkt);
void gs_cmd_thread_alive(struct gs_server *s, char *pkt);
void gs_cmd_current(struct gs_server *s, char *pkt);
void gs_cmd_threads_first(struct gs_server *s, char *pkt);
void gs_cmd_threads_next(struct gs_server *s, char *pkt);
void gs_cmd_attached(struct gs_server *s, char *pkt);

/* Registers, memory, breakpoints (memregs.c): g, G, p, P, m, M, X, Z, z. */
void gs_cmd_read_regs(struct gs_server *s, char *pkt);
void gs_cmd_write_regs(struct gs_server *s, char *pkt);
void gs_cmd_read_reg(struct gs_server *s, char *pkt);
void gs_cmd_write_reg(struct gs_server *s, char *pkt);
void gs_cmd_read_mem(struct gs_server *s, char *pkt);
void gs_cmd_write_mem(struct gs_server *s, char *pkt);
/* X: binary data, escaped; @pktlen is what counts (NULs inside). */
void gs_cmd_write_bin(struct gs_server *s, char *pkt, size_t pktlen);
void gs_cmd_break(struct gs_server *s, char *pkt);

/*
 * Queries and settings (query.c): qSupported, QStartNoAckMode,
 * QPassSignals, the ones answered "OK", and qRcmd (monitor).
 */
void gs_cmd_supported(struct gs_server *s, char *pkt);
void gs_cmd_noack(struct gs_server *s, char *pkt);
void gs_cmd_pass_signals(struct gs_server *s, char *pkt);
void gs_cmd_ok(struct gs_server *s, char *pkt);
void gs_cmd_rcmd(struct gs_server *s, char *pkt);

/* qXfer:object:read (xfer.c), its documents made by xfer.c and btrace.c. */
void gs_cmd_xfer(struct gs_server *s, char *pkt);
/*
 * Build the document of qXfer object @object, @annex into @out; returns
 * 0, 1 if the object is unknown (empty reply), or a negative bt_error
 * with an "E..." reply already in @out.
 */
int gs_xfer_doc(struct gs_server *s, const char *object, const char *annex,
		struct gs_buf *out);
/* The libraries-svr4 document from the target's memory. */
int gs_svr4_doc(struct gs_server *s, struct gs_buf *out);

/* Branch trace (btrace.c): Qbtrace:..., Qbtrace-conf:... */
void gs_cmd_btrace(struct gs_server *s, char *pkt);
/* qXfer:btrace:read / btrace-conf:read documents. */
int gs_btrace_doc(struct gs_server *s, const char *annex, struct gs_buf *out);
int gs_btrace_conf_doc(struct gs_server *s, struct gs_buf *out);

/* Extended-remote (extended.c): !, vRun, vAttach, R; its argv copy. */
void gs_cmd_extended(struct gs_server *s, char *pkt);
void gs_cmd_run(struct gs_server *s, char *pkt);
void gs_cmd_attach(struct gs_server *s, char *pkt);
void gs_cmd_restart(struct gs_server *s, char *pkt);
void gs_extended_release(struct gs_server *s);

/*
 * Non-stop (nonstop.c): QNonStop, vStopped, vCtrlC; run.c's vCont and ?
 * in non-stop; the serve loop's wait between packets (stops sent as
 * %Stop notifications; < 0 if the connection failed), the end of a
 * connection, the queue's release.
 */
void gs_cmd_nonstop(struct gs_server *s, char *pkt);
void gs_cmd_vstopped(struct gs_server *s, char *pkt);
void gs_cmd_ctrlc(struct gs_server *s, char *pkt);
void gs_ns_resume(struct gs_server *s, const struct bt_resume *r, size_t n);
void gs_ns_vcont(struct gs_server *s, const struct bt_resume *r,
		 const pid_t *pids, size_t n);
void gs_ns_status(struct gs_server *s);
int gs_ns_wait(struct gs_server *s);
void gs_ns_disconnected(struct gs_server *s);
void gs_ns_release(struct gs_server *s);

/* Host I/O (hostio.c): vFile:...; the files it opened. */
void gs_cmd_hostio(struct gs_server *s, char *pkt);
void gs_hostio_init(struct gs_server *s);
void gs_hostio_release(struct gs_server *s);

#endif /* BTRACE_GS_CMDS_H */
