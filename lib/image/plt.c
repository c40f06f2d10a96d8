// SPDX-License-Identifier: MIT
/*
 * PLT stub names, as bfd's x86-64 synthetic symbol table makes them (gdb
 * and objdump use it): each named stub jumps through a GOT slot,
 *
 *	[endbr64] [bnd] jmp *disp(%rip)
 *
 * (.plt without IBT, .plt.sec with it, .plt.got for what is bound at load
 * time); the dynamic relocation that fills that slot names it: JUMP_SLOT
 * (.rela.plt) or GLOB_DAT (.rela.dyn) by its symbol, "puts@plt", an
 * IRELATIVE one by its resolver.  Stubs that do not jump through a slot
 * (PLT0, the lazy .plt entries beside a .plt.sec) stay unnamed, as there.
 * Static executables keep their IRELATIVE slots in .rela.plt too: their
 * stubs get names where binutils gives none.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "image/plt.h"

#define PLT_MAX_ENTRY 16	/* the largest x86-64 PLT entry */

/* A GOT slot a dynamic relocation fills. */
struct plt_slot {
	uint64_t got;
	uint32_t symndx;
	uint32_t symtab;	/* section of the symbol table */
	int64_t addend;
};

struct slotvec {
	struct plt_slot *s;
	size_t n, cap;
};

static int slot_keep(uint32_t type)
{
	return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT ||
	       type == R_X86_64_IRELATIVE || type == R_X86_64_64;
}

static int slots_add(struct slotvec *v, const GElf_Rela *r, uint32_t link)
{
	struct plt_slot *p;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;

		p = realloc(v->s, cap * sizeof(*p));
		if (!p)
			return -1;
		v->s = p;
		v->cap = cap;
	}
	v->s[v->n++] = (struct plt_slot){ r->r_offset, GELF_R_SYM(r->r_info),
					  link, r->r_addend };
	return 0;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The slots of every loaded RELA section: .rela.plt and .rela.dyn. */
static int slots_read(Elf *elf, struct slotvec *v)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Rela r;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(sh.sh_flags & SHF_ALLOC) || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			if (!gelf_getrela(data, i, &r) ||
			    !slot_keep(GELF_R_TYPE(r.r_info)))
				continue;
			if (slots_add(v, &r, sh.sh_link) < 0)
				return -1;
		}
	}
	if (v->n)
		qsort(v->s, v->n, sizeof(*v->s), slot_cmp);
	return 0;
}

static const struct plt_slot *slot_find(const struct slotvec *v, uint64_t got)
{
	struct plt_slot key = { .got = got };

	return v->n ? bsearch(&key, v->s, v->n, sizeof(key), slot_cmp) : NULL;
}

static const char *slot_symbol(Elf *elf, const struct plt_slot *s)
{
	Elf_Scn *scn = elf_getscn(elf, s->symtab);
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;

	if (!s->symndx || !scn || !gelf_getshdr(scn, &sh))
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !gelf_getsym(data, s->symndx, &sym))
		return NULL;
	return elf_strptr(elf, sh.sh_link, sym.st_name);
}

/* "puts@plt", "*ABS*+0x9f550@plt" (binutils' words), or NULL (no memory). */
static char *slot_name(Elf *elf, const struct plt_slot *s, bt_plt_namer namer,
		       void *ctx)
{
	const char *base = slot_symbol(elf, s);
	uint64_t off = s->addend;
	char *name;
	int n;

	if ((!base || !*base) && namer && !s->symndx) {
		base = namer(ctx, s->addend);
		off = 0;
	}
	if (!base || !*base)
		base = "*ABS*";
	if (off)
		n = asprintf(&name, "%s+0x%" PRIx64 "@plt", base, off);
	else
		n = asprintf(&name, "%s@plt", base);
	return n < 0 ? NULL : name;
}

/* Does a stub at @p jump through a GOT slot?  Its address into *@got. */
static int stub_slot(const uint8_t *p, size_t len, uint64_t vaddr,
		     uint64_t *got)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		i = sizeof(endbr64);
	if (i < len && p[i] == 0xf2)	/* bnd */
		i++;
	if (i + 6 > len || p[i] != 0xff || p[i + 1] != 0x25)
		return 0;
	memcpy(&disp, p + i + 2, sizeof(disp));	/* little-endian host */
	*got = vaddr + i + 6 + (int64_t)disp;
	return 1;
}

static int plt_add(struct bt_plt *plt, size_t *cap, uint64_t addr,
		   uint64_t size, char *name)
{
	struct bt_plt_sym *p;

	if (!name)
		return -1;
	if (plt->count == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		p = realloc(plt->sym, *cap * sizeof(*p));
		if (!p) {
			free(name);
			return -1;
		}
		plt->sym = p;
	}
	plt->sym[plt->count++] = (struct bt_plt_sym){ addr, size, name };
	return 0;
}

