// SPDX-License-Identifier: MIT
/*
 * A thread's held history (lib/tracer/journal.c) against the records the
 * same writes make without it: parts a backend holds, the records written
 * behind them, all in the ring in order once settled, and the
 * instructions a part leaves after its last branch counted into the
 * branch that follows it, as a backend that decodes at once counts them;
 * and what newer entries would overwrite in the ring dropped undecoded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "btrace/ring.h"
#include "backend/backend.h"
#include "tracer/tracer.h"

/* A held part of the fake backend: one branch from @id, then @left
 * instructions to where the thread stopped. */
struct part {
	uint32_t id;
	uint32_t left;
};

static uint32_t given;		/* instructions given back to the backend */
static int replays, cuts;

static uint32_t fake_replay(struct bt_target *t, struct bt_thread *th,
			    void *data, size_t len, uint32_t acc, int cut)
{
	struct part p;

	if (!data) {
		given += acc;
		return 0;
	}
	assert_int_equal(len, sizeof(p));
	memcpy(&p, data, sizeof(p));
	replays++;
	cuts += cut;
	bt_thread_record(t, th, p.id, p.id + 1, acc + 1, BT_BR_JUMP, 0);
	return p.left;
}

static const struct bt_backend_ops fake_ops = {
	.name = "fake",
	.replay = fake_replay,
};

struct fixture {
	struct bt_target t;
	struct bt_thread th;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->t.ops = &fake_ops;
	f->th.ring = bt_ring_alloc(1 << 16);
	assert_non_null(f->th.ring);
	given = 0;
	replays = 0;
	cuts = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	bt_thread_journal_free(&f->th);
	bt_ring_free(f->th.ring);
	free(f);
	return 0;
}

/* A part that makes @min bytes of records at least (as its backend says). */
static void hold_min(struct bt_thread *th, uint32_t id, uint32_t left,
		     uint64_t min)
{
	struct part p = { id, left };
	void *room = bt_thread_hold_room(th, 2 * sizeof(p));

	assert_non_null(room);
	memcpy(room, &p, sizeof(p));
	bt_thread_hold(th, sizeof(p), min);	/* the room need not all be used */
}

static void hold(struct bt_thread *th, uint32_t id, uint32_t left)
{
	hold_min(th, id, left, sizeof(struct bt_rec_branch));
}

/* The ring's records, oldest first: (type, from or ns, ninsn, kind). */
struct seen {
	uint16_t type;
	uint64_t at;
	uint32_t ninsn;
	int kind;
};

static size_t ring_read(struct bt_thread *th, struct seen *out, size_t max)
{
	struct bt_ring_view view;
	const struct bt_rec_hdr *rec;
	uint8_t *data;
	size_t size, off = 0, n = 0;

	bt_ring_view_init(&view, th->ring);
	assert_true(bt_ring_copy(&view, &data, &size) >= 0);
	while (n < max && bt_rec_next(data, size, &off, &rec) == 0) {
		out[n].type = rec->type;
		if (rec->type == BT_REC_BRANCH) {
			const struct bt_rec_branch *b = (const void *)rec;

			out[n].at = b->from;
			out[n].ninsn = b->ninsn;
			out[n].kind = b->kind;
		} else if (rec->type == BT_REC_TIME) {
			const struct bt_rec_time *tr = (const void *)rec;

			out[n].at = tr->ns;
			out[n].ninsn = tr->ninsn;
		}
		n++;
	}
	free(data);
	return n;
}

/* Nothing held: a record goes to the ring at once. */
static void put_direct(void **state)
{
	struct fixture *f = *state;
	struct seen s[4];

	bt_thread_record(&f->t, &f->th, 0x10, 0x20, 4, BT_BR_CALL, 0);
	assert_int_equal(bt_thread_held(&f->th), 0);
	assert_int_equal(ring_read(&f->th, s, 4), 1);
	assert_int_equal(s[0].at, 0x10);
	assert_int_equal(s[0].ninsn, 4);
	assert_int_equal(f->t.stats.branches, 1);
}

/*
 * Held parts and the records behind them: none in the ring before the
 * settle, all of them after in the order written, a part's leftover
 * instructions in the records up to the next branch (a time record's
 * count too), none past a gap.
 */
