// SPDX-License-Identifier: MIT
/*
 * The fast software backend: int3 on decision branches, direct transfers
 * recorded from the block cache, decision branches emulated.  See
 * soft_fast.h for the design.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/insn.h"
#include "btrace/maps.h"
#include "btrace/ring.h"
#include "internal.h"
#include "backend/soft/soft_block.h"
#include "backend/soft/soft_displace.h"
#include "backend/soft/soft_emu.h"
#include "backend/soft/fast.h"
#include "tracer/tracer.h"

#define CHAIN_MAX 64
#define EXIT_MAX 16
#define RET_STACK_MAX 64

enum fast_bp_kind {
	BP_DECIDE = 1,	/* a decision branch: evaluate it */
	BP_STEP,	/* step the instruction with the int3 lifted */
	BP_DIRECT,	/* a direct jmp/call ending a chain early */
	BP_TARGET,	/* a side of a conditional: run it displaced */
};

struct fast_bp {
	uint64_t addr;
	uint8_t orig;
	uint8_t kind;		/* enum fast_bp_kind */
	uint8_t iclass;		/* enum bt_insn_class of the instruction */
	uint8_t emu_ok;
	uint8_t can_displace;	/* bt_displace_can() */
	uint8_t pinned;		/* never taken out as a stray (loader hook) */
	struct bt_emu_insn emu;
	uint64_t slot;		/* where the instruction runs displaced, 0: none */
	struct fast_bp *next;
};

/* One block of a thread's predicted path (a copy: blocks may be dropped). */
struct fast_link {
	uint64_t start, end, next;
	uint32_t ninsn;
	int16_t prev;		/* the link before on its path, -1: first */
	uint8_t taken;		/* entered by prev's conditional, taken */
	uint8_t how;		/* enum bt_block_end */
	uint8_t term_class;
	uint8_t stop_end;	/* ends a taken side: its int3 is relied on */
};

/*
 * A conditional of the chain with an int3 (BP_TARGET) on the side the
 * chain does not follow, usually its taken target (else its fall-through,
 * the chain going on at the taken one): the conditional itself goes
 * unwatched, and a thread stopping at the target went that way.  Targets
 * lie outside every link of the chain.
 */
struct fast_exit {
	uint64_t target;
	int16_t link;		/* the link the conditional ends */
	uint8_t taken;		/* target is the taken side (else fall-through) */
};

/* The function entries of traced code, for callbacks from untraced code. */
struct fast_entry {
	uint64_t stop;		/* the stop point of the entry's chain */
	uint64_t entry;
};

enum fast_state {
	FT_RUN = 0,	/* running natively along its chain */
	FT_SIGSTEP,	/* stepping into a signal handler */
	FT_STEPOVER,	/* stepping an instruction under a lifted int3 */
	FT_STEP,	/* stepping code that may change (no int3 there) */
	FT_NATIVE,	/* in untraced code: runs free until re-entry */
};

struct fast_thread {
	struct fast_link chain[CHAIN_MAX];
	size_t nchain;
	struct fast_exit exits[EXIT_MAX];
	size_t nexits;
	uint64_t displaced;	/* the chain begins with this one, displaced */
	int may_restart;	/* chain_build may ask for a displaced start */
	int next_taken;		/* the next main link is a conditional's target */
	uint32_t acc;		/* instructions since the last branch */
	int state;		/* enum fast_state */
	int need_step;		/* trap left it at an int3 to step over */
	int back_native;	/* that step is not traced: FT_NATIVE after */
	int foreign;		/* a followed fork child: another memory */
	struct user_regs_struct pre;	/* registers before a step */
	uint64_t lifted;	/* FT_STEPOVER: the int3 put back after */
	uint64_t stop;		/* where the chain ends (its int3), or 0 */
	int last;		/* the main path's last link, -1: none */
	/* untraced code (filters, from_sym) */
	uint64_t left_to;	/* first untraced address */
	struct fast_entry ret_stack[RET_STACK_MAX];	/* return addresses */
	size_t nret;
};

/* A module mapping and whether it is traced. */
struct fast_region {
	uint64_t start, end;
	int traced;
	int volatile_code;	/* writable or anonymous: step it */
};


struct fast {
	int memfd;
	pid_t mem_pid;
	struct bt_block_cache *blocks;
	struct bt_disasm *dis;
	struct bt_emu *emu;
	struct bt_displace *dsp;
	struct fast_bp **bp;
	size_t nbp_bucket, nbp;
	uint64_t *gone;		/* addresses of int3s taken out (a set) */
	size_t ngone, gone_cap;	/* gone_cap: 0 or a power of two */
	uint64_t restorers[16];
	size_t nrestorers;
	struct fast_region *region;
	size_t nregion;
	int maps_stale;
	int filtered;		/* only/exclude given */
	int armed;		/* tracing (from_sym reached, or none) */
	uint64_t from_addr, until_addr;
	struct fast_entry *entries;
	size_t nentries;
	int entries_done;
	int setup_done;
	int no_taken_sides;	/* chains for entries: main path only */
	int lifted_all;		/* every int3 out while a vfork child runs */
	uint64_t loader_hook;	/* _dl_debug_state, while a trigger waits */
	struct fast_thread scratch;	/* chains built for entries */
	void *above;		/* a backend built on this one (fast.h) */
};

static struct fast *fast_of(struct bt_target *t)
{
	return t->bk;
}

void *bt_fast_above(struct bt_target *t)
{
	return fast_of(t) ? fast_of(t)->above : NULL;
}

void bt_fast_set_above(struct bt_target *t, void *above)
{
	fast_of(t)->above = above;
}

static int ft_foreign(const struct bt_thread *th)
{
	return ((const struct fast_thread *)th->bk)->foreign;
}

/* ---- breakpoints ---------------------------------------------------- */

static size_t bp_hash(uint64_t addr, size_t n)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 24) & (n - 1);
}

static struct fast_bp *bp_find(const struct fast *f, uint64_t addr)
{
	struct fast_bp *b;

	if (!f->nbp)
		return NULL;
	for (b = f->bp[bp_hash(addr, f->nbp_bucket)]; b; b = b->next)
		if (b->addr == addr)
			return b;
	return NULL;
}

int bt_fast_has_int3(struct bt_target *t, uint64_t addr)
{
	return bp_find(fast_of(t), addr) != NULL;
}

size_t bt_fast_int3_count(struct bt_target *t)
{
	return fast_of(t)->nbp;
}

