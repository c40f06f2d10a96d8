// SPDX-License-Identifier: MIT
/*
 * Hardware capture end to end without the hardware: a random walk over
 * generated code (the ground truth) is encoded as the CPU would write it
 * (PT packets into the AUX area; BTS samples in drained batches into the
 * data area) by the simulated kernel, read back by the backends' readers
 * into a struct bt_capture, and decoded by bt_decode(); the history must
 * be the walk's tail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "internal.h"
#include "backend/perf/perf.h"
#include "perf_sim.h"
#include "../tools/synth/ptsynth.h"

#define BASE 0x400000ull

struct walk {
	struct ps_prog *prog;
	struct bt_branch *truth;
	size_t n;
	struct bt_image *image;
};

static void walk_make(struct walk *w, uint64_t seed, size_t nbranch,
		      double p_intr)
{
	struct ps_walk_opts wo = { .seed = seed, .nbranch = nbranch,
				   .p_taken = 0.5, .p_intr = p_intr };

	memset(w, 0, sizeof(*w));
	w->prog = ps_prog_gen(seed, 16, BASE);
	assert_non_null(w->prog);
	assert_int_equal(ps_walk(w->prog, &wo, &w->truth, &w->n), 0);
	w->image = bt_image_alloc();
	assert_non_null(w->image);
	assert_int_equal(bt_image_add_mem(w->image, w->prog->code,
					  w->prog->size, BASE), 0);
}

static void walk_free(struct walk *w)
{
	bt_image_free(w->image);
	free(w->truth);
	ps_prog_free(w->prog);
}

static struct bt_history *decode(const struct walk *w,
				 const struct bt_capture *cap, size_t last)
{
	struct bt_decode_opts opts = { sizeof(opts), last, w->image };
	struct bt_history *h = NULL;

	assert_int_equal(bt_decode(cap, &opts, &h), 0);
	assert_non_null(h);
	return h;
}

/* The history's real branches (gaps aside) are exactly @want. */
static void expect_branches(const struct bt_branch *want, size_t nwant,
			    const struct bt_history *h)
{
	size_t i, j = 0;

	for (i = 0; i < h->count; i++) {
		const struct bt_branch *b = &h->branch[i];

		if (b->kind == BT_BR_GAP)
			continue;
		if (j >= nwant)
			fail_msg("extra branch %#lx->%#lx", b->from, b->to);
		if (b->from != want[j].from || b->to != want[j].to ||
		    b->kind != want[j].kind)
			fail_msg("branch %zu of %zu: want %#lx->%#lx %s, got "
				 "%#lx->%#lx %s", j, nwant, want[j].from,
				 want[j].to, bt_branch_kind_name(want[j].kind),
				 b->from, b->to, bt_branch_kind_name(b->kind));
		j++;
	}
	assert_int_equal(j, nwant);
}

/*
 * PT: the stream written into a wrapping AUX area across several stops,
 * aux_head published as intel_pt does; the reader's copy decodes to the
 * walk from the first PSB still in the ring to the end.
 */
static void pipeline_pt(void **state)
{
	static const size_t rings[] = { 8192, 32768 };
	struct ps_pt_opts po = { .seed = 5, .psb_period = 1024, .retcomp = 2 };
	struct ps_stream st;
	struct walk w;
	size_t i, n;

	walk_make(&w, 7, 60000, 0.01);
	assert_int_equal(ps_pt_encode(&po, ps_prog_insn_fn, w.prog,
				      w.prog->entry, w.truth, w.n, &st), 0);
	n = ps_pt_visible(w.truth, w.n);
	assert_true(n > 50000);
	for (i = 0; i < BT_ARRAY_SIZE(rings); i++) {
		size_t first = ps_first_visible(&st, rings[i]), off = 0;
		struct bt_perf_layout l;
		struct bt_perf_read r;
		struct bt_capture cap = { 0 };
		struct bt_history *h;
		struct perf_sim s;

		if (st.size <= 2 * rings[i])
			fail_msg("stream of %zu bytes for a ring of %zu", st.size, rings[i]);
		perf_sim_init(&s, 4096, rings[i], 0);
		perf_sim_layout(&s, &l);
		while (off < st.size) {	/* run, stop, run ... */
			size_t len = st.size - off < 3000 ? st.size - off : 3000;

			perf_sim_aux_write(&s, st.buf + off, len);
			perf_sim_aux_publish(&s);
			off += len;
		}
		assert_int_equal(bt_perf_aux_read(&l, &r), (int)rings[i]);
		cap.format = BT_FMT_PT;
		cap.data = r.data;
		cap.size = r.size;
		bt_perf_pt_params(&cap, 0x2001);
		h = decode(&w, &cap, 0);
		expect_branches(w.truth + first, n - first, h);
		bt_history_free(h);
		h = decode(&w, &cap, 50);
		expect_branches(w.truth + n - 50, 50, h);
		bt_history_free(h);
		bt_perf_read_release(&r);
		perf_sim_free(&s);
	}
	ps_stream_release(&st);
	walk_free(&w);
}

/*
 * BTS: every branch of the walk drained in batches into a forward ring
 * that wraps; the reader's records decode to the walk's tail.
 */
static void pipeline_bts(void **state)
{
	static const size_t batches[] = { 1, 7, 100, 2560 };
	static uint64_t br[70000][2];
	struct walk w;
	size_t i, k, n, ring = 256 * 1024, keep;

	walk_make(&w, 33, 60000, 0);
	assert_true(w.n <= BT_ARRAY_SIZE(br));
	for (k = 0; k < w.n; k++) {
		br[k][0] = w.truth[k].from;
		br[k][1] = w.truth[k].to;
	}
	for (i = 0; i < BT_ARRAY_SIZE(batches); i++) {
		struct bt_perf_layout l;
		struct bt_perf_read r;
		struct bt_capture cap = { 0 };
		struct bt_history *h;
		struct perf_sim s;

		perf_sim_init(&s, ring, 0, 0);
		perf_sim_layout(&s, &l);
		for (k = 0; k < w.n; k += n) {
			n = w.n - k < batches[i] ? w.n - k : batches[i];
			perf_sim_bts_batch(&s, &br[k], n, 0);
		}
		keep = w.n - (w.n * 24 - ring + 23) / 24;
		assert_int_equal(bt_perf_bts_read(&l, &r), (int)keep);
		cap.format = BT_FMT_PERF_BTS;
		cap.data = r.data;
		cap.size = r.size;
		cap.lost = r.lost;
		h = decode(&w, &cap, 0);
		expect_branches(w.truth + w.n - keep, keep, h);
		bt_history_free(h);
		h = decode(&w, &cap, 64);
		expect_branches(w.truth + w.n - 64, 64, h);
		bt_history_free(h);
		bt_perf_read_release(&r);
		perf_sim_free(&s);
	}
	walk_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pipeline_pt),
		cmocka_unit_test(pipeline_bts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
