// SPDX-License-Identifier: MIT
/*
 * The thread table: each traced thread, its registers and its ring, and
 * what /proc says of a thread (status lines, signal masks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "backend/backend.h"
#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

struct bt_thread *bt_thread_find(const struct bt_target *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tid == tid &&
		    t->threads[i]->state != BT_TH_GONE)
			return t->threads[i];
	return NULL;
}

/* Any thread with @tid, the exited ones too (their rings stay). */
struct bt_thread *bt_thread_find_any(const struct bt_target *t, pid_t tid)
{
	struct bt_thread *th = bt_thread_find(t, tid);
	size_t i;

	for (i = t->nthreads; !th && i > 0; i--)
		if (t->threads[i - 1]->tid == tid)
			th = t->threads[i - 1];
	return th;
}

struct bt_thread *bt_process_thread(const struct bt_target *t, pid_t tgid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->tgid == tgid &&
		    t->threads[i]->state != BT_TH_GONE)
			return t->threads[i];
	return NULL;
}

/* The process of thread @tid: ours, or a child we follow. */
static pid_t thread_tgid(const struct bt_target *t, pid_t tid)
{
	char buf[32];

	if (tid == t->pid || bt_proc_status(tid, 0, "Tgid", buf, sizeof(buf)) < 0)
		return t->pid;
	return atoi(buf);
}

int bt_thread_add(struct bt_target *t, pid_t tid, int state,
		  struct bt_thread **out)
{
	struct bt_thread *th, **grown;
	size_t size = t->opts.buffer_size;
	int ret;

	if (t->nthreads == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;

		grown = realloc(t->threads, cap * sizeof(*grown));
		if (!grown)
			return bt_fail(bte_nomem, errno, "thread table");
		t->threads = grown;
		t->cap = cap;
	}
	th = calloc(1, sizeof(*th));
	if (!th)
		return bt_fail(bte_nomem, errno, "thread %d", tid);
	th->tid = tid;
	th->state = state;
	th->tgid = thread_tgid(t, tid);
	if (t->ops->ring_scale)
		size *= t->ops->ring_scale;
	th->ring = bt_ring_alloc(size);
	if (!th->ring) {
		free(th);
		return bt_fail(bte_nomem, errno, "ring of %zu bytes", size);
	}
	t->threads[t->nthreads++] = th;
	if (t->ops->thread_start) {
		ret = t->ops->thread_start(t, th);
		if (ret < 0)
			return ret;
	}
	*out = th;
	return 0;
}

/*
 * A gone thread keeps its ring for the report (bt_target_capture()), as
 * long as the rings of the gone threads together hold no more than
 * GONE_KEEP_RINGS threads' rings, or GONE_KEEP_MIN bytes: a tree that runs
 * thousands of short processes (a shell loop, make, a test harness) would
 * otherwise keep every one's history.  Past that, the first traced goes
 * first: its capture is then empty, its records counted lost.  A thread
 * whose fault was kept (fault.c) keeps its ring.
 */
#define GONE_KEEP_RINGS	8
#define GONE_KEEP_MIN	((size_t)64 << 20)

static void gone_rings_trim(struct bt_target *t, struct bt_thread *th)
{
	size_t budget = GONE_KEEP_RINGS * bt_ring_size(th->ring);

	if (budget < GONE_KEEP_MIN)
		budget = GONE_KEEP_MIN;
	if (t->ngone == t->gone_cap) {	/* the dropped ones' room first */
		struct bt_thread **g = t->gone_q;
		size_t cap = t->gone_cap ? 2 * t->gone_cap : 64;

		if (t->gone_first)	/* (none yet: g is NULL) */
			memmove(g, g + t->gone_first,
				(t->ngone - t->gone_first) * sizeof(*g));
		t->ngone -= t->gone_first;
		t->gone_first = 0;
		if (t->ngone == t->gone_cap) {
			g = realloc(g, cap * sizeof(*g));
			if (!g)
				return;		/* kept, unbudgeted */
			t->gone_q = g;
			t->gone_cap = cap;
		}
	}
	t->gone_q[t->ngone++] = th;
	t->gone_held += bt_ring_footprint(th->ring);
	while (t->gone_held > budget && t->gone_first < t->ngone - 1) {
		struct bt_thread *o = t->gone_q[t->gone_first++];
		size_t had = bt_ring_footprint(o->ring);

		/* a kept fault's ring stays, outside the budget */
		if (!o->fault)
			bt_ring_drop(o->ring);
		t->gone_held -= had;
	}
}

/* The memory of @th's process went with its last thread, if that was it:
 * nothing of ours is in it any more, and its /proc/PID/mem is closed. */
static void gone_process(struct bt_target *t, struct bt_thread *th)
{
	size_t i;

	if (!th->tgid || th->tgid == t->pid || bt_process_thread(t, th->tgid))
		return;
	for (i = 0; i < t->nforks; i++)
		if (bt_aspace_pid(t->forks[i]) == th->tgid)
			bt_aspace_exec(t->forks[i]);
	bt_breaks_of_gone(t, th->tgid);
}

void bt_thread_gone(struct bt_target *t, struct bt_thread *th)
{
	if (th->state == BT_TH_GONE)
		return;
	th->state = BT_TH_GONE;
	th->sig = 0;
	if (t->ops->thread_end)
		t->ops->thread_end(t, th);
	bt_thread_settle(t, th);	/* what its backend held: now */
	gone_process(t, th);
	gone_rings_trim(t, th);
}

