// SPDX-License-Identifier: MIT
/* Decoding a trace file: its saved code becomes the decoder's image. */
#include "btrace/error.h"
#include "btrace/image.h"
#include "btrace/tracefile.h"
#include "internal.h"

int bt_trace_add_image(const struct bt_trace *trace, struct bt_image *image)
{
	size_t i;
	int ret;

	if (!trace || !image)
		return bt_fail(bte_invalid, 0, "bt_trace_add_image(NULL)");
	for (i = 0; i < trace->ncode; i++) {
		const struct bt_trace_code *c = &trace->code[i];

		ret = bt_image_add_mem(image, c->bytes, c->size, c->vaddr);
		if (ret < 0)
			return ret;
	}
	return 0;
}
