// SPDX-License-Identifier: MIT
/*
 * Block profiles (recorder_int.h): which blocks of a file a program ran,
 * kept across runs in a directory, one file per build-id, so that the next
 * run translates them in one batch when it first needs a translation in
 * that file (rc_translate_set()), instead of a stop for each miss and
 * translations ahead of each that never run (python3's start-up: 3.1 k
 * stops and 137 k translations, of which 60 k ran).
 *
 * A profile keeps no code, only where blocks start: what is translated is
 * always decoded from the process's memory as it is, so a profile that
 * does not fit the code (a damaged file, a rebuilt file under the same
 * id) costs translations, never correctness.
 *
 * What ran: each translation sets a byte of its own when it runs (a mark:
 * movb $1 into ZONE_MARKS bytes after its zone's code, rec_xlate.c),
 * read back while the memory is there (rc_profile_harvest()); and the
 * blocks the tracer translates on a miss, the lookup's misses and every
 * block the history's replay walks (rc_profile_ran()).  Saved, merged with what the file held, when the
 * cache of blocks is dropped: the recorder's end, an exec, a flush.
 *
 * A block that ran in none of a file's last PROF_AGE_MAX runs leaves its
 * profile (a profile that only grew would make every start-up translate
 * what any run ever ran).  What of a profile ran is known from the marks
 * of the translations made from it; they cost (a mark's bytes each time
 * its translation runs: print(1) with its code cache warm took 0.123 s
 * with them, 0.113 s without), so only every PROF_AUDIT-th run of a file
 * makes them, and ages its profile by the runs since the last such run.
 * In the others what a profile holds keeps its age, and only what was
 * translated otherwise is marked.
 *
 * The file: PROF_MAGIC, a u32 count, a u32 of the runs saved since the
 * last audit, then count u32s in
 * ascending order: a block's offset in the file (bits 0-30), bit 31 if
 * the lookup found it (an indirect branch's target, entered in the
 * tables when translated from the profile); then count bytes: the runs
 * of the file since the block last ran (bits 0-3), and which of its
 * variants ran (bits 4-6: by pending outcomes, RB_PROF_VARS shifted),
 * the ones the next run translates.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/maps.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#define PROF_MAGIC	"BTBLKS4\n"
#define PROF_AGE_MAX	8	/* runs a block stays without running */
#define PROF_AUDIT	4	/* a run in this many marks a profile's */
#define PROF_MAX	(4u << 20)	/* blocks a profile keeps at most */
#define PROF_IBL	0x80000000u
#define PROF_OFF	0x7fffffffu
#define PROF_AGE	0x0f		/* the byte's age */
/* a variant's bit in the byte, from a block's (RB_PROF_VARS) */
#define PROF_VARS(prof)	((uint8_t)(((prof) & RB_PROF_VARS) << 1))
#define RB_VARS(byte)	((uint8_t)(((byte) >> 1) & RB_PROF_VARS))
_Static_assert(RX_PENDS_COLD == 4, "three variants, three bits");

/* a zone's mark_of: the block's start, the variant (pend) above, and
 * whether a harvest took it already (the next one needs no lookup) */
#define MARK_PEND	56
#define MARK_PC		((1ull << MARK_PEND) - 1)
#define MARK_TAKEN	(1ull << 63)

struct prof_head {
	char magic[8];
	uint32_t n, runs;	/* runs: saved since the last audit */
};

/* The directory: the options', $BTRACE_CODE_CACHE, $XDG_CACHE_HOME/btrace/
 * code, ~/.cache/btrace/code; "" (or "0" in the variable): none. */
