// SPDX-License-Identifier: MIT
/*
 * Where the fast mode watches (soft_fast.h): the map of the process's
 * code (traced or not by the module filters, code that may change), the
 * untraced code a thread runs natively until it comes back into traced
 * code, and the --from and --until symbols, resolved now or when the
 * dynamic loader maps their library.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/maps.h"
#include "internal.h"
#include "backend/soft/fast_int.h"
#include "tracer/tracer.h"

/* ---- the map of code: traced, untraced, volatile ----------------------- */

static int glob_match(const char *const *globs, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (; globs && *globs; globs++)
		if (!fnmatch(*globs, path, 0) || !fnmatch(*globs, base, 0))
			return 1;
	return 0;
}

int bt_fast_module_traced(const struct bt_target *t, const char *path)
{
	const struct bt_target_opts *o = &t->opts;

	if (o->only && o->only[0] && !(path && glob_match(o->only, path)))
		return 0;
	if (o->exclude && path && glob_match(o->exclude, path))
		return 0;
	return 1;
}

static int regions_load(struct bt_target *t, struct fast *f)
{
	struct bt_maps maps;
	size_t i, n = 0;
	int ret;

	f->maps_size = bt_maps_size(t->pid);
	f->nabsent = 0;
	ret = bt_maps_read_plain(t->pid, &maps);
	if (ret < 0)
		return ret;
	free(f->region);
	f->region = calloc(maps.count ? maps.count : 1, sizeof(*f->region));
	f->nregion = 0;
	if (!f->region) {
		bt_maps_release(&maps);
		return bt_fail(bte_nomem, ENOMEM, "regions");
	}
	for (i = 0; i < maps.count; i++) {
		const struct bt_map *m = &maps.map[i];
		struct fast_region *r = &f->region[n];
		int file = m->path && m->path[0] == '/';

		if (!(m->prot & BT_MAP_X))
			continue;
		r->start = m->start;
		r->end = m->end;
		r->traced = bt_fast_module_traced(t, m->path);
		r->volatile_code = (m->prot & BT_MAP_W) ||
				   !(file || (m->path && !strcmp(m->path, "[vdso]")));
		r->prot = (int)m->prot;
		n++;
	}
	f->nregion = n;
	f->maps_stale = 0;
	bt_maps_release(&maps);
	return 0;
}

/*
 * An address in no region: the maps are read again only if they may have
 * changed since (a page absent then, the process's size the same: every
 * mmap, munmap, mremap and brk changes it; exec and code taken away set
 * maps_stale), so that a stop at such an address costs no read.
 */
static int regions_may_have(struct bt_target *t, struct fast *f,
			    uint64_t addr)
{
	uint64_t page = addr >> 12;
	size_t i;

	for (i = 0; i < f->nabsent && i < FAST_ABSENT; i++)
		if (f->absent[i] == page)
			return 0;
	if (bt_maps_size(t->pid) != f->maps_size)
		return 1;
	f->absent[f->nabsent++ % FAST_ABSENT] = page;
	return 0;
}

static const struct fast_region *region_find(struct bt_target *t,
					     uint64_t addr)
{
	struct fast *f = fast_of(t);
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (f->maps_stale || (pass && regions_may_have(t, f, addr)))
			if (regions_load(t, f) < 0)
				return NULL;
		for (i = 0; i < f->nregion; i++)
			if (addr >= f->region[i].start && addr < f->region[i].end)
				return &f->region[i];
	}
	return NULL;
}

/* Code at @addr we run through the block cache and int3s. */
int fast_addr_chained(struct bt_target *t, uint64_t addr)
{
	const struct fast_region *r = region_find(t, addr);

	return r && r->traced && !r->volatile_code;
}

int fast_addr_traced(struct bt_target *t, uint64_t addr)
{
	const struct fast_region *r = region_find(t, addr);

	return !r || r->traced;
}

int bt_fast_code_stable(struct bt_target *t, uint64_t addr)
{
	return fast_of(t)->armed && fast_addr_chained(t, addr) &&
	       fast_addr_traced(t, addr);
}

int bt_fast_code_traced(struct bt_target *t, uint64_t addr)
{
	const struct fast_region *r = region_find(t, addr);

	return fast_of(t)->armed && r && r->traced ? r->prot : 0;
}