static int mem_open(struct bt_target *t, struct fast *f)
{
	char path[64];

	if (f->memfd >= 0 && f->mem_pid == t->pid)
		return 0;
	if (f->memfd >= 0)
		close(f->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	f->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (f->memfd < 0)
		return bt_fail(bte_perm, errno, "open(%s)", path);
	f->mem_pid = t->pid;
	return 0;
}

static int mem_poke(struct fast *f, uint64_t addr, uint8_t byte)
{
	if (f->lifted_all && byte == 0xcc)
		return 0;	/* a vfork child runs in this memory */
	if (pwrite(f->memfd, &byte, 1, (off_t)addr) != 1)
		return bt_fail(bte_io, errno, "write 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

static void fast_hide(struct bt_target *t, uint64_t addr, void *buf,
		      size_t len)
{
	struct fast *f = fast_of(t);
	uint8_t *p = buf;
	size_t i;

	if (!f || !f->nbp)
		return;
	for (i = 0; i < len; i++) {
		const struct fast_bp *b = bp_find(f, addr + i);

		if (b)
			p[i] = b->orig;
	}
}

/* Read code as the program sees it: every int3 of btrace hidden. */
static int fast_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (bt_target_mem(ctx, addr, buf, len) != (ssize_t)len)
		return -bte_io;
	return 0;
}

/*
 * The original code at @addr (btrace's int3s hidden) into @code, zeros
 * where a mapping ends first.  0, or -bte_io if not even its first byte
 * can be read.
 */
static int code_read(struct bt_target *t, uint64_t addr,
		     uint8_t code[BT_INSN_MAX_LEN])
{
	memset(code, 0, BT_INSN_MAX_LEN);
	if (fast_read(t, addr, code, 1) < 0)
		return -bte_io;
	fast_read(t, addr + 1, code + 1, BT_INSN_MAX_LEN - 1);
	return 0;
}

static void bp_grow(struct fast *f)
{
	size_t n = f->nbp_bucket ? f->nbp_bucket * 2 : 1024, i;
	struct fast_bp **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;
	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b = f->bp[i], *next;

		for (; b; b = next) {
			size_t h = bp_hash(b->addr, n);

			next = b->next;
			b->next = nb[h];
			nb[h] = b;
		}
	}
	free(f->bp);
	f->bp = nb;
	f->nbp_bucket = n;
}

static int bp_insert(struct bt_target *t, uint64_t addr, int kind,
		     struct fast_bp **out)
{
	struct fast *f = fast_of(t);
	uint8_t code[BT_INSN_MAX_LEN], orig;
	struct bt_insn in;
	struct fast_bp *b;
	size_t h;
	int ret;

	b = bp_find(f, addr);
	if (b) {
		if (kind == BP_STEP || b->kind == BP_STEP)
			b->kind = BP_STEP;
		*out = b;
		return 0;
	}
	if (code_read(t, addr, code) < 0)
		return -bte_io;
	orig = code[0];
	b = calloc(1, sizeof(*b));
	if (!b)
		return bt_fail(bte_nomem, ENOMEM, "breakpoint");
	b->addr = addr;
	b->orig = orig;
	b->kind = (uint8_t)kind;
	if (bt_insn_decode(f->dis, code, sizeof(code), addr, &in) == 0)
		b->iclass = in.iclass;
	b->emu_ok = bt_emu_decode(f->emu, code, sizeof(code), addr,
				  &b->emu) == 0;
	b->can_displace = b->iclass == BT_INSN_OTHER &&
			  bt_displace_can(f->dsp, code, sizeof(code), addr);
	if (kind == BP_TARGET && b->iclass != BT_INSN_OTHER)
		b->kind = b->emu_ok ? BP_DECIDE : BP_STEP;
	ret = mem_poke(f, addr, 0xcc);
	if (ret < 0) {
		free(b);
		return ret;
	}
	if (f->nbp >= f->nbp_bucket)
		bp_grow(f);
	h = bp_hash(addr, f->nbp_bucket);
	b->next = f->bp[h];
	f->bp[h] = b;
	f->nbp++;
	*out = b;
	return 0;
}

static int gone_has(const struct fast *f, uint64_t addr)
{
	size_t i;

	if (!f->gone_cap)
		return 0;
	for (i = bp_hash(addr, f->gone_cap); f->gone[i];
	     i = (i + 1) & (f->gone_cap - 1))
		if (f->gone[i] == addr)
			return 1;
	return 0;
}

/*
 * Remember that our int3 at @addr was taken out: a thread that hit it just
 * before may report its trap only now (gone_trap).  Never forgotten until
 * exec; on no memory, forgotten (the trap then goes to the program).
 */
static void gone_add(struct fast *f, uint64_t addr)
{
	size_t i;

	if (gone_has(f, addr))
		return;
	if (2 * (f->ngone + 1) > f->gone_cap) {
		size_t cap = f->gone_cap ? 2 * f->gone_cap : 256, n = f->gone_cap;
		uint64_t *old = f->gone, *nw = calloc(cap, sizeof(*nw));

		if (!nw)
			return;
		f->gone = nw;
		f->gone_cap = cap;
		f->ngone = 0;
		for (i = 0; i < n; i++)
			if (old[i])
				gone_add(f, old[i]);
		free(old);
	}
	for (i = bp_hash(addr, f->gone_cap); f->gone[i];
	     i = (i + 1) & (f->gone_cap - 1))
		;
	f->gone[i] = addr;
	f->ngone++;
}

/* Take the int3 at @addr out (the original byte back). */
static void bp_remove(struct fast *f, uint64_t addr)
{
	struct fast_bp **pp, *b;

	if (!f->nbp)
		return;
	for (pp = &f->bp[bp_hash(addr, f->nbp_bucket)]; (b = *pp);
	     pp = &b->next)
		if (b->addr == addr) {
			mem_poke(f, addr, b->orig);
			gone_add(f, addr);
			*pp = b->next;
			free(b);
			f->nbp--;
			return;
		}
}

/*
 * Put the original byte back under @b when tracing ends, unless the
 * program has written over our int3 since (code patched in place): its
 * own code stays.
 */
static void bp_restore(struct fast *f, const struct fast_bp *b)
{
	uint8_t now;

	if (pread(f->memfd, &now, 1, (off_t)b->addr) == 1 && now != 0xcc)
		return;
	mem_poke(f, b->addr, b->orig);
}

/* Put back the original bytes of every int3 in [start, end). */
static void bp_remove_range(struct fast *f, uint64_t start, uint64_t end,
			    int write)
{
	size_t i;

	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp **pp = &f->bp[i];

		while (*pp) {
			struct fast_bp *b = *pp;

			if (b->addr >= start && b->addr < end) {
				if (write)
					bp_restore(f, b);
				*pp = b->next;
				free(b);
				f->nbp--;
			} else {
				pp = &b->next;
			}
		}
	}
}

/* ---- the map of code: traced, untraced, volatile -------------------- */

static int glob_match(const char *const *globs, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (; globs && *globs; globs++)
		if (!fnmatch(*globs, path, 0) || !fnmatch(*globs, base, 0))
			return 1;
	return 0;
}

static int module_traced(const struct bt_target *t, const char *path)
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

	ret = bt_maps_read(t->pid, &maps);
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
		r->traced = module_traced(t, m->path);
		r->volatile_code = (m->prot & BT_MAP_W) ||
				   !(file || (m->path && !strcmp(m->path, "[vdso]")));
		n++;
	}
	f->nregion = n;
	f->maps_stale = 0;
	bt_maps_release(&maps);
	return 0;
}

static const struct fast_region *region_find(struct bt_target *t,
					     uint64_t addr)
{
	struct fast *f = fast_of(t);
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (f->maps_stale || pass)
			if (regions_load(t, f) < 0)
				return NULL;
		for (i = 0; i < f->nregion; i++)
			if (addr >= f->region[i].start && addr < f->region[i].end)
				return &f->region[i];
	}
	return NULL;
}

/* Code at @addr we run through the block cache and int3s. */
static int addr_fast(struct bt_target *t, uint64_t addr)
{
	const struct fast_region *r = region_find(t, addr);

	return r && r->traced && !r->volatile_code;
}

static int addr_traced(struct bt_target *t, uint64_t addr)
{
	const struct fast_region *r = region_find(t, addr);

	return !r || r->traced;
}

int bt_fast_code_stable(struct bt_target *t, uint64_t addr)
{
	return fast_of(t)->armed && addr_fast(t, addr) && addr_traced(t, addr);
}

void bt_fast_maps_changed(struct bt_target *t)
{
	fast_of(t)->maps_stale = 1;
}

/* ---- recording ------------------------------------------------------ */

/* @n more instructions ran (traced) in @th since its last branch. */
static void acc_add(struct bt_target *t, struct bt_thread *th, uint32_t n)
{
	struct fast_thread *ft = th->bk;

	ft->acc += n;
	t->stats.instructions += n;
}

static void branch_append(struct bt_target *t, struct bt_thread *th,
			  uint64_t from, uint64_t to, int kind, int flags)
{
	struct fast_thread *ft = th->bk;

	bt_thread_record(t, th, from, to, ft->acc, kind, flags);
	ft->acc = 0;
}

static void gap_append(struct bt_target *t, struct bt_thread *th,
		       uint64_t from, uint64_t to, int reason)
{
	struct fast_thread *ft = th->bk;

	bt_thread_gap(th, from, to, reason);
	ft->acc = 0;
}

void bt_fast_history_insns(struct bt_target *t, struct bt_thread *th,
			   uint32_t n)
{
	acc_add(t, th, n);
}

void bt_fast_history_branch(struct bt_target *t, struct bt_thread *th,
			    uint64_t from, uint64_t to, int kind, int flags)
{
	branch_append(t, th, from, to, kind, flags);
}

void bt_fast_history_gap(struct bt_target *t, struct bt_thread *th,
			 uint64_t from, uint64_t to, int reason)
{
	gap_append(t, th, from, to, reason);
}

/* Instructions of @l executed before @pc. */
static uint32_t link_insns_before(struct bt_target *t,
				  const struct fast_link *l, uint64_t pc)
{
	const struct bt_block *b;

	if (pc >= l->next)
		return l->ninsn;
	if (bt_block_get(fast_of(t)->blocks, l->start, fast_read, t, &b) < 0)
		return 0;
	return bt_block_insns_before(b, pc);
}

