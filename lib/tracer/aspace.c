// SPDX-License-Identifier: MIT
/*
 * A process's memory and btrace's int3s in it (aspace.h).  The breakpoint
 * table is an open-addressing hash on the address (linear probing, deleted
 * slots closed by shifting back), so that the fast mode's thousands of
 * int3s cost one probe a lookup as in its own table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/error.h"
#include "internal.h"
#include "tracer/aspace.h"

#define INT3 0xcc

struct bt_bp {
	uint64_t addr;		/* 0: a free slot */
	uint32_t count[BT_BP_NKINDS];
	uint32_t lifted;	/* lifts outstanding: the original is in */
	uint8_t orig;		/* the byte under the int3 */
};

struct bt_aspace {
	pid_t pid;
	int fd;			/* /proc/PID/mem, -1 until used */
	uint64_t used;		/* when fd was last used (fd_clock) */
	struct bt_aspace *next_all;	/* all_as */
	struct bt_bp *bp;
	size_t nbp, cap;	/* cap: 0 or a power of two */
	uint64_t version;
	uint64_t kversion[BT_BP_NKINDS];	/* the same, kind by kind */
	int via_task;		/* fd opened through a thread, not the leader */
	int lifted_all;		/* no int3 written: a vfork child runs */
};

/*
 * Every address space of this thread's targets (a target is used from one
 * thread: target.h), so that where file descriptors run out (a tree of
 * processes under `ulimit -n 16`, each one's /proc/PID/mem kept open)
 * the one used longest ago gives its descriptor up: it opens its file
 * again when next used (mem_open).  Never another thread's: it may be
 * reading through it.  Before, an open failed there, a followed child's
 * recorder was not made, and the child crashed (e2e/rec_fd_limit).
 */
static __thread struct bt_aspace *all_as;
static __thread uint64_t fd_clock;

static int fd_spare(void);

int bt_aspace_alloc(pid_t pid, struct bt_aspace **out)
{
	struct bt_aspace *as = calloc(1, sizeof(*as));

	*out = NULL;
	if (!as)
		return bt_fail(bte_nomem, errno, "address space of %d", pid);
	as->pid = pid;
	as->fd = -1;
	bt_fd_spare_set(fd_spare);	/* lib/fd.c's hook */
	as->next_all = all_as;
	all_as = as;
	*out = as;
	return 0;
}

void bt_aspace_free(struct bt_aspace *as)
{
	struct bt_aspace **pp;

	if (!as)
		return;
	for (pp = &all_as; *pp && *pp != as; pp = &(*pp)->next_all)
		;
	if (*pp)
		*pp = as->next_all;
	if (as->fd >= 0)
		close(as->fd);
	free(as->bp);
	free(as);
}

/*
 * Descriptors ran out (lib/fd.c's hook): the space whose /proc/PID/mem was
 * used longest ago closes it, never the one used last (a caller of
 * bt_aspace_fd() may hold its number; a space being opened has none yet).
 * 0, or -1 if none could.
 */
static int fd_spare(void)
{
	struct bt_aspace *as, *lru = NULL, *last = NULL;

	for (as = all_as; as; as = as->next_all)
		if (as->fd >= 0 && (!last || as->used > last->used))
			last = as;
	for (as = all_as; as; as = as->next_all)
		if (as != last && as->fd >= 0 && (!lru || as->used < lru->used))
			lru = as;
	if (!lru)
		return -1;
	close(lru->fd);
	lru->fd = -1;
	return 0;
}

pid_t bt_aspace_pid(const struct bt_aspace *as)
{
	return as->pid;
}

/* Memory */

/*
 * Through a thread other than the leader: a leader that exited before its
 * threads is a zombie, and its /proc/PID/mem can open without memory
 * (kernels where it has none left to give).
 */
