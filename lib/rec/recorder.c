// SPDX-License-Identifier: MIT
/*
 * The recorder (recorder.h): its lifetime, its threads, and the memory it
 * maps into each address space.  rec_xlate.h has the code it generates,
 * rec_ring.h the ring, recorder_int.h the map of its files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/soft/soft_displace.h"
#include "rec/recorder_int.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

/*
 * Tables and rings go far below where the kernel puts the program's own
 * mappings (top down from below the stack), so that they do not move
 * them: a program sees its libraries where it would without btrace.
 * Zones lie 256 MiB or more below the code they serve, for the same reason.
 */
#define FAR_HINT	0x600000000000ull

/* ---- threads -------------------------------------------------------- */

struct rthread *rc_rt_find(const struct bt_recorder *r,
			   const struct bt_thread *th)
{
	size_t i;

	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].th == th && !r->rt[i].ended)
			return &r->rt[i];
	return NULL;
}

/* Is a thread other than @th in the translation (it may run there)? */
int rc_others_in(const struct bt_recorder *r, const struct bt_thread *th)
{
	size_t i;

	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].th != th && r->rt[i].in)
			return 1;
	return 0;
}

int rc_ours(const struct bt_recorder *r, const struct bt_thread *th)
{
	size_t i;

	if (!th->tgid || th->tgid == r->pid)
		return 1;
	for (i = 0; i < r->nguest; i++)
		if (r->guest[i] == th->tgid)
			return 1;
	return 0;
}

int bt_recorder_guest_add(struct bt_recorder *r, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->nguest; i++)
		if (r->guest[i] == pid)
			return 0;
	if (r->nguest == GUEST_MAX)
		return -bte_nomem;
	r->guest[r->nguest++] = pid;
	return 0;
}

void bt_recorder_guest_end(struct bt_recorder *r, pid_t pid)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nrt; i++)
		if (!r->rt[i].ended && r->rt[i].th->tgid == pid)
			bt_recorder_thread_end(r, r->rt[i].th);
	for (i = 0; i < r->nguest; i++)
		if (r->guest[i] == pid) {
			r->guest[i] = r->guest[--r->nguest];
			break;
		}
}

/*
 * No thread but the stopped one the tracer works for can run translated
 * code now: what it writes there needs no order among its stores.
 */
int rc_alone(const struct bt_recorder *r)
{
	return r->cur && !rc_others_in(r, r->cur);
}

struct rthread *rc_rt_get(struct bt_recorder *r, struct bt_thread *th)
{
	struct rthread *rt = rc_rt_find(r, th), *grown;
	size_t i;

