// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"

#define BT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Write @n branches (from = 0x1000 + 0x10 * i, to = from + 0x100) into a
 * ring of @ring_size bytes and copy it out as a soft capture. */
static void soft_capture(struct bt_capture *cap, size_t ring_size, int n)
{
	struct bt_ring *ring = bt_ring_alloc(ring_size);
	struct bt_ring_view view;
	struct bt_rec_branch rec;
	int i;

	assert_non_null(ring);
	for (i = 0; i < n; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.from = 0x1000 + 0x10 * i;
		rec.to = rec.from + 0x100;
		rec.ninsn = 3;
		rec.kind = i % 2 ? BT_BR_CALL : BT_BR_RET;
		assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH,
					       (uint8_t *)&rec + sizeof(rec.hdr),
					       sizeof(rec) - sizeof(rec.hdr)),
				 0);
	}
	memset(cap, 0, sizeof(*cap));
	cap->format = BT_FMT_SOFT;
	bt_ring_view_init(&view, ring);
	assert_true(bt_ring_copy(&view, &cap->data, &cap->size) >= 0);
	cap->lost = bt_ring_lost_records(ring);
	bt_ring_free(ring);
}

static struct bt_history *decode(const struct bt_capture *cap, size_t last)
{
	struct bt_decode_opts opts = { .size = sizeof(opts), .last = last };
	struct bt_history *hist = NULL;

	assert_int_equal(bt_decode(cap, &opts, &hist), 0);
	assert_non_null(hist);
	return hist;
}

static void decode_soft(void **state)
{
	struct bt_capture cap;
	struct bt_history *hist;
	size_t i;

	soft_capture(&cap, 4096, 10);
	assert_int_equal(cap.lost, 0);
	hist = decode(&cap, 0);
	assert_int_equal(hist->count, 10);
	assert_int_equal(hist->lost, 0);
	assert_int_equal(hist->ninsn, 30);
	for (i = 0; i < hist->count; i++) {
		assert_int_equal(hist->branch[i].from, 0x1000 + 0x10 * i);
		assert_int_equal(hist->branch[i].to, 0x1100 + 0x10 * i);
		assert_int_equal(hist->branch[i].kind,
				 i % 2 ? BT_BR_CALL : BT_BR_RET);
	}
	bt_history_free(hist);
	bt_capture_release(&cap);
}

static void decode_last(void **state)
{
	struct bt_capture cap;
	struct bt_history *hist;

	soft_capture(&cap, 4096, 10);
	hist = decode(&cap, 4);
	assert_int_equal(hist->count, 4);
	/* The last four, oldest first. */
	assert_int_equal(hist->branch[0].from, 0x1000 + 0x10 * 6);
	assert_int_equal(hist->branch[3].from, 0x1000 + 0x10 * 9);
	bt_history_free(hist);
	/* More asked than there is: all of it. */
	hist = decode(&cap, 1000);
	assert_int_equal(hist->count, 10);
	bt_history_free(hist);
	bt_capture_release(&cap);
}

static void decode_wrap(void **state)
{
	struct bt_capture cap;
	struct bt_history *hist;
	size_t n, i;

	/* 40-byte records in 256 bytes: most are overwritten. */
	soft_capture(&cap, 256, 100);
	assert_true(cap.lost > 0);
	hist = decode(&cap, 0);
	n = 100 - cap.lost;
	assert_int_equal(hist->count, n + 1);
	assert_int_equal(hist->lost, cap.lost);
	assert_int_equal(hist->branch[0].kind, BT_BR_GAP);
	assert_int_equal(hist->branch[0].gap, BT_GAP_OVERFLOW);
	for (i = 1; i <= n; i++)
		assert_int_equal(hist->branch[i].from,
				 0x1000 + 0x10 * (100 - n + i - 1));
	bt_history_free(hist);
	/* Cut by --last: no gap inside what is shown. */
	hist = decode(&cap, 2);
	assert_int_equal(hist->count, 2);
	assert_int_equal(hist->branch[1].from, 0x1000 + 0x10 * 99);
	assert_int_not_equal(hist->branch[0].kind, BT_BR_GAP);
	bt_history_free(hist);
	bt_capture_release(&cap);
}

static void decode_corrupt(void **state)
{
	struct bt_capture cap;
	struct bt_history *hist;

	soft_capture(&cap, 4096, 5);
	/* Break the third record's header: two good ones, then a gap. */
	cap.data[2 * sizeof(struct bt_rec_branch) + 1] ^= 0x55;
	hist = decode(&cap, 0);
	assert_int_equal(hist->count, 3);
	assert_int_equal(hist->branch[2].kind, BT_BR_GAP);
	assert_int_equal(hist->branch[2].gap, BT_GAP_DECODE);
	assert_int_equal(hist->branch[2].from, hist->branch[1].to);
	bt_history_free(hist);
	bt_capture_release(&cap);
}

