// SPDX-License-Identifier: MIT
/*
 * The capture ring against a model: every test keeps its own list of the
 * records that must still be in the ring (by the rule "drop the oldest
 * whole records until the new one fits") and compares the ring's contents,
 * payload bytes included, with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "btrace/ring.h"

#define HDR sizeof(struct bt_rec_hdr)
#define MODEL_MAX 4096

/* One record as written: its payload is pattern(seq, i). */
struct mrec {
	uint64_t seq;
	uint16_t type;
	size_t len;
};

struct model {
	struct bt_ring *ring;
	size_t size;
	struct mrec rec[MODEL_MAX];	/* survivors, oldest first */
	size_t first, count;		/* circular window */
	uint64_t seq;
	uint64_t lost_records, lost_bytes;
	size_t bytes;			/* sum of survivors' sizes */
};

static uint8_t pattern(uint64_t seq, size_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + 1);
}

static size_t total_of(size_t len)
{
	return (HDR + len + 7) & ~(size_t)7;
}

static struct mrec *model_at(struct model *m, size_t i)
{
	return &m->rec[(m->first + i) % MODEL_MAX];
}

static struct model *model_new(size_t size)
{
	struct model *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->ring = bt_ring_alloc(size);
	assert_non_null(m->ring);
	m->size = size;
	return m;
}

static void model_free(struct model *m)
{
	bt_ring_free(m->ring);
	free(m);
}

/* Write one record to the ring and apply the same write to the model. */
static void model_write(struct model *m, uint16_t type, size_t len)
{
	uint8_t payload[BT_REC_MAX_SIZE];
	size_t total = total_of(len);
	struct mrec *r;

	for (size_t i = 0; i < len; i++)
		payload[i] = pattern(m->seq, i);
	assert_int_equal(bt_ring_write(m->ring, type, payload, len), 0);

	while (m->bytes + total > m->size) {
		r = model_at(m, 0);
		m->bytes -= total_of(r->len);
		m->lost_records += r->type != BT_REC_TIME;	/* not an entry */
		m->lost_bytes += total_of(r->len);
		m->first = (m->first + 1) % MODEL_MAX;
		m->count--;
	}
	assert_true(m->count < MODEL_MAX);
	r = model_at(m, m->count++);
	*r = (struct mrec){ .seq = m->seq++, .type = type, .len = len };
	m->bytes += total;
}

/* Is @hdr exactly the model's record @r (header, payload, padding)? */
static void assert_rec_is(const struct bt_rec_hdr *hdr, const struct mrec *r)
{
	const uint8_t *p = (const uint8_t *)(hdr + 1);
	size_t total = total_of(r->len);

	assert_int_equal(hdr->type, r->type);
	assert_int_equal(hdr->size, total);
	assert_int_equal(hdr->check, hdr->type ^ hdr->size ^ BT_REC_MAGIC);
	for (size_t i = 0; i < r->len; i++)
		assert_int_equal(p[i], pattern(r->seq, i));
	for (size_t i = r->len; i < total - HDR; i++)
		assert_int_equal(p[i], 0);
}

/* Check a linear buffer (bt_ring_copy) against the model's survivors. */
static void assert_linear_is(struct model *m, const uint8_t *buf, size_t len,
			     size_t nrec)
{
	const struct bt_rec_hdr *hdr;
	size_t off = 0, n = 0;
	int ret;

	while ((ret = bt_rec_next(buf, len, &off, &hdr)) == 0) {
		assert_true(n < nrec);
		assert_rec_is(hdr, model_at(m, n));
		n++;
	}
	assert_int_equal(ret, -bte_eos);
	assert_int_equal(n, nrec);
}

/* The whole ring must hold the model's survivors and its lost counts. */
static void model_verify(struct model *m)
{
	struct bt_ring_view view;
	uint8_t *buf;
	size_t len;
	int ret;

	assert_int_equal(bt_ring_head(m->ring) - bt_ring_tail(m->ring),
			 m->bytes);
	assert_int_equal(bt_ring_lost_records(m->ring), m->lost_records);
	assert_int_equal(bt_ring_lost_bytes(m->ring), m->lost_bytes);

	bt_ring_view_init(&view, m->ring);
	ret = bt_ring_copy(&view, &buf, &len);
	assert_int_equal(ret, m->count);
	assert_int_equal(len, m->bytes);
	assert_linear_is(m, buf, len, m->count);
	free(buf);
}

