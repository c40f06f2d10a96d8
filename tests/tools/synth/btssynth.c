// SPDX-License-Identifier: MIT
/*
 * The BTS side of the synthesizer (ptsynth.h): the records intel_bts and
 * perf's BTS samples hold for a walk, kernel entries included on request.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "ptsynth.h"

/* BTS records for the entries the hardware records. */
#define PS_KERNEL_ENTRY 0xffffffff81000000ull
#define PS_KERNEL_EXIT 0xffffffff81000100ull

struct bts_out {
	uint64_t (*rec)[3];
	size_t n;
};

static void bts_add(struct bts_out *b, uint64_t a, uint64_t c, uint64_t flag)
{
	b->rec[b->n][0] = a;
	b->rec[b->n][1] = c;
	b->rec[b->n++][2] = flag;
}

static void bts_records(const struct bt_branch *br, size_t n, int kernel,
			struct bts_out *b)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (br[i].kind) {
		case BT_BR_GAP:
			bts_add(b, 0, 0, 1);	/* lost, for perf */
			break;
		case BT_BR_SYSCALL:
		case BT_BR_INTR:
			if (!kernel)
				break;
			bts_add(b, br[i].from, PS_KERNEL_ENTRY, 0);
			bts_add(b, PS_KERNEL_EXIT, br[i].to, 0);
			break;
		default:
			bts_add(b, br[i].from, br[i].to, 0);
		}
	}
}

static void put_sample(uint8_t *p, const uint64_t *rec)
{
	struct perf_event_header h = { .size = 24 };

	h.type = rec[2] ? PERF_RECORD_LOST : PERF_RECORD_SAMPLE;
	h.misc = PERF_RECORD_MISC_USER;
	memcpy(p, &h, sizeof(h));
	/* PERF_RECORD_LOST: {id, lost}; PERF_RECORD_SAMPLE: {ip, addr}. */
	if (rec[2]) {
		uint64_t lost[2] = { 0, 1 };

		memcpy(p + 8, lost, 16);
	} else {
		memcpy(p + 8, rec, 16);
	}
}

int ps_bts_encode(const struct bt_branch *br, size_t n, int perf,
		  size_t batch, int kernel, uint8_t **out, size_t *size)
{
	struct bts_out b = { calloc(2 * n + 1, sizeof(*b.rec)), 0 };
	size_t i, k = 0, first;
	uint8_t *p;

	if (!b.rec)
		return -1;
	bts_records(br, n, kernel, &b);
	p = calloc(b.n + 1, 24);
	if (!p) {
		free(b.rec);
		return -1;
	}
	if (!perf) {
		for (i = 0; i < b.n; i++)
			if (!b.rec[i][2])
				memcpy(p + 24 * k++, b.rec[i], 24);
	} else {
		/* Newest batch first, each batch in time order. */
		if (!batch)
			batch = b.n ? b.n : 1;
		for (first = (b.n ? (b.n - 1) / batch * batch : 0);;
		     first -= batch) {
			for (i = first; i < b.n && i < first + batch; i++)
				put_sample(p + 24 * k++, b.rec[i]);
			if (!first)
				break;
		}
	}
	free(b.rec);
	*out = p;
	*size = 24 * k;
	return 0;
}
