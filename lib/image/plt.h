/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PLT_H
#define BTRACE_PLT_H

/*
 * Names for PLT stubs ("puts@plt"), which no symbol table holds: computed
 * from the stubs and the dynamic relocations, as binutils computes its
 * synthetic symbols (what gdb and objdump show).  Shared by the symbol
 * layer (decoder/symbols.c) and the symbols saved in trace files.
 */

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct bt_plt_sym {
	uint64_t addr;		/* file address (add the load bias) */
	uint64_t size;
	char *name;		/* "puts@plt", owned */
};

struct bt_plt {
	struct bt_plt_sym *sym;	/* sorted by addr, disjoint */
	size_t count;
};

/*
 * The name of the function at file address @addr of the same ELF file, or
 * NULL: it names an IRELATIVE slot by its IFUNC resolver ("strlen@plt"),
 * where binutils says "*ABS*+0x9f550@plt".  The name is copied at once.
 */
typedef const char *(*bt_plt_namer)(void *ctx, uint64_t addr);

/*
 * A namer that reads the ELF file itself (@ctx is its Elf *): the IFUNC
 * symbol at @addr in .symtab, else in .dynsym, else any function there.
 */
const char *bt_plt_elf_namer(void *ctx, uint64_t addr);

/*
 * Read the PLT stubs of @elf (.plt, .plt.sec, .plt.got) into @plt, which
 * bt_plt_release() empties.  @namer may be NULL.  A file without stubs
 * (or with their sections stripped to NOBITS, as a separate debug file)
 * gives none.  Returns 0 or -bte_nomem (@plt is then empty).
 */
int bt_plt_read(Elf *elf, bt_plt_namer namer, void *ctx, struct bt_plt *plt);
void bt_plt_release(struct bt_plt *plt);

/* The stub containing file address @addr, or NULL. */
const struct bt_plt_sym *bt_plt_find(const struct bt_plt *plt, uint64_t addr);

#endif /* BTRACE_PLT_H */