static void alloc(void **state)
{
	struct bt_ring *ring = bt_ring_alloc(64);

	assert_non_null(ring);
	assert_int_equal(bt_ring_size(ring), 64);
	assert_int_equal(bt_ring_head(ring), 0);
	assert_int_equal(bt_ring_tail(ring), 0);
	assert_non_null(bt_ring_data(ring));
	bt_ring_free(ring);
}

static void alloc_invalid(void **state)
{
	static const size_t bad[] = { 0, 1, 8, 32, 63, 65, 96, 100, 4095 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(bt_ring_alloc(bad[i]));
		assert_int_equal(errno, EINVAL);
	}
}

static void free_null(void **state)
{
	bt_ring_free(NULL);
}

static int count_cb(const struct bt_rec_hdr *rec, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static void walk_empty(void **state)
{
	struct model *m = model_new(64);
	struct bt_ring_view view;
	uint8_t *buf;
	size_t len = 1;
	int n = 0;

	bt_ring_view_init(&view, m->ring);
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(bt_ring_copy(&view, &buf, &len), 0);
	assert_non_null(buf);
	assert_int_equal(len, 0);
	free(buf);
	model_free(m);
}

static void write_full(void **state)
{
	struct model *m = model_new(64);

	/* Four 16-byte records fill 64 bytes exactly: nothing lost. */
	for (int i = 0; i < 4; i++)
		model_write(m, BT_REC_BRANCH, 8);
	assert_int_equal(bt_ring_head(m->ring), 64);
	assert_int_equal(bt_ring_tail(m->ring), 0);
	assert_int_equal(bt_ring_lost_records(m->ring), 0);
	model_verify(m);

	/* One more drops exactly the oldest. */
	model_write(m, BT_REC_LOST, 8);
	assert_int_equal(bt_ring_tail(m->ring), 16);
	assert_int_equal(bt_ring_lost_records(m->ring), 1);
	assert_int_equal(bt_ring_lost_bytes(m->ring), 16);
	model_verify(m);

	/* A record as large as the whole ring replaces everything. */
	model_write(m, BT_REC_BRANCH, 64 - HDR);
	assert_int_equal(bt_ring_lost_records(m->ring), 5);
	assert_int_equal(m->count, 1);
	model_verify(m);
	model_free(m);
}

static void write_invalid(void **state)
{
	struct bt_ring *ring = bt_ring_alloc(64);
	uint8_t payload[128] = { 0 };

	assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH, payload, 57),
			 -bte_invalid);
	assert_int_equal(bt_ring_write(ring, 0, payload, 8), -bte_invalid);
	assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH, payload, SIZE_MAX),
			 -bte_invalid);
	assert_int_equal(bt_ring_write(ring, BT_REC_MAX, payload, 8),
			 -bte_invalid);
	assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH, NULL, 8),
			 -bte_invalid);
	assert_int_equal(bt_ring_write(NULL, BT_REC_BRANCH, payload, 8),
			 -bte_invalid);
	/* Nothing was written by the failed calls. */
	assert_int_equal(bt_ring_head(ring), 0);
	/* An empty payload is a header-only record. */
	assert_int_equal(bt_ring_write(ring, BT_REC_LOST, NULL, 0), 0);
	assert_int_equal(bt_ring_head(ring), HDR);
	bt_ring_free(ring);
}

static void write_too_big_for_max(void **state)
{
	struct bt_ring *ring = bt_ring_alloc(1 << 17);
	static uint8_t payload[BT_REC_MAX_SIZE];

	assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH, payload,
				       BT_REC_MAX_SIZE - HDR), 0);
	assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH, payload,
				       BT_REC_MAX_SIZE - HDR + 1), -bte_invalid);
	bt_ring_free(ring);
}

/*
 * For every aligned start offset of the head and every payload length up
 * to 40 bytes, write enough records to wrap twice: records straddle the
 * end at every possible split point.
 */
