// SPDX-License-Identifier: MIT
/*
 * Symbols and source lines through elfutils libdwfl.  A live process is
 * reported with dwfl_linux_proc_report() (main executable, PIE or not,
 * shared libraries, the vDSO read from its memory); saved mappings with
 * dwfl_report_elf() per file.  Every module's ELF, symbol table and DWARF
 * are found when the symtab is made, so that it keeps working after the
 * process is gone, and so that debug files are searched for (and fetched
 * from debuginfod) there and only there; a module's DWARF is opened from
 * its file at the first source line asked of it (module_dwarf()).
 *
 * libdwfl finds what gdb finds: MiniDebugInfo (its symbol table reads
 * .gnu_debugdata, xz-compressed), separate debug files by build-id and by
 * .gnu_debuglink under its debuginfo_path, and debuginfod through
 * dwfl_standard_find_debuginfo().  It synthesizes no PLT symbols: those
 * come from lib/image/plt.c, per module.
 */
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/symbols.h"
#include "internal.h"
#include "image/plt.h"
#include "debugcache.h"
#include "symbols_plt.h"
#include "symbols_range.h"

#define CACHE_SLOTS 4096	/* direct-mapped, a power of two */
/*
 * The head of libdwfl's debuginfo_path, as in its default: beside the file,
 * then in its .debug/ subdirectory; the debug directories follow.
 */
#define DEBUGINFO_PATH_LOCAL ":.debug"
#define URLS_ENV "DEBUGINFOD_URLS"

struct sym_slot {
	uint64_t addr;
	int valid;
	int found;		/* a module maps addr */
	struct bt_sym sym;
};

/* What we keep per module: its userdata in libdwfl. */
struct sym_module {
	struct bt_symtab *st;
	char *name;		/* basename: dwfl's names are full paths */
	char *what;		/* the file, or "[vdso]", for fetch messages */
	Dwarf_Addr bias;
	struct bt_plt plt;	/* file addresses */
	struct sym_ranges ranges;	/* what libdwfl named, kept */
	int dwarf_tried;	/* its DWARF loaded (or not found) */
};

struct bt_symtab {
	Dwfl *dwfl;
	Dwfl_Callbacks cb;	/* dwfl keeps a pointer to it */
	char *debuginfo_path;	/* cb.debuginfo_path points here */
	struct bt_symtab_opts opts;
	struct sym_slot *cache;
	struct sym_module **mods;
	size_t nmods;
	const char *fetching;	/* whose debug file is being looked for */
	int fetch_told;		/* ... and opts.fetch was told */
	bt_sym_fallback_fn fallback;
	void *fallback_ctx;
};

/* ---- options ---- */

static void opts_copy(struct bt_symtab_opts *dst,
		      const struct bt_symtab_opts *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src)
		memcpy(dst, src, src->size < sizeof(*dst) ? src->size
							  : sizeof(*dst));
	dst->size = sizeof(*dst);
}

/*
 * Append @len bytes of @dir, made absolute (libdwfl reads a relative one
 * as below the file's directory), to the path being built in *@path.
 */
static int path_append(char **path, const char *dir, size_t len)
{
	char *name = strndup(dir, len), *abs = NULL, *p;
	struct stat st;
	int ret = 0;

	if (!name)
		return bt_fail(bte_nomem, ENOMEM, "debug directory");
	abs = realpath(name, NULL);
	if (!abs || stat(abs, &st) < 0)
		ret = bt_fail(bt_errno_to_bte(errno), errno,
			      "debug directory '%s'", name);
	else if (!S_ISDIR(st.st_mode))
		ret = bt_fail(bte_invalid, ENOTDIR, "debug directory '%s'",
			      name);
	else if (asprintf(&p, "%s:%s", *path, abs) < 0)
		ret = bt_fail(bte_nomem, ENOMEM, "debug directory");
	else {
		free(*path);
		*path = p;
	}
	free(abs);
	free(name);
	return ret;
}

