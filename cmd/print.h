/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PRINT_H
#define BTRACE_PRINT_H

/*
 * The one output module of the front ends (run, attach, session, show,
 * decode): branch histories and stops as aligned human text or as JSON.
 *
 * The JSON document, which later front ends build on:
 *   {"btrace": 1, "backend": "soft", "pid": P,
 *    "stop": {"tid": T, "reason": "signal"|"exit"|"interrupt"|"break"|
 *             "killed", "signal": "SIGSEGV"|null, "status": S|null,
 *             "pc": "0x...", "addr": "0x..."|null, "sym": ..., "src": ...,
 *             "insn": ...},
 *    "threads": [{"tid": T, "lost": 0, "branches": [
 *        {"from": "0x...", "to": "0x...", "kind": "call",
 *         "from_sym": "main+0x12", "to_sym": "crash", "from_src": "t.c:12",
 *         "to_src": "t.c:4", "insn": "call 0x401126"}]}],
 *    "stats": {"instructions": I, "branches": B, "stops": S}}
 * Addresses are hex strings; branches oldest first; what is unknown is
 * null.  A gap has "kind": "gap" and "gap": "overflow" (its reason).
 */

#include <stdio.h>
#include <sys/types.h>

#include "btrace/btrace.h"

/* How addresses are described.  Every pointer may be NULL. */
struct print_ctx {
	struct bt_symtab *symtab;	/* symbols and lines; NULL: hex only */
	bt_image_read_fn read;		/* code bytes, for disassembly */
	void *read_ctx;
	struct bt_disasm *dis;		/* NULL: no disassembly */
	int color;			/* ANSI colours in human text */
};

struct print_thread {
	pid_t tid;
	const struct bt_history *hist;
};

/* Everything one report shows; stop and stats may be NULL. */
struct print_report {
	const char *backend;		/* "soft", "pt", ... */
	pid_t pid;
	const struct bt_stop *stop;
	const struct print_thread *threads;
	size_t nthreads;
	const struct bt_stats *stats;
};

/* Should @out get colours?  A tty, no --no-color, no NO_COLOR, not dumb. */
int print_want_color(FILE *out, int no_color);

/* "SIGSEGV"; "SIG34" for those without a name. */
const char *print_signame(int sig, char *buf, size_t size);

/* The whole report as text or as one JSON document (with a newline). */
void print_report_text(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc);
void print_report_json(FILE *out, const struct print_report *r,
		       const struct print_ctx *pc);

/* Parts of the text report: one thread's branches, and the stop. */
void print_history(FILE *out, pid_t tid, const struct bt_history *hist,
		   const struct print_ctx *pc);
void print_stop(FILE *out, const struct bt_stop *stop,
		const struct print_ctx *pc);

/* Parts of the JSON document, for front ends that build their own. */
void print_json_string(FILE *out, const char *s);	/* null for NULL */
void print_json_branches(FILE *out, const struct bt_history *hist,
			 const struct print_ctx *pc);	/* an array */
void print_json_stop(FILE *out, const struct bt_stop *stop,
		     const struct print_ctx *pc);	/* an object */

#endif /* BTRACE_PRINT_H */
