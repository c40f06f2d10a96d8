// SPDX-License-Identifier: MIT
/*
 * Memory as the program sees it, and the debugger's breakpoints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* Read through @tid, split at the page so that a short read stays short. */
static ssize_t mem_read_raw(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	uint64_t page = 4096, split = ((addr / page) + 1) * page - addr;
	struct iovec local[2], remote[2];
	int n = 1;
	ssize_t r;

	local[0].iov_base = buf;
	local[0].iov_len = len;
	remote[0].iov_base = (void *)addr;
	remote[0].iov_len = len;
	if (split < len) {
		local[0].iov_len = remote[0].iov_len = split;
		local[1].iov_base = (uint8_t *)buf + split;
		local[1].iov_len = remote[1].iov_len = len - split;
		remote[1].iov_base = (void *)(addr + split);
		n = 2;
	}
	r = process_vm_readv(tid, local, n, remote, n, 0);
	if (r < 0)
		return bt_fail(errno == ESRCH ? bte_exited : bte_io, errno,
			       "read memory of %d at 0x%llx", tid,
			       (unsigned long long)addr);
	return r;
}

ssize_t bt_thread_mem(struct bt_target *t, struct bt_thread *th,
		      uint64_t addr, void *buf, size_t len)
{
	ssize_t n;
	size_t i;

	n = mem_read_raw(th->tid, addr, buf, len);
	if (n <= 0)
		return n;
	for (i = 0; i < t->nbreaks; i++) {
		const struct bt_break *b = &t->breaks[i];

		if (b->number && b->inserted && b->addr >= addr &&
		    b->addr < addr + n)
			((uint8_t *)buf)[b->addr - addr] = b->orig;
	}
	if (t->ops->hide)
		t->ops->hide(t, addr, buf, (size_t)n);
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

/* Write @byte at @addr of @tid's memory. */
int bt_break_write(pid_t tid, uint64_t addr, uint8_t byte, uint8_t *old)
{
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, tid, addr, 0);
	if (errno)
		return bt_fail(bte_io, errno, "read 0x%llx",
			       (unsigned long long)addr);
	if (old)
		*old = word & 0xff;
	word = (word & ~0xffL) | byte;
	if (ptrace(PTRACE_POKEDATA, tid, addr, word) < 0)
		return bt_fail(bte_io, errno, "write 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

/*
 * Followed children got our int3s in their copy of the memory at fork:
 * write @b's byte (@insert: the int3) there too, through a stopped thread
 * of each.
 */
static void break_children(struct bt_target *t, const struct bt_break *b,
			   int insert)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		const struct bt_thread *th = t->threads[i];

		if (th->tgid != t->pid && th->state == BT_TH_STOPPED)
			bt_break_write(th->tid, b->addr, insert ? 0xcc : b->orig,
				       NULL);
	}
}

/* Put the int3 in (@insert) or the original byte back. */
int bt_break_poke(struct bt_target *t, struct bt_break *b, int insert)
{
	struct bt_thread *th = bt_thread_any(t, 1);
	uint8_t orig;
	int ret;

	if (!th)
		return bt_fail(bte_exited, 0, "no stopped thread of %d", t->pid);
	ret = bt_break_write(th->tid, b->addr, insert ? 0xcc : b->orig, &orig);
	if (ret < 0)
		return ret;
	if (insert && !b->inserted)
		b->orig = orig;
	if (!insert)
		break_children(t, b, 0);
	b->inserted = insert;
	return 0;
}

int bt_target_break_insert(struct bt_target *t, uint64_t addr)
{
	struct bt_break *b = NULL, *grown;
	size_t i;
	int ret;

	if (!t)
		return bt_fail(bte_invalid, 0, "bt_target_break_insert(NULL)");
	if (!t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d is not traced", t->pid);
	if (bt_break_at(t, addr))
		return bt_break_at(t, addr)->number;
	for (i = 0; i < t->nbreaks && !b; i++)
		if (!t->breaks[i].number)
			b = &t->breaks[i];
	if (!b) {
		grown = realloc(t->breaks, (t->nbreaks + 1) * sizeof(*grown));
		if (!grown)
			return bt_fail(bte_nomem, errno, "breakpoints");
		t->breaks = grown;
		b = &t->breaks[t->nbreaks++];
	}
	memset(b, 0, sizeof(*b));
	b->addr = addr;
	ret = bt_break_poke(t, b, 1);
	if (ret < 0)
		return ret;
	b->number = ++t->next_break;
	return b->number;
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

int bt_target_break_remove(struct bt_target *t, int number)
{
	struct bt_break *b = NULL;
	size_t i;
	int ret = 0;

	if (!t || number <= 0)
		return bt_fail(bte_invalid, 0, "bad breakpoint %d", number);
	for (i = 0; i < t->nbreaks; i++)
		if (t->breaks[i].number == number)
			b = &t->breaks[i];
	if (!b)
		return bt_fail(bte_noent, 0, "no breakpoint %d", number);
	if (b->inserted && t->traced && !t->gone)
		ret = bt_break_poke(t, b, 0);
	for (i = 0; i < t->nthreads; i++) {
		if (t->threads[i]->at_break == b->addr)
			t->threads[i]->at_break = 0;
		break_unhit(t->threads[i], b->addr);
	}
	b->number = 0;
	b->inserted = 0;
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