struct plt_scan {
	Elf *elf;
	const struct slotvec *slots;
	bt_plt_namer namer;
	void *ctx;
	struct bt_plt *plt;
	size_t cap;
};

/*
 * Where the entry at @off ends.  Entries are sh_entsize apart; where that
 * is 0 (a static executable's .plt of 8-byte entries), an entry ends where
 * the next stub begins, within PLT_MAX_ENTRY.
 */
static uint64_t entry_end(const GElf_Shdr *sh, const uint8_t *p, size_t len,
			  uint64_t off)
{
	uint64_t n, got;

	if (sh->sh_entsize)
		n = off + sh->sh_entsize;
	else
		for (n = off + 8; n < off + PLT_MAX_ENTRY && n < len; n += 8)
			if (stub_slot(p + n, len - n, sh->sh_addr + n, &got))
				break;
	return n < len ? n : len;
}

static int scan_section(struct plt_scan *ps, const GElf_Shdr *sh,
			const Elf_Data *data)
{
	uint64_t step = sh->sh_entsize ? sh->sh_entsize : 8, got, off, end;
	const uint8_t *p = data->d_buf;
	const struct plt_slot *slot;
	size_t len = data->d_size;

	for (off = 0; off < len; off += step) {
		if (!stub_slot(p + off, len - off, sh->sh_addr + off, &got))
			continue;
		slot = slot_find(ps->slots, got);
		if (!slot)
			continue;
		end = entry_end(sh, p, len, off);
		if (plt_add(ps->plt, &ps->cap, sh->sh_addr + off, end - off,
			    slot_name(ps->elf, slot, ps->namer, ps->ctx)) < 0)
			return -1;
	}
	return 0;
}

static int is_plt(const char *name)
{
	return name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			!strcmp(name, ".plt.got"));
}

static int sym_cmp(const void *a, const void *b)
{
	const struct bt_plt_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int scan_sections(struct plt_scan *ps)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(ps->elf, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(ps->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !is_plt(elf_strptr(ps->elf, shstrndx, sh.sh_name)))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf && scan_section(ps, &sh, data) < 0)
			return -1;
	}
	return 0;
}

/* How well a symbol at the address names an IFUNC stub; 0: not at all. */
static int namer_rank(const GElf_Sym *sym, int symtab)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (sym->st_shndx == SHN_UNDEF ||
	    (type != STT_GNU_IFUNC && type != STT_FUNC))
		return 0;
	return (type == STT_GNU_IFUNC) * 8 + symtab * 4 +
	       (GELF_ST_BIND(sym->st_info) != STB_LOCAL) * 2 + 1;
}

const char *bt_plt_elf_namer(void *ctx, uint64_t addr)
{
	const char *best = NULL;
	int rank, best_rank = 0;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;
	size_t i;

	while ((scn = elf_nextscn(ctx, scn))) {
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(data, i, &sym) || sym.st_value != addr)
				continue;
			rank = namer_rank(&sym, sh.sh_type == SHT_SYMTAB);
			if (rank > best_rank) {
				best_rank = rank;
				best = elf_strptr(ctx, sh.sh_link, sym.st_name);
			}
		}
	}
	return best;
}

int bt_plt_read(Elf *elf, bt_plt_namer namer, void *ctx, struct bt_plt *plt)
{
	struct slotvec slots = { 0 };
	struct plt_scan ps = { elf, &slots, namer, ctx, plt, 0 };
	GElf_Ehdr eh;
	int ret = 0;

	if (!plt)
		return bt_fail(bte_invalid, 0, "bt_plt_read(NULL)");
	memset(plt, 0, sizeof(*plt));
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	if (slots_read(elf, &slots) < 0 || scan_sections(&ps) < 0) {
		bt_plt_release(plt);
		ret = bt_fail(bte_nomem, ENOMEM, "PLT symbols");
	}
	free(slots.s);
	if (plt->count)
		qsort(plt->sym, plt->count, sizeof(*plt->sym), sym_cmp);
	return ret;
}

void bt_plt_release(struct bt_plt *plt)
{
	size_t i;

	if (!plt)
		return;
	for (i = 0; i < plt->count; i++)
		free(plt->sym[i].name);
	free(plt->sym);
	plt->sym = NULL;
	plt->count = 0;
}

const struct bt_plt_sym *bt_plt_find(const struct bt_plt *plt, uint64_t addr)
{
	size_t lo = 0, hi = plt ? plt->count : 0, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (addr < plt->sym[mid].addr)
			hi = mid;
		else if (addr >= plt->sym[mid].addr + plt->sym[mid].size)
			lo = mid + 1;
		else
			return &plt->sym[mid];
	}
	return NULL;
}