static void write_wrap(void **state)
{
	const size_t size = 128;

	for (size_t start = 0; start < size; start += 8) {
		for (size_t len = 0; len <= 40; len++) {
			struct model *m = model_new(size);

			if (start)
				model_write(m, BT_REC_LOST, start - HDR);
			for (size_t i = 0; i * total_of(len) < 2 * size + 8; i++)
				model_write(m, BT_REC_BRANCH, len);
			model_verify(m);
			model_free(m);
		}
	}
}

/*
 * Dropping a ring (a gone thread's, past the budget of thread.c): its
 * records counted lost (time records not), nothing left to walk, and
 * writes going on in the least size, the positions on from where they
 * were.  Both kinds of data area: from the heap, and mapped on its own.
 */
static void drop(void **state)
{
	static const size_t sizes[] = { 256, 1u << 20 };
	uint64_t payload[4] = { 1, 2, 3, 4 }, ns = 7;

	for (size_t k = 0; k < 2; k++) {
		struct bt_ring *ring = bt_ring_alloc(sizes[k]);
		struct bt_ring_view view;
		uint64_t head, lost;
		int n = 0;

		assert_non_null(ring);
		assert_int_equal(bt_ring_footprint(ring), 0);
		for (int i = 0; i < 5; i++)
			assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH,
				payload, sizeof(payload)), 0);
		assert_int_equal(bt_ring_write(ring, BT_REC_TIME, &ns,
					       sizeof(ns)), 0);
		head = bt_ring_head(ring);
		assert_int_equal(bt_ring_footprint(ring), head);
		lost = bt_ring_lost_records(ring);
		assert_int_equal(bt_ring_drop(ring), 0);
		assert_int_equal(bt_ring_lost_records(ring), lost + 5);
		assert_int_equal(bt_ring_head(ring), head);
		assert_int_equal(bt_ring_tail(ring), head);
		assert_int_equal(bt_ring_size(ring), 64);
		bt_ring_view_init(&view, ring);
		assert_int_equal(bt_ring_walk(&view, count_cb, &n), 0);
		assert_int_equal(n, 0);
		/* one record fits the least size, and then the next */
		for (int i = 0; i < 3; i++)
			assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH,
				payload, sizeof(payload)), 0);
		bt_ring_view_init(&view, ring);
		assert_int_equal(bt_ring_walk(&view, count_cb, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(bt_ring_lost_records(ring), lost + 7);
		bt_ring_free(ring);
	}
}

/* A record split by the end of the buffer: raw layout and copy out. */
static void write_straddle(void **state)
{
	struct model *m = model_new(64);
	const uint8_t *data = bt_ring_data(m->ring);
	const struct bt_rec_hdr *hdr;

	for (int i = 0; i < 3; i++)
		model_write(m, BT_REC_BRANCH, 8);
	/* 32 bytes at 48: header at 48, payload 56..63 and 0..15. */
	model_write(m, BT_REC_BRANCH, 24);
	assert_int_equal(bt_ring_head(m->ring), 80);
	assert_int_equal(bt_ring_tail(m->ring), 16);
	assert_int_equal(bt_ring_lost_records(m->ring), 1);
	hdr = (const struct bt_rec_hdr *)(data + 48);
	assert_int_equal(hdr->size, 32);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(data[56 + i], pattern(3, i));
	for (size_t i = 8; i < 24; i++)
		assert_int_equal(data[i - 8], pattern(3, i));
	model_verify(m);
	model_free(m);
}

/* Many writes of random sizes, checked against the model all along. */
static void copy_random(void **state)
{
	struct model *m = model_new(1024);

	srand(12345);
	for (int i = 0; i < 20000; i++) {
		model_write(m, 1 + rand() % (BT_REC_MAX - 1), rand() % 200);
		if (i % 97 == 0)
			model_verify(m);
	}
	model_verify(m);
	assert_true(m->lost_records > 1000);
	model_free(m);
}

enum corruption {
	C_TYPE_ZERO, C_TYPE_MAX, C_SIZE_ODD, C_SIZE_SMALL, C_SIZE_ZERO,
	C_SIZE_PAST_HEAD, C_CHECK, C_MAX
};

