// SPDX-License-Identifier: MIT
/*
 * The capture ring (see btrace/ring.h).
 *
 * Invariants the code relies on:
 * - head and tail are free-running and always multiples of BT_REC_ALIGN,
 *   because every record size is; the buffer size is a power of two of at
 *   least 64, so a header (8 bytes) never straddles the end of the buffer.
 *   Only payloads do, and they are copied in two pieces.
 * - head - tail <= size, and tail always sits on a record header.
 *
 * The writer publishes a tail move before it overwrites the bytes behind
 * it, and a reader re-reads tail after copying a record (seqlock style):
 * if the tail has passed the record's start, the copy may be torn.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "btrace/error.h"
#include "btrace/ring.h"
#include "internal.h"

#define BT_RING_MIN_SIZE 64
/*
 * A data area from this size up is mapped on its own: its pages cost
 * nothing until written, and go back to the system when it is freed (a
 * heap chunk that calloc() reuses is cleared whole: every thread of a
 * tree of thousands of processes paid for its full ring).
 */
#define BT_RING_MAP_SIZE (64u << 10)

struct bt_ring {
	uint8_t *data;
	size_t size;
	uint64_t mask;
	uint64_t head;
	uint64_t tail;
	uint64_t lost_records;
	uint64_t lost_bytes;
};