/* libdwfl's debuginfo_path for @dirs ("A:B"), or NULL for its default. */
static int debuginfo_path(const char *dirs, char **out)
{
	char *path;
	size_t len;
	int ret;

	*out = NULL;
	if (!dirs)
		return 0;
	path = strdup(DEBUGINFO_PATH_LOCAL);
	if (!path)
		return bt_fail(bte_nomem, ENOMEM, "debug directory");
	for (; *dirs; dirs += len + (dirs[len] == ':')) {
		len = strcspn(dirs, ":");
		if (!len)
			continue;
		ret = path_append(&path, dirs, len);
		if (ret < 0) {
			free(path);
			return ret;
		}
	}
	*out = path;
	return 0;
}

int bt_symtab_check_opts(const struct bt_symtab_opts *opts)
{
	struct bt_symtab_opts o;
	char *path;
	int ret;

	opts_copy(&o, opts);
	ret = debuginfo_path(o.debug_dir, &path);
	free(path);
	return ret;
}

/* ---- debuginfod ---- */

static int urls_set(void)
{
	const char *urls = getenv(URLS_ENV);

	return urls && *urls;
}

/*
 * An empty DEBUGINFOD_URLS is libdebuginfod's off switch, read at each
 * query: set it for the while the symtab loads.  *@saved gets what to
 * restore, NULL if nothing was set.
 */
static int urls_off(struct bt_symtab *st, char **saved)
{
	*saved = NULL;
	if (!st->opts.no_debuginfod || !urls_set())
		return 0;
	*saved = strdup(getenv(URLS_ENV));
	if (!*saved || setenv(URLS_ENV, "", 1) < 0) {
		free(*saved);
		*saved = NULL;
		return bt_fail(bte_nomem, ENOMEM, "setenv(%s)", URLS_ENV);
	}
	return 0;
}

static void urls_restore(char *saved)
{
	if (!saved)
		return;
	setenv(URLS_ENV, saved, 1);
	free(saved);
}

/*
 * libdebuginfod's calls, from the copy libdw loads (with dlopen, when
 * DEBUGINFOD_URLS is set): linked, it loads libcurl and 27 more libraries
 * into every start of btrace (7-9 ms of CPU, most of a report's start).
 */
struct dfod_calls {
	void *(*get_user_data)(debuginfod_client *client);
	void (*set_user_data)(debuginfod_client *client, void *data);
	void (*set_progressfn)(debuginfod_client *client,
			       debuginfod_progressfn_t fn);
};

static struct dfod_calls dfod;

/* 0 once dfod is bound to the loaded libdebuginfod; -1 if it is not there. */
static int dfod_bind(void)
{
	void *h;

	if (dfod.set_progressfn)
		return 0;
	h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return -1;
	*(void **)&dfod.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&dfod.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&dfod.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	dlclose(h);	/* libdw's reference keeps it loaded */
	if (dfod.get_user_data && dfod.set_user_data && dfod.set_progressfn)
		return 0;
	dfod.set_progressfn = NULL;
	return -1;
}

/* Called by libdebuginfod while it talks to servers: a download is on. */
static int fetch_progress(debuginfod_client *client, long done, long total)
{
	struct bt_symtab *st = dfod.get_user_data(client);

	if (st && st->fetching && !st->fetch_told) {
		st->fetch_told = 1;
		st->opts.fetch(st->opts.fetch_ctx, st->fetching);
	}
	return 0;
}

static void fetch_watch(struct bt_symtab *st)
{
	debuginfod_client *client;

	if (!st->opts.fetch || st->opts.no_debuginfod || !urls_set())
		return;
	client = dwfl_get_debuginfod_client(st->dwfl);
	if (!client || dfod_bind() < 0)	/* not there: nothing is fetched */
		return;
	dfod.set_user_data(client, st);
	dfod.set_progressfn(client, fetch_progress);
}

