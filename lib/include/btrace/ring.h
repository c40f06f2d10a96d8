/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_RING_H
#define BTRACE_RING_H

#include <stddef.h>
#include <stdint.h>

/*
 * The capture ring: a per-thread, overwrite-mode ring of variable-size
 * records, in the spirit of perf's overwrite ring.
 *
 * The buffer is a power of two in bytes.  head and tail are free-running
 * 64-bit byte positions (the offset in the buffer is pos & (size - 1)).
 * The writer never blocks: before a record would pass tail + size it moves
 * tail forward, record by record, so that tail always sits on a record
 * header, and counts what it dropped.  Records may straddle the end of the
 * buffer; a reader copies them out in two pieces.
 *
 * Every record starts with a struct bt_rec_hdr.  size counts the header and
 * is a multiple of 8; a header that fails validation (unknown type, size not
 * a multiple of 8, smaller than a header, larger than the space up to head)
 * stops a walk with -bte_corrupt instead of returning garbage.
 */

struct bt_rec_hdr {
	uint16_t type;	/* enum bt_rec_type */
	uint16_t size;	/* bytes, header included, multiple of 8 */
	uint32_t check;	/* type ^ size ^ BT_REC_MAGIC: detects torn headers */
};

#define BT_REC_MAGIC 0x62747263u /* "btrc" */
#define BT_REC_ALIGN 8
#define BT_REC_MAX_SIZE 0xfff8u

enum bt_rec_type {
	BT_REC_BRANCH = 1,	/* struct bt_rec_branch */
	BT_REC_LOST,		/* struct bt_rec_lost */
	BT_REC_TIME,		/* struct bt_rec_time */
	BT_REC_MAX
};

/* One branch as the software backend records it: BTS-like plus metadata. */
struct bt_rec_branch {
	struct bt_rec_hdr hdr;
	uint64_t from;
	uint64_t to;
	uint32_t ninsn;	/* instructions in the block ending at from */
	uint8_t kind;	/* enum bt_branch_kind */
	uint8_t flags;	/* enum bt_branch_flags */
	uint16_t gap;	/* enum bt_gap_reason when kind is BT_BR_GAP */
};

/* The writer could not record something (e.g. a gap in capture). */
struct bt_rec_lost {
	struct bt_rec_hdr hdr;
	uint64_t count;
};

/*
 * The thread's clock: @ninsn instructions after the branch before this
 * record (instructions the next branch record counts), it was @ns
 * nanoseconds of CLOCK_MONOTONIC.  The decoder gives each branch a time
 * interpolated over instruction counts between two such records.
 */
struct bt_rec_time {
	struct bt_rec_hdr hdr;
	uint64_t ns;
	uint32_t ninsn;
	uint32_t flags;	/* BT_TIMEF_* */
};

#define BT_TIMEF_SYSCALL 1	/* taken around a system call (recorder) */

struct bt_ring;

/*
 * Allocate a ring of @size bytes (a power of two, at least 64).
 * Returns NULL and sets errno (EINVAL, ENOMEM) on failure.
 * Free with bt_ring_free(), which accepts NULL.
 */
struct bt_ring *bt_ring_alloc(size_t size);
void bt_ring_free(struct bt_ring *ring);

/*
 * Append a record of @type with @len payload bytes (the bytes after the
 * header) from @payload.  The header is filled in by the ring.  Overwrites
 * the oldest records when needed.
 * Returns 0, or -bte_invalid if the record cannot fit in the ring (or in
 * BT_REC_MAX_SIZE), @type is not a known enum bt_rec_type, @ring is NULL
 * or @payload is NULL with @len > 0.
 */
int bt_ring_write(struct bt_ring *ring, uint16_t type, const void *payload,
		  size_t len);

/*
 * Free-running positions, the capacity and the data area of @ring; see
 * above.  Never fail (@ring must be a ring).
 */