/* Record how the path went from link @l to link @to (its successor). */
static void link_pass(struct bt_target *t, struct bt_thread *th,
		      const struct fast_link *l, const struct fast_link *to)
{
	acc_add(t, th, l->ninsn);
	if (to->start == l->next)
		return;		/* going on at the next one is no branch */
	if (to->taken)
		branch_append(t, th, l->end, to->start, BT_BR_COND, 0);
	else if (l->how == BT_BLOCK_BRANCH && (l->term_class == BT_INSN_JUMP ||
					       l->term_class == BT_INSN_CALL))
		branch_append(t, th, l->end, to->start,
		    bt_insn_branch_kind(l->term_class), 0);
	/* else fell through: a conditional not taken, a syscall, a cut */
}

/* Record the path from the chain's first link up to link @at. */
static void chain_pass(struct bt_target *t, struct bt_thread *th, int at)
{
	struct fast_thread *ft = th->bk;
	int path[CHAIN_MAX], np = 0, i;

	for (i = at; i >= 0 && np < CHAIN_MAX; i = ft->chain[i].prev)
		path[np++] = i;
	for (i = np - 1; i > 0; i--)
		link_pass(t, th, &ft->chain[path[i]], &ft->chain[path[i - 1]]);
}

/* The thread took exit @e: its conditional's link ran, and the branch. */
static void exit_commit(struct bt_target *t, struct bt_thread *th,
			const struct fast_exit *e)
{
	struct fast_thread *ft = th->bk;
	const struct fast_link *l = &ft->chain[e->link];

	chain_pass(t, th, e->link);
	acc_add(t, th, l->ninsn);
	if (e->taken)
		branch_append(t, th, l->end, e->target, BT_BR_COND, 0);
}

/*
 * The thread stopped at @pc: what it ran of its chain since it was
 * resumed goes into its ring.  The links are disjoint in the address
 * space, so the one holding @pc says which path the thread took: the main
 * one (conditionals not taken), or the taken side of one conditional.
 * The chain is then empty.
 */
static void chain_commit(struct bt_target *t, struct bt_thread *th,
			 uint64_t pc)
{
	struct fast_thread *ft = th->bk;
	int i, at = -1, n = (int)ft->nchain;
	int full = 0, exit = -1;

	ft->nchain = 0;
	if (ft->displaced) {
		uint64_t orig;
		uint8_t len;

		ft->displaced = 0;
		if (bt_displace_slot_of(fast_of(t)->dsp, pc, &orig, &len))
			return;		/* not run yet */
		acc_add(t, th, 1);
		pc = bt_displace_unmap(fast_of(t)->dsp, pc);
	}
	if (!n)
		return;
	for (i = 0; i < (int)ft->nexits && exit < 0; i++)
		if (pc == ft->exits[i].target)
			exit = i;
	if (exit >= 0) {
		exit_commit(t, th, &ft->exits[exit]);
		return;
	}
	for (i = 0; i < n && at < 0; i++)
		if (pc >= ft->chain[i].start && pc < ft->chain[i].next)
			at = i;
	if (at < 0 && ft->last >= 0 && pc == ft->chain[ft->last].next) {
		at = ft->last;	/* past a final int3 or syscall */
		full = 1;
	}
	if (at < 0) {
		gap_append(t, th, ft->chain[0].start, pc, BT_GAP_DECODE);
		return;
	}
	chain_pass(t, th, at);
	if (full)
		acc_add(t, th, ft->chain[at].ninsn);
	else
		acc_add(t, th, link_insns_before(t, &ft->chain[at], pc));
}

/* ---- the path ahead ------------------------------------------------- */

static int is_restorer(const struct fast *f, uint64_t start)
{
	size_t i;

	for (i = 0; i < f->nrestorers; i++)
		if (f->restorers[i] == start)
			return 1;
	return 0;
}

static int link_overlaps(const struct fast_thread *ft, uint64_t start,
			 uint64_t next)
{
	size_t i;

	for (i = 0; i < ft->nchain; i++)
		if (start < ft->chain[i].next && ft->chain[i].start < next)
			return 1;
	for (i = 0; i < ft->nexits; i++)
		if (ft->exits[i].target >= start && ft->exits[i].target < next)
			return 1;
	return 0;
}

/* Where the chain must stop: an int3 of @kind at @addr. */
static int chain_stop(struct bt_target *t, struct fast_thread *ft,
		      uint64_t addr, int kind)
{
	struct fast_bp *b;

	ft->stop = addr;
	return bp_insert(t, addr, kind, &b);
}

static int stop_kind(const struct bt_block *b)
{
	switch (b->term_class) {
	case BT_INSN_COND:
	case BT_INSN_RET:
	case BT_INSN_IJUMP:
	case BT_INSN_ICALL:
	case BT_INSN_JUMP:
	case BT_INSN_CALL:
		return b->emu_ok ? BP_DECIDE : BP_STEP;
	default:
		return BP_STEP;
	}
}

/*
 * Stop where the main path falls through from its last link @l to @next.
 * A thread stopping at @next is placed by the link holding it: where
 * @next lies inside another link (a taken side starts there, a loop comes
 * back) or is an exit's target, the stop would be misread, so the chain
 * stops at @l's last instruction instead (stepped or displaced).
 */
static int chain_stop_after(struct bt_target *t, struct fast_thread *ft,
			    const struct fast_link *l, uint64_t next)
{
	if (link_overlaps(ft, next, next + 1))
		return chain_stop(t, ft, l->end, BP_STEP);
	return chain_stop(t, ft, next, BP_STEP);
}

/*
 * The main path cannot go on at @next: it ends with its last link, whose
 * terminator gets the int3 (a jump, call or conditional is evaluated
 * there), or, after a fall-through, at @next to be stepped.
 */
static int chain_cut(struct bt_target *t, struct fast_thread *ft,
		     uint64_t next)
{
	const struct fast_link *l = &ft->chain[ft->last];

	ft->nchain = (size_t)ft->last + 1;	/* drops its taken side */
	if (l->how == BT_BLOCK_BRANCH &&
	    (l->term_class == BT_INSN_JUMP || l->term_class == BT_INSN_CALL ||
	     l->term_class == BT_INSN_COND))
		return chain_stop(t, ft, l->end,
				  l->term_class == BT_INSN_COND ? BP_DECIDE :
								  BP_DIRECT);
	return chain_stop_after(t, ft, l, next);
}

/* Append the block at @a to the chain, after link @prev. */
static int link_add(struct bt_target *t, struct fast_thread *ft, uint64_t a,
		    int prev, int taken, const struct bt_block **out)
{
	const struct bt_block *b;
	struct fast_link *l;
	int ret;

	if (ft->nchain == CHAIN_MAX || !addr_fast(t, a))
		return -bte_nosys;
	ret = bt_block_get(fast_of(t)->blocks, a, fast_read, t, &b);
	if (ret < 0)
		return ret;
	if (link_overlaps(ft, b->start, b->next))
		return -bte_nosys;
	l = &ft->chain[ft->nchain++];
	l->start = b->start;
	l->end = b->end;
	l->next = b->next;
	l->ninsn = b->ninsn;
	l->prev = (int16_t)prev;
	l->taken = (uint8_t)taken;
	l->how = b->how;
	l->term_class = b->term_class;
	l->stop_end = 0;
	*out = b;
	return 0;
}

#define TAKEN_MAX 8	/* blocks followed on a conditional's taken side */

/*
 * Can the conditional ending link @cond go unwatched?  Its taken side is
 * followed through direct transfers to the next decision branch, which
 * gets an int3: a thread stopping there took the branch.  Every block of
 * that side must be new to the chain (links stay disjoint).  With @sure,
 * only a branch always taken (a return, an indirect jump or call) may end
 * it: a stop due anyway.  Returns 1 with the links added, 0 (nothing
 * added) if not.
 */
