/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SYMBOLS_RANGE_H
#define BTRACE_SYMBOLS_RANGE_H

/*
 * Address ranges whose symbol libdwfl has named, per module of symbols.c:
 * libdwfl's dwfl_module_addrinfo() reads the whole symbol table at each
 * call (libc's debug file: thousands of symbols), and a report asks about
 * many addresses in few functions.  libdwfl's answer for an address
 * depends only on which symbols start at or below it and which of those
 * it lies within; that changes only at a symbol's start or end.  So the
 * answer for one address holds from the last start or end at or below it
 * to the next one above it, and that range is kept.  Internal to the
 * decoder library.
 */

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#define SYM_RANGES	32

struct sym_ranges {
	uint64_t *bounds;	/* every defined symbol's start and end,
				   sorted */
	size_t nbounds;
	int loaded;		/* bounds read, or could not be */
	struct {
		uint64_t lo, hi;	/* [lo, hi), hi 0: none */
		uint64_t start;		/* of the symbol named */
		const char *name;	/* libdwfl's: lives with the module */
	} r[SYM_RANGES];
	unsigned next;		/* the slot the next range takes */
};

/* The name libdwfl gave an address of a range kept, *@offset into it. */
const char *sym_ranges_find(const struct sym_ranges *r, uint64_t addr,
			    uint64_t *offset);

/* libdwfl named @addr @name, @offset bytes into it: kept. */
void sym_ranges_add(struct sym_ranges *r, Dwfl_Module *mod, uint64_t addr,
		    const char *name, uint64_t offset);

void sym_ranges_release(struct sym_ranges *r);

#endif /* BTRACE_SYMBOLS_RANGE_H */
