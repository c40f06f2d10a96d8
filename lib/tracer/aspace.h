/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_ASPACE_H
#define BTRACE_ASPACE_H

/*
 * A traced process's memory and every int3 btrace puts in it, in the
 * manner of rr's AddressSpace: one owner, everyone else asks it.
 *
 * One struct bt_aspace per process (tgid): the target's, and one for each
 * followed fork child (its own copy of the memory).  Threads share their
 * process's.  Memory goes through /proc/PID/mem, opened here alone: at
 * first use, kept open (it keeps the memory reachable while the leader is
 * a zombie), and opened again after an exec.  A tracer may read and write
 * it whether the threads run or not; callers that need the program to
 * hold still (writing code) stop it first.
 *
 * Breakpoints have kinds, each with a reference count at an address: the
 * int3 is in memory while any kind holds it, and the byte it covers is
 * kept once, whoever came first.  "Lifting" puts that byte back for a
 * while (a thread steps over the instruction) without forgetting the
 * breakpoint; lifts are counted too.  The version changes whenever the set
 * of (address, kind) pairs changes, so that a cache of "where must a
 * thread stop" (the recorder's translations) can tell it is stale.
 *
 * Errors: negative bte_ codes (btrace/error.h) with the cause in
 * bt_errdetail().
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum bt_bp_kind {
	BT_BP_USER,	/* a debugger's breakpoint (bt_target_break_insert) */
	BT_BP_BACKEND,	/* a backend's own stop (the fast mode's) */
	BT_BP_RECORDER,	/* the recorder's way out of its translations */
	BT_BP_NKINDS,
};

/* bt_aspace_kinds(): a bit per kind. */
#define BT_BP_MASK(kind) (1u << (kind))
#define BT_BP_ALL ((1u << BT_BP_NKINDS) - 1)

struct bt_aspace;

/*
 * A new, empty address space for process @pid into *@out; nothing is
 * opened yet.  Returns 0, or -bte_nomem.
 */
int bt_aspace_alloc(pid_t pid, struct bt_aspace **out);

/* Free @as (NULL is fine), closing its memory; the process is left as is. */
void bt_aspace_free(struct bt_aspace *as);

pid_t bt_aspace_pid(const struct bt_aspace *as);

/*
 * The open /proc/PID/mem of @as (opened now if need be), for code that
 * takes a file descriptor (soft_displace.c).  Owned by @as: never closed
 * by the caller, and not valid after bt_aspace_exec() or _free().
 * Returns it, or -bte_exited / -bte_io.
 */
int bt_aspace_fd(struct bt_aspace *as);

/*
 * Read up to @len bytes at @addr as they are in memory, btrace's int3s
 * included.  Returns how many (short where a mapping ends), or -bte_io if
 * not even the first byte is mapped, -bte_exited if the process is gone.
 */
ssize_t bt_aspace_read_raw(struct bt_aspace *as, uint64_t addr, void *buf,
			   size_t len);

/* The same as the program sees it: the bytes under every int3 put back. */
ssize_t bt_aspace_read(struct bt_aspace *as, uint64_t addr, void *buf,
		       size_t len);

/* Put the original bytes under @as's int3s into @buf, read from @addr. */
void bt_aspace_hide(const struct bt_aspace *as, uint64_t addr, void *buf,
		    size_t len);

/*
 * Write @len bytes of @buf at @addr as they are (read-only pages too, as
 * PTRACE_POKEDATA does).  Returns the count written, or -bte_io /
 * -bte_exited.
 */
ssize_t bt_aspace_write_raw(struct bt_aspace *as, uint64_t addr,
			    const void *buf, size_t len);

/*
 * Write the program's new bytes: where an int3 of btrace's is, the int3
 * stays and the new byte becomes its original.  Returns as
 * bt_aspace_write_raw(), or -bte_nomem.
 */
ssize_t bt_aspace_write(struct bt_aspace *as, uint64_t addr, const void *buf,
			size_t len);

/*
 * One more breakpoint of @kind at @addr.  The first of any kind puts the
 * int3 in (its byte kept).  Returns 0, -bte_invalid for a bad kind or
 * address 0, -bte_io / -bte_exited if the memory cannot be written, or
 * -bte_nomem.
 */