static int chain_taken_side(struct bt_target *t, struct fast_thread *ft,
			    int cond, uint64_t target, int sure)
{
	size_t n0 = ft->nchain;
	uint64_t a = target;
	int prev = cond, taken = 1, i;

	for (i = 0; i < TAKEN_MAX; i++) {
		const struct bt_block *b;
		struct fast_bp *bp;

		if (link_add(t, ft, a, prev, taken, &b) < 0)
			break;
		prev = (int)ft->nchain - 1;
		taken = 0;
		if (b->how == BT_BLOCK_CUT) {
			a = b->next;
			continue;
		}
		if (b->how != BT_BLOCK_BRANCH)
			break;
		if (b->term_class == BT_INSN_JUMP || b->term_class == BT_INSN_CALL) {
			a = b->target;
			continue;
		}
		if (stop_kind(b) != BP_DECIDE || b->term_class == BT_INSN_JUMP ||
		    b->term_class == BT_INSN_CALL)
			break;
		if (!sure && b->term_class == BT_INSN_COND)
			break;
		if (bp_insert(t, b->end, BP_DECIDE, &bp) < 0)
			break;
		ft->chain[ft->nchain - 1].stop_end = 1;
		return 1;
	}
	ft->nchain = n0;
	return 0;
}

/*
 * Can the instruction at @addr be a conditional's target?  2: it runs
 * displaced; 1: it is a branch evaluated there; 0: neither.
 */
static int target_runs(struct bt_target *t, uint64_t addr)
{
	struct fast *f = fast_of(t);
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_emu_insn ei;
	struct bt_insn in;

	if (code_read(t, addr, code) < 0 ||
	    bt_insn_decode(f->dis, code, sizeof(code), addr, &in) < 0)
		return 0;
	if (in.iclass == BT_INSN_OTHER)
		return bt_displace_can(f->dsp, code, sizeof(code), addr) ? 2 : 0;
	return bt_emu_decode(f->emu, code, sizeof(code), addr, &ei) == 0;
}

/* target_runs() for an instruction that has an int3 of ours already. */
static int bp_runs(const struct fast_bp *b)
{
	return b->can_displace || (b->iclass != BT_INSN_OTHER &&
				   b->kind != BP_STEP);
}

/* Does the fall-through of the conditional ending @b run into its target? */
static int joins(struct bt_target *t, const struct bt_block *b)
{
	const struct bt_block *fb;

	return bt_block_get(fast_of(t)->blocks, b->next, fast_read, t,
			    &fb) == 0 &&
	       b->target >= fb->start && b->target < fb->next;
}

/*
 * Can the conditional ending block @b (the main path's last link) go
 * unwatched, with an int3 on its taken target instead (@taken, else on its
 * fall-through: chain_exit_inverse)?  The target must
 * lie outside the chain's links, be no other exit's target (link_overlaps
 * keeps later links clear of it too), and its instruction must run
 * displaced or be a branch evaluated there: a thread stopping at the
 * target took the branch, at the cost of that one stop.  Returns 1 with
 * the exit added, 0 if not.
 */
static int chain_exit(struct bt_target *t, struct fast_thread *ft,
		      const struct bt_block *b, int taken)
{
	struct fast *f = fast_of(t);
	uint64_t target = taken ? b->target : b->next;
	struct fast_bp *bp;

	if (ft->nexits == EXIT_MAX || b->target == b->next ||
	    link_overlaps(ft, target, target + 1) || !addr_fast(t, target))
		return 0;
	if (taken && joins(t, b))
		return 0;	/* the chain would run into it: inverse */
	bp = bp_find(f, target);
	if (bp && !bp_runs(bp))
		return 0;
	if (!bp && (!target_runs(t, target) ||
		    bp_insert(t, target, BP_TARGET, &bp) < 0))
		return 0;
	ft->exits[ft->nexits].target = target;
	ft->exits[ft->nexits].link = (int16_t)ft->last;
	ft->exits[ft->nexits].taken = (uint8_t)taken;
	ft->nexits++;
	return 1;
}

/*
 * if (c) body;  The taken target of the conditional ending @b is where
 * its fall-through path joins, so neither exit nor taken side works there:
 * the chain goes on at the taken target instead, with the exit on the
 * fall-through (a stop only when the body runs).  Returns 1 with the exit
 * added and ft->next_taken set, 0 if not.
 */
static int chain_exit_inverse(struct bt_target *t, struct fast_thread *ft,
			      const struct bt_block *b)
{
	const struct bt_block *tb;

	if (!addr_fast(t, b->target) ||
	    bt_block_get(fast_of(t)->blocks, b->target, fast_read, t, &tb) < 0 ||
	    link_overlaps(ft, tb->start, tb->next) ||
	    (b->next >= tb->start && b->next < tb->next) ||
	    !chain_exit(t, ft, b, 0))
		return 0;
	ft->next_taken = 1;
	return 1;
}

/*
 * A thread stopping at an exit's target must have taken that exit: where
 * the chain ends at the same address, the chain ends at that exit's
 * conditional instead (evaluated there).
 */
static int chain_settle(struct bt_target *t, struct fast_thread *ft)
{
	size_t i;
	int ret;

	for (i = 0; i < ft->nexits; i++) {
		const struct fast_exit *e = &ft->exits[i];

		if (e->target != ft->stop &&
		    e->target != ft->chain[ft->last].next)
			continue;
		ft->last = e->link;
		ft->nchain = (size_t)e->link + 1;
		ft->nexits = i;
		ret = chain_stop(t, ft, ft->chain[ft->last].end, BP_DECIDE);
		if (ret < 0)
			return ret;
		i = (size_t)-1;	/* the new end against the exits left */
	}
	return 0;
}

/* Does @ft's current chain rely on an int3 at @addr? */
static int chain_needs(const struct fast_thread *ft, uint64_t addr)
{
	size_t i;

	if (ft->lifted == addr)
		return 1;	/* it puts the int3 back after its step */
	if (!ft->nchain)
		return 0;
	if (ft->stop == addr)
		return 1;
	for (i = 0; i < ft->nexits; i++)
		if (ft->exits[i].target == addr)
			return 1;
	for (i = 0; i < ft->nchain; i++)
		if (ft->chain[i].stop_end && ft->chain[i].end == addr)
			return 1;
	return 0;
}

/*
 * Take out our int3 at @addr (if any) unless a chain relies on it: @ft's,
 * being built (a thread's, or the scratch one of entry_stop), or another
 * thread's.  Kept while a followed fork child steps, and pinned ones
 * always.
 */
static void bp_drop_unused(struct bt_target *t, struct fast_thread *ft,
			   uint64_t addr)
{
	struct fast *f = fast_of(t);
	const struct fast_bp *b = bp_find(f, addr);
	size_t i;

	if (!b || b->pinned || chain_needs(ft, addr))
		return;
	for (i = 0; i < t->nthreads; i++) {
		const struct fast_thread *o = t->threads[i]->bk;

		if (o && o != ft && (o->foreign || chain_needs(o, addr)))
			return;
	}
	bp_remove(f, addr);
}

/* The next main-path block after @b, 0 when the chain stops at @b. */
static int link_follow(struct bt_target *t, struct fast_thread *ft,
		       const struct bt_block *b, uint64_t *next)
{
	struct fast *f = fast_of(t);

	*next = 0;
	if (b->how == BT_BLOCK_CUT) {
		*next = b->next;
		return 0;
	}
	if (b->how == BT_BLOCK_BAD)
		return chain_stop_after(t, ft, &ft->chain[ft->last], b->next);
	switch (b->term_class) {
	case BT_INSN_JUMP:
	case BT_INSN_CALL:
		*next = b->target;
		return 0;
	case BT_INSN_SYSCALL:
		/* only "syscall" comes back; rt_sigreturn is stepped */
		if (b->next - b->end == 2 && !is_restorer(f, b->start)) {
			*next = b->next;
			return 0;
		}
		return chain_stop(t, ft, b->end, BP_STEP);
	case BT_INSN_INT3:
		return 0;	/* the program's own: it traps by itself */
	case BT_INSN_COND:
		/* back to the chain's start, a loop's head: restart displaced */
		if (ft->may_restart && b->target == ft->chain[0].start &&
		    b->emu_ok && target_runs(t, b->target) == 2)
			return -bte_busy;
		if (!f->no_taken_sides && b->emu_ok && b->target &&
		    (chain_taken_side(t, ft, ft->last, b->target, 1) ||
		     chain_exit(t, ft, b, 1))) {
			*next = b->next;
			return 0;
		}
		if (!f->no_taken_sides && b->emu_ok && b->target &&
		    chain_exit_inverse(t, ft, b)) {
			*next = b->target;
			return 0;
		}
		if (!f->no_taken_sides && b->emu_ok && b->target &&
		    chain_taken_side(t, ft, ft->last, b->target, 0)) {
			*next = b->next;
			return 0;
		}
		return chain_stop(t, ft, b->end, stop_kind(b));
	default:
		return chain_stop(t, ft, b->end, stop_kind(b));
	}
}