void rc_profile_init(struct bt_recorder *r)
{
	const char *o = r->t->opts.code_cache, *env;
	char buf[4096];
	int n = -1;

	free(r->cache_dir);
	r->cache_dir = NULL;
	if (!o && (o = getenv("BTRACE_CODE_CACHE")) && !strcmp(o, "0"))
		o = "";
	if (o) {
		r->cache_dir = *o ? strdup(o) : NULL;
		return;
	}
	env = getenv("XDG_CACHE_HOME");
	if (env && env[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s/btrace/code", env);
	else if ((env = getenv("HOME")) && env[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s/.cache/btrace/code", env);
	if (n > 0 && (size_t)n < sizeof(buf))
		r->cache_dir = strdup(buf);
}

/* ---- modules ------------------------------------------------------------ */

static struct rc_mod *mod_find(struct bt_recorder *r, uint64_t a)
{
	size_t i;

	for (i = 0; i < r->nmod; i++)
		if (a >= r->mod[i].start && a < r->mod[i].end)
			return &r->mod[i];
	return NULL;
}

/* The executable, unwritable mappings of files with a build-id, read
 * again; those seen before keep whether their profile was loaded. */
static void mods_read(struct bt_recorder *r)
{
	struct rc_mod old[MOD_MAX];
	struct bt_maps maps;
	size_t nold = r->nmod, i, j;

	r->mods_stale = 0;
	if (bt_maps_read_plain(r->pid, &maps) < 0)
		return;
	memcpy(old, r->mod, nold * sizeof(*old));
	r->nmod = 0;
	for (i = 0; i < maps.count && r->nmod < MOD_MAX; i++) {
		struct bt_map *m = &maps.map[i];
		struct rc_mod *d = &r->mod[r->nmod];

		if (!(m->prot & BT_MAP_X) || (m->prot & BT_MAP_W) ||
		    !m->path || m->path[0] != '/' || m->deleted ||
		    m->offset > PROF_OFF)
			continue;
		memset(d, 0, sizeof(*d));
		d->start = m->start;
		d->end = m->end;
		d->offset = m->offset;
		for (j = 0; j < nold; j++)	/* known: no file opened */
			if (old[j].start == d->start && old[j].end == d->end &&
			    old[j].offset == d->offset)
				*d = old[j];
		if (!d->idlen) {
			bt_map_build_id(r->pid, m);
			if (!m->build_id_len)
				continue;
			memcpy(d->id, m->build_id, m->build_id_len);
			d->idlen = m->build_id_len;
		}
		r->nmod++;
	}
	bt_maps_release(&maps);
}

static int prof_path(const struct bt_recorder *r, const struct rc_mod *m,
		     char *buf, size_t len)
{
	size_t i, n = (size_t)snprintf(buf, len, "%s/", r->cache_dir);

	for (i = 0; i < m->idlen && n + 3 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", m->id[i]);
	return n + sizeof(".blocks") < len ?
		       (snprintf(buf + n, len - n, ".blocks"), 0) : -1;
}

/* The profile at @path: its entries into *@out, their ages into *@age
 * (NULL: not wanted), *@n of them, the runs since its last audit into
 * *@runs; 0 or -1 (none, or not a profile: then nothing). */
static int prof_read(const char *path, uint32_t **out, uint8_t **age,
		     size_t *n, uint32_t *runs)
{
	struct prof_head h;
	uint32_t *v = NULL;
	uint8_t *a = NULL;
	struct stat st;
	size_t i;
	int fd = bt_open(path, O_RDONLY);

	*out = NULL;
	if (age)
		*age = NULL;
	*n = 0;
	*runs = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || read(fd, &h, sizeof(h)) != sizeof(h) ||
	    memcmp(h.magic, PROF_MAGIC, 8) || h.runs >= PROF_AUDIT ||
	    h.n > PROF_MAX ||
	    (uint64_t)st.st_size != sizeof(h) + 5ull * h.n)
		goto bad;
	v = malloc(h.n * sizeof(*v) + 1);
	a = malloc(h.n + 1);
	if (!v || !a ||
	    read(fd, v, h.n * sizeof(*v)) != (ssize_t)(h.n * sizeof(*v)) ||
	    read(fd, a, h.n) != (ssize_t)h.n)
		goto bad;
	for (i = 0; i < h.n; i++)
		if ((i && (v[i] & PROF_OFF) <= (v[i - 1] & PROF_OFF)) ||
		    (a[i] & PROF_AGE) > PROF_AGE_MAX || (a[i] & 0x80))
			goto bad;
	close(fd);
	*out = v;
	if (age)
		*age = a;
	else
		free(a);
	*n = h.n;
	*runs = h.runs;
	return 0;
bad:
	free(v);
	free(a);
	close(fd);
	return -1;
}

/* ---- translating from a profile ------------------------------------------ */

/*
 * A translation is needed at @a: if @a is in a module whose profile was
 * not loaded yet, translate its blocks first, in every mapping of that
 * file there is (node maps its text in four: links between them are
 * made in the same batch).
 */
void rc_profile_enter(struct bt_recorder *r, struct bt_thread *th, uint64_t a)
{
	struct rc_mod *m, *g[MOD_MAX];
	char path[4200];
	uint32_t *v;
	uint64_t *at;
	uint8_t *how, *age;
	size_t n, ng = 0, i, j, k = 0;
	uint32_t runs;

	if (!r->cache_dir)
		return;
	m = mod_find(r, a);
	if (!m && (r->mods_stale || !r->nmod)) {
		mods_read(r);
		m = mod_find(r, a);
	}
	if (!m || m->loaded)
		return;
	for (i = 0; i < r->nmod; i++)	/* the file's mappings */
		if (!r->mod[i].loaded && r->mod[i].idlen == m->idlen &&
		    !memcmp(r->mod[i].id, m->id, m->idlen)) {
			r->mod[i].loaded = 1;
			g[ng++] = &r->mod[i];
		}
	if (prof_path(r, m, path, sizeof(path)) < 0 ||
	    prof_read(path, &v, &age, &n, &runs) < 0)
		return;
	if (runs + 1 < PROF_AUDIT) {	/* not an audit: no marks */
		for (j = 0; j < ng; j++)
			g[j]->unaudited = 1;
		r->prof_new++;		/* saved: one run more */
	}
	at = malloc(n * sizeof(*at) + 1);
	how = malloc(n + 1);
	for (i = 0; at && how && i < n; i++) {
		uint64_t off = v[i] & PROF_OFF;

		for (j = 0; j < ng; j++)
			if (off >= g[j]->offset &&
			    off - g[j]->offset < g[j]->end - g[j]->start)
				break;
		if (j == ng)
			continue;	/* in no executable mapping of it */
		at[k] = g[j]->start + (off - g[j]->offset);
		how[k++] = (uint8_t)(RB_VARS(age[i]) |
				     (v[i] & PROF_IBL ? RB_PROF_IBL : 0));
	}
	r->prof_nomark = m->unaudited;
	if (k)
		rc_translate_set(r, th, at, how, k);
	r->prof_nomark = 0;
	free(at);
	free(how);
	free(age);
	free(v);
}

/* ---- what ran ------------------------------------------------------------- */

void rc_profile_ran(struct bt_recorder *r, struct rb *b, int how)
{
	if (!r->cache_dir || (b->prof & how) == how)
		return;
	r->prof_new++;
	b->prof |= (uint8_t)how;
}

uint64_t rc_profile_mark(struct bt_recorder *r, struct zone *z,
			 const struct rb *b, uint8_t pend)
{
	if (!r->cache_dir || z->nmark == ZONE_MARKS)
		return 0;
	if (z->nmark == z->markcap) {
		size_t cap = z->markcap ? 2 * z->markcap : 4096;
		uint64_t *g = realloc(z->mark_of, cap * sizeof(*g));

		if (!g)
			return 0;
		z->mark_of = g;
		z->markcap = cap;
	}
	z->mark_of[z->nmark] = b->start | (uint64_t)pend << MARK_PEND;
	return z->base + ZONE_SIZE + z->nmark++;
}

/*
 * The marks read from the process while its memory is there (its exit
 * event, an exec, letting go, a flush): the blocks whose translations
 * set theirs ran.
 */
void rc_profile_harvest(struct bt_recorder *r)
{
	uint8_t *m;
	size_t zi, i;

	if (!r->cache_dir || !r->ready)
		return;
	for (zi = 0; zi < r->nzone; zi++) {
		struct zone *z = &r->zone[zi];

		if (!z->nmark || !z->mark_of || !(m = malloc(z->nmark)))
			continue;
		if (rc_mem_read(r, z->base + ZONE_SIZE, m, z->nmark) == 0)
			for (i = 0; i < z->nmark; i++) {
				struct rb *b;

				uint64_t e = z->mark_of[i];

				if (!m[i] || (e & MARK_TAKEN))
					continue;
				z->mark_of[i] |= MARK_TAKEN;
				if ((b = rc_block_find(r, e & MARK_PC)))
					rc_profile_ran(r, b, RB_PROF_RAN |
						RB_PROF_VAR((e >> MARK_PEND) & 0xff));
			}
		free(m);
	}
}

/*
 * The mark of @b's variant carrying @p, if its translation starts with
 * one: the movb (rec_xlate.c's emit_mark) whose byte is the zone's mark
 * of that very variant.  Its byte's address into *@at; 0 if none, -1 if
 * that cannot be told now (its code not in the process yet).
 */
static int mark_of_variant(struct bt_recorder *r, const struct rb *b,
			   unsigned p, uint64_t *at)
{
	uint64_t trans = b->trans[p], want = b->start |
					      (uint64_t)p << MARK_PEND;
	struct zone *z = rc_zone_of(r, trans);
	uint8_t code[7];
	int32_t d;

	if (!z || !z->mark_of)
		return 0;
	if (trans + sizeof(code) > z->base + z->flushed ||
	    rc_mem_read(r, trans, code, sizeof(code)) < 0)
		return -1;
	if (code[0] != 0xc6 || code[1] != 0x05 || code[6] != 1)
		return 0;
	memcpy(&d, code + 2, 4);
	*at = trans + 7 + (uint64_t)(int64_t)d;
	return *at >= z->base + ZONE_SIZE &&
	       *at < z->base + ZONE_SIZE + z->nmark &&
	       (z->mark_of[*at - z->base - ZONE_SIZE] & ~MARK_TAKEN) == want;
}

/*
 * A mark costs its translation's bytes each time it runs, 6-9% of the
 * CPU of sqlite3's CTE, recursive fib and python3's loop run from a
 * profile (the same with a 7-byte nop in its place), for nothing once its
 * byte is set.  The variants of @b whose marks are set (RB_PROF_VAR's
 * bits), to be translated again without (rec_hot.c); those whose marks
 * are not set yet are looked at in MARK_CHECKS calls at most.
 */
#define MARK_CHECKS	4

unsigned rc_profile_marked(struct bt_recorder *r, struct rb *b)
{
	unsigned p, vars = 0;

	if (!r->cache_dir || b->dead || b->mark_checks >= MARK_CHECKS)
		return 0;
	b->mark_checks++;
	for (p = RX_PEND_NONE; p < RX_PENDS_COLD; p++) {
		uint64_t at;
		uint8_t set;

		int has;

		if (!b->trans[p] || (b->unmarked >> p & 1))
			continue;
		has = mark_of_variant(r, b, p, &at);
		if (!has)
			b->unmarked |= (uint8_t)(1u << p);	/* none */
		else if (has > 0 && rc_mem_read(r, at, &set, 1) == 0 && set)
			vars |= RB_PROF_VAR(p);
	}
	return vars;
}

/* ---- saving ---------------------------------------------------------------- */

/*
 * A block that ran, as a save collects them: its offset and lookup bit
 * (the file's u32) in bits 0-31, its variants' bits (the file's byte,
 * PROF_VARS) in bits 32-39.
 */
#define ENT_OFF(e)	((uint32_t)(e) & PROF_OFF)
#define ENT_WORD(e)	((uint32_t)(e))
#define ENT_VARS(e)	((uint8_t)((e) >> 32))

static int ent_cmp(const void *a, const void *b)
{
	uint32_t x = ENT_OFF(*(const uint64_t *)a);
	uint32_t y = ENT_OFF(*(const uint64_t *)b);

	return x < y ? -1 : x > y;
}

/* The build-ids whose profiles this process aged already: a run ages a
 * profile once, however many of its processes save it. */
static struct {
	uint8_t id[20];
	uint8_t len;
} aged[256];
static size_t naged;

static int age_once(const struct rc_mod *m)
{
	size_t i;

	for (i = 0; i < naged; i++)
		if (aged[i].len == m->idlen &&
		    !memcmp(aged[i].id, m->id, m->idlen))
			return 0;
	if (naged < BT_ARRAY_SIZE(aged)) {
		memcpy(aged[naged].id, m->id, m->idlen);
		aged[naged++].len = m->idlen;
	}
	return 1;
}

/*
 * @v (@n of them, ascending, each offset once) ran in this run: merged
 * into what @path holds, written there whole (a file that is there is
 * complete, old or new).  What ran is 0 runs old, with the variants that
 * ran before too.  The rest, where this run is the first of its process
 * tree to save (@once) and an audit (not @unaudited): older by the runs
 * since the last audit, and gone past PROF_AGE_MAX; else as old as it
 * was, the runs since the audit one more.
 */
static void prof_write(const char *path, const uint64_t *v, size_t n,
		       int once, int unaudited)
{
	struct prof_head h = { PROF_MAGIC, 0, 0 };
	uint32_t *old, *all, runs;
	uint8_t *oage, *age;
	size_t nold, i = 0, j = 0, k = 0;
	char tmp[4300];
	unsigned step;
	FILE *f;

	if (prof_read(path, &old, &oage, &nold, &runs) < 0)
		nold = 0;
	step = once && !unaudited ? runs + 1 : 0;
	h.runs = unaudited ? runs + (unsigned)once : 0;
	if (h.runs >= PROF_AUDIT)
		h.runs = PROF_AUDIT - 1;
	all = malloc((n + nold) * sizeof(*all) + 1);
	age = malloc(n + nold + 1);
	while (all && age && (i < n || j < nold)) {	/* each offset once */
		uint32_t vo = i < n ? ENT_OFF(v[i]) : ~0u;
		uint32_t oo = j < nold ? old[j] & PROF_OFF : ~0u;

		if (vo <= oo) {		/* ran */
			all[k] = ENT_WORD(v[i]);
			age[k] = ENT_VARS(v[i++]);
			if (vo == oo) {
				all[k] |= old[j] & PROF_IBL;
				age[k] |= oage[j++] & ~PROF_AGE;
			}
			k++;
		} else if ((oage[j] & PROF_AGE) + step <= PROF_AGE_MAX) {
			all[k] = old[j];
			age[k++] = (uint8_t)(oage[j++] + step);
		} else {
			j++;		/* has not run for long */
		}
	}
	free(old);
	free(oage);
	h.n = (uint32_t)(k < PROF_MAX ? k : PROF_MAX);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	f = all && age ? bt_fopen(tmp, "we") : NULL;
	if (f && fwrite(&h, sizeof(h), 1, f) == 1 &&
	    fwrite(all, sizeof(*all), h.n, f) == h.n &&
	    fwrite(age, 1, h.n, f) == h.n && fclose(f) == 0) {
		if (rename(tmp, path) < 0)
			unlink(tmp);
	} else {
		if (f)
			fclose(f);
		unlink(tmp);
	}
	free(all);
	free(age);
}

/* mkdir -p of the cache directory (0700: what a program ran is its
 * user's). */
static int dir_make(const char *dir)
{
	char buf[4096];
	size_t i, n = strlen(dir);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, dir, n + 1);
	for (i = 1; i <= n; i++)
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];

			buf[i] = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				return -1;
			buf[i] = c;
		}
	return 0;
}

/* @v (@n, sorted) with each offset once (a file's range mapped twice,
 * as node maps its builtins); how many are left. */
static size_t uniq(uint64_t *v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && ENT_OFF(v[k - 1]) == ENT_OFF(v[i]))
			v[k - 1] |= v[i];
		else
			v[k++] = v[i];
	}
	return k;
}