int bt_aspace_insert(struct bt_aspace *as, uint64_t addr, int kind);

/*
 * One breakpoint of @kind at @addr less.  When no kind holds the address
 * any more, the original byte goes back.  Returns 0, or -bte_noent if
 * @kind holds none there, or the write's error (the breakpoint is gone
 * from the table all the same).
 */
int bt_aspace_remove(struct bt_aspace *as, uint64_t addr, int kind);

/* The kinds holding an int3 at @addr (BT_BP_MASK bits), 0 if none. */
unsigned bt_aspace_kinds(const struct bt_aspace *as, uint64_t addr);

/* The byte under the int3 at @addr into *@orig; -bte_noent if none. */
int bt_aspace_orig(const struct bt_aspace *as, uint64_t addr, uint8_t *orig);

/* Changes whenever the set of breakpoints (address, kind) changes. */
uint64_t bt_aspace_version(const struct bt_aspace *as);

/* The same for the breakpoints of the kinds in @mask (BT_BP_MASK bits). */
uint64_t bt_aspace_version_of(const struct bt_aspace *as, unsigned mask);

/* How many addresses hold an int3. */
size_t bt_aspace_count(const struct bt_aspace *as);

/*
 * Lift the int3 at @addr (the original byte in memory) for a step over
 * its instruction; bt_aspace_unlift() puts it back once the last lift is
 * undone.  Both return 0, -bte_noent where there is no breakpoint (a lift
 * of a breakpoint removed meanwhile is forgotten), or the write's error.
 */
int bt_aspace_lift(struct bt_aspace *as, uint64_t addr);
int bt_aspace_unlift(struct bt_aspace *as, uint64_t addr);

/*
 * Every int3 out of memory and none written until bt_aspace_unlift_all():
 * a vfork child runs in this memory until it execs or exits.  The table
 * goes on changing meanwhile.
 */
void bt_aspace_lift_all(struct bt_aspace *as);
void bt_aspace_unlift_all(struct bt_aspace *as);

/* Between bt_aspace_lift_all() and bt_aspace_unlift_all()? */
int bt_aspace_lifted_all(const struct bt_aspace *as);

/*
 * Fork child @child, not followed (or followed, by a backend that keeps
 * none of its int3s there), got a copy of the memory with every int3 in
 * it: put the original bytes back there under those of the kinds in
 * @mask (BT_BP_MASK bits; BT_BP_ALL for every one) before it is let go.
 * Returns 0, or -bte_io / -bte_exited if its memory cannot be opened.
 */
int bt_aspace_fork_clean(const struct bt_aspace *as, pid_t child,
			 unsigned mask);

/*
 * Fork child @child, followed: its copy of the memory holds @as's int3s,
 * so its address space starts with @as's breakpoints of the kinds in
 * @mask (the others are the fork clean-up's: bt_aspace_fork_clean()),
 * into *@out.  Returns 0, or -bte_nomem.
 */
int bt_aspace_fork(const struct bt_aspace *as, pid_t child, unsigned mask,
		   struct bt_aspace **out);

/*
 * The same into @c, the child's address space made at its first stop
 * (before its parent's fork event), whose own int3s stay.  0, or
 * -bte_nomem.
 */
int bt_aspace_fork_into(const struct bt_aspace *as, struct bt_aspace *c,
			unsigned mask);

/*
 * The process exec'd: a new memory, none of our int3s in it.  The table
 * empties (the version changes) and the memory is opened again at next
 * use.
 */
void bt_aspace_exec(struct bt_aspace *as);

/*
 * Tracing ends: every int3 out, unless the program wrote over it since
 * (its own code stays), and the table empty.
 */
void bt_aspace_release(struct bt_aspace *as);

/*
 * Every breakpoint of @kind goes (a backend's at its end): where no other
 * kind holds the address, the int3 goes as in bt_aspace_release().
 */
void bt_aspace_remove_kind(struct bt_aspace *as, int kind);

#endif /* BTRACE_ASPACE_H */