/* Corrupt @h in one way, keeping the check word right unless C_CHECK. */
static void corrupt(struct bt_rec_hdr *h, int how, size_t avail)
{
	switch (how) {
	case C_TYPE_ZERO: h->type = 0; break;
	case C_TYPE_MAX: h->type = BT_REC_MAX; break;
	case C_SIZE_ODD: h->size += 4; break;
	case C_SIZE_SMALL: h->size = 4; break;
	case C_SIZE_ZERO: h->size = 0; break;
	case C_SIZE_PAST_HEAD: h->size = (uint16_t)(avail + 8); break;
	case C_CHECK: h->check ^= 0x100; return;
	}
	h->check = h->type ^ h->size ^ BT_REC_MAGIC;
}

static void check_corrupt(void **state)
{
	struct bt_rec_hdr good = { BT_REC_BRANCH, 32,
				   BT_REC_BRANCH ^ 32 ^ BT_REC_MAGIC };

	assert_int_equal(bt_rec_check(&good, 32), 0);
	assert_int_equal(bt_rec_check(&good, 24), -bte_corrupt);
	assert_int_equal(bt_rec_check(&good, 4), -bte_corrupt);
	assert_int_equal(bt_rec_check(NULL, 32), -bte_corrupt);
	for (int how = 0; how < C_MAX; how++) {
		struct bt_rec_hdr h = good;

		corrupt(&h, how, 32);
		assert_int_equal(bt_rec_check(&h, 32), -bte_corrupt);
	}
}

struct collect {
	struct model *m;
	size_t n;
};

static int collect_cb(const struct bt_rec_hdr *rec, void *ctx)
{
	struct collect *c = ctx;

	assert_rec_is(rec, model_at(c->m, c->n));
	c->n++;
	return 0;
}

/*
 * Corrupt the third record's header in a copy of a wrapped ring: the walk
 * hands out the first two, then stops with -bte_corrupt; the copy keeps
 * the two.
 */
static void walk_corrupt(void **state)
{
	for (int how = 0; how < C_MAX; how++) {
		struct model *m = model_new(128);
		uint8_t data[128], *buf;
		struct bt_ring_view view;
		struct collect c = { m, 0 };
		uint64_t pos;
		size_t len;

		for (int i = 0; i < 11; i++)
			model_write(m, BT_REC_BRANCH, 16);	/* 24 bytes */
		bt_ring_view_init(&view, m->ring);
		memcpy(data, view.data, sizeof(data));
		view.data = data;
		view.load_tail = NULL;
		pos = view.tail + 2 * 24;
		corrupt((struct bt_rec_hdr *)(data + (pos & 127)), how,
			view.head - pos);
		assert_int_equal(bt_ring_walk(&view, collect_cb, &c),
				 -bte_corrupt);
		assert_int_equal(c.n, 2);
		assert_int_equal(bt_ring_copy(&view, &buf, &len), -bte_corrupt);
		assert_int_equal(len, 48);
		assert_linear_is(m, buf, len, 2);
		free(buf);
		model_free(m);
	}
}

/* Positions that no writer could have produced. */
static void walk_bad_view(void **state)
{
	struct model *m = model_new(64);
	struct bt_ring_view view;
	int n = 0;

	model_write(m, BT_REC_BRANCH, 8);
	bt_ring_view_init(&view, m->ring);
	view.head = view.tail + 72;		/* more than the size */
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), -bte_corrupt);
	view.head = 16, view.tail = 24;		/* head before tail */
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), -bte_corrupt);
	view.head = 20, view.tail = 4;		/* misaligned */
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), -bte_corrupt);
	view.head = 16, view.tail = 0, view.size = 48;
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), -bte_invalid);
	assert_int_equal(n, 0);
	model_free(m);
}

static void walk_null(void **state)
{
	struct model *m = model_new(64);
	struct bt_ring_view view;
	uint8_t *buf;
	size_t len;

	bt_ring_view_init(&view, m->ring);
	assert_int_equal(bt_ring_walk(NULL, count_cb, NULL), -bte_invalid);
	assert_int_equal(bt_ring_walk(&view, NULL, NULL), -bte_invalid);
	assert_int_equal(bt_ring_copy(NULL, &buf, &len), -bte_invalid);
	assert_int_equal(bt_ring_copy(&view, NULL, &len), -bte_invalid);
	model_free(m);
}

static int stop_cb(const struct bt_rec_hdr *rec, void *ctx)
{
	return ++(*(int *)ctx) == 3 ? 42 : 0;
}