/* The first module of @m's file (its mappings share one profile). */
static size_t mod_file(const struct bt_recorder *r, const struct rc_mod *m)
{
	size_t i;

	for (i = 0; &r->mod[i] != m; i++)
		if (r->mod[i].idlen == m->idlen &&
		    !memcmp(r->mod[i].id, m->id, m->idlen))
			break;
	return i;
}

/* The blocks that ran, by file, merged into their profiles. */
void rc_profile_save(struct bt_recorder *r)
{
	uint64_t **v = NULL;
	size_t *nv = NULL, *cap = NULL, i;
	char path[4200];

	if (!r->cache_dir || !r->prof_new || !r->nmod)
		return;
	r->prof_new = 0;
	v = calloc(r->nmod, sizeof(*v));
	nv = calloc(r->nmod, sizeof(*nv));
	cap = calloc(r->nmod, sizeof(*cap));
	if (!v || !nv || !cap || dir_make(r->cache_dir) < 0)
		goto out;
	for (i = 0; i < r->nbucket; i++) {
		struct rb *b;

		for (b = r->bucket[i]; b; b = b->hnext) {
			struct rc_mod *m;
			size_t mi;

			if (!(b->prof & RB_PROF_RAN) ||
			    !(m = mod_find(r, b->start)))
				continue;
			mi = mod_file(r, m);
			if (nv[mi] == cap[mi]) {
				size_t c = cap[mi] ? 2 * cap[mi] : 1024;
				uint64_t *g = realloc(v[mi], c * sizeof(*g));

				if (!g)
					continue;
				v[mi] = g;
				cap[mi] = c;
			}
			v[mi][nv[mi]++] =
				(uint64_t)PROF_VARS(b->prof) << 32 |
				(uint32_t)(b->start - m->start + m->offset) |
				(b->prof & RB_PROF_IBL ? PROF_IBL : 0);
		}
	}
	for (i = 0; i < r->nmod; i++) {
		/* one not audited is written for its count of runs */
		if ((!nv[i] && (!r->mod[i].unaudited ||
				mod_file(r, &r->mod[i]) != i)) ||
		    prof_path(r, &r->mod[i], path, sizeof(path)) < 0)
			continue;
		if (nv[i])
			qsort(v[i], nv[i], sizeof(*v[i]), ent_cmp);
		prof_write(path, v[i], uniq(v[i], nv[i]), age_once(&r->mod[i]),
			   r->mod[i].unaudited);
	}
out:
	for (i = 0; v && i < r->nmod; i++)
		free(v[i]);
	free(v);
	free(nv);
	free(cap);
}

/* A new address space (exec): its modules are read again. */
void rc_profile_reset(struct bt_recorder *r)
{
	r->nmod = 0;
	r->mods_stale = 1;
}

void rc_profile_free(struct bt_recorder *r)
{
	free(r->cache_dir);
	r->cache_dir = NULL;
}
