// SPDX-License-Identifier: MIT
/*
 * Displaced execution: instructions run from slots in scratch memory of
 * the traced process.  See soft_displace.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/insn.h"
#include "btrace/maps.h"
#include "internal.h"
#include "backend/soft/soft_displace.h"
#include "tracer/tracer.h"
#include "x86/decode.h"
#include "x86/reloc.h"

#define SLOT_SIZE BT_DISPLACE_SLOT_SIZE
#define JMP_BACK_LEN 14		/* jmp *0(%rip); .quad next */
#define AREA_SIZE (64 * 1024)
#define AREA_SLOTS (AREA_SIZE / SLOT_SIZE)
#define AREA_MAX 64

struct slot_rec {
	uint64_t orig;		/* the instruction it runs */
	uint8_t len;
};

struct area {
	uint64_t base;
	size_t used;		/* slots handed out */
	struct slot_rec rec[AREA_SLOTS];
};

struct dmap {
	uint64_t orig, slot;
	struct dmap *next;
};

struct bt_displace {
	struct area *area[AREA_MAX];
	size_t narea;
	int no_memory;		/* mmap failed: no more tries */
	uint64_t syscall_insn;	/* a 0f 05 in the process, 0: not found yet */
	uint64_t sys_slot;	/* syscall; int3 (bt_displace_sys_make), or 0 */
	struct dmap **bucket;
	size_t nbucket, count;
};

static size_t dhash(uint64_t addr, size_t n)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 24) & (n - 1);
}

int bt_displace_alloc(struct bt_displace **out)
{
	struct bt_displace *d;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return bt_fail(bte_nomem, ENOMEM, "displace");
	d->nbucket = 1024;
	d->bucket = calloc(d->nbucket, sizeof(*d->bucket));
	if (!d->bucket) {
		free(d);
		return bt_fail(bte_nomem, ENOMEM, "displace");
	}
	*out = d;
	return 0;
}

void bt_displace_reset(struct bt_displace *d)
{
	size_t i;

	for (i = 0; i < d->narea; i++)
		free(d->area[i]);
	d->narea = 0;
	d->no_memory = 0;
	d->syscall_insn = 0;
	d->sys_slot = 0;
	for (i = 0; i < d->nbucket; i++) {
		struct dmap *m = d->bucket[i], *n;

		for (; m; m = n) {
			n = m->next;
			free(m);
		}
		d->bucket[i] = NULL;
	}
	d->count = 0;
}

void bt_displace_free(struct bt_displace *d)
{
	if (!d)
		return;
	if (d->bucket)
		bt_displace_reset(d);
	free(d->bucket);
	free(d);
}

size_t bt_displace_count(const struct bt_displace *d)
{
	return d->count;
}

/*
 * Decode @code at @addr into @in; 0, or -bte_nosys if it cannot run
 * displaced: only what falls through and does the same anywhere once its
 * rip-relative operand is re-based (x86/decode.h's BT_X86_SEQ).
 */
static int displace_decode(const uint8_t *code, size_t len, uint64_t addr,
			   struct bt_x86_insn *in)
{
	if (bt_x86_decode(code, len, addr, in) < 0 || in->flow != BT_X86_SEQ)
		return -bte_nosys;
	return 0;
}

int bt_displace_can(struct bt_displace *d, const uint8_t *code, size_t len,
		    uint64_t addr)
{
	struct bt_x86_insn in;

	return displace_decode(code, len, addr, &in) == 0;
}

static uint64_t slot_addr(const struct area *a, size_t i)
{
	return a->base + i * SLOT_SIZE;
}

/*
 * An area with a free slot for @in: one whose next slot its rip-relative
 * operand reaches from, if it has one; or NULL.
 */
static struct area *area_pick(struct bt_displace *d,
			      const struct bt_x86_insn *in)
{
	size_t i;

	for (i = 0; i < d->narea; i++) {
		struct area *a = d->area[i];
		uint64_t next = slot_addr(a, a->used) + in->len;

		if (a->used < AREA_SLOTS &&
		    (!in->rip_off || bt_x86_in_reach(next, in->rip_target)))
			return a;
	}
	return NULL;
}