static void settle_order(void **state)
{
	struct fixture *f = *state;
	struct seen s[16];

	bt_thread_record(&f->t, &f->th, 0x1, 0x2, 1, BT_BR_JUMP, 0);
	hold(&f->th, 0x100, 5);
	bt_thread_time(&f->th, 777, 2, 0);
	bt_thread_record(&f->t, &f->th, 0x200, 0x300, 3, BT_BR_CALL, 0);
	bt_thread_gap(&f->th, 0, 0x400, BT_GAP_MOVED);
	hold(&f->th, 0x500, 7);
	hold(&f->th, 0x600, 2);
	bt_thread_record(&f->t, &f->th, 0x700, 0x800, 1, BT_BR_RET, 0);
	assert_true(bt_thread_held(&f->th) > 0);
	assert_int_equal(ring_read(&f->th, s, 16), 1);
	assert_int_equal(replays, 0);

	bt_thread_settle(&f->t, &f->th);
	assert_int_equal(bt_thread_held(&f->th), 0);
	assert_int_equal(replays, 3);
	assert_int_equal(ring_read(&f->th, s, 16), 8);
	assert_int_equal(s[1].at, 0x100);	/* the part: acc 0 + 1 */
	assert_int_equal(s[1].ninsn, 1);
	assert_int_equal(s[2].type, BT_REC_TIME);
	assert_int_equal(s[2].at, 777);
	assert_int_equal(s[2].ninsn, 2 + 5);
	assert_int_equal(s[3].at, 0x200);
	assert_int_equal(s[3].ninsn, 3 + 5);
	assert_int_equal(s[4].kind, BT_BR_GAP);
	assert_int_equal(s[4].ninsn, 0);
	assert_int_equal(s[5].at, 0x500);	/* after a gap: nothing owed */
	assert_int_equal(s[5].ninsn, 1);
	assert_int_equal(s[6].at, 0x600);	/* the part before left 7 */
	assert_int_equal(s[6].ninsn, 7 + 1);
	assert_int_equal(s[7].at, 0x700);
	assert_int_equal(s[7].ninsn, 1 + 2);
	assert_int_equal(given, 0);
	assert_int_equal(f->t.stats.branches, 6);
}

/* A part last: what it leaves goes back to the backend's count. */
static void settle_gives_back(void **state)
{
	struct fixture *f = *state;
	struct seen s[4];

	hold(&f->th, 0x100, 9);
	bt_thread_settle(&f->t, &f->th);
	assert_int_equal(ring_read(&f->th, s, 4), 1);
	assert_int_equal(given, 9);

	/* and nothing held: a settle writes nothing */
	bt_thread_settle(&f->t, &f->th);
	assert_int_equal(replays, 1);
	assert_int_equal(ring_read(&f->th, s, 4), 1);
}

/*
 * Entries that newer ones would overwrite in the ring: dropped undecoded,
 * counted lost with what the ring held, the first part kept told that
 * what came before it is gone.
 */
static void drop_overwritten(void **state)
{
	struct fixture *f = *state;
	uint64_t big = (uint64_t)4 << 20;	/* past a 64 KiB ring and more */
	struct seen s[8];

	bt_thread_record(&f->t, &f->th, 0x1, 0x2, 1, BT_BR_JUMP, 0);
	hold_min(&f->th, 0x100, 5, big);
	bt_thread_record(&f->t, &f->th, 0x200, 0x300, 3, BT_BR_CALL, 0);
	assert_int_equal(bt_ring_lost_records(f->th.ring), 0);
	hold_min(&f->th, 0x400, 7, big);	/* overwrites all before it */
	/* the ring's record, the part's branches at least, the record */
	assert_int_equal(bt_ring_lost_records(f->th.ring),
			 1 + big / sizeof(struct bt_rec_branch) + 1);
	assert_int_equal(ring_read(&f->th, s, 8), 0);
	bt_thread_record(&f->t, &f->th, 0x500, 0x600, 1, BT_BR_RET, 0);

	bt_thread_settle(&f->t, &f->th);
	assert_int_equal(replays, 1);
	assert_int_equal(cuts, 1);
	assert_int_equal(ring_read(&f->th, s, 8), 2);
	assert_int_equal(s[0].at, 0x400);
	assert_int_equal(s[0].ninsn, 1);	/* nothing owed from before */
	assert_int_equal(s[1].at, 0x500);
	assert_int_equal(s[1].ninsn, 1 + 7);

	/* a part that makes less than the ring keeps drops nothing */
	hold(&f->th, 0x700, 0);
	hold(&f->th, 0x800, 0);
	bt_thread_settle(&f->t, &f->th);
	assert_int_equal(replays, 3);
	assert_int_equal(cuts, 1);
	assert_int_equal(ring_read(&f->th, s, 8), 4);

	/* one that makes nothing (a walk's reset) dropped: still a cut */
	hold_min(&f->th, 0x900, 0, 0);
	hold_min(&f->th, 0xa00, 0, big);
	bt_thread_settle(&f->t, &f->th);
	assert_int_equal(replays, 4);
	assert_int_equal(cuts, 2);
	assert_int_equal(ring_read(&f->th, s, 8), 1);
	assert_int_equal(s[0].at, 0xa00);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(put_direct, setup, teardown),
		cmocka_unit_test_setup_teardown(settle_order, setup, teardown),
		cmocka_unit_test_setup_teardown(settle_gives_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(drop_overwritten, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
