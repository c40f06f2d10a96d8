// SPDX-License-Identifier: MIT
/*
 * The fast mode's chains (soft_fast.h): a thread's history as its chain
 * commits it (what it ran up to where it stopped), and the path ahead of
 * it planned from the block cache up to the decision branches that stop
 * it, with the int3s it relies on.
 */
#include <string.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/insn.h"
#include "internal.h"
#include "backend/soft/fast_int.h"
#include "tracer/tracer.h"

/* ---- recording --------------------------------------------------------- */

/* @n more instructions ran (traced) in @th since its last branch. */
void fast_acc_add(struct bt_target *t, struct bt_thread *th, uint32_t n)
{
	struct fast_thread *ft = th->bk;

	ft->acc += n;
	t->stats.instructions += n;
}

void fast_branch_append(struct bt_target *t, struct bt_thread *th,
			uint64_t from, uint64_t to, int kind, int flags)
{
	struct fast_thread *ft = th->bk;

	bt_thread_record(t, th, from, to, ft->acc, kind, flags);
	ft->acc = 0;
}

void fast_gap_append(struct bt_target *t, struct bt_thread *th,
		     uint64_t from, uint64_t to, int reason)
{
	struct fast_thread *ft = th->bk;

	bt_thread_gap(th, from, to, reason);
	ft->acc = 0;
}

uint32_t bt_fast_history_take(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	uint32_t n = ft ? ft->acc : 0;

	(void)t;
	if (ft)
		ft->acc = 0;
	return n;
}

void bt_fast_history_carry(struct bt_target *t, struct bt_thread *th,
			   uint32_t n)
{
	struct fast_thread *ft = th->bk;

	(void)t;
	if (ft)
		ft->acc += n;
}

void bt_fast_history_gap(struct bt_target *t, struct bt_thread *th,
			 uint64_t from, uint64_t to, int reason)
{
	fast_gap_append(t, th, from, to, reason);
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
	fast_acc_add(t, th, l->ninsn);
	if (to->start == l->next)
		return;		/* going on at the next one is no branch */
	if (to->taken)
		fast_branch_append(t, th, l->end, to->start, BT_BR_COND, 0);
	else if (l->how == BT_BLOCK_BRANCH && (l->term_class == BT_INSN_JUMP ||
					       l->term_class == BT_INSN_CALL))
		fast_branch_append(t, th, l->end, to->start,
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
	fast_acc_add(t, th, l->ninsn);
	if (e->taken)
		fast_branch_append(t, th, l->end, e->target, BT_BR_COND, 0);
}

/*
 * The thread stopped at @pc: what it ran of its chain since it was
 * resumed goes into its ring.  The links are disjoint in the address
 * space, so the one holding @pc says which path the thread took: the main
 * one (conditionals not taken), or the taken side of one conditional.
 * The chain is then empty.
 */
static void chain_commit(struct bt_target *t, struct bt_thread *th,
			 uint64_t pc);

/* The chain's commit between the times of the stops around it. */
void fast_chain_commit(struct bt_target *t, struct bt_thread *th,
		       uint64_t pc)
{
	struct fast_thread *ft = th->bk;

	bt_thread_time_owed(th, ft->acc);
	chain_commit(t, th, pc);
	bt_thread_time_stop(th, ft->acc);
}

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
		fast_acc_add(t, th, 1);
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
		fast_gap_append(t, th, ft->chain[0].start, pc, BT_GAP_DECODE);
		return;
	}
	chain_pass(t, th, at);
	if (full)
		fast_acc_add(t, th, ft->chain[at].ninsn);
	else
		fast_acc_add(t, th, link_insns_before(t, &ft->chain[at], pc));
}

/* ---- the path ahead ---------------------------------------------------- */

int fast_is_restorer(const struct fast *f, uint64_t start)
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
	return fast_bp_insert(t, addr, kind, &b);
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

	if (ft->nchain == CHAIN_MAX || !fast_addr_chained(t, a))
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
		if (fast_bp_insert(t, b->end, BP_DECIDE, &bp) < 0)
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

	if (fast_code_read(t, addr, code) < 0 ||
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
	    link_overlaps(ft, target, target + 1) ||
	    !fast_addr_chained(t, target))
		return 0;
	if (taken && joins(t, b))
		return 0;	/* the chain would run into it: inverse */
	bp = fast_bp_find(f, target);
	if (bp && !bp_runs(bp))
		return 0;
	if (!bp && (!target_runs(t, target) ||
		    fast_bp_insert(t, target, BP_TARGET, &bp) < 0))
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

	if (!fast_addr_chained(t, b->target) ||
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
	const struct fast_bp *b = fast_bp_find(f, addr);
	size_t i;

	if (!b || b->pinned || chain_needs(ft, addr))
		return;
	for (i = 0; i < t->nthreads; i++) {
		const struct fast_thread *o = t->threads[i]->bk;

		if (o && o != ft && (o->foreign || chain_needs(o, addr)))
			return;
	}
	fast_bp_remove(t, addr);
}

/*
 * Does the system call that ends @b wait (sleep, I/O, a lock)?  Then it
 * is stepped, so that the stops before and after it tell how long it took
 * (tracer/clock.c): time blocked in it shows as such, not spread over the
 * stops around it.  Known only where its number is loaded right before
 * it (mov $nr,%eax: glibc's wrappers); the others run through the chain.
 */
static int syscall_waits(const struct bt_block *b)
{
	static const uint16_t waits[] = {
		0, 1, 7, 17, 18, 19, 20, 23, 34, 35, 42, 43, 44, 45, 46, 47,
		61, 202, 230, 232, 247, 270, 271, 281, 288,
	};
	const uint8_t *mov;
	uint32_t nr;
	size_t i;

	/* the instruction before the syscall: mov $nr,%eax (b8 imm32) */
	if (b->ninsn < 2 || b->off[b->ninsn - 2] + 5u != b->end - b->start)
		return 0;
	mov = b->bytes + b->off[b->ninsn - 2];
	if (mov[0] != 0xb8)
		return 0;
	memcpy(&nr, mov + 1, 4);
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (nr == waits[i])
			return 1;
	return 0;
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
		if (b->next - b->end == 2 && !fast_is_restorer(f, b->start) &&
		    !syscall_waits(b)) {
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

/*
 * Predict the paths from @pc up to the decision branches that will stop
 * the thread, and make sure int3s wait there.  Returns 0, or -bte_io when
 * no code can be read at @pc (the caller steps: the fault, if any, happens
 * for real).
 */
int fast_chain_build(struct bt_target *t, struct bt_thread *th, uint64_t pc)
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
