// SPDX-License-Identifier: MIT
/*
 * Memory as the program sees it, through the address spaces (aspace.c) of
 * the process and of the fork children followed, and the debugger's
 * breakpoints: numbered here, their int3s of kind BT_BP_USER there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

static int aspace_add(struct bt_target *t, struct bt_aspace *as)
{
	struct bt_aspace **grown;

	grown = realloc(t->forks, (t->nforks + 1) * sizeof(*grown));
	if (!grown)
		return bt_fail(bte_nomem, errno, "address spaces");
	t->forks = grown;
	t->forks[t->nforks++] = as;
	return 0;
}

/*
 * Fork child @child of process @parent is followed: its memory is a copy
 * of its parent's, our int3s in it.  Its table starts with the debugger's
 * breakpoints (they are the child's too); a backend takes its own out of
 * the child's memory (bt_aspace_fork_clean()) or puts them in again.  An
 * address space made for it at a first stop that came before this event
 * (its thread known) keeps what the backend put in it; one left by an
 * earlier process of that pid is replaced.
 */
int bt_target_aspace_fork(struct bt_target *t, pid_t parent, pid_t child)
{
	struct bt_aspace *from = bt_target_aspace(t, parent), *as;
	size_t i;
	int ret;

	if (!from)
		return -bte_nomem;
	for (i = 0; i < t->nforks; i++)
		if (bt_aspace_pid(t->forks[i]) == child &&
		    bt_thread_find(t, child))
			return bt_aspace_fork_into(from, t->forks[i],
						   BT_BP_MASK(BT_BP_USER));
	ret = bt_aspace_fork(from, child, BT_BP_MASK(BT_BP_USER), &as);
	if (ret < 0)
		return ret;
	for (i = 0; i < t->nforks; i++)
		if (bt_aspace_pid(t->forks[i]) == child) {
			bt_aspace_free(t->forks[i]);
			t->forks[i] = as;
			return 0;
		}
	ret = aspace_add(t, as);
	if (ret < 0)
		bt_aspace_free(as);
	return ret;
}

void bt_target_aspace_forget(struct bt_target *t, pid_t tgid)
{
	size_t i;

	for (i = 0; i < t->nforks; i++)
		if (bt_aspace_pid(t->forks[i]) == tgid) {
			bt_aspace_free(t->forks[i]);
			t->forks[i] = t->forks[--t->nforks];
			return;
		}
}

/*
 * The address space of process @tgid (aspace.h): the target's own, or a
 * followed fork child's (made at its fork event, bt_target_aspace_fork()).
 */
struct bt_aspace *bt_target_aspace(struct bt_target *t, pid_t tgid)
{
	struct bt_aspace *as;
	size_t i;

	if (!tgid || tgid == t->pid) {
		if (!t->as && bt_aspace_alloc(t->pid, &t->as) < 0)
			return NULL;
		return t->as;
	}
	for (i = 0; i < t->nforks; i++)
		if (bt_aspace_pid(t->forks[i]) == tgid)
			return t->forks[i];
	/* Its first stop came before its parent's fork event. */
	if (bt_aspace_alloc(tgid, &as) < 0)
		return NULL;
	if (aspace_add(t, as) < 0) {
		bt_aspace_free(as);
		return NULL;
	}
	return as;
}

ssize_t bt_thread_mem(struct bt_target *t, struct bt_thread *th,
		      uint64_t addr, void *buf, size_t len)
{
	struct bt_aspace *as = bt_target_aspace(t, th->tgid);
	ssize_t n;

	if (!as)
		return -bte_nomem;
	n = bt_aspace_read(as, addr, buf, len);
	return n;
}

ssize_t bt_target_mem(struct bt_target *t, uint64_t addr, void *buf,
		      size_t len)
{
	struct bt_thread *th = bt_thread_any(t, 0);

	if (!th)
		return bt_fail(bte_exited, 0, "process %d has exited", t->pid);
	return bt_thread_mem(t, th, addr, buf, len);
}

ssize_t bt_target_read(struct bt_target *t, uint64_t addr, void *buf,
		       size_t len)
{
	if (!t || (!buf && len))
		return bt_fail(bte_invalid, 0, "bt_target_read(NULL)");
	if (!len)
		return 0;
	return bt_target_mem(t, addr, buf, len);
}

ssize_t bt_target_read_thread(struct bt_target *t, pid_t tid, uint64_t addr,
			      void *buf, size_t len)
{
	struct bt_thread *th;

	if (!t || (!buf && len))
		return bt_fail(bte_invalid, 0, "bt_target_read_thread(NULL)");
	th = bt_thread_find_any(t, tid);
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	if (!len)
		return 0;
	/* a thread gone: another of its process, if one is left */
	if (th->state == BT_TH_GONE && bt_process_thread(t, th->tgid))
		th = bt_process_thread(t, th->tgid);
	if (th->state == BT_TH_GONE)
		return bt_fail(bte_exited, 0, "thread %d has exited", tid);
	return bt_thread_mem(t, th, addr, buf, len);
}

/*
 * Put @b's int3 in (@insert) or take it out.  Followed fork children got
 * it in their copy of the memory at fork: out of theirs too.  One of a
 * process's own is in that process only.
 */
