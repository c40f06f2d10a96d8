// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bytes as an Intel PT stream over the synthesized
 * program ptsynth writes with seed 1 (so its corpus decodes for real).
 * Whole, last N, and instruction by instruction: gaps, never a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "decode_internal.h"
#include "../tools/synth/ptsynth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct bt_image *image;

static int count_insn(uint64_t addr, int gap, void *ctx)
{
	return ++*(size_t *)ctx > 100000;	/* stop a runaway walk */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bt_capture cap = { .format = BT_FMT_PT, .size = size };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct bt_history *h;
	size_t n = 0;

	if (!image) {
		struct ps_prog *p = ps_prog_gen(1, 16, 0x400000);

		image = bt_image_alloc();
		bt_image_add_mem(image, p->code, p->size, 0x400000);
		ps_prog_free(p);
	}
	opts.image = image;
	cap.data = malloc(size ? size : 1);
	memcpy(cap.data, data, size);
	if (!bt_decode(&cap, &opts, &h))
		bt_history_free(h);
	opts.last = 16;
	if (!bt_decode(&cap, &opts, &h))
		bt_history_free(h);
	bt_decode_insns(&cap, &opts, count_insn, &n);
	free(cap.data);
	return 0;
}
