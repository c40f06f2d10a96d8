/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_PRINT_INT_H
#define BTRACE_CMD_PRINT_INT_H

/*
 * What the printer's parts share: print.c (text, addresses), print_json.c
 * (JSON) and print_stop.c (a stop in words).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "print.h"

/* What is known about one address. */
struct addr_desc {
	char addr[24];
	char sym[160];
	char src[160];		/* "file.c:12", or "" */
	char insn[96];		/* "call 0x401126", or "" */
};

/* Where instructions go as they come (text or JSON), and how many went. */
struct insn_out {
	FILE *out;
	const struct print_ctx *pc;
	size_t n;
};

/* @addr's symbol, source line and (if @insn) instruction, into @d. */
void describe(const struct print_ctx *pc, uint64_t addr, int insn,
	      struct addr_desc *d);
/* The function containing @addr, for the call history. */
const char *func_name(const struct print_ctx *pc, uint64_t addr);
/* The window of @n entries a thread shows: [*first, *end). */
void window(const struct print_thread *th, size_t n, size_t *first,
	    size_t *end);

/* "signal", "exit", ...: a stop's reason as JSON names it. */
const char *reason_name(int reason);
/* A signal's stop: one that has a siginfo. */
int has_siginfo(const struct bt_stop *stop);
/* "SIGSEGV (Segmentation fault) at address 0x0", "exit with status 3"... */
void stop_words(const struct bt_stop *stop, char *buf, size_t size);
/* How a signal came, from its si_code; "" for a stop without a signal. */
void stop_how(const struct bt_stop *stop, char *buf, size_t size);

#endif /* BTRACE_CMD_PRINT_INT_H */
