// SPDX-License-Identifier: MIT
/*
 * Reading perf overwrite rings back: BTS samples from the data area
 * (forward or write_backward) and PT bytes from the AUX area.  Only the
 * memory layout is used, so these run unchanged on simulated kernel memory
 * (see perf.h for the kernel facts behind each reader).
 */
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"

static uint64_t load_head(const struct bt_perf_layout *l, int aux)
{
	if (l->load_head)
		return l->load_head(l->ctx, aux);
	if (aux)
		return __atomic_load_n(&l->page->aux_head, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&l->page->data_head, __ATOMIC_ACQUIRE);
}

int bt_is_pow2(size_t n)
{
	return n && !(n & (n - 1));
}

/* Copy @len bytes at free-running position @pos of a ring of @size. */
static void ring_copy(uint8_t *dst, const uint8_t *ring, size_t size,
		      uint64_t pos, size_t len)
{
	size_t off = pos & (size - 1);
	size_t first = size - off < len ? size - off : len;

	memcpy(dst, ring + off, first);
	memcpy(dst + first, ring, len - first);
}

void bt_perf_read_release(struct bt_perf_read *out)
{
	if (!out)
		return;
	free(out->data);
	memset(out, 0, sizeof(*out));
}

static int check_data_layout(const struct bt_perf_layout *l)
{
	if (!l || !l->page || !l->data || !bt_is_pow2(l->data_size) ||
	    l->data_size < BT_PERF_BTS_TREC_SIZE)
		return bt_fail(bte_invalid, 0, "perf ring layout");
	return 0;
}

static int bts_hdr_ok(const struct perf_event_header *h, size_t size)
{
	return h->type == PERF_RECORD_SAMPLE && h->size == size;
}

/*
 * Snapshot the last bytes of the data area ending at @head (@avail of
 * them), then re-read the head: bytes the writer may have reached since
 * are cut from the old end.  Returns the still valid length at the end of
 * *@buf (the copy is linear, oldest byte first), or a negative bt_error.
 */
static ssize_t snapshot_fwd(const struct bt_perf_layout *l, uint64_t head,
			    size_t avail, uint8_t **buf, int *torn)
{
	uint64_t moved;

	*buf = malloc(avail ? avail : 1);
	if (!*buf)
		return bt_fail(bte_nomem, 0, "perf ring copy");
	ring_copy(*buf, l->data, l->data_size, head - avail, avail);
	moved = load_head(l, 0) - head;
	*torn = moved != 0;
	if (moved >= l->data_size)
		return 0;
	/* The writer's next bytes alias the oldest ones we copied. */
	if (avail + moved > l->data_size)
		return l->data_size - moved;
	return avail;
}

int bt_perf_bts_read(const struct bt_perf_layout *l, struct bt_perf_read *out)
{
	const size_t rs = BT_PERF_BTS_REC_SIZE;
	uint64_t head;
	size_t avail, n = 0, end;
	ssize_t valid;
	uint8_t *tmp;
	int torn = 0, ret;

	memset(out, 0, sizeof(*out));
	ret = check_data_layout(l);
	if (ret)
		return ret;
	head = load_head(l, 0);
	avail = head < l->data_size ? head : l->data_size;
	valid = snapshot_fwd(l, head, avail, &tmp, &torn);
	if (valid < 0)
		return valid;

	/* Walk back from the newest record; keep records in place. */
	end = avail;
	while (end >= rs && avail - end + rs <= (size_t)valid) {
		struct perf_event_header h;

		memcpy(&h, tmp + end - rs, sizeof(h));
		if (!bts_hdr_ok(&h, rs)) {
			out->status = -bte_corrupt;
			break;
		}
		end -= rs;
		n++;
	}
	if (!out->status && torn && (size_t)valid < avail)
		out->status = -bte_torn;
	memmove(tmp, tmp + end, n * rs);
	out->data = tmp;
	out->size = n * rs;
	out->lost = head / rs > n ? head / rs - n : 0;
	return (int)n;
}

/* Records of the backward ring in memory order, newest batch first. */
struct bwd_walk {
	const uint8_t *buf;	/* linear copy from data_head upwards */
	size_t nrec;		/* whole, valid records in buf */
	int cut;		/* the last batch may have lost its end */
};

