// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bytes as intel_bts records and as perf BTS samples,
 * classified through the synthesized program ptsynth writes with seed 1.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "../tools/synth/ptsynth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct bt_image *image;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int formats[] = { BT_FMT_BTS, BT_FMT_PERF_BTS };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct bt_capture cap = { .size = size };
	struct bt_history *h;
	size_t i;

	if (!image) {
		struct ps_prog *p = ps_prog_gen(1, 16, 0x400000);

		image = bt_image_alloc();
		bt_image_add_mem(image, p->code, p->size, 0x400000);
		ps_prog_free(p);
	}
	cap.data = malloc(size ? size : 1);
	memcpy(cap.data, data, size);
	for (i = 0; i < 2; i++) {
		cap.format = formats[i];
		opts.image = i ? image : NULL;
		opts.last = 0;
		if (!bt_decode(&cap, &opts, &h))
			bt_history_free(h);
		opts.image = image;
		opts.last = 8;
		if (!bt_decode(&cap, &opts, &h))
			bt_history_free(h);
	}
	free(cap.data);
	return 0;
}