static int mem_open_task(struct bt_aspace *as, int e)
{
	char path[64];
	struct dirent *de;
	DIR *dir;

	if (as->fd >= 0)
		close(as->fd);
	as->fd = -1;
	as->via_task = 1;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)as->pid);
	while (!(dir = opendir(path)) && bt_fd_ran_out(errno))
		;
	while (dir && as->fd < 0 && (de = readdir(dir))) {
		int tid = atoi(de->d_name);

		if (tid <= 0 || tid == as->pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/mem",
			 (int)as->pid, tid);
		as->fd = bt_open(path, O_RDWR);
	}
	if (dir)
		closedir(dir);
	if (as->fd >= 0)
		return 0;
	return bt_fail(e == ENOENT || e == ESRCH ? bte_exited : bte_io, e,
		       "open(/proc/%d/mem)", (int)as->pid);
}

/*
 * The one place /proc/PID/mem is opened.  Kept open, it keeps the memory
 * reachable through the leader after the leader exits.
 */
static int mem_open(struct bt_aspace *as)
{
	char path[64];

	as->used = ++fd_clock;
	if (as->fd >= 0)
		return 0;
	as->via_task = 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)as->pid);
	as->fd = bt_open(path, O_RDWR);
	return as->fd >= 0 ? 0 : mem_open_task(as, errno);
}

/* 0 bytes from /proc/PID/mem: the memory is gone with the process. */
static ssize_t mem_err(const struct bt_aspace *as, ssize_t n, uint64_t addr,
		       const char *what)
{
	if (n == 0)
		return bt_fail(bte_exited, ESRCH, "process %d has no memory",
			       (int)as->pid);
	return bt_fail(errno == ESRCH ? bte_exited : bte_io, errno,
		       "%s memory of %d at 0x%llx", what, (int)as->pid,
		       (unsigned long long)addr);
}

/*
 * pread or pwrite @len bytes at @addr: the count, or < 0.  No bytes at
 * all means no memory behind the file: opened through a zombie leader,
 * it is opened again through another thread.
 */
static ssize_t mem_rw(struct bt_aspace *as, int write, void *buf, size_t len,
		      uint64_t addr)
{
	ssize_t n = 0;
	int ret, again;

	for (again = 0; again < 2; again++) {
		ret = mem_open(as);
		if (ret < 0)
			return ret;
		n = write ? pwrite(as->fd, buf, len, (off_t)addr) :
			    pread(as->fd, buf, len, (off_t)addr);
		if (n != 0 || as->via_task || mem_open_task(as, ESRCH) < 0)
			break;
	}
	return n > 0 ? n : mem_err(as, n, addr, write ? "write" : "read");
}

int bt_aspace_fd(struct bt_aspace *as)
{
	int ret = mem_open(as);

	return ret < 0 ? ret : as->fd;
}

ssize_t bt_aspace_read_raw(struct bt_aspace *as, uint64_t addr, void *buf,
			   size_t len)
{
	/* Short where a mapping ends: the kernel stops at the first hole. */
	return len ? mem_rw(as, 0, buf, len, addr) : 0;
}

ssize_t bt_aspace_write_raw(struct bt_aspace *as, uint64_t addr,
			    const void *buf, size_t len)
{
	return len ? mem_rw(as, 1, (void *)buf, len, addr) : 0;
}

static int byte_write(struct bt_aspace *as, uint64_t addr, uint8_t byte)
{
	ssize_t n;

	if (as->lifted_all && byte == INT3)
		return 0;	/* a vfork child runs in this memory */
	n = bt_aspace_write_raw(as, addr, &byte, 1);
	return n < 0 ? (int)n : 0;
}

/* The table */

static size_t bp_hash(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 24) & (cap - 1);
}

static struct bt_bp *bp_find(const struct bt_aspace *as, uint64_t addr)
{
	size_t i;

	if (!as->nbp)
		return NULL;
	for (i = bp_hash(addr, as->cap); as->bp[i].addr;
	     i = (i + 1) & (as->cap - 1))
		if (as->bp[i].addr == addr)
			return &as->bp[i];
	return NULL;
}

/* A free slot for @addr (the table is never more than half full). */
static struct bt_bp *bp_slot(struct bt_aspace *as, uint64_t addr)
{
	size_t i;

	for (i = bp_hash(addr, as->cap); as->bp[i].addr;
	     i = (i + 1) & (as->cap - 1))
		;
	return &as->bp[i];
}

