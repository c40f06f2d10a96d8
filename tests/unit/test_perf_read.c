// SPDX-License-Identifier: MIT
/*
 * The perf ring readers against a simulated kernel (perf_sim.h): every
 * record or byte the reader returns must be exactly the one the writer put
 * there, oldest first, and nothing that was overwritten.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <intel-pt.h>
#include <string.h>

#include "btrace/btrace.h"
#include "internal.h"
#include "backend/perf/perf.h"
#include "perf_sim.h"

#define NBR 4096
static uint64_t br[NBR][2];	/* branch k: from and to derived from k */

static int setup(void **state)
{
	size_t k;

	for (k = 0; k < NBR; k++) {
		br[k][0] = 0x401000 + 16 * k;
		br[k][1] = 0x7f0000001000ull + 8 * k;
	}
	return 0;
}

/* Write branches [0, total) in batches of the sizes in @sizes (cycled). */
static size_t write_batches(struct perf_sim *s, size_t total,
			    const size_t *sizes, size_t nsizes, int with_time,
			    size_t *batch_start, size_t *nbatch)
{
	size_t k = 0, b = 0;

	while (k < total) {
		size_t n = sizes[b % nsizes];

		if (n > total - k)
			n = total - k;
		if (batch_start)
			batch_start[b] = k;
		perf_sim_bts_batch(s, &br[k], n, with_time);
		k += n;
		b++;
	}
	if (nbatch)
		*nbatch = b;
	return k;
}

/* The result holds exactly branches [first, last), oldest first. */
static void assert_records(const struct bt_perf_read *r, size_t first,
			   size_t last)
{
	size_t i, n = r->size / BT_PERF_BTS_REC_SIZE;

	assert_int_equal(r->size % BT_PERF_BTS_REC_SIZE, 0);
	assert_int_equal(n, last - first);
	for (i = 0; i < n; i++) {
		struct bt_perf_bts_rec rec;

		memcpy(&rec, r->data + i * sizeof(rec), sizeof(rec));
		assert_int_equal(rec.hdr.type, PERF_RECORD_SAMPLE);
		assert_int_equal(rec.hdr.size, BT_PERF_BTS_REC_SIZE);
		assert_int_equal(rec.hdr.misc, PERF_RECORD_MISC_USER);
		assert_int_equal(rec.from, br[first + i][0]);
		assert_int_equal(rec.to, br[first + i][1]);
	}
}

static void bts_read(void **state)
{
	static const size_t sizes[] = { 3, 1, 7, 2 };
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	perf_sim_init(&s, 4096, 0, 0);
	perf_sim_layout(&s, &l);
	write_batches(&s, 100, sizes, 4, 0, NULL, NULL);
	assert_int_equal(bt_perf_bts_read(&l, &r), 100);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.lost, 0);
	assert_records(&r, 0, 100);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

/*
 * Wrapped many times, with the oldest record straddling the overwrite
 * point (4096 is no multiple of 24): only whole records come back.
 */
static void bts_read_wrap(void **state)
{
	static const size_t sizes[] = { 5, 40, 1, 13 };
	size_t total, first, size;
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	for (size = 4096; size <= 16384; size *= 2) {
		for (total = 170; total < 2000; total += 331) {
			perf_sim_init(&s, size, 0, 0);
			perf_sim_layout(&s, &l);
			write_batches(&s, total, sizes, 4, 0, NULL, NULL);
			/* ground truth: records whose bytes are all in the ring */
			first = total * 24 > size ?
				(total * 24 - size + 23) / 24 : 0;
			assert_int_equal(bt_perf_bts_read(&l, &r),
					 (int)(total - first));
			assert_int_equal(r.status, 0);
			assert_int_equal(r.lost, first);
			assert_records(&r, first, total);
			bt_perf_read_release(&r);
			perf_sim_free(&s);
		}
	}
}

