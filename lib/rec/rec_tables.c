// SPDX-License-Identifier: MIT
/*
 * The two lookup tables in the process that indirect branches probe
 * (rec_xlate.h's rx_table_index; the probe is rec_xlate_ibl.c's), as the
 * tracer fills them: each entry an original address and its translation's
 * entry, put while other threads may probe them, and the tracer's own copy
 * of the originals (tab_orig), so that finding a slot reads no memory of
 * the process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"

static size_t tab_index(int which, uint64_t a)
{
	return rx_table_index(which, a);
}

/* Entry @i of table @w in the process: its orig, then its trans. */
static uint64_t entry_at(const struct bt_recorder *r, int w, size_t i)
{
	return r->tables + (uint64_t)w * RX_TABLE_BYTES + i * 16;
}

/*
 * A thread other than @th (NULL: any) is in the translation, so it may
 * run translated code beside another from now on: every entry leads to
 * its translation's check again (one aligned 8-byte store each, the orig
 * unchanged, so a thread that probes meanwhile finds either way right),
 * and so will those made later.
 */
void rc_tables_checked(struct bt_recorder *r, const struct bt_thread *th)
{
	uint64_t trans;
	size_t i;
	int w;

	if (!r->tab_unchecked || !rc_others_in(r, th))
		return;
	r->tab_unchecked = 0;
	for (w = 0; w < 2 && r->tab_orig[w]; w++)
		for (i = 0; i < RX_TABLE_ENTRIES; i++) {
			if (!r->tab_orig[w][i] ||
			    rc_mem_read(r, entry_at(r, w, i) + 8, &trans, 8) < 0)
				continue;
			trans -= RX_ENTRY_CHECK;
			rc_mem_write(r, entry_at(r, w, i) + 8, &trans, 8);
		}
}

void rc_table_clear(struct bt_recorder *r, uint64_t orig)
{
	static const uint64_t zero;
	int w;

	for (w = 0; w < 2; w++) {
		size_t i = rx_table_index(w, orig);

		if (r->tab_orig[w] && r->tab_orig[w][i] == orig &&
		    rc_mem_write(r, entry_at(r, w, i), &zero, 8) == 0)
			r->tab_orig[w][i] = 0;
	}
}

/*
 * Other threads may probe the entry meanwhile: trans goes first, so that
 * one that matches the new orig finds its trans; one that matched the old
 * orig and loads the new trans is caught by the translation's entry,
 * which checks its own orig (rx_emit_entry).  Each half is one aligned
 * 8-byte store, as link patches are.  With no other thread in, the two go
 * in one write (half the writes of a start-up).  While no second thread
 * has run translated code, the entry leads past the check (4 instructions
 * of every lookup that hits: recursive fib 11-18% less CPU).
 */
static int table_put(struct bt_recorder *r, int w, uint64_t orig,
		     uint64_t trans)
{
	size_t i = tab_index(w, orig);
	uint64_t at = entry_at(r, w, i), entry[2];

	rc_tables_checked(r, r->cur);
	if (r->tab_unchecked)
		trans += RX_ENTRY_CHECK;
	entry[0] = orig;
	entry[1] = trans;
	if (rc_alone(r)) {
		if (rc_mem_write(r, at, entry, 16) < 0)
			return 0;
	} else {
		if (rc_mem_write(r, at + 8, &trans, 8) < 0)
			return 0;
		if (r->stall_us)
			usleep(r->stall_us);
		if (rc_mem_write(r, at, &orig, 8) < 0)
			return 0;
	}
	r->tab_orig[w][i] = orig;
	return 1;
}

/*
 * Both of @orig's entries are taken: move one's original to its other
 * entry if that one is free, and take its place (cuckoo hashing, one
 * step).  An entry that could not be made is a lookup miss, a stop,
 * later: half of python3's start-up misses were return sites not
 * entered.  1 if done.
 */
static int table_displace(struct bt_recorder *r, uint64_t orig,
			  uint64_t trans)
{
	int w;

	for (w = 0; w < 2; w++) {
		uint64_t y = r->tab_orig[w][tab_index(w, orig)];
		const struct rb *b = rc_block_find(r, y);

		if (!b || !rb_trans(b, RX_PEND_NONE) ||
		    r->tab_orig[!w][tab_index(!w, y)])
			continue;
		if (!table_put(r, !w, y,
			       rb_trans(b, RX_PEND_NONE) - RX_ENTRY_LEN))
			return 0;
		return table_put(r, w, orig, trans);
	}
	return 0;
}

/*
 * Make @orig -> @trans (its translation's entry) findable by the lookup;
 * 0 if no entry was free.
 * @need: a thread looks for it now, so an entry may be taken over, with
 * other threads running or not (table_put).
 */
int rc_table_insert(struct bt_recorder *r, uint64_t orig, uint64_t trans,
		    int need)
{
	int w;

	for (w = 0; w < 2; w++) {
		size_t i = tab_index(w, orig);

		if (r->tab_orig[w][i] == orig)
			return 1;
		if (!r->tab_orig[w][i])
			return table_put(r, w, orig, trans);
	}
	if (table_displace(r, orig, trans))
		return 1;
	if (!need)
		return 0;
	w = r->evict++ & 1;
	return table_put(r, w, orig, trans);
}

void rc_table_update(struct bt_recorder *r, uint64_t orig, uint64_t trans)
{
	int w;

	for (w = 0; w < 2; w++)
		if (r->tab_orig[w][tab_index(w, orig)] == orig)
			table_put(r, w, orig, trans);
}

int rc_tables_alloc(struct bt_recorder *r)
{
	int w;

	for (w = 0; w < 2; w++) {
		free(r->tab_orig[w]);
		r->tab_orig[w] = calloc(RX_TABLE_ENTRIES, sizeof(uint64_t));
		if (!r->tab_orig[w])
			return bt_fail(bte_nomem, ENOMEM, "tables");
	}
	return 0;
}