static void walk_stop(void **state)
{
	struct model *m = model_new(256);
	struct bt_ring_view view;
	int n = 0;

	for (int i = 0; i < 10; i++)
		model_write(m, BT_REC_BRANCH, 8);
	bt_ring_view_init(&view, m->ring);
	assert_int_equal(bt_ring_walk(&view, stop_cb, &n), 42);
	assert_int_equal(n, 3);
	model_free(m);
}

/*
 * A writer far ahead of a slow reader: while the reader handles a record,
 * the writer writes @burst more records into the live ring.  The walk
 * delivers records that were intact, then reports -bte_torn.
 */
struct racer {
	struct model *m;
	size_t n;		/* records delivered */
	size_t burst_at;	/* after this many, the writer runs */
	size_t burst;
	size_t burst_len;
	struct mrec seen[64];
};

static int racer_cb(const struct bt_rec_hdr *rec, void *ctx)
{
	struct racer *r = ctx;

	/* Delivered records must be the ones the model held at the start. */
	assert_rec_is(rec, &r->seen[r->n]);
	if (++r->n == r->burst_at)
		for (size_t i = 0; i < r->burst; i++)
			model_write(r->m, BT_REC_BRANCH, r->burst_len);
	return 0;
}

static void walk_torn_run(size_t burst_at, size_t burst, size_t burst_len,
			  int expect_ret, size_t expect_n)
{
	struct model *m = model_new(256);
	struct racer r = { m, 0, burst_at, burst, burst_len, { { 0 } } };
	struct bt_ring_view view;

	/* 24-byte records: ten fit in 256 bytes, with 16 to spare. */
	for (int i = 0; i < 40; i++)
		model_write(m, BT_REC_BRANCH, 16);
	assert_int_equal(m->count, 10);
	for (size_t i = 0; i < m->count; i++)
		r.seen[i] = *model_at(m, i);
	bt_ring_view_init(&view, m->ring);
	assert_int_equal(bt_ring_walk(&view, racer_cb, &r), expect_ret);
	assert_int_equal(r.n, expect_n);
	model_free(m);
}

static void walk_torn(void **state)
{
	/* One record more pushes out exactly the one just read: the rest
	 * is intact and must not be reported torn. */
	walk_torn_run(1, 1, 16, 0, 10);
	/* The writer laps the reader several times over. */
	walk_torn_run(2, 100, 40, -bte_torn, 2);
	/* Odd-sized records: old headers now sit inside new payloads. */
	walk_torn_run(3, 7, 37, -bte_torn, 3);
}

/* A simulated writer whose tail passes the third record while it is read. */
static uint64_t fake_tail(void *ctx)
{
	uint64_t *calls = ctx;

	/* Header-only records at 0, 8, 16...: 24 is just past the third. */
	return ++*calls > 2 ? 24 : 0;
}

static void walk_torn_simulated(void **state)
{
	struct model *m = model_new(256);
	struct bt_ring_view view;
	struct collect c = { m, 0 };
	uint64_t calls = 0;
	uint8_t *buf;
	size_t len;

	for (int i = 0; i < 8; i++)
		model_write(m, BT_REC_LOST, 0);
	bt_ring_view_init(&view, m->ring);
	view.load_tail = fake_tail;
	view.ctx = &calls;
	assert_int_equal(bt_ring_walk(&view, collect_cb, &c), -bte_torn);
	assert_int_equal(c.n, 2);
	calls = 0;
	assert_int_equal(bt_ring_copy(&view, &buf, &len), -bte_torn);
	assert_int_equal(len, 16);
	assert_linear_is(m, buf, len, 2);
	free(buf);
	model_free(m);
}

/* A torn header (garbage where a header was) is torn, not corrupt. */
static uint64_t moved_tail(void *ctx)
{
	return 1 << 20;
}

static void walk_torn_header(void **state)
{
	struct model *m = model_new(64);
	struct bt_ring_view view;
	uint8_t data[64];
	int n = 0;

	model_write(m, BT_REC_BRANCH, 8);
	bt_ring_view_init(&view, m->ring);
	memset(data, 0xff, sizeof(data));
	view.data = data;
	view.load_tail = moved_tail;
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), -bte_torn);
	view.load_tail = NULL;
	assert_int_equal(bt_ring_walk(&view, count_cb, &n), -bte_corrupt);
	assert_int_equal(n, 0);
	model_free(m);
}

