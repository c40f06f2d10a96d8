// SPDX-License-Identifier: MIT
/*
 * Memory that grows with what a program runs: a zone's points, the
 * blocks, the indexes of blocks and links (not the threads' history
 * rings: each thread would pay 2 MiB).
 *
 * From BIG_MAP up an array is a mapping of its own, grown by mremap (its
 * pages move, nothing is copied) and given back to the system when freed;
 * from 2 MiB up its size is a whole number of 2 MiB (kernels since 6.7
 * place such a mapping on a 2 MiB boundary) and it asks for transparent huge
 * pages (MADV_HUGEPAGE: the kernel's "madvise" mode, the default of
 * Debian and Ubuntu, gives them only on request), so that its first
 * touch costs a fault per 2 MiB instead of one per 4 KiB, and lookups
 * that walk blocks in no order miss the TLB less.  The tree's page
 * faults of python3 -c 'print(1)' with an empty code cache: 26.2 k
 * before, 16.6 k after (docs/recorder.md).  Below BIG_MAP, malloc.
 *
 * The caller passes the size it asked for to bt_big_grow() and
 * bt_big_free(): that is what says where the array lies.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define BIG_MAP		(256u << 10)
#define HUGE		(2u << 20)

static size_t map_len(size_t size)
{
	size_t a = size >= HUGE ? HUGE : 4096;

	return (size + a - 1) & ~(a - 1);
}

static void advise(void *p, size_t len)
{
	if (len >= HUGE)
		(void)madvise(p, len, MADV_HUGEPAGE);	/* a hint: may fail */
}

void *bt_big_alloc(size_t size)
{
	void *p;

	if (size < BIG_MAP)
		return calloc(1, size ? size : 1);
	p = mmap(NULL, map_len(size), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	advise(p, map_len(size));
	return p;
}

void *bt_big_grow(void *p, size_t old, size_t size)
{
	void *q;

	if (!p)
		return bt_big_alloc(size);
	if (size < BIG_MAP && old < BIG_MAP)
		return realloc(p, size);
	if (old < BIG_MAP || size < BIG_MAP) {	/* across: copied */
		q = bt_big_alloc(size);
		if (!q)
			return NULL;
		memcpy(q, p, old < size ? old : size);
		bt_big_free(p, old);
		return q;
	}
	if (map_len(size) == map_len(old))
		return p;
	q = mremap(p, map_len(old), map_len(size), MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	advise(q, map_len(size));
	return q;
}

/* A slab of @cap things of @item bytes, with its header. */
static size_t slab_size(size_t cap, size_t item)
{
	return sizeof(struct bt_slab) + cap * item;
}

void *bt_slab_take(struct bt_slab **slabs, size_t item, size_t first)
{
	struct bt_slab *s = *slabs;

	if (!s || s->used == s->cap) {
		size_t max = (HUGE - sizeof(*s)) / item;
		size_t cap = !s ? first : 2 * s->cap < max ? 2 * s->cap : max;

		s = bt_big_alloc(slab_size(cap, item));
		if (!s)
			return NULL;
		s->next = *slabs;
		s->cap = cap;
		*slabs = s;
	}
	return s->mem + s->used++ * item;
}

void bt_slabs_free(struct bt_slab **slabs, size_t item)
{
	struct bt_slab *s, *next;

	for (s = *slabs; s; s = next) {
		next = s->next;
		bt_big_free(s, slab_size(s->cap, item));
	}
	*slabs = NULL;
}

void bt_big_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size < BIG_MAP)
		free(p);
	else
		munmap(p, map_len(size));
}
