/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_INTERNAL_H
#define BTRACE_INTERNAL_H

/* Helpers shared inside the library; not part of the public API. */

#include <stddef.h>
#include <stdio.h>

/*
 * Record the cause of a failure and return -@err (whatever the sign of
 * @err).  @saved_errno is 0 when no system call is behind it.  Usage:
 *	return bt_fail(bte_ptrace, errno, "ptrace(SEIZE, %d)", tid);
 */
int bt_fail(int err, int saved_errno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Map an errno value to a negative bt_error code. */
int bt_errno_to_bte(int e);

#define BT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * lib/fd.c: open(), always O_CLOEXEC, and fopen(), where descriptors may
 * run out: on EMFILE or ENFILE the hook set by bt_fd_spare_set() gives
 * one up (0) and the open is tried again.  bt_fd_ran_out(errno): 1 if it
 * gave one up (try again).
 */
void bt_fd_spare_set(int (*spare)(void));
int bt_fd_ran_out(int e);
int bt_open(const char *path, int flags);
FILE *bt_fopen(const char *path, const char *mode);

/*
 * lib/mem.c: arrays that grow with what the program runs, from 256 KiB up
 * mappings of their own backed by transparent huge pages where the kernel
 * gives them.  Zeroed when allocated (not the part a grow adds); grow and
 * free take the size last asked for.  NULL without memory (grow: @p stays).
 */
void *bt_big_alloc(size_t size);
void *bt_big_grow(void *p, size_t old, size_t size);
void bt_big_free(void *p, size_t size);

/*
 * Slabs of things of one size (lib/mem.c), newest first: each new one
 * holds twice its predecessor's (the first @first) up to 2 MiB, so that
 * the large ones lie on huge pages.  bt_slab_take(): a thing's room,
 * zeroed, NULL without memory; slab->mem holds slab->used of them.
 */
struct bt_slab {
	struct bt_slab *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

void *bt_slab_take(struct bt_slab **slabs, size_t item, size_t first);
void bt_slabs_free(struct bt_slab **slabs, size_t item);

/*
 * lib/image/maps.c: /proc/PID/maps without the build-ids (no file opened),
 * for what needs only the ranges, and the build-id of one of them; and
 * the process's size in pages (statm), which every mmap, munmap, mremap
 * and brk changes.
 */
struct bt_maps;
struct bt_map;
int bt_maps_read_plain(int pid, struct bt_maps *maps);
void bt_map_build_id(int pid, struct bt_map *m);
unsigned long long bt_maps_size(int pid);

#endif /* BTRACE_INTERNAL_H */