/* libdwfl's standard search, with the module known to fetch_progress(). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_module *sm = *userdata;
	int fd;

	/* before the standard search, which keeps what it opens */
	fd = bt_debugcache_find(mod, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	if (sm) {
		sm->st->fetching = sm->what;
		sm->st->fetch_told = 0;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base,
					  file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (sm)
		sm->st->fetching = NULL;
	bt_debugcache_add(mod, fd, *debuginfo_file_name);
	return fd;
}

/* ---- making and freeing ---- */

/* A symtab whose modules' files @tmpl's find_elf finds. */
static int symtab_new(struct bt_symtab **out, const Dwfl_Callbacks *tmpl,
		      const struct bt_symtab_opts *opts)
{
	struct bt_symtab *st;
	int ret;

	*out = NULL;
	elf_version(EV_CURRENT);
	st = calloc(1, sizeof(*st));
	if (!st)
		return bt_fail(bte_nomem, ENOMEM, "symtab");
	opts_copy(&st->opts, opts);
	ret = debuginfo_path(st->opts.debug_dir, &st->debuginfo_path);
	st->opts.debug_dir = NULL;	/* the caller's string: used now only */
	if (ret < 0) {
		free(st);
		return ret;
	}
	st->cb.find_elf = tmpl->find_elf;
	st->cb.find_debuginfo = find_debuginfo;
	st->cb.debuginfo_path = &st->debuginfo_path;
	st->cache = calloc(CACHE_SLOTS, sizeof(*st->cache));
	st->dwfl = dwfl_begin(&st->cb);
	if (!st->cache || !st->dwfl) {
		bt_symtab_free(st);
		return bt_fail(bte_nomem, ENOMEM, "dwfl_begin");
	}
	fetch_watch(st);
	*out = st;
	return 0;
}

static void module_free(struct sym_module *sm)
{
	if (!sm)
		return;
	bt_plt_release(&sm->plt);
	sym_ranges_release(&sm->ranges);
	free(sm->name);
	free(sm->what);
	free(sm);
}

void bt_symtab_free(struct bt_symtab *symtab)
{
	size_t i;

	if (!symtab)
		return;
	if (symtab->dwfl)
		dwfl_end(symtab->dwfl);
	for (i = 0; i < symtab->nmods; i++)
		module_free(symtab->mods[i]);
	free(symtab->mods);
	free(symtab->debuginfo_path);
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

static struct sym_module *module_new(struct bt_symtab *st, const char *name)
{
	struct sym_module *sm = calloc(1, sizeof(*sm)), **mods;

	if (!sm)
		return NULL;
	sm->st = st;
	sm->name = module_basename(name);
	sm->what = name[0] == '/' ? strdup(name) : module_basename(name);
	mods = realloc(st->mods, (st->nmods + 1) * sizeof(*mods));
	if (mods)
		st->mods = mods;
	if (!sm->name || !sm->what || !mods) {
		module_free(sm);
		return NULL;
	}
	st->mods[st->nmods++] = sm;
	return sm;
}

/* ---- loading ---- */

/* Load what lookups need now, and give the module its short name. */
static int load_module(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	struct bt_symtab *st = arg;
	struct sym_module *sm;
	Dwarf_Addr bias;

	if (*userdata)	/* loaded by an earlier bt_symtab_add_elf() */
		return DWARF_CB_OK;
	sm = module_new(st, name);
	if (!sm)
		return DWARF_CB_ABORT;
	*userdata = sm;
	dwfl_module_getelf(mod, &bias);
	dwfl_module_getsymtab(mod);
	if (bt_sym_plt_load(st->dwfl, mod, &sm->bias, &sm->plt) < 0)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/*
 * A module's DWARF, at its first source line asked: opening it inflates
 * every compressed debug section (libc's: tens of MiB), which only the
 * modules whose lines are shown need.  Its file was found with the symbol
 * table (the same debug file), so this searches nowhere new.
 */
static void module_dwarf(Dwfl_Module *mod, struct sym_module *sm)
{
	Dwarf_Addr bias;
	char *saved;

	if (!sm || sm->dwarf_tried)
		return;
	sm->dwarf_tried = 1;
	if (urls_off(sm->st, &saved) < 0)
		return;
	dwfl_module_getdwarf(mod, &bias);
	urls_restore(saved);
}

static int load_modules(struct bt_symtab *st)
{
	char *saved;
	int ret;

	ret = urls_off(st, &saved);
	if (ret < 0)
		return ret;
	ret = dwfl_getmodules(st->dwfl, load_module, st, 0);
	urls_restore(saved);
	if (ret != 0)
		return bt_fail(bte_nomem, ENOMEM, "loading modules");
	return 0;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
};

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
};

int bt_symtab_alloc(struct bt_symtab **symtab,
		    const struct bt_symtab_opts *opts)
{
	if (!symtab)
		return bt_fail(bte_invalid, 0, "bt_symtab_alloc(NULL)");
	return symtab_new(symtab, &file_callbacks, opts);
}

int bt_symtab_add_elf(struct bt_symtab *symtab, const char *path,
		      uint64_t bias)
{
	Dwfl_Module *mod;
	int fd;

	if (!symtab || !path)
		return bt_fail(bte_invalid, 0, "bt_symtab_add_elf(NULL)");
	/* libdwfl does not say why a file failed: see for ourselves. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bt_fail(bt_errno_to_bte(errno), errno, "open(%s)", path);
	close(fd);
	dwfl_report_begin_add(symtab->dwfl);
	mod = dwfl_report_elf(symtab->dwfl, path, path, -1, bias, true);
	dwfl_report_end(symtab->dwfl, NULL, NULL);
	if (!mod)
		return bt_fail(bte_format, 0, "%s: %s", path, dwfl_errmsg(-1));
	memset(symtab->cache, 0, CACHE_SLOTS * sizeof(*symtab->cache));
	return load_modules(symtab);
}

int bt_symtab_from_pid_opts(struct bt_symtab **symtab, pid_t pid,
			    const struct bt_symtab_opts *opts)
{
	struct bt_symtab *st;
	int ret;

	if (!symtab)
		return bt_fail(bte_invalid, 0, "bt_symtab_from_pid(NULL)");
	ret = symtab_new(&st, &proc_callbacks, opts);
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

int bt_symtab_from_pid(struct bt_symtab **symtab, pid_t pid)
{
	return bt_symtab_from_pid_opts(symtab, pid, NULL);
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

int bt_symtab_from_maps_opts(struct bt_symtab **symtab,
			     const struct bt_maps *maps,
			     const struct bt_symtab_opts *opts)
{
	const struct bt_map *m;
	struct bt_symtab *st;
	size_t i;
	int ret;

	if (!symtab || !maps)
		return bt_fail(bte_invalid, 0, "bt_symtab_from_maps(NULL)");
	ret = symtab_new(&st, &file_callbacks, opts);
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

int bt_symtab_from_maps(struct bt_symtab **symtab, const struct bt_maps *maps)
{
	return bt_symtab_from_maps_opts(symtab, maps, NULL);
}

/* ---- lookups ---- */

static const char *path_basename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* A PLT stub's name, or what the module's symbol tables say. */
static const char *resolve_name(Dwfl_Module *mod, struct sym_module *sm,
				uint64_t addr, uint64_t *offset)
{
	const struct bt_plt_sym *plt = bt_plt_find(&sm->plt, addr - sm->bias);
	GElf_Off off = 0;
	GElf_Sym esym;
	const char *name;

	if (plt) {
		*offset = addr - sm->bias - plt->addr;
		return plt->name;
	}
	name = sym_ranges_find(&sm->ranges, addr, offset);
	if (name)
		return name;
	name = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
	*offset = name ? off : 0;
	sym_ranges_add(&sm->ranges, mod, addr, name, *offset);
	return name;
}

static int symtab_resolve(struct bt_symtab *st, uint64_t addr,
			  struct bt_sym *sym)
{
	struct sym_module *sm;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	void **userdata;
	int lineno = 0;

	memset(sym, 0, sizeof(*sym));
	mod = dwfl_addrmodule(st->dwfl, addr);
	if (!mod)
		return -bte_noent;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	sm = *userdata;
	if (!sm)	/* reported, never loaded: out of memory then */
		return -bte_noent;
	sym->module = sm->name;
	sym->name = resolve_name(mod, sm, addr, &sym->offset);
	module_dwarf(mod, sm);
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

static int iter_plt(struct sym_iter *it, const struct sym_module *sm)
{
	size_t i;

	for (i = 0; sm && i < sm->plt.count; i++) {
		it->ret = it->fn(sm->plt.sym[i].name,
				 sm->plt.sym[i].addr + sm->bias, it->ctx);
		if (it->ret)
			return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

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
	return iter_plt(it, *userdata);
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

	module_dwarf(mod, *userdata);
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
