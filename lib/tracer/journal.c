// SPDX-License-Identifier: MIT
/*
 * A thread's held history (tracer.h): what its backend has taken from the
 * thread but not decoded yet (the recorder's ring records, bt_thread_hold)
 * and, behind it, every record written for the thread since, in order.
 * Nothing of it is in th->ring until someone reads the ring or the backend
 * can no longer decode it later (its code goes away): bt_thread_settle()
 * then writes it all, as the writes would have gone one by one.  So a stop
 * costs what the thread wrote since the last one, whatever the ring holds.
 *
 * Each entry says how many bytes of ring records it makes at least (a
 * held part: its backend's count, from the branches it knows it holds).
 * Once the entries after the oldest make more than the ring holds, the
 * oldest could only be overwritten: it is dropped undecoded, counted lost,
 * and so is what the ring held before it.  A history nobody reads decodes
 * nothing more than its ring keeps.
 *
 * Instructions ran after the last branch of a held part (the walk on to
 * where the thread stopped) belong to the next branch written, as the
 * backends count them: the settle adds them to the records behind it up to
 * that branch (a time record's count too; a gap has none).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/ring.h"
#include "backend/backend.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* One entry: a ring record's type and payload, or the backend's part. */
struct jent {
	uint32_t type;		/* BT_REC_*, or JENT_HELD */
	uint32_t len;		/* bytes after it */
	uint64_t min;		/* bytes of ring records it makes, at least */
};

#define JENT_HELD	0xffff

/*
 * Beyond the ring's size, what the entries after a dropped one must make:
 * the backend's records from where its walk starts over (the recorder's:
 * up to its next whole target, at most 64 KiB of its ring, 5 bytes a
 * branch) may make none.
 */
#define DROP_MARGIN	(((uint64_t)64 << 10) / 5 * sizeof(struct bt_rec_branch))

static size_t jent_size(size_t len)
{
	return sizeof(struct jent) + ((len + 7) & ~(size_t)7);
}

static struct jent *jent_at(const struct bt_journal *j, size_t off)
{
	return (struct jent *)(j->buf + off);
}

/* Room for an entry of up to @len bytes at the end: its header. */
static struct jent *jent_room(struct bt_journal *j, size_t len)
{
	size_t need;

	if (len > UINT32_MAX) {
		bt_fail(bte_invalid, 0, "held history of %zu bytes", len);
		return NULL;
	}
	if (j->start && j->start >= j->len - j->start) {  /* dropped: up */
		memmove(j->buf, j->buf + j->start, j->len - j->start);
		j->len -= j->start;
		j->start = 0;
	}
	need = j->len + jent_size(len);
	if (need > j->cap) {
		size_t cap = j->cap ? j->cap : 4096;
		uint8_t *g;

		while (cap < need)
			cap *= 2;
		g = realloc(j->buf, cap);
		if (!g) {
			bt_fail(bte_nomem, 0, "held history");
			return NULL;
		}
		j->buf = g;
		j->cap = cap;
	}
	return jent_at(j, j->len);
}

/*
 * The oldest entries the ones after them overwrite in a ring of @size:
 * dropped, counted lost, the ring's own records with them.
 */
static void jent_drop(struct bt_thread *th, struct bt_journal *j, size_t size)
{
	uint64_t records = 0, bytes = 0;
	size_t from = j->start;

	while (j->start < j->len) {
		struct jent *e = jent_at(j, j->start);

		if (j->min - e->min < size + DROP_MARGIN)
			break;
		j->min -= e->min;
		j->start += jent_size(e->len);
		records += e->type == JENT_HELD ?
			   e->min / sizeof(struct bt_rec_branch) :
			   e->type != BT_REC_TIME;
		bytes += e->min;
	}
	if (j->start == from)
		return;
	j->cut = 1;	/* what comes next follows nothing known */
	th->nlost++;
	if (th->fault_guard)	/* a fault's history: copied out first */
		bt_fault_guard(th, bt_ring_size(th->ring));
	bt_ring_clear(th->ring);
	bt_ring_lose(th->ring, records, bytes);
}

/* The entry at the end, @len bytes of it written, is in. */
static void jent_commit(struct bt_thread *th, struct jent *e, uint32_t type,
			size_t len, uint64_t min)
{
	struct bt_journal *j = &th->jrn;

	e->type = type;
	e->len = (uint32_t)len;
	e->min = min;
	j->len += jent_size(len);
	j->min += min;
	if (th->ring)
		jent_drop(th, j, bt_ring_size(th->ring));
}

