// SPDX-License-Identifier: MIT
/*
 * Room for the recorder in the process, and giving it back.
 *
 * A zone goes where /proc/PID/maps shows room for it within reach of the
 * code it serves (rec_room_pick(): the highest free range at least 256
 * MiB below the code, else the lowest at least 512 MiB above it), mapped
 * there with MAP_FIXED_NOREPLACE so that a mapping the program made
 * meanwhile is never replaced.
 *
 * At detach every thread has left its translation (each stands at an
 * original pc with its own registers and gs base, its signal frames and
 * return addresses the program's own): nothing can run or read the
 * zones, the tables or the ring slots again, and they are unmapped
 * through a thread stopped where a system call of ours can run.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define ROOM_BELOW	(256ull << 20)	/* a zone's end lies this far below */
#define ROOM_ABOVE	(512ull << 20)	/* or its start this far above */
#define ROOM_ALIGN	(1ull << 20)
#define ROOM_PAD	(1ull << 20)	/* left free under the next mapping */
#define ROOM_LOW	(16ull << 20)	/* nothing below */
#define ROOM_HIGH	0x7ffffffff000ull
#define ROOM_TRIES	4

/* [lo, lo + size) within a rel32's reach of @near, both ends. */
static int in_reach(uint64_t near, uint64_t lo, uint64_t size)
{
	int64_t d0 = (int64_t)(lo - near), d1 = (int64_t)(lo + size - near);

	return d0 > -NEAR + (int64_t)size && d1 < NEAR - (int64_t)size;
}

uint64_t rec_room_pick(const uint64_t (*used)[2], size_t n, uint64_t near,
		       uint64_t size)
{
	uint64_t at, lo, hi;
	size_t i;

	/* Below: free ranges from the highest down. */
	for (i = n + 1; i-- > 0;) {
		lo = i ? used[i - 1][1] : ROOM_LOW;
		hi = i < n ? used[i][0] : ROOM_HIGH;
		if (lo < ROOM_LOW)
			lo = ROOM_LOW;
		if (hi < lo + size + ROOM_PAD || near < ROOM_BELOW + size)
			continue;
		at = hi - ROOM_PAD - size;
		if (at > near - ROOM_BELOW - size)
			at = near - ROOM_BELOW - size;
		at &= ~(ROOM_ALIGN - 1);
		if (at >= lo && in_reach(near, at, size))
			return at;
		if (hi <= near && !in_reach(near, hi, 0))
			break;	/* all further down is out of reach */
	}
	/* Above: from the lowest up. */
	for (i = 0; i <= n; i++) {
		lo = i ? used[i - 1][1] : ROOM_LOW;
		hi = i < n ? used[i][0] : ROOM_HIGH;
		at = near + ROOM_ABOVE > lo ? near + ROOM_ABOVE : lo;
		at = (at + ROOM_ALIGN - 1) & ~(ROOM_ALIGN - 1);
		if (!in_reach(near, at, size))
			break;
		if (at + size + ROOM_PAD <= hi && at >= lo)
			return at;
	}
	return 0;
}

/* The ranges /proc/PID/maps shows in use, sorted; *@n of them. */
static uint64_t (*maps_used(pid_t pid, size_t *n))[2]
{
	uint64_t (*used)[2] = NULL, (*grown)[2], lo, hi;
	size_t cap = 0;
	char path[64], line[512];
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = bt_fopen(path, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) != 2)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			grown = realloc(used, cap * sizeof(*used));
			if (!grown) {
				free(used);
				used = NULL;
				break;
			}
			used = grown;
		}
		used[*n][0] = lo;
		used[(*n)++][1] = hi;
	}
	fclose(f);
	if (!used)
		*n = 0;
	return used;
}

