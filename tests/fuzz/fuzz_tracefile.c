// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the trace file loader: any bytes in, a trace or a
 * clean error out, never a crash.  Round-trips what loads, and looks every
 * saved symbol up, so the accessors see fuzzed data too.
 */
#include <stdint.h>
#include <stdlib.h>

#include "btrace/tracefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bt_trace *t, *u;
	uint8_t *buf;
	size_t len, i;

	if (bt_trace_parse(&t, data, size) < 0)
		return 0;
	for (i = 0; i < t->nsyms; i++)
		bt_trace_symbol(t, t->sym[i].addr + 1, NULL);
	if (bt_trace_encode(t, &buf, &len) == 0) {
		if (bt_trace_parse(&u, buf, len) < 0)
			abort();	/* what we write, we must read */
		bt_trace_free(u);
		free(buf);
	}
	bt_trace_free(t);
	return 0;
}
