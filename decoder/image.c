// SPDX-License-Identifier: MIT
/*
 * The code image: sections of bytes at addresses, for our own reads (BTS
 * classification, disassembly) and for libipt (PT decoding).
 *
 * Files are mapped once, whole, and shared by all their sections.  Memory
 * copies are kept in memfds so that libipt sees every section as a file
 * section: those go through its section cache and block cache, which makes
 * PT decoding several times faster than the read callback.  The callback
 * only serves the fallback reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <intel-pt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/error.h"
#include "image_internal.h"
#include "internal.h"

/* Mapped sections libipt keeps around between decodes. */
#define BT_ISCACHE_LIMIT (256ull << 20)

struct bt_file {
	char *path;
	uint8_t *map;
	size_t size;
};

struct bt_section {
	uint64_t vaddr, size;
	const uint8_t *data;
	uint8_t *copy;		/* memory sections: owned copy */
	int memfd;		/* memory sections: libipt's view, or -1 */
	int covered;		/* a later section overlaps this one */
};

struct bt_image {
	struct bt_section *sec;
	size_t nsec, secalloc;
	struct bt_file *file;
	size_t nfile, filealloc;
	const struct bt_section *hit;	/* last uncovered section read */
	bt_image_read_fn fallback;
	void *fallback_ctx;
	struct pt_image_section_cache *iscache;
	struct pt_image *pt;
};

static int image_pt_read(uint8_t *buf, size_t size, const struct pt_asid *asid,
			 uint64_t ip, void *ctx)
{
	struct bt_image *image = ctx;
	ssize_t n;

	if (!image->fallback)
		return -pte_nomap;
	n = image->fallback(image->fallback_ctx, ip, buf, size);
	return n > 0 ? (int)n : -pte_nomap;
}

struct bt_image *bt_image_alloc(void)
{
	struct bt_image *image = calloc(1, sizeof(*image));

	if (!image)
		return NULL;
	image->iscache = pt_iscache_alloc(NULL);
	image->pt = pt_image_alloc(NULL);
	if (!image->iscache || !image->pt) {
		bt_image_free(image);
		return NULL;
	}
	pt_iscache_set_limit(image->iscache, BT_ISCACHE_LIMIT);
	pt_image_set_callback(image->pt, image_pt_read, image);
	return image;
}

void bt_image_free(struct bt_image *image)
{
	size_t i;

	if (!image)
		return;
	pt_image_free(image->pt);
	pt_iscache_free(image->iscache);
	for (i = 0; i < image->nsec; i++) {
		free(image->sec[i].copy);
		if (image->sec[i].memfd >= 0)
			close(image->sec[i].memfd);
	}
	for (i = 0; i < image->nfile; i++) {
		if (image->file[i].map)
			munmap(image->file[i].map, image->file[i].size);
		free(image->file[i].path);
	}
	free(image->sec);
	free(image->file);
	free(image);
}

struct pt_image *bt_image_pt(struct bt_image *image)
{
	return image ? image->pt : NULL;
}

/* @path mapped whole, once per image. */
static int image_file(struct bt_image *image, const char *path,
		      struct bt_file **out)
{
	struct bt_file *f = NULL;
	struct stat st;
	void *map;
	size_t i;
	int fd;