/*
 * Predict the paths from @pc up to the decision branches that will stop
 * the thread, and make sure int3s wait there.  Returns 0, or -bte_io when
 * no code can be read at @pc (the caller steps: the fault, if any, happens
 * for real).
 */
/*
 * The chain runs through its links unstopped but where it relies on an
 * int3 (chain_needs): those other chains left on the way, on ordinary
 * instructions, unwatched conditionals and followed jumps and calls,
 * would stop the thread for nothing.  They go unless another thread's
 * chain relies on them.
 */
static void chain_clear_strays(struct bt_target *t, struct fast_thread *ft)
{
	struct fast *f = fast_of(t);
	size_t i;
	uint32_t k;

	if (!f->nbp || f->filtered)
		return;
	for (i = 0; i < ft->nchain; i++) {
		const struct bt_block *b = bt_block_find(f->blocks,
							 ft->chain[i].start);

		for (k = 0; b && k < b->ninsn; k++)
			bp_drop_unused(t, ft, b->start + b->off[k]);
	}
}

static int chain_grow(struct bt_target *t, struct fast_thread *ft, uint64_t pc)
{
	uint64_t a = pc;
	int ret;

	for (;;) {
		const struct bt_block *b;
		uint64_t next;

		ret = link_add(t, ft, a, ft->last, ft->next_taken, &b);
		ft->next_taken = 0;
		if (ret < 0) {
			if (ft->last < 0)
				return ret == -bte_nosys ? -bte_io : ret;
			return chain_cut(t, ft, a);
		}
		ft->last = (int)ft->nchain - 1;
		ret = link_follow(t, ft, b, &next);
		if (ret < 0 || !next)
			return ret;
		a = next;
	}
}

static int chain_build(struct bt_target *t, struct bt_thread *th, uint64_t pc)
{
	struct fast_thread *ft = th->bk;
	int ret;

	ft->nchain = 0;
	ft->nexits = 0;
	ft->next_taken = 0;
	ft->stop = 0;
	ft->last = -1;
	ret = chain_grow(t, ft, pc);
	if (ret < 0 || ft->last < 0)
		return ret;
	ret = chain_settle(t, ft);
	if (ret == 0)
		chain_clear_strays(t, ft);
	return ret;
}

/* ---- untraced code -------------------------------------------------- */

/* The stop point of the chain from @entry (0 if it has none). */
static uint64_t entry_stop(struct bt_target *t, uint64_t entry)
{
	struct fast *f = fast_of(t);
	struct bt_thread tmp = { .bk = &f->scratch };
	int ret;

	if (!addr_fast(t, entry))
		return 0;
	f->no_taken_sides = 1;
	ret = chain_build(t, &tmp, entry);
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

static int fast_syms_each(struct bt_target *t,
			  int (*fn)(struct bt_target *t, const char *name,
				    uint64_t addr, void *ctx),
			  void *ctx);

static int entries_add_sym(struct bt_target *t, const char *name,
			   uint64_t addr, void *ctx)
{
	if (!addr_fast(t, addr))
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
	fast_syms_each(t, entries_add_sym, NULL);
}

/* Leave traced code at @to; the thread comes back at @ret or a callback. */
static void native_enter(struct bt_target *t, struct bt_thread *th,
			 uint64_t to, uint64_t ret)
{
	struct fast_thread *ft = th->bk;

	ft->state = FT_NATIVE;
	ft->left_to = to;
	entries_install(t);
	if (ret && addr_fast(t, ret) && ft->nret < RET_STACK_MAX) {
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
static void native_leave(struct bt_target *t, struct bt_thread *th,
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
		gap_append(t, th, ft->left_to, stop, reason);
		ft->nchain = 0;
		return;
	}
	gap_append(t, th, ft->left_to, entry, reason);
	f->no_taken_sides = 1;
	if (chain_build(t, th, entry) < 0)
		ft->nchain = 0;
	f->no_taken_sides = 0;
	chain_commit(t, th, stop);
}

/* ---- stops ---------------------------------------------------------- */

static int set_regs(struct bt_thread *th, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, th->tid, 0, r) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)",
			       (int)th->tid);
	return 0;
}

static int emu_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return fast_read(ctx, addr, buf, len);
}

/* Record the taken branch @from -> @to of class @iclass and follow it. */
static void branch_taken(struct bt_target *t, struct bt_thread *th,
			 uint64_t from, uint64_t to, int iclass,
			 const struct user_regs_struct *after)
{
	struct fast_thread *ft = th->bk;
	uint64_t ret = 0;

	branch_append(t, th, from, to, bt_insn_branch_kind(iclass), 0);
	if (addr_traced(t, to))
		return;
	/*
	 * Into untraced code: where will it come back?  A call pushed the
	 * return address; a jump (a tail call, a PLT stub, the lazy binding
	 * stub that pushed two words more) finds it a little deeper.
	 */
	if (iclass == BT_INSN_CALL || iclass == BT_INSN_ICALL) {
		fast_read(t, after->rsp, &ret, sizeof(ret));
	} else if (iclass == BT_INSN_JUMP || iclass == BT_INSN_IJUMP) {
		uint64_t slot[3] = { 0 };
		size_t i;

		fast_read(t, after->rsp, slot, sizeof(slot));
		for (i = 0; i < 3 && !ret; i++)
			if (addr_fast(t, slot[i]))
				ret = slot[i];
	}
	native_enter(t, th, to, ret);
	(void)ft;
}

/*
 * The slot where the instruction under @b runs displaced, made on first
 * use: @th is stopped at a trap of ours, where a system call may be run
 * to map scratch memory.  0, or a negative bt_error (step instead).
 */
static int bp_slot(struct bt_target *t, struct bt_thread *th,
		   struct fast_bp *b)
{
	struct fast *f = fast_of(t);
	uint8_t code[BT_INSN_MAX_LEN];

	if (b->slot)
		return 0;
	if (ft_foreign(th) || f->lifted_all)
		return -bte_nosys;
	if (code_read(t, b->addr, code) < 0)
		return -bte_io;
	return bt_displace_make(f->dsp, t, th, f->memfd, code, sizeof(code),
				b->addr, &b->slot);
}

/*
 * @th stopped on our int3 @b (regs->rip is back at the instruction).
 * Evaluate the branch and move the thread on, or leave it there to be
 * stepped.  Returns 0 or a negative bt_error.
 */
static int bp_hit(struct bt_target *t, struct bt_thread *th,
		  struct fast_bp *b, struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	struct user_regs_struct r = *regs;
	struct bt_emu_result res;

	if (b->iclass == BT_INSN_OTHER && bp_slot(t, th, b) == 0) {
		regs->rip = b->slot;	/* fast_resume goes on from there */
		return set_regs(th, regs);
	}
	if (b->kind == BP_STEP || !b->emu_ok ||
	    bt_emu_eval(&b->emu, &r, emu_read, t, &res) < 0)
		goto step;
	if (res.push && pwrite(f->memfd, &res.push_value, 8, (off_t)r.rsp) != 8)
		goto step;
	if (set_regs(th, &r) < 0)
		return -bte_ptrace;
	acc_add(t, th, 1);
	*regs = r;
	/* as single-stepping sees it: going on at the next one is no branch */
	if (res.taken && res.next != b->addr + b->emu.len)
		branch_taken(t, th, b->addr, res.next, b->iclass, &r);
	return 0;
step:
	ft->need_step = 1;
	return set_regs(th, regs);
}

/* What a step of the instruction at @pre should have done without a signal. */
static uint64_t step_expected(struct bt_target *t, const struct bt_insn *in,
			      const struct user_regs_struct *pre,
			      const uint8_t *code)
{
	struct fast *f = fast_of(t);
	struct user_regs_struct r = *pre;
	struct bt_emu_result res;
	struct bt_emu_insn ei;

	if (in->rep)
		return 0;	/* may stay on itself */
	if (bt_emu_decode(f->emu, code, in->len, in->addr, &ei) == 0 &&
	    bt_emu_eval(&ei, &r, emu_read, t, &res) == 0)
		return res.next;
	return in->addr + in->len;
}

/* Decode the instruction at @pc into @in, its bytes into @code. */
static void step_decode(struct bt_target *t, uint64_t pc,
			uint8_t code[BT_INSN_MAX_LEN], struct bt_insn *in)
{
	code_read(t, pc, code);
	if (bt_insn_decode(fast_of(t)->dis, code, BT_INSN_MAX_LEN, pc, in) < 0) {
		memset(in, 0, sizeof(*in));
		in->addr = pc;
		in->iclass = BT_INSN_FAR;
	}
}

