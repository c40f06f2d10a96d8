// SPDX-License-Identifier: MIT
/*
 * The recorder backend's side of fork and exec (rec_procs.h): at a
 * parent's fork event its followed child gets a copy of its recorder; a
 * followed process that execs gets a fresh one (the target's own is
 * reset); a child process whose last thread is gone, none.
 */
#include <sys/ptrace.h>

#include "backend/soft/fast.h"
#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_procs.h"
#include "rec/recorder.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

int rec_proc_fork_copy(struct bt_target *t, pid_t parent, pid_t child)
{
	struct rec_procs *s = bt_fast_above(t);
	struct rec_proc *p, *n;
	struct bt_recorder *c;
	uint64_t from;
	int disarmed;

	p = s ? rec_procs_find(s, rec_procs_host(s, parent)) : NULL;
	if (!p || rec_procs_find(s, child))
		return 0;	/* no recorder to copy, or done already */
	/* --from where its parent stands: the same code at the same place */
	disarmed = p->pid == t->pid ? !bt_fast_armed(t) : p->disarmed;
	from = p->pid == t->pid ? bt_fast_from_addr(t) : p->from_addr;
	bt_recorder_forked(p->r);	/* the child maps the same pages */
	if (bt_recorder_fork(p->r, child,
			     bt_aspace_version(bt_target_aspace(t, child)),
			     &c) < 0)
		return 0;	/* it is stepped */
	if (rec_procs_add(s, child, c) < 0)
		return 0;
	n = rec_procs_find(s, child);
	n->disarmed = disarmed;
	/* its parent's own --until came with the memory (bt_breaks_fork()) */
	p = rec_procs_find(s, rec_procs_host(s, parent));
	if (p && p->pid != t->pid) {
		n->until_addr = p->until_addr;
		n->until_nexec = p->until_nexec;
	}
	/* the parent's own int3 there went with the fast mode's */
	if (disarmed && from && bt_recorder_reentry_add(c, from) == 0)
		n->from_addr = from;
	else if (disarmed)
		n->from_hook = REC_FROM_LOOKED;
	return 1;
}

void rec_proc_until(struct bt_target *t, struct rec_proc *p)
{
	struct rec_procs *s = bt_fast_above(t);
	uint64_t addr;
	size_t n;
	int num;

	if (!p->until_look || p->until_addr || !t->opts.until_sym || !s)
		return;
	p->until_look = 0;
	n = rec_proc_nexec(s, p);
	if (n <= p->until_nexec)
		return;		/* no module more than last time */
	p->until_nexec = n;
	addr = bt_fast_sym_addr(t, p->pid, t->opts.until_sym);
	if (!addr)
		return;
	num = bt_target_break_insert_in(t, p->pid, addr,
					bt_fast_until_number(t));
	if (num <= 0)
		return;
	bt_fast_until_number_set(t, num);
	p->until_addr = addr;
}

/* @th stopped at its fork event: the child's recorder, a copy, unless
 * the child's first stop came first and made it. */
static void on_fork(struct bt_target *t, struct bt_thread *th)
{
	unsigned long child = 0;

	if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &child) == 0 && child)
		rec_proc_fork_copy(t, bt_thread_tgid(t, th), (pid_t)child);
}

/* @th's process exec'd: a new program, a recorder that knows nothing. */
static void on_exec(struct bt_target *t, struct bt_thread *th,
		    struct rec_procs *s)
{
	pid_t pid = bt_thread_tgid(t, th);
	struct rec_proc *p;
	struct bt_recorder *r;

	/* a vfork child leaves its parent's memory */
	rec_procs_guest_end(s, pid);
	p = rec_procs_find(s, pid);
	if (p) {
		bt_recorder_reset(p->r);
		p->maps_stale = 1;
		/* the target's own --from is the fast mode's */
		p->disarmed = pid != t->pid && t->opts.from_sym;
		p->from_addr = p->from_hook = 0;
		p->until_addr = p->until_nexec = 0;
		p->until_look = pid != t->pid;
		return;
	}
	/* a vfork child (a guest until now), or one whose copy could not
	 * be made */
	if (bt_recorder_alloc(&r, t, s->host) < 0)
		return;
	bt_recorder_set_pid(r, pid);
	if (rec_procs_add(s, pid, r) == 0) {
		p = rec_procs_find(s, pid);
		p->disarmed = t->opts.from_sym != NULL;
		p->until_look = 1;
	}
}

/*
 * @th's vfork child left its memory (exec or exit): the int3s lifted
 * for it (record_thread_start) go back.
 */
static void on_vfork_done(struct bt_target *t, struct bt_thread *th)
{
	struct bt_aspace *as = bt_target_aspace(t, bt_thread_tgid(t, th));

	if (as && bt_aspace_lifted_all(as))
		bt_aspace_unlift_all(as);
}

void rec_proc_events(struct bt_target *t, struct bt_thread *th)
{
	struct rec_procs *s = bt_fast_above(t);

	/* the backend's procs_of() made s->p[0] the target's */
	if (!s || th->why != BT_TS_EVENT)
		return;
	if (th->event == PTRACE_EVENT_FORK && t->opts.follow_fork)
		on_fork(t, th);
	else if (th->event == PTRACE_EVENT_EXEC)
		on_exec(t, th, s);
	else if (th->event == PTRACE_EVENT_VFORK_DONE)
		on_vfork_done(t, th);
}

void rec_proc_thread_end(struct bt_target *t, struct bt_thread *th)
{
	struct rec_procs *s = bt_fast_above(t);
	pid_t pid = bt_thread_tgid(t, th);
	struct bt_thread *left;

	if (pid == t->pid || !s)
		return;
	left = bt_process_thread(t, pid);	/* @th is gone already */
	if (left && left != th)
		return;
	if (rec_procs_is_guest(s, pid))
		rec_procs_guest_end(s, pid);
	else
		rec_procs_drop(s, pid);
}
