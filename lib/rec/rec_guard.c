// SPDX-License-Identifier: MIT
/*
 * The recorder's memory against a program that reads, writes or scans
 * its whole address space (a crash handler's memory test backs up,
 * pattern-fills and restores every anonymous read-write mapping; a
 * garbage collector scans them).  What the program must not write it
 * cannot: the tables are read-only to it (the tracer writes them through
 * /proc/PID/mem) and the zones are read-and-execute.  What its
 * translated code must write, its ring and control block, the tracer
 * checks at each stop before it trusts it, and repairs: the tables'
 * addresses put back, a head outside the ring restarted at its top with
 * a gap in the history, a record store or table probe that faulted on
 * what the program wrote there run again.  The rings are a memfd's
 * ("/memfd:btrace-rings" in /proc/PID/maps: no anonymous memory to
 * scan); the tables and zones are named ("btrace-tables", "btrace-code")
 * where the kernel can name anonymous memory (CONFIG_ANON_VMA_NAME).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_ring.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/* The names, in the page after the tables (read-only to the program). */
static const char names[RC_NAME_MAX][RC_NAME_LEN] = {
	[RC_NAME_TABLES] = "btrace-tables",
	[RC_NAME_RINGS] = "btrace-rings",
	[RC_NAME_CODE] = "btrace-code",
};

int rc_names_write(struct bt_recorder *r)
{
	return rc_mem_write(r, r->tables + 2 * RX_TABLE_BYTES, names,
			    sizeof(names));
}

/* Where the process has name @which (rc_names_write()). */
static uint64_t name_at(const struct bt_recorder *r, int which)
{
	return r->tables + 2 * RX_TABLE_BYTES +
	       (uint64_t)which * sizeof(names[0]);
}

void rc_name(struct bt_recorder *r, struct bt_thread *th, uint64_t addr,
	     uint64_t len, int which)
{
	uint64_t name = name_at(r, which);

	/* EINVAL without CONFIG_ANON_VMA_NAME: unnamed, not asked again */
	if (!r->unnamed &&
	    rc_syscall(r, th, SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME,
		       addr, len, name) == -EINVAL)
		r->unnamed = 1;
}

/*
 * Reserve @len bytes of slots at @hint: a private mapping of a memfd
 * ("/memfd:btrace-rings (deleted)" in maps, whatever the kernel), so that
 * a scan of the program's anonymous memory (Redis's memory test takes
 * only "00:00" mappings) passes the rings by; private, so that a fork
 * child's copy is its own.  Anonymous memory where memfd_create fails.
 */
int64_t rc_memfd(struct bt_recorder *r, struct bt_thread *th, int which,
		 uint64_t len)
{
	int64_t fd = rc_syscall(r, th, SYS_memfd_create, name_at(r, which),
				MFD_CLOEXEC, 0, 0, 0);

	if (fd >= 0 && rc_syscall(r, th, SYS_ftruncate, fd, len, 0, 0, 0)) {
		rc_syscall(r, th, SYS_close, fd, 0, 0, 0, 0);
		return -1;
	}
	return fd;
}

int64_t rc_slots_map(struct bt_recorder *r, struct bt_thread *th,
		     uint64_t hint, uint64_t len)
{
	int64_t fd = rc_memfd(r, th, RC_NAME_RINGS, len), at = -1;

	if (fd >= 0) {
		at = rc_syscall(r, th, SYS_mmap, hint, len, PROT_NONE,
				MAP_PRIVATE | MAP_NORESERVE, fd);
		rc_syscall(r, th, SYS_close, fd, 0, 0, 0, 0);
		if (at >= 0)
			return at;
	}
	return rc_syscall(r, th, SYS_mmap, hint, len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  (uint64_t)-1);
}

/* The ring of @rt starts over at its top: what it held is a gap. */
static int ring_restart(struct bt_recorder *r, struct rthread *rt)
{
	uint64_t head = rt->top;

	if (rc_mem_write(r, rt->tcb + TCB_HEAD, &head, 8) < 0)
		return -bte_io;
	rt->head = head;
	rt->pass_start = rt->prev_start = rt->prev_low = rt->drained = 0;
	rc_walk_reset(r, rt, 2);
	r->host.gap(r->t, rt->th, 0, BT_GAP_OVERFLOW);
	return rc_hi_reset(r, rt);
}

/*
 * A head outside the ring, or above where the last drain left it in this
 * pass (it only moves down, but for a wrap): the program wrote it (a
 * backup put back restores an older head).
 */
static int head_bad(const struct rthread *rt, uint64_t head)
{
	if (head < rt->base || head > rt->top)
		return 1;
	return rt->drained >= rt->pass_start &&
	       rt->drained - rt->pass_start <= rt->top - rt->base &&
	       head > rt->top - (rt->drained - rt->pass_start);
}

int rc_tcb_check(struct bt_recorder *r, struct rthread *rt)
{
	uint64_t tcb[TCB_T / 8], tables[2];
	int ret = 0;

	if (rt->slot < 0 || rc_mem_read(r, rt->tcb, tcb, sizeof(tcb)) < 0)
		return 0;
	tables[0] = r->tables;
	tables[1] = r->tables + RX_TABLE_BYTES;
	rt->head = tcb[TCB_HEAD / 8];
	if (head_bad(rt, tcb[TCB_HEAD / 8])) {
		ret = ring_restart(r, rt);
		if (ret < 0)
			return ret;
		ret = 1;
	}
	if (tcb[TCB_TABLE1 / 8] != tables[0] ||
	    tcb[TCB_TABLE2 / 8] != tables[1]) {
		if (rc_mem_write(r, rt->tcb + TCB_TABLE1, tables,
				 sizeof(tables)) < 0)
			return -bte_io;
		ret = 1;
	}
	if (ret)
		r->repairs++;
	return ret;
}

/* The point after @pc in its zone into *@p; 0 if none. */
static int point_after(struct bt_recorder *r, uint64_t pc, struct rx_point *p)
{
	struct zone *z = rc_zone_of(r, pc);
	size_t i = z ? zpt_from(z, pc + 1) : 0;

	if (!z || i == z->npts)
		return 0;
	zpt_get(z, i, p);
	return 1;
}

int rc_fault_repair(struct bt_recorder *r, struct rthread *rt,
		    struct user_regs_struct *regs, const siginfo_t *si)
{
	struct rx_point p;
	uint64_t head = 0, len;
	int fixed, bad;

	if ((si->si_signo != SIGSEGV && si->si_signo != SIGBUS) ||
	    !rc_zone_of(r, regs->rip))
		return 0;
	rc_mem_read(r, rt->tcb + TCB_HEAD, &head, 8);
	bad = head_bad(rt, head);
	fixed = rc_tcb_check(r, rt);	/* restarts a ring whose head is bad */
	if (fixed < 0)
		return 0;
	/* a record's store through a head the program wrote: at the top */
	if (rc_point_kind(r, regs->rip, RX_POINT_STORE) &&
	    (regs->rcx < rt->base || regs->rcx >= rt->top)) {
		len = head - regs->rcx;
		if (!len || len > REC_ADDR_LEN)
			len = REC_ADDR_LEN;
		if (!bad && ring_restart(r, rt) < 0)
			return 0;
		regs->rcx = rt->top - len;
		return ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs) == 0;
	}
	/* a table probe through the tables' addresses it wrote: again */
	if (fixed && point_after(r, regs->rip, &p) &&
	    p.kind == RX_POINT_EXIT_IBL && p.aux) {
		regs->rip = p.aux;
		return ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs) == 0;
	}
	return 0;
}
