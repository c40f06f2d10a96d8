// SPDX-License-Identifier: MIT
/*
 * The fast mode's int3s (soft_fast.h): one table of them, shared by all
 * threads, written into the process through /proc/PID/mem with the
 * original byte kept; the addresses of those taken out (a late trap there
 * is still ours); reading code as the program sees it; and taking them
 * out of memory that a fork child keeps or shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/insn.h"
#include "internal.h"
#include "backend/soft/fast_int.h"
#include "tracer/tracer.h"

/* ---- breakpoints ------------------------------------------------------- */

static size_t bp_hash(uint64_t addr, size_t n)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 24) & (n - 1);
}

struct fast_bp *fast_bp_find(const struct fast *f, uint64_t addr)
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
	return fast_bp_find(fast_of(t), addr) != NULL;
}

size_t bt_fast_int3_count(struct bt_target *t)
{
	return fast_of(t)->nbp;
}

int fast_mem_open(struct bt_target *t, struct fast *f)
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

int fast_mem_poke(struct fast *f, uint64_t addr, uint8_t byte)
{
	if (f->lifted_all && byte == 0xcc)
		return 0;	/* a vfork child runs in this memory */
	if (pwrite(f->memfd, &byte, 1, (off_t)addr) != 1)
		return bt_fail(bte_io, errno, "write 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

void fast_hide(struct bt_target *t, uint64_t addr, void *buf,
	       size_t len)
{
	struct fast *f = fast_of(t);
	uint8_t *p = buf;
	size_t i;

	if (!f || !f->nbp)
		return;
	for (i = 0; i < len; i++) {
		const struct fast_bp *b = fast_bp_find(f, addr + i);

		if (b)
			p[i] = b->orig;
	}
}

/* Read code as the program sees it: every int3 of btrace hidden. */
int fast_read(void *ctx, uint64_t addr, void *buf, size_t len)
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
int fast_code_read(struct bt_target *t, uint64_t addr,
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

int fast_bp_insert(struct bt_target *t, uint64_t addr, int kind,
		   struct fast_bp **out)
{
	struct fast *f = fast_of(t);
	uint8_t code[BT_INSN_MAX_LEN], orig;
	struct bt_insn in;
	struct fast_bp *b;
	size_t h;
	int ret;

	b = fast_bp_find(f, addr);
	if (b) {
		if (kind == BP_STEP || b->kind == BP_STEP)
			b->kind = BP_STEP;
		*out = b;
		return 0;
	}
	if (fast_code_read(t, addr, code) < 0)
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
	ret = fast_mem_poke(f, addr, 0xcc);
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

int fast_gone_has(const struct fast *f, uint64_t addr)
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

	if (fast_gone_has(f, addr))
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
void fast_bp_remove(struct fast *f, uint64_t addr)
{
	struct fast_bp **pp, *b;

	if (!f->nbp)
		return;
	for (pp = &f->bp[bp_hash(addr, f->nbp_bucket)]; (b = *pp);
	     pp = &b->next)
		if (b->addr == addr) {
			fast_mem_poke(f, addr, b->orig);
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
	fast_mem_poke(f, b->addr, b->orig);
}

/* Put back the original bytes of every int3 in [start, end). */
void fast_bp_remove_range(struct fast *f, uint64_t start, uint64_t end,
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

/*
 * @th is done stepping over the int3 it lifted: put it back, unless
 * another thread is stepping over the same one (its step would run
 * into the int3 and take it for the program's).
 */
void fast_bp_unlift(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	struct fast *f = fast_of(t);
	uint64_t addr = ft->lifted;
	size_t i;

	ft->lifted = 0;
	if (!addr || !f || !fast_bp_find(f, addr))
		return;		/* or the int3 is gone meanwhile */
	for (i = 0; i < t->nthreads; i++) {
		const struct fast_thread *o = t->threads[i]->bk;

		if (o && o->lifted == addr)
			return;
	}
	fast_mem_poke(f, addr, 0xcc);
}

/* ---- fork children ----------------------------------------------------- */

/* Put every int3 back (after a vfork child left our memory). */
void fast_bp_reinsert_all(struct fast *f)
{
	size_t i;

	f->lifted_all = 0;
	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b;

		for (b = f->bp[i]; b; b = b->next)
			fast_mem_poke(f, b->addr, 0xcc);
	}
}

void fast_fork(struct bt_target *t, pid_t child, int shared)
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
				fast_mem_poke(f, b->addr, b->orig);
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
