// SPDX-License-Identifier: MIT
/*
 * PT decoding against ground truth: random walks over generated code,
 * encoded with libipt's encoder, decoded back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "decode_internal.h"
#include "internal.h"
#include "../tools/synth/ptsynth.h"

#define BASE 0x400000ull

struct trace {
	struct ps_prog *prog;
	struct bt_branch *truth;
	size_t n;
	struct ps_stream st;
	struct bt_image *image;
};

static void trace_make(struct trace *t, uint64_t seed, size_t nbranch,
		       size_t psb_period, int retcomp, double p_ovf)
{
	struct ps_walk_opts wo = { .seed = seed, .nbranch = nbranch,
				   .p_taken = 0.5, .p_intr = 0.01,
				   .p_ovf = p_ovf, .p_dis = 0.005 };
	struct ps_pt_opts po = { .seed = seed, .psb_period = psb_period,
				 .retcomp = retcomp, .p_irq = 0.01,
				 .tnt_mix = 1 };

	memset(t, 0, sizeof(*t));
	t->prog = ps_prog_gen(seed, 16, BASE);
	assert_non_null(t->prog);
	assert_int_equal(ps_walk(t->prog, &wo, &t->truth, &t->n), 0);
	assert_int_equal(ps_pt_encode(&po, ps_prog_insn_fn, t->prog,
				      t->prog->entry, t->truth, t->n, &t->st),
			 0);
	t->image = bt_image_alloc();
	assert_non_null(t->image);
	assert_int_equal(bt_image_add_mem(t->image, t->prog->code,
					  t->prog->size, BASE), 0);
	t->n = ps_pt_visible(t->truth, t->n);
}

static void trace_free(struct trace *t)
{
	bt_image_free(t->image);
	ps_stream_release(&t->st);
	free(t->truth);
	ps_prog_free(t->prog);
}

static struct bt_history *decode(struct trace *t, uint8_t *data, size_t size,
				 size_t last)
{
	struct bt_capture cap = { .format = BT_FMT_PT, .data = data,
				  .size = size };
	struct bt_decode_opts opts = { sizeof(opts), last, t->image };
	struct bt_history *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	assert_int_equal(bt_decode_pt(&cap, &opts, h), 0);
	return h;
}

static struct bt_history *decode_full(struct trace *t, uint8_t *data,
				      size_t size, size_t last)
{
	struct bt_capture cap = { .format = BT_FMT_PT, .data = data,
				  .size = size };
	struct bt_decode_opts opts = { sizeof(opts), last, t->image };
	struct bt_history *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	assert_int_equal(bt_decode_pt_full(&cap, &opts, h), 0);
	return h;
}

static void expect_same(const struct bt_branch *want, size_t nwant,
			const struct bt_history *h)
{
	size_t i;

	for (i = 0; i < nwant && i < h->count; i++) {
		const struct bt_branch *a = &want[i], *b = &h->branch[i];

		if (a->from != b->from || a->to != b->to ||
		    a->kind != b->kind || a->gap != b->gap ||
		    a->ninsn != b->ninsn)
			fail_msg("entry %zu of %zu: want %#lx->%#lx %s/%d n%u, "
				 "got %#lx->%#lx %s/%d n%u", i, nwant,
				 a->from, a->to, bt_branch_kind_name(a->kind),
				 a->gap, a->ninsn, b->from, b->to,
				 bt_branch_kind_name(b->kind), b->gap,
				 b->ninsn);
	}
	if (h->count != nwant)
		fail_msg("%zu entries decoded, %zu expected", h->count, nwant);
}

/* decode(synthesize(walk)) == walk, across PSB periods and compression. */
static void decode_all(void **state)
{
	static const size_t periods[] = { 64, 512, 4096, 1 << 20 };
	size_t i, j, seen[BT_BR_MAX + BT_GAP_MAX] = { 0 };

	for (i = 0; i < 8; i++) {
		struct trace t;
		struct bt_history *h;

		trace_make(&t, 100 + i, 4000, periods[i % 4], i % 3, 0.004);
		for (j = 0; j < t.n; j++)
			seen[t.truth[j].kind + t.truth[j].gap]++;
		h = decode(&t, t.st.buf, t.st.size, 0);
		expect_same(t.truth, t.n, h);
		bt_history_free(h);
		/* Decoding everything to keep the last N: the same tail. */
		h = decode_full(&t, t.st.buf, t.st.size, 300);
		expect_same(t.truth + t.n - 300, 300, h);
		bt_history_free(h);
		trace_free(&t);
	}
	/* The walks covered every kind of entry the decoder makes. */
	for (j = BT_BR_COND; j <= BT_BR_SYSCALL; j++)
		assert_true(seen[j] > 0);
	assert_true(seen[BT_BR_INTR] > 0);
	assert_true(seen[BT_BR_GAP + BT_GAP_OVERFLOW] > 0);
	assert_true(seen[BT_BR_GAP + BT_GAP_DISABLED] > 0);
}

