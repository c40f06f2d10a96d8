/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PRINT_H
#define BTRACE_PRINT_H

/*
 * The one printer of the front ends (run, attach, the session, show,
 * decode; the GDB plugin shows what show prints): a report as aligned
 * human text or as one JSON document.  A report is a view of some threads
 * (their branches, instructions, call history; the session's threads and
 * info), optionally the stop and the capture's counts.
 *
 * The JSON document, the same for every command:
 *   {"btrace": 1, "backend": "soft", "pid": P,
 *    "stop": {"tid": T, "reason": "signal"|"exit"|"interrupt"|"break"|
 *             "killed", "signal": "SIGSEGV"|null, "status": S|null,
 *             "pc": "0x...", "addr": "0x..."|null,
 *             "siginfo": {"si_code": C, "code": "SEGV_MAPERR"|...,
 *                         "what": "address not mapped"|..., "fault": bool,
 *                         "sender": {"pid", "uid", "comm"}|null,
 *                         "value": V|null}|null,
 *             "sym": ..., "src": ..., "insn": ...},
 *    "threads": [{"tid": T, "lost": 0, "branches": [
 *        {"from": "0x...", "to": "0x...", "kind": "call",
 *         "from_sym": "main+0x12", "to_sym": "crash", "from_src": "t.c:12",
 *         "to_src": "t.c:4", "insn": "call 0x401126", "ts": 123...}]}],
 *    "stats": {"instructions": I, "branches": B, "stops": S,
 *              "displaced": D},
 *    "fault": {"stop": {as "stop"}, "after": N|null, "count": C,
 *              "thread": {as a thread}}}
 * "fault", where the thread that stopped had a fault of its code taken
 * by the program's own handler before: that fault, the history up to it
 * and the branches recorded since ("after").
 * A thread holds "branches", "insns" ([{"addr", "sym", "src", "insn"}]),
 * or "calls" ([{"depth", "func", "addr", "src", "branches",
 * "instructions", "ts", "duration"}]) as the view asks; "ts" is when a
 * branch was taken or a segment started, "duration" how long a segment
 * ran until its last branch (or the stop), both in ns of
 * CLOCK_MONOTONIC, null where the trace has no time (BTS); a gap in any of them is an entry
 * with "gap": its reason (and, among branches, "kind": "gap").  The
 * session's threads add "current", "pc", "sym", "src" to each thread, its
 * info "state", "origin", "buffer_size" and "breakpoints" to the document
 * and "captured", "decoded" to each thread.  Addresses are hex strings;
 * everything is oldest first; what is unknown is null; what a view does
 * not have is left out ("stop", "stats").
 */

#include <stdio.h>
#include <sys/types.h>

#include "btrace/btrace.h"

enum print_view {
	PRINT_BRANCHES,		/* the last branches */
	PRINT_INSNS,		/* instructions (--insn, insn) */
	PRINT_CALLS,		/* the function-call history (--calls, calls) */
	PRINT_THREADS,		/* the session's threads */
	PRINT_INFO,		/* the session's info */
};

/* How addresses are described.  Every pointer may be NULL. */
struct print_ctx {
	struct bt_symtab *symtab;	/* symbols and lines; NULL: hex only */
	bt_image_read_fn read;		/* code bytes, for disassembly */
	void *read_ctx;
	struct bt_disasm *dis;		/* NULL: no disassembly */
	int color;			/* ANSI colours in human text */
	int blocks;			/* branches: each block's code too */
	int time;			/* --time: branches' time before the
					   stop, a column of text */
	uint64_t time_ref;		/* the stop's time (ns); 0: each
					   thread's history's end */
};

/*
 * The instructions of a thread, for PRINT_INSNS: call @fn (bt_insn_fn:
 * an address, or 0 and a gap reason) for each, oldest first.  Returns 0
 * or a negative bt_error.
 */
typedef int (*print_insns_fn)(void *ctx, bt_insn_fn fn, void *fn_ctx);

struct print_thread {
	pid_t tid;
	int err;			/* no trace of it: why (a bt_error) */
	const struct bt_history *hist;	/* its branches */
	const struct bt_calls *calls;	/* PRINT_CALLS */
	int window;			/* show [first, end) of the branches */
	size_t first, end;		/* or calls, not all of them */
	print_insns_fn insns;		/* PRINT_INSNS */
	void *insns_ctx;
	/* PRINT_THREADS, PRINT_INFO */
	int current;			/* the session's current thread */
	uint64_t pc;			/* where it is, 0 if unknown */
	size_t captured;		/* bytes of trace captured */
	uint64_t lost;			/* lost, in @lost_unit */
	const char *lost_unit;		/* "records", "bytes" */
	int at_fault;			/* the history up to a fault */
};

/*
 * A fault of the program's code that its own handler took before the
 * stop (bt_target_fault()): shown first, its history, then the fault.
 */
struct print_fault {
	const struct bt_stop *stop;		/* the fault */
	const struct print_thread *thread;	/* its history up to it */
	uint64_t after;		/* branches since, UINT64_MAX: unknown */
	int after_lost;		/* more ran: records were lost */
	uint64_t count;		/* faults the thread's handlers took */
};

struct print_bp {
	int number;
	uint64_t addr;
	const char *spec;		/* as the user gave it */
};

/* What the session's info adds. */
struct print_session {
	const char *state;		/* "stopped", "exiting", "gone" */
	const char *origin;		/* "attached", "launched" */
	size_t buffer_size;
	const struct print_bp *bps;
	size_t nbps;
};

/* Everything one report shows; stop, stats and session may be NULL. */
struct print_report {
	int view;			/* enum print_view */
	const char *backend;		/* "soft", "pt", ... */
	pid_t pid;			/* the process of the thread shown */
	pid_t root;			/* the traced tree's first; 0: pid */
	const struct bt_stop *stop;
	const struct print_thread *threads;
	size_t nthreads;
	const struct bt_stats *stats;
	const struct print_session *session;
	const struct print_fault *fault;	/* NULL: none */
};

/* Should @out get colours?  A tty, no --no-color, no NO_COLOR, not dumb. */
int print_want_color(FILE *out, int no_color);

/* "SIGSEGV"; "SIG34" for those without a name. */
const char *print_signame(int sig, char *buf, size_t size);

/* The whole report as text, or as one JSON document; both end a line. */
void print_report_text(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc);
void print_report_json(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc);
/* One of them: @json picks. */
void print_report(FILE *out, const struct print_report *r,
		  const struct print_ctx *pc, int json);

/* "0x401136  main+0x4  t.c:12": an address as the reports write it. */
void print_addr(FILE *out, const struct print_ctx *pc, uint64_t addr);

/* JSON pieces: a string (null for NULL). */
void print_json_string(FILE *out, const char *s);

#endif /* BTRACE_PRINT_H */
