// SPDX-License-Identifier: MIT
/*
 * BTS decoding against ground truth: random walks over generated code,
 * written as intel_bts records or perf samples, decoded back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "decode_internal.h"
#include "internal.h"
#include "../tools/synth/ptsynth.h"

#define BASE 0x7f0000400000ull

struct trace {
	struct ps_prog *prog;
	struct bt_branch *truth, *want;
	size_t n, nwant;
	struct bt_image *image;
};

static void trace_make(struct trace *t, uint64_t seed, size_t nbranch,
		       double p_intr, double p_ovf)
{
	struct ps_walk_opts wo = { .seed = seed, .nbranch = nbranch,
				   .p_taken = 0.5, .p_intr = p_intr,
				   .p_ovf = p_ovf };

	memset(t, 0, sizeof(*t));
	t->prog = ps_prog_gen(seed, 16, BASE);
	assert_non_null(t->prog);
	assert_int_equal(ps_walk(t->prog, &wo, &t->truth, &t->n), 0);
	t->image = bt_image_alloc();
	assert_int_equal(bt_image_add_mem(t->image, t->prog->code,
					  t->prog->size, BASE), 0);
	t->want = calloc(t->n, sizeof(*t->want));
	assert_non_null(t->want);
}

static void trace_free(struct trace *t)
{
	bt_image_free(t->image);
	free(t->want);
	free(t->truth);
	ps_prog_free(t->prog);
}

/*
 * What BTS can tell of the walk: no instruction counts; with the kernel's
 * records filtered out, no syscalls; lost records as overflow gaps that
 * know where they start only.
 */
static void expect_from(struct trace *t, int kernel)
{
	size_t i;

	t->nwant = 0;
	for (i = 0; i < t->n; i++) {
		struct bt_branch br = t->truth[i];

		br.ninsn = 0;
		if (!kernel && br.kind == BT_BR_SYSCALL)
			continue;
		if (br.kind == BT_BR_GAP) {
			br.from = t->nwant ? t->want[t->nwant - 1].to : 0;
			br.to = 0;
		}
		t->want[t->nwant++] = br;
	}
}

static struct bt_history *decode(struct trace *t, int format, uint8_t *data,
				 size_t size, size_t last, int image)
{
	struct bt_capture cap = { .format = format, .data = data,
				  .size = size };
	struct bt_decode_opts opts = { sizeof(opts), last,
				       image ? t->image : NULL };
	struct bt_history *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	assert_int_equal(bt_decode_bts(&cap, &opts, h), 0);
	return h;
}

static void expect_same(const struct bt_branch *want, size_t nwant,
			const struct bt_history *h, int kinds)
{
	size_t i;

	for (i = 0; i < nwant && i < h->count; i++) {
		const struct bt_branch *a = &want[i], *b = &h->branch[i];

		if (a->from != b->from || a->to != b->to ||
		    (kinds && a->kind != b->kind) || a->gap != b->gap)
			fail_msg("entry %zu of %zu: want %#lx->%#lx %s/%d, "
				 "got %#lx->%#lx %s/%d", i, nwant, a->from,
				 a->to, bt_branch_kind_name(a->kind), a->gap,
				 b->from, b->to, bt_branch_kind_name(b->kind),
				 b->gap);
	}
	if (h->count != nwant)
		fail_msg("%zu entries decoded, %zu expected", h->count, nwant);
}

