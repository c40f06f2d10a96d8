// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps, with the build-id of every mapped ELF file.
 *
 * The build-id is read through /proc/PID/map_files/START-END when the
 * kernel lets us: that link is the inode actually mapped, even when the
 * file was deleted or replaced on disk (a program rebuilt while it runs).
 * The path is only a fallback.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/maps.h"
#include "internal.h"

#define DELETED_SUFFIX " (deleted)"

/* Only regular files: opening a mapped device could have side effects. */
static int open_regular(const char *file)
{
	struct stat st;

	if (stat(file, &st) || !S_ISREG(st.st_mode))
		return -1;
	return bt_open(file, O_RDONLY);
}

/* The NT_GNU_BUILD_ID note of ELF file @file, if it has one. */
static int build_id_read(const char *file, struct bt_map *m)
{
	const void *id;
	ssize_t len = -1;
	Elf *elf;
	int fd;

	fd = open_regular(file);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		len = dwelf_elf_gnu_build_id(elf, &id);
	/* An id longer than the field cannot be compared: leave it out. */
	if (len > 0 && (size_t)len <= sizeof(m->build_id)) {
		memcpy(m->build_id, id, len);
		m->build_id_len = (uint8_t)len;
	}
	elf_end(elf);
	close(fd);
	return 0;
}

static void map_build_id(pid_t pid, struct bt_map *m)
{
	char link[64];

	if (!m->path || m->path[0] != '/')
		return;
	if (pid)
		snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, (int)pid, m->start, m->end);
	else
		snprintf(link, sizeof(link), "/proc/self/map_files/%" PRIx64
			 "-%" PRIx64, m->start, m->end);
	if (build_id_read(link, m) == 0 || m->deleted)
		return;
	build_id_read(m->path, m);
}

void bt_map_build_id(int pid, struct bt_map *m)
{
	m->build_id_len = 0;
	map_build_id(pid, m);
}

/* A file maps several times in a row (text, data, ...): read it once. */
static void maps_fill_build_id(pid_t pid, struct bt_maps *maps)
{
	struct bt_map *m = &maps->map[maps->count - 1];
	struct bt_map *prev;

	if (!m->path || m->path[0] != '/')
		return;
	for (prev = m - 1; prev >= maps->map; prev--) {
		if (!prev->path || prev->path[0] != '/')
			continue;
		if (!strcmp(prev->path, m->path)) {
			memcpy(m->build_id, prev->build_id,
			       sizeof(m->build_id));
			m->build_id_len = prev->build_id_len;
			return;
		}
		break;
	}
	map_build_id(pid, m);
}

static uint32_t parse_prot(const char *perms)
{
	return (perms[0] == 'r' ? BT_MAP_R : 0) |
	       (perms[1] == 'w' ? BT_MAP_W : 0) |
	       (perms[2] == 'x' ? BT_MAP_X : 0);
}

/*
 * "start-end perms offset dev inode   path": the path is the rest of the
 * line after the padding, so it may hold spaces; the kernel appends
 * " (deleted)" to unlinked files, which we keep (opening that path must not
 * find another file) and note in ->deleted.
 */
static int parse_line(char *line, struct bt_map *m)
{
	char perms[5];
	uint64_t inode;
	size_t len;
	int n = -1;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*x:%*x %"
		   SCNu64 " %n", &m->start, &m->end, perms, &m->offset, &inode,
		   &n) < 5 || n < 0 || strlen(perms) < 3)
		return bt_fail(bte_format, 0, "maps line '%.64s'", line);
	m->prot = parse_prot(perms);
	len = strcspn(line + n, "\n");
	if (!len)
		return 0;
	line[n + len] = '\0';
	m->path = strdup(line + n);
	if (!m->path)
		return bt_fail(bte_nomem, ENOMEM, "maps path");
	if (len > strlen(DELETED_SUFFIX) && m->path[0] == '/' &&
	    !strcmp(m->path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX))
		m->deleted = 1;
	return 0;
}

static int maps_grow(struct bt_maps *maps, size_t *cap)
{
	struct bt_map *map;
	size_t ncap = *cap ? *cap * 2 : 64;

	if (maps->count < *cap)
		return 0;
	map = realloc(maps->map, ncap * sizeof(*map));
	if (!map)
		return bt_fail(bte_nomem, ENOMEM, "maps(%zu)", ncap);
	maps->map = map;
	*cap = ncap;
	return 0;
}

static int maps_parse(FILE *f, pid_t pid, struct bt_maps *maps, int ids)
{
	size_t cap = 0, size = 0;
	char *line = NULL;
	int ret = 0;

	while (getline(&line, &size, f) > 0) {
		ret = maps_grow(maps, &cap);
		if (ret)
			break;
		ret = parse_line(line, &maps->map[maps->count]);
		if (ret)
			break;
		maps->count++;
		if (ids)
			maps_fill_build_id(pid, maps);
	}
	free(line);
	return ret;
}

static int maps_read(pid_t pid, struct bt_maps *maps, int ids)
{
	char file[64];
	FILE *f;
	int ret;

	if (!maps || pid < 0)
		return bt_fail(bte_invalid, 0, "maps of pid %d", (int)pid);
	maps->map = NULL;
	maps->count = 0;
	if (pid)
		snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	else
		snprintf(file, sizeof(file), "/proc/self/maps");
	f = bt_fopen(file, "re");
	if (!f)
		return bt_fail(bt_errno_to_bte(errno), errno, "open(%s)", file);
	ret = maps_parse(f, pid, maps, ids);
	fclose(f);
	if (ret)
		bt_maps_release(maps);
	return ret;
}

int bt_maps_read(pid_t pid, struct bt_maps *maps)
{
	return maps_read(pid, maps, 1);
}

int bt_maps_read_plain(int pid, struct bt_maps *maps)
{
	return maps_read(pid, maps, 0);
}

unsigned long long bt_maps_size(int pid)
{
	char file[64], buf[64];
	unsigned long long pages = 0;
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "/proc/%d/statm", (int)pid);
	fd = bt_open(file, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	sscanf(buf, "%llu", &pages);
	return pages;
}

void bt_maps_release(struct bt_maps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->count; i++)
		free(maps->map[i].path);
	free(maps->map);
	maps->map = NULL;
	maps->count = 0;
}

const struct bt_map *bt_maps_find(const struct bt_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!maps || !maps->map)
		return NULL;
	/* Sorted and disjoint, as the kernel lists them. */
	hi = maps->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bt_map *m = &maps->map[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}