static void bts_read_null(void **state)
{
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	assert_int_equal(bt_perf_bts_read(NULL, &r), -bte_invalid);
	perf_sim_init(&s, 4096, 0, 0);
	perf_sim_layout(&s, &l);
	l.data_size = 3000;
	assert_int_equal(bt_perf_bts_read(&l, &r), -bte_invalid);
	l.data_size = 4096;
	l.data = NULL;
	assert_int_equal(bt_perf_bts_read(&l, &r), -bte_invalid);
	perf_sim_layout(&s, &l);	/* empty: nothing written yet */
	assert_int_equal(bt_perf_bts_read(&l, &r), 0);
	assert_int_equal(r.size, 0);
	assert_int_equal(r.status, 0);
	bt_perf_read_release(&r);
	bt_perf_read_release(NULL);
	perf_sim_free(&s);
}

/* A bad header stops the walk; the newer records are still whole. */
static void bts_read_corrupt(void **state)
{
	static const size_t sizes[] = { 4 };
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	perf_sim_init(&s, 4096, 0, 0);
	perf_sim_layout(&s, &l);
	write_batches(&s, 50, sizes, 1, 0, NULL, NULL);
	s.data[30 * 24 + 6] = 99;	/* record 30's header size */
	assert_int_equal(bt_perf_bts_read(&l, &r), 19);
	assert_int_equal(r.status, -bte_corrupt);
	assert_records(&r, 31, 50);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

/* A writer that adds one batch while the reader copies (a slow reader). */
struct racer {
	struct perf_sim *s;
	size_t next, n;
	int calls;
};

static uint64_t racing_head(void *ctx, int aux)
{
	struct racer *rc = ctx;

	if (rc->calls++ == 1) {
		perf_sim_bts_batch(rc->s, &br[rc->next], rc->n, rc->s->backward);
		rc->next += rc->n;
	}
	return aux ? rc->s->page->aux_head : rc->s->page->data_head;
}

static void bts_read_torn(void **state)
{
	static const size_t sizes[] = { 10 };
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;
	struct racer rc;
	size_t first, head2;

	perf_sim_init(&s, 4096, 0, 0);
	perf_sim_layout(&s, &l);
	write_batches(&s, 400, sizes, 1, 0, NULL, NULL);
	rc = (struct racer){ .s = &s, .next = 400, .n = 20 };
	l.load_head = racing_head;
	l.ctx = &rc;
	/* copied: whole records of [400*24-4096, 400*24); then 480 bytes
	 * more were written, overwriting the oldest 480 of them */
	head2 = 420 * 24;
	first = (head2 - 4096 + 23) / 24;
	assert_int_equal(bt_perf_bts_read(&l, &r), (int)(400 - first));
	assert_int_equal(r.status, -bte_torn);
	assert_records(&r, first, 400);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

/*
 * write_backward: batches newest first in memory, each in time order; the
 * reader must give back strict time order.
 */
static void bts_read_backward(void **state)
{
	static const size_t sizes[] = { 3, 1, 7, 2, 11 };
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;
	struct bt_perf_bts_trec first;

	perf_sim_init(&s, 8192, 0, 1);
	perf_sim_layout(&s, &l);
	write_batches(&s, 200, sizes, 5, 1, NULL, NULL);
	/* the layout really is newest batch first: the last batch (the
	 * 4 records 196..199 left after 8 rounds of 24 and 3 + 1) starts at
	 * data_head */
	memcpy(&first, s.data + (s.page->data_head & 8191), sizeof(first));
	assert_int_equal(first.from, br[196][0]);
	assert_int_equal(bt_perf_bts_read_backward(&l, &r), 200);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.lost, 0);
	assert_records(&r, 0, 200);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

/*
 * Wrapped: the oldest batch still in the ring lost its newest records to
 * the wrap; it is dropped whole so the history has no hole.
 */
static void bts_read_backward_wrap(void **state)
{
	static const size_t sizes[] = { 9, 2, 30, 1, 5 };
	size_t start[NBR], nb, total, b, cum, first;
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	for (total = 300; total < 3000; total += 457) {
		perf_sim_init(&s, 4096, 0, 1);
		perf_sim_layout(&s, &l);
		write_batches(&s, total, sizes, 5, 1, start, &nb);
		/* ground truth: the oldest batch whose bytes, with all newer
		 * batches', fit in the ring; one that ends right at the
		 * ring's end cannot be told from a cut one: dropped too */
		first = total;
		for (b = nb; b-- > 0;) {
			cum = (total - start[b]) * BT_PERF_BTS_TREC_SIZE;
			if (cum >= 4096)
				break;
			first = start[b];
		}
		assert_int_equal(bt_perf_bts_read_backward(&l, &r),
				 (int)(total - first));
		assert_int_equal(r.status, 0);
		assert_int_equal(r.lost, first);
		assert_records(&r, first, total);
		bt_perf_read_release(&r);
		perf_sim_free(&s);
	}
}

static void bts_read_backward_torn(void **state)
{
	static const size_t sizes[] = { 10 };
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;
	struct racer rc;

	perf_sim_init(&s, 4096, 0, 1);
	perf_sim_layout(&s, &l);
	write_batches(&s, 400, sizes, 1, 1, NULL, NULL);
	rc = (struct racer){ .s = &s, .next = 400, .n = 20 };
	l.load_head = racing_head;
	l.ctx = &rc;
	/* window at the first read: 4096 bytes = 128 records: batches
	 * 390..399 down to 280..289 whole, then 270..277 of a cut batch.
	 * 20 records (640 bytes) written meanwhile overwrite the far 640
	 * bytes: 108 records stay, 300..399 and the cut 290..297. */
	assert_int_equal(bt_perf_bts_read_backward(&l, &r), 100);
	assert_int_equal(r.status, -bte_torn);
	assert_records(&r, 300, 400);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

static void bts_read_backward_null(void **state)
{
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	assert_int_equal(bt_perf_bts_read_backward(NULL, &r), -bte_invalid);
	perf_sim_init(&s, 4096, 0, 1);
	perf_sim_layout(&s, &l);
	assert_int_equal(bt_perf_bts_read_backward(&l, &r), 0);
	assert_int_equal(r.status, 0);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

static void fill_random(uint8_t *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(perf_sim_rand(&seed) | 1); /* never zero */
}

static void aux_read(void **state)
{
	uint8_t stream[1000], zero[4096 - 1000] = { 0 };
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	perf_sim_init(&s, 4096, 4096, 0);
	perf_sim_layout(&s, &l);
	fill_random(stream, sizeof(stream), 1);
	perf_sim_aux_write(&s, stream, sizeof(stream));
	perf_sim_aux_publish(&s);
	assert_int_equal(bt_perf_aux_read(&l, &r), 4096);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.lost, 0);
	/* never-written zeros first, then the bytes in order */
	assert_memory_equal(r.data, zero, sizeof(zero));
	assert_memory_equal(r.data + sizeof(zero), stream, sizeof(stream));
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

/* Wrapped, with aux_head as an offset (intel_pt) or free-running. */
static void aux_read_wrap(void **state)
{
	static uint8_t stream[70000];
	size_t len, aux = 8192;
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;
	int mode;

	fill_random(stream, sizeof(stream), 2);
	for (mode = 0; mode < 2; mode++) {
		for (len = aux; len < sizeof(stream); len += 6173) {
			perf_sim_init(&s, 4096, aux, 0);
			s.aux_head_offset = mode;
			perf_sim_layout(&s, &l);
			/* in pieces, as the thread is stopped and resumed */
			perf_sim_aux_write(&s, stream, len / 3);
			perf_sim_aux_publish(&s);
			perf_sim_aux_write(&s, stream + len / 3, len - len / 3);
			perf_sim_aux_publish(&s);
			assert_int_equal(bt_perf_aux_read(&l, &r), (int)aux);
			assert_memory_equal(r.data, stream + len - aux, aux);
			assert_int_equal(r.lost, mode ? 0 : len - aux);
			bt_perf_read_release(&r);
			perf_sim_free(&s);
		}
	}
}

static void aux_read_null(void **state)
{
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct perf_sim s;

	assert_int_equal(bt_perf_aux_read(NULL, &r), -bte_invalid);
	perf_sim_init(&s, 4096, 0, 0);
	perf_sim_layout(&s, &l);
	assert_int_equal(bt_perf_aux_read(&l, &r), -bte_invalid);
	perf_sim_free(&s);
}

/* Encode PT packets with libipt into @buf; returns the length. */
static size_t encode_pt(uint8_t *buf, size_t size, size_t npsb)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet psb = { .type = ppt_psb };
	struct pt_packet psbend = { .type = ppt_psbend };
	struct pt_packet fup = { .type = ppt_fup, .payload.ip = {
		.ipc = pt_ipc_sext_48, .ip = 0x401000 } };
	struct pt_packet tnt = { .type = ppt_tnt_8 };
	size_t i, j;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	enc = pt_alloc_encoder(&cfg);
	assert_non_null(enc);
	for (i = 0; i < npsb; i++) {
		assert_true(pt_enc_next(enc, &psb) > 0);
		fup.payload.ip.ip = 0x401000 + 0x10 * i;
		assert_true(pt_enc_next(enc, &fup) > 0);
		assert_true(pt_enc_next(enc, &psbend) > 0);
		for (j = 0; j < 20; j++) {
			tnt.payload.tnt.bit_size = 6;
			tnt.payload.tnt.payload = (i + j) & 0x3f;
			assert_true(pt_enc_next(enc, &tnt) > 0);
		}
	}
	assert_int_equal(pt_enc_get_offset(enc, &j), 0);
	pt_free_encoder(enc);
	return j;
}

/*
 * A real PT stream wrapped in the AUX area: what the reader returns syncs
 * at a PSB and decodes to the packets of the stream's tail, up to its end.
 */
static void aux_read_pt_sync(void **state)
{
	static uint8_t stream[65536];
	size_t len = encode_pt(stream, sizeof(stream), 300), aux = 4096;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct bt_perf_layout l;
	struct bt_perf_read r;
	struct pt_config cfg;
	struct perf_sim s;
	uint64_t off;
	int ret, psbs = 0;

	assert_true(len > 3 * aux);
	perf_sim_init(&s, 4096, aux, 0);
	perf_sim_layout(&s, &l);
	perf_sim_aux_write(&s, stream, len);
	perf_sim_aux_publish(&s);
	assert_int_equal(bt_perf_aux_read(&l, &r), (int)aux);

	pt_config_init(&cfg);
	cfg.begin = r.data;
	cfg.end = r.data + r.size;
	dec = pt_pkt_alloc_decoder(&cfg);
	assert_non_null(dec);
	assert_true(pt_pkt_sync_forward(dec) >= 0);
	assert_int_equal(pt_pkt_get_sync_offset(dec, &off), 0);
	/* every packet from the sync point on is the stream's own byte */
	assert_memory_equal(r.data + off, stream + len - aux + off, aux - off);
	while ((ret = pt_pkt_next(dec, &pkt, sizeof(pkt))) >= 0)
		psbs += pkt.type == ppt_psb;
	assert_int_equal(ret, -pte_eos);
	assert_true(psbs >= 2);
	pt_pkt_free_decoder(dec);
	bt_perf_read_release(&r);
	perf_sim_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bts_read),
		cmocka_unit_test(bts_read_wrap),
		cmocka_unit_test(bts_read_null),
		cmocka_unit_test(bts_read_corrupt),
		cmocka_unit_test(bts_read_torn),
		cmocka_unit_test(bts_read_backward),
		cmocka_unit_test(bts_read_backward_wrap),
		cmocka_unit_test(bts_read_backward_torn),
		cmocka_unit_test(bts_read_backward_null),
		cmocka_unit_test(aux_read),
		cmocka_unit_test(aux_read_wrap),
		cmocka_unit_test(aux_read_null),
		cmocka_unit_test(aux_read_pt_sync),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