	for (i = 0; i < image->nfile; i++) {
		if (!strcmp(image->file[i].path, path)) {
			*out = &image->file[i];
			return 0;
		}
	}
	if (image->nfile == image->filealloc) {
		size_t n = image->filealloc ? 2 * image->filealloc : 8;

		f = realloc(image->file, n * sizeof(*f));
		if (!f)
			return -bte_nomem;
		image->file = f;
		image->filealloc = n;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bt_fail(bt_errno_to_bte(errno), errno, "open(%s)", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return bt_fail(bte_format, 0, "%s: not a regular file", path);
	}
	map = st.st_size ? mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
			 : NULL;
	close(fd);
	if (map == MAP_FAILED)
		return bt_fail(bte_io, errno, "mmap(%s)", path);
	f = &image->file[image->nfile];
	f->path = strdup(path);
	if (!f->path) {
		if (map)
			munmap(map, st.st_size);
		return -bte_nomem;
	}
	f->map = map;
	f->size = st.st_size;
	image->nfile++;
	*out = f;
	return 0;
}

/* Append a section; later sections win, so mark what it overlaps. */
static struct bt_section *image_push(struct bt_image *image, uint64_t vaddr,
				     uint64_t size)
{
	struct bt_section *s;
	size_t i;

	if (image->nsec == image->secalloc) {
		size_t n = image->secalloc ? 2 * image->secalloc : 16;

		s = realloc(image->sec, n * sizeof(*s));
		if (!s)
			return NULL;
		image->sec = s;
		image->secalloc = n;
	}
	for (i = 0; i < image->nsec; i++) {
		s = &image->sec[i];
		if (s->vaddr < vaddr + size && vaddr < s->vaddr + s->size)
			s->covered = 1;
	}
	image->hit = NULL;
	s = &image->sec[image->nsec++];
	memset(s, 0, sizeof(*s));
	s->vaddr = vaddr;
	s->size = size;
	s->memfd = -1;
	return s;
}

static int image_pt_add(struct bt_image *image, const char *path,
			uint64_t offset, uint64_t size, uint64_t vaddr)
{
	int isid, err;

	isid = pt_iscache_add_file(image->iscache, path, offset, size, vaddr);
	if (isid < 0)
		return bt_fail(bte_decode, 0, "pt_iscache_add_file(%s): %s",
			       path, pt_errstr(pt_errcode(isid)));
	err = pt_image_add_cached(image->pt, image->iscache, isid, NULL);
	if (err < 0)
		return bt_fail(bte_decode, 0, "pt_image_add_cached(%s): %s",
			       path, pt_errstr(pt_errcode(err)));
	return 0;
}

int bt_image_add_file(struct bt_image *image, const char *path,
		      uint64_t offset, uint64_t size, uint64_t vaddr)
{
	struct bt_section *s;
	struct bt_file *f = NULL;
	int err;

	if (!image || !path)
		return -bte_invalid;
	err = image_file(image, path, &f);
	if (err < 0)
		return err;
	if (offset >= f->size || !size)
		return 0;
	if (size > f->size - offset)
		size = f->size - offset;
	s = image_push(image, vaddr, size);
	if (!s)
		return -bte_nomem;
	s->data = f->map + offset;
	return image_pt_add(image, path, offset, size, vaddr);
}

static int memfd_fill(const void *bytes, size_t size)
{
	const uint8_t *p = bytes;
	int fd = memfd_create("btrace-image", MFD_CLOEXEC);

	if (fd < 0)
		return bt_fail(bte_io, errno, "memfd_create");
	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return bt_fail(bte_io, errno, "write(memfd)");
		}
		p += n;
		size -= n;
	}
	return fd;
}

int bt_image_add_mem(struct bt_image *image, const void *bytes, size_t size,
		     uint64_t vaddr)
{
	struct bt_section *s;
	char path[64];
	uint8_t *copy;
	int fd;

	if (!image || (!bytes && size))
		return -bte_invalid;
	if (!size)
		return 0;
	copy = malloc(size);
	if (!copy)
		return -bte_nomem;
	memcpy(copy, bytes, size);
	fd = memfd_fill(bytes, size);
	if (fd < 0) {
		free(copy);
		return fd;
	}
	s = image_push(image, vaddr, size);
	if (!s) {
		free(copy);
		close(fd);
		return -bte_nomem;
	}
	s->data = s->copy = copy;
	s->memfd = fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return image_pt_add(image, path, 0, size, vaddr);
}

static int elf_add_segments(struct bt_image *image, Elf *elf, const char *path,
			    uint64_t bias)
{
	size_t i, n;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n) < 0)
		return bt_fail(bte_format, 0, "%s: not an ELF file", path);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph))
			return bt_fail(bte_format, 0, "%s: bad program header",
				       path);
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		err = bt_image_add_file(image, path, ph.p_offset, ph.p_filesz,
					ph.p_vaddr + bias);
		if (err < 0)
			return err;
	}
	return 0;
}

