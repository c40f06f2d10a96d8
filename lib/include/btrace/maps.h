/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_MAPS_H
#define BTRACE_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The memory mappings of a process, from /proc/PID/maps. */

enum bt_map_prot { BT_MAP_R = 1, BT_MAP_W = 2, BT_MAP_X = 4 };

struct bt_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	uint32_t prot;		/* enum bt_map_prot */
	char *path;		/* file path, "[vdso]", "[heap]"..., or NULL;
				 * as the kernel shows it, " (deleted)" kept */
	uint8_t build_id[20];	/* of the inode mapped, even if deleted */
	uint8_t build_id_len;	/* 0 if none or not a file */
	uint8_t deleted;	/* the file was unlinked or replaced */
};

struct bt_maps {
	struct bt_map *map;	/* sorted by start, disjoint */
	size_t count;
};

/*
 * Read the mappings of @pid, 0 for the calling process (build-ids filled
 * for ELF files, where they can be read); release them with
 * bt_maps_release(), which accepts NULL and never fails.
 * Returns 0; -bte_invalid if @maps is NULL or @pid negative; -bte_noent
 * if there is no such process; -bte_perm if its maps may not be read;
 * -bte_format if a line of the file cannot be parsed; -bte_nomem;
 * -bte_io for another failure to open the file.  On failure @maps is
 * empty.
 */
int bt_maps_read(pid_t pid, struct bt_maps *maps);
void bt_maps_release(struct bt_maps *maps);

/*
 * The mapping of @maps containing @addr (binary search); NULL if none or
 * @maps is NULL.
 */
const struct bt_map *bt_maps_find(const struct bt_maps *maps, uint64_t addr);

#endif /* BTRACE_MAPS_H */