/* The last N from the PSBs at the end equal the tail of the walk. */
static void decode_last(void **state)
{
	static const size_t lasts[] = { 1, 2, 37, 500, 2999, 100000 };
	struct trace t;
	size_t i;

	trace_make(&t, 7, 3000, 256, 2, 0.002);
	for (i = 0; i < BT_ARRAY_SIZE(lasts); i++) {
		size_t n = lasts[i] < t.n ? lasts[i] : t.n;
		struct bt_history *h = decode(&t, t.st.buf, t.st.size, lasts[i]);

		expect_same(t.truth + t.n - n, n, h);
		bt_history_free(h);
	}
	/* A capture cut short ends with a gap that says so. */
	{
		struct bt_capture cap = { .format = BT_FMT_PT,
					  .data = t.st.buf, .size = t.st.size,
					  .status = -bte_torn };
		struct bt_decode_opts opts = { sizeof(opts), 10, t.image };
		struct bt_history hh = { 0 };

		assert_int_equal(bt_decode_pt(&cap, &opts, &hh), 0);
		assert_int_equal(hh.count, 10);
		assert_int_equal(hh.branch[9].kind, BT_BR_GAP);
		assert_int_equal(hh.branch[9].gap, BT_GAP_DECODE);
		free(hh.branch);
	}
	trace_free(&t);
}

/* An overwritten AUX ring starts mid-packet: sync forward past it. */
static void decode_wrap(void **state)
{
	static const size_t rings[] = { 4096, 8192 + 13, 65536, 1 << 22 };
	struct trace t;
	size_t i;

	trace_make(&t, 11, 20000, 1024, 2, 0.001);
	for (i = 0; i < BT_ARRAY_SIZE(rings); i++) {
		size_t first = ps_first_visible(&t.st, rings[i]);
		uint8_t *ring = ps_aux_ring(&t.st, rings[i], 777 * i);
		struct bt_history *h;

		assert_non_null(ring);
		assert_true(first < t.n);
		h = decode(&t, ring, rings[i], 0);
		expect_same(t.truth + first, t.n - first, h);
		bt_history_free(h);
		h = decode(&t, ring, rings[i], 100);
		expect_same(t.truth + t.n - 100, 100, h);
		bt_history_free(h);
		free(ring);
	}
	trace_free(&t);
}

/* Corruption becomes a gap; decoding goes on at the next PSB. */
static void decode_corrupt(void **state)
{
	struct trace t;
	struct bt_history *h;
	size_t i, gaps = 0, psb, tail;
	uint8_t *data;

	trace_make(&t, 23, 6000, 512, 1, 0);
	data = malloc(t.st.size);
	memcpy(data, t.st.buf, t.st.size);
	psb = t.st.npsb / 2;
	for (i = 20; i < 60; i++)
		data[t.st.psb[psb].off + i] ^= 0x5a;
	h = decode(&t, data, t.st.size, 0);
	for (i = 0; i < h->count; i++)
		gaps += h->branch[i].kind == BT_BR_GAP &&
			h->branch[i].gap == BT_GAP_DECODE;
	assert_true(gaps >= 1);
	/* Everything from the next good PSB on is intact. */
	tail = t.n - t.st.psb[psb + 1].branch;
	assert_true(h->count >= tail);
	expect_same(t.truth + t.n - tail, tail, &(struct bt_history){
		.branch = h->branch + h->count - tail, .count = tail });
	bt_history_free(h);
	free(data);
	trace_free(&t);
}

