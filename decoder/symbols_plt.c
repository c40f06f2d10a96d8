// SPDX-License-Identifier: MIT
/*
 * A module's PLT stubs for the symbol table (symbols_plt.h): read by
 * lib/image/plt.c, an IRELATIVE stub named after the IFUNC its
 * relocation resolves to.
 */
#include <stdlib.h>

#include "symbols_plt.h"

/* A function symbol that may name an IRELATIVE stub, and its rank. */
struct plt_cand {
	uint64_t addr;
	const char *name;
	int rank, i;
};

/* What plt_namer() looks in: the module's symbols, sorted once. */
struct plt_names {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct plt_cand *c;	/* NULL: not made yet */
	size_t n;
};

/* By address; the best rank first, then the first in the table. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct plt_cand *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return b->rank - a->rank;
	return a->i - b->i;
}

/*
 * The IFUNC symbol ("strlen") before the resolver's own ("strlen_ifunc"),
 * global before local; 0: never a name.
 */
static int cand_rank(const GElf_Sym *sym)
{
	return (GELF_ST_TYPE(sym->st_info) == STT_GNU_IFUNC) * 4 +
	       (GELF_ST_BIND(sym->st_info) != STB_LOCAL) * 2 +
	       (GELF_ST_TYPE(sym->st_info) == STT_FUNC);
}

/*
 * One pass over the symbol table, sorted: a module has tens of IRELATIVE
 * stubs and libc's table tens of thousands of symbols, which a pass per
 * stub read again and again at every start.
 */
static int plt_names_make(struct plt_names *pn)
{
	int i, n = dwfl_module_getsymtab(pn->mod);
	const char *name;
	GElf_Addr a;
	GElf_Sym sym;

	pn->c = malloc((n > 0 ? (size_t)n : 1) * sizeof(*pn->c));
	if (!pn->c)
		return -1;
	for (i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(pn->mod, i, &sym, &a, NULL,
					       NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    !cand_rank(&sym))
			continue;
		pn->c[pn->n++] = (struct plt_cand){ a, name, cand_rank(&sym),
						    i };
	}
	qsort(pn->c, pn->n, sizeof(*pn->c), cand_cmp);
	return 0;
}

/*
 * The function at file address @addr, to name an IRELATIVE stub: one of
 * the stub's own module (where else an IFUNC's resolver lies).
 */
static const char *plt_namer(void *ctx, uint64_t addr)
{
	struct plt_names *pn = ctx;
	uint64_t want = addr + pn->bias;
	size_t lo = 0, hi;

	if (dwfl_addrmodule(pn->dwfl, want) != pn->mod ||
	    (!pn->c && plt_names_make(pn) < 0))
		return NULL;
	hi = pn->n;
	while (lo < hi) {	/* the first at want: the best */
		size_t mid = lo + (hi - lo) / 2;

		if (pn->c[mid].addr < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pn->n && pn->c[lo].addr == want ? pn->c[lo].name : NULL;
}

int bt_sym_plt_load(Dwfl *dwfl, Dwfl_Module *mod, Dwarf_Addr *bias,
		    struct bt_plt *plt)
{
	struct plt_names pn = { dwfl, mod, 0, NULL, 0 };
	Elf *elf = dwfl_module_getelf(mod, &pn.bias);
	int ret;

	if (!elf)
		return 0;
	*bias = pn.bias;
	ret = bt_plt_read(elf, plt_namer, &pn, plt);
	free(pn.c);
	return ret;
}