/* intel_bts records with the kernel's: syscalls and signals rejoined. */
static void decode_bts(void **state)
{
	struct trace t;
	struct bt_history *h;
	uint8_t *data;
	size_t size, i;

	trace_make(&t, 5, 5000, 0.01, 0);
	expect_from(&t, 1);
	assert_int_equal(ps_bts_encode(t.truth, t.n, 0, 0, 1, &data, &size),
			 0);
	h = decode(&t, BT_FMT_BTS, data, size, 0, 1);
	expect_same(t.want, t.nwant, h, 1);
	bt_history_free(h);
	/* The last N are the tail. */
	h = decode(&t, BT_FMT_BTS, data, size, 10, 1);
	expect_same(t.want + t.nwant - 10, 10, h, 1);
	bt_history_free(h);
	/* Without an image the addresses still hold. */
	h = decode(&t, BT_FMT_BTS, data, size, 0, 0);
	expect_same(t.want, t.nwant, h, 0);
	for (i = 0; i < h->count; i++)
		assert_true(h->branch[i].kind == BT_BR_NONE ||
			    h->branch[i].kind == BT_BR_INTR);
	bt_history_free(h);
	/* A torn tail. */
	h = decode(&t, BT_FMT_BTS, data, 24 * 10 + 5, 0, 1);
	assert_true(h->count >= 6 && h->count <= 11);
	assert_int_equal(h->branch[h->count - 1].kind, BT_BR_GAP);
	assert_int_equal(h->branch[h->count - 1].gap, BT_GAP_DECODE);
	bt_history_free(h);
	free(data);
	trace_free(&t);
}

/* perf samples, user only, with lost records. */
static void decode_perf(void **state)
{
	struct trace t;
	struct bt_history *h;
	uint8_t *data;
	size_t size;

	trace_make(&t, 9, 5000, 0, 0.01);
	expect_from(&t, 0);
	assert_int_equal(ps_bts_encode(t.truth, t.n, 1, 0, 0, &data, &size),
			 0);
	h = decode(&t, BT_FMT_PERF_BTS, data, size, 0, 1);
	expect_same(t.want, t.nwant, h, 1);
	bt_history_free(h);
	free(data);
	trace_free(&t);
}

/* Samples newest first (one batch of one record at a time). */
static void decode_perf_wrap(void **state)
{
	static const size_t batches[] = { 0, 1 };
	struct trace t;
	size_t i;

	trace_make(&t, 13, 4000, 0, 0);
	expect_from(&t, 0);
	for (i = 0; i < BT_ARRAY_SIZE(batches); i++) {
		struct bt_history *h;
		uint8_t *data;
		size_t size;

		assert_int_equal(ps_bts_encode(t.truth, t.n, 1, batches[i], 0,
					       &data, &size), 0);
		h = decode(&t, BT_FMT_PERF_BTS, data, size, 0, 1);
		expect_same(t.want, t.nwant, h, 1);
		bt_history_free(h);
		free(data);
	}
	trace_free(&t);
}

/* Damage becomes decode gaps; the records around it survive. */
static void decode_corrupt(void **state)
{
	struct trace t;
	struct bt_history *h;
	uint8_t *data;
	size_t size, i, gaps = 0;

	trace_make(&t, 17, 1000, 0, 0);
	expect_from(&t, 0);
	assert_int_equal(ps_bts_encode(t.truth, t.n, 1, 0, 0, &data, &size),
			 0);
	memset(data + 24 * 500 + 4, 0xff, 4);	/* a bad header size */
	h = decode(&t, BT_FMT_PERF_BTS, data, size, 0, 1);
	for (i = 0; i < h->count; i++)
		gaps += h->branch[i].kind == BT_BR_GAP &&
			h->branch[i].gap == BT_GAP_DECODE;
	assert_int_equal(gaps, 1);
	expect_same(t.want + t.nwant - 400, 400,
		    &(struct bt_history){ .branch = h->branch + h->count - 400, .count = 400 },
		    1);
	bt_history_free(h);
	free(data);
	trace_free(&t);
}

static void decode_null(void **state)
{
	struct bt_capture cap = { .format = BT_FMT_BTS };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct bt_history h = { 0 };

	assert_int_equal(bt_decode_bts(NULL, &opts, &h), -bte_invalid);
	assert_int_equal(bt_decode_bts(&cap, NULL, &h), -bte_invalid);
	assert_int_equal(bt_decode_bts(&cap, &opts, &h), 0);
	assert_int_equal(h.count, 0);
	free(h.branch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_bts),
		cmocka_unit_test(decode_perf),
		cmocka_unit_test(decode_perf_wrap),
		cmocka_unit_test(decode_corrupt),
		cmocka_unit_test(decode_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