/*
 * @th is done stepping over the int3 it lifted: put it back, unless
 * another thread is stepping over the same one (its step would run
 * into the int3 and take it for the program's).
 */
static void bp_unlift(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	uint64_t addr = ft->lifted;
	size_t i;

	ft->lifted = 0;
	if (!addr || !f || !bp_find(f, addr))
		return;		/* or the int3 is gone meanwhile */
	for (i = 0; i < t->nthreads; i++) {
		const struct fast_thread *o = t->threads[i]->bk;

		if (o && o->lifted == addr)
			return;
	}
	mem_poke(f, addr, 0xcc);
}

/* A step of the instruction at ft->pre ended at @post: record it. */
static void step_done(struct bt_target *t, struct bt_thread *th,
		      const struct user_regs_struct *post)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	const struct user_regs_struct *pre = &ft->pre;
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_insn in;
	int state = ft->state;

	if (state == FT_STEPOVER)
		bp_unlift(t, th);
	ft->state = FT_RUN;
	if (ft->back_native) {
		ft->back_native = 0;
		ft->state = FT_NATIVE;
		return;
	}
	step_decode(t, pre->rip, code, &in);
	if (state == FT_SIGSTEP && post->rip != pre->rip &&
	    post->rip != step_expected(t, &in, pre, code)) {
		uint64_t restorer = 0;

		/* the handler's frame returns through the restorer */
		branch_append(t, th, pre->rip, post->rip, BT_BR_INTR, 0);
		if (fast_read(t, post->rsp, &restorer, 8) == 0 &&
		    !is_restorer(f, restorer) &&
		    f->nrestorers < BT_ARRAY_SIZE(f->restorers)) {
			f->restorers[f->nrestorers++] = restorer;
			bt_block_invalidate(f->blocks, restorer, restorer + 1);
		}
		return;
	}
	if (in.rep && post->rip == pre->rip)
		return;		/* one more iteration */
	acc_add(t, th, 1);
	if (in.late_trap && post->rip != in.addr + in.len) {
		/* the next one ran too, and the trap is its step (insn.h) */
		step_decode(t, in.addr + in.len, code, &in);
		acc_add(t, th, 1);
	}
	if (post->rip == in.addr + in.len)
		return;		/* fell through (a jump to the next one too) */
	if (in.iclass == BT_INSN_OTHER || in.iclass == BT_INSN_INT3)
		branch_append(t, th, in.addr, post->rip, BT_BR_INTR, 0);
	else if (in.iclass == BT_INSN_SYSCALL)
		branch_append(t, th, in.addr, post->rip, BT_BR_SYSRET,
		    pre->rax == SYS_rt_sigreturn ||
		    post->orig_rax == SYS_rt_sigreturn ? BT_BRF_SIGRETURN : 0);
	else
		branch_taken(t, th, in.addr, post->rip, in.iclass, post);
}

static int do_ptrace(int req, struct bt_thread *th, int sig)
{
	if (ptrace(req, th->tid, 0, (void *)(long)sig) < 0)
		return bt_fail(errno == ESRCH ? bte_exited : bte_ptrace, errno,
			       "ptrace(%s, %d)",
			       req == PTRACE_CONT ? "CONT" : "SINGLESTEP",
			       (int)th->tid);
	return 0;
}

static int step(struct bt_thread *th, int state,
		const struct user_regs_struct *regs, int sig)
{
	struct fast_thread *ft = th->bk;

	ft->state = state;
	ft->pre = *regs;
	return do_ptrace(PTRACE_SINGLESTEP, th, sig);
}

static int fast_triggers(struct bt_target *t, struct fast *f);
static int triggers_resolve(struct bt_target *t, struct fast *f);

/* Put every int3 back (after a vfork child left our memory). */
static void bp_reinsert_all(struct fast *f)
{
	size_t i;

	f->lifted_all = 0;
	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b;

		for (b = f->bp[i]; b; b = b->next)
			mem_poke(f, b->addr, 0xcc);
	}
}

static void fast_fork(struct bt_target *t, pid_t child, int shared)
{
	struct fast *f = fast_of(t);
	char path[64];
	size_t i;
	int fd;

	if (!f || !f->nbp)
		return;
	if (shared) {
		for (i = 0; i < f->nbp_bucket; i++) {
			struct fast_bp *b;

			for (b = f->bp[i]; b; b = b->next)
				mem_poke(f, b->addr, b->orig);
		}
		f->lifted_all = 1;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)child);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b;

		for (b = f->bp[i]; b; b = b->next)
			if (pwrite(fd, &b->orig, 1, (off_t)b->addr) != 1)
				break;
	}
	close(fd);
}

/* A new address space: every int3 and decoded block is gone with it. */
static void fast_exec(struct bt_target *t, struct fast *f)
{
	size_t i;

	bp_remove_range(f, 0, ~0ull, 0);
	bt_block_clear(f->blocks);
	bt_displace_reset(f->dsp);
	free(f->gone);
	f->gone = NULL;
	f->ngone = f->gone_cap = 0;
	f->nrestorers = 0;
	f->loader_hook = 0;
	f->nentries = 0;
	f->entries_done = 0;
	f->maps_stale = 1;
	f->mem_pid = 0;
	for (i = 0; i < t->nthreads; i++) {
		struct fast_thread *ft = t->threads[i]->bk;

		if (ft) {
			ft->nchain = 0;
			ft->nret = 0;
		}
	}
}

/* First resume after launch, attach or exec: the process is there. */
static int fast_setup(struct bt_target *t, struct bt_thread *th)
{
	struct fast *f = fast_of(t);
	int ret;

	if (th->why == BT_TS_EVENT && th->event == PTRACE_EVENT_EXEC &&
	    f->setup_done && !((struct fast_thread *)th->bk)->foreign) {
		fast_exec(t, f);
		f->setup_done = 0;
	}
	if (f->lifted_all && th->why == BT_TS_EVENT &&
	    th->event == PTRACE_EVENT_VFORK_DONE)
		bp_reinsert_all(f);
	if (f->setup_done)
		return 0;
	f->setup_done = 1;
	ret = mem_open(t, f);
	if (ret < 0)
		return ret;
	return fast_triggers(t, f);
}

/*
 * @th stopped inside a slot: commit what it ran of its chain and put its
 * pc back where the program has it (soft_displace.h).  A thread at the
 * start of a slot is left there when @keep_start: it is about to run it.
 */
static void thread_unslot(struct bt_target *t, struct bt_thread *th,
			  struct user_regs_struct *regs, int keep_start)
{
	struct fast *f = fast_of(t);
	uint64_t pc, orig;
	uint8_t len;

	pc = bt_displace_unmap(f->dsp, regs->rip);
	if (pc == regs->rip ||
	    (keep_start && bt_displace_slot_of(f->dsp, regs->rip, &orig, &len)))
		return;
	chain_commit(t, th, regs->rip);
	regs->rip = pc;
	set_regs(th, regs);
}

/* The same for a stopped thread, its registers read here. */
static void thread_unslot_stopped(struct bt_target *t, struct bt_thread *th)
{
	struct user_regs_struct regs;

	if (th->bk && !ft_foreign(th) && th->state == BT_TH_STOPPED &&
	    bt_thread_regs(th, &regs) == 0)
		thread_unslot(t, th, &regs, 0);
}

/*
 * Start @th's chain with a displaced instruction: @th stands at a slot
 * (bp_hit moved it there), or at an int3 of ours whose instruction has a
 * slot.  Returns 1 with the thread continued; 0 if neither, or if the
 * chain after it cannot be built (then back at the int3, to be stepped
 * with it lifted); or a negative bt_error.
 */
static int slot_enter(struct bt_target *t, struct bt_thread *th,
		      struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	struct fast_bp *b = NULL;
	uint64_t orig;
	uint8_t len;

	if (!bt_displace_slot_of(f->dsp, regs->rip, &orig, &len)) {
		b = bp_find(f, regs->rip);
		if (!b || !b->slot || b->iclass != BT_INSN_OTHER ||
		    !bt_displace_slot_of(f->dsp, b->slot, &orig, &len))
			return 0;
		regs->rip = b->slot;
	}
	if (chain_build(t, th, orig + len) < 0) {
		ft->nchain = 0;
		ft->need_step = 1;
		regs->rip = orig;
		return set_regs(th, regs) < 0 ? -bte_ptrace : 0;
	}
	if (b && set_regs(th, regs) < 0)
		return -bte_ptrace;
	ft->displaced = orig;
	ft->state = FT_RUN;
	t->stats.displaced++;
	return do_ptrace(PTRACE_CONT, th, 0) < 0 ? -bte_ptrace : 1;
}

