/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_REC_PROCS_H
#define BTRACE_REC_PROCS_H

/*
 * The recorder backend's processes (lib/rec/backend.c): one recorder per
 * process of the traced tree, by tgid: the target's own, made at init,
 * and one for each followed fork child (a copy of its parent's,
 * bt_recorder_fork) or program a followed child exec'd (a fresh one).  A
 * vfork child has none until it execs: it runs in its parent's memory,
 * a guest of its parent's recorder (bt_recorder_guest_add), whose
 * translations it runs with rings of its own.
 *
 * The host callbacks the recorder calls (struct bt_recorder_host) are
 * given the target only: they answer for the process of the recorder the
 * backend last picked (rec_procs_pick), the one whose call is under way.
 * For the target's own process the fast mode's map of code answers; for
 * another process, its own map read from /proc/PID/maps here.
 */

#include <stdint.h>
#include <sys/types.h>

struct bt_recorder;
struct bt_recorder_host;
struct bt_target;
struct bt_thread;

struct rec_region {
	uint64_t start, end;
	int stable;		/* mapped from a file (or the vDSO), not writable */
	int traced;		/* its module is traced by the filters */
};

struct rec_proc {
	pid_t pid;
	struct bt_recorder *r;
	struct rec_region *region;	/* its executable mappings */
	size_t nregion;
	int maps_stale;
	int gone;		/* its threads are, not yet its guests */
	/*
	 * --from in this process (the target's own is the fast mode's):
	 * until a thread reaches it, all of its code runs natively, and
	 * the one int3 of ours in it is at its entry, or, not found yet,
	 * at the program's entry point (where the libraries it needs are
	 * mapped: --from is looked for again there).
	 */
	int disarmed;
	uint64_t from_addr;
	uint64_t from_hook;	/* or REC_FROM_LOOKED */
	/*
	 * --until in this process: found at until_addr (an int3 of its own
	 * of --until's breakpoint, tracer.h), or looked for again before the
	 * process next runs (until_look) if its executable mappings are more
	 * than the until_nexec it was last looked for in.
	 */
	uint64_t until_addr;
	int until_look;
	size_t until_nexec;
};

/* A fork child's from_hook where its parent's modules had no --from:
 * its own, the same, are not looked through again. */
#define REC_FROM_LOOKED	(~0ull)

/* A process that runs in another's memory (a vfork child), and that one. */
struct rec_guest {
	pid_t pid, host;
};

struct rec_procs {
	struct rec_proc *p;	/* p[0]: the target's own process */
	size_t n, cap;
	struct rec_guest *guest;
	size_t nguest, guestcap;
	pid_t cur;		/* the process of the call under way */
	const struct bt_recorder_host *host;	/* for recorders made */
	struct bt_target *t;	/* whose filters say what is traced */
};

/*
 * A set of @t's whose first process is @pid with recorder @r, made with
 * @host; NULL: no memory (@r freed).
 */
struct rec_procs *rec_procs_alloc(struct bt_target *t, pid_t pid,
				  struct bt_recorder *r,
				  const struct bt_recorder_host *host);
/* Frees every recorder in it too; NULL is fine. */
void rec_procs_free(struct rec_procs *s);

struct rec_proc *rec_procs_find(struct rec_procs *s, pid_t pid);
/* @pid gets recorder @r (freed on failure).  0 or -bte_nomem. */
int rec_procs_add(struct rec_procs *s, pid_t pid, struct bt_recorder *r);
/* @pid is gone: its recorder freed (never the first process's), once
 * no guest runs in its memory any more. */
void rec_procs_drop(struct rec_procs *s, pid_t pid);

/*
 * The process the host callbacks answer for from now on: @pid's, or for
 * a guest, the process whose memory it runs in.
 */
struct rec_proc *rec_procs_pick(struct rec_procs *s, pid_t pid);

/* The process whose recorder serves @pid: its own, or its host's. */
pid_t rec_procs_host(const struct rec_procs *s, pid_t pid);

/*
 * @pid runs in @parent's memory (a vfork child): a guest of the
 * recorder of @parent's memory.  0, or < 0 (then it has no recorder).
 */
int rec_procs_guest_add(struct rec_procs *s, pid_t pid, pid_t parent);
/* Is @pid a guest?  Ending it gives its slots back to its host. */
int rec_procs_is_guest(const struct rec_procs *s, pid_t pid);
void rec_procs_guest_end(struct rec_procs *s, pid_t pid);

/*
 * May code at @addr of @p run translated (file-backed, not writable, its
 * module traced by the filters)?  Its protection as BT_MAP_*
 * (bt_fast_code_traced's answer), 0 if not.
 */
int rec_proc_code_stable(struct rec_procs *s, struct rec_proc *p,
			 uint64_t addr);

/* How many executable mappings @p has (its map read again if stale). */
size_t rec_proc_nexec(struct rec_procs *s, struct rec_proc *p);

/* Is code at @addr of @p in a module the filters leave untraced (or
 * @p before --from, all of it)? */
int rec_proc_code_untraced(struct rec_procs *s, struct rec_proc *p,
			   uint64_t addr);

/*
 * backend_procs.c: before @th is resumed, what its event means for the
 * recorders: a fork (the child's copy), an exec (a fresh one).
 */
void rec_proc_events(struct bt_target *t, struct bt_thread *th);
/*
 * Followed fork child @child of @parent (its memory a copy, not shared):
 * a copy of the recorder of @parent's memory, made once, at the first of
 * the child's first stop and the parent's fork event the tracer reads
 * (both come after the fork, in either order; until then the parent
 * runs nothing).  1 if made now, 0 if not (done already, no recorder to
 * copy, no memory: the child is stepped).
 */
int rec_proc_fork_copy(struct bt_target *t, pid_t parent, pid_t child);
/* --until in followed program @p, looked for if it is to be (above). */
void rec_proc_until(struct bt_target *t, struct rec_proc *p);
/* @th ended: its process's recorder goes with its last thread. */
void rec_proc_thread_end(struct bt_target *t, struct bt_thread *th);

#endif /* BTRACE_REC_PROCS_H */