uint64_t bt_find_syscall_insn(struct bt_target *t, int memfd)
{
	return bt_find_syscall_insn_pid(t->pid, memfd);
}

uint64_t bt_find_syscall_insn_pid(pid_t pid, int memfd)
{
	struct bt_maps maps;
	uint64_t found = 0;
	size_t i;

	if (bt_maps_read(pid, &maps) < 0)
		return 0;
	for (i = 0; i < maps.count && !found; i++) {
		const struct bt_map *m = &maps.map[i];
		size_t len = m->end - m->start;
		uint8_t *buf, *at;

		if (!(m->prot & BT_MAP_X) || !m->path ||
		    strcmp(m->path, "[vdso]") || len > (1u << 20))
			continue;
		buf = malloc(len);
		if (buf && pread(memfd, buf, len, (off_t)m->start) == (ssize_t)len &&
		    (at = memmem(buf, len, "\x0f\x05", 2)))
			found = m->start + (uint64_t)(at - buf);
		free(buf);
	}
	bt_maps_release(&maps);
	return found;
}

/*
 * Map a new scratch area near @addr: below the module it is in where
 * there is room (not above, where the heap grows), else where the kernel
 * puts it.
 */
static int area_new(struct bt_displace *d, struct bt_target *t,
		    struct bt_thread *th, int memfd, uint64_t addr,
		    struct area **out)
{
	uint64_t args[6] = { 0, AREA_SIZE, PROT_READ | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	struct area *a;
	int64_t res = -1;
	int ret;

	if (d->no_memory || d->narea == AREA_MAX)
		return -bte_nomem;
	if (!d->syscall_insn)
		d->syscall_insn = bt_find_syscall_insn(t, memfd);
	if (!d->syscall_insn) {
		d->no_memory = 1;
		return bt_fail(bte_nomem, 0, "no syscall instruction in the vDSO");
	}
	args[0] = addr > (32u << 20) ? ((addr >> 16) << 16) - (16u << 20) :
				      (1u << 20);
	ret = bt_thread_syscall(t, th, d->syscall_insn, SYS_mmap, args, &res);
	if (ret < 0)
		return ret;	/* -bte_busy: another time */
	if (res < 0 && res > -4096) {
		d->no_memory = 1;
		return bt_fail(bte_nomem, (int)-res, "mmap in %d", th->tid);
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return bt_fail(bte_nomem, ENOMEM, "scratch area");
	a->base = (uint64_t)res;
	d->area[d->narea++] = a;
	*out = a;
	return 0;
}

/* An area for @in (area_pick()), else a new one near @addr: 0 or < 0. */
static int area_for(struct bt_displace *d, struct bt_target *t,
		    struct bt_thread *th, int memfd, uint64_t addr,
		    const struct bt_x86_insn *in, struct area **out)
{
	*out = area_pick(d, in);
	return *out ? 0 : area_new(d, t, th, memfd, addr, out);
}

static int map_add(struct bt_displace *d, uint64_t orig, uint64_t slot)
{
	struct dmap *m = malloc(sizeof(*m));
	size_t h;

	if (!m)
		return bt_fail(bte_nomem, ENOMEM, "slot");
	if (d->count >= d->nbucket) {
		size_t n = d->nbucket * 2, i;
		struct dmap **nb = calloc(n, sizeof(*nb));

		if (nb) {
			for (i = 0; i < d->nbucket; i++) {
				struct dmap *e = d->bucket[i], *next;

				for (; e; e = next) {
					next = e->next;
					e->next = nb[dhash(e->orig, n)];
					nb[dhash(e->orig, n)] = e;
				}
			}
			free(d->bucket);
			d->bucket = nb;
			d->nbucket = n;
		}
	}
	m->orig = orig;
	m->slot = slot;
	h = dhash(orig, d->nbucket);
	m->next = d->bucket[h];
	d->bucket[h] = m;
	d->count++;
	return 0;
}

static uint64_t map_find(const struct bt_displace *d, uint64_t orig)
{
	const struct dmap *m = d->bucket[dhash(orig, d->nbucket)];

	for (; m; m = m->next)
		if (m->orig == orig)
			return m->slot;
	return 0;
}

int bt_displace_encode(struct bt_displace *d, const uint8_t *code,
		       size_t len, uint64_t addr, uint64_t slot,
		       uint8_t out[BT_DISPLACE_SLOT_SIZE])
{
	struct bt_x86_insn in;
	uint64_t next;
	int ret;

	ret = displace_decode(code, len, addr, &in);
	if (ret < 0)
		return ret;
	ret = bt_x86_reloc(&in, code, slot, out);
	if (ret < 0)
		return ret;	/* a rip-relative operand out of reach */
	next = addr + in.len;
	/* jmp *0(%rip) and the address it reads */
	memcpy(out + in.len, "\xff\x25\x00\x00\x00\x00", 6);
	memcpy(out + in.len + 6, &next, 8);
	return (int)(in.len + JMP_BACK_LEN);
}

int bt_displace_make(struct bt_displace *d, struct bt_target *t,
		     struct bt_thread *th, int memfd, const uint8_t *code,
		     size_t len, uint64_t addr, uint64_t *slot)
{
	uint8_t bytes[SLOT_SIZE];
	struct bt_x86_insn in;
	struct area *a;
	uint64_t s;
	int ret, n;

	*slot = map_find(d, addr);
	if (*slot)
		return 0;
	ret = displace_decode(code, len, addr, &in);
	if (ret < 0)
		return ret;
	ret = area_for(d, t, th, memfd, addr, &in, &a);
	if (ret < 0)
		return ret;	/* a far area is kept for others */
	s = slot_addr(a, a->used);
	n = bt_displace_encode(d, code, len, addr, s, bytes);
	if (n < 0)
		return n;
	if (pwrite(memfd, bytes, (size_t)n, (off_t)s) != n)
		return bt_fail(bte_io, errno, "write slot 0x%llx",
			       (unsigned long long)s);
	ret = map_add(d, addr, s);
	if (ret < 0)
		return ret;
	a->rec[a->used].orig = addr;
	a->rec[a->used].len = (uint8_t)(n - JMP_BACK_LEN);
	a->used++;
	*slot = s;
	return 0;
}

int bt_displace_sys_make(struct bt_displace *d, struct bt_target *t,
			 struct bt_thread *th, int memfd, uint64_t addr,
			 uint64_t *slot)
{
	struct bt_x86_insn none = { 0 };	/* no operand to reach */
	struct area *a;
	uint64_t s;
	int ret;

	*slot = d->sys_slot;
	if (*slot)
		return 0;
	ret = area_for(d, t, th, memfd, addr, &none, &a);
	if (ret < 0)
		return ret;
	s = slot_addr(a, a->used);
	if (pwrite(memfd, "\x0f\x05\xcc", 3, (off_t)s) != 3)
		return bt_fail(bte_io, errno, "write slot 0x%llx",
			       (unsigned long long)s);
	a->rec[a->used].orig = 0;	/* no one instruction's: slot_rec */
	a->rec[a->used].len = 0;
	a->used++;
	*slot = d->sys_slot = s;
	return 0;
}

uint64_t bt_displace_sys(const struct bt_displace *d)
{
	return d->sys_slot;
}

static const struct slot_rec *slot_rec(const struct bt_displace *d,
				       uint64_t pc, uint64_t *off)
{
	const struct slot_rec *r;
	size_t i;

	for (i = 0; i < d->narea; i++) {
		const struct area *a = d->area[i];

		if (pc >= a->base && pc < slot_addr(a, a->used)) {
			*off = (pc - a->base) % SLOT_SIZE;
			r = &a->rec[(pc - a->base) / SLOT_SIZE];
			return r->orig ? r : NULL;	/* not the syscall's */
		}
	}
	return NULL;
}

int bt_displace_slot_of(const struct bt_displace *d, uint64_t pc,
			uint64_t *orig, uint8_t *len)
{
	const struct slot_rec *r;
	uint64_t off;

	r = slot_rec(d, pc, &off);
	if (!r || off)
		return 0;
	*orig = r->orig;
	*len = r->len;
	return 1;
}

uint64_t bt_displace_unmap(const struct bt_displace *d, uint64_t pc)
{
	const struct slot_rec *r;
	uint64_t off;

	r = slot_rec(d, pc, &off);
	if (!r)
		return pc;
	return off ? r->orig + r->len : r->orig;
}