	if (rt)
		return rt;
	for (i = 0; i < r->nrt; i++)	/* an ended thread's */
		if (r->rt[i].ended) {
			rt = &r->rt[i];
			goto fill;
		}
	if (r->nrt == r->rtcap) {
		size_t cap = r->rtcap ? 2 * r->rtcap : 16;

		grown = realloc(r->rt, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		r->rt = grown;
		r->rtcap = cap;
	}
	rt = &r->rt[r->nrt++];
fill:
	memset(rt, 0, sizeof(*rt));
	rt->th = th;
	rt->slot = -1;
	return rt;
}

int bt_recorder_in(const struct bt_recorder *r, const struct bt_thread *th)
{
	const struct rthread *rt = r ? rc_rt_find(r, th) : NULL;

	return rt && rt->in;
}

int bt_recorder_left_step(struct bt_recorder *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	int left = rt && rt->left_step;

	if (rt)
		rt->left_step = 0;
	return left;
}

uint64_t bt_recorder_blocks(const struct bt_recorder *r)
{
	return r ? r->translated : 0;
}

/* ---- setting up --------------------------------------------------------- */

/* Map the tables and reserve the slots, through @th. */
int rc_setup(struct bt_recorder *r, struct bt_thread *th)
{
	int64_t at;
	int ret;

	if (r->ready)
		return 0;
	if (r->broken)
		return -bte_nomem;
	ret = rc_mem_open(r);
	if (ret < 0)
		return ret;
	if (!r->syscall_insn)
		r->syscall_insn = bt_find_syscall_insn_pid(r->pid,
			bt_aspace_fd(bt_target_aspace(r->t, r->pid)));
	if (!r->syscall_insn)
		goto broken;
	/* read-only to the program: the tracer writes them (rec_guard.c) */
	at = rc_syscall(r, th, SYS_mmap, FAR_HINT,
		      2 * RX_TABLE_BYTES + RC_NAMES_BYTES, PROT_READ,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      (uint64_t)-1);
	if (at == -bte_busy)
		return -bte_busy;
	if (at < 0)
		goto broken;
	r->tables = (uint64_t)at;

	if (rc_names_write(r) < 0)
		goto broken;
	rc_name(r, th, r->tables, 2 * RX_TABLE_BYTES + RC_NAMES_BYTES,
		RC_NAME_TABLES);
	rc_mirror_map(r, th);
	r->slot_size = 4096 + r->t->opts.buffer_size + TCB_SIZE;
	at = rc_slots_map(r, th, FAR_HINT + (4u << 20),
			  SLOT_MAX * r->slot_size);
	if (at < 0)
		goto broken;
	r->slots = (uint64_t)at;
	ret = rc_tables_alloc(r);
	if (ret < 0)
		return ret;
	memset(r->slot_used, 0, sizeof(r->slot_used));
	memset(r->slot_dirty, 0, sizeof(r->slot_dirty));
	r->ready = 1;
	return 0;
broken:
	r->broken = 1;
	return bt_fail(bte_nomem, 0, "no memory for the recorder in %d",
		       (int)r->pid);
}

void bt_recorder_thread_end(struct bt_recorder *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;

	if (!rt)
		return;
	if (rt->in) {
		rc_drain(r, rt, 0);
		rt->in = 0;
	}
	bt_thread_settle(r->t, th);	/* while rt says where its walk stands */
	if (rt->slot >= 0)
		r->slot_used[rt->slot] = 0;
	/*
	 * The entry stays where it is, ended (rc_rt_get() gives it to the
	 * next thread): a thread can end inside a system call the recorder
	 * runs in it (bt_thread_step reaps it there), and the caller still
	 * holds @rt.  Moving the last entry into it made that caller go on
	 * with another thread's ring and registers.
	 */
	rt->ended = 1;
	rt->in = 0;
	rt->slot = -1;
}

/* ---- lifetime ----------------------------------------------------------- */

/* The zones' points, pending code and marks (not the zones' memory in
 * the process). */
static void zones_free(struct bt_recorder *r)
{
	size_t i;

	for (i = 0; i < r->nzone; i++) {
		bt_big_free(r->zone[i].pts,
			    r->zone[i].ptcap * sizeof(*r->zone[i].pts));
		free(r->zone[i].pend);
		free(r->zone[i].mark_of);
	}
}

void bt_recorder_reset(struct bt_recorder *r)
{
	size_t i;

	if (!r)
		return;
	rc_blocks_clear(r);
	rc_profile_reset(r);
	rc_index_clear(&r->links);
	rc_index_clear(&r->waiting);
	rc_native_reset(r);
	rc_wp_free(r);
	memset(r->pages, 0, CODE_PAGES * sizeof(*r->pages));
	zones_free(r);
	r->nzone = 0;
	r->ready = 0;
	r->broken = 0;
	r->syscall_insn = 0;
	rc_mirror_drop(r);	/* a new address space: its own */
	r->mirror_off = 0;
	r->nguest = 0;		/* they run in the old memory: stepped */
	for (i = 0; i < r->nrt; i++) {
		r->rt[i].in = 0;
		r->rt[i].slot = -1;
		r->rt[i].wpc = 0;
		r->rt[i].whi = ~0ull;
	}
}

int bt_recorder_alloc(struct bt_recorder **out, struct bt_target *t,
		      const struct bt_recorder_host *host)
{
	struct bt_recorder *r = calloc(1, sizeof(*r));
	const char *stall = getenv("BTRACE_TEST_TABLE_STALL_US");
	const char *hot = getenv("BTRACE_HOT");
	const char *icbit = getenv("BTRACE_ICBIT");
	int ret;

	*out = NULL;
	if (!r)
		return bt_fail(bte_nomem, ENOMEM, "recorder");
	r->t = t;
	r->pid = t->pid;
	r->host = *host;
	r->nbucket = 4096;
	r->links.shift = r->waiting.shift = 3;	/* addresses; by page: pages */
	r->tab_unchecked = 1;
	r->stall_us = stall ? (unsigned)atoi(stall) : 0;
	r->hot_off = hot && !strcmp(hot, "0");
	r->icbit_off = icbit && !strcmp(icbit, "0");
	r->hot_test = getenv("BTRACE_TEST_HOT") != NULL;
	r->hot_need = rc_hot_samples();
	rc_profile_init(r);
	r->bucket = bt_big_alloc(r->nbucket * sizeof(*r->bucket));
	r->emitbuf = malloc(ZONE_ROOM);
	r->pages = calloc(CODE_PAGES, sizeof(*r->pages));
	if (!r->bucket || !r->emitbuf || !r->pages) {
		bt_recorder_free(r);
		return bt_fail(bte_nomem, ENOMEM, "recorder");
	}
	ret = rx_alloc(&r->x);
	if (ret < 0) {
		bt_recorder_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void bt_recorder_free(struct bt_recorder *r)
{
	if (!r)
		return;
	if (r->bucket)
		rc_blocks_clear(r);
	rc_grave_clear(r);
	rc_rb_slabs_free(r);
	bt_big_free(r->bucket, r->nbucket * sizeof(*r->bucket));
	rc_index_free(&r->by_page);
	rc_index_free(&r->links);
	rc_index_free(&r->waiting);
	zones_free(r);
	rc_wp_free(r);
	rc_mirror_drop(r);
	free(r->tab_orig[0]);
	free(r->tab_orig[1]);
	free(r->rt);
	rec_walker_release(&r->replay_w);
	rec_walker_release(&r->hot_w);
	free(r->hotq);
	free(r->markq);
	free(r->hotbuf);
	if (getenv("BTRACE_TEST_HOT_LOG"))	/* tests/e2e/rec_hot.sh */
		fprintf(stderr, "btrace: test: %" PRIu64
			" blocks translated again (hot), %" PRIu64
			" marks dropped, %" PRIu64 " jumps threaded (%" PRIu64
			" into a conditional's exit, %" PRIu64 " exits there)\n",
			r->hot_made, r->marks_dropped, r->threaded,
			r->threaded_lead, r->lead_exits);
	rc_profile_free(r);
	free(r->emitbuf);
	free(r->emitpts);
	free(r->pages);
	rc_native_free(r);
	rx_free(r->x);
	free(r);
}
