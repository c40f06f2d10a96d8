// SPDX-License-Identifier: MIT
/*
 * A thread's held history (tracer.h): what its backend has taken from the
 * thread but not decoded yet (the recorder's ring records, bt_thread_hold)
 * and, behind it, every record written for the thread since, in order.
 * Nothing of it is in th->ring until someone reads the ring or the backend
 * can no longer decode it later (its code goes away): bt_thread_settle()
 * then writes it all, as the writes would have gone one by one.  So a stop
 * costs what the thread wrote since the last one, whatever the ring holds,
 * and a history nobody reads before the ring would have overwritten it is
 * never decoded at all.
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
	uint16_t type;		/* BT_REC_*, or JENT_HELD */
	uint16_t pad;
	uint32_t len;		/* bytes after it */
};

#define JENT_HELD	0xffff

static size_t jent_size(size_t len)
{
	return sizeof(struct jent) + ((len + 7) & ~(size_t)7);
}

/* Room for an entry of up to @len bytes at the end: its header. */
static struct jent *jent_room(struct bt_journal *j, size_t len)
{
	size_t need = j->len + jent_size(len);

	if (len > UINT32_MAX) {
		bt_fail(bte_invalid, 0, "held history of %zu bytes", len);
		return NULL;
	}
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
	return (struct jent *)(j->buf + j->len);
}

/* The entry at the end, @len bytes of it written, is in. */
static void jent_commit(struct bt_journal *j, struct jent *e, uint16_t type,
			size_t len)
{
	e->type = type;
	e->pad = 0;
	e->len = (uint32_t)len;
	j->len += jent_size(len);
}

static int jent_add(struct bt_journal *j, uint16_t type, const void *a,
		    size_t alen)
{
	struct jent *e = jent_room(j, alen);

	if (!e)
		return -bte_nomem;
	if (alen)
		memcpy(e + 1, a, alen);
	jent_commit(j, e, type, alen);
	return 0;
}

int bt_thread_put(struct bt_thread *th, uint16_t type, const void *payload,
		  size_t len)
{
	if (th->jrn.len && !th->jrn.settling)
		return jent_add(&th->jrn, type, payload, len);
	if (!th->ring)
		return 0;
	if (th->fault_guard)
		bt_fault_guard(th, sizeof(struct bt_rec_hdr) + len);
	return bt_ring_write(th->ring, type, payload, len);
}

void *bt_thread_hold_room(struct bt_thread *th, size_t len)
{
	struct jent *e = jent_room(&th->jrn, len);

	return e ? e + 1 : NULL;
}

void bt_thread_hold(struct bt_thread *th, size_t len)
{
	jent_commit(&th->jrn, (struct jent *)(th->jrn.buf + th->jrn.len),
		    JENT_HELD, len);
}

size_t bt_thread_held(const struct bt_thread *th)
{
	return th->jrn.len;
}

/* A record behind held parts: the instructions they left over (*@carry)
 * go into it, up to the first branch. */
static void carry_into(uint16_t type, uint8_t *p, size_t len,
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
	size_t off = 0;

	if (!j->len || j->settling)
		return;
	j->settling = 1;
	while (off < j->len) {
		struct jent *e = (struct jent *)(j->buf + off);
		uint8_t *p = (uint8_t *)(e + 1);

		if (e->type == JENT_HELD) {
			carry = t->ops->replay ?
				t->ops->replay(t, th, p, e->len, carry) : 0;
		} else {
			carry_into(e->type, p, e->len, &carry);
			bt_thread_put(th, e->type, p, e->len);
		}
		off += jent_size(e->len);
	}
	j->len = 0;
	j->settling = 0;
	if (carry && t->ops->replay)
		t->ops->replay(t, th, NULL, 0, carry);
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