void bt_fast_maps_changed(struct bt_target *t)
{
	fast_of(t)->maps_stale = 1;
}

/* ---- symbols, for from/until and the entries of traced code ------------ */

struct syms_ctx {
	struct bt_target *t;
	int (*fn)(struct bt_target *t, const char *name, uint64_t addr,
		  void *ctx);
	void *ctx;
	int ret;
};

static int syms_module(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr base, void *arg)
{
	struct syms_ctx *c = arg;
	int i, n = dwfl_module_getsymtab(mod);

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr,
							NULL, NULL, NULL);

		if (!s || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !addr)
			continue;
		c->ret = c->fn(c->t, s, addr, c->ctx);
		if (c->ret)
			return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

int bt_fast_syms_each(struct bt_target *t, pid_t pid,
		      int (*fn)(struct bt_target *t, const char *name,
				uint64_t addr, void *ctx),
		      void *ctx)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	struct syms_ctx c = { t, fn, ctx, 0 };
	Dwfl *d = dwfl_begin(&cb);

	if (!d)
		return bt_fail(bte_nomem, 0, "dwfl_begin");
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, pid) != 0) {
		dwfl_end(d);
		return bt_fail(bte_noent, 0, "modules of %d", (int)pid);
	}
	dwfl_report_end(d, NULL, NULL);
	dwfl_getmodules(d, syms_module, &c, 0);
	dwfl_end(d);
	return c.ret;
}

struct sym_find {
	const char *name;
	uint64_t addr;
};

static int sym_find_one(struct bt_target *t, const char *name, uint64_t addr,
			void *ctx)
{
	struct sym_find *sf = ctx;

	if (strcmp(name, sf->name))
		return 0;
	sf->addr = addr;
	return 1;
}

uint64_t bt_fast_sym_addr(struct bt_target *t, pid_t pid, const char *name)
{
	struct sym_find sf = { name, 0 };

	bt_fast_syms_each(t, pid, sym_find_one, &sf);
	return sf.addr;
}

static int sym_resolve(struct bt_target *t, const char *name, uint64_t *addr)
{
	*addr = bt_fast_sym_addr(t, t->pid, name);
	if (!*addr)
		return bt_fail(bte_noent, 0, "no symbol '%s'", name);
	return 0;
}

/* ---- untraced code ----------------------------------------------------- */

/* The stop point of the chain from @entry (0 if it has none). */
static uint64_t entry_stop(struct bt_target *t, uint64_t entry)
{
	struct fast *f = fast_of(t);
	struct bt_thread tmp = { .bk = &f->scratch };
	int ret;

	if (!fast_addr_chained(t, entry))
		return 0;
	f->no_taken_sides = 1;
	ret = fast_chain_build(t, &tmp, entry);
	f->no_taken_sides = 0;
	return ret < 0 ? 0 : f->scratch.stop;
}

static int entry_add(struct fast *f, uint64_t entry, uint64_t stop)
{
	struct fast_entry *e;

	if (!stop)
		return 0;
	e = realloc(f->entries, (f->nentries + 1) * sizeof(*e));
	if (!e)
		return bt_fail(bte_nomem, ENOMEM, "entries");
	f->entries = e;
	e[f->nentries].entry = entry;
	e[f->nentries].stop = stop;
	f->nentries++;
	return 0;
}

static int entries_add_sym(struct bt_target *t, const char *name,
			   uint64_t addr, void *ctx)
{
	if (!fast_addr_chained(t, addr))
		return 0;
	return entry_add(fast_of(t), addr, entry_stop(t, addr));
}

/*
 * Callbacks from untraced code into traced code land on function entries:
 * the first stop point after each one gets its int3, so that a thread
 * running natively stops there and can tell where it came back.
 */
static void entries_install(struct bt_target *t)
{
	struct fast *f = fast_of(t);

	if (f->entries_done || !f->filtered)
		return;
	f->entries_done = 1;
	bt_fast_syms_each(t, t->pid, entries_add_sym, NULL);
}