static int bp_grow(struct bt_aspace *as)
{
	size_t cap = as->cap ? 2 * as->cap : 64, old = as->cap, i;
	struct bt_bp *was = as->bp, *nw = calloc(cap, sizeof(*nw));

	if (!nw)
		return bt_fail(bte_nomem, errno, "breakpoint table");
	as->bp = nw;
	as->cap = cap;
	for (i = 0; i < old; i++)
		if (was[i].addr)
			*bp_slot(as, was[i].addr) = was[i];
	free(was);
	return 0;
}

/* Empty slot @hole: move back the entries after it that probed past it. */
static void bp_delete(struct bt_aspace *as, struct bt_bp *b)
{
	size_t hole = (size_t)(b - as->bp), i = hole, home;

	memset(b, 0, sizeof(*b));
	as->nbp--;
	for (;;) {
		i = (i + 1) & (as->cap - 1);
		if (!as->bp[i].addr)
			return;
		home = bp_hash(as->bp[i].addr, as->cap);
		/* Stays if its home lies cyclically in (hole, i]. */
		if (hole <= i ? (home > hole && home <= i) :
				(home > hole || home <= i))
			continue;
		as->bp[hole] = as->bp[i];
		memset(&as->bp[i], 0, sizeof(as->bp[i]));
		hole = i;
	}
}

static int bp_held(const struct bt_bp *b)
{
	int k;

	for (k = 0; k < BT_BP_NKINDS; k++)
		if (b->count[k])
			return 1;
	return 0;
}

/* Breakpoints */

static int bp_new(struct bt_aspace *as, uint64_t addr, struct bt_bp **out)
{
	uint8_t orig;
	ssize_t n;
	int ret;

	if (2 * (as->nbp + 1) > as->cap) {
		ret = bp_grow(as);
		if (ret < 0)
			return ret;
	}
	n = bt_aspace_read_raw(as, addr, &orig, 1);
	if (n < 0)
		return (int)n;
	ret = byte_write(as, addr, INT3);
	if (ret < 0)
		return ret;
	*out = bp_slot(as, addr);
	(*out)->addr = addr;
	(*out)->orig = orig;
	as->nbp++;
	return 0;
}

int bt_aspace_insert(struct bt_aspace *as, uint64_t addr, int kind)
{
	struct bt_bp *b;
	int ret;

	if (kind < 0 || kind >= BT_BP_NKINDS || !addr)
		return bt_fail(bte_invalid, 0,
			       "breakpoint of kind %d at 0x%llx", kind,
			       (unsigned long long)addr);
	b = bp_find(as, addr);
	if (!b) {
		ret = bp_new(as, addr, &b);
		if (ret < 0)
			return ret;
	}
	if (b->count[kind]++ == 0) {
		as->version++;
		as->kversion[kind]++;
	}
	return 0;
}

int bt_aspace_remove(struct bt_aspace *as, uint64_t addr, int kind)
{
	struct bt_bp *b = bp_find(as, addr);
	int ret = 0;

	if (!b || kind < 0 || kind >= BT_BP_NKINDS || !b->count[kind])
		return bt_fail(bte_noent, 0,
			       "no breakpoint of kind %d at 0x%llx", kind,
			       (unsigned long long)addr);
	if (--b->count[kind] == 0) {
		as->version++;
		as->kversion[kind]++;
	}
	if (bp_held(b))
		return 0;
	if (!b->lifted)
		ret = byte_write(as, addr, b->orig);
	bp_delete(as, b);
	return ret;
}

unsigned bt_aspace_kinds(const struct bt_aspace *as, uint64_t addr)
{
	const struct bt_bp *b = bp_find(as, addr);
	unsigned mask = 0;
	int k;

	for (k = 0; b && k < BT_BP_NKINDS; k++)
		if (b->count[k])
			mask |= BT_BP_MASK(k);
	return mask;
}

int bt_aspace_orig(const struct bt_aspace *as, uint64_t addr, uint8_t *orig)
{
	const struct bt_bp *b = bp_find(as, addr);

	if (!b)
		return -bte_noent;
	*orig = b->orig;
	return 0;
}

