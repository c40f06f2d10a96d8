// SPDX-License-Identifier: MIT
/*
 * The tracer's own view of the lookup tables (recorder_int.h): the
 * process maps them read-only and private from a memfd, and the tracer
 * maps the same memfd shared and writable.  The process never writes
 * those pages, so its private mapping keeps the memfd's own pages, and a
 * table entry the tracer stores there the process sees: one store each
 * instead of a write(2) to /proc/PID/mem (python3's start-up wrote 22 k
 * entries, a stop's worth of system calls every six).  Every page of
 * the tables is there before the process can read one (its private
 * mapping then maps the memfd's page, never one of zeros of its own).
 *
 * Not the zones: there a page is written by the tracer once or twice,
 * and /proc/PID/mem's write fills the program's page table as it goes;
 * mapped from a memfd, each page was faulted twice, in the tracer and in
 * the program (python3: 18 k more page faults, no CPU saved).
 *
 * A followed fork child maps the same pages: from its fork on, the
 * parent and the child write through /proc/PID/mem (which gives each its
 * own copy of a page it writes), and the tracer's view goes.  Where
 * memfd_create, or opening it from the tracer, fails, the tables stay
 * anonymous and are written through /proc/PID/mem.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

/*
 * Does the process see at @at what the tracer stores at @map?  (Another
 * thread of the program could have closed the memfd's descriptor and
 * opened another file under its number before the tracer opened it.)
 */
static int same_pages(struct bt_recorder *r, uint8_t *map, uint64_t at)
{
	uint64_t mark = 0x6274726163656d66ull ^ at, seen = 0;
	int ok;

	memcpy(map, &mark, 8);
	ok = rc_mem_read(r, at, &seen, 8) == 0 && seen == mark;
	memset(map, 0, 8);
	return ok;
}

void rc_mirror_map(struct bt_recorder *r, struct bt_thread *th)
{
	uint64_t at = r->tables, len = 2 * RX_TABLE_BYTES;
	void *map = MAP_FAILED;
	char path[64];
	int64_t fd, got = -1;
	int tfd;

	if (r->mirror || r->mirror_off)
		return;
	fd = rc_memfd(r, th, RC_NAME_TABLES, len);
	if (fd < 0)
		return;
	/* the thread's own file table (a vfork child has one of its own) */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)th->tid, (int)fd);
	tfd = bt_open(path, O_RDWR);
	if (tfd >= 0) {
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, tfd,
			   0);
		close(tfd);
	}
	if (map != MAP_FAILED) {
		memset(map, 0, len);	/* every page, before it is read */
		got = rc_syscall(r, th, SYS_mmap, at, len, PROT_READ,
				 MAP_PRIVATE | MAP_FIXED, fd);
	}
	rc_syscall(r, th, SYS_close, fd, 0, 0, 0, 0);
	if (map == MAP_FAILED)
		return;
	/* a failed MAP_FIXED leaves the anonymous mapping as it was */
	if (got != (int64_t)at || !same_pages(r, map, at)) {
		munmap(map, len);
		return;
	}
	r->mirror = map;
}

uint8_t *rc_mirror_at(const struct bt_recorder *r, uint64_t addr, size_t len)
{
	if (!r->mirror || addr < r->tables || addr + len < addr ||
	    addr + len > r->tables + 2 * RX_TABLE_BYTES)
		return NULL;
	return r->mirror + (addr - r->tables);
}

void rc_mirror_store(uint8_t *dst, const void *buf, size_t len)
{
	uint64_t v;

	/*
	 * A table entry's half other threads may read while it changes is
	 * one store, and stores keep their order (the translation, then
	 * the original: rc_table_insert()).
	 */
	if (len == 8 && !((uintptr_t)dst & 7)) {
		memcpy(&v, buf, 8);
		__atomic_store_n((uint64_t *)dst, v, __ATOMIC_RELEASE);
	} else {
		memcpy(dst, buf, len);
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
}

void rc_mirror_drop(struct bt_recorder *r)
{
	if (r->mirror)
		munmap(r->mirror, 2 * RX_TABLE_BYTES);
	r->mirror = NULL;
}

void bt_recorder_forked(struct bt_recorder *r)
{
	if (!r || !r->ready)
		return;		/* tables mapped later are its own */
	rc_mirror_drop(r);
	r->mirror_off = 1;
}