/*
 * A conditional of the chain from pc goes back to pc (a loop's head): the
 * instruction at pc gets an int3 and runs displaced, and the chain starts
 * after it, so that the conditional becomes an exit.  Returns as
 * slot_enter().
 */
static int slot_restart(struct bt_target *t, struct bt_thread *th,
			struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast_bp *b;
	int ret;

	if (bp_insert(t, regs->rip, BP_TARGET, &b) < 0 ||
	    b->iclass != BT_INSN_OTHER || bp_slot(t, th, b) < 0)
		return 0;
	ret = slot_enter(t, th, regs);
	ft->need_step = 0;	/* then the int3 at pc stops it at once */
	return ret;
}

/* ---- resuming ------------------------------------------------------ */

int bt_fast_resume_begin(struct bt_target *t, struct bt_thread *th, int sig,
			 struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	int ret;

	ret = fast_setup(t, th);
	if (ret < 0)
		return ret;
	ret = bt_thread_regs(th, regs);
	if (ret < 0)
		return ret;
	if (ft->foreign)
		ret = step(th, sig ? FT_SIGSTEP : FT_STEP, regs, sig);
	else if (ft->state == FT_NATIVE && !(ft->need_step && !sig))
		ret = do_ptrace(PTRACE_CONT, th, sig);
	else
		goto commit;
	return ret < 0 ? ret : 1;
commit:
	ft->back_native = ft->state == FT_NATIVE;
	thread_unslot(t, th, regs, 1);
	chain_commit(t, th, regs->rip);
	if (!sig)
		return 0;
	ret = step(th, FT_SIGSTEP, regs, sig);
	return ret < 0 ? ret : 1;
}

int bt_fast_resume_owed(const struct bt_thread *th)
{
	const struct fast_thread *ft = th->bk;

	return ft->need_step || ft->back_native;
}

/* Step @th over the int3 of ours it stopped at, the int3 lifted. */
static int step_over(struct bt_target *t, struct bt_thread *th,
		     struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	struct fast_bp *b = bp_find(f, regs->rip);

	ft->need_step = 0;
	if (b) {
		mem_poke(f, b->addr, b->orig);
		ft->lifted = b->addr;
	}
	return step(th, FT_STEPOVER, regs, 0);
}

int bt_fast_resume_run(struct bt_target *t, struct bt_thread *th,
		       struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	int ret;

	if (!ft->need_step && !ft->back_native) {
		ret = slot_enter(t, th, regs);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	if (ft->need_step)
		return step_over(t, th, regs);
	if (!addr_fast(t, regs->rip)) {
		if (!addr_traced(t, regs->rip)) {
			native_enter(t, th, regs->rip, 0);
			return do_ptrace(PTRACE_CONT, th, 0);
		}
		return step(th, FT_STEP, regs, 0);
	}
	ft->may_restart = th->why == BT_TS_TRAP;
	ret = chain_build(t, th, regs->rip);
	ft->may_restart = 0;
	if (ret == -bte_busy) {
		ret = slot_restart(t, th, regs);
		if (ret)
			return ret < 0 ? ret : 0;
		ret = chain_build(t, th, regs->rip);
	}
	if (ret < 0) {
		ft->nchain = 0;
		return step(th, FT_STEP, regs, 0);
	}
	ft->state = FT_RUN;
	return do_ptrace(PTRACE_CONT, th, 0);
}

static int fast_resume(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct user_regs_struct regs;
	int ret;

	ret = bt_fast_resume_begin(t, th, sig, &regs);
	if (ret)
		return ret < 0 ? ret : 0;
	return bt_fast_resume_run(t, th, &regs);
}

int bt_fast_step_insn(struct bt_target *t, struct bt_thread *th,
		      const struct user_regs_struct *regs)
{
	return step(th, FT_STEP, regs, 0);
}

int bt_fast_stepping(const struct bt_thread *th, uint64_t *from)
{
	const struct fast_thread *ft = th->bk;

	if (!ft || ft->state != FT_STEP)
		return 0;
	if (from)
		*from = ft->pre.rip;
	return 1;
}

int bt_fast_restep(struct bt_thread *th)
{
	return do_ptrace(PTRACE_SINGLESTEP, th, 0);
}

void bt_fast_step_ran(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;

	acc_add(t, th, 1);
	ft->state = FT_RUN;
}

int bt_fast_cont(struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;

	ft->state = FT_RUN;
	return do_ptrace(PTRACE_CONT, th, 0);
}

/* target.c steps @th over one of its own breakpoints (int3 lifted). */
static int fast_step(struct bt_target *t, struct bt_thread *th, int sig)
{
	struct fast_thread *ft = th->bk;
	struct user_regs_struct regs;
	int ret;

	ret = bt_thread_regs(th, &regs);
	if (ret < 0)
		return ret;
	if (ft->state == FT_NATIVE) {
		ft->back_native = 1;
		return step(th, FT_STEP, &regs, sig);
	}
	chain_commit(t, th, regs.rip);
	return step(th, sig ? FT_SIGSTEP : FT_STEP, &regs, sig);
}

/*
 * @th reports an int3 trap at regs->rip - 1 where we have none: one we
 * took out after the thread hit it (another thread's chain no longer
 * needed it)?  Then it is ours: nothing but the int3 ran, the thread is
 * rewound and goes on.  Not if an int3 is there now (the program's), nor
 * at a breakpoint of target.c's.  Returns 1 if ours.
 */
static int gone_trap(struct bt_target *t, struct bt_thread *th,
		     struct user_regs_struct *regs)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	uint64_t at = regs->rip - 1;
	uint8_t byte;
	size_t i;

	if (!gone_has(f, at) || pread(f->memfd, &byte, 1, (off_t)at) != 1 ||
	    byte == 0xcc)
		return 0;
	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].number && t->breaks[i].addr == at)
			return 0;
	regs->rip = at;
	if (ft->state == FT_NATIVE)
		ft->need_step = 0;	/* runs on natively */
	else
		chain_commit(t, th, at);
	return set_regs(th, regs) == 0;
}

static int fast_trap(struct bt_target *t, struct bt_thread *th,
		     const siginfo_t *si)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	struct user_regs_struct regs;
	struct fast_bp *b;

	if (!ft)
		return 0;
	/*
	 * Killed since the trap (SIGKILL takes a tracee out of its stop):
	 * its end is what to report, not a SIGTRAP of unknown origin.
	 */
	if (bt_thread_regs(th, &regs) < 0)
		return 1;
	if (si->si_code == SI_KERNEL && !ft->foreign) {
		b = bp_find(f, regs.rip - 1);
		if (!b && gone_trap(t, th, &regs))
			return 1;
		if (!b || (ft->state == FT_STEPOVER && b->addr == ft->lifted))
			return 0;	/* the program's int3 or a btrace break */
		/*
		 * Ours from here on: whatever fails below (the thread was
		 * killed meanwhile), its SIGTRAP must not reach the program.
		 */
		regs.rip--;
		if (b->addr == f->loader_hook) {
			triggers_resolve(t, f);	/* a failure leaves them waiting */
			if (ft->state == FT_NATIVE) {
				ft->need_step = 1;	/* and on natively */
				set_regs(th, &regs);
				return 1;
			}
		}
		if (ft->state == FT_NATIVE) {
			native_leave(t, th, b->addr);
			if (ft->state == FT_NATIVE) {
				ft->need_step = 1;
				set_regs(th, &regs);
				return 1;
			}
		} else {
			/* a step that ran into an int3 is that int3's stop */
			ft->state = FT_RUN;
			chain_commit(t, th, b->addr);
		}
		bp_hit(t, th, b, &regs);
		return 1;
	}
	/*
	 * The syscall-exit report of a system call the thread was inside
	 * when the step was issued (exec at launch): nothing ran.
	 */
	if (ft->state == FT_STEP && si->si_code == TRAP_BRKPT &&
	    regs.rip == ft->pre.rip) {
		ft->state = FT_RUN;
		return 1;
	}
	if (ft->state == FT_SIGSTEP || ft->state == FT_STEPOVER ||
	    ft->state == FT_STEP) {
		step_done(t, th, &regs);
		return 1;
	}
	return 0;
}

