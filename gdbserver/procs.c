// SPDX-License-Identifier: MIT
/*
 * Several processes in one extended-remote connection (GDB's inferiors,
 * with multiprocess+): one is the process served (the server's fields,
 * as with one process), the others wait in s->procs with their own stop,
 * threads' branch trace and general thread.  A packet that names a
 * process ("Hg p<pid>.<tid>", vCont's "p<pid>.-1") makes it the one
 * served, as GDB expects: it names the process of its next packets with
 * Hg, and the thread of a stop reply is its general thread from then on.
 * A packet that asks about a process (T, vKill, D, qAttached) is answered
 * by it and leaves the one served as it was.
 *
 * In all-stop one process runs at a time (GDB's default, schedule-multiple
 * off): the others are stopped, so no wait of the running one sees theirs.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

static void save(const struct gs_server *s, struct gs_pstate *p)
{
	p->ops = s->ops;
	p->ctx = s->ctx;
	p->last = s->last;
	p->gone = s->gone;
	p->wstatus = s->wstatus;
	p->avx = s->avx;
	p->gthread = s->gthread;
	p->cthread = s->cthread;
	p->bt = s->bt;
	p->nbt = s->nbt;
}

static void load(struct gs_server *s, const struct gs_pstate *p)
{
	s->ops = p->ops;
	s->ctx = p->ctx;
	s->last = p->last;
	s->gone = p->gone;
	s->wstatus = p->wstatus;
	s->avx = p->avx;
	s->gthread = p->gthread;
	s->cthread = p->cthread;
	s->bt = p->bt;
	s->nbt = p->nbt;
	s->xfer_key[0] = '\0';
}

/* The one served and waiting process @i trade places. */
static void swap(struct gs_server *s, size_t i)
{
	struct gs_pstate cur;

	save(s, &cur);
	load(s, &s->procs[i]);
	s->procs[i] = cur;
}

static pid_t pstate_pid(const struct gs_pstate *p)
{
	return p->ops->pid ? p->ops->pid(p->ctx) : 0;
}

int gs_proc_switch(struct gs_server *s, pid_t pid)
{
	size_t i;

	if (pid <= 0 || (s->ops != &gs_no_proc_ops && gs_proc_pid(s) == pid))
		return 0;
	for (i = 0; i < s->nprocs; i++) {
		if (pstate_pid(&s->procs[i]) != pid)
			continue;
		if (s->ops == &gs_no_proc_ops) {
			/* none served: the waiting one takes its place */
			load(s, &s->procs[i]);
			s->procs[i] = s->procs[--s->nprocs];
		} else {
			swap(s, i);
		}
		return 0;
	}
	return -1;
}

int gs_proc_park(struct gs_server *s)
{
	struct gs_pstate *grown;

	if (s->ops == &gs_no_proc_ops)
		return 0;
	grown = realloc(s->procs, (s->nprocs + 1) * sizeof(*grown));
	if (!grown)
		return -bte_nomem;
	s->procs = grown;
	save(s, &s->procs[s->nprocs++]);
	s->ops = &gs_no_proc_ops;
	s->ctx = NULL;
	s->gone = 1;
	s->bt = NULL;
	s->nbt = 0;
	return 0;
}

void gs_proc_next(struct gs_server *s)
{
	if (s->ops != &gs_no_proc_ops || !s->nprocs)
		return;
	load(s, &s->procs[--s->nprocs]);
}

size_t gs_proc_count(const struct gs_server *s)
{
	return s->nprocs + (s->ops != &gs_no_proc_ops);
}

void gs_procs_each(struct gs_server *s,
		   void (*fn)(struct gs_server *s, void *arg), void *arg)
{
	size_t i;

	if (s->ops != &gs_no_proc_ops)
		fn(s, arg);
	for (i = 0; i < s->nprocs; i++) {
		if (s->ops == &gs_no_proc_ops) {
			struct gs_pstate none;

			save(s, &none);
			load(s, &s->procs[i]);
			fn(s, arg);
			save(s, &s->procs[i]);
			load(s, &none);
			continue;
		}
		swap(s, i);
		fn(s, arg);
		swap(s, i);
	}
}

struct others {
	pid_t served;
	int pause;
};

static void pause_one(struct gs_server *s, void *arg)
{
	struct others *o = arg;

	if (gs_proc_pid(s) == o->served || !gs_alive(s))
		return;
	if (o->pause && s->ops->ns_pause)
		s->ops->ns_pause(s->ctx);
	else if (!o->pause && s->ops->ns_unpause)
		s->ops->ns_unpause(s->ctx);
}

/*
 * Non-stop: the tracer's waits for all of a process (stopping every
 * thread at a detach, reaping at the end) take any child's report, so
 * the other processes' threads are paused around them.
 */
void gs_procs_pause(struct gs_server *s, int pause)
{
	struct others o = { gs_proc_pid(s), pause };

	if (s->nonstop && s->nprocs)
		gs_procs_each(s, pause_one, &o);
}

/* Every waiting process is handed to the spawner (the server's end). */
void gs_procs_release(struct gs_server *s)
{
	gs_proc_next(s);
	while (s->ops != &gs_no_proc_ops && s->spawner)
		gs_proc_drop(s);
	free(s->procs);
	s->procs = NULL;
}
