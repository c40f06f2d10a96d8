// SPDX-License-Identifier: MIT
/*
 * Function symbols for a trace file, from the .symtab (or .dynsym) of each
 * executable mapping's ELF file and of the vDSO's saved bytes, and the
 * names of its PLT stubs ("puts@plt", plt.h).  They let
 * `btrace show` name functions on a machine without the binaries; source
 * lines still need the files (DWARF is too large to copy).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/tracefile.h"
#include "internal.h"
#include "image/plt.h"
#include "tracefile/tracefile_internal.h"

struct symvec {
	struct bt_trace_sym *s;
	size_t n, cap;
};

static int symvec_add(struct symvec *v, uint64_t addr, uint64_t size,
		      const char *name)
{
	struct bt_trace_sym *p;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;

		p = realloc(v->s, cap * sizeof(*p));
		if (!p)
			return -1;
		v->s = p;
		v->cap = cap;
	}
	p = &v->s[v->n];
	p->name = strdup(name);
	if (!p->name)
		return -1;
	p->addr = addr;
	p->size = size;
	v->n++;
	return 0;
}

/* Load bias of @elf mapped by @m: where its segment at m->offset landed. */
static int elf_bias(Elf *elf, const struct bt_map *m, uint64_t *bias)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (ph.p_offset < m->offset ||
		    ph.p_offset >= m->offset + (m->end - m->start))
			continue;
		*bias = m->start + (ph.p_offset - m->offset) - ph.p_vaddr;
		return 0;
	}
	return -1;
}

static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr dsh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		if (sh->sh_type == SHT_SYMTAB)
			return scn;
		if (sh->sh_type == SHT_DYNSYM) {
			dyn = scn;
			dsh = *sh;
		}
	}
	if (dyn)
		*sh = dsh;
	return dyn;
}

/* The PLT stubs in @m, named as the symbol layer names them. */
static int plt_syms(Elf *elf, const struct bt_map *m, uint64_t bias,
		    struct symvec *v)
{
	struct bt_plt plt;
	uint64_t addr;
	size_t i;
	int ret = 0;

	if (bt_plt_read(elf, bt_plt_elf_namer, elf, &plt) < 0)
		return -1;
	for (i = 0; i < plt.count && !ret; i++) {
		addr = plt.sym[i].addr + bias;
		if (addr >= m->start && addr < m->end)
			ret = symvec_add(v, addr, plt.sym[i].size,
					 plt.sym[i].name);
	}
	bt_plt_release(&plt);
	return ret;
}

static int elf_syms(Elf *elf, const struct bt_map *m, struct symvec *v)
{
	uint64_t bias, addr;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;
	GElf_Sym sym;
	size_t i, n;
	const char *name;

	if (elf_bias(elf, m, &bias) < 0)
		return 0;
	if (plt_syms(elf, m, bias, v) < 0)
		return -1;
	scn = find_symtab(elf, &sh);
	if (!scn || !sh.sh_entsize)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		addr = sym.st_value + bias;
		if (addr < m->start || addr >= m->end)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (symvec_add(v, addr, sym.st_size, name) < 0)
			return -1;
	}
	return 0;
}

static const struct bt_trace_code *code_at(const struct bt_trace *t,
					   uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < t->ncode; i++)
		if (t->code[i].vaddr == vaddr)
			return &t->code[i];
	return NULL;
}

static int map_syms(const struct bt_trace *t, const struct bt_map *m,
		    struct symvec *v)
{
	const struct bt_trace_code *c = NULL;
	Elf *elf = NULL;
	int fd = -1, ret;

	if (!strcmp(m->path, "[vdso]")) {
		c = code_at(t, m->start);
		if (c)
			elf = elf_memory((char *)c->bytes, c->size);
	} else if (m->path[0] == '/') {
		fd = open(m->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	ret = elf ? elf_syms(elf, m, v) : 0;
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct bt_trace_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer the sized, then the shorter (public) name at one address. */
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	return (int)strlen(x->name) - (int)strlen(y->name);
}

/* Sort, and keep one name per address. */
static void symvec_finish(struct symvec *v)
{
	size_t i, j = 0;

	if (!v->n)
		return;
	qsort(v->s, v->n, sizeof(*v->s), sym_cmp);
	for (i = 1; i < v->n; i++) {
		if (v->s[i].addr == v->s[j].addr) {
			free(v->s[i].name);
			continue;
		}
		v->s[++j] = v->s[i];
	}
	v->n = j + 1;
}

int bt_trace_collect_syms(struct bt_trace *t)
{
	struct symvec v = { 0 };
	size_t i;

	elf_version(EV_CURRENT);
	for (i = 0; i < t->maps.count; i++) {
		const struct bt_map *m = &t->maps.map[i];

		if (!(m->prot & BT_MAP_X) || !m->path)
			continue;
		if (map_syms(t, m, &v) < 0)
			goto err;
	}
	symvec_finish(&v);
	t->sym = v.s;
	t->nsyms = v.n;
	return 0;
err:
	for (i = 0; i < v.n; i++)
		free(v.s[i].name);
	free(v.s);
	return bt_fail(bte_nomem, ENOMEM, "saving symbols");
}
