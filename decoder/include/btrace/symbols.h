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
 *
 * Symbols come from where gdb finds them: the ELF file's .symtab, else its
 * MiniDebugInfo (.gnu_debugdata) and .dynsym; a separate debug file, found
 * by build-id (DIR/.build-id/xx/yyyy.debug) or by .gnu_debuglink (beside
 * the file, in its .debug/, in DIR/ and DIR/<the file's directory>/), for
 * each debug directory DIR (default /usr/lib/debug); else a debuginfod
 * server, when DEBUGINFOD_URLS names some.  PLT stubs are named as gdb and
 * binutils name them ("puts@plt").  Everything is looked for when the
 * symtab is made: lookups never wait for a file or a server.
 */

struct bt_symtab;

/* Where to look for debug information; every field may be 0/NULL. */
struct bt_symtab_opts {
	size_t size;		/* sizeof(struct bt_symtab_opts) */
	/*
	 * Debug directories, separated by ':', instead of /usr/lib/debug
	 * (gdb's debug-file-directory).  Relative ones are taken from the
	 * current directory.  Each must exist.
	 */
	const char *debug_dir;
	/*
	 * Ask no debuginfod server, whatever DEBUGINFOD_URLS says (an empty
	 * DEBUGINFOD_URLS says the same).  libdebuginfod reads that variable
	 * at each query, so while the symtab is made it is set empty in this
	 * process's environment and restored after: not safe while another
	 * thread reads the environment.
	 */
	int no_debuginfod;
	/*
	 * Told when a debuginfod download starts, once per file: @what is
	 * the path (or "[vdso]") whose debug information is fetched.  It
	 * runs inside the call that makes the symtab.
	 */
	void (*fetch)(void *ctx, const char *what);
	void *fetch_ctx;
};

/*
 * Check @opts without making a symtab (NULL is fine).  Returns 0,
 * -bte_noent if a debug directory does not exist (bt_errdetail() names
 * it, bt_errno() says why), -bte_invalid if it is not a directory.
 */
int bt_symtab_check_opts(const struct bt_symtab_opts *opts);

/*
 * The constructors below take @opts, NULL for the defaults, and fail as
 * bt_symtab_check_opts() when it is wrong.
 */

/* An empty symtab, for bt_symtab_add_elf(). */
int bt_symtab_alloc(struct bt_symtab **symtab,
		    const struct bt_symtab_opts *opts);

/*
 * Add ELF file @path with its segments at p_vaddr + @bias (0 for an
 * executable as linked).  Returns 0, -bte_noent (no such file),
 * -bte_format (not ELF), -bte_nomem.
 */
int bt_symtab_add_elf(struct bt_symtab *symtab, const char *path,
		      uint64_t bias);

/* From a live process (its /proc/PID/maps and files). */
int bt_symtab_from_pid_opts(struct bt_symtab **symtab, pid_t pid,
			    const struct bt_symtab_opts *opts);

/* From saved mappings: ELF files found by path (checked by build-id). */
int bt_symtab_from_maps_opts(struct bt_symtab **symtab,
			     const struct bt_maps *maps,
			     const struct bt_symtab_opts *opts);

struct bt_sym {
	const char *name;	/* function, or NULL if unknown */
	uint64_t offset;	/* addr - symbol start */
	const char *module;	/* module basename, or NULL */
	const char *file;	/* source file (basename), or NULL */
	int line;		/* source line, 0 if unknown */
};

/* The same with the default options. */
int bt_symtab_from_pid(struct bt_symtab **symtab, pid_t pid);
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
 * Call @fn for every function symbol of every module, PLT stubs included
 * (no order; a name may come more than once) until it returns non-zero, which is returned.  The
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
