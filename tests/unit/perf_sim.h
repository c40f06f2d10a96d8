/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TESTS_PERF_SIM_H
#define BTRACE_TESTS_PERF_SIM_H

/*
 * A simulated kernel perf ring for tests: a byte-exact struct
 * perf_event_mmap_page followed by the data area and the AUX area, written
 * the way kernel/events/ring_buffer.c does in overwrite mode (read-only
 * mapping: data_tail ignored):
 *  - forward rings: rb->head grows; a reservation of @size bytes is
 *    written upwards from the old head; data_head published after.
 *  - write_backward rings: rb->head falls; the reservation is written
 *    upwards from the new (lower) head; data_head is the new head.
 *  - BTS batches as intel_pmu_drain_bts_buffer() writes them: one
 *    reservation for the whole batch, its samples in time order inside,
 *    every sample of a batch with the same time.
 *  - the AUX area as intel_pt writes it in snapshot mode: bytes written
 *    circularly, aux_head published on stop as the offset of the next byte
 *    (or as a free-running count, as other AUX drivers do).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/perf/perf.h"

#define SIM_PAGE 4096

struct perf_sim {
	uint8_t *mem;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	size_t data_size;
	uint8_t *aux;
	size_t aux_size;
	int backward;		/* attr.write_backward */
	uint64_t head;		/* the kernel's rb->head */
	uint64_t aux_pos;	/* AUX bytes written, free-running */
	int aux_head_offset;	/* publish aux_head as an offset (intel_pt) */
	uint64_t clock;		/* sample time of the next batch */
};

static inline void perf_sim_init(struct perf_sim *s, size_t data_size,
				 size_t aux_size, int backward)
{
	size_t len = SIM_PAGE + data_size + aux_size;

	memset(s, 0, sizeof(*s));
	s->mem = aligned_alloc(SIM_PAGE, len);
	memset(s->mem, 0, len);	/* the kernel hands out zeroed pages */
	s->page = (struct perf_event_mmap_page *)s->mem;
	s->data = s->mem + SIM_PAGE;
	s->data_size = data_size;
	s->aux = aux_size ? s->data + data_size : NULL;
	s->aux_size = aux_size;
	s->backward = backward;
	s->aux_head_offset = 1;
	s->clock = 1000;
	s->page->version = 0;
	s->page->compat_version = 0;
	s->page->data_offset = SIM_PAGE;
	s->page->data_size = data_size;
	s->page->aux_offset = SIM_PAGE + data_size;
	s->page->aux_size = aux_size;
}

static inline void perf_sim_free(struct perf_sim *s)
{
	free(s->mem);
	s->mem = NULL;
}

static inline void perf_sim_layout(struct perf_sim *s, struct bt_perf_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->page = s->page;
	l->data = s->data;
	l->data_size = s->data_size;
	l->aux = s->aux;
	l->aux_size = s->aux_size;
}

/* __perf_output_begin(): the free-running position the record goes to. */
static inline uint64_t perf_sim_reserve(struct perf_sim *s, size_t size)
{
	uint64_t at;

	if (!s->backward) {
		at = s->head;
		s->head += size;
	} else {
		s->head -= size;
		at = s->head;
	}
	return at;
}

/* __output_copy(): write upwards from @pos, wrapping at the end. */
static inline void perf_sim_put(struct perf_sim *s, uint64_t pos,
				const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		s->data[(pos + i) & (s->data_size - 1)] = b[i];
}

/* perf_output_end(): publish the head. */
static inline void perf_sim_publish(struct perf_sim *s)
{
	__atomic_store_n(&s->page->data_head, s->head, __ATOMIC_RELEASE);
}

/*
 * One drained batch of @n branches (br[i][0] from, br[i][1] to, in time
 * order): 24-byte samples, or 32 with the batch time if @with_time.
 */
static inline void perf_sim_bts_batch(struct perf_sim *s,
				      const uint64_t (*br)[2], size_t n,
				      int with_time)
{
	size_t rs = with_time ? BT_PERF_BTS_TREC_SIZE : BT_PERF_BTS_REC_SIZE;
	uint64_t pos = perf_sim_reserve(s, rs * n);
	size_t i;

	for (i = 0; i < n; i++, pos += rs) {
		struct bt_perf_bts_trec t;
		struct bt_perf_bts_rec r;

		if (with_time) {
			t.hdr.type = PERF_RECORD_SAMPLE;
			t.hdr.misc = PERF_RECORD_MISC_USER;
			t.hdr.size = (uint16_t)rs;
			t.from = br[i][0];
			t.time = s->clock;
			t.to = br[i][1];
			perf_sim_put(s, pos, &t, sizeof(t));
		} else {
			r.hdr.type = PERF_RECORD_SAMPLE;
			r.hdr.misc = PERF_RECORD_MISC_USER;
			r.hdr.size = (uint16_t)rs;
			r.from = br[i][0];
			r.to = br[i][1];
			perf_sim_put(s, pos, &r, sizeof(r));
		}
	}
	s->clock += 17;
	perf_sim_publish(s);
}

/* The hardware writes trace bytes into the AUX area, circularly. */
static inline void perf_sim_aux_write(struct perf_sim *s, const void *p,
				      size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		s->aux[(s->aux_pos + i) & (s->aux_size - 1)] = b[i];
	s->aux_pos += len;
}

/* pt_event_stop(): aux_head tells where the next byte goes. */
static inline void perf_sim_aux_publish(struct perf_sim *s)
{
	uint64_t h = s->aux_head_offset ? s->aux_pos & (s->aux_size - 1)
					: s->aux_pos;

	__atomic_store_n(&s->page->aux_head, h, __ATOMIC_RELEASE);
}

/* A deterministic pseudo-random sequence for test data. */
static inline uint64_t perf_sim_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 11;
}

#endif /* BTRACE_TESTS_PERF_SIM_H */