int bt_break_poke(struct bt_target *t, struct bt_break *b, int insert)
{
	struct bt_aspace *as = bt_target_aspace(t, b->pid ? b->pid : t->pid);
	size_t i;
	int ret;

	if (!bt_thread_any(t, 1))
		return bt_fail(bte_exited, 0, "no stopped thread of %d", t->pid);
	if (!as)
		return -bte_nomem;
	if (insert) {
		ret = bt_aspace_insert(as, b->addr, BT_BP_USER);
	} else {
		ret = bt_aspace_remove(as, b->addr, BT_BP_USER);
		for (i = 0; !b->pid && i < t->nforks; i++)
			if (bt_aspace_kinds(t->forks[i], b->addr) &
			    BT_BP_MASK(BT_BP_USER))
				bt_aspace_remove(t->forks[i], b->addr,
						 BT_BP_USER);
	}
	if (ret < 0)
		return ret;
	b->inserted = insert;
	return 0;
}

/* A free slot of t->breaks, zeroed; NULL without memory. */
static struct bt_break *break_slot(struct bt_target *t)
{
	struct bt_break *b = NULL, *grown;
	size_t i;

	for (i = 0; i < t->nbreaks && !b; i++)
		if (!t->breaks[i].number)
			b = &t->breaks[i];
	if (!b) {
		grown = realloc(t->breaks, (t->nbreaks + 1) * sizeof(*grown));
		if (!grown)
			return NULL;
		t->breaks = grown;
		b = &t->breaks[t->nbreaks++];
	}
	memset(b, 0, sizeof(*b));
	return b;
}

int bt_target_break_insert(struct bt_target *t, uint64_t addr)
{
	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_break_insert(NULL)");
	return bt_target_break_insert_in(t, 0, addr, 0);
}

int bt_target_break_insert_in(struct bt_target *t, pid_t pid, uint64_t addr,
			      int number)
{
	struct bt_break *b;
	size_t i;
	int ret;

	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d is not traced", t->pid);
	for (i = 0; i < t->nbreaks; i++)	/* @pid's own (0: every one's) */
		if (t->breaks[i].number && t->breaks[i].inserted &&
		    t->breaks[i].pid == pid && t->breaks[i].addr == addr)
			return t->breaks[i].number;
	b = break_slot(t);
	if (!b)
		return bt_fail(bte_nomem, errno, "breakpoints");
	b->addr = addr;
	b->pid = pid;
	ret = bt_break_poke(t, b, 1);
	if (ret < 0)
		return ret;
	b->number = number > 0 ? number : ++t->next_break;
	return b->number;
}

int bt_breaks_fork(struct bt_target *t, pid_t parent, pid_t child)
{
	size_t i, n = t->nbreaks;

	for (i = 0; i < n; i++) {
		struct bt_break *b;

		if (!t->breaks[i].number || t->breaks[i].pid != parent ||
		    !t->breaks[i].inserted)
			continue;
		b = break_slot(t);	/* may move t->breaks */
		if (!b)
			return bt_fail(bte_nomem, errno, "breakpoints");
		*b = t->breaks[i];
		b->pid = child;
	}
	return 0;
}

void bt_breaks_of_gone(struct bt_target *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].pid == pid) {
			t->breaks[i].number = 0;
			t->breaks[i].inserted = 0;
			t->breaks[i].pid = 0;
		}
}

/*
 * @th hit the int3 at @addr while everything was being stopped, and the
 * hit waits to be judged: with the breakpoint gone it never happened (the
 * thread back at the instruction, no signal), as gdbserver does it.
 */
static void break_unhit(struct bt_thread *th, uint64_t addr)
{
	struct user_regs_struct regs;

	if (th->state != BT_TH_STOPPED || th->why != BT_TS_SIGNAL ||
	    th->sig != SIGTRAP || th->sig_checked ||
	    th->si.si_code != SI_KERNEL || bt_thread_regs(th, &regs) < 0 ||
	    regs.rip - 1 != addr)
		return;
	regs.rip--;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0)
		return;
	th->sig = 0;
	th->sig_checked = 1;
}

/* One location of a breakpoint out. */
static int break_out(struct bt_target *t, struct bt_break *b)
{
	size_t i;
	int ret = 0;

	if (b->inserted && t->traced && !t->gone)
		ret = bt_break_poke(t, b, 0);
	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (b->pid && th->tgid != b->pid)
			continue;
		if (th->at_break == b->addr)
			th->at_break = 0;
		break_unhit(th, b->addr);
	}
	b->number = 0;
	b->inserted = 0;
	b->pid = 0;
	return ret;
}

/* Every location of breakpoint @number: the first process's and those of
 * the programs exec'd in the tree (--until). */
int bt_target_break_remove(struct bt_target *t, int number)
{
	size_t i;
	int ret = 0, r, found = 0;

	if (!t || number <= 0)
		return bt_fail(bte_invalid, 0, "bad breakpoint %d", number);
	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].number == number) {
			found = 1;
			r = break_out(t, &t->breaks[i]);
			if (r < 0 && !ret)
				ret = r;
		}
	if (!found)
		return bt_fail(bte_noent, 0, "no breakpoint %d", number);
	return ret;
}

/* Every int3 out: the code as the program wrote it. */
int bt_breaks_remove_all(struct bt_target *t)
{
	int ret = 0, r;
	size_t i;

	for (i = 0; i < t->nbreaks; i++) {
		if (!t->breaks[i].number)
			continue;
		r = bt_target_break_remove(t, t->breaks[i].number);
		if (r < 0 && !ret)
			ret = r;
	}
	if (t->ops->release)
		t->ops->release(t);
	return ret;
}
