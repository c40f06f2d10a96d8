// SPDX-License-Identifier: MIT
/*
 * A zone's points as the tracer keeps them (recorder_int.h's struct zpt,
 * 16 bytes): what rc_zone_commit() stores, rc_point_at() gives back field
 * for field, for every kind, at both ends of the address space, inside
 * runs, several at one address, and the link bit set and cleared in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rec/recorder_int.h"

#define BASE 0x7f1234500000ull

static struct bt_recorder *rig(void)
{
	struct bt_recorder *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->nzone = 1;
	r->zone[0].base = BASE;
	return r;
}

static void rig_free(struct bt_recorder *r)
{
	free(r->zone[0].pts);
	free(r->zone[0].pend);
	free(r);
}

/* Commit @n points (trans relative to the zone's base) and @len bytes. */
static void commit(struct bt_recorder *r, struct rx_point *pts, size_t n,
		   size_t len)
{
	static uint8_t code[4096];
	struct rx_emit e;

	memset(&e, 0, sizeof(e));
	e.buf = code;
	e.len = len;
	e.base = r->zone[0].base + r->zone[0].used;
	e.pts = pts;
	e.npts = e.ptcap = n;
	assert_int_equal(rc_zone_commit(r, &r->zone[0], &e), 0);
}

static void assert_point(const struct rx_point *a, const struct rx_point *b)
{
	assert_int_equal(a->trans, b->trans);
	assert_int_equal(a->orig, b->orig);
	assert_int_equal(a->aux, b->aux);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->mask, b->mask);
	assert_int_equal(a->pend, b->pend);
}

/* Every kind, every field, back as it went in. */
static void round_trip(void **state)
{
	struct bt_recorder *r = rig();
	struct rx_point in[] = {
		{ BASE + 0, 0x401000, 0, RX_POINT_SAFE, 0, RX_PEND_NONE },
		{ BASE + 48, 0x401000, 17, RX_POINT_SAFE, 0, RX_PEND_NONE },
		{ BASE + 70, 0x401011, 0, RX_POINT_STORE, 0, 3 },
		{ BASE + 90, 0x7ffff7fd0123ull, 0, RX_POINT_SAFE,
		  RM_RAX | RM_RDX, 0x5 },
		{ BASE + 100, 0x7ffff7fd0123ull, BASE + 96,
		  RX_POINT_EXIT_DIRECT, RX_LINKED, 0x81 },
		{ BASE + 120, 0, BASE + 110, RX_POINT_EXIT_IBL,
		  RM_RAX | RM_RCX | RM_RDX, RX_PEND_NONE },
		{ BASE + 130, 0, 0, RX_POINT_EXIT_IBL,
		  RM_RAX | RM_RCX | RM_RDX, RX_PEND_NONE },
		{ BASE + 140, 0xffffffffff600400ull, 0, RX_POINT_EXIT_LEAVE,
		  RM_RCX, RX_PEND_NONE },
		{ BASE + 150, 0x555555554321ull, BASE + 160, RX_POINT_IC, 0,
		  RX_PEND_NONE },
		{ BASE + 170, 0x401100, 0, RX_POINT_SAFE, RM_FIXRCX, 0xff },
	};
	size_t i, n;

	(void)state;
	commit(r, in, sizeof(in) / sizeof(in[0]), 200);
	assert_int_equal(r->zone[0].npts, sizeof(in) / sizeof(in[0]));
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct rx_point *p = rc_point_at(r, in[i].trans, &n);

		assert_non_null(p);
		assert_int_equal(n, 1);
		assert_point(p, &in[i]);
		assert_int_equal(rc_point_index(r, p), i);
	}
	rig_free(r);
}

/* Inside a run: the point that stands at an instruction of the copy; past
 * its end and outside the zone, none. */
static void runs(void **state)
{
	struct bt_recorder *r = rig();
	struct rx_point in[] = {
		{ BASE + 48, 0x401000, 12, RX_POINT_SAFE, 0, RX_PEND_NONE },
		{ BASE + 64, 0x40100c, 0, RX_POINT_STORE, 0, 2 },
	};
	struct rx_point *p;
	size_t n;

	(void)state;
	commit(r, in, 2, 80);
	p = rc_point_at(r, BASE + 53, &n);
	assert_non_null(p);
	assert_int_equal(n, 1);
	assert_int_equal(p->trans, BASE + 53);
	assert_int_equal(p->orig, 0x401005);
	assert_int_equal(p->aux, 0);
	assert_int_equal(rc_point_index(r, p), 0);
	assert_null(rc_point_at(r, BASE + 60, &n));
	assert_int_equal(n, 0);
	assert_null(rc_point_at(r, BASE + 40, &n));
	assert_null(rc_point_at(r, BASE - 1, &n));
	assert_null(rc_point_at(r, BASE + ZONE_SIZE, &n));
	rig_free(r);
}

/* Several at one address, in the order they were made; a second batch
 * after the first, each found by its kind. */
static void shared_address(void **state)
{
	struct bt_recorder *r = rig();
	struct rx_point a[] = {
		{ BASE + 8, 0x401000, 0, RX_POINT_SAFE, RM_RCX, 1 },
		{ BASE + 8, 0x401000, 0, RX_POINT_EXIT_LEAVE, RM_RCX, 1 },
	};
	struct rx_point b[] = {
		{ BASE + 40, 0x402000, BASE + 36, RX_POINT_EXIT_DIRECT, 0, 4 },
		{ BASE + 40, 0x402000, BASE + 44, RX_POINT_IC, 0, 4 },
	};
	struct rx_point *p;
	size_t n;

	(void)state;
	commit(r, a, 2, 32);
	commit(r, b, 2, 32);
	p = rc_point_at(r, BASE + 8, &n);
	assert_int_equal(n, 2);
	assert_point(&p[0], &a[0]);
	assert_point(&p[1], &a[1]);
	p = rc_point_kind(r, BASE + 40, RX_POINT_IC);
	assert_non_null(p);
	assert_point(p, &b[1]);
	assert_int_equal(rc_point_index(r, p), 3);
	assert_null(rc_point_kind(r, BASE + 40, RX_POINT_STORE));
	rig_free(r);
}

/* The link bit, set and cleared in place, the rest untouched; a cache's
 * guess that is no address (not canonical) is kept as none. */
static void in_place(void **state)
{
	struct bt_recorder *r = rig();
	struct rx_point in[] = {
		{ BASE + 16, 0x7ffff7fd0123ull, BASE + 12, RX_POINT_EXIT_DIRECT,
		  0, 0x42 },
		{ BASE + 32, 0x8000000000001234ull, BASE + 28, RX_POINT_IC, 0,
		  RX_PEND_NONE },
	};
	struct rx_point got, want = in[0];
	struct zone *z = &r->zone[0];

	(void)state;
	commit(r, in, 2, 48);
	assert_false(zpt_linked(z, 0));
	zpt_set_linked(z, 0, 1);
	assert_true(zpt_linked(z, 0));
	zpt_get(z, 0, &got);
	want.mask = RX_LINKED;
	assert_point(&got, &want);
	zpt_set_linked(z, 0, 0);
	zpt_get(z, 0, &got);
	assert_point(&got, &in[0]);
	zpt_get(z, 1, &got);
	assert_int_equal(got.orig, 0);
	assert_int_equal(got.aux, BASE + 28);
	assert_int_equal(zpt_trans(z, 1), BASE + 32);
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(runs),
		cmocka_unit_test(shared_address),
		cmocka_unit_test(in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