static uint8_t *data_alloc(size_t size)
{
	void *p;

	if (size < BT_RING_MAP_SIZE)
		return calloc(1, size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void data_free(uint8_t *data, size_t size)
{
	if (size < BT_RING_MAP_SIZE)
		free(data);
	else if (data)
		munmap(data, size);
}

static inline uint32_t rec_check(uint16_t type, uint16_t size)
{
	return (uint32_t)type ^ (uint32_t)size ^ BT_REC_MAGIC;
}

static inline size_t rec_total(size_t len)
{
	return (sizeof(struct bt_rec_hdr) + len + BT_REC_ALIGN - 1) &
	       ~(size_t)(BT_REC_ALIGN - 1);
}

struct bt_ring *bt_ring_alloc(size_t size)
{
	struct bt_ring *ring;

	if (size < BT_RING_MIN_SIZE || (size & (size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return NULL;
	/* Zeroed so that a never-written area reads as invalid headers. */
	ring->data = data_alloc(size);
	if (!ring->data) {
		free(ring);
		errno = ENOMEM;
		return NULL;
	}
	ring->size = size;
	ring->mask = size - 1;
	return ring;
}

void bt_ring_free(struct bt_ring *ring)
{
	if (!ring)
		return;
	data_free(ring->data, ring->size);
	free(ring);
}

/*
 * Drop the oldest records until @need more bytes fit.  The tail is
 * published before the writer touches the bytes it frees, so a reader
 * copying them notices (bt_ring_walk re-reads the tail).
 */
static void ring_make_room(struct bt_ring *ring, size_t need)
{
	uint64_t tail = ring->tail;
	const struct bt_rec_hdr *hdr;

	while (ring->head + need - tail > ring->size) {
		hdr = (const struct bt_rec_hdr *)(ring->data + (tail & ring->mask));
		tail += hdr->size;
		/* entries of the history: a time record is none */
		ring->lost_records += hdr->type != BT_REC_TIME;
		ring->lost_bytes += hdr->size;
	}
	__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
	/* Order the tail store before the data stores that follow. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Copy @len bytes to free-running position @pos, wrapping at the end. */
static inline void ring_put(struct bt_ring *ring, uint64_t pos,
			    const void *src, size_t len)
{
	size_t off = pos & ring->mask;
	size_t first = ring->size - off;

	if (len <= first) {
		memcpy(ring->data + off, src, len);
		return;
	}
	memcpy(ring->data + off, src, first);
	memcpy(ring->data, (const uint8_t *)src + first, len - first);
}

int bt_ring_write(struct bt_ring *ring, uint16_t type, const void *payload,
		  size_t len)
{
	size_t total = rec_total(len);
	struct bt_rec_hdr *hdr;
	uint64_t head;

	/* len is tested alone too: rec_total() wraps for a huge len. */
	if (!ring || type == 0 || type >= BT_REC_MAX || (len && !payload) ||
	    len > BT_REC_MAX_SIZE || total > BT_REC_MAX_SIZE ||
	    total > ring->size)
		return bt_fail(bte_invalid, 0, "ring write(type %u, %zu bytes)",
			       type, len);
	head = ring->head;
	if (head + total - ring->tail > ring->size)
		ring_make_room(ring, total);

	hdr = (struct bt_rec_hdr *)(ring->data + (head & ring->mask));
	hdr->type = type;
	hdr->size = (uint16_t)total;
	hdr->check = rec_check(type, (uint16_t)total);
	if (len)
		ring_put(ring, head + sizeof(*hdr), payload, len);
	/* Padding ends on an aligned position, so it never wraps. */
	if (total - sizeof(*hdr) > len)
		memset(ring->data + ((head + sizeof(*hdr) + len) & ring->mask),
		       0, total - sizeof(*hdr) - len);
	__atomic_store_n(&ring->head, head + total, __ATOMIC_RELEASE);
	return 0;
}

uint64_t bt_ring_head(const struct bt_ring *ring)
{
	return __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
}

uint64_t bt_ring_tail(const struct bt_ring *ring)
{
	return __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
}

size_t bt_ring_size(const struct bt_ring *ring)
{
	return ring->size;
}

const uint8_t *bt_ring_data(const struct bt_ring *ring)
{
	return ring->data;
}

uint64_t bt_ring_lost_records(const struct bt_ring *ring)
{
	return ring->lost_records;
}

size_t bt_ring_footprint(const struct bt_ring *ring)
{
	return ring->head < ring->size ? (size_t)ring->head : ring->size;
}

int bt_ring_drop(struct bt_ring *ring)
{
	uint8_t *small = calloc(1, BT_RING_MIN_SIZE);

	if (!small)
		return bt_fail(bte_nomem, ENOMEM, "ring");
	bt_ring_clear(ring);	/* positions go on, nothing held */
	data_free(ring->data, ring->size);
	ring->data = small;
	ring->size = BT_RING_MIN_SIZE;
	ring->mask = BT_RING_MIN_SIZE - 1;
	return 0;
}

void bt_ring_clear(struct bt_ring *ring)
{
	uint64_t pos;

	for (pos = ring->tail; pos < ring->head;) {
		const struct bt_rec_hdr *hdr = (const struct bt_rec_hdr *)
			(ring->data + (pos & ring->mask));

		if (hdr->size < sizeof(*hdr))
			break;	/* never: each record has its size */
		ring->lost_records += hdr->type != BT_REC_TIME;
		pos += hdr->size;
	}
	ring->lost_bytes += ring->head - ring->tail;
	__atomic_store_n(&ring->tail, ring->head, __ATOMIC_RELEASE);
}

void bt_ring_lose(struct bt_ring *ring, uint64_t records, uint64_t bytes)
{
	ring->lost_records += records;
	ring->lost_bytes += bytes;
}

uint64_t bt_ring_lost_bytes(const struct bt_ring *ring)
{
	return ring->lost_bytes;
}

static uint64_t ring_load_tail(void *ctx)
{
	return bt_ring_tail(ctx);
}

void bt_ring_view_init(struct bt_ring_view *view, const struct bt_ring *ring)
{
	/* Tail first: a writer moving on in between shows up as torn. */
	view->tail = bt_ring_tail(ring);
	view->head = bt_ring_head(ring);
	view->data = ring->data;
	view->size = ring->size;
	view->load_tail = ring_load_tail;
	view->ctx = (void *)ring;
}

int bt_rec_check(const struct bt_rec_hdr *hdr, size_t avail)
{
	struct bt_rec_hdr h;

	if (!hdr || avail < sizeof(h))
		return -bte_corrupt;
	/* Copied: a header in a trace file need not be aligned. */
	memcpy(&h, hdr, sizeof(h));
	if (h.type == 0 || h.type >= BT_REC_MAX ||
	    h.size < sizeof(h) || h.size % BT_REC_ALIGN || h.size > avail ||
	    h.check != rec_check(h.type, h.size))
		return -bte_corrupt;
	return 0;
}

int bt_rec_next(const uint8_t *buf, size_t len, size_t *off,
		const struct bt_rec_hdr **rec)
{
	const uint8_t *p;
	uint16_t size;

	if (!off || !rec || (!buf && len))
		return -bte_invalid;
	if (*off == len)
		return -bte_eos;
	if (*off > len)
		return -bte_corrupt;
	p = buf + *off;
	if (bt_rec_check((const struct bt_rec_hdr *)p, len - *off))
		return -bte_corrupt;
	/* Not through the struct: @buf may be unaligned (a mapped file). */
	memcpy(&size, p + offsetof(struct bt_rec_hdr, size), sizeof(size));
	*rec = (const struct bt_rec_hdr *)p;
	*off += size;
	return 0;
}

/* Copy @len bytes from free-running position @pos of @view, unwrapping. */
static void view_get(const struct bt_ring_view *view, uint64_t pos,
		     void *dst, size_t len)
{
	size_t off = pos & (view->size - 1);
	size_t first = view->size - off;

	if (len <= first) {
		memcpy(dst, view->data + off, len);
		return;
	}
	memcpy(dst, view->data + off, first);
	memcpy((uint8_t *)dst + first, view->data, len - first);
}

/* Has the writer moved its tail past @pos since the view was taken? */
static bool view_overtaken(const struct bt_ring_view *view, uint64_t pos)
{
	if (!view->load_tail)
		return false;
	/* The copy's loads must be done before the tail is re-read. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return view->load_tail(view->ctx) > pos;
}

static int view_check(const struct bt_ring_view *view)
{
	if (!view || (!view->data && view->size) || view->size < 8 ||
	    (view->size & (view->size - 1)))
		return -bte_invalid;
	if (view->head < view->tail || view->head - view->tail > view->size ||
	    view->head % BT_REC_ALIGN || view->tail % BT_REC_ALIGN)
		return -bte_corrupt;
	return 0;
}

/*
 * Copy the record at @pos into @buf (at least min(size, BT_REC_MAX_SIZE)
 * bytes).  A bad header is corruption only if the writer has not
 * overwritten it meanwhile.
 */
static int view_read_rec(const struct bt_ring_view *view, uint64_t pos,
			 uint8_t *buf)
{
	struct bt_rec_hdr *hdr = (struct bt_rec_hdr *)buf;

	view_get(view, pos, hdr, sizeof(*hdr));
	if (bt_rec_check(hdr, view->head - pos))
		return view_overtaken(view, pos) ? -bte_torn : -bte_corrupt;
	view_get(view, pos + sizeof(*hdr), hdr + 1, hdr->size - sizeof(*hdr));
	return view_overtaken(view, pos) ? -bte_torn : 0;
}

int bt_ring_walk(const struct bt_ring_view *view, bt_ring_fn fn, void *ctx)
{
	size_t scratch_size;
	uint8_t *scratch;
	uint64_t pos;
	int ret;

	ret = view_check(view);
	if (ret || !fn)
		return ret ? ret : -bte_invalid;
	if (view->head == view->tail)
		return 0;
	scratch_size = view->size < BT_REC_MAX_SIZE ? view->size
						    : BT_REC_MAX_SIZE;
	scratch = malloc(scratch_size);
	if (!scratch)
		return bt_fail(bte_nomem, ENOMEM, "ring walk scratch");
	ret = 0;
	for (pos = view->tail; pos < view->head && !ret;) {
		ret = view_read_rec(view, pos, scratch);
		if (ret)
			break;
		pos += ((struct bt_rec_hdr *)scratch)->size;
		ret = fn((struct bt_rec_hdr *)scratch, ctx);
	}
	free(scratch);
	return ret;
}

struct copy_state {
	uint8_t *buf;
	size_t len;
	int count;
};

static int copy_one(const struct bt_rec_hdr *rec, void *ctx)
{
	struct copy_state *st = ctx;

	memcpy(st->buf + st->len, rec, rec->size);
	st->len += rec->size;
	st->count++;
	return 0;
}

int bt_ring_copy(const struct bt_ring_view *view, uint8_t **out, size_t *len)
{
	struct copy_state st = { 0 };
	int ret;

	if (!out || !len)
		return -bte_invalid;
	*out = NULL;
	*len = 0;
	ret = view_check(view);
	if (ret)
		return ret;
	/* Never more than head - tail; +1 so that empty is not NULL. */
	st.buf = malloc(view->head - view->tail + 1);
	if (!st.buf)
		return bt_fail(bte_nomem, ENOMEM, "ring copy");
	ret = bt_ring_walk(view, copy_one, &st);
	*out = st.buf;
	*len = st.len;
	return ret ? ret : st.count;
}