struct ilist {
	uint64_t *v;
	size_t n, alloc;
};

static int ilist_add(uint64_t addr, int gap, void *ctx)
{
	struct ilist *l = ctx;

	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 4096;
		l->v = realloc(l->v, l->alloc * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->n++] = gap ? 1 : addr;
	return 0;
}

/* Every instruction of the walk, in order (1 for a gap). */
static void walk_insns(const struct trace *t, struct ilist *l)
{
	uint64_t cur = t->prog->entry;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct bt_branch *br = &t->truth[i];

		if (br->kind == BT_BR_GAP && br->gap != BT_GAP_DISABLED) {
			ilist_add(0, 1, l);
		} else {
			while (cur != br->from) {
				ilist_add(cur, 0, l);
				cur += ps_prog_insn(t->prog, cur)->len;
			}
			if (br->kind != BT_BR_INTR)
				ilist_add(cur, 0, l);
			if (br->kind == BT_BR_GAP)
				ilist_add(0, 1, l);
		}
		cur = br->to;
	}
}

/* The instruction decoder walks the same instructions. */
static void decode_insns(void **state)
{
	struct ilist want = { 0 }, got = { 0 };
	struct bt_capture cap = { .format = BT_FMT_PT };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct trace t;

	trace_make(&t, 31, 3000, 300, 2, 0.003);
	cap.data = t.st.buf;
	cap.size = t.st.size;
	opts.image = t.image;
	walk_insns(&t, &want);
	assert_int_equal(bt_decode_insns(&cap, &opts, ilist_add, &got), 0);
	assert_true(got.n >= want.n);
	assert_memory_equal(got.v, want.v, want.n * sizeof(*want.v));
	/* The last N: a suffix of the whole, about N blocks long. */
	{
		struct ilist last = { 0 };

		opts.last = 50;
		assert_int_equal(bt_decode_insns(&cap, &opts, ilist_add,
						 &last), 0);
		print_message("last 50: %zu of %zu instructions\n", last.n,
			      got.n);
		assert_true(last.n > 50 && last.n < got.n / 8);
		assert_memory_equal(last.v, got.v + got.n - last.n,
				    last.n * sizeof(*last.v));
		free(last.v);
	}
	free(got.v);
	free(want.v);
	trace_free(&t);
}

static void decode_null(void **state)
{
	struct bt_image *image = bt_image_alloc();
	uint8_t junk[4096];
	struct bt_capture cap = { .format = BT_FMT_PT, .data = junk,
				  .size = sizeof(junk) };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct bt_history h = { 0 };
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(bt_decode_pt(NULL, &opts, &h), -bte_invalid);
	assert_int_equal(bt_decode_pt(&cap, &opts, &h), -bte_invalid);
	opts.image = image;
	/* No PSB anywhere: an empty history, not an error. */
	assert_int_equal(bt_decode_pt(&cap, &opts, &h), 0);
	assert_int_equal(h.count, 0);
	free(h.branch);
	opts.last = 10;
	memset(&h, 0, sizeof(h));
	assert_int_equal(bt_decode_pt(&cap, &opts, &h), 0);
	assert_int_equal(h.count, 0);
	free(h.branch);
	bt_image_free(image);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_all),
		cmocka_unit_test(decode_last),
		cmocka_unit_test(decode_wrap),
		cmocka_unit_test(decode_corrupt),
		cmocka_unit_test(decode_insns),
		cmocka_unit_test(decode_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