uint64_t bt_ring_head(const struct bt_ring *ring);
uint64_t bt_ring_tail(const struct bt_ring *ring);
size_t bt_ring_size(const struct bt_ring *ring);
const uint8_t *bt_ring_data(const struct bt_ring *ring);

/*
 * Records (history entries: BT_REC_TIME records are not counted) and
 * bytes overwritten so far.  Never fail.
 */
uint64_t bt_ring_lost_records(const struct bt_ring *ring);
uint64_t bt_ring_lost_bytes(const struct bt_ring *ring);

/* The bytes of memory @ring's data area has had written: what it costs. */
size_t bt_ring_footprint(const struct bt_ring *ring);

/*
 * Let go of everything @ring holds, its records counted lost, and of its
 * data area: it goes on as a ring of the least size.  Returns 0, or
 * -bte_nomem (then it is as it was).
 */
int bt_ring_drop(struct bt_ring *ring);

/* Everything @ring holds counted lost, its size kept (positions go on). */
void bt_ring_clear(struct bt_ring *ring);

/* @records of @bytes the writer dropped before they reached @ring: lost. */
void bt_ring_lose(struct bt_ring *ring, uint64_t records, uint64_t bytes);

/*
 * A ring as a reader sees it: the data area and the positions, either of a
 * live struct bt_ring or of a copy (a trace file, a test).
 */
struct bt_ring_view {
	const uint8_t *data;
	size_t size;		/* power of two */
	uint64_t head;
	uint64_t tail;
	/* optional: re-read the writer's tail after copying a record, to
	 * detect that it was overwritten meanwhile (a slow reader). */
	uint64_t (*load_tail)(void *ctx);
	void *ctx;
};

/*
 * Fill @view with the positions of the live @ring now, re-reading its tail
 * as the walk goes (load_tail).  Never fails.
 */
void bt_ring_view_init(struct bt_ring_view *view, const struct bt_ring *ring);

/*
 * Walk records from tail to head, oldest first, copying each whole record
 * (header included, unwrapped) into a scratch buffer and calling @fn with
 * it.  @fn returns 0 to go on, anything else to stop the walk (returned).
 *
 * Returns 0 after the last record, or what @fn returned to stop it;
 * -bte_invalid if @view is not a ring view (no data, a size not a power of
 * two) or @fn is NULL; -bte_corrupt if the positions are inconsistent or
 * at an invalid header; -bte_torn if the writer overtook the reader (the
 * records passed to @fn so far were complete and valid); -bte_nomem.
 */
typedef int (*bt_ring_fn)(const struct bt_rec_hdr *rec, void *ctx);
int bt_ring_walk(const struct bt_ring_view *view, bt_ring_fn fn, void *ctx);

/*
 * Copy all records from tail to head into one linear buffer, oldest first
 * (the BT_FMT_SOFT capture format).  *@out is malloc'ed, owned by the caller.
 * Returns the number of records; -bte_invalid if @out or @len is NULL or
 * @view is not a ring view; -bte_corrupt, -bte_torn as bt_ring_walk();
 * -bte_nomem.  On -bte_corrupt or -bte_torn, *@out and *@len still hold
 * what was valid before (the caller frees *@out).
 */
int bt_ring_copy(const struct bt_ring_view *view, uint8_t **out, size_t *len);

/*
 * Iterate a linear buffer of records (a bt_ring_copy() result).  Sets
 * *@rec to the record at *@off and advances *@off.
 * Returns 0; -bte_eos at the end; -bte_corrupt at an invalid header or if
 * *@off is past @len; -bte_invalid if @off or @rec is NULL, or @buf is
 * NULL with @len > 0.
 */
int bt_rec_next(const uint8_t *buf, size_t len, size_t *off,
		const struct bt_rec_hdr **rec);

/*
 * Validate one header against @avail bytes available (@hdr need not be
 * aligned).  Returns 0; -bte_corrupt if @hdr is NULL, shorter than a
 * header, of an unknown type, of a bad size or check.
 */
int bt_rec_check(const struct bt_rec_hdr *hdr, size_t avail);

#endif /* BTRACE_RING_H */
