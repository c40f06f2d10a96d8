/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SYMBOLS_H
#define BTRACE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/maps.h"

/*
 * Addresses to symbols and source lines, through elfutils libdwfl: the main
 * executable (PIE or not), shared libraries and the vDSO.  Lookups are
 * cached; a symtab outlives the process it was made from.
 */

struct bt_symtab;

struct bt_sym {
	const char *name;	/* function, or NULL if unknown */
	uint64_t offset;	/* addr - symbol start */
	const char *module;	/* module basename, or NULL */
	const char *file;	/* source file (basename), or NULL */
	int line;		/* source line, 0 if unknown */
};

/* From a live process (its /proc/PID/maps and files). */
int bt_symtab_from_pid(struct bt_symtab **symtab, pid_t pid);

/* From saved mappings: ELF files found by path (checked by build-id). */
int bt_symtab_from_maps(struct bt_symtab **symtab, const struct bt_maps *maps);

void bt_symtab_free(struct bt_symtab *symtab);

/*
 * Look @addr up.  Strings in @sym live as long as @symtab.
 * Returns 0 (fields unknown are NULL/0), or -bte_noent if no module maps it.
 */
int bt_symtab_lookup(struct bt_symtab *symtab, uint64_t addr,
		     struct bt_sym *sym);

/*
 * Names for what the modules cannot name (a trace file's saved symbols when
 * its ELF files are missing or differ): when a lookup finds no function,
 * @fn is asked for the one containing @addr and its *@offset (NULL: none).
 * The name must live as long as @symtab.  @fn NULL removes it.
 */
typedef const char *(*bt_sym_fallback_fn)(void *ctx, uint64_t addr,
					  uint64_t *offset);
void bt_symtab_set_fallback(struct bt_symtab *symtab, bt_sym_fallback_fn fn,
			    void *ctx);

/* The address of function @name (first match), or 0. */
uint64_t bt_symtab_addr(struct bt_symtab *symtab, const char *name);

/*
 * Format "name+0xoff" (or "name", or "0xaddr" when unknown) into @buf.
 * Returns @buf.
 */
char *bt_sym_format(const struct bt_sym *sym, uint64_t addr, char *buf,
		    size_t size);

/*
 * Call @fn for every function symbol of every module (no order; a name may
 * come more than once) until it returns non-zero, which is returned.  The
 * name lives as long as @symtab.  Returns 0 after the last symbol.
 */
typedef int (*bt_symtab_fn)(const char *name, uint64_t addr, void *ctx);
int bt_symtab_foreach(struct bt_symtab *symtab, bt_symtab_fn fn, void *ctx);

/*
 * The lowest address of code generated for @file:@line, or 0 if none.
 * @file matches a source file by its full path, or by its basename when
 * @file has no '/' ("main.c").
 */
uint64_t bt_symtab_line_addr(struct bt_symtab *symtab, const char *file,
			     int line);

#endif /* BTRACE_SYMBOLS_H */
