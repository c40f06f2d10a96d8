// SPDX-License-Identifier: MIT
/*
 * Faults the program's own handler takes (bt_target_fault()): a crash
 * reporter runs long after the fault (a bug report, a memory test) and
 * re-raises the signal, and by then the thread's ring holds only the
 * handler.  At such a fault the tracer marks where the thread's ring
 * stands; nothing is copied while the ring still holds what came before
 * (a program that handles many faults, as a JVM does, pays nothing for
 * them), and the first record that would overwrite it copies it out
 * first: one copy of the ring at most for a ring's worth of records.
 * A backend whose trace has no positions (pt, bts) is copied at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "btrace/error.h"
#include "btrace/ring.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/*
 * What is kept of the ring at a fault: its newest records, up to 1 MiB
 * (32768 branches: the whole ring of the fast and step modes, an eighth
 * of the recorder's), so that threads that each take a fault (a JVM's
 * safepoint polls) keep at most that much each.
 */
#define KEEP_BYTES (1u << 20)

struct bt_fault_keep {
	struct bt_stop stop;
	uint64_t count;		/* faults taken by the thread's handlers */
	uint64_t head, tail;	/* the ring at the fault (positions) */
	uint64_t older;		/* records there before tail, not kept */
	uint64_t lost;		/* records the ring had lost then */
	uint64_t nbranch, nlost;	/* the thread's counts then (tracer.h) */
	int positions;		/* head and tail are known */
	int kept;		/* cap holds the history up to the fault */
	struct bt_capture cap;
};

int bt_signal_is_fault(int sig, const siginfo_t *si)
{
	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE &&
	    sig != SIGILL && sig != SIGTRAP)
		return 0;
	return si && si->si_code > 0 && si->si_code != SI_KERNEL;
}

void bt_fault_release(struct bt_fault *f)
{
	if (!f)
		return;
	bt_capture_release(&f->cap);
	memset(f, 0, sizeof(*f));
}

/* What th->ring held at the fault, as a view of it. */
static void keep_view(struct bt_thread *th, const struct bt_fault_keep *k,
		      struct bt_ring_view *view)
{
	memset(view, 0, sizeof(*view));
	view->data = bt_ring_data(th->ring);
	view->size = bt_ring_size(th->ring);
	view->head = k->head;
	view->tail = k->tail;
}

struct keep_walk {
	uint64_t pos, from;	/* where the record walked starts; the goal */
	uint64_t older;		/* records before pos */
};

static int keep_walk_one(const struct bt_rec_hdr *rec, void *ctx)
{
	struct keep_walk *w = ctx;

	if (w->pos >= w->from)
		return 1;	/* a record starts here */
	w->older += rec->type != BT_REC_TIME;
	w->pos += rec->size;
	return 0;
}

/*
 * What is kept of the ring at the fault: its records from the first that
 * starts in its newest KEEP_BYTES, found by walking them (time records
 * are not a branch record's size, so no position can be computed), those
 * before counted as older.  Done when the history is copied or read, not
 * at each fault: a program that handles many faults pays nothing.
 */
static void keep_trim(struct bt_thread *th, struct bt_fault_keep *k)
{
	struct keep_walk w = { k->tail, k->head - KEEP_BYTES, 0 };
	struct bt_ring_view view;

	if (k->head - k->tail <= KEEP_BYTES)
		return;
	keep_view(th, k, &view);
	if (bt_ring_walk(&view, keep_walk_one, &w) != 1)
		return;		/* as it stands: the whole ring */
	k->tail = w.pos;
	k->older += w.older;
}

/* Copy the history up to the fault out of the ring, now. */
static void keep_copy(struct bt_thread *th, struct bt_fault_keep *k)
{
	struct bt_ring_view view;

	th->fault_guard = 0;
	if (k->kept || !k->positions)
		return;
	keep_trim(th, k);
	keep_view(th, k, &view);
	bt_capture_release(&k->cap);
	if (bt_thread_ring_capture(th, &view, &k->cap) == 0) {
		k->cap.lost = k->lost + k->older;
		k->kept = 1;
	}
}

void bt_fault_guard(struct bt_thread *th, size_t len)
{
	if (th->fault && bt_ring_head(th->ring) + len > th->fault_guard)
		keep_copy(th, th->fault);
}

void bt_fault_mark(struct bt_target *t, struct bt_thread *th,
		   const struct bt_stop *fault)
{
	struct bt_fault_keep *k = th->fault;

	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return;	/* a fault not kept: the history as before */
		th->fault = k;
	}
	bt_capture_release(&k->cap);
	k->stop = *fault;
	k->count++;
	k->kept = 0;
	th->fault_guard = 0;
	k->positions = !t->ops->capture || t->ops->sync;
	if (!k->positions) {
		k->kept = bt_target_capture(t, th->tid, &k->cap) == 0;
		return;
	}
	if (t->ops->sync)
		t->ops->sync(t, th);
	bt_thread_settle(t, th);
	k->head = bt_ring_head(th->ring);
	k->tail = bt_ring_tail(th->ring);
	k->older = 0;
	k->lost = bt_ring_lost_records(th->ring);
	k->nbranch = th->nbranch;
	k->nlost = th->nlost;
	/* the first record that would overwrite the tail's copies it */
	th->fault_guard = k->tail + bt_ring_size(th->ring);
}

void bt_fault_free(struct bt_thread *th)
{
	if (!th->fault)
		return;
	bt_capture_release(&th->fault->cap);
	free(th->fault);
	th->fault = NULL;
	th->fault_guard = 0;
}

static int cap_dup(const struct bt_capture *from, struct bt_capture *to)
{
	*to = *from;
	to->data = malloc(from->size ? from->size : 1);
	if (!to->data)
		return bt_fail(bte_nomem, errno, "a fault's history");
	memcpy(to->data, from->data, from->size);
	return 0;
}

int bt_target_fault(struct bt_target *t, pid_t tid, struct bt_fault *f)
{
	struct bt_ring_view view;
	struct bt_fault_keep *k;
	struct bt_thread *th;
	int ret;

	if (!t || !f)
		return bt_fail(bte_invalid, 0, "bt_target_fault(NULL)");
	memset(f, 0, sizeof(*f));
	th = bt_thread_find_any(t, tid);
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	k = th->fault;
	if (!k)
		return 0;
	f->stop = k->stop;
	f->count = k->count;
	f->after = UINT64_MAX;
	if (k->positions) {
		if (t->ops->sync && th->state != BT_TH_GONE)
			t->ops->sync(t, th);
		bt_thread_settle(t, th);
		f->after = th->nbranch - k->nbranch;
		f->after_lost = th->nlost != k->nlost;
	}
	ret = 0;
	if (k->kept) {
		ret = cap_dup(&k->cap, &f->cap);
	} else if (k->positions) {
		keep_trim(th, k);
		keep_view(th, k, &view);
		ret = bt_thread_ring_capture(th, &view, &f->cap);
		f->cap.lost = k->lost + k->older;
	}
	if (ret < 0) {
		bt_fault_release(f);
		return ret;
	}
	return 1;
}