uint64_t bt_aspace_version(const struct bt_aspace *as)
{
	return as->version;
}

uint64_t bt_aspace_version_of(const struct bt_aspace *as, unsigned mask)
{
	uint64_t v = 0;
	int k;

	for (k = 0; k < BT_BP_NKINDS; k++)
		if (mask & BT_BP_MASK(k))
			v += as->kversion[k];
	return v;
}

size_t bt_aspace_count(const struct bt_aspace *as)
{
	return as->nbp;
}

int bt_aspace_lift(struct bt_aspace *as, uint64_t addr)
{
	struct bt_bp *b = bp_find(as, addr);

	if (!b)
		return -bte_noent;
	if (b->lifted++)
		return 0;
	return byte_write(as, addr, b->orig);
}

int bt_aspace_unlift(struct bt_aspace *as, uint64_t addr)
{
	struct bt_bp *b = bp_find(as, addr);

	if (!b || !b->lifted)
		return -bte_noent;
	if (--b->lifted)
		return 0;	/* another thread still steps over it */
	return byte_write(as, addr, INT3);
}

void bt_aspace_lift_all(struct bt_aspace *as)
{
	size_t i;

	for (i = 0; i < as->cap; i++)
		if (as->bp[i].addr && !as->bp[i].lifted)
			byte_write(as, as->bp[i].addr, as->bp[i].orig);
	as->lifted_all = 1;
}

void bt_aspace_unlift_all(struct bt_aspace *as)
{
	size_t i;

	as->lifted_all = 0;
	for (i = 0; i < as->cap; i++)
		if (as->bp[i].addr && !as->bp[i].lifted)
			byte_write(as, as->bp[i].addr, INT3);
}

/* Reading and writing as the program sees it */

void bt_aspace_hide(const struct bt_aspace *as, uint64_t addr, void *buf,
		    size_t len)
{
	uint8_t *p = buf;
	size_t i;

	if (!as->nbp)
		return;
	if (len < as->nbp) {
		for (i = 0; i < len; i++) {
			const struct bt_bp *b = bp_find(as, addr + i);

			if (b)
				p[i] = b->orig;
		}
		return;
	}
	for (i = 0; i < as->cap; i++)
		if (as->bp[i].addr >= addr && as->bp[i].addr - addr < len)
			p[as->bp[i].addr - addr] = as->bp[i].orig;
}

ssize_t bt_aspace_read(struct bt_aspace *as, uint64_t addr, void *buf,
		       size_t len)
{
	ssize_t n = bt_aspace_read_raw(as, addr, buf, len);

	if (n > 0)
		bt_aspace_hide(as, addr, buf, (size_t)n);
	return n;
}

ssize_t bt_aspace_write(struct bt_aspace *as, uint64_t addr, const void *buf,
			size_t len)
{
	uint8_t *copy;
	ssize_t n;
	size_t i;

	if (!as->nbp)
		return bt_aspace_write_raw(as, addr, buf, len);
	copy = malloc(len ? len : 1);
	if (!copy)
		return bt_fail(bte_nomem, errno, "write");
	memcpy(copy, buf, len);
	for (i = 0; i < len; i++) {
		struct bt_bp *b = bp_find(as, addr + i);

		if (!b)
			continue;
		b->orig = copy[i];
		if (!b->lifted && !as->lifted_all)
			copy[i] = INT3;
	}
	n = bt_aspace_write_raw(as, addr, copy, len);
	free(copy);
	return n;
}

/* Forks, exec and the end */

/* Is one of the kinds in @mask holding @b? */
static int bp_held_by(const struct bt_bp *b, unsigned mask)
{
	int k;

	for (k = 0; k < BT_BP_NKINDS; k++)
		if (b->count[k] && (mask & BT_BP_MASK(k)))
			return 1;
	return 0;
}

