// SPDX-License-Identifier: MIT
/*
 * A traced process: creating and freeing one, and what the front ends
 * may ask of it.  Process control is spread over lib/tracer/ (tracer_int.h
 * lists the files and what they share).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

int bt_target_alloc(const struct bt_target_opts *o, struct bt_target **out)
{
	struct bt_target *t;
	int ret;

	if (o && o->size && o->size < offsetof(struct bt_target_opts, only))
		return bt_fail(bte_invalid, 0, "bt_target_opts too small");
	t = calloc(1, sizeof(*t));
	if (!t)
		return bt_fail(bte_nomem, errno, "bt_target");
	if (o)
		memcpy(&t->opts, o, o->size && o->size < sizeof(*o) ?
					    o->size : sizeof(*o));
	t->opts.size = sizeof(t->opts);
	if (!t->opts.buffer_size)
		t->opts.buffer_size = BT_DEFAULT_BUFFER_SIZE;
	if (t->opts.buffer_size < 64 ||
	    (t->opts.buffer_size & (t->opts.buffer_size - 1))) {
		ret = bt_fail(bte_invalid, 0,
			      "buffer size %zu is not a power of two",
			      t->opts.buffer_size);
		free(t);
		return ret;
	}
	t->tracer = syscall(SYS_gettid);
	ret = bt_backend_select(&t->opts, &t->ops);
	if (ret == 0)
		ret = bt_disasm_alloc(&t->dis);
	if (ret == 0 && t->ops->init)
		ret = t->ops->init(t);
	if (ret < 0) {
		bt_disasm_free(t->dis);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void bt_target_release(struct bt_target *t)
{
	size_t i;

	bt_pin_release(t, 1);	/* the tracer's own mask back */
	/* all gone before any is freed: a thread going trims the rings of
	 * those gone before it (thread.c), which must still be there */
	for (i = 0; i < t->nthreads; i++)
		bt_thread_gone(t, t->threads[i]);
	for (i = 0; i < t->nthreads; i++)
		bt_thread_free(t->threads[i]);
	if (t->ops->fini)
		t->ops->fini(t);
	bt_disasm_free(t->dis);
	for (i = 0; i < t->nforks; i++)
		bt_aspace_free(t->forks[i]);
	free(t->forks);
	bt_aspace_free(t->as);
	free(t->threads);
	free(t->gone_q);
	free(t->breaks);
	bt_ns_free(t->ns);
	free(t);
}

void bt_target_free(struct bt_target *t)
{
	if (!t)
		return;
	if (t->traced && !t->gone) {
		if (t->launched)
			bt_target_kill(t);
		else
			bt_target_detach(t);
	} else if (t->launched && !t->gone) {
		int ws;

		/* Let go but not yet reaped: no zombie left. */
		bt_target_finish_reap(t, &ws);
	}
	bt_target_release(t);
}

int bt_target_capture(struct bt_target *t, pid_t tid, struct bt_capture *cap)
{
	struct bt_ring_view view;
	struct bt_thread *th;

	if (!t || !cap)
		return bt_fail(bte_invalid, 0, "bt_target_capture(NULL)");
	memset(cap, 0, sizeof(*cap));
	th = bt_thread_find_any(t, tid);
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	/* one running (non-stop) has its ring as of its last stop */
	if (t->ops->capture && (th->state != BT_TH_RUNNING || !t->ops->sync))
		return t->ops->capture(t, th, cap);
	bt_thread_settle(t, th);
	bt_ring_view_init(&view, th->ring);
	return bt_thread_ring_capture(th, &view, cap);
}

static size_t threads_list(const struct bt_target *t, pid_t *tids,
			   size_t max, int ended)
{
	size_t i, n = 0;

	if (!t)
		return 0;
	for (i = 0; i < t->nthreads; i++) {
		const struct bt_thread *th = t->threads[i];

		if (th->tid <= 0 || th->parked ||
		    (th->state == BT_TH_GONE && !ended))
			continue;
		if (tids && n < max)
			tids[n] = th->tid;
		n++;
	}
	return n;
}

size_t bt_target_threads(const struct bt_target *t, pid_t *tids, size_t max)
{
	return threads_list(t, tids, max, 0);
}

size_t bt_target_threads_all(const struct bt_target *t, pid_t *tids,
			     size_t max)
{
	return threads_list(t, tids, max, 1);
}

pid_t bt_target_pid(const struct bt_target *t)
{
	return t ? t->pid : 0;
}

pid_t bt_target_thread_pid(const struct bt_target *t, pid_t tid)
{
	const struct bt_thread *th = t ? bt_thread_find_any(t, tid) : NULL;

	return th ? bt_thread_tgid(t, th) : 0;
}

int bt_target_backend(const struct bt_target *t)
{
	return t ? t->ops->id : BT_BACKEND_AUTO;
}

const char *bt_target_backend_name(const struct bt_target *t)
{
	return t ? t->ops->name : "?";
}

void bt_target_stats(struct bt_target *t, struct bt_stats *stats)
{
	size_t i;

	if (!stats)
		return;
	memset(stats, 0, sizeof(*stats));
	if (!t)
		return;
	/* what histories hold back is counted once decoded: now */
	for (i = 0; i < t->nthreads; i++)
		bt_thread_settle(t, t->threads[i]);
	*stats = t->stats;
}

size_t bt_target_buffer_size(const struct bt_target *t)
{
	return t ? t->opts.buffer_size : 0;
}

int bt_target_pc(struct bt_target *t, pid_t tid, uint64_t *pc)
{
	struct bt_thread *th;
	int ret;

	if (!t || !pc)
		return bt_fail(bte_invalid, 0, "bt_target_pc(NULL)");
	ret = bt_stopped_thread(t, tid, &th);
	return ret < 0 ? ret : bt_thread_pc(th, pc);
}