void bt_thread_free(struct bt_thread *th)
{
	if (!th)
		return;
	bt_fault_free(th);
	bt_thread_journal_free(th);
	bt_ring_free(th->ring);
	free(th->pin_mask);
	free(th);
}

/* Live threads of the process itself (not of followed children). */
size_t bt_target_main_alive(const struct bt_target *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE &&
		    t->threads[i]->tgid == t->pid)
			n++;
	return n;
}

size_t bt_target_alive(const struct bt_target *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE)
			n++;
	return n;
}

/* A live thread to read memory and write breakpoints through. */
struct bt_thread *bt_thread_any(const struct bt_target *t, int stopped)
{
	struct bt_thread *th = bt_thread_find(t, t->pid);
	size_t i;

	if (th && !th->exiting && (!stopped || th->state == BT_TH_STOPPED))
		return th;
	for (i = 0; i < t->nthreads; i++) {
		th = t->threads[i];
		if (th->state == BT_TH_GONE || th->exiting)
			continue;
		if (!stopped || th->state == BT_TH_STOPPED)
			return th;
	}
	/* An exiting thread still has the memory until it is reaped. */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			return t->threads[i];
	return NULL;
}

struct bt_thread *bt_thread_stopped(const struct bt_target *t)
{
	return bt_thread_any(t, 1);
}

int bt_thread_regs(struct bt_thread *th, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, th->tid, 0, regs) < 0)
		return bt_fail(errno == ESRCH ? bte_exited : bte_ptrace, errno,
			       "ptrace(GETREGS, %d)", th->tid);
	return 0;
}

int bt_thread_pc(struct bt_thread *th, uint64_t *pc)
{
	struct user_regs_struct regs;
	int ret = bt_thread_regs(th, &regs);

	if (ret == 0)
		*pc = regs.rip;
	return ret;
}

int bt_thread_record(struct bt_target *t, struct bt_thread *th,
		     uint64_t from, uint64_t to, uint32_t ninsn, int kind,
		     int flags)
{
	struct bt_rec_branch rec;

	memset(&rec, 0, sizeof(rec));
	rec.from = from;
	rec.to = to;
	rec.ninsn = ninsn;
	rec.kind = kind;
	rec.flags = flags;
	t->stats.branches++;
	return bt_thread_put(th, BT_REC_BRANCH, &rec.from,
			     sizeof(rec) - sizeof(rec.hdr));
}

int bt_thread_gap(struct bt_thread *th, uint64_t from, uint64_t to,
		  int reason)
{
	struct bt_rec_branch rec;

	memset(&rec, 0, sizeof(rec));
	rec.from = from;
	rec.to = to;
	rec.kind = BT_BR_GAP;
	rec.gap = (uint16_t)reason;
	return bt_thread_put(th, BT_REC_BRANCH, &rec.from,
			     sizeof(rec) - sizeof(rec.hdr));
}

/* The value of "@key:" in /proc/@pid[/task/@tid]/status into @buf. */
int bt_proc_status(pid_t pid, pid_t tid, const char *key, char *buf,
		   size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -bte_noent;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = bt_fopen(path, "re");
	if (!f)
		return bt_errno_to_bte(errno);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(buf, size, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		buf[strcspn(buf, "\n")] = '\0';
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

uint64_t bt_proc_sigmask(pid_t pid, pid_t tid, const char *key)
{
	char buf[64];

	if (bt_proc_status(pid, tid, key, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 16);
}

int bt_proc_shares_vm(pid_t a, pid_t b)
{
	return syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0) == 0;
}

pid_t bt_proc_parent(pid_t pid)
{
	char buf[32];

	if (bt_proc_status(pid, 0, "PPid", buf, sizeof(buf)) < 0)
		return 0;
	return (pid_t)atoi(buf);
}

pid_t bt_thread_tgid(const struct bt_target *t, const struct bt_thread *th)
{
	return th && th->tgid ? th->tgid : t->pid;
}

/* The thread to show for an interrupt: the main one if it is there. */
struct bt_thread *bt_target_main_thread(struct bt_target *t)
{
	struct bt_thread *th = bt_thread_find(t, t->pid);
	size_t i;

	if (th && th->state == BT_TH_STOPPED)
		return th;
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state == BT_TH_STOPPED)
			return t->threads[i];
	return th;
}

int bt_thread_ring_capture(struct bt_thread *th, struct bt_ring_view *view,
			   struct bt_capture *cap)
{
	int ret;

	cap->format = BT_FMT_SOFT;
	cap->tid = th->tid;
	bt_cpu_read(&cap->cpu);
	ret = bt_ring_copy(view, &cap->data, &cap->size);
	cap->lost = bt_ring_lost_records(th->ring);
	if (ret == -bte_corrupt || ret == -bte_torn) {
		cap->status = ret;	/* what could be read is there */
		return 0;
	}
	return ret < 0 ? ret : 0;
}

int bt_stopped_thread(struct bt_target *t, pid_t tid, struct bt_thread **out)
{
	struct bt_thread *th;

	if (!t)
		return bt_fail(bte_invalid, 0, "no target");
	th = bt_thread_find(t, tid);
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	if (th->state != BT_TH_STOPPED)
		return bt_fail(bte_invalid, 0, "thread %d is not stopped", tid);
	*out = th;
	return 0;
}
