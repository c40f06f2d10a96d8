/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_ERROR_H
#define BTRACE_ERROR_H

/*
 * One error convention for the whole library.
 *
 * Functions that can fail return an int: zero (or a non-negative count) on
 * success, a negative bt_error code on failure.  Library code never prints
 * and never exits; the front ends in cmd/ turn codes into messages.
 *
 * The original cause stays reachable: a failing function may record the
 * errno of the system call behind it and a short detail ("ptrace(ATTACH,
 * 1234)") in thread-local storage, read back with bt_errno() and
 * bt_errdetail() until the next failure on the same thread overwrites them.
 */

enum bt_error {
	bte_ok = 0,
	bte_internal,	/* a bug in btrace */
	bte_invalid,	/* an invalid argument */
	bte_nomem,	/* out of memory */
	bte_nosys,	/* not supported on this host (no PT, no BTS, ...) */
	bte_perm,	/* permission denied (ptrace_scope, paranoid, ...) */
	bte_noent,	/* no such process, thread, file or symbol */
	bte_busy,	/* already traced, PMU in use */
	bte_io,		/* a read or write failed */
	bte_eos,	/* end of stream or buffer */
	bte_corrupt,	/* a corrupt record, header or packet */
	bte_torn,	/* the writer overwrote what was being read */
	bte_format,	/* not a file or stream of the expected format */
	bte_exited,	/* the process or thread is gone */
	bte_ptrace,	/* a ptrace request failed */
	bte_decode,	/* the PT or BTS decoder failed (libipt code kept) */
	bte_nosync,	/* no synchronisation point (PSB) in the stream */
	bte_notrace,	/* no trace data for that thread */
	bte_max
};

/*
 * A static, lowercase description of @err (positive or negative).
 * Never fails: "unknown error" for a code out of range.
 */
const char *bt_errstr(int err);

/* The errno saved by the last failing call on this thread, or 0.  Never fails. */
int bt_errno(void);

/*
 * The detail saved by the last failing call on this thread, or "".
 * Never fails; the string lives until the next failure on this thread.
 */
const char *bt_errdetail(void);

#endif /* BTRACE_ERROR_H */