int64_t rc_room_map(struct bt_recorder *r, struct bt_thread *th,
		    uint64_t near, uint64_t size, int prot)
{
	int64_t at = -bte_nomem;
	int i;

	for (i = 0; i < ROOM_TRIES; i++) {
		size_t n;
		uint64_t (*used)[2] = maps_used(r->pid, &n);
		uint64_t want = used ? rec_room_pick(used, n, near, size) : 0;

		free(used);
		if (!want)
			return -bte_nomem;
		at = rc_syscall(r, th, SYS_mmap, want, size, (uint64_t)prot,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				MAP_FIXED_NOREPLACE, (uint64_t)-1);
		if (at == (int64_t)want)
			return at;
		if (at >= 0) {	/* a kernel that took it as a hint */
			rc_syscall(r, th, SYS_munmap, (uint64_t)at, size, 0, 0,
				   0);
			return -bte_nomem;
		}
		if (at != -EEXIST)	/* else taken meanwhile: look again */
			return at;
	}
	return -bte_nomem;
}

/* A thread of @r's process, out of its translation. */
static int own_out(struct bt_recorder *r, struct bt_thread *th)
{
	return (!th->tgid || th->tgid == r->pid) && !bt_recorder_in(r, th);
}

/*
 * A thread of the process stopped where a system call of ours can run
 * and leave no trace: out of its translation, at a trap, an interrupt or
 * a signal stop whose signal is not the program's (a breakpoint of ours),
 * never in the middle of an event (exec, clone) of its own.  Failing
 * those (letting go is when btrace stops every thread: a thread that
 * stopped for its own step before the stop-all's PTRACE_INTERRUPT came),
 * one whose interrupt is still to stop it (the step of the first system
 * call takes that stop before anything runs, bt_thread_step(), and
 * nothing waits for it any more), else one stopped to be given a signal
 * of the program's (not a SIGTRAP, which may be a breakpoint's): the
 * calls run without it, and the detach gives it (letgo.c); else one at a
 * clone or fork event of its own with its interrupt outstanding, once the
 * call returned (bt_thread_event_out()).  Before, the zones, tables and
 * rings stayed mapped in a process of many threads at most detaches
 * (rec_threads: every one of twenty).
 */
static struct bt_thread *release_thread(struct bt_recorder *r)
{
	struct bt_thread *busy = NULL, *held = NULL;
	size_t i;

	for (i = 0; i < r->t->nthreads; i++) {
		struct bt_thread *th = r->t->threads[i];

		if (th->state != BT_TH_STOPPED || th->exiting || !own_out(r, th))
			continue;
		if (th->why == BT_TS_SIGNAL && th->sig) {
			if (th->sig != SIGTRAP && !held && !th->interrupting)
				held = th;
			continue;
		}
		if (th->why != BT_TS_TRAP && th->why != BT_TS_INTERRUPT &&
		    th->why != BT_TS_SIGNAL)
			continue;
		if (!th->interrupting)
			return th;
		if (!busy)
			busy = th;
	}
	if (busy)
		busy->interrupting = 0;
	if (busy || held)
		return busy ? busy : held;
	for (i = 0; i < r->t->nthreads; i++) {
		struct bt_thread *th = r->t->threads[i];

		if (own_out(r, th) && bt_thread_event_out(r->t, th) == 0)
			return th;
	}
	return NULL;
}

static int unmap(struct bt_recorder *r, struct bt_thread *th, uint64_t at,
		 uint64_t len)
{
	uint64_t args[6] = { at, len, 0, 0, 0, 0 };
	int64_t res = -1;

	if (bt_thread_syscall(r->t, th, r->syscall_insn, SYS_munmap, args,
			      &res) < 0 || res != 0)
		return -1;
	return 0;
}

int bt_recorder_release(struct bt_recorder *r)
{
	struct bt_thread *th;
	size_t i;
	int ret = 0;

	if (!r || !r->ready)
		return 0;
	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].in)
			return -bte_busy;	/* never: the host let all go */
	rc_profile_harvest(r);	/* before the marks go */
	th = release_thread(r);
	if (!th || !r->syscall_insn) {
		ret = -bte_busy;	/* they stay, never run again */
	} else {
		for (i = 0; i < r->nzone; i++)
			ret |= unmap(r, th, r->zone[i].base,
				     ZONE_SIZE + ZONE_MARKS);
		ret |= unmap(r, th, r->tables,
			     2 * RX_TABLE_BYTES + RC_NAMES_BYTES);
		ret |= unmap(r, th, r->slots, SLOT_MAX * r->slot_size);
		ret = ret ? -bte_io : 0;
	}
	bt_recorder_reset(r);
	return ret;
}