/* ---- symbols, for from/until and the entries of traced code --------- */

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

/* Call @fn for each function symbol of the modules mapped now. */
static int fast_syms_each(struct bt_target *t,
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
	if (dwfl_linux_proc_report(d, t->pid) != 0) {
		dwfl_end(d);
		return bt_fail(bte_noent, 0, "modules of %d", (int)t->pid);
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

static int sym_resolve(struct bt_target *t, const char *name, uint64_t *addr)
{
	struct sym_find sf = { name, 0 };

	fast_syms_each(t, sym_find_one, &sf);
	*addr = sf.addr;
	if (!sf.addr)
		return bt_fail(bte_noent, 0, "no symbol '%s'", name);
	return 0;
}

/* ---- the backend ---------------------------------------------------- */

static int fast_probe(char *why, size_t size)
{
	return 0;
}

static void fast_free(struct fast *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b = f->bp[i], *n;

		for (; b; b = n) {
			n = b->next;
			free(b);
		}
	}
	free(f->bp);
	if (f->memfd >= 0)
		close(f->memfd);
	bt_block_cache_free(f->blocks);
	bt_disasm_free(f->dis);
	bt_emu_free(f->emu);
	bt_displace_free(f->dsp);
	free(f->region);
	free(f->entries);
	free(f->gone);
	free(f);
}

/*
 * --until and --from, resolved in the modules mapped now.  One not found
 * stays waiting (0 address) for a library that defines it.
 */
static int triggers_resolve(struct bt_target *t, struct fast *f)
{
	const struct bt_target_opts *o = &t->opts;
	int ret;

	if (o->until_sym && !f->until_addr &&
	    sym_resolve(t, o->until_sym, &f->until_addr) == 0) {
		ret = bt_target_break_insert(t, f->until_addr);
		if (ret < 0)
			return ret;
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
static int fast_triggers(struct bt_target *t, struct fast *f)
{
	const struct bt_target_opts *o = &t->opts;
	const char *name = NULL;
	struct fast_bp *b;
	uint64_t hook;
	int ret;

	ret = triggers_resolve(t, f);
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
	ret = bp_insert(t, hook, BP_DECIDE, &b);
	if (ret < 0)
		return ret;
	b->pinned = 1;
	f->loader_hook = hook;
	return 0;
}

static int fast_init(struct bt_target *t)
{
	const struct bt_target_opts *o = &t->opts;
	struct fast *f;
	int ret;

	f = calloc(1, sizeof(*f));
	if (!f)
		return bt_fail(bte_nomem, ENOMEM, "fast backend");
	f->memfd = -1;
	f->armed = !o->from_sym;
	f->maps_stale = 1;
	f->filtered = (o->only && o->only[0]) || (o->exclude && o->exclude[0]);
	t->bk = f;
	ret = bt_block_cache_alloc(&f->blocks);
	if (!ret)
		ret = bt_disasm_alloc(&f->dis);
	if (!ret)
		ret = bt_emu_alloc(&f->emu);
	if (!ret)
		ret = bt_displace_alloc(&f->dsp);
	if (ret < 0) {
		t->bk = NULL;
		fast_free(f);
	}
	return ret;
}

/*
 * bt_target_cont() returns: every thread stopped.  What each ran of its
 * chain goes into its ring now, so that stats and captures agree.
 */
static void fast_stopped(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];
		struct fast_thread *ft = th->bk;
		uint64_t pc;

		thread_unslot_stopped(t, th);
		if (ft && ft->nchain && ft->state != FT_NATIVE &&
		    th->state == BT_TH_STOPPED && bt_thread_pc(th, &pc) == 0)
			chain_commit(t, th, pc);
	}
}

static void fast_release(struct bt_target *t)
{
	struct fast *f = fast_of(t);
	size_t i;

	if (!f)
		return;
	/* no thread is left in a slot: they stay, but are never run again */
	for (i = 0; i < t->nthreads; i++)
		thread_unslot_stopped(t, t->threads[i]);
	if (f->memfd >= 0)
		bp_remove_range(f, 0, ~0ull, !f->lifted_all);
}

static void fast_fini(struct bt_target *t)
{
	struct fast *f = fast_of(t);

	if (!f)
		return;
	bp_remove_range(f, 0, ~0ull, 1);
	fast_free(f);
	t->bk = NULL;
}

static int fast_thread_start(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return bt_fail(bte_nomem, ENOMEM, "thread");
	th->bk = ft;
	if (!fast_of(t)->armed)
		ft->state = FT_NATIVE;
	if (th->tgid && th->tgid != t->pid) {
		/*
		 * A followed fork child has a memory of its own, with copies
		 * of our int3s: they go, and it is single-stepped.
		 */
		ft->foreign = 1;
		ft->state = FT_RUN;
		fast_fork(t, th->tgid, 0);
	}
	return 0;
}

static void fast_thread_end(struct bt_target *t, struct bt_thread *th)
{
	if (th->bk)
		bp_unlift(t, th);	/* gone in the middle of a step-over */
	free(th->bk);
	th->bk = NULL;
}

static void fast_signal(struct bt_target *t, struct bt_thread *th, int sig)
{
}

/* A signal stop: judged and shown at the program's own pc. */
static int fast_signalled(struct bt_target *t, struct bt_thread *th)
{
	struct fast *f = fast_of(t);

	if (!f)
		return 0;
	thread_unslot_stopped(t, th);
	return 0;
}

/* What @th ran, in its ring: its chain up to where it stopped. */
static void fast_sync(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	uint64_t pc;

	thread_unslot_stopped(t, th);
	if (ft && ft->state != FT_NATIVE && th->state == BT_TH_STOPPED &&
	    bt_thread_pc(th, &pc) == 0)
		chain_commit(t, th, pc);
}

static int fast_capture(struct bt_target *t, struct bt_thread *th,
			struct bt_capture *cap)
{
	struct bt_ring_view view;
	int ret;

	fast_sync(t, th);
	memset(cap, 0, sizeof(*cap));
	cap->format = BT_FMT_SOFT;
	cap->tid = th->tid;
	bt_cpu_read(&cap->cpu);
	bt_ring_view_init(&view, th->ring);
	ret = bt_ring_copy(&view, &cap->data, &cap->size);
	cap->lost = bt_ring_lost_records(th->ring);
	if (ret == -bte_torn || ret == -bte_corrupt) {
		cap->status = ret;
		ret = 0;
	}
	return ret < 0 ? ret : 0;
}

/*
 * A debugger moved the stopped thread's pc (fast_stopped committed its
 * chain already): the history breaks there.
 */
static void fast_moved(struct bt_target *t, struct bt_thread *th,
		       uint64_t from, uint64_t to)
{
	struct fast_thread *ft = th->bk;

	if (!ft || ft->foreign)
		return;
	ft->nchain = 0;
	ft->need_step = 0;
	if (ft->state != FT_NATIVE)
		gap_append(t, th, from, to, BT_GAP_MOVED);
}

/*
 * A debugger writes the program's memory: int3s of ours there go (the
 * loader hook stays, over the new byte), and the code decoded or
 * translated there is forgotten.
 */
static void fast_write(struct bt_target *t, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	struct fast *f = fast_of(t);
	size_t i;

	if (!f)
		return;
	for (i = 0; i < len && f->nbp; i++) {
		struct fast_bp *b = bp_find(f, addr + i);

		if (!b)
			continue;
		if (b->pinned) {
			b->orig = buf[i];
			buf[i] = 0xcc;
		} else {
			bp_remove(f, addr + i);
		}
	}
	bt_block_invalidate(f->blocks, addr, addr + len);
}

const struct bt_backend_ops bt_backend_soft_fast = {
	.name = "soft",
	.id = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_FAST,
	.probe = fast_probe,
	.init = fast_init,
	.fini = fast_fini,
	.thread_start = fast_thread_start,
	.thread_end = fast_thread_end,
	.resume = fast_resume,
	.step = fast_step,
	.trap = fast_trap,
	.fork = fast_fork,
	.release = fast_release,
	.stopped = fast_stopped,
	.hide = fast_hide,
	.signal = fast_signal,
	.signalled = fast_signalled,
	.capture = fast_capture,
	.sync = fast_sync,
	.moved = fast_moved,
	.write = fast_write,
};
