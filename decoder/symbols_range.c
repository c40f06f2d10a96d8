// SPDX-License-Identifier: MIT
/*
 * Ranges of addresses whose symbol libdwfl has named (symbols_range.h).
 */
#include <gelf.h>
#include <stdlib.h>

#include "symbols_range.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Room for @more bounds; 0 or -1. */
static int bounds_room(struct sym_ranges *r, size_t *cap, size_t more)
{
	uint64_t *b;

	if (r->nbounds + more <= *cap)
		return 0;
	*cap = 2 * (r->nbounds + more);
	b = realloc(r->bounds, *cap * sizeof(*b));
	if (!b)
		return -1;
	r->bounds = b;
	return 0;
}

/*
 * Where libdwfl's answer may change in @mod: every defined symbol's start
 * and end (an absolute one's answers hold at its address only), and every
 * section's start and end (a symbol names only addresses of its section).
 */
static void bounds_load(struct sym_ranges *r, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod), i;
	Elf_Scn *scn = NULL;
	GElf_Addr bias = 0;
	size_t cap = 0;
	Elf *elf;

	r->loaded = 1;
	elf = dwfl_module_getelf(mod, &bias);
	if (n <= 0 || !elf)
		return;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;

		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL,
					     NULL) || shndx == SHN_UNDEF)
			continue;
		if (bounds_room(r, &cap, 2) < 0)
			goto fail;
		r->bounds[r->nbounds++] = addr;
		if (shndx >= SHN_LORESERVE && shndx != SHN_XINDEX)
			r->bounds[r->nbounds++] = addr + 1;
		else if (sym.st_size)
			r->bounds[r->nbounds++] = addr + sym.st_size;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (bounds_room(r, &cap, 2) < 0)
			goto fail;
		r->bounds[r->nbounds++] = sh.sh_addr + bias;
		r->bounds[r->nbounds++] = sh.sh_addr + sh.sh_size + bias;
	}
	qsort(r->bounds, r->nbounds, sizeof(*r->bounds), cmp_u64);
	return;
fail:
	free(r->bounds);
	r->bounds = NULL;
	r->nbounds = 0;
}

/* The index of the first bound above @a (nbounds: none). */
static size_t first_above(const struct sym_ranges *r, uint64_t a)
{
	size_t lo = 0, hi = r->nbounds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->bounds[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *sym_ranges_find(const struct sym_ranges *r, uint64_t addr,
			    uint64_t *offset)
{
	size_t i;

	for (i = 0; i < SYM_RANGES; i++)
		if (addr >= r->r[i].lo && addr < r->r[i].hi) {
			*offset = addr - r->r[i].start;
			return r->r[i].name;
		}
	return NULL;
}

void sym_ranges_add(struct sym_ranges *r, Dwfl_Module *mod, uint64_t addr,
		    const char *name, uint64_t offset)
{
	size_t i;

	if (!r->loaded)
		bounds_load(r, mod);
	if (!r->bounds || !name)
		return;
	i = first_above(r, addr);
	/* below every symbol, or above every end: not bounded, not kept */
	if (i == 0 || i == r->nbounds)
		return;
	r->r[r->next].lo = r->bounds[i - 1];
	r->r[r->next].hi = r->bounds[i];
	r->r[r->next].start = addr - offset;
	r->r[r->next].name = name;
	r->next = (r->next + 1) % SYM_RANGES;
}

void sym_ranges_release(struct sym_ranges *r)
{
	free(r->bounds);
	r->bounds = NULL;
	r->nbounds = 0;
	r->loaded = 0;
}