int bt_aspace_fork_clean(const struct bt_aspace *as, pid_t child,
			 unsigned mask)
{
	struct bt_aspace *copy;
	size_t i;
	int ret;

	if (!as->nbp)
		return 0;
	ret = bt_aspace_alloc(child, &copy);
	if (ret < 0)
		return ret;
	for (i = 0; i < as->cap && ret >= 0; i++)
		if (as->bp[i].addr && bp_held_by(&as->bp[i], mask))
			ret = (int)bt_aspace_write_raw(copy, as->bp[i].addr,
						       &as->bp[i].orig, 1);
	bt_aspace_free(copy);
	return ret < 0 ? ret : 0;
}

/*
 * The child's table: @as's breakpoints of the kinds in @mask, unlifted,
 * added to what it holds already (its own int3s, put in at its first
 * stop where that came before its parent's fork event).
 */
static int fork_table(const struct bt_aspace *as, struct bt_aspace *c,
		      unsigned mask)
{
	size_t i;
	int k, ret;

	for (i = 0; i < as->cap; i++) {
		const struct bt_bp *b = &as->bp[i];
		struct bt_bp *n;

		if (!b->addr || !bp_held_by(b, mask))
			continue;
		n = bp_find(c, b->addr);
		if (!n) {
			if (2 * (c->nbp + 1) > c->cap &&
			    (ret = bp_grow(c)) < 0)
				return ret;
			n = bp_slot(c, b->addr);
			n->addr = b->addr;
			n->orig = b->orig;
			c->nbp++;
		}
		for (k = 0; k < BT_BP_NKINDS; k++)
			if (mask & BT_BP_MASK(k) && b->count[k]) {
				n->count[k] += b->count[k];
				c->kversion[k]++;
			}
		c->version++;
	}
	return 0;
}

int bt_aspace_fork_into(const struct bt_aspace *as, struct bt_aspace *c,
			unsigned mask)
{
	return fork_table(as, c, mask);
}

int bt_aspace_fork(const struct bt_aspace *as, pid_t child, unsigned mask,
		   struct bt_aspace **out)
{
	struct bt_aspace *c;
	int ret;

	*out = NULL;
	ret = bt_aspace_alloc(child, &c);
	if (ret < 0)
		return ret;
	/* The parent's lifts are its threads' steps, not the child's. */
	ret = fork_table(as, c, mask);
	if (ret < 0) {
		bt_aspace_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

static void bp_clear(struct bt_aspace *as)
{
	int k;

	free(as->bp);
	as->bp = NULL;
	as->nbp = as->cap = 0;
	as->lifted_all = 0;
	as->version++;
	for (k = 0; k < BT_BP_NKINDS; k++)
		as->kversion[k]++;
}

void bt_aspace_exec(struct bt_aspace *as)
{
	if (as->fd >= 0)
		close(as->fd);
	as->fd = -1;
	bp_clear(as);
}

/* The int3 of @b goes for good: its byte back, unless the program's now. */
static void bp_restore(struct bt_aspace *as, const struct bt_bp *b)
{
	uint8_t now;

	if (b->lifted || as->lifted_all)
		return;
	if (bt_aspace_read_raw(as, b->addr, &now, 1) == 1 && now != INT3)
		return;		/* the program's own code now */
	byte_write(as, b->addr, b->orig);
}

void bt_aspace_release(struct bt_aspace *as)
{
	size_t i;

	for (i = 0; i < as->cap; i++)
		if (as->bp[i].addr)
			bp_restore(as, &as->bp[i]);
	bp_clear(as);
}

void bt_aspace_remove_kind(struct bt_aspace *as, int kind)
{
	size_t i = 0;

	if (kind < 0 || kind >= BT_BP_NKINDS)
		return;
	while (i < as->cap) {
		struct bt_bp *b = &as->bp[i];

		if (!b->addr || !b->count[kind]) {
			i++;
			continue;
		}
		b->count[kind] = 0;
		as->version++;
		as->kversion[kind]++;
		if (bp_held(b)) {
			i++;
			continue;
		}
		bp_restore(as, b);
		bp_delete(as, b);	/* a later entry may move here: again */
	}
}

int bt_aspace_lifted_all(const struct bt_aspace *as)
{
	return as->lifted_all;
}