static uint64_t trec_time(const struct bwd_walk *w, size_t i)
{
	struct bt_perf_bts_trec r;

	memcpy(&r, w->buf + i * BT_PERF_BTS_TREC_SIZE, sizeof(r));
	return r.time;
}

/* Emit records [i, j) of @w as 24-byte records at @dst. */
static uint8_t *emit_batch(const struct bwd_walk *w, size_t i, size_t j,
			   uint8_t *dst)
{
	struct bt_perf_bts_trec r;
	struct bt_perf_bts_rec o;

	for (; i < j; i++, dst += sizeof(o)) {
		memcpy(&r, w->buf + i * BT_PERF_BTS_TREC_SIZE, sizeof(r));
		o.hdr = r.hdr;
		o.hdr.size = BT_PERF_BTS_REC_SIZE;
		o.from = r.from;
		o.to = r.to;
		memcpy(dst, &o, sizeof(o));
	}
	return dst;
}

/* Batches in reverse memory order (= time order), minus a cut last one. */
static size_t bwd_reorder(const struct bwd_walk *w, uint8_t *dst)
{
	size_t end = w->nrec, start, kept = 0;

	if (w->cut) {	/* the batch at the old end lost its newest records */
		while (end > 0 && trec_time(w, end - 1) == trec_time(w, w->nrec - 1))
			end--;
	}
	while (end > 0) {
		start = end - 1;
		while (start > 0 && trec_time(w, start - 1) == trec_time(w, end - 1))
			start--;
		dst = emit_batch(w, start, end, dst);
		kept += end - start;
		end = start;
	}
	return kept;
}

int bt_perf_bts_read_backward(const struct bt_perf_layout *l,
			      struct bt_perf_read *out)
{
	const size_t rs = BT_PERF_BTS_TREC_SIZE;
	struct bwd_walk w = { 0 };
	uint64_t head, written, moved;
	size_t avail, valid, i;
	uint8_t *tmp;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = check_data_layout(l);
	if (ret)
		return ret;
	head = load_head(l, 0);
	written = -head;
	avail = written < l->data_size ? written : l->data_size;
	tmp = malloc(avail ? avail : 1);
	if (!tmp)
		return bt_fail(bte_nomem, 0, "perf ring copy");
	ring_copy(tmp, l->data, l->data_size, head, avail);

	/* Bytes written meanwhile (downwards) alias the window's far end. */
	moved = head - load_head(l, 0);
	valid = avail;
	if (moved && avail + moved > l->data_size) {
		valid = moved >= l->data_size ? 0 : l->data_size - moved;
		out->status = -bte_torn;
	}
	w.buf = tmp;
	for (i = 0; (i + 1) * rs <= valid; i++) {
		struct perf_event_header h;

		memcpy(&h, tmp + i * rs, sizeof(h));
		if (!bts_hdr_ok(&h, rs)) {
			out->status = -bte_corrupt;
			break;
		}
	}
	w.nrec = i;
	w.cut = written > l->data_size || out->status;

	out->data = malloc(w.nrec ? w.nrec * BT_PERF_BTS_REC_SIZE : 1);
	if (!out->data) {
		free(tmp);
		return bt_fail(bte_nomem, 0, "perf ring copy");
	}
	i = bwd_reorder(&w, out->data);
	free(tmp);
	out->size = i * BT_PERF_BTS_REC_SIZE;
	out->lost = written / rs > i ? written / rs - i : 0;
	return (int)i;
}

int bt_perf_aux_read(const struct bt_perf_layout *l, struct bt_perf_read *out)
{
	uint64_t head;

	memset(out, 0, sizeof(*out));
	if (!l || !l->page || !l->aux || !bt_is_pow2(l->aux_size))
		return bt_fail(bte_invalid, 0, "perf aux layout");
	head = load_head(l, 1);
	out->data = malloc(l->aux_size);
	if (!out->data)
		return bt_fail(bte_nomem, 0, "perf aux copy");
	/* Oldest byte first: from the write position round to it again. */
	ring_copy(out->data, l->aux, l->aux_size, head, l->aux_size);
	out->size = l->aux_size;
	out->lost = head > l->aux_size ? head - l->aux_size : 0;
	if (load_head(l, 1) != head)
		out->status = -bte_torn;
	return (int)out->size;
}
