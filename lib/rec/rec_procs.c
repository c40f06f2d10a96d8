// SPDX-License-Identifier: MIT
/*
 * The recorder backend's processes, by tgid (rec_procs.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "btrace/maps.h"
#include "backend/soft/fast.h"
#include "internal.h"
#include "rec/rec_procs.h"
#include "rec/recorder.h"

struct rec_procs *rec_procs_alloc(struct bt_target *t, pid_t pid,
				  struct bt_recorder *r,
				  const struct bt_recorder_host *host)
{
	struct rec_procs *s = calloc(1, sizeof(*s));

	if (!s) {
		bt_recorder_free(r);
		return NULL;
	}
	if (rec_procs_add(s, pid, r) < 0) {
		free(s);
		return NULL;
	}
	s->cur = pid;
	s->host = host;
	s->t = t;
	return s;
}

void rec_procs_free(struct rec_procs *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		bt_recorder_free(s->p[i].r);
		free(s->p[i].region);
	}
	free(s->p);
	free(s->guest);
	free(s);
}

struct rec_proc *rec_procs_find(struct rec_procs *s, pid_t pid)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (s->p[i].pid == pid)
			return &s->p[i];
	return NULL;
}

int rec_procs_add(struct rec_procs *s, pid_t pid, struct bt_recorder *r)
{
	struct rec_proc *p;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;

		p = realloc(s->p, cap * sizeof(*p));
		if (!p) {
			bt_recorder_free(r);
			return bt_fail(bte_nomem, ENOMEM, "recorder of %d",
				       (int)pid);
		}
		s->p = p;
		s->cap = cap;
	}
	p = &s->p[s->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->r = r;
	p->maps_stale = 1;
	return 0;
}

static struct rec_guest *guest_find(const struct rec_procs *s, pid_t pid);

/* Does a guest still run in @pid's memory? */
static int hosting(const struct rec_procs *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->nguest; i++)
		if (s->guest[i].host == pid)
			return 1;
	return 0;
}

void rec_procs_drop(struct rec_procs *s, pid_t pid)
{
	struct rec_proc *p = rec_procs_find(s, pid);

	if (!p || p == &s->p[0])
		return;
	if (hosting(s, pid)) {
		p->gone = 1;	/* dropped when its last guest ends */
		return;
	}
	bt_recorder_free(p->r);
	free(p->region);
	*p = s->p[--s->n];
}

struct rec_proc *rec_procs_pick(struct rec_procs *s, pid_t pid)
{
	struct rec_proc *p;

	pid = rec_procs_host(s, pid);
	p = rec_procs_find(s, pid);
	if (p)
		s->cur = pid;
	return p;
}

/* ---- vfork children: guests in their parent's memory ------------------ */

static struct rec_guest *guest_find(const struct rec_procs *s, pid_t pid)
{
	size_t i;

	for (i = 0; s && i < s->nguest; i++)
		if (s->guest[i].pid == pid)
			return &s->guest[i];
	return NULL;
}

pid_t rec_procs_host(const struct rec_procs *s, pid_t pid)
{
	const struct rec_guest *g = guest_find(s, pid);

	return g ? g->host : pid;
}

int rec_procs_is_guest(const struct rec_procs *s, pid_t pid)
{
	return guest_find(s, pid) != NULL;
}

int rec_procs_guest_add(struct rec_procs *s, pid_t pid, pid_t parent)
{
	pid_t host = rec_procs_host(s, parent);
	struct rec_proc *p = rec_procs_find(s, host);
	struct rec_guest *g;
	int ret;

	if (!p || guest_find(s, pid))
		return p ? 0 : -bte_nomem;
	if (s->nguest == s->guestcap) {
		size_t cap = s->guestcap ? 2 * s->guestcap : 4;

		g = realloc(s->guest, cap * sizeof(*g));
		if (!g)
			return bt_fail(bte_nomem, ENOMEM, "guest %d", (int)pid);
		s->guest = g;
		s->guestcap = cap;
	}
	ret = bt_recorder_guest_add(p->r, pid);
	if (ret < 0)
		return ret;
	s->guest[s->nguest++] = (struct rec_guest){ pid, host };
	return 0;
}

void rec_procs_guest_end(struct rec_procs *s, pid_t pid)
{
	struct rec_guest *g = guest_find(s, pid);
	struct rec_proc *p;

	if (!g)
		return;
	p = rec_procs_find(s, g->host);
	if (p)
		bt_recorder_guest_end(p->r, pid);
	*g = s->guest[--s->nguest];
	if (p && p->gone)
		rec_procs_drop(s, p->pid);
}

/* ---- a process's map of code ------------------------------------------- */

static int regions_load(struct rec_procs *s, struct rec_proc *p)
{
	struct bt_maps maps;
	size_t i, n = 0;
	int ret = bt_maps_read(p->pid, &maps);

	if (ret < 0)
		return ret;
	free(p->region);
	p->nregion = 0;
	p->region = calloc(maps.count ? maps.count : 1, sizeof(*p->region));
	if (!p->region) {
		bt_maps_release(&maps);
		return bt_fail(bte_nomem, ENOMEM, "regions");
	}
	for (i = 0; i < maps.count; i++) {
		const struct bt_map *m = &maps.map[i];
		int file = m->path && (m->path[0] == '/' ||
				       !strcmp(m->path, "[vdso]"));

		if (!(m->prot & BT_MAP_X))
			continue;
		p->region[n].start = m->start;
		p->region[n].end = m->end;
		p->region[n].stable = file && !(m->prot & BT_MAP_W);
		p->region[n].traced = bt_fast_module_traced(s->t, m->path);
		n++;
	}
	p->nregion = n;
	p->maps_stale = 0;
	bt_maps_release(&maps);
	return 0;
}

/* The region of @p's code at @addr, the maps read again if need be. */
static const struct rec_region *region_of(struct rec_procs *s,
					  struct rec_proc *p, uint64_t addr)
{
	size_t i;
	int pass;

	for (pass = 0; p && pass < 2; pass++) {
		if ((p->maps_stale || pass) && regions_load(s, p) < 0)
			return NULL;
		for (i = 0; i < p->nregion; i++)
			if (addr >= p->region[i].start && addr < p->region[i].end)
				return &p->region[i];
	}
	return NULL;
}

size_t rec_proc_nexec(struct rec_procs *s, struct rec_proc *p)
{
	if (p->maps_stale && regions_load(s, p) < 0)
		return 0;
	return p->nregion;
}

int rec_proc_code_stable(struct rec_procs *s, struct rec_proc *p,
			 uint64_t addr)
{
	const struct rec_region *g = p && !p->disarmed ?
				     region_of(s, p, addr) : NULL;

	return g && g->stable && g->traced ? BT_MAP_R | BT_MAP_X : 0;
}

int rec_proc_code_untraced(struct rec_procs *s, struct rec_proc *p,
			   uint64_t addr)
{
	const struct rec_region *g;

	if (p && p->disarmed)
		return 1;
	g = region_of(s, p, addr);
	return g && !g->traced;
}