/* Leave traced code at @to; the thread comes back at @ret or a callback. */
void fast_native_enter(struct bt_target *t, struct bt_thread *th,
		       uint64_t to, uint64_t ret)
{
	struct fast_thread *ft = th->bk;

	ft->state = FT_NATIVE;
	ft->left_to = to;
	entries_install(t);
	if (ret && fast_addr_chained(t, ret) && ft->nret < RET_STACK_MAX) {
		uint64_t stop = entry_stop(t, ret);

		if (stop) {
			ft->ret_stack[ft->nret].entry = ret;
			ft->ret_stack[ft->nret].stop = stop;
			ft->nret++;
		}
	}
}

/* Where did a thread running natively come back, given the int3 at @stop? */
static uint64_t native_reentry(struct bt_target *t, struct fast_thread *ft,
			       uint64_t stop)
{
	struct fast *f = fast_of(t);
	size_t i;

	for (i = ft->nret; i-- > 0;)
		if (ft->ret_stack[i].stop == stop) {
			ft->nret = i;	/* frames above it are gone */
			return ft->ret_stack[i].entry;
		}
	for (i = 0; i < f->nentries; i++)
		if (f->entries[i].stop == stop)
			return f->entries[i].entry;
	return 0;
}

/* @th, running natively, hit our int3 at @stop: back in traced code. */
void fast_native_leave(struct bt_target *t, struct bt_thread *th,
		       uint64_t stop)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	uint64_t entry = native_reentry(t, ft, stop);
	int reason = f->armed ? BT_GAP_UNTRACED : BT_GAP_DISABLED;

	if (!f->armed && (!f->from_addr || entry != f->from_addr)) {
		ft->state = FT_NATIVE;	/* not yet */
		return;
	}
	f->armed = 1;
	ft->state = FT_RUN;
	if (!entry) {
		fast_gap_append(t, th, ft->left_to, stop, reason);
		ft->nchain = 0;
		return;
	}
	fast_gap_append(t, th, ft->left_to, entry, reason);
	f->no_taken_sides = 1;
	if (fast_chain_build(t, th, entry) < 0)
		ft->nchain = 0;
	f->no_taken_sides = 0;
	fast_chain_commit(t, th, stop);
}

/* ---- triggers ---------------------------------------------------------- */

/*
 * --until and --from, resolved in the modules mapped now.  One not found
 * stays waiting (0 address) for a library that defines it.
 */
int fast_triggers_resolve(struct bt_target *t, struct fast *f)
{
	const struct bt_target_opts *o = &t->opts;
	int ret;

	if (o->until_sym && !f->until_addr &&
	    sym_resolve(t, o->until_sym, &f->until_addr) == 0) {
		/* the number a followed program may have given it first */
		ret = bt_target_break_insert_in(t, 0, f->until_addr,
						f->until_number);
		if (ret < 0)
			return ret;
		f->until_number = ret;
	}
	if (o->from_sym && !f->from_addr &&
	    sym_resolve(t, o->from_sym, &f->from_addr) == 0) {
		ret = entry_add(f, f->from_addr, entry_stop(t, f->from_addr));
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * After exec or attach.  A trigger in a library not loaded yet (every
 * library of a dynamically linked program at its first instruction, or
 * one it will dlopen) waits like a pending breakpoint of GDB's: the
 * dynamic loader calls _dl_debug_state after each change to its list of
 * libraries, and an int3 there resolves the triggers again.  Returns
 * -bte_noent if a trigger is not found and there is no loader to wait for.
 */
int fast_triggers(struct bt_target *t, struct fast *f)
{
	const struct bt_target_opts *o = &t->opts;
	const char *name = NULL;
	struct fast_bp *b;
	uint64_t hook;
	int ret;

	ret = fast_triggers_resolve(t, f);
	if (ret < 0)
		return ret;
	if (o->until_sym && !f->until_addr)
		name = o->until_sym;
	else if (o->from_sym && !f->from_addr)
		name = o->from_sym;
	if (!name)
		return 0;
	if (sym_resolve(t, "_dl_debug_state", &hook) < 0)
		return bt_fail(bte_noent, 0,
			       "no function '%s' in the program, and no "
			       "dynamic loader to wait for", name);
	ret = fast_bp_insert(t, hook, BP_DECIDE, &b);
	if (ret < 0)
		return ret;
	b->pinned = 1;
	f->loader_hook = hook;
	return 0;
}