static void rec_next(void **state)
{
	uint64_t buf[6] = { 0 };
	struct bt_rec_hdr *h = (struct bt_rec_hdr *)buf;
	const struct bt_rec_hdr *rec;
	size_t off = 0;

	*h = (struct bt_rec_hdr){ BT_REC_BRANCH, 32,
				  BT_REC_BRANCH ^ 32 ^ BT_REC_MAGIC };
	h = (struct bt_rec_hdr *)&buf[4];
	*h = (struct bt_rec_hdr){ BT_REC_LOST, 16,
				  BT_REC_LOST ^ 16 ^ BT_REC_MAGIC };
	assert_int_equal(bt_rec_next((uint8_t *)buf, 48, &off, &rec), 0);
	assert_ptr_equal(rec, buf);
	assert_int_equal(off, 32);
	assert_int_equal(bt_rec_next((uint8_t *)buf, 48, &off, &rec), 0);
	assert_int_equal(rec->type, BT_REC_LOST);
	assert_int_equal(bt_rec_next((uint8_t *)buf, 48, &off, &rec), -bte_eos);
	/* A buffer cut inside the last record. */
	off = 32;
	assert_int_equal(bt_rec_next((uint8_t *)buf, 40, &off, &rec),
			 -bte_corrupt);
	off = 50;
	assert_int_equal(bt_rec_next((uint8_t *)buf, 48, &off, &rec),
			 -bte_corrupt);
	for (int how = 0; how < C_MAX; how++) {
		off = 32;
		*h = (struct bt_rec_hdr){ BT_REC_LOST, 16,
					  BT_REC_LOST ^ 16 ^ BT_REC_MAGIC };
		corrupt(h, how, 16);
		assert_int_equal(bt_rec_next((uint8_t *)buf, 48, &off, &rec),
				 -bte_corrupt);
		assert_int_equal(off, 32);
	}
}

/* A trace file mapped at any address: only offsets are relied upon. */
static void rec_next_unaligned(void **state)
{
	struct bt_rec_hdr h[2] = {
		{ BT_REC_LOST, 8, BT_REC_LOST ^ 8 ^ BT_REC_MAGIC },
		{ BT_REC_BRANCH, 8, BT_REC_BRANCH ^ 8 ^ BT_REC_MAGIC },
	};
	uint8_t raw[sizeof(h) + 1];
	const struct bt_rec_hdr *rec;
	size_t off = 0;

	memcpy(raw + 1, h, sizeof(h));
	assert_int_equal(bt_rec_next(raw + 1, sizeof(h), &off, &rec), 0);
	assert_ptr_equal(rec, raw + 1);
	assert_int_equal(bt_rec_next(raw + 1, sizeof(h), &off, &rec), 0);
	assert_int_equal(off, 16);
	assert_int_equal(bt_rec_next(raw + 1, sizeof(h), &off, &rec),
			 -bte_eos);
}

static void rec_next_null(void **state)
{
	const struct bt_rec_hdr *rec;
	size_t off = 0;

	assert_int_equal(bt_rec_next(NULL, 0, &off, &rec), -bte_eos);
	assert_int_equal(bt_rec_next(NULL, 8, &off, &rec), -bte_invalid);
	assert_int_equal(bt_rec_next(NULL, 0, NULL, &rec), -bte_invalid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alloc),
		cmocka_unit_test(alloc_invalid),
		cmocka_unit_test(free_null),
		cmocka_unit_test(walk_empty),
		cmocka_unit_test(write_full),
		cmocka_unit_test(write_invalid),
		cmocka_unit_test(write_too_big_for_max),
		cmocka_unit_test(write_wrap),
		cmocka_unit_test(write_straddle),
		cmocka_unit_test(drop),
		cmocka_unit_test(copy_random),
		cmocka_unit_test(check_corrupt),
		cmocka_unit_test(walk_corrupt),
		cmocka_unit_test(walk_bad_view),
		cmocka_unit_test(walk_null),
		cmocka_unit_test(walk_stop),
		cmocka_unit_test(walk_torn),
		cmocka_unit_test(walk_torn_simulated),
		cmocka_unit_test(walk_torn_header),
		cmocka_unit_test(rec_next),
		cmocka_unit_test(rec_next_unaligned),
		cmocka_unit_test(rec_next_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
