// SPDX-License-Identifier: MIT
/*
 * PT decoding speed, measured side by side on synthesized streams:
 *
 *  1. the last 1000 branches of 1 MiB, 16 MiB and 256 MiB buffers (goal:
 *     flat, at most 2x from 1 to 256 MiB);
 *  2. against a full decode of the 256 MiB buffer (goal: >= 100x faster);
 *  3. full-decode throughput against a bare libipt block-decoder loop over
 *     the same stream and image (goal: >= 0.9).
 *
 * The stream is one walk of a generated program that ends where it
 * started (the loop head, nothing on the stack), repeated: PSB+ every 4 KiB
 * as Linux's default psb_period gives.
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "btrace/btrace.h"
#include "decode_internal.h"
#include "image_internal.h"
#include "../tests/tools/synth/ptsynth.h"

#define BASE 0x400000ull
#define LAST 1000
#define MIB (1ull << 20)

static double time_last(struct bt_capture *cap, struct bt_image *image,
			size_t *count)
{
	struct bt_decode_opts opts = { sizeof(opts), LAST, image };
	double best = 1e9;
	int i;

	for (i = 0; i < 7; i++) {
		struct bt_history h = { 0 };
		double t = bench_now();

		if (bt_decode_pt(cap, &opts, &h) < 0)
			return -1;
		t = bench_now() - t;
		best = t < best ? t : best;
		*count = h.count;
		free(h.branch);
	}
	return best;
}

static double time_full(struct bt_capture *cap, struct bt_image *image,
			size_t *count)
{
	struct bt_decode_opts opts = { sizeof(opts), LAST, image };
	struct bt_history h = { 0 };
	double t = bench_now();

	if (bt_decode_pt_full(cap, &opts, &h) < 0)
		return -1;
	t = bench_now() - t;
	*count = h.count;
	free(h.branch);
	return t;
}

/* libipt alone: sync, then blocks and events until the end. */
static double time_bare(struct bt_capture *cap, struct bt_image *image,
			uint64_t *blocks)
{
	struct pt_block_decoder *dec;
	struct pt_config cfg;
	double t = bench_now();
	int status;

	pt_config_init(&cfg);
	cfg.begin = cap->data;
	cfg.end = cap->data + cap->size;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	dec = pt_blk_alloc_decoder(&cfg);
	pt_blk_set_image(dec, bt_image_pt(image));
	*blocks = 0;
	status = pt_blk_sync_forward(dec);
	while (status >= 0) {
		struct pt_block blk;
		struct pt_event ev;

		while (status & pts_event_pending) {
			status = pt_blk_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0)
			break;
		status = pt_blk_next(dec, &blk, sizeof(blk));
		*blocks += 1;
	}
	pt_blk_free_decoder(dec);
	return bench_now() - t;
}

int main(void)
{
	static const size_t sizes[] = { 1 * MIB, 16 * MIB, 256 * MIB };
	struct ps_walk_opts wo = { .seed = 42, .nbranch = 200000,
				   .loop_end = 1, .p_taken = 0.5 };
	struct ps_pt_opts po = { .seed = 42, .psb_period = 4096,
				 .retcomp = 1, .tnt_mix = 1 };
	struct bt_capture cap = { .format = BT_FMT_PT };
	double t_last[3], t_full, t_ours, t_bare;
	struct bt_image *image = bt_image_alloc();
	struct ps_prog *prog = ps_prog_gen(42, 24, BASE);
	struct bt_branch *br;
	struct ps_stream tile;
	uint64_t blocks;
	size_t n, i, count;

	if (!image || !prog || ps_walk(prog, &wo, &br, &n) < 0 ||
	    ps_pt_encode(&po, ps_prog_insn_fn, prog, prog->entry, br, n,
			 &tile) < 0 ||
	    bt_image_add_mem(image, prog->code, prog->size, BASE) < 0) {
		fprintf(stderr, "pt_last: cannot synthesize\n");
		return 1;
	}
	printf("pt_last: tile of %zu branches in %zu bytes of PT (%.2f "
	       "bytes/branch), PSB every %zu bytes\n", n, tile.size,
	       (double)tile.size / n, po.psb_period);
	for (i = 0; i < 3; i++) {
		cap.data = ps_repeat(&tile, sizes[i]);
		cap.size = sizes[i];
		if (!cap.data)
			return 1;
		t_last[i] = time_last(&cap, image, &count);
		printf("  last %d of %4llu MiB: %8.3f ms (%zu entries)\n", LAST,
		       sizes[i] / MIB, t_last[i] * 1e3, count);
		if (i < 2)
			free(cap.data);
	}
	/* The whole 256 MiB once, against the last N of it. */
	t_full = time_full(&cap, image, &count);
	printf("  full decode of 256 MiB: %8.3f s (%.0f MiB/s)\n", t_full,
	       256 / t_full);
	/*
	 * Throughput: the first 32 MiB, ours and libipt alone alternated,
	 * best of five each (other load on the machine only adds time).
	 */
	cap.size = 32 * MIB;
	t_bare = t_ours = 1e9;
	for (i = 0; i < 5; i++) {
		double b = time_bare(&cap, image, &blocks);
		double o = time_full(&cap, image, &count);

		t_bare = b < t_bare ? b : t_bare;
		t_ours = o < t_ours ? o : t_ours;
	}
	printf("  32 MiB: full decode %.3f s, bare libipt block loop %.3f s "
	       "(%lu blocks)\n", t_ours, t_bare, (unsigned long)blocks);
	printf("ratio last-N 256 MiB / 1 MiB:        %6.2f  (goal <= 2)\n",
	       t_last[2] / t_last[0]);
	printf("ratio full decode / last-N, 256 MiB: %6.0f  (goal >= 100)\n",
	       t_full / t_last[2]);
	printf("ratio throughput full / bare libipt: %6.2f  (goal >= 0.9)\n",
	       t_bare / t_ours);
	free(cap.data);
	free(br);
	ps_stream_release(&tile);
	ps_prog_free(prog);
	bt_image_free(image);
	return 0;
}