/* A branch record (@len bytes after its header) written: counted, and a
 * gap that says records were lost as a loss. */
static void count_branch(struct bt_thread *th, const void *payload,
			 size_t len)
{
	struct bt_rec_branch br;

	th->nbranch++;
	if (len < sizeof(br) - sizeof(br.hdr))
		return;
	memcpy(&br.from, payload, sizeof(br) - sizeof(br.hdr));
	if (br.kind == BT_BR_GAP && br.gap == BT_GAP_OVERFLOW)
		th->nlost++;
}

int bt_thread_put(struct bt_thread *th, uint16_t type, const void *payload,
		  size_t len)
{
	struct jent *e;

	if (!th->ring)
		return 0;
	if (th->jrn.len == th->jrn.start || th->jrn.settling) {
		if (th->fault_guard)
			bt_fault_guard(th, sizeof(struct bt_rec_hdr) + len);
		if (type == BT_REC_BRANCH)
			count_branch(th, payload, len);
		return bt_ring_write(th->ring, type, payload, len);
	}
	e = jent_room(&th->jrn, len);
	if (!e)
		return -bte_nomem;
	if (len)
		memcpy(e + 1, payload, len);
	jent_commit(th, e, type, len,
		    (sizeof(struct bt_rec_hdr) + len + 7) & ~(size_t)7);
	return 0;
}

void *bt_thread_hold_room(struct bt_thread *th, size_t len)
{
	struct jent *e = jent_room(&th->jrn, len);

	return e ? e + 1 : NULL;
}

void bt_thread_hold(struct bt_thread *th, size_t len, uint64_t min)
{
	jent_commit(th, jent_at(&th->jrn, th->jrn.len), JENT_HELD, len, min);
}

size_t bt_thread_held(const struct bt_thread *th)
{
	return th->jrn.len - th->jrn.start;
}

/* A record behind held parts: the instructions they left over (*@carry)
 * go into it, up to the first branch. */
static void carry_into(uint32_t type, uint8_t *p, size_t len,
		       uint32_t *carry)
{
	struct bt_rec_branch br;
	struct bt_rec_time tr;
	size_t off;

	if (!*carry)
		return;
	if (type == BT_REC_BRANCH && len >= sizeof(br) - sizeof(br.hdr)) {
		memcpy(&br.from, p, sizeof(br) - sizeof(br.hdr));
		if (br.kind != BT_BR_GAP) {
			br.ninsn += *carry;
			off = offsetof(struct bt_rec_branch, ninsn) -
			      offsetof(struct bt_rec_branch, from);
			memcpy(p + off, &br.ninsn, sizeof(br.ninsn));
		}
		*carry = 0;
	} else if (type == BT_REC_TIME &&
		   len >= sizeof(tr) - sizeof(tr.hdr)) {
		memcpy(&tr.ns, p, sizeof(tr) - sizeof(tr.hdr));
		tr.ninsn += *carry;
		off = offsetof(struct bt_rec_time, ninsn) -
		      offsetof(struct bt_rec_time, ns);
		memcpy(p + off, &tr.ninsn, sizeof(tr.ninsn));
	}
}

void bt_thread_settle(struct bt_target *t, struct bt_thread *th)
{
	struct bt_journal *j = &th->jrn;
	uint32_t carry = 0;
	size_t off;
	int cut;

	if (j->len == j->start || j->settling)
		return;
	j->settling = 1;
	cut = j->cut;
	for (off = j->start; off < j->len;) {
		struct jent *e = jent_at(j, off);
		uint8_t *p = (uint8_t *)(e + 1);

		if (e->type == JENT_HELD) {
			carry = t->ops->replay ?
				t->ops->replay(t, th, p, e->len, carry, cut) :
				0;
			cut = 0;
		} else {
			carry_into(e->type, p, e->len, &carry);
			bt_thread_put(th, (uint16_t)e->type, p, e->len);
		}
		off += jent_size(e->len);
	}
	j->len = j->start = 0;
	j->min = 0;
	j->cut = 0;
	j->settling = 0;
	if (carry && t->ops->replay)
		t->ops->replay(t, th, NULL, 0, carry, 0);
	if (j->cap > ((size_t)4 << 20)) {	/* a big one is not kept */
		free(j->buf);
		j->buf = NULL;
		j->cap = 0;
	}
}

void bt_thread_journal_free(struct bt_thread *th)
{
	free(th->jrn.buf);
	memset(&th->jrn, 0, sizeof(th->jrn));
}
