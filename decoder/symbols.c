// SPDX-License-Identifier: MIT
/*
 * Symbols and source lines through elfutils libdwfl.  A live process is
 * reported with dwfl_linux_proc_report() (main executable, PIE or not,
 * shared libraries, the vDSO read from its memory); saved mappings with
 * dwfl_report_elf() per file.  Every module's ELF, symbol table and DWARF
 * are loaded when the symtab is made, so that it keeps working after the
 * process is gone.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/symbols.h"
#include "internal.h"

#define CACHE_SLOTS 4096	/* direct-mapped, a power of two */

struct sym_slot {
	uint64_t addr;
	int valid;
	int found;		/* a module maps addr */
	struct bt_sym sym;
};

struct bt_symtab {
	Dwfl *dwfl;
	struct sym_slot *cache;
	/* Module basenames, owned here: dwfl's names are full paths. */
	char **names;
	size_t nnames;
	bt_sym_fallback_fn fallback;
	void *fallback_ctx;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static int symtab_new(struct bt_symtab **out, const Dwfl_Callbacks *cb)
{
	struct bt_symtab *st;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return bt_fail(bte_nomem, ENOMEM, "symtab");
	st->cache = calloc(CACHE_SLOTS, sizeof(*st->cache));
	st->dwfl = dwfl_begin(cb);
	if (!st->cache || !st->dwfl) {
		bt_symtab_free(st);
		return bt_fail(bte_nomem, ENOMEM, "dwfl_begin");
	}
	*out = st;
	return 0;
}

void bt_symtab_free(struct bt_symtab *symtab)
{
	size_t i;

	if (!symtab)
		return;
	if (symtab->dwfl)
		dwfl_end(symtab->dwfl);
	for (i = 0; i < symtab->nnames; i++)
		free(symtab->names[i]);
	free(symtab->names);
	free(symtab->cache);
	free(symtab);
}

/* "[vdso: 1234]" -> "[vdso]", "/usr/lib/libc.so.6" -> "libc.so.6". */
static char *module_basename(const char *name)
{
	const char *slash;

	if (!strncmp(name, "[vdso", 5))
		return strdup("[vdso]");
	slash = strrchr(name, '/');
	return strdup(slash ? slash + 1 : name);
}

/* Load what lookups need now, and give the module its short name. */
static int load_module(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	struct bt_symtab *st = arg;
	Dwarf_Addr bias;
	char **names, *base;

	dwfl_module_getelf(mod, &bias);
	dwfl_module_getsymtab(mod);
	dwfl_module_getdwarf(mod, &bias);
	base = module_basename(name);
	names = realloc(st->names, (st->nnames + 1) * sizeof(*names));
	if (!base || !names) {
		free(base);
		if (names)
			st->names = names;
		return DWARF_CB_ABORT;
	}
	st->names = names;
	st->names[st->nnames++] = base;
	*userdata = base;
	return DWARF_CB_OK;
}

static int load_modules(struct bt_symtab *st)
{
	if (dwfl_getmodules(st->dwfl, load_module, st, 0) != 0)
		return bt_fail(bte_nomem, ENOMEM, "loading modules");
	return 0;
}

int bt_symtab_from_pid(struct bt_symtab **symtab, pid_t pid)
{
	struct bt_symtab *st;
	int ret;

	if (!symtab)
		return bt_fail(bte_invalid, 0, "bt_symtab_from_pid(NULL)");
	ret = symtab_new(&st, &proc_callbacks);
	if (ret < 0)
		return ret;
	dwfl_report_begin(st->dwfl);
	ret = dwfl_linux_proc_report(st->dwfl, pid);
	if (dwfl_report_end(st->dwfl, NULL, NULL) != 0 && !ret)
		ret = -1;
	if (ret) {
		ret = ret > 0 ? bt_errno_to_bte(ret) : -bte_noent;
		bt_symtab_free(st);
		return bt_fail(ret, ret > 0 ? ret : 0, "maps of %d", pid);
	}
	ret = load_modules(st);
	if (ret < 0) {
		bt_symtab_free(st);
		return ret;
	}
	*symtab = st;
	return 0;
}

/* Does ELF file @path carry the build-id of @map (or is there none to check)? */
static int build_id_matches(const struct bt_map *map)
{
	const void *id;
	ssize_t len;
	Elf *elf;
	int fd, ok;

	if (!map->build_id_len)
		return 1;
	fd = open(map->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	len = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	ok = len == map->build_id_len && !memcmp(id, map->build_id, len);
	elf_end(elf);
	close(fd);
	return ok;
}

/* The lowest mapping of @path at file offset 0: where the file was loaded. */
static const struct bt_map *load_map(const struct bt_maps *maps,
				     const char *path)
{
	const struct bt_map *best = NULL;
	size_t i;

	for (i = 0; i < maps->count; i++) {
		const struct bt_map *m = &maps->map[i];

		if (m->path && !strcmp(m->path, path) && m->offset == 0 &&
		    (!best || m->start < best->start))
			best = m;
	}
	return best;
}

static int reported_before(const struct bt_maps *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (maps->map[i].path && !strcmp(maps->map[i].path,
						 maps->map[n].path))
			return 1;
	return 0;
}

int bt_symtab_from_maps(struct bt_symtab **symtab, const struct bt_maps *maps)
{
	const struct bt_map *m;
	struct bt_symtab *st;
	size_t i;
	int ret;

	if (!symtab || !maps)
		return bt_fail(bte_invalid, 0, "bt_symtab_from_maps(NULL)");
	elf_version(EV_CURRENT);
	ret = symtab_new(&st, &file_callbacks);
	if (ret < 0)
		return ret;
	dwfl_report_begin(st->dwfl);
	for (i = 0; i < maps->count; i++) {
		const char *path = maps->map[i].path;

		/* Files only, each once, and only the very file that ran. */
		if (!path || path[0] != '/' || reported_before(maps, i))
			continue;
		m = load_map(maps, path);
		if (!m || !build_id_matches(m))
			continue;
		dwfl_report_elf(st->dwfl, path, path, -1, m->start, false);
	}
	dwfl_report_end(st->dwfl, NULL, NULL);
	ret = load_modules(st);
	if (ret < 0) {
		bt_symtab_free(st);
		return ret;
	}
	*symtab = st;
	return 0;
}

static const char *path_basename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static int symtab_resolve(struct bt_symtab *st, uint64_t addr,
			  struct bt_sym *sym)
{
	Dwfl_Module *mod;
	Dwfl_Line *line;
	GElf_Off off = 0;
	GElf_Sym esym;
	void **userdata;
	int lineno = 0;

	memset(sym, 0, sizeof(*sym));
	mod = dwfl_addrmodule(st->dwfl, addr);
	if (!mod)
		return -bte_noent;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	sym->module = *userdata;
	sym->name = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL,
					 NULL);
	if (sym->name)
		sym->offset = off;
	line = dwfl_module_getsrc(mod, addr);
	if (line) {
		sym->file = path_basename(dwfl_lineinfo(line, NULL, &lineno,
							NULL, NULL, NULL));
		sym->line = sym->file ? lineno : 0;
	}
	return 0;
}

int bt_symtab_lookup(struct bt_symtab *symtab, uint64_t addr,
		     struct bt_sym *sym)
{
	struct sym_slot *slot;