int bt_image_add_elf(struct bt_image *image, const char *path, uint64_t bias)
{
	Elf *elf;
	int fd, err;

	if (!image || !path)
		return -bte_invalid;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bt_fail(bt_errno_to_bte(errno), errno, "open(%s)", path);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		close(fd);
		return bt_fail(bte_format, 0, "%s: %s", path, elf_errmsg(-1));
	}
	err = elf_add_segments(image, elf, path, bias);
	elf_end(elf);
	close(fd);
	return err;
}

/* A mapping without a usable file: copy it out through @read. */
static int image_add_read(struct bt_image *image, const struct bt_map *m,
			  bt_image_read_fn read, void *ctx)
{
	size_t size = m->end - m->start, got = 0;
	uint8_t *buf;
	int err;

	if (!read)
		return 0;
	buf = malloc(size);
	if (!buf)
		return -bte_nomem;
	while (got < size) {
		ssize_t n = read(ctx, m->start + got, buf + got, size - got);

		if (n <= 0)
			break;
		got += n;
	}
	err = got ? bt_image_add_mem(image, buf, got, m->start) : 0;
	free(buf);
	return err;
}

int bt_image_add_maps(struct bt_image *image, const struct bt_maps *maps,
		      bt_image_read_fn read, void *ctx)
{
	size_t i;
	int err;

	if (!image || !maps)
		return -bte_invalid;
	for (i = 0; i < maps->count; i++) {
		const struct bt_map *m = &maps->map[i];

		if (!(m->prot & BT_MAP_X) || m->end <= m->start)
			continue;
		err = -bte_noent;
		if (m->path && m->path[0] == '/')
			err = bt_image_add_file(image, m->path, m->offset,
						m->end - m->start, m->start);
		if (err == -bte_nomem)
			return err;
		if (err < 0)
			err = image_add_read(image, m, read, ctx);
		if (err == -bte_nomem)
			return err;
	}
	return 0;
}

void bt_image_set_fallback(struct bt_image *image, bt_image_read_fn read,
			   void *ctx)
{
	if (!image)
		return;
	image->fallback = read;
	image->fallback_ctx = ctx;
}

static inline int sec_has(const struct bt_section *s, uint64_t addr)
{
	return addr >= s->vaddr && addr - s->vaddr < s->size;
}

/* The section that wins at @addr, and how many bytes it owns from there. */
static const struct bt_section *image_find(struct bt_image *image,
					   uint64_t addr, size_t *avail)
{
	const struct bt_section *s = image->hit;
	size_t i, j;

	if (s && sec_has(s, addr)) {
		*avail = s->size - (addr - s->vaddr);
		return s;
	}
	for (i = image->nsec; i-- > 0;) {
		s = &image->sec[i];
		if (!sec_has(s, addr))
			continue;
		*avail = s->size - (addr - s->vaddr);
		if (!s->covered) {
			image->hit = s;
			return s;
		}
		/* Stop where a later section takes over. */
		for (j = i + 1; j < image->nsec; j++) {
			const struct bt_section *t = &image->sec[j];

			if (t->vaddr > addr && t->vaddr - addr < *avail)
				*avail = t->vaddr - addr;
		}
		return s;
	}
	return NULL;
}

const uint8_t *bt_image_peek(struct bt_image *image, uint64_t addr,
			     size_t *avail)
{
	const struct bt_section *s = image_find(image, addr, avail);

	return s ? s->data + (addr - s->vaddr) : NULL;
}

ssize_t bt_image_read(struct bt_image *image, uint64_t addr, void *buf,
		      size_t len)
{
	const uint8_t *p;
	size_t avail;

	if (!image || (!buf && len))
		return -bte_invalid;
	p = bt_image_peek(image, addr, &avail);
	if (!p) {
		if (!image->fallback)
			return 0;
		return image->fallback(image->fallback_ctx, addr, buf, len);
	}
	if (len > avail)
		len = avail;
	memcpy(buf, p, len);
	return len;
}