static void decode_null(void **state)
{
	struct bt_decode_opts opts = { .size = sizeof(opts) };
	struct bt_capture cap = { .format = BT_FMT_SOFT };
	struct bt_history *hist = (void *)1;

	assert_int_equal(bt_decode(NULL, &opts, &hist), -bte_invalid);
	assert_int_equal(bt_decode(&cap, NULL, &hist), -bte_invalid);
	/* An empty capture is an empty history. */
	assert_int_equal(bt_decode(&cap, &opts, &hist), 0);
	assert_int_equal(hist->count, 0);
	bt_history_free(hist);
	bt_history_free(NULL);
	cap.format = BT_FMT_MAX;
	assert_int_equal(bt_decode(&cap, &opts, &hist), -bte_format);
	assert_null(hist);
}

/* A soft capture of the branches @br[0..@n). */
static void capture_of(struct bt_capture *cap, const struct bt_branch *br,
		       size_t n)
{
	struct bt_ring *ring = bt_ring_alloc(4096);
	struct bt_ring_view view;
	struct bt_rec_branch rec;
	size_t i;

	assert_non_null(ring);
	for (i = 0; i < n; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.from = br[i].from;
		rec.to = br[i].to;
		rec.ninsn = br[i].ninsn;
		rec.kind = br[i].kind;
		assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH,
					       (uint8_t *)&rec + sizeof(rec.hdr),
					       sizeof(rec) - sizeof(rec.hdr)),
				 0);
	}
	memset(cap, 0, sizeof(*cap));
	cap->format = BT_FMT_SOFT;
	bt_ring_view_init(&view, ring);
	assert_true(bt_ring_copy(&view, &cap->data, &cap->size) >= 0);
	bt_ring_free(ring);
}

/* nop; mov eax, 1; jmp 0x1010; int3 x 8; nop; ret */
static const uint8_t code[] = {
	0x90, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x08,
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x90, 0xc3,
};

struct insn_log {
	uint64_t addr[32];
	int gap[32];
	size_t n;
};

static int log_insn(uint64_t addr, int gap, void *ctx)
{
	struct insn_log *log = ctx;

	assert_true(log->n < 32);
	log->addr[log->n] = addr;
	log->gap[log->n++] = gap;
	return 0;
}

static void insns_of(const struct bt_branch *br, size_t n, size_t last,
		     struct insn_log *log)
{
	struct bt_decode_opts opts = { .size = sizeof(opts), .last = last };
	struct bt_capture cap;

	opts.image = bt_image_alloc();
	assert_non_null(opts.image);
	assert_int_equal(bt_image_add_mem(opts.image, code, sizeof(code),
					  0x1000), 0);
	capture_of(&cap, br, n);
	memset(log, 0, sizeof(*log));
	assert_int_equal(bt_decode_insns(&cap, &opts, log_insn, log), 0);
	bt_image_free(opts.image);
	bt_capture_release(&cap);
}

static void decode_insns(void **state)
{
	const struct bt_branch br[] = {
		{ .from = 0x0f00, .to = 0x1000, .kind = BT_BR_CALL },
		{ .from = 0x1006, .to = 0x1010, .kind = BT_BR_JUMP, .ninsn = 3 },
		{ .from = 0x1011, .to = 0x2000, .kind = BT_BR_RET, .ninsn = 2 },
	};
	const uint64_t want[] = { 0, 0x0f00, 0x1000, 0x1001, 0x1006, 0x1010,
				  0x1011 };
	struct insn_log log;
	size_t i;

	insns_of(br, 3, 0, &log);
	assert_int_equal(log.n, BT_ARRAY_SIZE(want));
	assert_int_equal(log.gap[0], BT_GAP_START);
	for (i = 0; i < log.n; i++)
		assert_int_equal(log.addr[i], want[i]);
	/* The last branch's block only. */
	insns_of(br, 3, 1, &log);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.addr[0], 0x1010);
	assert_int_equal(log.addr[1], 0x1011);
	assert_int_equal(log.gap[0], 0);
}

static void decode_insns_mismatch(void **state)
{
	/* A branch "from" inside an instruction: a decode gap, no guess. */
	const struct bt_branch br[] = {
		{ .from = 0x0f00, .to = 0x1000, .kind = BT_BR_CALL },
		{ .from = 0x1007, .to = 0x1010, .kind = BT_BR_JUMP },
	};
	struct insn_log log;

	insns_of(br, 2, 0, &log);
	assert_int_equal(log.n, 7);
	assert_int_equal(log.addr[4], 0x1006);
	assert_int_equal(log.addr[5], 0);
	assert_int_equal(log.gap[5], BT_GAP_DECODE);
	assert_int_equal(log.addr[6], 0x1007);
}

static void decode_insns_null(void **state)
{
	struct bt_decode_opts opts = { .size = sizeof(opts) };
	struct bt_capture cap = { .format = BT_FMT_SOFT };

	assert_int_equal(bt_decode_insns(NULL, &opts, log_insn, NULL),
			 -bte_invalid);
	assert_int_equal(bt_decode_insns(&cap, &opts, log_insn, NULL),
			 -bte_invalid);
	cap.format = BT_FMT_MAX;
	assert_int_equal(bt_decode_insns(&cap, &opts, log_insn, NULL),
			 -bte_format);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_soft),
		cmocka_unit_test(decode_last),
		cmocka_unit_test(decode_wrap),
		cmocka_unit_test(decode_corrupt),
		cmocka_unit_test(decode_null),
		cmocka_unit_test(decode_insns),
		cmocka_unit_test(decode_insns_mismatch),
		cmocka_unit_test(decode_insns_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