	if (!symtab || !sym)
		return bt_fail(bte_invalid, 0, "bt_symtab_lookup(NULL)");
	/* Branch addresses repeat a lot (loops): a small cache pays. */
	slot = &symtab->cache[(addr ^ (addr >> 12)) & (CACHE_SLOTS - 1)];
	if (!slot->valid || slot->addr != addr) {
		slot->found = symtab_resolve(symtab, addr, &slot->sym) == 0;
		slot->addr = addr;
		slot->valid = 1;
		if (!slot->sym.name && symtab->fallback) {
			slot->sym.name = symtab->fallback(symtab->fallback_ctx,
							  addr,
							  &slot->sym.offset);
			slot->found |= slot->sym.name != NULL;
		}
	}
	*sym = slot->sym;
	return slot->found ? 0 : -bte_noent;
}

void bt_symtab_set_fallback(struct bt_symtab *symtab, bt_sym_fallback_fn fn,
			    void *ctx)
{
	size_t i;

	if (!symtab)
		return;
	symtab->fallback = fn;
	symtab->fallback_ctx = ctx;
	for (i = 0; i < CACHE_SLOTS; i++)
		symtab->cache[i].valid = 0;
}

char *bt_sym_format(const struct bt_sym *sym, uint64_t addr, char *buf,
		    size_t size)
{
	if (!size)
		return buf;
	if (!sym || !sym->name)
		snprintf(buf, size, "0x%" PRIx64, addr);
	else if (sym->offset)
		snprintf(buf, size, "%s+0x%" PRIx64, sym->name, sym->offset);
	else
		snprintf(buf, size, "%s", sym->name);
	return buf;
}

struct sym_iter {
	bt_symtab_fn fn;
	void *ctx;
	int ret;
};

static int iter_module(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	struct sym_iter *it = arg;
	int i, n = dwfl_module_getsymtab(mod);
	GElf_Addr addr;
	GElf_Sym sym;
	const char *sname;

	for (i = 1; i < n; i++) {
		sname = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL,
						NULL);
		if (!sname || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		it->ret = it->fn(sname, addr, it->ctx);
		if (it->ret)
			return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

int bt_symtab_foreach(struct bt_symtab *symtab, bt_symtab_fn fn, void *ctx)
{
	struct sym_iter it = { fn, ctx, 0 };

	if (!symtab || !fn)
		return bt_fail(bte_invalid, 0, "bt_symtab_foreach(NULL)");
	dwfl_getmodules(symtab->dwfl, iter_module, &it, 0);
	return it.ret;
}

struct sym_search {
	const char *name;
	uint64_t addr;
};

static int match_name(const char *name, uint64_t addr, void *ctx)
{
	struct sym_search *s = ctx;

	if (strcmp(name, s->name))
		return 0;
	s->addr = addr;
	return 1;
}

uint64_t bt_symtab_addr(struct bt_symtab *symtab, const char *name)
{
	struct sym_search s = { name, 0 };

	if (!symtab || !name)
		return 0;
	bt_symtab_foreach(symtab, match_name, &s);
	return s.addr;
}

struct line_search {
	const char *file;
	int line;
	uint64_t addr;
};

/* The line dwfl_module_getsrc() gives @addr, 0 if none. */
static int line_of(Dwfl_Module *mod, Dwarf_Addr addr)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	int lineno = 0;

	if (!line || !dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL))
		return 0;
	return lineno;
}

static int line_module(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	struct line_search *ls = arg;
	Dwfl_Line **lines = NULL;
	Dwarf_Addr addr;
	size_t i, n = 0;
	int lineno;

	if (dwfl_module_getsrc_file(mod, ls->file, ls->line, 0, &lines, &n))
		return DWARF_CB_OK;
	for (i = 0; i < n; i++) {
		/* Only the line asked for, not the next one with code. */
		if (!dwfl_lineinfo(lines[i], &addr, &lineno, NULL, NULL, NULL) ||
		    lineno != ls->line)
			continue;
		/*
		 * Several rows may share an address (a function's entry often
		 * holds empty rows for its first lines): keep only addresses
		 * whose code a lookup attributes to this line.
		 */
		if (line_of(mod, addr) != ls->line)
			continue;
		if (!ls->addr || addr < ls->addr)
			ls->addr = addr;
	}
	free(lines);
	return DWARF_CB_OK;
}

uint64_t bt_symtab_line_addr(struct bt_symtab *symtab, const char *file,
			     int line)
{
	struct line_search ls = { file, line, 0 };

	if (!symtab || !file || line <= 0)
		return 0;
	dwfl_getmodules(symtab->dwfl, line_module, &ls, 0);
	return ls.addr;
}
